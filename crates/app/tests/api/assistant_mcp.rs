//! The MCP endpoint: the official Python SDK (`mcp`, pinned in scripts/requirements-test.txt)
//! against the live server, and the transport rules the SDK does not exercise.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::assistant_helpers::Demo;
use crate::helpers::problem;

/// The Python of `.venv-tests` (what `scripts/test` installs), or `WMS_TEST_PYTHON`.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("WMS_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv-tests/bin/python");
    assert!(
        venv.exists(),
        "the MCP test needs the Python test dependencies: run scripts/test, or \
         python3 -m venv .venv-tests && .venv-tests/bin/pip install -r scripts/requirements-test.txt"
    );
    venv
}

fn mcp_path(ws: i64) -> String {
    format!("/workspaces/{ws}/co-admin/mcp")
}

#[tokio::test]
async fn python_sdk_lists_and_calls_every_tool() {
    let demo = Demo::new().await;
    app::docs_search::ingest_embedded(&demo.app.settings, &demo.app.db).await.expect("ingest the documentation");
    let manifest: Value = demo
        .app
        .client
        .get(demo.app.url(&format!("/workspaces/{}/co-admin/capabilities", demo.ws)))
        .bearer_auth(&demo.token)
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    let whatsapp = demo
        .sql_json("SELECT min(id)::text AS j FROM channels WHERE workspace_id = $1 AND channel_type = 'whatsapp'")
        .await;
    let phone = demo.sql_json("SELECT to_json(min(phone))::text AS j FROM contacts WHERE workspace_id = $1").await;
    // An explicit period, so that the call over MCP and the one through the execute endpoint ask
    // for the same thing (without `until` the report ends at the moment of each call).
    let today = time::OffsetDateTime::now_utc().date();
    let (since, until) = (today - time::Duration::days(30), today + time::Duration::days(1));
    let calls = json!([
        ["get_workspace_overview", {}],
        ["list_channels", {"channel_type": "whatsapp"}],
        ["list_webhooks", {"active_only": true}],
        ["get_channel_analytics", {"channel_id": whatsapp, "range": "30d"}],
        ["get_contact_analytics", {"phone_number": phone, "range": "90d"}],
        ["search_product_docs", {"query": "rotate a webhook secret", "limit": 2}],
        ["get_conversation_report", {"since": since.to_string(), "until": until.to_string(), "group_by": "agent"}],
        ["get_channel_analytics", {"range": "365d"}],
        ["get_channel_analytics", {"channel_id": 987654321}],
        ["get_conversation_report", {"group_by": "inbox"}],
        ["get_contact_analytics", {"name": "Ana"}],
    ]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/mcp_round_trip.py");
    let out = tokio::process::Command::new(python())
        .arg(script)
        .arg(demo.app.url(&mcp_path(demo.ws)))
        .arg(&demo.token)
        .arg(calls.to_string())
        .output()
        .await
        .expect("run python");
    assert!(out.status.success(), "python failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("report json");

    assert!(
        domain_versions().contains(&report["protocol_version"].as_str().unwrap_or_default()),
        "{}",
        report["protocol_version"]
    );
    assert_eq!(report["server_name"], "wms");
    assert_eq!(report["has_instructions"], true);

    // tools/list is the manifest's tools, schema for schema.
    let listed = report["tools"].as_array().cloned().unwrap_or_default();
    let manifest_tools = manifest["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(listed.len(), 7);
    assert_eq!(listed.len(), manifest_tools.len());
    for (l, m) in listed.iter().zip(&manifest_tools) {
        assert_eq!(l["name"], m["name"]);
        assert_eq!(l["description"], m["description"]);
        assert_eq!(l["input_schema"], m["input_schema"], "{}", m["name"]);
        for (k, v) in
            [("readOnlyHint", true), ("destructiveHint", false), ("idempotentHint", true), ("openWorldHint", false)]
        {
            assert_eq!(l["annotations"][k], v, "{} {k}", m["name"]);
        }
    }

    // tools/call: structured results equal the execute endpoint's, with a text copy.
    let results = report["calls"].as_array().cloned().unwrap_or_default();
    for c in &results[..7] {
        assert_eq!(c["is_error"], false, "{c}");
        let structured = c["structured"].clone();
        let text: Value = serde_json::from_str(c["text"].as_str().unwrap_or_default()).expect("text copy is the JSON");
        assert_eq!(text, structured);
        let mut direct = demo.tool(c["tool"].as_str().unwrap_or_default(), c["arguments"].clone()).await;
        let mut via_mcp = structured;
        if c["tool"] == "get_workspace_overview" {
            direct.as_object_mut().map(|o| o.remove("generated_at"));
            via_mcp.as_object_mut().map(|o| o.remove("generated_at"));
        }
        assert_eq!(via_mcp, direct, "{}", c["tool"]);
    }
    assert!(results[4]["structured"]["contact"]["id"].is_number());
    // Every tool declares its result's schema, and every result matched it (jsonschema, in Python).
    assert!(listed.iter().all(|t| t["has_output_schema"] == true), "{listed:?}");
    for c in &results {
        assert_eq!(c["validated"], c["is_error"] == false, "{c}");
    }
    let hits = results[5]["structured"]["hits"].as_array().cloned().unwrap_or_default();
    assert!(!hits.is_empty() && hits.iter().all(|h| h["url"].as_str().is_some_and(|u| u.starts_with("/docs/"))));

    // Every documentation page is a resource, and reads as its Markdown.
    assert_eq!(report["resources_capability"], true);
    let resources = report["resources"].as_array().cloned().unwrap_or_default();
    let library = app::docs_search::library();
    assert_eq!(resources.len(), library.len());
    for r in &resources {
        let slug = r["uri"].as_str().and_then(|u| u.strip_prefix("wms://docs/")).expect("wms://docs/ uri");
        let page = library.get(slug).expect("a page");
        assert_eq!(r["title"], page.meta.title.as_str());
        assert_eq!(
            (r["mime_type"].as_str(), r["read_mime_type"].as_str()),
            (Some("text/markdown"), Some("text/markdown"))
        );
        assert_eq!(r["text"].as_str(), Some(page.markdown.trim_start()), "{slug}");
    }
    assert_eq!(report["unknown_resource_error"], -32002);
    // Failures are results with isError, so the model can correct itself.
    for (c, argument) in results[7..10].iter().zip(["range", "channel_id", "group_by"]) {
        assert_eq!(c["is_error"], true, "{c}");
        assert!(c["text"].as_str().is_some_and(|t| t.contains(argument)), "{c}");
    }
    assert_eq!(results[10]["is_error"], false);
    assert_eq!(results[10]["structured"]["contact"], Value::Null);
}

fn domain_versions() -> [&'static str; 3] {
    ["2025-03-26", "2025-06-18", "2025-11-25"]
}

#[tokio::test]
async fn transport_rules() {
    let demo = Demo::new().await;
    let url = demo.app.url(&mcp_path(demo.ws));
    let c = &demo.app.client;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});

    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let res = c.request(method.clone(), &url).bearer_auth(&demo.token).send().await.expect("request");
        assert_eq!(res.headers().get("allow").and_then(|v| v.to_str().ok()), Some("POST"));
        problem(res, 405, "method_not_allowed").await;
    }
    let res = c
        .post(&url)
        .bearer_auth(&demo.token)
        .header("origin", "https://evil.example")
        .json(&ping)
        .send()
        .await
        .expect("request");
    problem(res, 403, "forbidden").await;
    let res = c
        .post(&url)
        .bearer_auth(&demo.token)
        .header("origin", "http://localhost:6274")
        .json(&ping)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    problem(c.post(&url).json(&ping).send().await.expect("request"), 401, "unauthenticated").await;

    let res = c
        .post(&url)
        .bearer_auth(&demo.token)
        .header("mcp-protocol-version", "2024-01-01")
        .json(&ping)
        .send()
        .await
        .expect("request");
    // The transport's own 400s are problems that are also JSON-RPC error responses.
    assert_eq!(problem(res, 400, "bad_request").await["error"]["code"], -32600);
    // So is a lone message that is not a JSON-RPC request; an id of another type is answered null.
    for body in [json!({}), json!({"foo": 1}), json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})] {
        let res = c.post(&url).bearer_auth(&demo.token).json(&body).send().await.expect("request");
        let p = problem(res, 400, "bad_request").await;
        assert_eq!((&p["error"]["code"], &p["id"]), (&json!(-32600), &Value::Null), "{body}: {p}");
    }
    let res = c
        .post(&url)
        .bearer_auth(&demo.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-03-26")
        .json(&ping)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    assert!(res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json")));
    assert_eq!(res.json::<Value>().await.expect("json"), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));

    let res = c
        .post(&url)
        .bearer_auth(&demo.token)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 202);
    // docs/contract.md "Abuse limits": more than 20 messages in one batch are refused whole.
    let batch = |n: usize| Value::Array((0..n).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect());
    let res = c.post(&url).bearer_auth(&demo.token).json(&batch(20)).send().await.expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json").as_array().map(Vec::len), Some(20));
    let res = c.post(&url).bearer_auth(&demo.token).json(&batch(21)).send().await.expect("request");
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!((body["jsonrpc"].as_str(), &body["id"]), (Some("2.0"), &Value::Null), "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");

    let res = c.post(&url).bearer_auth(&demo.token).body("{oops").send().await.expect("request");
    let body = problem(res, 400, "bad_request").await;
    assert_eq!(
        (body["jsonrpc"].as_str(), &body["id"], &body["error"]["code"]),
        (Some("2.0"), &Value::Null, &json!(-32700))
    );
    // Over 256 KiB: a problem, like every other body of the service.
    let padded = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(300 * 1024)}});
    let res = c.post(&url).bearer_auth(&demo.token).json(&padded).send().await.expect("request");
    problem(res, 413, "payload_too_large").await;
}
