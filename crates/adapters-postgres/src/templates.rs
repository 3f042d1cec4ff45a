//! The WhatsApp template catalogues of channels (`whatsapp_templates`), and the sync bookkeeping
//! on the channel row (`waba_id`, `templates_synced_at`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bytea, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::channels::{ChannelId, ChannelType};
use domain::connectors::templates::{
    ChangedTemplate, SyncFacts, SyncTarget, TemplateStatus, TemplateStatusChange, TemplateStore, WhatsappTemplate,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{channels, whatsapp_templates};
use crate::webhooks::outbox;

/// [`TemplateStore`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgTemplates {
    db: Db,
}

impl PgTemplates {
    /// The store on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = whatsapp_templates)]
struct TemplateRow {
    name: String,
    language: String,
    category: String,
    status: String,
    quality: Option<String>,
    parameters: i32,
    body: String,
    rejected_reason: Option<String>,
    updated_at: OffsetDateTime,
}

impl From<TemplateRow> for WhatsappTemplate {
    fn from(r: TemplateRow) -> Self {
        Self {
            name: r.name,
            language: r.language,
            category: r.category,
            // A status written by another version counts as not sendable.
            status: TemplateStatus::parse(&r.status).unwrap_or(TemplateStatus::Disabled),
            quality: r.quality,
            parameters: r.parameters,
            body: r.body,
            rejected_reason: r.rejected_reason,
            updated_at: r.updated_at,
        }
    }
}

#[derive(QueryableByName)]
struct TargetRow {
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Bytea)]
    credentials: Vec<u8>,
    #[diesel(sql_type = Text)]
    waba_id: String,
}

impl TargetRow {
    fn target(self) -> SyncTarget {
        SyncTarget {
            workspace_id: WorkspaceId(self.workspace_id),
            channel_id: ChannelId(self.id),
            credentials_sealed: self.credentials,
        }
    }
}

