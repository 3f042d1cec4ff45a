//! `/v1/threads/{thread_id}`: status and assignment, with their webhook events.

use diesel_async::RunQueryDsl;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error_fields, problem, TestApp};

async fn patch(app: &TestApp, key: &str, id: &Value, body: Value) -> reqwest::Response {
    app.authed(Method::PATCH, &format!("/v1/threads/{id}"), key).json(&body).send().await.expect("request")
}

#[tokio::test]
async fn status_and_assignee_change_with_their_events() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let hook = app
        .post_json(
            "/v1/webhooks",
            &key,
            &json!({"url": "https://hooks.example.com/t", "platform": "custom",
        "events": ["thread.status_changed", "thread.assigned"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let m: Value = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hi", "to": "+14155550123", "template": crate::helpers::test_template()}))
        .await
        .json()
        .await
        .expect("json");
    let thread = &m["thread_id"];

    let (status, t) = app.get_json(&format!("/v1/threads/{thread}"), &key).await;
    assert_eq!((status, &t["status"], &t["assignee"]), (200, &json!("open"), &Value::Null));

    let res =
        patch(&app, &key, thread, json!({"status": "resolved", "assignee": {"type": "user", "id": ws.admin_id}})).await;
    assert_eq!(res.status(), 200);
    let t: Value = res.json().await.expect("json");
    assert_eq!((&t["status"], &t["assignee"]), (&json!("resolved"), &json!({"type": "user", "id": ws.admin_id})));

    let mut conn = app.db.conn().await.expect("conn");
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        id: i64,
    }
    let team: Id = diesel::sql_query("INSERT INTO teams (workspace_id, name) VALUES ($1, 'Tier 2') RETURNING id")
        .bind::<diesel::sql_types::BigInt, _>(ws.id)
        .get_result(&mut conn)
        .await
        .expect("team");
    let t: Value = patch(&app, &key, thread, json!({"assignee": {"type": "team", "id": team.id}}))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(t["assignee"], json!({"type": "team", "id": team.id}));
    let t: Value = patch(&app, &key, thread, json!({"assignee": null})).await.json().await.expect("json");
    assert_eq!(t["assignee"], Value::Null);
    // The same values again change nothing and emit nothing.
    patch(&app, &key, thread, json!({"status": "resolved", "assignee": null})).await;

    #[derive(diesel::QueryableByName)]
    struct E {
        #[diesel(sql_type = diesel::sql_types::Text)]
        event_type: String,
    }
    let events: Vec<E> =
        // Every event is kept now (the events feed); these are the thread changes.
        diesel::sql_query(
            "SELECT event_type FROM webhook_events \
             WHERE event_type IN ('thread.status_changed', 'thread.assigned') ORDER BY id",
        )
        .load(&mut conn)
        .await
        .expect("events");
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["thread.status_changed", "thread.assigned", "thread.assigned", "thread.assigned"]);
}

#[tokio::test]
async fn assignees_must_belong_to_the_workspace_and_fields_are_validated() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let m: Value = app
        .post_json("/v1/messages", &key, &json!({"channel_id": ch, "content": "Hi", "to": "+14155550123", "template": crate::helpers::test_template()}))
        .await
        .json()
        .await
        .expect("json");
    let thread = &m["thread_id"];
    for (body, field) in [
        (json!({"assignee": {"type": "user", "id": other.admin_id}}), "assignee.id"),
        (json!({"assignee": {"type": "team", "id": 424242}}), "assignee.id"),
        (json!({"assignee": {"type": "robot", "id": 1}}), "assignee.type"),
        (json!({"assignee": {"type": "user"}}), "assignee"),
        (json!({"status": "Closed!"}), "status"),
        (json!({"priority": "high"}), "priority"),
        (json!({}), "body"),
    ] {
        let p = problem(patch(&app, &key, thread, body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    // Another workspace's thread is not found.
    let other_key = app.api_key(&other).await;
    problem(patch(&app, &other_key, thread, json!({"status": "resolved"})).await, 404, "not_found").await;
    let res = app.authed(Method::GET, &format!("/v1/threads/{thread}"), &other_key).send().await.expect("request");
    problem(res, 404, "not_found").await;
}

mod listing {
    use reqwest::Method;
    use serde_json::{json, Value};

    use crate::assistant_helpers::{exec, sql_json};
    use crate::helpers::{error_fields, problem, TestApp};
    use crate::rest_labels::{label, thread};

    async fn put_labels(app: &TestApp, key: &str, thread: i64, labels: Value) -> reqwest::Response {
        app.authed(Method::PUT, &format!("/v1/threads/{thread}/labels"), key)
            .json(&json!({"labels": labels}))
            .send()
            .await
            .expect("request")
    }

    async fn ids(app: &TestApp, key: &str, query: &str) -> Vec<i64> {
        let (status, page) = app.get_json(&format!("/v1/threads?{query}"), key).await;
        assert_eq!(status, 200, "{query}: {page}");
        page["data"].as_array().expect("data").iter().map(|t| t["id"].as_i64().expect("id")).collect()
    }

    #[tokio::test]
    async fn every_filter_narrows_the_list_and_pages_walk_it_newest_first() {
        let app = TestApp::spawn().await;
        let (ws, key) = app.advanced_with_key().await;
        let wa = app.channel(&key, "whatsapp", "+14155550101", "active").await;
        let wa2 = app.channel(&key, "whatsapp", "+14155550102", "active").await;
        let a = thread(&app, &key, wa, "+14155550123").await;
        let b = thread(&app, &key, wa, "+14155550124").await;
        let c = thread(&app, &key, wa2, "+14155550123").await;
        let d = thread(&app, &key, wa2, "+14155550125").await;
        label(&app, &key, "VIP").await;
        assert_eq!(put_labels(&app, &key, b, json!(["vip"])).await.status(), 200);
        assert_eq!(put_labels(&app, &key, d, json!(["VIP"])).await.status(), 200);
        let patch =
            |id: i64, body: Value| app.authed(Method::PATCH, &format!("/v1/threads/{id}"), &key).json(&body).send();
        assert_eq!(patch(c, json!({"status": "resolved"})).await.expect("request").status(), 200);
        let team: Value =
            app.post_json("/v1/teams", &key, &json!({"name": "Tier 2"})).await.json().await.expect("json");
        patch(a, json!({"assignee": {"type": "user", "id": ws.admin_id}})).await.expect("request");
        patch(b, json!({"assignee": {"type": "team", "id": team["id"]}})).await.expect("request");
        let contact = sql_json(&app, &format!("SELECT json_build_object('id', contact_id)::text AS j FROM threads WHERE id = {a} AND workspace_id = $1"), ws.id).await["id"].as_i64().expect("contact");

        assert_eq!(ids(&app, &key, "").await, [d, c, b, a]);
        assert_eq!(ids(&app, &key, "status=open").await, [d, b, a]);
        assert_eq!(ids(&app, &key, "status=resolved").await, [c]);
        assert_eq!(ids(&app, &key, &format!("channel_id={wa2}")).await, [d, c]);
        assert_eq!(ids(&app, &key, &format!("contact_id={contact}")).await, [c, a]);
        assert_eq!(ids(&app, &key, "label=vip").await, [d, b]);
        assert_eq!(ids(&app, &key, "status=open&label=Vip").await, [d, b]);
        assert_eq!(ids(&app, &key, &format!("channel_id={wa}&label=vip")).await, [b]);
        assert_eq!(ids(&app, &key, "assignee_type=user").await, [a]);
        assert_eq!(ids(&app, &key, &format!("assignee_type=user&assignee_id={}", ws.admin_id)).await, [a]);
        assert_eq!(ids(&app, &key, &format!("assignee_type=team&assignee_id={}", team["id"])).await, [b]);
        assert_eq!(ids(&app, &key, "assignee_type=team&assignee_id=987654").await, Vec::<i64>::new());
        assert_eq!(ids(&app, &key, "assignee_type=ai_agent").await, Vec::<i64>::new());
        assert_eq!(ids(&app, &key, "channel_id=987654").await, Vec::<i64>::new());

        // updated_since: every change (status, assignee, labels) moves a thread's time.
        exec(&app, "UPDATE threads SET updated_at = '2026-01-01T00:00:00Z' WHERE workspace_id = $1", ws.id).await;
        assert_eq!(ids(&app, &key, "updated_since=2026-06-01T00:00:00Z").await, Vec::<i64>::new());
        assert_eq!(put_labels(&app, &key, a, json!(["vip"])).await.status(), 200);
        assert_eq!(ids(&app, &key, "updated_since=2026-06-01T00:00:00Z").await, [a]);
        assert_eq!(ids(&app, &key, "updated_since=2025-12-31T23:00:00%2B00:00").await, [d, c, b, a]);

        // Pages of two, newest first, each thread once; the cursor holds under the filter it came from.
        let (_, first) = app.get_json("/v1/threads?limit=2", &key).await;
        let cursor = first["next_cursor"].as_str().expect("more").to_owned();
        let (_, second) = app.get_json(&format!("/v1/threads?limit=2&cursor={cursor}"), &key).await;
        let walked: Vec<i64> = first["data"]
            .as_array()
            .into_iter()
            .chain(second["data"].as_array())
            .flatten()
            .map(|t| t["id"].as_i64().expect("id"))
            .collect();
        assert_eq!((walked, second["next_cursor"].clone()), (vec![d, c, b, a], Value::Null));
        // A cursor belongs to the filters it was issued for: under another filter it is refused
        // instead of continuing that listing from a position of this one.
        let res = app.authed(Method::GET, &format!("/v1/threads?limit=1&label=vip&cursor={cursor}"), &key).send().await;
        assert_eq!(error_fields(&problem(res.expect("request"), 422, "validation_failed").await), ["cursor"]);
    }

    #[tokio::test]
    async fn a_cursor_is_bound_to_its_filters_and_tampering_is_refused() {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine;

        let app = TestApp::spawn().await;
        let (_, key) = app.advanced_with_key().await;
        let wa = app.channel(&key, "whatsapp", "+14155550101", "active").await;
        let mut made = Vec::new();
        for to in ["+14155550121", "+14155550122", "+14155550123"] {
            made.push(thread(&app, &key, wa, to).await);
        }
        label(&app, &key, "VIP").await;
        for t in &made {
            assert_eq!(put_labels(&app, &key, *t, json!(["vip"])).await.status(), 200);
        }
        // The same filters' cursor walks on (the label's case does not change the filter).
        let (_, first) = app.get_json("/v1/threads?status=open&label=vip&limit=2", &key).await;
        let cursor = first["next_cursor"].as_str().expect("more").to_owned();
        assert_eq!(ids(&app, &key, &format!("label=VIP&status=open&limit=2&cursor={cursor}")).await, [made[0]]);
        // Another filter set, no filter, or a filter added: refused, naming `cursor`.
        for query in [
            format!("status=resolved&label=vip&cursor={cursor}"),
            format!("cursor={cursor}"),
            format!("status=open&label=vip&channel_id={wa}&cursor={cursor}"),
            format!("status=open&label=vip&updated_since=2020-01-01T00:00:00Z&cursor={cursor}"),
        ] {
            let res = app.authed(Method::GET, &format!("/v1/threads?{query}"), &key).send().await.expect("request");
            let p = problem(res, 422, "validation_failed").await;
            assert_eq!(error_fields(&p), ["cursor"], "{query}");
        }
        // An unfiltered cursor is not accepted by a filtered listing either.
        let (_, all) = app.get_json("/v1/threads?limit=1", &key).await;
        let plain = all["next_cursor"].as_str().expect("more").to_owned();
        assert_eq!(ids(&app, &key, &format!("limit=1&cursor={plain}")).await, [made[1]]);
        let res = app.authed(Method::GET, &format!("/v1/threads?status=open&cursor={plain}"), &key).send().await;
        assert_eq!(error_fields(&problem(res.expect("request"), 422, "validation_failed").await), ["cursor"]);
        // Tampering: another position with the digest kept, or the digest edited, is refused.
        let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(&cursor).expect("base64")).expect("utf8");
        let (prefix_id, digest) = raw.rsplit_once('.').expect("a digest");
        let moved = URL_SAFE_NO_PAD.encode(format!("c1.{}.{digest}", made[2] + 1));
        assert_eq!(ids(&app, &key, &format!("status=open&label=vip&cursor={moved}")).await.len(), 3, "a position");
        let mut edited = digest.to_owned().into_bytes();
        edited[0] = if edited[0] == b'0' { b'1' } else { b'0' };
        for bad in [
            URL_SAFE_NO_PAD.encode(format!("{prefix_id}.{}", String::from_utf8(edited).expect("hex"))),
            URL_SAFE_NO_PAD.encode(format!("{prefix_id}.")),
            URL_SAFE_NO_PAD.encode(prefix_id),
            format!("{cursor}x"),
        ] {
            let res = app
                .authed(Method::GET, &format!("/v1/threads?status=open&label=vip&cursor={bad}"), &key)
                .send()
                .await
                .expect("request");
            assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["cursor"], "{bad}");
        }
    }

    #[tokio::test]
    async fn bad_listing_queries_are_named_and_other_workspaces_see_nothing() {
        let app = TestApp::spawn().await;
        let (_, key) = app.advanced_with_key().await;
        let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
        thread(&app, &key, ch, "+14155550123").await;
        label(&app, &key, "vip").await;
        for (query, fields) in [
            ("assignee_id=3", vec!["assignee_type"]),
            ("assignee_type=robot", vec!["assignee_type"]),
            ("assignee_type=user&assignee_id=x", vec!["assignee_id"]),
            ("label=nope", vec!["label"]),
            ("label=", vec!["label"]),
            ("status=Open!", vec!["status"]),
            ("updated_since=yesterday", vec!["updated_since"]),
            ("cursor=junk", vec!["cursor"]),
            ("limit=101", vec!["limit"]),
            ("channel_id=abc", vec!["channel_id"]),
            ("sort=id", vec!["sort"]),
            ("limit=0&status=OPEN&updated_since=x", vec!["limit", "updated_since", "status"]),
        ] {
            let res = app.authed(Method::GET, &format!("/v1/threads?{query}"), &key).send().await.expect("request");
            let p = problem(res, 422, "validation_failed").await;
            assert_eq!(error_fields(&p), fields, "{query}");
        }
        let (_, other_key) = app.advanced_with_key().await;
        assert_eq!(ids(&app, &other_key, "").await, Vec::<i64>::new());
        // A label of another workspace is unknown here.
        let res = app.authed(Method::GET, "/v1/threads?label=vip", &other_key).send().await.expect("request");
        assert_eq!(error_fields(&problem(res, 422, "validation_failed").await), ["label"]);
    }

    #[tokio::test]
    async fn labels_are_replaced_with_one_event_per_change() {
        let app = TestApp::spawn().await;
        let (ws, key) = app.advanced_with_key().await;
        let hook =
            json!({"url": "https://hooks.example.com/t", "platform": "custom", "events": ["thread.labels_changed"]});
        assert_eq!(app.post_json("/v1/webhooks", &key, &hook).await.status(), 201);
        let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
        let t = thread(&app, &key, ch, "+14155550123").await;
        label(&app, &key, "vip").await;
        label(&app, &key, "Billing").await;

        let (_, fresh) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
        assert_eq!(fresh["labels"], json!([]));
        let res = put_labels(&app, &key, t, json!(["VIP", "billing", "vip", " Billing "])).await;
        assert_eq!(res.status(), 200);
        let labelled: Value = res.json().await.expect("json");
        assert_eq!(labelled["labels"], json!(["Billing", "vip"]), "stored names, alphabetical, each once");
        let (_, got) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
        assert_eq!(got, labelled);
        let (_, listed) = app.get_json("/v1/threads", &key).await;
        assert_eq!(listed["data"][0], labelled);
        // The same set again, in another order: no change, no event.
        assert_eq!(put_labels(&app, &key, t, json!(["billing", "VIP"])).await.status(), 200);
        let cleared: Value = put_labels(&app, &key, t, json!([])).await.json().await.expect("json");
        assert_eq!(cleared["labels"], json!([]));

        let events = sql_json(
            &app,
            "SELECT coalesce(json_agg(payload::jsonb -> 'data' ORDER BY id), '[]')::text AS j FROM webhook_events \
             WHERE workspace_id = $1 AND event_type = 'thread.labels_changed'",
            ws.id,
        )
        .await;
        assert_eq!(events, json!([labelled, cleared]), "one event per change, its data the thread as the API shows it");
    }

    #[tokio::test]
    async fn bad_label_sets_change_nothing() {
        let app = TestApp::spawn().await;
        let (ws, key) = app.advanced_with_key().await;
        let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
        let t = thread(&app, &key, ch, "+14155550123").await;
        label(&app, &key, "vip").await;
        assert_eq!(put_labels(&app, &key, t, json!(["vip"])).await.status(), 200);
        for (body, field) in [
            (json!({"labels": ["vip", "nope"]}), "labels"),
            (json!({"labels": ["vip", " "]}), "labels[1]"),
            (json!({"labels": "vip"}), "labels"),
            (json!({"labels": [1]}), "labels[0]"),
            (json!({}), "labels"),
            (json!({"labels": [], "extra": 1}), "extra"),
        ] {
            let res = app
                .authed(Method::PUT, &format!("/v1/threads/{t}/labels"), &key)
                .json(&body)
                .send()
                .await
                .expect("request");
            let p = problem(res, 422, "validation_failed").await;
            assert_eq!(error_fields(&p), [field], "{body}");
        }
        let many: Vec<String> = (0..51).map(|i| format!("l{i}")).collect();
        let p = problem(put_labels(&app, &key, t, json!(many)).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), ["labels"]);
        let (_, now) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
        assert_eq!(now["labels"], json!(["vip"]));

        problem(put_labels(&app, &key, 987654, json!([])).await, 404, "not_found").await;
        let (_, other_key) = app.advanced_with_key().await;
        label(&app, &other_key, "vip").await;
        problem(put_labels(&app, &other_key, t, json!(["vip"])).await, 404, "not_found").await;
        let reader = app.api_key_with_scopes(&ws, &["threads:read"]).await;
        problem(put_labels(&app, &reader, t, json!([])).await, 403, "insufficient_scope").await;
        let (_, still) = app.get_json(&format!("/v1/threads/{t}"), &key).await;
        assert_eq!(still["labels"], json!(["vip"]));
    }
}
