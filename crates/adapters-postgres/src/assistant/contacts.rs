//! `get_contact_analytics`: one contact's threads and message figures. Only counts, statuses,
//! names and dates are selected; message content is never read.

use diesel::sql_types::{Array, BigInt, Date as SqlDate, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::{ScopedBoxFuture, ScopedFutureExt};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::assistant::{
    Assignee, ChannelRef, ContactDay, ContactFacts, ContactKey, ContactProfile, Conversation, Responder,
};
use domain::channels::ChannelId;
use domain::workspace::WorkspaceId;
use time::{Date, OffsetDateTime};

use super::analytics::{first_day, today};
use super::channel_type;

#[derive(QueryableByName)]
struct ContactRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    phone: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    country: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    language: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    note: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    first_contacted_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_contacted_at: Option<OffsetDateTime>,
}

pub(super) fn find(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    key: ContactKey,
    limit: i64,
) -> ScopedBoxFuture<'static, '_, Result<Vec<ContactProfile>, diesel::result::Error>> {
    async move {
        // Both columns are stored normalised (E.164; lowercase by CHECK), so equality uses the indexes.
        let (column, value) = match key {
            ContactKey::Phone(p) => ("phone", p),
            ContactKey::Email(e) => ("email", e),
        };
        let rows: Vec<ContactRow> = diesel::sql_query(format!(
            "SELECT id, name, phone, email, country, language, note, first_contacted_at, last_contacted_at
             FROM contacts WHERE workspace_id = $1 AND {column} = $2 AND erased_at IS NULL ORDER BY id LIMIT $3"
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<Text, _>(value)
        .bind::<BigInt, _>(limit)
        .load(c)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| ContactProfile {
                id: r.id,
                name: r.name,
                phone: r.phone,
                email: r.email,
                country: r.country,
                language: r.language,
                note: r.note,
                first_contacted_at: r.first_contacted_at,
                last_contacted_at: r.last_contacted_at,
            })
            .collect())
    }
    .scope_boxed()
}

#[derive(QueryableByName)]
struct LabelRow {
    #[diesel(sql_type = Nullable<BigInt>)]
    id: Option<i64>,
}

#[derive(QueryableByName)]
struct ThreadRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = BigInt)]
    unread_count: i64,
    #[diesel(sql_type = Nullable<Text>)]
    handover_status: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_message_at: Option<OffsetDateTime>,
    #[diesel(sql_type = BigInt)]
    channel_id: i64,
    #[diesel(sql_type = Text)]
    channel_type: String,
    #[diesel(sql_type = Text)]
    channel_name: String,
    #[diesel(sql_type = Nullable<Text>)]
    assignee_type: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    assignee_id: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    assignee_name: Option<String>,
    #[diesel(sql_type = Array<Text>)]
    labels: Vec<String>,
}

// The assignee user is a member of this workspace (the foreign key goes through
// workspace_members), so joining `users` by id alone cannot reach another workspace.
const THREADS: &str = "
    SELECT t.id, t.status, t.unread_count::bigint AS unread_count, t.handover_status, t.created_at, t.last_message_at,
           c.id AS channel_id, c.channel_type, c.display_name AS channel_name, t.assignee_type,
           coalesce(t.assignee_user_id, t.assignee_team_id, t.assignee_ai_agent_id) AS assignee_id,
           CASE t.assignee_type WHEN 'user' THEN coalesce(wm.name, u.name) WHEN 'team' THEN tm.name WHEN 'ai_agent' THEN ag.name END
               AS assignee_name,
           coalesce((SELECT array_agg(l.name ORDER BY l.name) FROM thread_labels tl
                     JOIN labels l ON l.workspace_id = tl.workspace_id AND l.id = tl.label_id
                     WHERE tl.workspace_id = $1 AND tl.thread_id = t.id), '{}') AS labels
    FROM threads t
    JOIN channels c ON c.workspace_id = t.workspace_id AND c.id = t.channel_id
    LEFT JOIN users u ON t.assignee_type = 'user' AND u.id = t.assignee_user_id
    LEFT JOIN workspace_members wm ON wm.workspace_id = t.workspace_id AND wm.user_id = u.id
    LEFT JOIN teams tm ON tm.workspace_id = t.workspace_id AND tm.id = t.assignee_team_id
    LEFT JOIN ai_agents ag ON ag.workspace_id = t.workspace_id AND ag.id = t.assignee_ai_agent_id
    WHERE t.workspace_id = $1 AND t.contact_id = $2
      AND ($3::bigint IS NULL OR EXISTS (SELECT 1 FROM thread_labels x
                                         WHERE x.workspace_id = $1 AND x.thread_id = t.id AND x.label_id = $3))
    ORDER BY coalesce(t.last_message_at, t.created_at) DESC, t.id DESC";

