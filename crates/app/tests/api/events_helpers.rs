//! Shared by the events tests: reading the whole feed, and the payload schemas of the OpenAPI
//! document's `webhooks`, compiled with the `jsonschema` crate.

#![allow(dead_code)]

use std::collections::HashMap;

use serde_json::Value;

use crate::helpers::TestApp;

/// Every event of the feed after `cursor` (following `next_cursor` until a page is empty), and
/// the cursor to resume from.
pub async fn feed_from(app: &TestApp, key: &str, cursor: Option<&str>, query: &str) -> (Vec<Value>, String) {
    let mut out = Vec::new();
    let mut cursor = cursor.map(str::to_owned);
    loop {
        let mut path = format!("/v1/events?limit=100{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let (status, page) = app.get_json(&path, key).await;
        assert_eq!(status, 200, "{page}");
        let next = page["next_cursor"].as_str().expect("next_cursor is never null").to_owned();
        let data = page["data"].as_array().cloned().unwrap_or_default();
        cursor = Some(next.clone());
        if data.is_empty() {
            return (out, next);
        }
        out.extend(data);
    }
}

/// How many events the workspace of `key` has stored (committed), samples aside.
async fn stored(app: &TestApp, key: &str) -> i64 {
    use diesel_async::RunQueryDsl;
    use sha2::Digest;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = app.db.conn().await.expect("conn");
    let n: N = diesel::sql_query(
        "SELECT count(*) AS n FROM webhook_events
         WHERE NOT sample AND workspace_id = (SELECT workspace_id FROM api_keys WHERE key_digest = $1)",
    )
    .bind::<diesel::sql_types::Bytea, _>(sha2::Sha256::digest(key.as_bytes()).to_vec())
    .get_result(&mut conn)
    .await
    .expect("count");
    n.n
}

/// Every event of the workspace so far. The feed shows an event once every transaction older
/// than its own has ended (anywhere on the server, and the tests share one): this waits until
/// it shows every committed one.
pub async fn feed(app: &TestApp, key: &str) -> Vec<Value> {
    let want = stored(app, key).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let (events, _) = feed_from(app, key, None, "").await;
        if events.len() as i64 >= want || std::time::Instant::now() > deadline {
            return events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `schema` with `#/components/schemas/…` references replaced by what they name.
fn inline(schema: &Value, components: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            if let Some(name) =
                map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                return inline(&components[name], components);
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), inline(v, components))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, components)).collect()),
        other => other.clone(),
    }
}

/// The payload validators of `/v1/openapi.json`'s `webhooks`, by event type.
pub async fn webhook_validators(app: &TestApp) -> HashMap<String, jsonschema::Validator> {
    let doc: Value = app.get("/v1/openapi.json").await.json().await.expect("openapi json");
    let components = doc["components"]["schemas"].clone();
    let hooks = doc["webhooks"].as_object().expect("a top-level webhooks object");
    hooks
        .iter()
        .map(|(name, item)| {
            let schema = &item["post"]["requestBody"]["content"]["application/json"]["schema"];
            assert!(schema.is_object(), "{name} has a payload schema");
            let schema = inline(schema, &components);
            (name.clone(), jsonschema::validator_for(&schema).expect("a valid JSON Schema"))
        })
        .collect()
}

/// Panics with every schema error of `event` (a feed record or a delivered body).
pub fn assert_valid(validators: &HashMap<String, jsonschema::Validator>, event: &Value) {
    let kind = event["type"].as_str().expect("type");
    let v = validators.get(kind).unwrap_or_else(|| panic!("no schema for {kind}"));
    let mut body = event.clone();
    if let Some(m) = body.as_object_mut() {
        m.remove("id");
    }
    let errors: Vec<String> = v.iter_errors(&body).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{kind} does not match its schema: {errors:?}\n{body}");
}
