//! SLA policies: the policies' API with bad input and every kind of caller, due times
//! on the thread from the first matching policy, the clock stopped while snoozed or pending, hit
//! and missed, and `sla.breached` once per breach across instances and a restart.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use reqwest::Method;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::helpers::TestApp;

mod breach;
mod migration;
mod policies;
mod tracking;

/// Creates a policy; answers its record.
pub(crate) async fn policy(app: &TestApp, key: &str, body: Value) -> Value {
    let res = app.post_json("/v1/sla-policies", key, &body).await;
    assert_eq!(res.status(), 201, "{body}");
    res.json().await.expect("json")
}

/// The new thread of a new contact at `address` on `channel`, who wrote at `at` (platform time).
pub(crate) async fn contact_thread(app: &TestApp, key: &str, channel: i64, address: &str, at: OffsetDateTime) -> i64 {
    app.contact_wrote_at(channel, address, at).await;
    let (status, page) = app.get_json(&format!("/v1/threads?channel_id={channel}&limit=1"), key).await;
    assert_eq!(status, 200);
    page["data"][0]["id"].as_i64().expect("the newest thread")
}

/// The thread's record.
pub(crate) async fn thread(app: &TestApp, key: &str, id: i64) -> Value {
    let (status, t) = app.get_json(&format!("/v1/threads/{id}"), key).await;
    assert_eq!(status, 200);
    t
}

/// A reply on thread `id` by member `user` (through a key naming the sender).
pub(crate) async fn reply(app: &TestApp, key: &str, channel: i64, id: i64, user: i64) {
    let body =
        json!({"channel_id": channel, "thread_id": id, "content": "On it", "sender": {"type": "user", "id": user}});
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201, "{:?}", res.text().await);
}

/// Changes the thread's status.
pub(crate) async fn set_status(app: &TestApp, key: &str, id: i64, status: &str) {
    let res = app
        .authed(Method::PATCH, &format!("/v1/threads/{id}"), key)
        .json(&json!({"status": status}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
}

/// An RFC 3339 time of a record.
pub(crate) fn at(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().unwrap_or_else(|| panic!("a time, not {v}")), &Rfc3339).expect("rfc3339")
}

/// `at` to the second (platform timestamps are whole seconds).
pub(crate) fn whole(at: OffsetDateTime) -> OffsetDateTime {
    at.replace_nanosecond(0).expect("whole seconds")
}

pub(crate) fn ago(seconds: i64) -> OffsetDateTime {
    whole(OffsetDateTime::now_utc() - Duration::seconds(seconds))
}

#[derive(QueryableByName)]
struct Payload {
    #[diesel(sql_type = Text)]
    payload: String,
}

/// The `data` of every `sla.breached` recorded for thread `id`, oldest first.
pub(crate) async fn breaches(app: &TestApp, id: i64) -> Vec<Value> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Payload> = diesel::sql_query(
        "SELECT payload FROM webhook_events
         WHERE event_type = 'sla.breached' AND (payload::jsonb -> 'data' ->> 'id')::bigint = $1 ORDER BY id",
    )
    .bind::<BigInt, _>(id)
    .load(&mut conn)
    .await
    .expect("events");
    rows.into_iter().map(|r| serde_json::from_str::<Value>(&r.payload).expect("payload")["data"].clone()).collect()
}

/// A login token of `user` in `ws`.
pub(crate) async fn user_token(app: &TestApp, ws: i64, user: i64) -> String {
    let token = domain::auth::NewToken::generate(domain::auth::TokenKind::User, &app::platform::OsRandom);
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(
        "INSERT INTO user_tokens (workspace_id, user_id, token_digest, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(user)
    .bind::<diesel::sql_types::Bytea, _>(token.digest().0.to_vec())
    .execute(&mut conn)
    .await
    .expect("token");
    token.secret
}
