//! Realistic demo data, generated inside PostgreSQL with `generate_series` so that a million
//! messages take seconds rather than a million round trips. One generator serves both
//! `wms seed demo` (small) and `wms seed scale` (large).

use diesel::sql_types::{Array, BigInt, Bool, Bytea, Double, Integer, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::workspace::WorkspaceId;

use crate::pool::Db;

/// How much data to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedSize {
    /// Contacts.
    pub contacts: i64,
    /// Threads (conversations).
    pub threads: i64,
    /// Messages, spread over the threads.
    pub messages: i64,
    /// Extra agent members besides the admin.
    pub agents: i64,
    /// How many days back the data reaches.
    pub days: i32,
}

impl SeedSize {
    /// The demo workspace of `wms dev`: small enough to read, large enough for every chart.
    pub const DEMO: SeedSize = SeedSize { contacts: 240, threads: 600, messages: 9_000, agents: 6, days: 90 };

    /// A large workspace of `messages` messages with the proportions of a busy real one
    /// (1,000,000 messages: 100,000 threads and 50,000 contacts over 90 days).
    pub fn scale(messages: i64) -> SeedSize {
        SeedSize { contacts: (messages / 20).max(10), threads: (messages / 10).max(20), messages, agents: 25, days: 90 }
    }
}

/// A webhook destination to create, with its secret already encrypted by the caller.
#[derive(Debug, Clone)]
pub struct SeedDestination {
    /// HTTPS URL.
    pub url: String,
    /// Free label (`zapier`, `custom`).
    pub platform: String,
    /// Subscribed event names.
    pub events: Vec<String>,
    /// Whether it receives deliveries.
    pub active: bool,
    /// The encrypted signing secret.
    pub secret_encrypted: Vec<u8>,
}

/// Counts of what was generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, QueryableByName)]
pub struct SeedReport {
    /// Channels in the workspace.
    #[diesel(sql_type = BigInt)]
    pub channels: i64,
    /// Contacts in the workspace.
    #[diesel(sql_type = BigInt)]
    pub contacts: i64,
    /// Threads in the workspace.
    #[diesel(sql_type = BigInt)]
    pub threads: i64,
    /// Messages in the workspace.
    #[diesel(sql_type = BigInt)]
    pub messages: i64,
}

/// Fills workspace `ws` with generated data; deterministic for a given `seed` in `[-1, 1]`.
/// New agent users get `password_hash` and e-mails `agentN.wsID@demo.wms.test`.
///
/// # Errors
/// Any database failure; the transaction is rolled back and nothing is left half-seeded.
pub async fn seed_workspace(
    db: &Db,
    ws: WorkspaceId,
    size: SeedSize,
    password_hash: &str,
    destinations: &[SeedDestination],
    seed: f64,
) -> anyhow::Result<SeedReport> {
    let mut conn = db.conn().await?;
    let ws = ws.0;
    let password_hash = password_hash.to_owned();
    let destinations = destinations.to_vec();
    let report = conn
        .transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                generate(c, ws, size, &password_hash, &destinations, seed).await?;
                diesel::sql_query(
                    "SELECT (SELECT count(*) FROM channels WHERE workspace_id = $1) AS channels,
                            (SELECT count(*) FROM contacts WHERE workspace_id = $1) AS contacts,
                            (SELECT count(*) FROM threads WHERE workspace_id = $1) AS threads,
                            (SELECT count(*) FROM messages WHERE workspace_id = $1) AS messages",
                )
                .bind::<BigInt, _>(ws)
                .get_result::<SeedReport>(c)
                .await
            }
            .scope_boxed()
        })
        .await?;
    // A bulk load leaves the planner's statistics describing the tables as they were before, so
    // it would sort a whole channel's messages to return 25 (half a second) instead of walking the
    // index (a fraction of a millisecond) until autovacuum catches up. Refresh them now.
    diesel::sql_query("ANALYZE messages, threads, contacts, thread_labels").execute(&mut conn).await?;
    Ok(report)
}

async fn exec(c: &mut AsyncPgConnection, sql: &str, ws: i64) -> diesel::QueryResult<usize> {
    diesel::sql_query(sql).bind::<BigInt, _>(ws).execute(c).await
}

