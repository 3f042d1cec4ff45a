//! API keys in storage: the digest and the masked form, never the key.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::access::ScopeSet;
use domain::api_keys::{
    decide_revocation, plan_roll, ApiKey, ApiKeyId, ApiKeyRepository, KeyRoll, NewApiKey, RolledKeys, StoreRollError,
};
use domain::audit::AuditEntry;
use domain::auth::NewToken;
use domain::common::page::{Page, PageRequest};
use domain::users::UserId;
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::api_keys;

/// [`ApiKeyRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgApiKeyRepository {
    db: Db,
}

impl PgApiKeyRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = api_keys)]
pub(crate) struct ApiKeyRow {
    id: i64,
    workspace_id: i64,
    name: String,
    masked_key: String,
    created_by_user_id: Option<i64>,
    created_at: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
    last_used_at: Option<OffsetDateTime>,
    revoked_at: Option<OffsetDateTime>,
    scopes: Option<Vec<String>>,
    rolled_to_id: Option<i64>,
    last_used_ip: Option<String>,
}

impl From<ApiKeyRow> for ApiKey {
    fn from(r: ApiKeyRow) -> Self {
        ApiKey {
            id: ApiKeyId(r.id),
            workspace_id: WorkspaceId(r.workspace_id),
            name: r.name,
            masked_key: r.masked_key,
            created_by: r.created_by_user_id.map(UserId),
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
            last_used_ip: r.last_used_ip,
            revoked_at: r.revoked_at,
            rolled_to: r.rolled_to_id.map(ApiKeyId),
            scopes: r
                .scopes
                .as_ref()
                .map_or_else(ScopeSet::full, |s| ScopeSet::from_stored(s.iter().map(String::as_str))),
        }
    }
}

