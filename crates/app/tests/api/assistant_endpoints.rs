//! The assistant's endpoints: who may call them, how invalid calls are refused, workspace
//! isolation, the read-only transaction and the capabilities manifest (`docs/assistant.md`).

use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::workspace::PlanTier;
use serde_json::{json, Value};

use crate::assistant_helpers::{execute_path, seed_demo_workspace, Demo};
use crate::helpers::{error_fields, problem, TestApp};

async fn post(app: &TestApp, ws: i64, token: Option<&str>, body: &Value) -> reqwest::Response {
    let mut req = app.client.post(app.url(&execute_path(ws))).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.expect("request")
}

#[tokio::test]
async fn only_members_of_the_workspace_may_call_the_tools() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let other = app.create_workspace(PlanTier::Advanced).await;
    let body = json!({"tool": "list_channels", "arguments": {}});
    let caps = format!("/workspaces/{}/co-admin/capabilities", ws.id);

    problem(post(&app, ws.id, None, &body).await, 401, "unauthenticated").await;
    problem(app.get(&caps).await, 401, "unauthenticated").await;
    // docs/contract.md: an API key needs `assistant:read` (a full-access key has it).
    let key = app.api_key_with_scopes(&ws, &["messages:read"]).await;
    let refused = problem(post(&app, ws.id, Some(&key), &body).await, 403, "insufficient_scope").await;
    assert!(refused["detail"].as_str().is_some_and(|d| d.contains("assistant:read")));
    problem(app.client.get(app.url(&caps)).bearer_auth(&key).send().await.expect("request"), 403, "insufficient_scope")
        .await;
    let assistant_key = app.api_key_with_scopes(&ws, &["assistant:read"]).await;
    assert_eq!(post(&app, ws.id, Some(&assistant_key), &body).await.status(), 200);
    assert_eq!(post(&app, ws.id, Some(&app.api_key(&ws).await), &body).await.status(), 200);
    let foreign_key = app.api_key(&other).await;
    problem(post(&app, ws.id, Some(&foreign_key), &body).await, 404, "not_found").await;
    let outsider = crate::credentials::admin_token(&app, &other).await;
    problem(post(&app, ws.id, Some(&outsider), &body).await, 404, "not_found").await;
    problem(app.client.get(app.url(&caps)).bearer_auth(&outsider).send().await.expect("request"), 404, "not_found")
        .await;

    // Any member, not only admins, and on any plan.
    let (email, password) = crate::credentials::add_member(&app, ws.id, "agent").await;
    let agent = crate::credentials::token_for(&app, &email, &password, Some(ws.id)).await;
    let res = post(&app, ws.id, Some(&agent), &body).await;
    assert_eq!(res.status(), 200);
    let free = app.create_workspace(PlanTier::Free).await;
    let token = crate::credentials::admin_token(&app, &free).await;
    assert_eq!(post(&app, free.id, Some(&token), &body).await.status(), 200);
}

#[tokio::test]
async fn invalid_calls_are_422_naming_the_tool_or_argument() {
    let demo = Demo::new().await;
    let cases = [
        (json!({"tool": "delete_everything", "arguments": {}}), "tool"),
        (json!({"arguments": {}}), "tool"),
        (json!({"tool": "list_channels", "arguments": {"colour": "red"}}), "arguments.colour"),
        (json!({"tool": "list_channels", "arguments": {"channel_type": "sms"}}), "arguments.channel_type"),
        (json!({"tool": "list_webhooks", "arguments": {"active_only": "yes"}}), "arguments.active_only"),
        (json!({"tool": "get_channel_analytics", "arguments": {"range": "365d"}}), "arguments.range"),
        (json!({"tool": "get_channel_analytics", "arguments": {"channel_id": "abc"}}), "arguments.channel_id"),
        (json!({"tool": "get_channel_analytics", "arguments": {"channel_id": 0}}), "arguments.channel_id"),
        (json!({"tool": "get_contact_analytics", "arguments": {"phone_number": "555-0101"}}), "arguments.phone_number"),
        (json!({"tool": "get_contact_analytics", "arguments": {"email": "not an email"}}), "arguments.email"),
        (
            json!({"tool": "get_contact_analytics", "arguments": {"email": "a@b.co", "range": "120d"}}),
            "arguments.range",
        ),
        (json!({"tool": "search_product_docs", "arguments": {}}), "arguments.query"),
        (json!({"tool": "search_product_docs", "arguments": {"query": "keys", "limit": 9}}), "arguments.limit"),
        (json!({"tool": "get_workspace_overview", "arguments": [1, 2]}), "arguments"),
    ];
    for (body, field) in cases {
        let p = problem(demo.execute_raw(&body).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body} → {p}");
        assert!(p["detail"].as_str().is_some_and(|d| d.contains(field)), "{p}");
    }
}

