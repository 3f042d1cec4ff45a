//! Threads and their messages, planned together so each thread is written once, with its
//! figures (`last_message_at`, `unread_count`) already in it.
//!
//! A message's random draws are a hash of (thread number, position, salt) rather than
//! `random()`, so the thread plan can add up a thread's gaps before any message exists and the
//! message statement draws the very same numbers again. The gap and the scale are written once
//! here ([`gap`], [`draw`]) and used by both statements, so a thread's `last_message_at` is the
//! bit-exact `created_at` of its last message, and no second pass reads the messages back.

use diesel::sql_types::{Array, BigInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A uniform draw in `[0, 1)` for message `seq` of thread `n`; `which` tells the draws of one
/// message apart. `$2` is the salt, taken from the seed.
fn draw(n: &str, seq: &str, which: u8) -> String {
    format!("((hashint8extended(({n} << 20) | {seq}, $2 + {which}) & 4503599627370495)::float8 / 4503599627370496.0)")
}

/// Whether message `seq` of thread `n` comes after a day or two of silence (the customer came
/// back, or the team could only answer with a template). The message that reopens a resolved
/// thread (`{t}.reopen_seq`) always does.
fn late(t: &str, n: &str, seq: &str) -> String {
    format!("({seq} > 0 AND ({} > 0.97 OR {seq} = coalesce({t}.reopen_seq, -1)))", draw(n, seq, 2))
}

/// The share of the resolved threads of seven messages or more that the customer reopened once.
const REOPENED: f64 = 0.12;

/// Seconds since the previous message of the thread (log-uniform, so mostly short): an AI agent
/// answers in under a minute, a person in 1 min to 3 h, the customer writes back in 20 s to 2 h.
/// `t` is the thread's row (`assignee_type`, `handover_status`).
fn gap(t: &str, n: &str, seq: &str) -> String {
    let r1 = draw(n, seq, 1);
    format!(
        "(CASE WHEN {seq} = 0 THEN 0::float8
              WHEN {late} THEN 72000 + {r1} * 108000
              WHEN {seq} % 2 = 1 AND {t}.assignee_type = 'ai_agent' AND {t}.handover_status <> 'human' THEN 3 + {r1} * 40
              WHEN {seq} % 2 = 1 THEN 60 * exp({r1} * ln(180))
              ELSE 20 * exp({r1} * ln(360)) END)",
        late = late(t, n, seq)
    )
}

