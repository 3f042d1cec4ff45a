//! The authorization server's storage (tables `oauth_clients`, `oauth_grants`, `oauth_codes`,
//! `oauth_tokens`; migration `2026-11-26-000501_oauth`). Exchanges load their facts locked, ask the
//! domain ([`domain::oauth::redeem_code`], [`domain::oauth::rotate_refresh`]) and apply the answer
//! in the same transaction.

use async_trait::async_trait;
use diesel::sql_types::{Array, BigInt, Bool, Bytea, Nullable, Text, Timestamptz};
use diesel::OptionalExtension;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::{AuditContext, AuditEntry};
use domain::auth::{Standing, TokenDigest, WorkspaceMember};
use domain::oauth::{
    member_revocation, redeem_code, rotate_refresh, AccessFacts, Client, ClientMetadata, CodeExchange, CodeFacts,
    ConsentingMember, Exchange, GrantRecord, IssuedTokens, NewGrant, OAuthStore, RefreshExchange, RefreshFacts,
};
use domain::users::{Role, UserId};
use domain::workspace::{PlanTier, WorkspaceId};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;

/// [`OAuthStore`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgOAuthStore {
    db: Db,
}

impl PgOAuthStore {
    /// The store in `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(diesel::QueryableByName)]
struct ClientRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    client_id: String,
    #[diesel(sql_type = Text)]
    client_name: String,
    #[diesel(sql_type = Array<Text>)]
    redirect_uris: Vec<String>,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

impl From<ClientRow> for Client {
    fn from(r: ClientRow) -> Self {
        Client {
            id: r.id,
            client_id: r.client_id,
            client_name: r.client_name,
            redirect_uris: r.redirect_uris,
            created_at: r.created_at,
        }
    }
}

#[derive(diesel::QueryableByName)]
struct MemberRow {
    #[diesel(sql_type = Text)]
    plan: String,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Bool)]
    member_active: bool,
    #[diesel(sql_type = Bool)]
    workspace_active: bool,
}

#[derive(diesel::QueryableByName)]
struct IdRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

#[derive(diesel::QueryableByName)]
struct CodeRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    grant_id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = Text)]
    client_id: String,
    #[diesel(sql_type = Text)]
    redirect_uri: String,
    #[diesel(sql_type = Text)]
    code_challenge: String,
    #[diesel(sql_type = Text)]
    resource: String,
    #[diesel(sql_type = Timestamptz)]
    expires_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    used_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Bool)]
    grant_revoked: bool,
}

#[derive(diesel::QueryableByName)]
struct RefreshRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    grant_id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = Text)]
    client_id: String,
    #[diesel(sql_type = Text)]
    client_name: String,
    #[diesel(sql_type = Text)]
    resource: String,
    #[diesel(sql_type = Timestamptz)]
    expires_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    used_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Bool)]
    grant_revoked: bool,
    #[diesel(sql_type = Bool)]
    member_active: bool,
    #[diesel(sql_type = Bool)]
    workspace_active: bool,
}

#[derive(diesel::QueryableByName)]
struct AccessRow {
    #[diesel(sql_type = BigInt)]
    grant_id: i64,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = Text)]
    plan: String,
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Timestamptz)]
    expires_at: OffsetDateTime,
    #[diesel(sql_type = Bool)]
    grant_revoked: bool,
    #[diesel(sql_type = Bool)]
    member_active: bool,
    #[diesel(sql_type = Bool)]
    workspace_active: bool,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_used_at: Option<OffsetDateTime>,
}

#[derive(diesel::QueryableByName)]
struct GrantRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    client_name: String,
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = Text)]
    workspace_name: String,
    #[diesel(sql_type = Text)]
    scope: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_used_at: Option<OffsetDateTime>,
}

fn role(raw: &str) -> Result<Role, RepoError> {
    raw.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))
}

