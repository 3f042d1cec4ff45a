//! Realistic demo data, generated inside PostgreSQL with `generate_series` so that a million
//! messages take seconds rather than a million round trips. One generator serves both
//! `wms seed demo` (small) and `wms seed scale` (large).

use diesel::sql_types::{Array, BigInt, Bool, Bytea, Double, Integer, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::workspace::WorkspaceId;

use crate::pool::Db;

mod conversations;

/// What the generator is doing, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedProgress {
    /// A step began (`contacts`, `threads`, `messages`, `figures`).
    Step(&'static str),
    /// Messages written so far in this run.
    Messages(u64),
}

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
    /// The demo workspace of `wms dev`: small enough to read, large enough for every chart, with
    /// conversations of a handful of exchanges as support conversations mostly are.
    pub const DEMO: SeedSize = SeedSize { contacts: 500, threads: 1_200, messages: 9_000, agents: 6, days: 90 };

    /// A large workspace of `messages` messages with the proportions of a busy real one
    /// (1,000,000 messages: 100,000 threads and 50,000 contacts over 90 days).
    pub fn scale(messages: i64) -> SeedSize {
        SeedSize { contacts: (messages / 20).max(10), threads: (messages / 10).max(20), messages, agents: 25, days: 90 }
    }
}

/// A webhook destination to create, with its secret already encrypted by the caller for its
/// reserved id ([`crate::reserve_id`]).
#[derive(Debug, Clone)]
pub struct SeedDestination {
    /// Its reserved id.
    pub id: i64,
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
    progress: &(dyn Fn(SeedProgress) + Send + Sync),
) -> anyhow::Result<SeedReport> {
    let mut conn = db.conn().await?;
    let ws = ws.0;
    let password_hash = password_hash.to_owned();
    let destinations = destinations.to_vec();
    let before = messages_sequence(db).await.unwrap_or(0);
    let report = {
        let work = conn.transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                generate(c, ws, size, &password_hash, &destinations, seed, progress).await?;
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
        });
        let mut work = std::pin::pin!(work);
        // The big INSERT is one statement, and its rows are invisible outside the transaction until
        // it commits; the identity sequence is not transactional, so another connection reading it
        // sees how many message ids have been taken so far.
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(200));
        loop {
            tokio::select! {
                done = &mut work => break done?,
                _ = tick.tick() => {
                    if let Some(now) = messages_sequence(db).await {
                        progress(SeedProgress::Messages(now.saturating_sub(before)));
                    }
                }
            }
        }
    };
    progress(SeedProgress::Step("statistics"));
    // A bulk load leaves the planner's statistics describing the tables as they were before, so
    // it would sort a whole channel's messages to return 25 (half a second) instead of walking the
    // index (a fraction of a millisecond) until autovacuum catches up. Refresh them now.
    diesel::sql_query("ANALYZE messages, threads, contacts, thread_labels").execute(&mut conn).await?;
    Ok(report)
}