/// `s_threads`: every thread to write, numbered `n` in the order it started, with its reserved id,
/// its language's index `lang_i` in [`super::conversations::LANGUAGES`] (English for any other),
/// its share `k` of the messages, the member who writes its team's answers (`responder_user_id`:
/// its assignee, or for a team or an AI agent handing over, a member), for one resolved thread in
/// a few the position of the customer's message that reopened it (`reopen_seq`, see
/// [`insert_messages`]), and what its messages will add up to: `scale` (a conversation
/// that would run past now is compressed into the time since it started, so today holds only
/// what its hours can), `last_at` and `unread`.
pub(super) async fn plan_threads(
    c: &mut AsyncPgConnection,
    ws: i64,
    salt: i64,
    threads: i64,
    messages: i64,
) -> diesel::QueryResult<()> {
    // `+ 0 * g` ties each LATERAL subquery to its row: an uncorrelated one is evaluated once for
    // the whole statement, which would give every row the same random values. Threads start in
    // business hours (s_hours); statuses follow age: recent conversations are still open, old
    // ones mostly resolved. Each thread's share of the messages: at least one, the rest by a
    // skewed weight (most conversations are short, a few run long), adding up to `messages`.
    let sql = format!(
        "CREATE TEMP TABLE s_threads ON COMMIT DROP AS
         WITH r AS (
             SELECT pick.g, x.r1, x.kind, x.ch_n, x.created_at
             FROM (
                 -- Each thread's hour: random points on the running sum of the hours' weights, sorted
                 -- together with the hours' lower bounds, each point taking the last bound before it
                 -- (one sort, instead of a search per thread).
                 SELECT g, max(i) OVER (ORDER BY v, i NULLS LAST) AS i
                 FROM (SELECT g, random() * (SELECT max(cum) FROM s_hours) AS v, NULL::bigint AS i FROM generate_series(0, $3 - 1) g
                       UNION ALL SELECT NULL, cum - w, i FROM s_hours) p
             ) pick
             JOIN s_hours h ON h.i = pick.i
             CROSS JOIN LATERAL (SELECT random() + 0 * pick.g AS r1,
                 (ARRAY['user','user','user','team','team','ai_agent','ai_agent','ai_agent',NULL])[1 + floor(random() * 9)::int] AS kind,
                 floor(power(random(), 1.6) * (SELECT count(*) FROM s_channels))::bigint AS ch_n,
                 h.start + make_interval(secs => random() * h.passed * 3600) AS created_at) x
             WHERE pick.g IS NOT NULL),
         t AS (
             SELECT row_number() OVER (ORDER BY r.created_at, r.g) - 1 AS n, r.g, r.kind, r.created_at,
                    ct.id AS contact_id,
                    coalesce(array_position($5::text[], ct.language), 1) - 1 AS lang_i, ch.id AS channel_id,
                    CASE WHEN r.created_at > now() - interval '2 days'
                         THEN CASE WHEN r.r1 < 0.6 THEN 'open' WHEN r.r1 < 0.8 THEN 'pending' ELSE 'resolved' END
                         WHEN r.r1 < 0.12 THEN 'open' WHEN r.r1 < 0.2 THEN 'pending' ELSE 'resolved' END AS status,
                    floor(random() * 6)::int AS topic, -ln(1 - random()) - ln(1 - random()) AS w
             FROM r
             JOIN s_contacts sc ON sc.n = (r.g * 7919) % (SELECT count(*) FROM s_contacts)
             JOIN contacts ct ON ct.workspace_id = $1 AND ct.id = sc.id
             JOIN s_channels ch ON ch.n = r.ch_n),
         c AS (SELECT t.*, sum(w) OVER (ORDER BY n) AS cum_w, sum(w) OVER () AS total_w, count(*) OVER () AS total_n FROM t),
         b AS (SELECT c.*, CASE WHEN $4 >= total_n THEN 1 ELSE 0 END AS base,
                      $4 - CASE WHEN $4 >= total_n THEN total_n ELSE 0 END AS spread FROM c),
         a AS (SELECT b.*, CASE WHEN n = total_n - 1 THEN spread ELSE least(spread, floor(cum_w / total_w * spread)::bigint) END AS upto FROM b),
         p AS (
             SELECT a.n, a.contact_id, a.channel_id, a.status, a.created_at, a.lang_i, a.topic, a.kind AS assignee_type,
                    CASE WHEN a.kind = 'user' THEN (SELECT id FROM s_members WHERE n = a.g % (SELECT count(*) FROM s_members)) END AS assignee_user_id,
                    CASE WHEN a.kind = 'team' THEN (SELECT id FROM s_teams WHERE n = a.g % (SELECT count(*) FROM s_teams)) END AS assignee_team_id,
                    CASE WHEN a.kind = 'ai_agent' THEN (SELECT id FROM s_agents WHERE n = a.g % (SELECT count(*) FROM s_agents)) END AS assignee_ai_agent_id,
                    CASE WHEN a.kind = 'ai_agent' THEN (ARRAY['ai','ai','requested','human'])[1 + a.g % 4] END AS handover_status,
                    a.base + a.upto - coalesce(lag(a.upto) OVER (ORDER BY a.n), 0) AS k,
                    100000 + (482913 + a.n * 7919) % 900000 AS order_no,
                    0.9 * extract(epoch FROM now() - a.created_at)::float8 AS room
             FROM a),
         q AS (
             SELECT p.*,
                    CASE WHEN p.assignee_type = 'user' THEN p.assignee_user_id
                         WHEN p.assignee_type IN ('team', 'ai_agent')
                         THEN (SELECT id FROM s_members WHERE n = (p.n * 7 + 3) % (SELECT count(*) FROM s_members)) END
                        AS responder_user_id,
                    -- An exchange after the first two and before the last: see `insert_messages`.
                    CASE WHEN p.status = 'resolved' AND p.k >= 7 AND random() < {reopened}
                         THEN 2 * (2 + floor(random() * ((p.k + 1) / 2 - 3))::bigint) END AS reopen_seq
             FROM p),
         f AS (
             SELECT q.*, (SELECT sum({gap}) FROM generate_series(0, q.k - 1) s(seq)) AS total,
                    q.k % 2 = 1 AND q.status <> 'resolved' AND {r3_last} >= 0.5 AS unread_last
             FROM q),
         s AS (SELECT f.*, CASE WHEN f.total > f.room THEN f.room / f.total ELSE 1 END AS scale FROM f ORDER BY f.n)
         -- Ids taken in the order the threads started (the subquery is sorted, so the sequence is
         -- read row by row in that order).
         SELECT nextval(pg_get_serial_sequence('threads', 'id')) AS id, s.*,
                CASE WHEN s.k > 0 THEN s.created_at + make_interval(secs => s.total * s.scale) END AS last_at,
                CASE WHEN s.unread_last THEN 1 ELSE 0 END AS unread
         FROM s",
        gap = gap("q", "q.n", "s.seq"),
        r3_last = draw("q.n", "(q.k - 1)", 3),
        reopened = REOPENED,
    );
    diesel::sql_query(sql)
        .bind::<BigInt, _>(ws)
        .bind::<BigInt, _>(salt)
        .bind::<BigInt, _>(threads)
        .bind::<BigInt, _>(messages)
        .bind::<Array<Text>, _>(super::conversations::LANGUAGES.iter().map(|l| l.code).collect::<Vec<_>>())
        .execute(c)
        .await?;
    diesel::sql_query("CREATE INDEX ON s_threads (n)").execute(c).await?;
    diesel::sql_query("ANALYZE s_threads").execute(c).await?;
    Ok(())
}