#[tokio::test]
async fn unknown_channel_ids_are_a_tool_error_not_a_server_error() {
    let demo = Demo::new().await;
    let body = json!({"tool": "get_channel_analytics", "arguments": {"channel_id": 987654321}});
    let p = problem(demo.execute_raw(&body).await, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["arguments.channel_id"]);
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("list_channels")));
}

#[tokio::test]
async fn a_member_of_one_workspace_gets_nothing_of_another() {
    let demo = Demo::new().await;
    let (b, b_token) = seed_demo_workspace(&demo.app).await;
    let ids = |sql: &'static str| {
        let app = &demo.app;
        async move { crate::assistant_helpers::sql_json(app, sql, b).await }
    };
    // B's channels, contacts and e-mails, asked for with A's credentials.
    let b_whatsapp =
        ids("SELECT min(id)::text AS j FROM channels WHERE workspace_id = $1 AND channel_type = 'whatsapp'").await;
    let b_messenger =
        ids("SELECT min(id)::text AS j FROM channels WHERE workspace_id = $1 AND channel_type = 'messenger'").await;
    for id in [b_whatsapp, b_messenger] {
        let body = json!({"tool": "get_channel_analytics", "arguments": {"channel_id": id}});
        let p = problem(demo.execute_raw(&body).await, 422, "validation_failed").await;
        assert!(!p.to_string().contains("Support (US)") && !p.to_string().contains("Acme on Messenger"));
    }
    let b_email = ids("SELECT to_json(min(email))::text AS j FROM contacts WHERE workspace_id = $1").await;
    let r = demo.tool("get_contact_analytics", json!({"email": b_email})).await;
    assert_eq!(r["contact"], Value::Null, "B's contact found through A");
    // Both demo workspaces have a contact +15550000001: A's answer is A's contact.
    let r = demo.tool("get_contact_analytics", json!({"phone_number": "+15550000001", "range": "90d"})).await;
    let a_contact =
        demo.sql_json("SELECT id::text AS j FROM contacts WHERE workspace_id = $1 AND phone = '+15550000001'").await;
    assert_eq!(r["contact"]["id"], a_contact);
    let b_threads = ids("SELECT json_agg(id)::text AS j FROM threads WHERE workspace_id = $1").await;
    for c in r["conversations"].as_array().cloned().unwrap_or_default() {
        assert!(!b_threads.as_array().is_some_and(|t| t.contains(&c["thread_id"])));
    }
    // Lists and counts are A's alone.
    let channels = demo.tool("list_channels", json!({})).await;
    let a_channels =
        demo.sql_json("SELECT json_agg(id ORDER BY id)::text AS j FROM channels WHERE workspace_id = $1").await;
    let got: Vec<Value> =
        channels["channels"].as_array().map(|a| a.iter().map(|c| c["id"].clone()).collect()).unwrap_or_default();
    assert_eq!(json!(got), a_channels);
    let o = demo.tool("get_workspace_overview", json!({})).await;
    let threads = demo.sql_json("SELECT count(*)::text AS j FROM threads WHERE workspace_id = $1").await;
    assert_eq!(o["inbox"]["threads_total"], threads);
    assert_eq!(o["workspace"]["id"], demo.ws);
    // A's token on B's paths is not found; B's own token works there.
    let body = json!({"tool": "get_workspace_overview"});
    problem(post(&demo.app, b, Some(&demo.token), &body).await, 404, "not_found").await;
    assert_eq!(post(&demo.app, b, Some(&b_token), &body).await.status(), 200);
}

