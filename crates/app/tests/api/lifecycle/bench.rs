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
    patch(&app, &key, &format!("/v1/teams/{team}"), json!({"assignment": {"mode": "balanced", "capacity": 10000}})).await;
    patch(&app, &key, &format!("/v1/channels/{ch}"), json!({"default_team_id": team})).await;
    let mut conn = app.db.conn().await.expect("conn");
    let contact: Id = diesel::sql_query("INSERT INTO contacts (workspace_id, phone) VALUES ($1, '+14155550199') RETURNING id")
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
    let mut spent = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (ws_id, channel, contact_id) = (ws.id, ch, contact.id);
        let took = conn
            .transaction::<Duration, diesel::result::Error, _>(|c| {
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
                    Ok(started.elapsed())
                }
                .scope_boxed()
            })
            .await
            .expect("transaction");
        spent.push(took);
    }
    spent.sort();
    let pct = |p: usize| spent[(rounds * p / 100).min(rounds - 1)];
    let mean = spent.iter().sum::<Duration>() / u32::try_from(rounds).expect("rounds");
    println!("assignment per new thread: mean {mean:?}, p50 {:?}, p95 {:?}, p99 {:?}", pct(50), pct(95), pct(99));
}