#[async_trait]
impl ApiKeyRepository for PgApiKeyRepository {
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<ApiKey>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut query = api_keys::table
            .filter(api_keys::workspace_id.eq(ws.0))
            .select(ApiKeyRow::as_select())
            .order(api_keys::id.desc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(api_keys::id.lt(after));
        }
        let rows: Vec<ApiKeyRow> = query.load(&mut conn).await.map_err(repo)?;
        Ok(Page::from_rows(rows, page, |r| r.id).map(ApiKey::from))
    }

    async fn insert(&self, new: &NewApiKey, audit: &AuditEntry) -> Result<ApiKey, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let new = new.clone();
        let audit = audit.clone();
        let row: ApiKeyRow = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let row: ApiKeyRow = diesel::insert_into(api_keys::table)
                        .values((
                            api_keys::workspace_id.eq(new.workspace_id.0),
                            api_keys::name.eq(new.name.as_str()),
                            api_keys::key_digest.eq(new.digest.0.as_slice()),
                            api_keys::masked_key.eq(&new.masked_key),
                            api_keys::expires_at.eq(new.expires_at),
                            api_keys::created_by_user_id.eq(new.created_by.0),
                            // A full-access key is stored as NULL: it also gets the scopes added later.
                            api_keys::scopes.eq((!new.scopes.is_full()).then(|| new.scopes.names())),
                        ))
                        .returning(ApiKeyRow::as_returning())
                        .get_result(conn)
                        .await?;
                    crate::audit::write(conn, std::slice::from_ref(&audit), Some(row.id)).await?;
                    Ok(row)
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        Ok(row.into())
    }

    async fn revoke(
        &self,
        ws: WorkspaceId,
        id: ApiKeyId,
        at: OffsetDateTime,
        audit: &AuditEntry,
    ) -> Result<Option<ApiKey>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.clone();
        let row: Option<ApiKeyRow> = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let before: Option<Option<OffsetDateTime>> = api_keys::table
                        .filter(api_keys::workspace_id.eq(ws.0))
                        .filter(api_keys::id.eq(id.0))
                        .select(api_keys::revoked_at)
                        .for_update()
                        .first(conn)
                        .await
                        .optional()?;
                    let Some(before) = before else { return Ok(None) };
                    let revocation = decide_revocation(before, at);
                    let row: ApiKeyRow = diesel::update(
                        api_keys::table.filter(api_keys::workspace_id.eq(ws.0)).filter(api_keys::id.eq(id.0)),
                    )
                    .set(api_keys::revoked_at.eq(revocation.revoked_at))
                    .returning(ApiKeyRow::as_returning())
                    .get_result(conn)
                    .await?;
                    if revocation.recorded {
                        let e = crate::audit::with_detail(&audit, "name", row.name.clone());
                        crate::audit::write(conn, &[e], None).await?;
                    }
                    Ok(Some(row))
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        Ok(row.map(ApiKey::from))
    }

    async fn roll(
        &self,
        ws: WorkspaceId,
        id: ApiKeyId,
        roll: &KeyRoll,
        audit: &AuditEntry,
    ) -> Result<RolledKeys, StoreRollError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (roll, audit) = (roll.clone(), audit.clone());
        let outcome = conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                async move {
                    let old: Option<ApiKeyRow> = api_keys::table
                        .filter(api_keys::workspace_id.eq(ws.0))
                        .filter(api_keys::id.eq(id.0))
                        .select(ApiKeyRow::as_select())
                        .for_update()
                        .first(conn)
                        .await
                        .optional()?;
                    let Some(old) = old else { return Ok(Err(StoreRollError::NotFound)) };
                    let plan = match plan_roll(&ApiKey::from(old), roll.at, roll.grace) {
                        Ok(plan) => plan,
                        Err(refusal) => return Ok(Err(StoreRollError::Refused(refusal))),
                    };
                    let new: ApiKeyRow = diesel::insert_into(api_keys::table)
                        .values((
                            api_keys::workspace_id.eq(ws.0),
                            api_keys::name.eq(&plan.name),
                            api_keys::key_digest.eq(roll.digest.0.as_slice()),
                            api_keys::masked_key.eq(&roll.masked_key),
                            api_keys::expires_at.eq(plan.expires_at),
                            api_keys::created_by_user_id.eq(roll.created_by.0),
                            api_keys::scopes.eq((!plan.scopes.is_full()).then(|| plan.scopes.names())),
                        ))
                        .returning(ApiKeyRow::as_returning())
                        .get_result(conn)
                        .await?;
                    let old: ApiKeyRow = diesel::update(
                        api_keys::table.filter(api_keys::workspace_id.eq(ws.0)).filter(api_keys::id.eq(id.0)),
                    )
                    .set((api_keys::revoked_at.eq(plan.old_key_revoked_at), api_keys::rolled_to_id.eq(new.id)))
                    .returning(ApiKeyRow::as_returning())
                    .get_result(conn)
                    .await?;
                    let entry = crate::audit::with_detail(&audit, "name", old.name.clone());
                    let entry = crate::audit::with_detail(&entry, "rolled_to", new.id);
                    crate::audit::write(conn, &[entry], None).await?;
                    Ok(Ok(RolledKeys { old: old.into(), new: new.into() }))
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        outcome
    }

    async fn delete(&self, ws: WorkspaceId, id: ApiKeyId, audit: &AuditEntry) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let audit = audit.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // The record is written first, while the key's name is there for its label.
                let name: Option<String> = api_keys::table
                    .filter(api_keys::workspace_id.eq(ws.0))
                    .filter(api_keys::id.eq(id.0))
                    .select(api_keys::name)
                    .for_update()
                    .first(conn)
                    .await
                    .optional()?;
                let Some(name) = name else { return Ok(false) };
                crate::audit::write(conn, &[crate::audit::with_detail(&audit, "name", name)], None).await?;
                // The key's rate-limit window goes with it (ON DELETE CASCADE).
                let n = diesel::delete(
                    api_keys::table.filter(api_keys::workspace_id.eq(ws.0)).filter(api_keys::id.eq(id.0)),
                )
                .execute(conn)
                .await?;
                Ok(n > 0)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}

/// Stores a key minted outside the settings flow (the demo key `wms dev` prints) and returns
/// its id.
///
/// # Errors
/// On database failure.
pub async fn insert(db: &Db, ws: WorkspaceId, name: &str, token: &NewToken) -> anyhow::Result<i64> {
    let mut conn = db.conn().await?;
    Ok(diesel::insert_into(api_keys::table)
        .values((
            api_keys::workspace_id.eq(ws.0),
            api_keys::name.eq(name),
            api_keys::key_digest.eq(token.digest().0.to_vec()),
            api_keys::masked_key.eq(token.masked()),
        ))
        .returning(api_keys::id)
        .get_result(&mut conn)
        .await?)
}

/// The key with this digest in `ws`, if any, whatever its state: `wms dev` shows the demo key
/// of an earlier run again only while [`ApiKey::state`] says it still works.
///
/// # Errors
/// On database failure.
pub async fn find_by_digest(
    db: &Db,
    ws: WorkspaceId,
    digest: &domain::auth::TokenDigest,
) -> anyhow::Result<Option<ApiKey>> {
    let mut conn = db.conn().await?;
    let row: Option<ApiKeyRow> = api_keys::table
        .filter(api_keys::workspace_id.eq(ws.0))
        .filter(api_keys::key_digest.eq(digest.0.to_vec()))
        .select(ApiKeyRow::as_select())
        .first(&mut conn)
        .await
        .optional()?;
    Ok(row.map(ApiKey::from))
}
