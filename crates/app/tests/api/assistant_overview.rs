//! `get_workspace_overview`, `list_channels` and `list_webhooks` on the demo data, every field
//! checked against counts computed here with independent SQL (`docs/assistant.md`, "Results").

use serde_json::{json, Value};

use crate::assistant_helpers::Demo;
use crate::helpers::TestApp;

#[tokio::test]
async fn overview_matches_independent_counts_field_by_field() {
    let demo = Demo::new().await;
    let before = time::OffsetDateTime::now_utc();
    let o = demo.tool("get_workspace_overview", json!({})).await;

    let want = demo
        .sql_json(
            "SELECT json_build_object('id', id, 'name', name, 'slug', slug, 'is_active', is_active)::text AS j
             FROM workspaces WHERE id = $1",
        )
        .await;
    assert_eq!(o["workspace"], want);

    let by_type = demo
        .sql_json(
            "SELECT coalesce(json_object_agg(channel_type, json_build_object('total', n, 'connected', c)), '{}')::text AS j
             FROM (SELECT channel_type, count(*) AS n, count(*) FILTER (WHERE status = 'active') AS c
                   FROM channels WHERE workspace_id = $1 GROUP BY 1) s",
        )
        .await;
    assert_eq!(o["channels"]["by_type"], by_type);
    assert_eq!(o["channels"]["by_type"].as_object().map(|m| m.len()), Some(3), "every channel type");
    let total: i64 =
        by_type.as_object().map(|m| m.values().map(|v| v["total"].as_i64().unwrap_or(0)).sum()).unwrap_or(0);
    assert_eq!(o["channels"]["total"], total);

    let hooks = demo
        .sql_json(
            "SELECT json_build_object('total', count(*), 'active', count(*) FILTER (WHERE active),
                                      'inactive', count(*) FILTER (WHERE NOT active))::text AS j
             FROM webhook_destinations WHERE workspace_id = $1",
        )
        .await;
    assert_eq!(o["webhooks"], hooks);
    assert_eq!(hooks["inactive"], 1, "the demo has an inactive destination");

    // From the threads and messages themselves, not from the rollup the tool reads.
    let by_status = demo
        .sql_json(
            "SELECT json_object_agg(k.status, json_build_object('total', coalesce(n, 0), 'unread_messages', coalesce(u, 0)))::text AS j
             FROM unnest(ARRAY['open', 'pending', 'snoozed', 'resolved']) AS k (status)
             LEFT JOIN (SELECT t.status, count(*) AS n,
                          sum((SELECT count(*) FROM messages m WHERE m.workspace_id = $1 AND m.thread_id = t.id
                               AND m.direction = 'inbound' AND m.status <> 'read')) AS u
                   FROM threads t WHERE t.workspace_id = $1 GROUP BY 1) s USING (status)",
        )
        .await;
    assert_eq!(o["inbox"]["by_status"], by_status);
    let inbox = demo
        .sql_json(
            "SELECT json_build_object('threads', (SELECT count(*) FROM threads WHERE workspace_id = $1),
                   'unread', (SELECT count(*) FROM messages WHERE workspace_id = $1 AND direction = 'inbound'
                              AND status <> 'read'))::text AS j",
        )
        .await;
    assert_eq!(o["inbox"]["threads_total"], inbox["threads"]);
    assert_eq!(o["inbox"]["unread_messages_total"], inbox["unread"]);
    assert!(o["inbox"]["unread_messages_total"].as_i64() > Some(0));

    let agents = demo
        .sql_json(
            "SELECT json_build_object('total', (SELECT count(*) FROM ai_agents WHERE workspace_id = $1),
                   'by_status', (SELECT json_object_agg(status, n) FROM (SELECT status, count(*) AS n FROM ai_agents
                                 WHERE workspace_id = $1 GROUP BY 1) s))::text AS j",
        )
        .await;
    assert_eq!(o["ai_agents"], agents);
    assert_eq!(o["ai_agents"]["by_status"], json!({"active": 2, "draft": 1}));

    let misc = demo
        .sql_json(
            "SELECT json_build_object('labels', (SELECT count(*) FROM labels WHERE workspace_id = $1),
                   'members', (SELECT count(*) FROM workspace_members WHERE workspace_id = $1 AND is_active))::text AS j",
        )
        .await;
    assert_eq!(o["labels"], json!({"total": misc["labels"]}));
    assert_eq!(o["team_members"], json!({"active": misc["members"]}));

    let at = time::OffsetDateTime::parse(
        o["generated_at"].as_str().unwrap_or_default(),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("generated_at is RFC 3339");
    assert!(at >= before - time::Duration::seconds(1) && at <= time::OffsetDateTime::now_utc());
    let mut keys: Vec<&str> = o.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["ai_agents", "channels", "generated_at", "inbox", "labels", "team_members", "webhooks", "workspace"]
    );
    assert!(!o.to_string().contains("Support (US)"), "no channel names in the overview");
}