#[derive(QueryableByName)]
struct DayRow {
    #[diesel(sql_type = SqlDate)]
    day: Date,
    #[diesel(sql_type = BigInt)]
    inbound: i64,
    #[diesel(sql_type = BigInt)]
    outbound: i64,
    #[diesel(sql_type = BigInt)]
    outbound_human: i64,
    #[diesel(sql_type = BigInt)]
    outbound_ai: i64,
    #[diesel(sql_type = BigInt)]
    template_sends: i64,
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = BigInt)]
    read: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
    #[diesel(sql_type = BigInt)]
    billable_templates: i64,
}

// The funnel (delivered includes read) is `wms_message_reached`, as in the rollups.
// $3/$4: the period's first and last local day; $5: the time zone. The bounds are instants, so
// the index on (workspace_id, thread_id) narrows to the threads and the time test is a filter.
const DAYS: &str = "
    SELECT (m.created_at AT TIME ZONE $5)::date AS day,
           count(*) FILTER (WHERE m.direction = 'inbound') AS inbound,
           count(*) FILTER (WHERE m.direction = 'outbound') AS outbound,
           count(*) FILTER (WHERE m.sender_kind = 'human') AS outbound_human,
           count(*) FILTER (WHERE m.sender_kind = 'ai') AS outbound_ai,
           count(*) FILTER (WHERE m.sender_kind = 'template') AS template_sends,
           count(*) FILTER (WHERE m.direction = 'outbound' AND wms_message_reached(m.status, 'delivered')) AS delivered,
           count(*) FILTER (WHERE m.direction = 'outbound' AND wms_message_reached(m.status, 'read')) AS read,
           count(*) FILTER (WHERE m.direction = 'outbound' AND m.status = 'failed') AS failed,
           count(*) FILTER (WHERE m.sender_kind = 'template' AND wms_message_reached(m.status, 'sent')
                              AND c.channel_type = 'whatsapp') AS billable_templates
    FROM messages m
    JOIN channels c ON c.workspace_id = m.workspace_id AND c.id = m.channel_id
    WHERE m.workspace_id = $1 AND m.thread_id = ANY($2)
      AND m.created_at >= ($3::date::timestamp AT TIME ZONE $5)
      AND m.created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)
    GROUP BY 1";

#[derive(QueryableByName)]
struct ResponderRow {
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    outbound_messages: i64,
}

const RESPONDERS: &str = "
    SELECT u.id AS user_id, coalesce(wm.name, u.name) AS name, count(*) AS outbound_messages
    FROM messages m JOIN users u ON u.id = m.author_user_id
    LEFT JOIN workspace_members wm ON wm.workspace_id = m.workspace_id AND wm.user_id = u.id
    WHERE m.workspace_id = $1 AND m.thread_id = ANY($2) AND m.sender_kind = 'human'
      AND m.created_at >= ($3::date::timestamp AT TIME ZONE $5)
      AND m.created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)
    GROUP BY u.id, coalesce(wm.name, u.name)
    ORDER BY outbound_messages DESC, name";

