//! A webhook URL is secret beyond its origin and path: the audit record of its creation and the
//! `webhook.disabled` event carry it without user-info, query or fragment, while the webhook
//! endpoints still show it whole to those who may read webhooks.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::events_helpers::feed;
use crate::helpers::TestApp;
use crate::webhooks_receiver::{Answer, Receiver};

/// `http://127.0.0.1:PORT/path` with credentials in user-info, query and fragment.
fn with_secrets(plain: &str) -> String {
    format!("{}?token=q-s3cret#frag-s3cret", plain.replacen("http://", "http://hook-user:pw-s3cret@", 1))
}

#[tokio::test]
async fn audit_records_and_webhook_disabled_events_carry_the_url_without_its_secrets() {
    let app = TestApp::spawn_with(crate::webhooks_delivery::loopback).await;
    let (_, key) = app.advanced_with_key().await;
    let gone = Receiver::start().await;
    gone.answer_always(Answer::status(410));
    let watcher = Receiver::start().await;
    let plain = gone.url("/gone");
    let secret_url = with_secrets(&plain);
    let (gone_id, _) = crate::webhooks_delivery::destination(&app, &key, &secret_url, &["channel.created"]).await;
    crate::webhooks_delivery::destination(&app, &key, &watcher.url("/w"), &["webhook.disabled"]).await;

    // Whoever may read webhooks still sees the URL whole where it is managed.
    let (status, record) = app.get_json(&format!("/v1/webhooks/{gone_id}"), &key).await;
    assert_eq!(status, 200);
    assert_eq!(record["url"], secret_url.as_str());

    let (status, audit) = app.get_json("/v1/audit-events?action=webhook.created", &key).await;
    assert_eq!(status, 200);
    let created: Vec<&Value> = audit["data"]
        .as_array()
        .map(|a| a.iter().filter(|r| r["target"]["id"] == gone_id).collect())
        .unwrap_or_default();
    assert_eq!(created.len(), 1, "{audit}");
    assert_eq!(created[0]["details"]["url"], plain.as_str(), "{audit}");
    assert!(!audit.to_string().contains("s3cret"), "{audit}");

    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    app.channel(&key, "messenger", "page-redaction", "active").await;
    let got = watcher.wait_for(1, Duration::from_secs(20)).await;
    workers.stop(Duration::from_secs(5)).await;
    assert_eq!(got.len(), 1, "the watcher heard of the deactivation");
    let delivered = got[0].json();
    assert_eq!(delivered["type"], "webhook.disabled");
    assert_eq!(delivered["data"]["url"], plain.as_str(), "{delivered}");
    assert!(!String::from_utf8_lossy(&got[0].body).contains("s3cret"));
    let events = feed(&app, &key).await;
    let disabled: Vec<&Value> = events.iter().filter(|e| e["type"] == "webhook.disabled").collect();
    assert_eq!(disabled.len(), 1);
    assert_eq!(disabled[0]["data"]["url"], plain.as_str());
    assert!(!serde_json::to_string(&events).unwrap_or_default().contains("s3cret"), "no event holds the secrets");
    let (_, audit) = app.get_json("/v1/audit-events?limit=100", &key).await;
    assert!(!audit.to_string().contains("s3cret"), "no audit record holds the secrets: {audit}");
}

#[tokio::test]
async fn the_migration_cuts_the_secrets_from_urls_stored_before_it() {
    use crate::assistant_helpers::{exec, sql_json};
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let url = app.database.url.clone();
    crate::helpers::revert_through(&url, "20261126000202").await;
    let secret = "https://hook-user:pw-s3cret@hooks.example.com/in?token=q-s3cret#frag-s3cret";
    let plain = "https://hooks.example.com/in";
    exec(
        &app,
        &format!(
            "INSERT INTO audit_events (workspace_id, action, actor_type, details) VALUES
               ($1, 'webhook.created', 'cli', jsonb_build_object('url', '{secret}', 'events', '[\"message.created\"]'::jsonb)),
               ($1, 'webhook.created', 'cli', jsonb_build_object('url', '{plain}')),
               ($1, 'channel.created', 'cli', jsonb_build_object('note', 'a?b'))"
        ),
        ws.id,
    )
    .await;
    let event = serde_json::json!({"type": "webhook.disabled", "timestamp": "2026-11-24T08:00:00.000Z", "workspace_id": ws.id,
        "data": {"id": 1, "url": secret, "active": false, "disabled_reason": "410"}});
    exec(
        &app,
        &format!(
            "INSERT INTO webhook_events (workspace_id, event_type, message_id, payload) VALUES ($1, 'webhook.disabled', 'msg_x', '{event}')"
        ),
        ws.id,
    )
    .await;

    adapters_postgres::migrate::run_pending(&url).await.expect("migrate again");

    let audit = sql_json(&app, "SELECT json_agg(details ORDER BY id)::text AS j FROM audit_events WHERE workspace_id = $1 AND actor_type = 'cli' AND action <> 'workspace.plan_changed'", ws.id).await;
    assert_eq!(
        audit,
        serde_json::json!([{"url": plain, "events": ["message.created"]}, {"url": plain}, {"note": "a?b"}])
    );
    let data = sql_json(
        &app,
        "SELECT (payload::jsonb -> 'data')::text AS j FROM webhook_events WHERE workspace_id = $1",
        ws.id,
    )
    .await;
    assert_eq!(data, serde_json::json!({"id": 1, "url": plain, "active": false, "disabled_reason": "410"}));
}