async fn generate(
    c: &mut AsyncPgConnection,
    ws: i64,
    size: SeedSize,
    password_hash: &str,
    destinations: &[SeedDestination],
    seed: f64,
) -> diesel::QueryResult<()> {
    diesel::sql_query("SELECT setseed($1)").bind::<Double, _>(seed).execute(c).await?;
    diesel::sql_query("SET LOCAL synchronous_commit = off").execute(c).await?;

    // Team members and teams.
    diesel::sql_query(
        "WITH u AS (
            INSERT INTO users (email, name, password_hash)
            SELECT format('agent%s.ws%s@demo.wms.test', g, $1), (ARRAY['Maya Patel','Lucas Silva','Aiko Tanaka','Omar Haddad',
                   'Sofia Rossi','Noah Becker','Amara Okafor','Liam Walsh','Chloe Martin','Diego Ramirez'])[1 + (g - 1) % 10]
                   || CASE WHEN g > 10 THEN ' ' || g ELSE '' END, $2
            FROM generate_series(1, $3) g
            ON CONFLICT DO NOTHING
            RETURNING id)
         INSERT INTO workspace_members (workspace_id, user_id, role, is_active)
         SELECT $1, id, 'agent', random() > 0.1 FROM u",
    )
    .bind::<BigInt, _>(ws)
    .bind::<Text, _>(password_hash)
    .bind::<BigInt, _>(size.agents)
    .execute(c)
    .await?;
    exec(c, "INSERT INTO teams (workspace_id, name) VALUES ($1, 'Support'), ($1, 'Sales'), ($1, 'Billing') ON CONFLICT DO NOTHING", ws).await?;
    exec(
        c,
        "INSERT INTO team_members (workspace_id, team_id, user_id)
         SELECT $1, t.id, m.user_id FROM teams t JOIN workspace_members m ON m.workspace_id = t.workspace_id
         WHERE t.workspace_id = $1 AND random() < 0.45 ON CONFLICT DO NOTHING",
        ws,
    )
    .await?;

    // Channels: several WhatsApp numbers (one disconnected), a Messenger page, an Instagram account.
    exec(
        c,
        "INSERT INTO channels (workspace_id, channel_type, display_name, identifier, status) VALUES
           ($1, 'whatsapp', 'Support (US)', '+14155550101', 'active'),
           ($1, 'whatsapp', 'Sales (UK)', '+442079460958', 'active'),
           ($1, 'whatsapp', 'Deliveries (BR)', '+5511987650001', 'active'),
           ($1, 'whatsapp', 'Old promo line', '+14155550199', 'disconnected'),
           ($1, 'messenger', 'Acme on Messenger', '104829301928374', 'active'),
           ($1, 'instagram', '@acme.store', '17841400000000001', 'active')
         ON CONFLICT DO NOTHING",
        ws,
    )
    .await?;
    exec(
        c,
        "INSERT INTO labels (workspace_id, name, color) VALUES
           ($1, 'vip', '#b45309'), ($1, 'billing', '#2563eb'), ($1, 'bug', '#dc2626'),
           ($1, 'feedback', '#16a34a'), ($1, 'sales-lead', '#7c3aed'), ($1, 'urgent', '#e11d48')
         ON CONFLICT DO NOTHING",
        ws,
    )
    .await?;
    exec(
        c,
        "INSERT INTO ai_agents (workspace_id, name, status) VALUES
           ($1, 'Aria, support assistant', 'active'), ($1, 'Sales concierge', 'active'),
           ($1, 'Returns helper', 'draft')",
        ws,
    )
    .await?;

    // Contacts, with countries weighted towards the channels' markets.
    diesel::sql_query(
        "INSERT INTO contacts (workspace_id, name, phone, email, platform_user_id, country, language, note)
         SELECT $1,
                (ARRAY['Ana','Ben','Carla','David','Elif','Farah','Gabriel','Hana','Ivan','Julia','Kenji','Lena',
                       'Mateo','Nadia','Oscar','Priya','Quentin','Rosa','Samir','Tara'])[1 + (g * 7) % 20] || ' ' ||
                (ARRAY['Almeida','Brown','Costa','Dubois','Evans','Fischer','Garcia','Huang','Ivanova','Jones',
                       'Kowalski','Lopez','Moreau','Nguyen','Okafor','Perez','Quinn','Rahman','Smith','Torres'])[1 + (g * 13) % 20],
                '+1555' || lpad(g::text, 7, '0'),
                CASE WHEN random() < 0.6 THEN format('customer%s.ws%s@example.com', g, $1) END,
                'psid-' || g,
                cc.country, cc.language,
                CASE WHEN random() < 0.1 THEN 'Prefers to be contacted in the afternoon.' END
         FROM generate_series(1, $2) g
         CROSS JOIN LATERAL (SELECT (ARRAY['US','US','US','GB','GB','BR','BR','DE','IN','MX'])[1 + floor(random() * 10)::int + 0 * g] AS country) c0
         CROSS JOIN LATERAL (SELECT c0.country, CASE c0.country WHEN 'BR' THEN 'pt' WHEN 'DE' THEN 'de'
                                   WHEN 'MX' THEN 'es' ELSE 'en' END AS language) cc",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(size.contacts)
    .execute(c)
    .await?;

    // Numbered views of what was just created, so generated rows can pick one by index.
    for (name, sql) in [
        ("s_contacts", "SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM contacts WHERE workspace_id = $1"),
        ("s_channels", "SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM channels WHERE workspace_id = $1 AND status = 'active'"),
        ("s_members", "SELECT row_number() OVER (ORDER BY user_id) - 1 AS n, user_id AS id FROM workspace_members WHERE workspace_id = $1"),
        ("s_teams", "SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM teams WHERE workspace_id = $1"),
        ("s_agents", "SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM ai_agents WHERE workspace_id = $1 AND status = 'active'"),
        ("s_labels", "SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM labels WHERE workspace_id = $1"),
    ] {
        exec(c, &format!("CREATE TEMP TABLE {name} ON COMMIT DROP AS {sql}"), ws).await?;
        diesel::sql_query(format!("CREATE INDEX ON {name} (n)")).execute(c).await?;
    }

    // `+ 0 * g` below ties each LATERAL subquery to its row: an uncorrelated one is evaluated
    // once for the whole statement, which would give every row the same random values.
    // Threads: mostly WhatsApp; statuses open, resolved, pending; every assignee kind.
    diesel::sql_query(
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status, assignee_type, assignee_user_id,
                              assignee_team_id, assignee_ai_agent_id, handover_status, created_at, updated_at)
         SELECT $1, ct.id, ch.id, r.status, r.kind,
                CASE WHEN r.kind = 'user' THEN (SELECT id FROM s_members WHERE n = g % (SELECT count(*) FROM s_members)) END,
                CASE WHEN r.kind = 'team' THEN (SELECT id FROM s_teams WHERE n = g % (SELECT count(*) FROM s_teams)) END,
                CASE WHEN r.kind = 'ai_agent' THEN (SELECT id FROM s_agents WHERE n = g % (SELECT count(*) FROM s_agents)) END,
                CASE WHEN r.kind = 'ai_agent' THEN (ARRAY['ai','ai','requested','human'])[1 + g % 4] END,
                r.created_at, r.created_at
         FROM generate_series(0, $2 - 1) g
         CROSS JOIN LATERAL (SELECT
             CASE WHEN random() + 0 * g < 0.35 THEN 'open' WHEN random() < 0.85 THEN 'resolved' ELSE 'pending' END AS status,
             (ARRAY['user','user','user','team','team','ai_agent','ai_agent','ai_agent',NULL])[1 + floor(random() * 9)::int] AS kind,
             now() - make_interval(secs => random() * $3 * 86400) AS created_at,
             floor(power(random(), 1.6) * (SELECT count(*) FROM s_channels))::bigint AS ch_n) r
         JOIN s_contacts ct ON ct.n = (g * 7919) % (SELECT count(*) FROM s_contacts)
         JOIN s_channels ch ON ch.n = r.ch_n",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(size.threads)
    .bind::<Integer, _>(size.days)
    .execute(c)
    .await?;
    exec(
        c,
        "CREATE TEMP TABLE s_threads ON COMMIT DROP AS
         SELECT row_number() OVER (ORDER BY id) - 1 AS n, id, channel_id, status, created_at, assignee_type,
                assignee_user_id, assignee_ai_agent_id
         FROM threads WHERE workspace_id = $1",
        ws,
    )
    .await?;
    diesel::sql_query("CREATE INDEX ON s_threads (n)").execute(c).await?;
    exec(
        c,
        "INSERT INTO thread_labels (workspace_id, thread_id, label_id)
         SELECT $1, t.id, l.id FROM s_threads t
         JOIN s_labels l ON l.n = (t.n * 31) % (SELECT count(*) FROM s_labels)
         WHERE random() < 0.4
         UNION
         SELECT $1, t.id, l.id FROM s_threads t
         JOIN s_labels l ON l.n = (t.n * 17 + 3) % (SELECT count(*) FROM s_labels)
         WHERE random() < 0.15",
        ws,
    )
    .await?;

    // Messages: half inbound; outbound by humans, AI agents and templates; every status, with the
    // time of each transition. Inbound messages of resolved threads have been read.
    diesel::sql_query(
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, author_user_id,
                               author_ai_agent_id, content, status, queued_at, sent_at, delivered_at, read_at,
                               failed_at, failure_reason, platform_message_id, created_at, updated_at)
         SELECT $1, t.id, t.channel_id, m.direction, m.sender_kind,
                CASE WHEN m.sender_kind = 'human' THEN t.assignee_user_id END,
                CASE WHEN m.sender_kind = 'ai' THEN t.assignee_ai_agent_id END,
                (ARRAY['Hi, where is my order?', 'Thanks, that solved it!', 'Can I change my delivery address?',
                       'Your order has shipped and should arrive on Thursday.', 'We are sorry for the delay.',
                       'Do you ship to Portugal?', 'Here is your invoice for October.', 'The app crashes when I pay.',
                       'Your appointment is confirmed for tomorrow at 10:00.', 'Could you send a photo of the item?'])[1 + g % 10],
                m.status,
                m.at,
                CASE WHEN m.status IN ('sent','delivered','read') THEN m.at + interval '2 seconds' END,
                CASE WHEN m.status IN ('delivered','read') THEN m.at + interval '9 seconds' END,
                CASE WHEN m.status = 'read' THEN m.at + make_interval(secs => 30 + random() * 3600) END,
                CASE WHEN m.status = 'failed' THEN m.at + interval '3 seconds' END,
                CASE WHEN m.status = 'failed' THEN (ARRAY['131026: message undeliverable', '131047: re-engagement window closed',
                                                          '131051: unsupported message type'])[1 + g % 3] END,
                CASE WHEN m.status <> 'queued' THEN 'wamid.seed' || $1 || '.' || g END,
                m.at, m.at
         FROM generate_series(0, $2 - 1) g
         JOIN s_threads t ON t.n = g % (SELECT count(*) FROM s_threads)
         CROSS JOIN LATERAL (SELECT random() + 0 * g AS r1, random() + 0 * g AS r2, random() + 0 * g AS r3) x
         CROSS JOIN LATERAL (SELECT
             CASE WHEN x.r1 < 0.5 THEN 'inbound' ELSE 'outbound' END AS direction,
             CASE WHEN x.r1 < 0.5 THEN 'contact'
                  WHEN x.r2 < 0.2 THEN 'template'
                  WHEN t.assignee_type = 'ai_agent' THEN 'ai'
                  ELSE 'human' END AS sender_kind,
             CASE WHEN x.r1 < 0.5 THEN CASE WHEN t.status = 'resolved' OR x.r3 < 0.8 THEN 'read' ELSE 'delivered' END
                  WHEN x.r3 < 0.45 THEN 'read' WHEN x.r3 < 0.72 THEN 'delivered' WHEN x.r3 < 0.88 THEN 'sent'
                  WHEN x.r3 < 0.96 THEN 'failed' ELSE 'queued' END AS status,
             least(now() - interval '1 minute',
                   t.created_at + make_interval(secs => random() * 3 * 86400)) AS at) m",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(size.messages)
    .execute(c)
    .await?;

    // Denormalised thread and contact figures, consistent with the messages.
    exec(
        c,
        "UPDATE threads t SET unread_count = s.unread, last_message_at = s.last_at, updated_at = s.last_at
         FROM (SELECT thread_id, count(*) FILTER (WHERE direction = 'inbound' AND status <> 'read') AS unread,
                      max(created_at) AS last_at
               FROM messages WHERE workspace_id = $1 GROUP BY thread_id) s
         WHERE t.workspace_id = $1 AND t.id = s.thread_id",
        ws,
    )
    .await?;
    exec(
        c,
        "UPDATE contacts ct SET first_contacted_at = s.first_at, last_contacted_at = s.last_at
         FROM (SELECT t.contact_id, min(t.created_at) AS first_at, max(coalesce(t.last_message_at, t.created_at)) AS last_at
               FROM threads t WHERE t.workspace_id = $1 GROUP BY t.contact_id) s
         WHERE ct.workspace_id = $1 AND ct.id = s.contact_id",
        ws,
    )
    .await?;

    for d in destinations {
        diesel::sql_query(
            "INSERT INTO webhook_destinations (workspace_id, url, platform, events, active, secret_encrypted)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind::<BigInt, _>(ws)
        .bind::<Text, _>(&d.url)
        .bind::<Text, _>(&d.platform)
        .bind::<Array<Text>, _>(&d.events)
        .bind::<Bool, _>(d.active)
        .bind::<Bytea, _>(&d.secret_encrypted)
        .execute(c)
        .await?;
    }
    Ok(())
}
