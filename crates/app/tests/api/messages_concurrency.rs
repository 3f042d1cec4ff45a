//! Many clients sending at once: one contact and one thread per recipient, every send accepted,
//! and the rollups and events exactly right afterwards (concurrent first sends to one address race
//! to create its contact and thread).

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};

use crate::helpers::TestApp;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(app: &TestApp, sql: &str, binds: &[i64]) -> i64 {
    let mut conn = app.db.conn().await.expect("conn");
    let mut q = diesel::sql_query(sql).into_boxed::<diesel::pg::Pg>();
    for b in binds {
        q = q.bind::<BigInt, _>(*b);
    }
    q.get_result::<Count>(&mut conn).await.expect(sql).n
}

async fn spawn() -> TestApp {
    TestApp::spawn_with(|s| {
        s.database.pool_size = 8;
        s.webhooks.workers = 0;
    })
    .await
}

/// Sends every body at once; all must be accepted. Returns the messages.
async fn send_all(app: &TestApp, key: &str, bodies: Vec<Value>) -> Vec<Value> {
    let sends = bodies.into_iter().map(|b| {
        let req = app.authed(reqwest::Method::POST, "/v1/messages", key).json(&b);
        async move {
            let res = req.send().await.expect("request");
            let status = res.status().as_u16();
            let body: Value = res.json().await.unwrap_or(Value::Null);
            assert_eq!(status, 201, "every concurrent send is accepted: {body}");
            body
        }
    });
    futures_util::future::join_all(sends).await
}

#[derive(QueryableByName)]
struct Event {
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = Text)]
    payload: String,
}

async fn events(app: &TestApp, ws: i64) -> Vec<(String, Value)> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Event> =
        diesel::sql_query("SELECT event_type, payload FROM webhook_events WHERE workspace_id = $1 ORDER BY id")
            .bind::<BigInt, _>(ws)
            .load(&mut conn)
            .await
            .expect("events");
    rows.into_iter()
        .map(|e| (e.event_type, serde_json::from_str::<Value>(&e.payload).expect("payload")["data"].clone()))
        .collect()
}