/// Writes the planned threads, figures included, in the order they started, each with the team
/// whose queue it came through.
pub(super) async fn insert_threads(c: &mut AsyncPgConnection, ws: i64) -> diesel::QueryResult<usize> {
    diesel::sql_query(
        "INSERT INTO threads (id, workspace_id, contact_id, channel_id, status, unread_count, assignee_type, assignee_user_id,
                              assignee_team_id, assignee_ai_agent_id, handover_status, last_message_at, created_at, updated_at,
                              team_id)
         OVERRIDING SYSTEM VALUE
         SELECT id, $1, contact_id, channel_id, status, unread, assignee_type, assignee_user_id, assignee_team_id,
                assignee_ai_agent_id, handover_status, last_at, created_at, coalesce(last_at, created_at),
                -- The team whose queue the thread came through: the assigned team, or for a person
                -- one of the teams (the reports' team figures).
                CASE WHEN assignee_type = 'team' THEN assignee_team_id
                     WHEN assignee_type = 'user' THEN (SELECT id FROM s_teams WHERE s_teams.n = s_threads.n % (SELECT count(*) FROM s_teams)) END
         FROM s_threads ORDER BY n",
    )
    .bind::<BigInt, _>(ws)
    .execute(c)
    .await
}

/// Messages, as conversations: the customer writes (even positions), the team answers (odd
/// positions: a person, the thread's AI agent, or an approved template when WhatsApp's 24-hour
/// window has closed and to close a resolved thread), each message a gap after the previous one.
/// Inserted in time order so message ids rise with `created_at` across the workspace, as they do
/// when messages arrive one by one.
pub(super) async fn insert_messages(c: &mut AsyncPgConnection, ws: i64, salt: i64) -> diesel::QueryResult<usize> {
    let r2 = draw("t.n", "s.seq", 2);
    let r3 = draw("t.n", "s.seq", 3);
    let sql = format!(
        "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, author_user_id,
                               author_ai_agent_id, content, status, queued_at, sent_at, delivered_at, read_at,
                               failed_at, failure_reason, platform_message_id, created_at, updated_at)
         SELECT $1, m.thread_id, m.channel_id, m.direction, m.sender_kind,
                CASE WHEN m.sender_kind = 'human' THEN m.responder_user_id END,
                CASE WHEN m.sender_kind = 'ai' THEN m.assignee_ai_agent_id END,
                replace(l.text, '{{order}}', m.order_no::text),
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
             SELECT g.*, g.created_at + make_interval(secs => sum(g.gap) OVER (PARTITION BY g.tn ORDER BY g.seq) * g.scale) AS at
             FROM (
                 SELECT t.n AS tn, t.id AS thread_id, t.channel_id, t.created_at, t.responder_user_id, t.scale,
                        t.assignee_ai_agent_id, t.lang_i, t.order_no, s.seq, x.r3, {gap} AS gap,
                        CASE WHEN s.seq % 2 = 0 THEN 'inbound' ELSE 'outbound' END AS direction,
                        CASE WHEN s.seq % 2 = 0 THEN 'contact'
                             WHEN x.late OR x.closing AND x.r2 < 0.5 THEN 'template'
                             WHEN t.assignee_type = 'ai_agent' AND (s.seq < 4 OR t.handover_status <> 'human') THEN 'ai'
                             ELSE 'human' END AS sender_kind,
                        CASE WHEN s.seq % 2 = 0 THEN CASE WHEN s.seq < t.k - 1 OR t.status = 'resolved' OR x.r3 < 0.5 THEN 'read' ELSE 'delivered' END
                             WHEN x.r3 < 0.45 THEN 'read' WHEN x.r3 < 0.72 THEN 'delivered' WHEN x.r3 < 0.88 THEN 'sent'
                             WHEN x.r3 < 0.96 THEN 'failed' ELSE 'queued' END AS status,
                        -- Which line: the topic's turns 0-2, then the middle exchanges 3-6; templates are topic -1.
                        -- A reopened thread was resolved after thanks and goodbye; the customer came
                        -- back with one more question (middle exchange 4), and the exchange after it
                        -- is never that one again.
                        CASE WHEN s.seq % 2 = 1 AND x.late THEN -1
                             WHEN s.seq % 2 = 1 AND x.closing AND x.r2 < 0.5 THEN -1 ELSE t.topic END AS line_topic,
                        CASE WHEN s.seq % 2 = 1 AND x.late THEN 0
                             WHEN s.seq % 2 = 1 AND x.closing AND x.r2 < 0.5 THEN 1
                             WHEN s.seq / 2 = t.reopen_seq / 2 - 1 THEN 2
                             WHEN s.seq / 2 = t.reopen_seq / 2 THEN 4
                             WHEN s.seq / 2 < 2 THEN s.seq / 2
                             WHEN x.closing OR (s.seq % 2 = 0 AND s.seq / 2 = (t.k + 1) / 2 - 1 AND t.status = 'resolved') THEN 2
                             WHEN s.seq / 2 = t.reopen_seq / 2 + 1 AND (s.seq / 2 - 2) % 4 = 1 THEN 3
                             ELSE 3 + (s.seq / 2 - 2) % 4 END AS turn
                 FROM s_threads t
                 CROSS JOIN LATERAL generate_series(0, t.k - 1) s(seq)
                 CROSS JOIN LATERAL (SELECT {r2} AS r2, {r3} AS r3, {late} AS late,
                     -- The team's last reply in a resolved thread of three exchanges or more.
                     s.seq % 2 = 1 AND s.seq = t.k - 1 AND s.seq >= 5 AND t.status = 'resolved' AS closing) x
             ) g
         ) m
         -- One integer key (see `conversation_lines`): with the four columns the planner would
         -- price hashing s_lines as if every probe walked a long bucket and sort the million rows
         -- for a merge join instead.
         JOIN s_lines l ON l.key = m.lang_i * 1000 + (m.line_topic + 1) * 100 + m.turn * 2 + (m.seq % 2 = 0)::int
         ORDER BY m.at, m.tn, m.seq",
        gap = gap("t", "t.n", "s.seq"),
        late = late("t", "t.n", "s.seq"),
    );
    diesel::sql_query(sql).bind::<BigInt, _>(ws).bind::<BigInt, _>(salt).execute(c).await
}
