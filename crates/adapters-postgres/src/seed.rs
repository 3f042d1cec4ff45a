//! Realistic demo data, generated inside PostgreSQL with `generate_series` so that a million
//! messages take seconds rather than a million round trips. One generator serves both
//! `wms seed demo` (small) and `wms seed scale` (large). What the live path would have recorded
//! for each thread (its reports' facts, its SLA under the seeded policies, a reopening) is
//! replayed through the domain's own decisions (the module `replay`).

use diesel::sql_types::{Array, BigInt, Bool, Bytea, Double, Integer, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::workspace::WorkspaceId;

use crate::pool::Db;

mod conversations;
mod plan;
mod replay;

/// What the generator is doing, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedProgress {
    /// A step began (`contacts`, `threads`, `messages`, `figures`, `statistics`, `reports`).
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
    // The facts are queued for the rollup as the live path's are; the report is exact either way,
    // folding them now spares the first reports the queue.
    crate::reports::rollup::fold(db).await.map_err(|e| e.0)?;
    // The fold leaves every queued fact a dead row and the rollups' first versions behind. A
    // server without autovacuum (CI machines turn it off) would plan the first reports on those
    // counts (a hash join over every fact the queue ever held: reports 10 times slower), so they
    // are vacuumed here; the rest only need their statistics.
    diesel::sql_query("VACUUM (ANALYZE) conversation_facts_pending, conversation_rollups").execute(&mut conn).await?;
    diesel::sql_query("ANALYZE conversation_facts, conversation_cycles, thread_slas").execute(&mut conn).await?;
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
    // The messages are sorted by time to be inserted in order, texts included (about 270 bytes a
    // row): in memory that is a second or two for a million rows, on disk several.
    diesel::sql_query("SET LOCAL work_mem = '512MB'").execute(c).await?;
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
         INSERT INTO workspace_members (workspace_id, user_id, role, status)
         SELECT $1, id, 'agent', CASE WHEN random() > 0.1 THEN 'active' ELSE 'deactivated' END FROM u",
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
    sla_policies(c, ws, size.days).await?;

    // Threads and messages are planned together: each thread is written once, with the figures
    // its messages will add up to (see `plan`).
    progress(SeedProgress::Step("threads"));
    let salt = (seed * 1e9) as i64;
    plan::plan_threads(c, ws, salt, size.threads, size.messages).await?;
    plan::insert_threads(c, ws).await?;
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

    progress(SeedProgress::Step("messages"));
    plan::insert_messages(c, ws, salt).await?;

    // Denormalised contact figures, consistent with the threads.
    progress(SeedProgress::Step("figures"));
    exec(
        c,
        "UPDATE contacts ct SET first_contacted_at = s.first_at, last_contacted_at = s.last_at
         FROM (SELECT t.contact_id, min(t.created_at) AS first_at, max(coalesce(t.last_message_at, t.created_at)) AS last_at
               FROM threads t WHERE t.workspace_id = $1 GROUP BY t.contact_id) s
         WHERE ct.workspace_id = $1 AND ct.id = s.contact_id",
        ws,
    )
    .await?;

    // Each thread's service window follows its contact's latest message, as inbound callbacks
    // keep it, so the demo's recent conversations can be answered with free text.
    exec(
        c,
        "UPDATE threads t SET latest_inbound_at = m.latest
         FROM (SELECT thread_id, max(created_at) AS latest FROM messages
               WHERE workspace_id = $1 AND direction = 'inbound' GROUP BY thread_id) m
         WHERE t.workspace_id = $1 AND t.id = m.thread_id",
        ws,
    )
    .await?;

    // A bulk load leaves the planner's statistics describing the tables as they were before, so
    // it would sort a whole channel's messages to return 25 (half a second) instead of walking the
    // index (a fraction of a millisecond) until autovacuum catches up; the replay below would read
    // each batch's messages with a scan of them all. Refreshed here, they count this
    // transaction's rows and are everyone's once it commits.
    progress(SeedProgress::Step("statistics"));
    diesel::sql_query("ANALYZE messages, threads, contacts, thread_labels").execute(c).await?;

    // The generator writes messages, not what each would have recorded: every thread's history is
    // replayed into its reports and its SLA.
    progress(SeedProgress::Step("reports"));
    replay::replay_threads(c, ws).await?;

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

/// `s_lines`: every line of [`conversations`], to join on by (language, topic, turn, side), also
/// folded into one integer `key`: language index × 1000 + (topic + 1) × 100 + turn × 2 + customer.
async fn conversation_lines(c: &mut AsyncPgConnection) -> diesel::QueryResult<()> {
    let rows = conversations::rows();
    let mut keys = Vec::new();
    let mut langs = Vec::new();
    let mut topics = Vec::new();
    let mut turns = Vec::new();
    let mut customer = Vec::new();
    let mut texts = Vec::new();
    for (lang, topic, turn, is_customer, text) in rows {
        let lang_i = conversations::LANGUAGES.iter().position(|l| l.code == lang).unwrap_or(0) as i32;
        keys.push(lang_i * 1000 + (topic + 1) * 100 + turn * 2 + i32::from(is_customer));
        langs.push(lang);
        topics.push(topic);
        turns.push(turn);
        customer.push(is_customer);
        texts.push(text);
    }
    diesel::sql_query(
        "CREATE TEMP TABLE s_lines ON COMMIT DROP AS
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::bool[], $5::text[], $6::int[]) AS l(lang, topic, turn, customer, text, key)",
    )
    .bind::<Array<Text>, _>(langs)
    .bind::<Array<Integer>, _>(topics)
    .bind::<Array<Integer>, _>(turns)
    .bind::<Array<Bool>, _>(customer)
    .bind::<Array<Text>, _>(texts)
    .bind::<Array<Integer>, _>(keys)
    .execute(c)
    .await?;
    diesel::sql_query("ANALYZE s_lines").execute(c).await?;
    Ok(())
}