/// The last id the messages' identity sequence handed out (0 before the first).
async fn messages_sequence(db: &Db) -> Option<u64> {
    #[derive(QueryableByName)]
    struct Last {
        #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
        v: Option<i64>,
    }
    let mut conn = db.conn().await.ok()?;
    let last: Last =
        diesel::sql_query("SELECT pg_sequence_last_value(pg_get_serial_sequence('messages', 'id')::regclass) AS v")
            .get_result(&mut conn)
            .await
            .ok()?;
    Some(last.v.map_or(0, |v| u64::try_from(v).unwrap_or(0)))
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
    progress: &(dyn Fn(SeedProgress) + Send + Sync),
) -> diesel::QueryResult<()> {
    diesel::sql_query("SELECT setseed($1)").bind::<Double, _>(seed).execute(c).await?;
    diesel::sql_query("SET LOCAL synchronous_commit = off").execute(c).await?;
    // The messages are sorted twice (by thread, to add up the gaps; by time, to insert them in
    // order): in memory that is a second or two for a million rows, on disk several.
    diesel::sql_query("SET LOCAL work_mem = '256MB'").execute(c).await?;
    progress(SeedProgress::Step("contacts"));

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
        // Autovacuum never analyses temporary tables: without statistics the planner guesses.
        diesel::sql_query(format!("ANALYZE {name}")).execute(c).await?;
    }

    conversation_lines(c).await?;
    business_hours(c, ws, size.days).await?;

    // `+ 0 * g` below ties each LATERAL subquery to its row: an uncorrelated one is evaluated
    // once for the whole statement, which would give every row the same random values.
    // Threads start in business hours (s_hours) and are inserted in the order they started, so
    // thread ids rise with time as they do in a real workspace. Statuses follow age: recent
    // conversations are still open, old ones mostly resolved.
    progress(SeedProgress::Step("threads"));
    diesel::sql_query(
        "INSERT INTO threads (workspace_id, contact_id, channel_id, status, assignee_type, assignee_user_id,
                              assignee_team_id, assignee_ai_agent_id, handover_status, created_at, updated_at)
         SELECT $1, ct.id, ch.id,
                CASE WHEN r.created_at > now() - interval '2 days' THEN CASE WHEN r.r1 < 0.6 THEN 'open' WHEN r.r1 < 0.8 THEN 'pending' ELSE 'resolved' END
                     WHEN r.r1 < 0.12 THEN 'open' WHEN r.r1 < 0.2 THEN 'pending' ELSE 'resolved' END,
                r.kind,
                CASE WHEN r.kind = 'user' THEN (SELECT id FROM s_members WHERE n = r.g % (SELECT count(*) FROM s_members)) END,
                CASE WHEN r.kind = 'team' THEN (SELECT id FROM s_teams WHERE n = r.g % (SELECT count(*) FROM s_teams)) END,
                CASE WHEN r.kind = 'ai_agent' THEN (SELECT id FROM s_agents WHERE n = r.g % (SELECT count(*) FROM s_agents)) END,
                CASE WHEN r.kind = 'ai_agent' THEN (ARRAY['ai','ai','requested','human'])[1 + r.g % 4] END,
                r.created_at, r.created_at
         FROM (
             -- Each thread's hour: random points on the running sum of the hours' weights, sorted
             -- together with the hours' lower bounds, each point taking the last bound before it
             -- (one sort, instead of a search per thread).
             SELECT g, max(i) OVER (ORDER BY v, i NULLS LAST) AS i
             FROM (SELECT g, random() * (SELECT max(cum) FROM s_hours) AS v, NULL::bigint AS i FROM generate_series(0, $2 - 1) g
                   UNION ALL SELECT NULL, cum - w, i FROM s_hours) p
         ) pick
         JOIN s_hours h ON h.i = pick.i
         CROSS JOIN LATERAL (SELECT pick.g, random() + 0 * pick.g AS r1,
             (ARRAY['user','user','user','team','team','ai_agent','ai_agent','ai_agent',NULL])[1 + floor(random() * 9)::int] AS kind,
             floor(power(random(), 1.6) * (SELECT count(*) FROM s_channels))::bigint AS ch_n,
             h.start + make_interval(secs => random() * h.passed * 3600) AS created_at) r
         JOIN s_contacts ct ON ct.n = (r.g * 7919) % (SELECT count(*) FROM s_contacts)
         JOIN s_channels ch ON ch.n = r.ch_n
         WHERE pick.g IS NOT NULL
         ORDER BY r.created_at",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(size.threads)
    .execute(c)
    .await?;
    // Each thread's share of the messages: at least one, the rest by a skewed weight (most
    // conversations are short, a few run long), adding up to exactly `size.messages`.
    diesel::sql_query(
        "CREATE TEMP TABLE s_threads ON COMMIT DROP AS
         WITH t AS (
             SELECT row_number() OVER (ORDER BY t.id) - 1 AS n, t.id, t.channel_id, t.status, t.created_at,
                    t.assignee_type, t.assignee_user_id, t.assignee_ai_agent_id, t.handover_status,
                    coalesce(ct.language, 'en') AS lang, floor(random() * 6)::int AS topic,
                    -ln(1 - random()) - ln(1 - random()) AS w
             FROM threads t JOIN contacts ct ON ct.workspace_id = t.workspace_id AND ct.id = t.contact_id
             WHERE t.workspace_id = $1),
         c AS (SELECT t.*, sum(w) OVER (ORDER BY n) AS cum_w, sum(w) OVER () AS total_w, count(*) OVER () AS total_n FROM t),
         b AS (SELECT c.*, CASE WHEN $2 >= total_n THEN 1 ELSE 0 END AS base,
                      $2 - CASE WHEN $2 >= total_n THEN total_n ELSE 0 END AS spread FROM c),
         a AS (SELECT b.*, CASE WHEN n = total_n - 1 THEN spread ELSE least(spread, floor(cum_w / total_w * spread)::bigint) END AS upto FROM b)
         SELECT a.n, a.id, a.channel_id, a.status, a.created_at, a.assignee_type, a.assignee_user_id,
                a.assignee_ai_agent_id, a.handover_status, a.lang, a.topic,
                a.base + a.upto - coalesce(lag(a.upto) OVER (ORDER BY a.n), 0) AS k,
                100000 + (482913 + a.n * 7919) % 900000 AS order_no
         FROM a",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(size.messages)
    .execute(c)
    .await?;
    diesel::sql_query("CREATE INDEX ON s_threads (n)").execute(c).await?;
    diesel::sql_query("ANALYZE s_threads").execute(c).await?;
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

    // Messages, as conversations: the customer writes (even positions), the team answers (odd
    // positions: a person, the thread's AI agent, or an approved template when WhatsApp's 24-hour
    // window has closed and to close a resolved thread). Each message follows the previous one by
    // a realistic gap; a conversation that would run past now is compressed into the time since it
    // started, so today holds only what its hours can. Inserted in time order so message ids rise
    // with created_at across the workspace, as they do when messages arrive one by one.
    progress(SeedProgress::Step("messages"));
    diesel::sql_query(
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, author_user_id,
                               author_ai_agent_id, content, status, queued_at, sent_at, delivered_at, read_at,
                               failed_at, failure_reason, platform_message_id, created_at, updated_at)
         SELECT $1, m.thread_id, m.channel_id, m.direction, m.sender_kind,
                CASE WHEN m.sender_kind = 'human' THEN m.assignee_user_id END,
                CASE WHEN m.sender_kind = 'ai' THEN m.assignee_ai_agent_id END,
                replace(l.text, '{order}', m.order_no::text),
                m.status,
                m.at,
                CASE WHEN m.status IN ('sent','delivered','read') THEN m.at + interval '2 seconds' END,
                CASE WHEN m.status IN ('delivered','read') THEN m.at + interval '9 seconds' END,
                CASE WHEN m.status = 'read' THEN least(now(), m.at + make_interval(secs => 30 + m.r3 * 3600)) END,
                CASE WHEN m.status = 'failed' THEN m.at + interval '3 seconds' END,
                CASE WHEN m.status = 'failed' THEN (ARRAY['131026: message undeliverable', '131047: re-engagement window closed',
                                                          '131051: unsupported message type'])[1 + m.tn % 3] END,
                CASE WHEN m.status <> 'queued' THEN 'wamid.seed' || $1 || '.' || m.tn || '.' || m.seq END,
                m.at, m.at
         FROM (
             SELECT w.*, w.created_at + make_interval(secs => w.cum * CASE WHEN w.total > w.room THEN w.room / w.total ELSE 1 END) AS at
             FROM (
                 SELECT g.*, sum(g.gap) OVER (PARTITION BY g.tn ORDER BY g.seq) AS cum, sum(g.gap) OVER (PARTITION BY g.tn) AS total,
                        0.9 * extract(epoch FROM now() - g.created_at)::float8 AS room
                 FROM (
                     SELECT t.n AS tn, t.id AS thread_id, t.channel_id, t.created_at, t.assignee_user_id,
                            t.assignee_ai_agent_id, t.lang, t.topic, t.order_no, s.seq, x.r3,
                            CASE WHEN s.seq % 2 = 0 THEN 'inbound' ELSE 'outbound' END AS direction,
                            CASE WHEN s.seq % 2 = 0 THEN 'contact'
                                 WHEN x.late OR x.closing AND x.r2 < 0.5 THEN 'template'
                                 WHEN t.assignee_type = 'ai_agent' AND (s.seq < 4 OR t.handover_status <> 'human') THEN 'ai'
                                 ELSE 'human' END AS sender_kind,
                            CASE WHEN s.seq % 2 = 0 THEN CASE WHEN s.seq < t.k - 1 OR t.status = 'resolved' OR x.r3 < 0.5 THEN 'read' ELSE 'delivered' END
                                 WHEN x.r3 < 0.45 THEN 'read' WHEN x.r3 < 0.72 THEN 'delivered' WHEN x.r3 < 0.88 THEN 'sent'
                                 WHEN x.r3 < 0.96 THEN 'failed' ELSE 'queued' END AS status,
                            -- Seconds since the previous message of the thread (log-uniform, so mostly short):
                            -- an AI agent answers in under a minute, a person in 1 min to 3 h, the customer
                            -- writes back in 20 s to 2 h.
                            CASE WHEN s.seq = 0 THEN 0
                                 WHEN x.late THEN 72000 + x.r1 * 108000
                                 WHEN s.seq % 2 = 1 AND t.assignee_type = 'ai_agent' AND t.handover_status <> 'human' THEN 3 + x.r1 * 40
                                 WHEN s.seq % 2 = 1 THEN 60 * exp(x.r1 * ln(180))
                                 ELSE 20 * exp(x.r1 * ln(360)) END AS gap,
                            -- Which line: the topic's turns 0-2, then the middle exchanges 3-6; templates are topic -1.
                            CASE WHEN s.seq % 2 = 1 AND x.late THEN -1
                                 WHEN s.seq % 2 = 1 AND x.closing AND x.r2 < 0.5 THEN -1 ELSE t.topic END AS line_topic,
                            CASE WHEN s.seq % 2 = 1 AND x.late THEN 0
                                 WHEN s.seq % 2 = 1 AND x.closing AND x.r2 < 0.5 THEN 1
                                 WHEN s.seq / 2 < 2 THEN s.seq / 2
                                 WHEN x.closing OR (s.seq % 2 = 0 AND s.seq / 2 = (t.k + 1) / 2 - 1 AND t.status = 'resolved') THEN 2
                                 ELSE 3 + (s.seq / 2 - 2) % 4 END AS turn
                     FROM s_threads t
                     CROSS JOIN LATERAL generate_series(0, t.k - 1) s(seq)
                     CROSS JOIN LATERAL (SELECT random() + 0 * s.seq AS r1, random() + 0 * s.seq AS r2, random() + 0 * s.seq AS r3) r
                     CROSS JOIN LATERAL (SELECT r.r1, r.r2, r.r3,
                         -- A day or two of silence before this message (the customer came back, or the team could
                         -- only answer with a template).
                         s.seq > 0 AND r.r2 > 0.97 AS late,
                         -- The team's last reply in a resolved thread of three exchanges or more.
                         s.seq % 2 = 1 AND s.seq = t.k - 1 AND s.seq >= 5 AND t.status = 'resolved' AS closing) x
                 ) g
             ) w
         ) m
         JOIN s_lines l ON l.lang = m.lang AND l.topic = m.line_topic AND l.turn = m.turn AND l.customer = (m.seq % 2 = 0)
         ORDER BY m.at, m.tn, m.seq",
    )
    .bind::<BigInt, _>(ws)
    .execute(c)
    .await?;

    // Denormalised thread and contact figures, consistent with the messages.
    progress(SeedProgress::Step("figures"));
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
            "INSERT INTO webhook_destinations (workspace_id, url, platform, events, active, secret_encrypted, id)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind::<BigInt, _>(ws)
        .bind::<Text, _>(&d.url)
        .bind::<Text, _>(&d.platform)
        .bind::<Array<Text>, _>(&d.events)
        .bind::<Bool, _>(d.active)
        .bind::<Bytea, _>(&d.secret_encrypted)
        .bind::<BigInt, _>(d.id)
        .execute(c)
        .await?;
    }
    Ok(())
}