#[tokio::test]
async fn concurrent_sends_to_a_new_recipient_make_one_contact_and_one_thread() {
    let app = spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = app
        .post_json(
            "/v1/webhooks",
            &key,
            &json!({"url": "https://hooks.example.com/wms",
            "events": ["message.created", "thread.created", "contact.created"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;

    // 64 first sends to a number nobody has written to, all at once.
    let first = send_all(
        &app,
        &key,
        (0..64).map(|i| json!({"channel_id": ch, "content": format!("first {i}"), "to": "+14155550199", "template": crate::helpers::test_template()})).collect(),
    )
    .await;
    let thread = first[0]["thread_id"].as_i64().expect("thread");
    assert!(first.iter().all(|m| m["thread_id"] == thread), "one thread for one recipient");
    // The contact answers (its window opens); then 64 replies to that thread at once, mixed with
    // 16 more sends by number.
    app.contact_wrote(ch, "+14155550199").await;
    let mut bodies: Vec<Value> =
        (0..64).map(|i| json!({"channel_id": ch, "content": format!("reply {i}"), "thread_id": thread})).collect();
    bodies.extend((0..16).map(|i| json!({"channel_id": ch, "content": format!("again {i}"), "to": "+1 415 555 0199", "template": crate::helpers::test_template()})));
    let second = send_all(&app, &key, bodies).await;
    assert!(second.iter().all(|m| m["thread_id"] == thread));

    let contacts = count(&app, "SELECT count(*) AS n FROM contacts WHERE workspace_id = $1", &[ws.id]).await;
    let threads = count(&app, "SELECT count(*) AS n FROM threads WHERE workspace_id = $1", &[ws.id]).await;
    let messages =
        count(&app, "SELECT count(*) AS n FROM messages WHERE workspace_id = $1 AND thread_id = $2", &[ws.id, thread])
            .await;
    assert_eq!((contacts, threads, messages), (1, 1, 145), "144 sent and the contact's one");
    // The thread's activity is its newest message's.
    let stale = count(
        &app,
        "SELECT count(*) AS n FROM threads t WHERE t.id = $1
           AND t.last_message_at IS DISTINCT FROM (SELECT max(created_at) FROM messages WHERE thread_id = t.id)",
        &[thread],
    )
    .await;
    assert_eq!(stale, 0, "last_message_at is the newest message's time");
    // The overview rollup: one open thread.
    let open = count(
        &app,
        "SELECT coalesce(sum(threads), 0)::bigint AS n FROM thread_status_stats WHERE workspace_id = $1 AND status = 'open'",
        &[ws.id],
    )
    .await;
    assert_eq!(open, 1);

    // Exactly one event per change: one contact, one thread, one per message, each message once.
    let evs = events(&app, ws.id).await;
    let of = |t: &str| evs.iter().filter(|(ty, _)| ty == t).map(|(_, d)| d.clone()).collect::<Vec<_>>();
    assert_eq!((of("contact.created").len(), of("thread.created").len()), (1, 1));
    let mut announced: Vec<i64> = of("message.created")
        .iter()
        .filter(|d| d["direction"] == "outbound")
        .map(|d| d["id"].as_i64().expect("id"))
        .collect();
    let mut accepted: Vec<i64> = first.iter().chain(&second).map(|m| m["id"].as_i64().expect("id")).collect();
    announced.sort_unstable();
    accepted.sort_unstable();
    assert_eq!(announced, accepted);
    // Each event's data is the record the API answered.
    for m in first.iter().chain(&second) {
        assert!(of("message.created").contains(m), "event for {m}");
    }
    // The contact and thread are announced before any of their messages.
    let position = |t: &str| evs.iter().position(|(ty, _)| ty == t).expect("event");
    assert!(position("contact.created") < position("thread.created"));
    assert!(position("thread.created") < position("message.created"));

    // The analytics rollup counts every message once when they leave.
    {
        let mut conn = app.db.conn().await.expect("conn");
        diesel::sql_query("UPDATE messages SET status = 'sent', sent_at = now() WHERE workspace_id = $1")
            .bind::<BigInt, _>(ws.id)
            .execute(&mut conn)
            .await
            .expect("sent");
    }
    let sent = count(
        &app,
        "SELECT coalesce(sum(sent), 0)::bigint AS n FROM message_daily_stats WHERE workspace_id = $1 AND channel_id = $2",
        &[ws.id, ch],
    )
    .await;
    assert_eq!(sent, 144);
}

#[tokio::test]
async fn concurrent_sends_to_many_new_recipients_make_one_contact_each() {
    let app = spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550103", "active").await;
    // 8 recipients, 8 concurrent first sends (templates: a new recipient's window is closed) each,
    // interleaved.
    let bodies = (0..64)
        .map(|i| json!({"channel_id": ch, "content": format!("hi {i}"), "to": format!("+141555570{:02}", i % 8), "template": crate::helpers::test_template()}))
        .collect();
    let sent = send_all(&app, &key, bodies).await;
    for r in 0..8 {
        let threads: Vec<&Value> = sent.iter().skip(r).step_by(8).map(|m| &m["thread_id"]).collect();
        assert!(threads.iter().all(|t| *t == threads[0]), "recipient {r} has one thread");
    }
    let contacts = count(&app, "SELECT count(*) AS n FROM contacts WHERE workspace_id = $1", &[ws.id]).await;
    let threads = count(&app, "SELECT count(*) AS n FROM threads WHERE workspace_id = $1", &[ws.id]).await;
    let messages = count(&app, "SELECT count(*) AS n FROM messages WHERE workspace_id = $1", &[ws.id]).await;
    assert_eq!((contacts, threads, messages), (8, 8, 64));
}

#[tokio::test]
async fn concurrent_sends_each_to_a_new_recipient_make_exactly_their_contacts_threads_and_events() {
    let app = spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = app
        .post_json(
            "/v1/webhooks",
            &key,
            &json!({"url": "https://hooks.example.com/wms",
            "events": ["message.created", "thread.created", "contact.created"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
    let ch = app.channel(&key, "whatsapp", "+14155550102", "active").await;
    let number = |i: usize| format!("+1415556{:04}", i);

    // 96 sends at once, each to a number nobody has written to: they share transactions, so
    // their contacts and threads are created together.
    let first = send_all(
        &app,
        &key,
        (0..96).map(|i| json!({"channel_id": ch, "content": format!("hello {i}"), "to": number(i), "template": crate::helpers::test_template()})).collect(),
    )
    .await;
    let mut threads: Vec<i64> = first.iter().map(|m| m["thread_id"].as_i64().expect("thread")).collect();
    let by_recipient = threads.clone();
    threads.sort_unstable();
    threads.dedup();
    assert_eq!(threads.len(), 96, "one thread per recipient");

    // Then, all at once: a second send to each number (in another spelling) and a reply to each
    // thread, so known and new recipients and threads mix in the same groups, with 32 new numbers.
    let mut bodies: Vec<Value> = (0..96)
        .map(|i| json!({"channel_id": ch, "content": format!("again {i}"), "to": number(i).replacen("+1", "+1 ", 1), "template": crate::helpers::test_template()}))
        .collect();
    bodies.extend(
        by_recipient.iter().map(|t| json!({"channel_id": ch, "content": format!("reply in {t}"), "thread_id": t, "template": crate::helpers::test_template()})),
    );
    bodies.extend((96..128).map(|i| json!({"channel_id": ch, "content": format!("late {i}"), "to": number(i), "template": crate::helpers::test_template()})));
    let second = send_all(&app, &key, bodies).await;
    for i in 0..96 {
        assert_eq!(second[i]["thread_id"], json!(by_recipient[i]), "a known number keeps its thread");
        assert_eq!(second[96 + i]["thread_id"], json!(by_recipient[i]));
    }

    let contacts = count(&app, "SELECT count(*) AS n FROM contacts WHERE workspace_id = $1", &[ws.id]).await;
    let threads = count(&app, "SELECT count(*) AS n FROM threads WHERE workspace_id = $1", &[ws.id]).await;
    let messages = count(&app, "SELECT count(*) AS n FROM messages WHERE workspace_id = $1", &[ws.id]).await;
    assert_eq!((contacts, threads, messages), (128, 128, 96 + 96 + 96 + 32));
    let per_contact = count(
        &app,
        "SELECT count(*) AS n FROM (SELECT contact_id FROM threads WHERE workspace_id = $1
           GROUP BY contact_id HAVING count(*) <> 1) t",
        &[ws.id],
    )
    .await;
    assert_eq!(per_contact, 0, "exactly one thread per contact");
    let stale = count(
        &app,
        "SELECT count(*) AS n FROM threads t WHERE t.workspace_id = $1
           AND t.last_message_at IS DISTINCT FROM (SELECT max(created_at) FROM messages WHERE thread_id = t.id)",
        &[ws.id],
    )
    .await;
    assert_eq!(stale, 0, "each thread's last_message_at is its newest message's time");
    let open = count(
        &app,
        "SELECT coalesce(sum(threads), 0)::bigint AS n FROM thread_status_stats WHERE workspace_id = $1 AND status = 'open'",
        &[ws.id],
    )
    .await;
    assert_eq!(open, 128, "the overview rollup counts every new thread once");

    // One event per change, each with the record the API answered, and each recipient's contact
    // and thread announced before its first message.
    let evs = events(&app, ws.id).await;
    let of = |t: &str| evs.iter().filter(|(ty, _)| ty == t).map(|(_, d)| d.clone()).collect::<Vec<_>>();
    assert_eq!((of("contact.created").len(), of("thread.created").len()), (128, 128));
    let mut contact_ids: Vec<i64> = of("contact.created").iter().map(|d| d["id"].as_i64().expect("id")).collect();
    contact_ids.sort_unstable();
    contact_ids.dedup();
    assert_eq!(contact_ids.len(), 128, "each contact announced once");
    let mut announced: Vec<i64> = of("message.created").iter().map(|d| d["id"].as_i64().expect("id")).collect();
    let mut accepted: Vec<i64> = first.iter().chain(&second).map(|m| m["id"].as_i64().expect("id")).collect();
    announced.sort_unstable();
    accepted.sort_unstable();
    assert_eq!(announced, accepted);
    for m in first.iter().chain(&second) {
        assert!(of("message.created").contains(m), "event for {m}");
    }
    for (i, t) in evs.iter().enumerate().filter(|(_, (ty, _))| ty == "thread.created") {
        let thread = &t.1;
        let contact = evs
            .iter()
            .position(|(ty, d)| ty == "contact.created" && d["id"] == thread["contact_id"])
            .expect("contact event");
        let message = evs
            .iter()
            .position(|(ty, d)| ty == "message.created" && d["thread_id"] == thread["id"])
            .expect("message event");
        assert!(contact < i && i < message, "contact, thread, then messages for {thread}");
        assert_eq!(thread["channel_id"], json!(ch));
        // The whole record as its first message leaves it (created with it, in one transaction).
        assert_eq!(thread["last_message_at"], thread["created_at"], "{thread}");
    }
}