#[tokio::test]
async fn overview_follows_thread_changes() {
    let demo = Demo::new().await;
    crate::assistant_helpers::exec(
        &demo.app,
        "UPDATE threads SET status = 'snoozed', unread_count = unread_count + 2
         WHERE workspace_id = $1 AND id IN (SELECT id FROM threads WHERE workspace_id = $1 ORDER BY id LIMIT 3)",
        demo.ws,
    )
    .await;
    crate::assistant_helpers::exec(
        &demo.app,
        "DELETE FROM threads WHERE workspace_id = $1 AND status = 'pending'",
        demo.ws,
    )
    .await;
    let o = demo.tool("get_workspace_overview", json!({})).await;
    let want = demo
        .sql_json(
            "SELECT json_object_agg(s.status, json_build_object('total', coalesce(n, 0), 'unread_messages', coalesce(u, 0)))::text AS j
             FROM unnest(ARRAY['open', 'pending', 'snoozed', 'resolved']) AS s (status)
             LEFT JOIN (SELECT status, count(*) AS n, sum(unread_count) AS u FROM threads WHERE workspace_id = $1 GROUP BY 1) t
             USING (status)",
        )
        .await;
    assert_eq!(o["inbox"]["by_status"], want);
    assert_eq!(o["inbox"]["by_status"]["snoozed"]["total"], 3);
    assert_eq!(
        o["inbox"]["by_status"]["pending"],
        json!({"total": 0, "unread_messages": 0}),
        "statuses are a known set: one without threads is listed at zero"
    );
}

#[tokio::test]
async fn an_empty_workspace_has_zero_counts_for_every_type_and_status() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Free).await;
    let token = crate::credentials::admin_token(&app, &ws).await;
    let demo = crate::assistant_helpers::Demo { app, ws: ws.id, token };
    let o = demo.tool("get_workspace_overview", json!({})).await;
    // Types and statuses are known sets: each is listed, at zero (a reader finds `messenger`).
    let none = json!({"total": 0, "connected": 0});
    assert_eq!(o["channels"], json!({"total": 0, "by_type": {"whatsapp": none, "messenger": none, "instagram": none}}));
    let zero = json!({"total": 0, "unread_messages": 0});
    assert_eq!(
        o["inbox"],
        json!({"threads_total": 0, "unread_messages_total": 0, "by_status": {
            "open": zero, "pending": zero, "snoozed": zero, "resolved": zero}})
    );
    assert_eq!(o["ai_agents"], json!({"total": 0, "by_status": {"active": 0, "draft": 0}}));
    assert_eq!(o["team_members"], json!({"active": 1}));
}