pub(super) fn facts(
    c: &mut AsyncPgConnection,
    ws: WorkspaceId,
    contact_id: i64,
    label: Option<String>,
    days: u16,
    now: OffsetDateTime,
) -> ScopedBoxFuture<'static, '_, Result<ContactFacts, diesel::result::Error>> {
    async move {
        let clock = today(c, ws, now).await?;
        let label_id = match &label {
            None => None,
            Some(name) => {
                let row: Vec<LabelRow> =
                    diesel::sql_query("SELECT id FROM labels WHERE workspace_id = $1 AND lower(name) = lower($2)")
                        .bind::<BigInt, _>(ws.0)
                        .bind::<Text, _>(name)
                        .load(c)
                        .await?;
                match <[_]>::first(&row).and_then(|r| r.id) {
                    Some(id) => Some(id),
                    None => {
                        let (time_zone, today) = (clock.time_zone, clock.today);
                        let (threads, days, responders) = (vec![], vec![], vec![]);
                        return Ok(ContactFacts { time_zone, today, label_exists: false, threads, days, responders });
                    }
                }
            }
        };
        let rows: Vec<ThreadRow> = diesel::sql_query(THREADS)
            .bind::<BigInt, _>(ws.0)
            .bind::<BigInt, _>(contact_id)
            .bind::<Nullable<BigInt>, _>(label_id)
            .load(c)
            .await?;
        let ids: Vec<i64> = rows.iter().map(|t| t.id).collect();
        let from = first_day(clock.today, days);
        let day_rows: Vec<DayRow> = diesel::sql_query(DAYS)
            .bind::<BigInt, _>(ws.0)
            .bind::<Array<BigInt>, _>(&ids)
            .bind::<SqlDate, _>(from)
            .bind::<SqlDate, _>(clock.today)
            .bind::<Text, _>(&clock.time_zone)
            .load(c)
            .await?;
        let responders: Vec<ResponderRow> = diesel::sql_query(RESPONDERS)
            .bind::<BigInt, _>(ws.0)
            .bind::<Array<BigInt>, _>(&ids)
            .bind::<SqlDate, _>(from)
            .bind::<SqlDate, _>(clock.today)
            .bind::<Text, _>(&clock.time_zone)
            .load(c)
            .await?;
        let threads = rows.into_iter().map(conversation).collect::<Result<Vec<_>, _>>()?;
        Ok(ContactFacts {
            time_zone: clock.time_zone,
            today: clock.today,
            label_exists: true,
            threads,
            days: day_rows
                .into_iter()
                .map(|r| ContactDay {
                    date: r.day,
                    inbound: r.inbound,
                    outbound: r.outbound,
                    outbound_human: r.outbound_human,
                    outbound_ai: r.outbound_ai,
                    template_sends: r.template_sends,
                    delivered: r.delivered,
                    read: r.read,
                    failed: r.failed,
                    billable_templates: r.billable_templates,
                })
                .collect(),
            responders: responders
                .into_iter()
                .map(|r| Responder { user_id: r.user_id, name: r.name, outbound_messages: r.outbound_messages })
                .collect(),
        })
    }
    .scope_boxed()
}

fn conversation(t: ThreadRow) -> Result<Conversation, diesel::result::Error> {
    Ok(Conversation {
        thread_id: t.id,
        channel: ChannelRef {
            id: ChannelId(t.channel_id),
            channel_type: channel_type(&t.channel_type)?,
            display_name: t.channel_name,
        },
        status: t.status,
        unread_messages: t.unread_count,
        assignee: match (t.assignee_type, t.assignee_id) {
            (Some(kind), Some(id)) => Some(Assignee { kind, id, name: t.assignee_name }),
            _ => None,
        },
        labels: t.labels,
        handover_status: t.handover_status,
        created_at: t.created_at,
        last_message_at: t.last_message_at,
    })
}