#[tokio::test]
async fn tools_run_in_a_transaction_that_refuses_writes() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Growth).await;
    let id = ws.id;
    let err = adapters_postgres::assistant::read_only(&app.db, move |c| {
        async move {
            diesel::sql_query("INSERT INTO labels (workspace_id, name) VALUES ($1, 'sneaky')")
                .bind::<diesel::sql_types::BigInt, _>(id)
                .execute(c)
                .await
        }
        .scope_boxed()
    })
    .await
    .expect_err("a write inside a tool's transaction must fail");
    assert!(format!("{err:#}").contains("read-only transaction"), "{err:#}");
    let labels =
        crate::assistant_helpers::sql_json(&app, "SELECT count(*)::text AS j FROM labels WHERE workspace_id = $1", id)
            .await;
    assert_eq!(labels, 0);
}

#[tokio::test]
async fn capabilities_manifest_describes_every_tool() {
    let demo = Demo::new().await;
    let res = demo
        .app
        .client
        .get(demo.app.url(&format!("/workspaces/{}/co-admin/capabilities", demo.ws)))
        .bearer_auth(&demo.token)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let m: Value = res.json().await.expect("json");
    let names: Vec<&str> =
        m["tools"].as_array().map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect()).unwrap_or_default();
    assert_eq!(
        names,
        [
            "get_workspace_overview",
            "list_channels",
            "list_webhooks",
            "get_channel_analytics",
            "get_contact_analytics",
            "search_product_docs",
            "get_conversation_report"
        ]
    );
    assert_eq!(m["live_data"], json!([&names[..5], &names[6..]].concat()));
    assert_eq!(m["product_docs"], json!(["search_product_docs"]));
    for t in m["tools"].as_array().cloned().unwrap_or_default() {
        let s = &t["input_schema"];
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert!(t["description"].as_str().is_some_and(|d| d.len() > 40));
        // Only the common subset of JSON Schema.
        for (_, p) in s["properties"].as_object().cloned().unwrap_or_default() {
            for k in p.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                assert!(["type", "description", "enum", "default", "minimum", "maximum"].contains(&k.as_str()), "{k}");
            }
        }
    }
    let tool =
        |n: &str| m["tools"].as_array().and_then(|t| t.iter().find(|t| t["name"] == n).cloned()).unwrap_or_default();
    assert_eq!(
        tool("get_channel_analytics")["input_schema"]["properties"]["range"]["enum"],
        json!(["7d", "14d", "30d", "60d", "90d"])
    );
    assert_eq!(tool("search_product_docs")["input_schema"]["required"], json!(["query"]));
    assert_eq!(
        tool("search_product_docs")["input_schema"]["properties"]["limit"],
        json!({"type": "integer", "minimum": 1, "maximum": 8, "default": 5, "description": "How many pages at most."})
    );
    assert!(m["can"].as_array().is_some_and(|c| c.len() >= 5));
    let cannot = m["cannot"].to_string();
    for must in ["webhooks", "/settings/integrations/webhooks", "CSV", "transcripts"] {
        assert!(cannot.contains(must), "cannot mentions {must}");
    }
    let prompt = m["guidance"]["prompt"].as_str().unwrap_or_default();
    for n in &names {
        assert!(prompt.contains(n), "guidance names {n}");
    }
    assert!(prompt.contains("never guess"));
}

#[tokio::test]
async fn search_product_docs_is_served_through_the_same_registry() {
    let demo = Demo::new().await;
    let r = demo.tool("search_product_docs", json!({"query": "rotate webhook secret", "limit": 3})).await;
    assert_eq!(r["query"], "rotate webhook secret");
    assert!(r["hits"].is_array() && r["total"].is_number(), "{r}");
}
