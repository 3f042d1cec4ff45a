//! Erasure leaves no trace of the person in any column while every figure stays as it was.

use super::*;

#[derive(diesel::QueryableByName)]
struct Column {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Every `table.column` of text, json or array type in which `needle` occurs (case-insensitive).
async fn traces(app: &TestApp, needle: &str) -> Vec<String> {
    let mut conn = app.db.conn().await.expect("conn");
    let columns: Vec<Column> = diesel::sql_query(
        "SELECT table_name::text AS table_name, column_name::text AS column_name FROM information_schema.columns
         WHERE table_schema = 'public'
           AND (data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'tsvector'))
         ORDER BY 1, 2",
    )
    .load(&mut conn)
    .await
    .expect("columns");
    assert!(columns.len() > 40, "the scan sees the schema ({} columns)", columns.len());
    let mut found = Vec::new();
    for c in columns {
        let sql = format!(
            "SELECT count(*) AS n FROM \"{}\" WHERE strpos(lower(\"{}\"::text), lower($1)) > 0",
            c.table_name, c.column_name
        );
        let n: Count = diesel::sql_query(&sql).bind::<Text, _>(needle).get_result(&mut conn).await.expect("scan");
        if n.n > 0 {
            found.push(format!("{}.{} ({})", c.table_name, c.column_name, n.n));
        }
    }
    found
}

async fn tool(app: &TestApp, ws: i64, key: &str, name: &str, arguments: Value) -> Value {
    let res = app.post_json(&execute_path(ws), key, &json!({"tool": name, "arguments": arguments})).await;
    assert_eq!(res.status(), 200, "{name}");
    res.json::<Value>().await.expect("json")["result"].clone()
}

/// Every figure the person's data feeds: the overview, the channel analytics, the top countries
/// (the Analytics page's CSV) and the thread's counts.
async fn figures(app: &TestApp, ws: i64, key: &str, ch: i64, thread: &Value) -> Value {
    let countries = adapters_postgres::analytics::PgCountryStats::new(app.db.clone())
        .top_countries(WorkspaceId(ws), None, 30, time::OffsetDateTime::now_utc())
        .await
        .expect("countries")
        .map(|t| domain::analytics::csv::top_countries(&t));
    let (_, thread) = app.get_json(&format!("/v1/threads/{thread}"), key).await;
    let mut overview = tool(app, ws, key, "get_workspace_overview", json!({})).await;
    // The snapshot's own time is not a figure.
    if let Some(o) = overview.as_object_mut() {
        o.remove("generated_at");
    }
    json!({
        "overview": overview,
        "channel": tool(app, ws, key, "get_channel_analytics", json!({"channel_id": ch, "range": "30d"})).await,
        "countries": countries,
        "thread": thread,
    })
}

/// The sums of the count columns (contacts, inbound, sent, delivered, read, failed) of the top
/// countries CSV.
fn country_totals(csv: &Value) -> Vec<u64> {
    let mut totals = vec![0u64; 6];
    for line in csv.as_str().unwrap_or_default().lines().skip(1) {
        for (i, n) in line.split(',').skip(1).take(6).enumerate() {
            totals[i] += n.parse::<u64>().unwrap_or(0);
        }
    }
    totals
}