/// The workspace's business hours (weekdays 9 to 6 in its time zone, unless it has set its own) and
/// three SLA policies, in force since before the first conversation: a tight one for the
/// conversations of VIP customers (a thread is created without labels, so it applies from the
/// cycles of threads that carry `vip`, when they come back), one in business hours for the UK
/// sales line, and the standard one for every other conversation. The first policy by id that
/// matches applies.
async fn sla_policies(c: &mut AsyncPgConnection, ws: i64, days: i32) -> diesel::QueryResult<()> {
    exec(
        c,
        r#"INSERT INTO business_hours (workspace_id, record)
           SELECT id, jsonb_build_object('timezone', time_zone, 'holidays', '[]'::jsonb, 'days',
                  '{"mon": [["09:00", "18:00"]], "tue": [["09:00", "18:00"]], "wed": [["09:00", "18:00"]],
                    "thu": [["09:00", "18:00"]], "fri": [["09:00", "18:00"]]}'::jsonb)
           FROM workspaces WHERE id = $1
           ON CONFLICT (workspace_id) DO NOTHING"#,
        ws,
    )
    .await?;
    // One statement each: their ids are their order.
    for policy in [
        "SELECT $1, 'VIP customers', 900, 1800, 14400, false, '{}'::bigint[], '{vip}'::text[]
         WHERE EXISTS (SELECT 1 FROM labels WHERE workspace_id = $1 AND name = 'vip')",
        "SELECT $1, 'Sales (UK), business hours', 1800, 3600, 57600, true, ARRAY[id], '{}'::text[]
         FROM channels WHERE workspace_id = $1 AND identifier = '+442079460958'",
        "SELECT $1, 'Standard', 3600, 14400, 172800, false, '{}'::bigint[], '{}'::text[]",
    ] {
        diesel::sql_query(format!(
            "INSERT INTO sla_policies (workspace_id, name, first_response_seconds, next_response_seconds,
                                       resolution_seconds, business_hours, channel_ids, labels, created_at)
             SELECT p.*, now() - make_interval(days => $2 + 1) FROM ({policy}) p"
        ))
        .bind::<BigInt, _>(ws)
        .bind::<Integer, _>(days)
        .execute(c)
        .await?;
    }
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