#[tokio::test]
async fn large_overview_is_compressed_when_enabled_and_loses_only_zeros() {
    let app = TestApp::spawn_with(|s| s.co_admin.compress_overview = true).await;
    let demo = Demo::with(app).await;
    // Many resolved-like statuses without unread messages make the overview larger than 2 KB.
    // Statuses are a known set now (`threads_status_known`), so no workspace's overview grows past
    // 2 KB by itself; this test's own database drops the constraint to keep the compression path
    // (older data, a larger future overview) checked.
    {
        use diesel_async::RunQueryDsl;
        let mut conn = demo.app.db.conn().await.expect("conn");
        diesel::sql_query("ALTER TABLE threads DROP CONSTRAINT threads_status_known")
            .execute(&mut conn)
            .await
            .expect("lift the status set");
    }
    crate::assistant_helpers::exec(
        &demo.app,
        "UPDATE threads SET status = 'archived_batch_' || chr(97 + (id % 26)::int) || chr(97 + ((id / 26) % 3)::int),
                unread_count = 0
         WHERE workspace_id = $1 AND status = 'resolved'",
        demo.ws,
    )
    .await;
    let o = demo.tool("get_workspace_overview", json!({})).await;
    assert_eq!(o["compressed"], true);
    assert!(o["compression"].as_str().unwrap_or_default().contains("missing is 0"));
    let want = demo
        .sql_json(
            "SELECT json_object_agg(status, n)::text AS j FROM (SELECT status, count(*) AS n FROM threads
             WHERE workspace_id = $1 GROUP BY 1) s",
        )
        .await;
    let statuses = o["inbox"]["by_status"].as_object().cloned().unwrap_or_default();
    assert_eq!(statuses.len(), want.as_object().map_or(0, |m| m.len()));
    for (status, counts) in &statuses {
        assert_eq!(counts["total"], want[status], "{status}");
        if status.starts_with("archived_batch_") {
            assert_eq!(counts.get("unread_messages"), None, "zero counts are dropped");
        }
    }
    assert!(o["inbox"]["by_status"]["open"]["unread_messages"].as_i64() > Some(0), "non-zero figures stay");
    assert!(o["webhooks"].get("inactive").is_some(), "the demo's inactive destination is not zero");

    // The same workspace without compression: the complete form.
    let plain = TestApp::spawn().await;
    let demo2 = Demo::with(plain).await;
    assert!(demo2.tool("get_workspace_overview", json!({})).await.get("compressed").is_none());
}

#[tokio::test]
async fn list_channels_returns_spec_fields_and_filters_by_type() {
    let demo = Demo::new().await;
    let all = demo.tool("list_channels", json!({})).await;
    assert_eq!(all["filter"], "all");
    let want = demo
        .sql_json(
            "SELECT json_agg(json_build_object('id', id, 'channel_type', channel_type, 'display_name', display_name,
                                               'identifier', identifier, 'status', status) ORDER BY id)::text AS j
             FROM channels WHERE workspace_id = $1",
        )
        .await;
    assert_eq!(all["channels"], want);

    let wa = demo.tool("list_channels", json!({"channel_type": "whatsapp"})).await;
    assert_eq!(wa["filter"], "whatsapp");
    let wa: Vec<Value> = wa["channels"].as_array().cloned().unwrap_or_default();
    assert_eq!(wa.len(), 4);
    assert!(wa
        .iter()
        .all(|c| c["channel_type"] == "whatsapp" && c["identifier"].as_str().is_some_and(|i| i.starts_with('+'))));
    assert!(wa.iter().any(|c| c["status"] == "disconnected"));
    let ig = demo.tool("list_channels", json!({"channel_type": "instagram"})).await;
    assert_eq!(ig["channels"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn list_webhooks_lists_destinations_without_secrets() {
    let demo = Demo::new().await;
    let all = demo.tool("list_webhooks", json!({})).await;
    let want = demo
        .sql_json(
            "SELECT json_agg(json_build_object('id', id, 'url', url, 'platform', platform, 'events', events,
                                               'active', active) ORDER BY id)::text AS j
             FROM webhook_destinations WHERE workspace_id = $1",
        )
        .await;
    let got: Vec<Value> = all["webhooks"].as_array().cloned().unwrap_or_default();
    assert_eq!(all["active_only"], false);
    assert_eq!(all["total"], 3);
    for (g, w) in got.iter().zip(want.as_array().cloned().unwrap_or_default()) {
        for k in ["id", "url", "platform", "events", "active"] {
            assert_eq!(g[k], w[k], "{k}");
        }
        assert!(g["created_at"].is_string() && g["updated_at"].is_string());
        let mut keys: Vec<&str> = g.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
        keys.sort_unstable();
        assert_eq!(keys, ["active", "created_at", "events", "id", "platform", "updated_at", "url"]);
    }
    assert!(!all.to_string().contains("whsec_"));

    let active = demo.tool("list_webhooks", json!({"active_only": true})).await;
    assert_eq!(active["active_only"], true);
    assert_eq!(active["total"], 2);
    assert!(active["webhooks"].as_array().is_some_and(|a| a.iter().all(|w| w["active"] == true)));
}
