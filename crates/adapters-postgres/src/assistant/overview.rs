//! `get_workspace_overview`, `list_channels` and `list_webhooks`.

use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::{ScopedBoxFuture, ScopedFutureExt};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::assistant::{
    AgentCounts, ChannelCounts, ChannelSummary, InboxCounts, LabelCounts, OverviewWorkspace, StatusCounts, TeamCounts,
    TypeCounts, WebhookCounts, WebhookList, WebhookSummary, WorkspaceOverview,
};
use domain::channels::{ChannelId, ChannelType};
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use super::channel_type;

#[derive(QueryableByName)]
struct WorkspaceRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    slug: String,
    #[diesel(sql_type = Bool)]
    is_active: bool,
}

/// One figure pair of one section; which pair is which depends on the section.
#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = Text)]
    section: String,
    #[diesel(sql_type = Text)]
    key: String,
    #[diesel(sql_type = BigInt)]
    a: i64,
    #[diesel(sql_type = BigInt)]
    b: i64,
}

// `get_workspace_overview`'s counts (`docs/assistant.md`, "Speed: the rollups"). Threads come from
// the thread_status_stats rollup (summed over its slots): counting a busy workspace's threads
// directly takes longer than the tool's whole latency budget.
const COUNTS: &str = "
    SELECT 'channels' AS section, channel_type AS key, count(*) AS a, count(*) FILTER (WHERE status = 'active') AS b
    FROM channels WHERE workspace_id = $1 GROUP BY channel_type
    UNION ALL
    SELECT 'webhooks', '', count(*), count(*) FILTER (WHERE active) FROM webhook_destinations WHERE workspace_id = $1
    UNION ALL
    SELECT 'threads', status, sum(threads)::bigint, sum(unread_messages)::bigint
    FROM thread_status_stats WHERE workspace_id = $1 GROUP BY status HAVING sum(threads) > 0
    UNION ALL
    SELECT 'ai_agents', status, count(*), 0 FROM ai_agents WHERE workspace_id = $1 GROUP BY status
    UNION ALL
    SELECT 'labels', '', count(*), 0 FROM labels WHERE workspace_id = $1
    UNION ALL
    SELECT 'team_members', '', count(*) FILTER (WHERE is_active), 0 FROM workspace_members WHERE workspace_id = $1";

pub(super) fn load(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    now: OffsetDateTime,
) -> ScopedBoxFuture<'static, '_, Result<Option<WorkspaceOverview>, diesel::result::Error>> {
    async move {
        let workspace: Option<WorkspaceRow> =
            diesel::sql_query("SELECT id, name, slug, is_active FROM workspaces WHERE id = $1")
                .bind::<BigInt, _>(ws.0)
                .get_result(c)
                .await
                .map(Some)
                .or_else(|e| if e == diesel::result::Error::NotFound { Ok(None) } else { Err(e) })?;
        let Some(w) = workspace else { return Ok(None) };
        let rows: Vec<CountRow> = diesel::sql_query(COUNTS).bind::<BigInt, _>(ws.0).load(c).await?;
        let mut channels = ChannelCounts::default();
        let mut webhooks = WebhookCounts::default();
        let mut inbox = InboxCounts::default();
        let mut ai_agents = AgentCounts::default();
        let mut labels = LabelCounts::default();
        let mut team_members = TeamCounts::default();
        for r in rows {
            match r.section.as_str() {
                "channels" => {
                    channels.total += r.a;
                    channels.by_type.insert(r.key, TypeCounts { total: r.a, connected: r.b });
                }
                "webhooks" => webhooks = WebhookCounts { total: r.a, active: r.b, inactive: r.a - r.b },
                "threads" => {
                    inbox.threads_total += r.a;
                    inbox.unread_messages_total += r.b;
                    inbox.by_status.insert(r.key, StatusCounts { total: r.a, unread_messages: r.b });
                }
                "ai_agents" => {
                    ai_agents.total += r.a;
                    ai_agents.by_status.insert(r.key, r.a);
                }
                "labels" => labels.total = r.a,
                _ => team_members.active = r.a,
            }
        }
        let inbox = inbox.with_every_status();
        let channels = channels.with_every_type();
        let ai_agents = ai_agents.with_every_status();
        Ok(Some(WorkspaceOverview {
            workspace: OverviewWorkspace { id: w.id, name: w.name, slug: w.slug, is_active: w.is_active },
            channels,
            webhooks,
            inbox,
            ai_agents,
            labels,
            team_members,
            generated_at: now,
        }))
    }
    .scope_boxed()
}

#[derive(QueryableByName)]
pub(super) struct ChannelRow {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub channel_type: String,
    #[diesel(sql_type = Text)]
    pub display_name: String,
    #[diesel(sql_type = Text)]
    pub identifier: String,
    #[diesel(sql_type = Text)]
    pub status: String,
}

impl ChannelRow {
    pub(super) fn into_summary(self) -> Result<ChannelSummary, diesel::result::Error> {
        Ok(ChannelSummary {
            id: ChannelId(self.id),
            channel_type: channel_type(&self.channel_type)?,
            display_name: self.display_name,
            identifier: self.identifier,
            status: self.status,
        })
    }
}

pub(super) fn channels(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    filter: Option<ChannelType>,
) -> ScopedBoxFuture<'static, '_, Result<Vec<ChannelSummary>, diesel::result::Error>> {
    async move {
        let rows: Vec<ChannelRow> = diesel::sql_query(
            "SELECT id, channel_type, display_name, identifier, status FROM channels
             WHERE workspace_id = $1 AND ($2::text IS NULL OR channel_type = $2) ORDER BY id",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Nullable<Text>, _>(filter.map(ChannelType::as_str))
        .load(c)
        .await?;
        rows.into_iter().map(ChannelRow::into_summary).collect()
    }
    .scope_boxed()
}

#[derive(QueryableByName)]
struct WebhookRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = Text)]
    platform: String,
    #[diesel(sql_type = Array<Text>)]
    events: Vec<String>,
    #[diesel(sql_type = Bool)]
    active: bool,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    updated_at: OffsetDateTime,
}

pub(super) fn webhooks(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    active_only: bool,
) -> ScopedBoxFuture<'static, '_, Result<WebhookList, diesel::result::Error>> {
    async move {
        // Only these columns: signing secrets never leave the table through the assistant.
        let rows: Vec<WebhookRow> = diesel::sql_query(
            "SELECT id, url, platform, events, active, created_at, updated_at FROM webhook_destinations
             WHERE workspace_id = $1 AND (active OR NOT $2) ORDER BY id",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<Bool, _>(active_only)
        .load(c)
        .await?;
        let webhooks: Vec<WebhookSummary> = rows
            .into_iter()
            .map(|r| WebhookSummary {
                id: r.id,
                url: r.url,
                platform: r.platform,
                events: r.events,
                active: r.active,
                created_at: r.created_at,
                updated_at: r.updated_at,
            })
            .collect();
        Ok(WebhookList { active_only, total: webhooks.len(), webhooks })
    }
    .scope_boxed()
}