#[async_trait]
impl TemplateStore for PgTemplates {
    async fn find(
        &self,
        ws: WorkspaceId,
        channel: ChannelId,
        name: &str,
        language: &str,
    ) -> Result<Option<WhatsappTemplate>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<TemplateRow> = whatsapp_templates::table
            .filter(whatsapp_templates::workspace_id.eq(ws.0))
            .filter(whatsapp_templates::channel_id.eq(channel.0))
            .filter(whatsapp_templates::name.eq(name))
            .filter(whatsapp_templates::language.eq(language))
            .select(TemplateRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(Into::into))
    }

    async fn list(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Option<Vec<WhatsappTemplate>>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let exists: Option<i64> = channels::table
            .filter(channels::workspace_id.eq(ws.0))
            .filter(channels::id.eq(channel.0))
            .select(channels::id)
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        if exists.is_none() {
            return Ok(None);
        }
        let rows: Vec<TemplateRow> = whatsapp_templates::table
            .filter(whatsapp_templates::workspace_id.eq(ws.0))
            .filter(whatsapp_templates::channel_id.eq(channel.0))
            .order((whatsapp_templates::name.asc(), whatsapp_templates::language.asc()))
            .select(TemplateRow::as_select())
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(Some(rows.into_iter().map(Into::into).collect()))
    }

    async fn sync_facts(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Option<SyncFacts>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<(i64, String, Option<Vec<u8>>, Option<String>)> = channels::table
            .filter(channels::workspace_id.eq(ws.0))
            .filter(channels::id.eq(channel.0))
            .select((channels::id, channels::channel_type, channels::credentials_encrypted, channels::waba_id))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        let Some((id, channel_type, sealed, waba)) = row else { return Ok(None) };
        let channel_type = channel_type.parse::<ChannelType>().map_err(|e| repo(anyhow::anyhow!("{e:?}")))?;
        Ok(Some(SyncFacts { channel_type, target: SyncTarget::of(ws, ChannelId(id), sealed, waba.as_deref()) }))
    }

    async fn replace(
        &self,
        ws: WorkspaceId,
        channel: ChannelId,
        templates: &[WhatsappTemplate],
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let templates = templates.to_vec();
        conn.transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                diesel::delete(
                    whatsapp_templates::table
                        .filter(whatsapp_templates::workspace_id.eq(ws.0))
                        .filter(whatsapp_templates::channel_id.eq(channel.0)),
                )
                .execute(c)
                .await?;
                let rows: Vec<_> = templates
                    .iter()
                    .map(|t| {
                        (
                            whatsapp_templates::workspace_id.eq(ws.0),
                            whatsapp_templates::channel_id.eq(channel.0),
                            whatsapp_templates::name.eq(&t.name),
                            whatsapp_templates::language.eq(&t.language),
                            whatsapp_templates::category.eq(&t.category),
                            whatsapp_templates::status.eq(t.status.as_str()),
                            whatsapp_templates::quality.eq(&t.quality),
                            whatsapp_templates::parameters.eq(t.parameters),
                            whatsapp_templates::body.eq(&t.body),
                            whatsapp_templates::rejected_reason.eq(&t.rejected_reason),
                            whatsapp_templates::updated_at.eq(t.updated_at),
                        )
                    })
                    .collect();
                if !rows.is_empty() {
                    // Meta lists a name and language once; a repeat in its answer keeps the first.
                    diesel::insert_into(whatsapp_templates::table)
                        .values(rows)
                        .on_conflict_do_nothing()
                        .execute(c)
                        .await?;
                }
                diesel::update(
                    channels::table.filter(channels::workspace_id.eq(ws.0)).filter(channels::id.eq(channel.0)),
                )
                .set(channels::templates_synced_at.eq(diesel::dsl::now))
                .execute(c)
                .await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn claim_due(&self, every_secs: i64, limit: i64) -> Result<Vec<SyncTarget>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        // The claim marks the channels synced now: another instance skips them (SKIP LOCKED while
        // this transaction runs, then the fresh time), and one that fails waits its next turn.
        let rows: Vec<TargetRow> = diesel::sql_query(
            "WITH due AS (
                 SELECT id, workspace_id FROM channels
                 WHERE waba_id IS NOT NULL AND credentials_encrypted IS NOT NULL AND channel_type = 'whatsapp'
                   AND (templates_synced_at IS NULL OR templates_synced_at <= now() - make_interval(secs => $1))
                 ORDER BY templates_synced_at NULLS FIRST, id
                 LIMIT $2
                 FOR UPDATE SKIP LOCKED
             )
             UPDATE channels c SET templates_synced_at = now()
             FROM due WHERE c.id = due.id AND c.workspace_id = due.workspace_id
             RETURNING c.workspace_id, c.id, c.credentials_encrypted AS credentials, c.waba_id",
        )
        .bind::<BigInt, _>(every_secs)
        .bind::<BigInt, _>(limit)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        Ok(rows.into_iter().map(TargetRow::target).collect())
    }

    async fn channels_for_wabas(&self, waba_ids: &[String]) -> Result<Vec<(String, SyncTarget)>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let rows: Vec<TargetRow> = diesel::sql_query(
            "SELECT workspace_id, id, credentials_encrypted AS credentials, waba_id FROM channels
             WHERE waba_id = ANY ($1) AND credentials_encrypted IS NOT NULL AND channel_type = 'whatsapp'
             ORDER BY id",
        )
        .bind::<diesel::sql_types::Array<Text>, _>(waba_ids)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        Ok(rows.into_iter().map(|r| (r.waba_id.clone(), r.target())).collect())
    }

    async fn apply_status(
        &self,
        holders: &[SyncTarget],
        changes: &[TemplateStatusChange],
        at: OffsetDateTime,
    ) -> Result<Vec<ChangedTemplate>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (holders, changes) = (holders.to_vec(), changes.to_vec());
        let changed = conn
            .transaction::<_, diesel::result::Error, _>(|c| {
                async move {
                    let mut changed = Vec::new();
                    for h in &holders {
                        let ws = h.workspace_id;
                        for change in &changes {
                            let mut q = diesel::update(whatsapp_templates::table)
                                .filter(whatsapp_templates::workspace_id.eq(ws.0))
                                .filter(whatsapp_templates::channel_id.eq(h.channel_id.0))
                                .filter(whatsapp_templates::name.eq(&change.name))
                                .into_boxed();
                            if let Some(language) = &change.language {
                                q = q.filter(whatsapp_templates::language.eq(language));
                            }
                            let rows: Vec<TemplateRow> = q
                                .set((
                                    whatsapp_templates::status.eq(change.status.as_str()),
                                    whatsapp_templates::rejected_reason.eq(&change.reason),
                                    whatsapp_templates::updated_at.eq(at),
                                ))
                                .returning(TemplateRow::as_returning())
                                .get_results(c)
                                .await?;
                            for row in rows {
                                let template = WhatsappTemplate::from(row);
                                let change = ChangedTemplate { workspace_id: ws, channel_id: h.channel_id, template };
                                outbox::record(c, ws, OffsetDateTime::now_utc(), &[change.event()]).await?;
                                changed.push(change);
                            }
                        }
                    }
                    Ok(changed)
                }
                .scope_boxed()
            })
            .await
            .map_err(repo)?;
        if !changed.is_empty() {
            self.db.wake().events_committed();
        }
        Ok(changed)
    }
}