/// Stores the access and refresh tokens of `grant`.
async fn insert_tokens(
    conn: &mut AsyncPgConnection,
    ws: i64,
    grant: i64,
    tokens: &IssuedTokens,
) -> diesel::QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO oauth_tokens (workspace_id, grant_id, kind, token_digest, expires_at) \
         VALUES ($1, $2, 'access', $3, $4), ($1, $2, 'refresh', $5, $6)",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(grant)
    .bind::<Bytea, _>(tokens.access.0.to_vec())
    .bind::<Timestamptz, _>(tokens.access_expires_at)
    .bind::<Bytea, _>(tokens.refresh.0.to_vec())
    .bind::<Timestamptz, _>(tokens.refresh_expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Revokes `grant` (keeping the first revocation time) and records `entry`.
pub(crate) async fn revoke(
    conn: &mut AsyncPgConnection,
    grant: i64,
    now: OffsetDateTime,
    entry: &AuditEntry,
) -> diesel::QueryResult<()> {
    diesel::sql_query("UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind::<BigInt, _>(grant)
        .bind::<Timestamptz, _>(now)
        .execute(conn)
        .await?;
    crate::audit::write(conn, std::slice::from_ref(entry), None).await
}

/// Applies an exchange's decision: on `Issue`, marks the code or refresh token `used` and stores
/// the new tokens; on `RevokeGrant`, revokes the grant.
async fn apply(
    conn: &mut AsyncPgConnection,
    decision: &Exchange,
    used: &str,
    row: i64,
    (ws, grant): (i64, i64),
    tokens: &IssuedTokens,
    now: OffsetDateTime,
) -> diesel::QueryResult<()> {
    match decision {
        Exchange::Issue => {
            diesel::sql_query(used).bind::<BigInt, _>(row).bind::<Timestamptz, _>(now).execute(conn).await?;
            insert_tokens(conn, ws, grant, tokens).await
        }
        Exchange::Refuse(_) => Ok(()),
        Exchange::RevokeGrant(_, entry) => revoke(conn, grant, now, entry).await,
    }
}

#[async_trait]
impl OAuthStore for PgOAuthStore {
    async fn insert_client(&self, client_id: &str, metadata: &ClientMetadata) -> Result<Client, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: ClientRow = diesel::sql_query(
            "INSERT INTO oauth_clients (client_id, client_name, redirect_uris) VALUES ($1, $2, $3) \
             RETURNING id, client_id, client_name, redirect_uris, created_at",
        )
        .bind::<Text, _>(client_id)
        .bind::<Text, _>(&metadata.client_name)
        .bind::<Array<Text>, _>(&metadata.redirect_uris)
        .get_result(&mut conn)
        .await
        .map_err(repo)?;
        Ok(row.into())
    }

    async fn client(&self, client_id: &str) -> Result<Option<Client>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<ClientRow> = diesel::sql_query(
            "SELECT id, client_id, client_name, redirect_uris, created_at FROM oauth_clients WHERE client_id = $1",
        )
        .bind::<Text, _>(client_id)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(repo)?;
        Ok(row.map(Client::from))
    }

    async fn consenting_member(&self, ws: WorkspaceId, user: UserId) -> Result<Option<ConsentingMember>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<MemberRow> = diesel::sql_query(
            "SELECT w.plan, m.role, w.name, m.is_active AS member_active, w.is_active AS workspace_active \
             FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id \
             WHERE m.workspace_id = $1 AND m.user_id = $2",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(user.0)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(repo)?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(ConsentingMember {
            member: WorkspaceMember {
                workspace_id: ws,
                plan: row.plan.parse::<PlanTier>().map_err(repo)?,
                user_id: user,
                role: role(&row.role)?,
            },
            workspace_name: row.name,
            standing: Standing { member_active: row.member_active, workspace_active: row.workspace_active },
        }))
    }

    async fn insert_grant(&self, grant: &NewGrant, audit: &AuditEntry) -> Result<i64, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (grant, audit) = (grant.clone(), audit.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let id: IdRow = diesel::sql_query(
                    "INSERT INTO oauth_grants (workspace_id, user_id, client_id, scope, resource) \
                     VALUES ($1, $2, $3, $4, $5) RETURNING id",
                )
                .bind::<BigInt, _>(grant.workspace_id.0)
                .bind::<BigInt, _>(grant.user_id.0)
                .bind::<BigInt, _>(grant.client)
                .bind::<Text, _>(&grant.scope)
                .bind::<Text, _>(&grant.resource)
                .get_result(conn)
                .await?;
                diesel::sql_query(
                    "INSERT INTO oauth_codes (workspace_id, grant_id, code_digest, redirect_uri, code_challenge, \
                     expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind::<BigInt, _>(grant.workspace_id.0)
                .bind::<BigInt, _>(id.id)
                .bind::<Bytea, _>(grant.code.0.to_vec())
                .bind::<Text, _>(&grant.redirect_uri)
                .bind::<Text, _>(&grant.code_challenge)
                .bind::<Timestamptz, _>(grant.code_expires_at)
                .execute(conn)
                .await?;
                crate::audit::write(conn, std::slice::from_ref(&audit), Some(id.id)).await?;
                Ok(id.id)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn exchange_code(
        &self,
        code: &TokenDigest,
        req: &CodeExchange,
        tokens: &IssuedTokens,
        now: OffsetDateTime,
        ctx: &AuditContext,
    ) -> Result<Option<Exchange>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (code, req, tokens, ctx) = (*code, req.clone(), *tokens, ctx.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let row: Option<CodeRow> = diesel::sql_query(
                    "SELECT c.id, c.grant_id, c.workspace_id, k.client_id, c.redirect_uri, c.code_challenge, \
                     g.resource, c.expires_at, c.used_at, g.revoked_at IS NOT NULL AS grant_revoked \
                     FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id AND g.workspace_id = c.workspace_id \
                     JOIN oauth_clients k ON k.id = g.client_id \
                     WHERE c.code_digest = $1 FOR UPDATE OF c, g",
                )
                .bind::<Bytea, _>(code.0.to_vec())
                .get_result(conn)
                .await
                .optional()?;
                let Some(row) = row else { return Ok(None) };
                let facts = CodeFacts {
                    grant_id: row.grant_id,
                    workspace_id: WorkspaceId(row.workspace_id),
                    client_id: row.client_id,
                    redirect_uri: row.redirect_uri,
                    code_challenge: row.code_challenge,
                    resource: row.resource,
                    expires_at: row.expires_at,
                    used_at: row.used_at,
                    grant_revoked: row.grant_revoked,
                };
                let decision = redeem_code(&facts, &req, now, &ctx);
                let used = "UPDATE oauth_codes SET used_at = $2 WHERE id = $1";
                apply(conn, &decision, used, row.id, (row.workspace_id, row.grant_id), &tokens, now).await?;
                Ok(Some(decision))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn refresh(
        &self,
        token: &TokenDigest,
        req: &RefreshExchange,
        tokens: &IssuedTokens,
        now: OffsetDateTime,
        ctx: &AuditContext,
    ) -> Result<Option<Exchange>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (token, req, tokens, ctx) = (*token, req.clone(), *tokens, ctx.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let row: Option<RefreshRow> = diesel::sql_query(
                    "SELECT t.id, t.grant_id, t.workspace_id, k.client_id, k.client_name, g.resource, t.expires_at, \
                     t.used_at, g.revoked_at IS NOT NULL AS grant_revoked, m.is_active AS member_active, w.is_active AS workspace_active \
                     FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id AND g.workspace_id = t.workspace_id \
                     JOIN oauth_clients k ON k.id = g.client_id \
                     JOIN workspace_members m ON m.workspace_id = g.workspace_id AND m.user_id = g.user_id \
                     JOIN workspaces w ON w.id = g.workspace_id \
                     WHERE t.token_digest = $1 AND t.kind = 'refresh' FOR UPDATE OF t, g",
                )
                .bind::<Bytea, _>(token.0.to_vec())
                .get_result(conn)
                .await
                .optional()?;
                let Some(row) = row else { return Ok(None) };
                let facts = RefreshFacts {
                    grant_id: row.grant_id,
                    workspace_id: WorkspaceId(row.workspace_id),
                    client_id: row.client_id,
                    client_name: row.client_name,
                    resource: row.resource,
                    expires_at: row.expires_at,
                    used_at: row.used_at,
                    grant_revoked: row.grant_revoked,
                    standing: Standing { member_active: row.member_active, workspace_active: row.workspace_active },
                };
                let decision = rotate_refresh(&facts, &req, now, &ctx);
                let used = "UPDATE oauth_tokens SET used_at = $2 WHERE id = $1";
                apply(conn, &decision, used, row.id, (row.workspace_id, row.grant_id), &tokens, now).await?;
                Ok(Some(decision))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn access(&self, token: &TokenDigest, now: OffsetDateTime) -> Result<Option<AccessFacts>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<AccessRow> = diesel::sql_query(
            "SELECT g.id AS grant_id, g.workspace_id, w.plan, g.user_id, m.role, t.expires_at, \
             g.revoked_at IS NOT NULL AS grant_revoked, m.is_active AS member_active, w.is_active AS workspace_active, g.last_used_at \
             FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id AND g.workspace_id = t.workspace_id \
             JOIN workspace_members m ON m.workspace_id = g.workspace_id AND m.user_id = g.user_id \
             JOIN workspaces w ON w.id = g.workspace_id \
             WHERE t.token_digest = $1 AND t.kind = 'access'",
        )
        .bind::<Bytea, _>(token.0.to_vec())
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(repo)?;
        let Some(row) = row else { return Ok(None) };
        if domain::auth::records_use(row.last_used_at, now) {
            diesel::sql_query("UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1")
                .bind::<BigInt, _>(row.grant_id)
                .bind::<Timestamptz, _>(now)
                .execute(&mut conn)
                .await
                .map_err(repo)?;
        }
        Ok(Some(AccessFacts {
            grant_id: row.grant_id,
            workspace_id: WorkspaceId(row.workspace_id),
            plan: row.plan.parse::<PlanTier>().map_err(repo)?,
            user_id: UserId(row.user_id),
            role: role(&row.role)?,
            expires_at: row.expires_at,
            grant_revoked: row.grant_revoked,
            standing: Standing { member_active: row.member_active, workspace_active: row.workspace_active },
        }))
    }

    async fn grants(&self, user: UserId) -> Result<Vec<GrantRecord>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<GrantRow> = diesel::sql_query(
            "SELECT g.id, k.client_name, g.workspace_id, w.name AS workspace_name, g.scope, g.created_at, g.last_used_at \
             FROM oauth_grants g JOIN oauth_clients k ON k.id = g.client_id JOIN workspaces w ON w.id = g.workspace_id \
             WHERE g.user_id = $1 AND g.revoked_at IS NULL ORDER BY g.id DESC",
        )
        .bind::<BigInt, _>(user.0)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        Ok(rows
            .into_iter()
            .map(|r| GrantRecord {
                id: r.id,
                client_name: r.client_name,
                workspace_id: WorkspaceId(r.workspace_id),
                workspace_name: r.workspace_name,
                scope: r.scope,
                created_at: r.created_at,
                last_used_at: r.last_used_at,
            })
            .collect())
    }

    async fn revoke_grant(
        &self,
        user: UserId,
        grant_id: i64,
        now: OffsetDateTime,
        ctx: &AuditContext,
    ) -> Result<bool, RepoError> {
        #[derive(diesel::QueryableByName)]
        struct Found {
            #[diesel(sql_type = BigInt)]
            workspace_id: i64,
            #[diesel(sql_type = Text)]
            client_name: String,
        }
        let mut conn = self.db.conn().await.map_err(repo)?;
        let ctx = ctx.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let found: Option<Found> = diesel::sql_query(
                    "SELECT g.workspace_id, k.client_name FROM oauth_grants g JOIN oauth_clients k ON k.id = g.client_id \
                     WHERE g.id = $1 AND g.user_id = $2 AND g.revoked_at IS NULL FOR UPDATE OF g",
                )
                .bind::<BigInt, _>(grant_id)
                .bind::<BigInt, _>(user.0)
                .get_result(conn)
                .await
                .optional()?;
                let Some(found) = found else { return Ok(false) };
                let entry = member_revocation(WorkspaceId(found.workspace_id), grant_id, &found.client_name, &ctx);
                revoke(conn, grant_id, now, &entry).await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
