//! `GET /v1/openapi.json`

use crate::helpers::TestApp;

#[tokio::test]
async fn the_document_is_openapi_3_1_and_covers_every_v1_operation() {
    let app = TestApp::spawn().await;
    let res = app.get("/v1/openapi.json").await;
    assert_eq!(res.status(), 200);
    let doc: serde_json::Value = res.json().await.expect("json");
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")));
    for (path, methods) in [
        ("/v1/channels", &["get", "post"][..]),
        ("/v1/channels/{channel_id}", &["get"]),
        ("/v1/messages", &["get", "post"]),
        ("/v1/messages/{message_id}", &["get"]),
        ("/v1/users/{user_id}", &["get", "patch", "delete"]),
        ("/v1/threads", &["get"]),
        ("/v1/threads/{thread_id}", &["get", "patch"]),
        ("/v1/threads/{thread_id}/labels", &["put"]),
        ("/v1/labels", &["get", "post"]),
        ("/v1/labels/{label_id}", &["patch", "delete"]),
        ("/v1/teams", &["get", "post"]),
        ("/v1/teams/{team_id}", &["get", "patch", "delete"]),
        ("/v1/ai-agents", &["get"]),
        ("/v1/ai-agents/{agent_id}", &["get"]),
    ] {
        for m in methods {
            let op = &doc["paths"][path][m];
            assert!(op.is_object(), "{m} {path} missing");
            assert!(op["responses"]["401"].is_object() && op["responses"]["429"].is_object(), "{m} {path} problems");
        }
    }
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert!(doc["components"]["schemas"]["Problem"].is_object());
    let headers = &doc["paths"]["/v1/channels"]["get"]["responses"]["200"]["headers"];
    for h in ["RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] {
        assert!(headers[h].is_object(), "{h} missing");
    }
}

#[tokio::test]
async fn the_document_passes_openapi_spec_validator() {
    let Some(python) = std::env::var_os("WMS_TEST_PYTHON") else {
        panic!("WMS_TEST_PYTHON is not set: run the tests through scripts/test, which installs openapi-spec-validator");
    };
    let app = TestApp::spawn().await;
    let doc = app.get("/v1/openapi.json").await.text().await.expect("body");
    let file = std::env::temp_dir().join(format!("wms-openapi-{}.json", std::process::id()));
    std::fs::write(&file, doc).expect("write");
    let out = std::process::Command::new(python)
        .args(["-m", "openapi_spec_validator"])
        .arg(&file)
        .output()
        .expect("run openapi-spec-validator");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// The document and the routes table cannot drift apart: every `/v1` route (REST API, settings
/// API, sign-in) is documented with its method, and every documented operation is a route.
#[tokio::test]
async fn the_document_has_exactly_the_v1_routes_of_the_routes_table() {
    use adapters_http::access::Access;
    use std::collections::BTreeSet;
    let app = TestApp::spawn().await;
    let doc: serde_json::Value = app.get("/v1/openapi.json").await.json().await.expect("json");
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .into_iter()
                .flat_map(|o| o.keys())
                .filter(|m| ["get", "post", "put", "patch", "delete"].contains(&m.as_str()))
                .map(move |m| (m.to_uppercase(), path.clone()))
        })
        .collect();
    let routed: BTreeSet<(String, String)> = adapters_http::access::registered()
        .into_iter()
        .filter(|r| r.path.starts_with("/v1/") && !matches!(r.access, Access::Page(_)))
        .map(|r| (r.method.to_owned(), r.path))
        .collect();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(undocumented.is_empty(), "routes missing from /v1/openapi.json: {undocumented:?}");
    assert!(unrouted.is_empty(), "documented operations that no route answers: {unrouted:?}");
}

/// An operation that answers without credentials says so (`security: [{}]`), and an
/// authenticated one does not: schemathesis sends requests without them and flags any 2xx of an
/// operation documented as needing a token.
#[tokio::test]
async fn the_operations_that_need_no_credentials_are_documented_as_public() {
    let app = TestApp::spawn().await;
    let doc: serde_json::Value = app.get("/v1/openapi.json").await.json().await.expect("json");
    let public = |path: &str, method: &str| {
        let op = &doc["paths"][path][method];
        let security = op.get("security").unwrap_or(&doc["security"]);
        security.as_array().is_some_and(|s| s.iter().any(|r| r.as_object().is_some_and(serde_json::Map::is_empty)))
    };
    for (path, method) in [("/v1/auth/login", "post"), ("/v1/auth/password-reset", "post")] {
        assert!(public(path, method), "{method} {path} is documented as needing a token");
    }
    for (path, method) in [("/v1/auth/logout", "post"), ("/v1/channels", "get")] {
        assert!(!public(path, method), "{method} {path} is documented as public");
    }
    let res = app
        .client
        .post(app.url("/v1/auth/password-reset"))
        .json(&serde_json::json!({"email": "nobody@example.com"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 202, "answered without credentials");
}

#[tokio::test]
async fn destination_controls_carry_their_bounds() {
    let app = TestApp::spawn().await;
    let doc: serde_json::Value = app.get("/v1/openapi.json").await.json().await.expect("json");
    for body in ["CreateWebhookBody", "UpdateWebhookBody"] {
        let props = &doc["components"]["schemas"][body]["properties"];
        for (field, max) in [("rate_limit_per_second", 1000), ("max_in_flight", 100)] {
            assert_eq!(
                (&props[field]["minimum"], &props[field]["maximum"]),
                (&1.into(), &max.into()),
                "{body}.{field}"
            );
        }
        assert_eq!(props["events"]["minItems"], 1, "{body}.events");
    }
}
