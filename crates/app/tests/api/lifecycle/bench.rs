//! The cost of automatic assignment per new thread (docs/benchmarks.md, "Assignment by team
//! policy"): `place_new_threads` alone, inside the transaction that creates the thread, on a
//! balanced team of 10 with 2,000 threads held. Run with
//! `cargo nextest run -p app --test api assignment_cost --run-ignored only --no-capture`.

use std::time::{Duration, Instant};

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::json;

use super::{add_agent, patch};
use crate::helpers::TestApp;

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The statements of one placement on a balanced team: the channel's team (locked), the thread's
/// placement, the members (locked), their loads, the waiting threads, the assignment with the turn (one statement).
const STATEMENTS: usize = 6;

#[tokio::test]
#[ignore = "a benchmark: run it on purpose"]
async fn assignment_cost_per_new_thread() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let mut members = Vec::new();
    for _ in 0..10 {
        members.push(add_agent(&app, ws.id).await);
    }
    let res = app.post_json("/v1/teams", &key, &json!({"name": "Bench", "member_ids": members})).await;
    let team = res.json::<serde_json::Value>().await.expect("json")["id"].as_i64().expect("id");
    patch(&app, &key, &format!("/v1/teams/{team}"), json!({"assignment": {"mode": "balanced", "capacity": 10000}}))
        .await;
    patch(&app, &key, &format!("/v1/channels/{ch}"), json!({"default_team_id": team})).await;
    let mut conn = app.db.conn().await.expect("conn");
    let contact: Id =
        diesel::sql_query("INSERT INTO contacts (workspace_id, phone) VALUES ($1, '+14155550199') RETURNING id")
            .bind::<BigInt, _>(ws.id)
            .get_result(&mut conn)
            .await
            .expect("contact");
    diesel::sql_query(
        "INSERT INTO threads (workspace_id, contact_id, channel_id, team_id, assignee_type, assignee_user_id)
         SELECT $1, $2, $3, $4, 'user', (SELECT user_id FROM team_members WHERE team_id = $4 ORDER BY user_id OFFSET n % 10 LIMIT 1)
         FROM generate_series(1, 2000) AS n",
    )
    .bind::<BigInt, _>(ws.id)
    .bind::<BigInt, _>(contact.id)
    .bind::<BigInt, _>(ch)
    .bind::<BigInt, _>(team)
    .execute(&mut conn)
    .await
    .expect("held threads");
    diesel::sql_query("ANALYZE threads").execute(&mut conn).await.expect("analyze");

    let rounds = 300;
    let (mut spent, mut trips) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        let (ws_id, channel, contact_id) = (ws.id, ch, contact.id);
        let took = conn
            .transaction::<(Duration, Duration), diesel::result::Error, _>(|c| {
                async move {
                    let t: Id = diesel::sql_query(
                        "INSERT INTO threads (workspace_id, contact_id, channel_id) VALUES ($1, $2, $3) RETURNING id",
                    )
                    .bind::<BigInt, _>(ws_id)
                    .bind::<BigInt, _>(contact_id)
                    .bind::<BigInt, _>(channel)
                    .get_result(c)
                    .await?;
                    let started = Instant::now();
                    let placed = adapters_postgres::assignment::place_new_threads(
                        c,
                        domain::workspace::WorkspaceId(ws_id),
                        channel,
                        &[t.id],
                        time::OffsetDateTime::now_utc(),
                    )
                    .await?;
                    assert!(placed);
                    let placing = started.elapsed();
                    // The same number of round trips doing nothing, at the same moment: what the
                    // client and the machine's load add to the seven statements of a placement.
                    let started = Instant::now();
                    for _ in 0..STATEMENTS {
                        diesel::sql_query("SELECT 1").execute(c).await?;
                    }
                    Ok((placing, started.elapsed()))
                }
                .scope_boxed()
            })
            .await
            .expect("transaction");
        spent.push(took.0);
        trips.push(took.1);
    }
    let report = |name: &str, mut v: Vec<Duration>| {
        v.sort();
        let pct = |p: usize| v[(rounds * p / 100).min(rounds - 1)];
        let mean = v.iter().sum::<Duration>() / u32::try_from(rounds).expect("rounds");
        println!("{name}: mean {mean:?}, p50 {:?}, p95 {:?}, p99 {:?}", pct(50), pct(95), pct(99));
    };
    let net: Vec<Duration> = spent.iter().zip(&trips).map(|(s, t)| s.saturating_sub(*t)).collect();
    report("assignment per new thread (wall)", spent);
    report(&format!("{STATEMENTS} empty round trips"), trips);
    report("assignment minus the round trips (PostgreSQL's work)", net);
    // The server's own time for each statement of a placement (EXPLAIN ANALYZE: planning, execution).
    #[derive(QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text)]
        #[diesel(column_name = "QUERY PLAN")]
        line: String,
    }
    let (mut unprepared, mut kept) = (0.0_f64, 0.0_f64);
    for sql in [
        format!("SELECT t.id AS team_id, t.assignment_mode AS mode, t.assignment_capacity AS capacity
                 FROM channels c JOIN teams t ON t.workspace_id = c.workspace_id AND t.id = c.default_team_id
                 WHERE c.workspace_id = {} AND c.id = {ch} FOR NO KEY UPDATE OF t", ws.id),
        format!("SELECT tm.user_id, wm.is_active, wm.availability, tm.last_assigned_at FROM team_members tm
                 JOIN workspace_members wm ON wm.workspace_id = tm.workspace_id AND wm.user_id = tm.user_id
                 WHERE tm.workspace_id = {} AND tm.team_id = {team} ORDER BY tm.user_id FOR NO KEY UPDATE OF wm", ws.id),
        format!("SELECT assignee_user_id, count(*) FROM threads WHERE workspace_id = {} AND assignee_user_id = ANY (ARRAY[{}]::bigint[])
                 AND status IN ('open', 'pending') GROUP BY assignee_user_id", ws.id,
                 members.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")),
        format!("SELECT id FROM threads WHERE team_id = {team} AND waiting_since IS NOT NULL AND workspace_id = {}
                 AND status IN ('open', 'pending') ORDER BY waiting_since, id LIMIT 200", ws.id),
        // The writes, on a thread made for the purpose (rolled back after).
        format!("UPDATE threads SET team_id = {team}, assignee_type = 'team', assignee_team_id = {team}, assignee_user_id = NULL, waiting_since = now()
                 WHERE workspace_id = {} AND id = (SELECT max(id) FROM threads)", ws.id),
        // The assignment and the member's turn: one statement.
        format!("WITH assigned AS (
                     UPDATE threads t SET assignee_type = 'user', assignee_user_id = v.user_id, assignee_team_id = NULL,
                            assignee_ai_agent_id = NULL, assigned_at = v.at, assignment_reason = v.reason, waiting_since = NULL,
                            updated_at = now()
                     FROM unnest(ARRAY[(SELECT max(id) FROM threads)], ARRAY[{m}::bigint], ARRAY['balanced'], ARRAY[now()])
                          AS v (id, user_id, reason, at)
                     WHERE t.workspace_id = {w} AND t.id = v.id)
                 UPDATE team_members tm SET last_assigned_at = v.at FROM unnest(ARRAY[{m}::bigint], ARRAY[now()]) AS v (user_id, at)
                 WHERE tm.workspace_id = {w} AND tm.team_id = {team} AND tm.user_id = v.user_id", m = members[0], w = ws.id),
    ] {
        // Planned on each call (as `diesel::sql_query` ran them), then prepared once and run again
        // (as `adapters_postgres::prepared::Prepared` runs them: the connection keeps the plan).
        diesel::sql_query("BEGIN").execute(&mut conn).await.expect("begin");
        let plan: Vec<Line> = diesel::sql_query(format!("EXPLAIN (ANALYZE, BUFFERS) {sql}")).load(&mut conn).await.expect("explain");
        diesel::sql_query(format!("PREPARE bench_stmt AS {sql}")).execute(&mut conn).await.expect("prepare");
        for _ in 0..6 {
            diesel::sql_query("EXECUTE bench_stmt").execute(&mut conn).await.expect("execute");
        }
        let prepared: Vec<Line> =
            diesel::sql_query("EXPLAIN (ANALYZE, BUFFERS) EXECUTE bench_stmt").load(&mut conn).await.expect("explain");
        diesel::sql_query("ROLLBACK").execute(&mut conn).await.expect("rollback");
        diesel::sql_query("DEALLOCATE ALL").execute(&mut conn).await.expect("deallocate");
        let ms = |lines: &[Line], what: &str| -> f64 {
            lines
                .iter()
                .find(|l| l.line.trim_start().starts_with(what))
                .and_then(|l| l.line.split(':').nth(1))
                .and_then(|v| v.trim().trim_end_matches(" ms").parse().ok())
                .unwrap_or(0.0)
        };
        let (p1, e1) = (ms(&plan, "Planning Time"), ms(&plan, "Execution Time"));
        let (p2, e2) = (ms(&prepared, "Planning Time"), ms(&prepared, "Execution Time"));
        unprepared += p1 + e1;
        kept += p2 + e2;
        println!("  planned each call: planning {p1:.3} ms, execution {e1:.3} ms; prepared: planning {p2:.3} ms, execution {e2:.3} ms");
    }
    println!("server time of the reads and writes above: {unprepared:.3} ms planned each call, {kept:.3} ms prepared");
}