#[tokio::test]
async fn erasure_leaves_no_trace_of_the_person_and_every_figure_as_it_was() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    subscribe_all(&app, &key).await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let person = created(
        &app,
        &key,
        json!({"name": "Zebulon Quixote", "phone": "+14155550199", "email": "zebulon.q@example.org",
               "country": "PT", "language": "pt-PT", "note": "Allergic to hazelnuts"}),
    )
    .await;
    let keep = created(&app, &key, json!({"name": "Keeper Kim", "phone": "+14155550177", "country": "PT"})).await;
    let mut threads = Vec::new();
    for (to, text) in [("+14155550199", "Zq-secret parcel to Rua Augusta 12"), ("+14155550177", "Kept hello")] {
        let m: Value = app
            .post_json(
                "/v1/messages",
                &key,
                &json!({"channel_id": ch, "content": text, "to": to, "template": crate::helpers::test_template()}),
            )
            .await
            .json()
            .await
            .expect("json");
        threads.push(m["thread_id"].clone());
    }
    // Delivered, read and inbound messages, so that every figure counts something.
    exec(
        &app,
        "UPDATE messages SET status = CASE WHEN id % 2 = 0 THEN 'read' ELSE 'delivered' END WHERE workspace_id = $1",
        ws.id,
    )
    .await;
    exec(
        &app,
        &format!(
            "INSERT INTO messages (workspace_id, thread_id, channel_id, direction, sender_kind, content, status)
             VALUES ($1, {t}, {ch}, 'inbound', 'contact', 'Zq-secret reply: my door code is 4711', 'delivered'),
                    ($1, {k}, {ch}, 'inbound', 'contact', 'Kept reply', 'delivered')",
            t = threads[0],
            k = threads[1]
        ),
        ws.id,
    )
    .await;
    exec(&app, &format!("UPDATE threads SET unread_count = 1 WHERE workspace_id = $1 AND id = {}", threads[0]), ws.id)
        .await;
    let before = figures(&app, ws.id, &key, ch, &threads[0]).await;

    assert_eq!(delete(&app, &key, &person["id"]).await.status(), 204);

    // Gone from every endpoint and tool.
    let path = format!("/v1/contacts/{}", person["id"]);
    problem(app.authed(Method::GET, &path, &key).send().await.expect("request"), 404, "not_found").await;
    problem(patch(&app, &key, &person["id"], json!({"name": "Back"})).await, 404, "not_found").await;
    problem(delete(&app, &key, &person["id"]).await, 404, "not_found").await;
    assert_eq!(ids(&app, &key, "").await, [keep["id"].as_i64().expect("id")]);
    assert_eq!(ids(&app, &key, "phone=%2B14155550199").await, Vec::<i64>::new());
    let lookup = tool(&app, ws.id, &key, "get_contact_analytics", json!({"phone_number": "+14155550199"})).await;
    assert_eq!(lookup["contact"], Value::Null, "{lookup}");

    // No trace of the person anywhere in the database.
    for needle in
        ["Zebulon", "Quixote", "+14155550199", "4155550199", "zebulon.q@example.org", "Zq-secret", "hazelnuts"]
    {
        assert_eq!(traces(&app, needle).await, Vec::<String>::new(), "{needle}");
    }
    // The other person's data is untouched, and so is every figure.
    assert_eq!(traces(&app, "Kept reply").await.len(), 1);
    // `country` is the person's data too: their counts move from `PT` to `unknown`, the totals
    // stay.
    let mut after = figures(&app, ws.id, &key, ch, &threads[0]).await;
    let mut before = before;
    let (countries_before, countries_after) = (before["countries"].take(), after["countries"].take());
    assert_eq!(after, before);
    assert_eq!(country_totals(&countries_after), country_totals(&countries_before));
    assert!(countries_after.as_str().is_some_and(|c| c.contains("\r\nunknown,1,")), "{countries_after}");

    // contact.deleted carries the id only; the earlier contact events keep nothing but the id.
    let events = events(&app, ws.id).await;
    let mine: Vec<&(String, Value)> =
        events.iter().filter(|(t, d)| t.starts_with("contact.") && d["id"] == person["id"]).collect();
    assert_eq!(
        mine.last().map(|(t, d)| (t.as_str(), d.clone())),
        Some(("contact.deleted", json!({"id": person["id"]})))
    );
    assert!(mine.iter().all(|(_, d)| *d == json!({"id": person["id"]})), "{mine:?}");

    // The same phone afterwards is a new person.
    let again: Value = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hello again", "to": "+14155550199", "template": crate::helpers::test_template()}))
        .await
        .json()
        .await
        .expect("json");
    assert_ne!(again["thread_id"], threads[0]);
    let found = ids(&app, &key, "phone=%2B14155550199").await;
    assert_eq!(found.len(), 1);
    assert_ne!(json!(found[0]), person["id"]);
}