/// `s_lines`: every line of [`conversations`], to join on by (language, topic, turn, side).
async fn conversation_lines(c: &mut AsyncPgConnection) -> diesel::QueryResult<()> {
    let rows = conversations::rows();
    let mut langs = Vec::new();
    let mut topics = Vec::new();
    let mut turns = Vec::new();
    let mut customer = Vec::new();
    let mut texts = Vec::new();
    for (lang, topic, turn, is_customer, text) in rows {
        langs.push(lang);
        topics.push(topic);
        turns.push(turn);
        customer.push(is_customer);
        texts.push(text);
    }
    diesel::sql_query(
        "CREATE TEMP TABLE s_lines ON COMMIT DROP AS
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::bool[], $5::text[]) AS l(lang, topic, turn, customer, text)",
    )
    .bind::<Array<Text>, _>(langs)
    .bind::<Array<Integer>, _>(topics)
    .bind::<Array<Integer>, _>(turns)
    .bind::<Array<Bool>, _>(customer)
    .bind::<Array<Text>, _>(texts)
    .execute(c)
    .await?;
    Ok(())
}

/// `s_hours`: every hour of the last `days` days with the running sum of how likely a
/// conversation is to start in it, in the workspace's time zone: busy from 9 to 18, quiet at
/// night, weekends at a third. The current hour counts only as far as it has gone, so today
/// holds only as many conversations as its hours so far.
async fn business_hours(c: &mut AsyncPgConnection, ws: i64, days: i32) -> diesel::QueryResult<()> {
    diesel::sql_query(
        "CREATE TEMP TABLE s_hours ON COMMIT DROP AS
         WITH h AS (
             SELECT hs AS start, least(1.0, extract(epoch FROM now() - hs)::float8 / 3600.0) AS passed, hs AT TIME ZONE w.time_zone AS local
             FROM workspaces w, generate_series(date_trunc('hour', now() - make_interval(days => $2)), now(), interval '1 hour') hs
             WHERE w.id = $1)
         SELECT row_number() OVER (ORDER BY start) AS i, start, passed, w, sum(w) OVER (ORDER BY start) AS cum
         FROM (SELECT start, passed, passed * CASE WHEN extract(isodow FROM local) IN (6, 7) THEN 0.35 ELSE 1.0 END
                    * (ARRAY[0.12, 0.08, 0.06, 0.06, 0.08, 0.15, 0.3, 0.6, 1.1, 1.7, 2.0, 1.9, 1.6, 1.7, 1.9, 1.8,
                             1.6, 1.3, 1.1, 0.9, 0.7, 0.5, 0.35, 0.2]::float8[])[1 + extract(hour FROM local)::int] AS w
               FROM h) hw",
    )
    .bind::<BigInt, _>(ws)
    .bind::<Integer, _>(days)
    .execute(c)
    .await?;
    diesel::sql_query("CREATE INDEX ON s_hours (i)").execute(c).await?;
    diesel::sql_query("ANALYZE s_hours").execute(c).await?;
    Ok(())
}
