//! The platforms' rules before Meta's: free text only within 24 hours of the contact's latest
//! message (its platform time), `human_agent` on Messenger and Instagram up to 7 days, and
//! WhatsApp templates checked against the channel's catalogue, synced from the Graph API
//! stand-in and updated by Meta's signed template callbacks. Every refusal stores and sends nothing.

use reqwest::Method;
use serde_json::{json, Value};

use crate::connectors::{callback, dispatch, spawn, wa_inbound, whatsapp_channel, Graph};
use crate::credentials::sql_bool;
use crate::helpers::{error_fields, TestApp};

const TO: &str = "+14155550123";

/// A signed `message_template_status_update` body for `waba`.
pub(crate) fn template_status_update(waba: &str, name: &str, event: &str) -> Value {
    json!({"object": "whatsapp_business_account", "entry": [{"id": waba, "time": 1, "changes": [
        {"field": "message_template_status_update", "value": {"event": event, "message_template_id": 77,
         "message_template_name": name, "message_template_language": "en_US", "reason": "NONE"}}]}]})
}

fn meta_templates() -> Value {
    json!({"data": [
        {"name": "order_shipped", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
         "quality_score": {"score": "GREEN"},
         "components": [{"type": "HEADER", "format": "TEXT", "text": "Order"}, {"type": "BODY", "text": "Hi {{1}}, order {{2}} shipped."}]},
        {"name": "spring_sale", "language": "en_US", "status": "PENDING", "category": "MARKETING", "components": [{"type": "BODY", "text": "Sale!"}]},
        {"name": "old_offer", "language": "en_US", "status": "REJECTED", "category": "MARKETING", "rejected_reason": "PROMOTIONAL",
         "components": [{"type": "BODY", "text": "Offer {{1}}"}]}
    ], "paging": {"cursors": {"before": "a", "after": "b"}}})
}

async fn whatsapp_with_waba(app: &TestApp, key: &str, pn: &str, waba: &str) -> i64 {
    let body = json!({"channel_type": "whatsapp", "display_name": "Support", "identifier": "+14155550188", "credentials": {
        "phone_number_id": pn, "access_token": "wa-token-123", "app_secret": "app-secret-for-tests", "waba_id": waba}});
    let res = app.post_json("/v1/channels", key, &body).await;
    assert_eq!(res.status(), 201, "{:?}", res.text().await);
    res.json::<Value>().await.expect("json")["id"].as_i64().expect("id")
}

async fn messenger_channel(app: &TestApp, key: &str, page: &str) -> i64 {
    meta_channel(app, key, "messenger", page).await
}

/// A Messenger or Instagram channel on the account `page`.
async fn meta_channel(app: &TestApp, key: &str, channel_type: &str, page: &str) -> i64 {
    let body = json!({"channel_type": channel_type, "display_name": "Page", "identifier": page, "credentials": {
        "page_id": page, "access_token": "page-token-123", "app_secret": "app-secret-for-tests"}});
    let res = app.post_json("/v1/channels", key, &body).await;
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.expect("json")["id"].as_i64().expect("id")
}

async fn post(app: &TestApp, key: &str, body: Value) -> (u16, Value) {
    let res = app.post_json("/v1/messages", key, &body).await;
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn stored(app: &TestApp) -> (bool, bool) {
    (
        sql_bool(app, "EXISTS (SELECT 1 FROM messages WHERE direction = 'outbound')").await,
        sql_bool(app, "EXISTS (SELECT 1 FROM contacts)").await,
    )
}

async fn thread_of(app: &TestApp, key: &str, id: i64) -> Value {
    app.get_json(&format!("/v1/threads/{id}"), key).await.1
}

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).expect("format")
}

#[tokio::test]
async fn a_first_free_text_message_to_a_new_recipient_is_refused_and_nothing_is_stored_or_sent() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-w1").await;
    let (status, p) = post(&app, &key, json!({"channel_id": ch, "content": "Hi", "to": TO})).await;
    assert_eq!((status, p["code"].as_str()), (422, Some("service_window_closed")), "{p}");
    assert!(p.get("expires_at").is_some_and(Value::is_null), "never open: {p}");
    assert_eq!(stored(&app).await, (false, false), "no contact, thread or message");
    assert!(!sql_bool(&app, "EXISTS (SELECT 1 FROM webhook_events WHERE event_type <> 'channel.created')").await);
    dispatch(&app).await;
    assert!(graph_sends(&graph).is_empty(), "nothing was sent to the platform");
}

/// Sends refused together in one group commit leave no idempotency key behind: a retry with the
/// key is judged again (here refused again, never a 500 for a key without its message).
#[tokio::test]
async fn refused_sends_of_a_group_leave_no_idempotency_key_behind() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-w0").await;
    let send_all = || {
        futures_util::future::join_all((0..48).map(|i| {
            let req = app
                .authed(Method::POST, "/v1/messages", &key)
                .header("Idempotency-Key", format!("k-{i}"))
                .json(&json!({"channel_id": ch, "content": "Hi", "to": format!("+1415557{i:04}")}));
            async move {
                let res = req.send().await.expect("request");
                let status = res.status().as_u16();
                (status, res.json::<Value>().await.unwrap_or(Value::Null)["code"].clone())
            }
        }))
    };
    for round in 0..2 {
        let answers = send_all().await;
        assert!(answers.iter().all(|a| *a == (422, json!("service_window_closed"))), "round {round}: {answers:?}");
        assert!(!sql_bool(&app, "EXISTS (SELECT 1 FROM idempotency_keys)").await, "round {round}");
    }
    assert_eq!(stored(&app).await, (false, false));
}

fn graph_sends(graph: &Graph) -> Vec<String> {
    graph.seen_paths()
}

#[tokio::test]
async fn the_window_follows_the_platform_time_of_the_contacts_latest_message() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_channel(&app, &key, "pn-w2").await;
    let now = time::OffsetDateTime::now_utc().replace_nanosecond(0).expect("ns");
    // The contact wrote 25 hours ago: the callback carries that time, received only now.
    let old = now - time::Duration::hours(25);
    let res = callback(
        &app,
        "whatsapp",
        &wa_inbound("pn-w2", "wamid.old", "14155550123", "Hello", old.unix_timestamp()),
        None,
    )
    .await;
    assert_eq!(res.status(), 200);
    let (_, threads) = app.get_json("/v1/threads", &key).await;
    let thread = threads["data"][0]["id"].as_i64().expect("thread");
    let window = &thread_of(&app, &key, thread).await["service_window"];
    assert_eq!(*window, json!({"open": false, "expires_at": rfc3339(old + time::Duration::hours(24))}));
    let (status, p) =
        post(&app, &key, json!({"channel_id": ch, "content": "Sorry for the wait", "thread_id": thread})).await;
    assert_eq!((status, p["code"].as_str()), (422, Some("service_window_closed")));
    assert_eq!(p["expires_at"], json!(rfc3339(old + time::Duration::hours(24))));
    let (status, _) = post(&app, &key, json!({"channel_id": ch, "content": "Sorry", "to": TO})).await;
    assert_eq!(status, 422, "by address too");
    assert!(!stored(&app).await.0, "nothing stored");

    // A second message, 2 hours ago, moves the window.
    let recent = now - time::Duration::hours(2);
    callback(
        &app,
        "whatsapp",
        &wa_inbound("pn-w2", "wamid.new", "14155550123", "Anyone?", recent.unix_timestamp()),
        None,
    )
    .await;
    let window = &thread_of(&app, &key, thread).await["service_window"];
    assert_eq!(*window, json!({"open": true, "expires_at": rfc3339(recent + time::Duration::hours(24))}));
    // A late callback for an even older message moves nothing.
    callback(
        &app,
        "whatsapp",
        &wa_inbound(
            "pn-w2",
            "wamid.late",
            "14155550123",
            "Earlier",
            (now - time::Duration::hours(30)).unix_timestamp(),
        ),
        None,
    )
    .await;
    assert_eq!(
        thread_of(&app, &key, thread).await["service_window"]["expires_at"],
        json!(rfc3339(recent + time::Duration::hours(24)))
    );

    let (status, m) = post(&app, &key, json!({"channel_id": ch, "content": "Here to help", "thread_id": thread})).await;
    assert_eq!(status, 201, "{m}");
    let (status, m2) = post(&app, &key, json!({"channel_id": ch, "content": "And by number", "to": TO})).await;
    assert_eq!((status, &m2["thread_id"]), (201, &json!(thread)));
    dispatch(&app).await;
    assert_eq!(graph_sends(&graph).len(), 2, "only the two admitted messages reached the platform");
    assert_eq!(m["status"], "queued");
}

#[tokio::test]
async fn human_agent_may_answer_on_messenger_up_to_7_days_with_metas_tag() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = messenger_channel(&app, &key, "page-w3").await;
    let wrote = time::OffsetDateTime::now_utc().replace_nanosecond(0).expect("ns") - time::Duration::days(3);
    app.contact_wrote_at(ch, "psid-7", wrote).await;
    let (status, p) = post(&app, &key, json!({"channel_id": ch, "content": "Late answer", "to": "psid-7"})).await;
    assert_eq!((status, p["code"].as_str()), (422, Some("service_window_closed")));
    let (status, m) =
        post(&app, &key, json!({"channel_id": ch, "content": "Late answer", "to": "psid-7", "tag": "human_agent"}))
            .await;
    assert_eq!(status, 201, "{m}");
    dispatch(&app).await;
    let sent = graph.seen_bodies();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0]["messaging_type"].as_str(), sent[0]["tag"].as_str()),
        (Some("MESSAGE_TAG"), Some("HUMAN_AGENT"))
    );

    // Past 7 days: refused, with the end of those 7 days.
    let long_ago = wrote - time::Duration::days(5);
    app.contact_wrote_at(ch, "psid-8", long_ago).await;
    let (status, p) =
        post(&app, &key, json!({"channel_id": ch, "content": "Too late", "to": "psid-8", "tag": "human_agent"})).await;
    assert_eq!((status, p["code"].as_str()), (422, Some("service_window_closed")));
    assert_eq!(p["expires_at"], json!(rfc3339(long_ago + time::Duration::days(7))));
    dispatch(&app).await;
    assert_eq!(graph.seen_bodies().len(), 1, "nothing more was sent");
}

#[tokio::test]
async fn a_tag_on_whatsapp_or_another_tag_names_tag_and_changes_nothing() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let wa = whatsapp_channel(&app, &key, "pn-w4").await;
    let fb = messenger_channel(&app, &key, "page-w4").await;
    app.contact_wrote(fb, "psid-1").await;
    for body in [
        json!({"channel_id": wa, "content": "Hi", "to": TO, "tag": "human_agent"}),
        json!({"channel_id": fb, "content": "Hi", "to": "psid-1", "tag": "ACCOUNT_UPDATE"}),
        json!({"channel_id": fb, "content": "Hi", "to": "psid-1", "tag": ""}),
    ] {
        let (status, p) = post(&app, &key, body.clone()).await;
        assert_eq!((status, error_fields(&p)), (422, vec!["tag".to_owned()]), "{body}");
    }
    assert!(!stored(&app).await.0, "nothing stored");
    dispatch(&app).await;
    assert!(graph.seen_bodies().is_empty());
}

#[tokio::test]
async fn templates_are_synced_listed_and_sends_checked_against_them() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    // Setting credentials with a WABA syncs the catalogue at once.
    let ch = whatsapp_with_waba(&app, &key, "pn-w5", "waba-5").await;
    let (status, list) = app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["next_cursor"], Value::Null);
    let names: Vec<&str> = list["data"].as_array().expect("data").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["old_offer", "order_shipped", "spring_sale"]);
    let shipped = &list["data"][1];
    let mut fields: Vec<&str> = shipped.as_object().expect("object").keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        ["body", "category", "language", "name", "parameters", "quality", "rejected_reason", "status", "updated_at"]
    );
    assert_eq!(
        (shipped["status"].as_str(), shipped["parameters"].as_i64(), shipped["quality"].as_str()),
        (Some("approved"), Some(2), Some("GREEN"))
    );
    assert_eq!(
        (list["data"][0]["status"].as_str(), list["data"][0]["rejected_reason"].as_str()),
        (Some("rejected"), Some("PROMOTIONAL"))
    );
    assert!(graph.proof_paths().iter().any(|p| p == "/v21.0/waba-5/message_templates"));

    let tpl = |name: &str, language: &str, params: &[&str]| {
        json!({"channel_id": ch, "content": "Order update", "to": TO,
        "template": {"name": name, "language": language, "parameters": params}})
    };
    for (body, field) in [
        (tpl("order_shiped", "en_US", &["Ana", "42"]), "template.name"),
        (tpl("order_shipped", "de", &["Ana", "42"]), "template.name"),
        // A code of Meta's with digits is a language, unknown here.
        (tpl("order_shipped", "es_419", &["Ana", "42"]), "template.name"),
        (tpl("order_shipped", "en_US", &["Ana"]), "template.parameters"),
    ] {
        let (status, p) = post(&app, &key, body.clone()).await;
        assert_eq!((status, error_fields(&p)), (422, vec![field.to_owned()]), "{body}");
    }
    for name in ["spring_sale", "old_offer"] {
        let params: &[&str] = if name == "old_offer" { &["x"] } else { &[] };
        let (status, p) = post(&app, &key, tpl(name, "en_US", params)).await;
        assert_eq!((status, p["code"].as_str()), (422, Some("template_not_approved")), "{name}: {p}");
    }
    assert_eq!(stored(&app).await, (false, false), "no contact, thread or message for a refused template");
    dispatch(&app).await;
    assert!(graph.seen_bodies().is_empty(), "nothing was sent to the platform");

    // An approved template with its parameters opens the conversation.
    let (status, m) = post(&app, &key, tpl("order_shipped", "en_US", &["Ana", "42"])).await;
    assert_eq!(status, 201, "{m}");
    dispatch(&app).await;
    assert_eq!(graph.seen_bodies()[0]["template"]["name"], "order_shipped");

    // Gone at Meta: gone here after a sync on demand.
    graph.templates_reply(
        200,
        json!({"data": [{"name": "order_shipped", "language": "en_US", "status": "APPROVED",
        "category": "UTILITY", "components": [{"type": "BODY", "text": "Hi {{1}}, order {{2}} shipped."}]}]}),
    );
    let res =
        app.authed(Method::POST, &format!("/v1/channels/{ch}/templates/sync"), &key).send().await.expect("request");
    assert_eq!(res.status(), 200);
    let synced: Value = res.json().await.expect("json");
    assert_eq!(synced["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await.1, synced);
}

/// The catalogue is the business account's: credentials of another account, or of none, empty it
/// (sends were checked against the old account's templates until a sync that never came); the
/// same account keeps it.
#[tokio::test]
async fn new_credentials_without_the_business_account_empty_the_catalogue() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_with_waba(&app, &key, "pn-w9", "waba-9").await;
    async fn listed(app: &TestApp, key: &str, ch: i64) -> usize {
        app.get_json(&format!("/v1/channels/{ch}/templates"), key).await.1["data"].as_array().map_or(0, Vec::len)
    }
    assert_eq!(listed(&app, &key, ch).await, 3);
    let credentials = |waba: Option<&str>| {
        let mut c =
            json!({"phone_number_id": "pn-w9", "access_token": "wa-token-456", "app_secret": "app-secret-for-tests"});
        if let Some(w) = waba {
            c["waba_id"] = json!(w);
        }
        json!({"credentials": c})
    };
    let patch = |body: Value| app.authed(Method::PATCH, &format!("/v1/channels/{ch}"), &key).json(&body).send();
    // Meta cannot be read now: the same account keeps its catalogue meanwhile.
    graph.templates_reply(500, json!({"error": {"message": "down"}}));
    assert_eq!(patch(credentials(Some("waba-9"))).await.expect("request").status(), 200);
    assert_eq!(listed(&app, &key, ch).await, 3);
    // Another account, or none: nothing of the old account's list is left.
    assert_eq!(patch(credentials(None)).await.expect("request").status(), 200);
    assert_eq!(listed(&app, &key, ch).await, 0);
    let send = json!({"channel_id": ch, "content": "Order update", "to": TO,
        "template": {"name": "order_shipped", "language": "en_US", "parameters": ["Ana", "42"]}});
    let (status, p) = post(&app, &key, send).await;
    assert_eq!((status, error_fields(&p)), (422, vec!["template.name".to_owned()]), "{p}");
}

#[tokio::test]
async fn a_signed_template_status_update_changes_the_status_at_once_and_emits_its_event() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = whatsapp_with_waba(&app, &key, "pn-w6", "waba-6").await;
    // Another tenant's app secret never vouches for this WABA.
    let body = template_status_update("waba-6", "order_shipped", "PAUSED");
    let raw = serde_json::to_vec(&body).expect("json");
    let forged = {
        use hmac::{Hmac, Mac};
        let mut m = Hmac::<sha2::Sha256>::new_from_slice(b"someone-elses-secret").expect("key");
        m.update(&raw);
        format!("sha256={}", m.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
    };
    assert_eq!(callback(&app, "whatsapp", &body, Some(forged)).await.status(), 401);
    assert_eq!(callback(&app, "whatsapp", &body, Some(String::new())).await.status(), 401);
    assert!(
        !sql_bool(&app, "EXISTS (SELECT 1 FROM webhook_events WHERE event_type = 'template.status_updated')").await
    );

    assert_eq!(callback(&app, "whatsapp", &body, None).await.status(), 200);
    let (_, list) = app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await;
    let shipped =
        list["data"].as_array().expect("data").iter().find(|t| t["name"] == "order_shipped").expect("template").clone();
    assert_eq!(shipped["status"], "paused");
    let send_shipped = || {
        post(
            &app,
            &key,
            json!({"channel_id": ch, "content": "Order update", "to": TO,
            "template": {"name": "order_shipped", "language": "en_US", "parameters": ["Ana", "42"]}}),
        )
    };
    let (status, p) = send_shipped().await;
    assert_eq!((status, p["code"].as_str()), (422, Some("template_not_approved")));
    let all = crate::events_helpers::feed(&app, &key).await;
    let events: Vec<&Value> = all.iter().filter(|e| e["type"] == "template.status_updated").collect();
    assert_eq!(events.len(), 1);
    let mut expected = shipped;
    expected["channel_id"] = json!(ch);
    assert_eq!(events[0]["data"], expected);
    assert_eq!(events[0]["workspace_id"], ws.id);
    let (_, types) = app.get_json("/v1/event-types", &key).await;
    assert!(types["data"].as_array().expect("data").iter().any(|t| t["name"] == "template.status_updated"));

    // Locking is about editing: nothing changes. Reinstated, the paused template may be sent again.
    let locked = template_status_update("waba-6", "order_shipped", "LOCKED");
    assert_eq!(callback(&app, "whatsapp", &locked, None).await.status(), 200);
    assert_eq!(crate::events_helpers::feed(&app, &key).await.len(), all.len(), "no event for a lock");
    let reinstated = template_status_update("waba-6", "order_shipped", "REINSTATED");
    assert_eq!(callback(&app, "whatsapp", &reinstated, None).await.status(), 200);
    let (_, list) = app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await;
    assert!(list["data"]
        .as_array()
        .expect("data")
        .iter()
        .any(|t| t["name"] == "order_shipped" && t["status"] == "approved"));
    let (status, p) = send_shipped().await;
    assert_eq!(status, 201, "{p}");
}

#[tokio::test]
async fn template_routes_follow_the_channel_scopes_and_the_workspace() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_with_waba(&app, &key, "pn-w7", "waba-7").await;
    let plain = whatsapp_channel(&app, &key, "pn-w8").await;
    let (_, other) = app.advanced_with_key().await;
    assert_eq!(app.get_json(&format!("/v1/channels/{ch}/templates"), &other).await.0, 404);
    let res =
        app.authed(Method::POST, &format!("/v1/channels/{ch}/templates/sync"), &other).send().await.expect("request");
    assert_eq!(res.status(), 404);
    // A channel without a WABA cannot be synced: the field to set is named.
    let res =
        app.authed(Method::POST, &format!("/v1/channels/{plain}/templates/sync"), &key).send().await.expect("request");
    assert_eq!(res.status(), 422);
    let p: Value = res.json().await.expect("json");
    assert_eq!(error_fields(&p), ["credentials.waba_id"]);
    // Meta out of reach: 502, the catalogue unchanged.
    graph.templates_reply(500, json!({"error": {"message": "boom"}}));
    let res =
        app.authed(Method::POST, &format!("/v1/channels/{ch}/templates/sync"), &key).send().await.expect("request");
    assert_eq!(res.status(), 502);
    assert_eq!(
        app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await.1["data"].as_array().map(Vec::len),
        Some(3)
    );
    // A waba_id on a Messenger channel is refused, naming it.
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "messenger", "display_name": "P", "identifier": "p1",
        "credentials": {"page_id": "p1", "access_token": "page-token-123", "waba_id": "waba-x"}}),
        )
        .await;
    let p: Value = res.json().await.expect("json");
    assert_eq!(error_fields(&p), ["credentials.waba_id"]);
    // A Messenger channel has no templates: its sync, like its listing, is an empty list, and
    // Meta is not asked.
    let res = app
        .post_json(
            "/v1/channels",
            &key,
            &json!({"channel_type": "messenger", "display_name": "P", "identifier": "p1",
        "credentials": {"page_id": "p1", "access_token": "page-token-123"}}),
        )
        .await;
    assert_eq!(res.status(), 201);
    let messenger = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let asked = graph.proof_paths().iter().filter(|p| p.ends_with("/message_templates")).count();
    let res = app
        .authed(Method::POST, &format!("/v1/channels/{messenger}/templates/sync"), &key)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json")["data"], json!([]));
    assert_eq!(app.get_json(&format!("/v1/channels/{messenger}/templates"), &key).await.1["data"], json!([]));
    let after = graph.proof_paths().iter().filter(|p| p.ends_with("/message_templates")).count();
    assert_eq!(after, asked, "nothing to read at Meta");
}

#[tokio::test]
async fn the_channels_page_shows_the_window_rule_and_each_template_with_its_status() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (ws, key) = app.advanced_with_key().await;
    whatsapp_with_waba(&app, &key, "pn-w9", "waba-9").await;
    let browser = crate::pages::sign_in(&app, &ws).await;
    let res = browser.get(&app, "/settings/workspace/channels").await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.expect("html");
    assert!(
        html.contains("24 hours") && html.contains("service_window_closed") && html.contains("human_agent"),
        "the rule"
    );
    for (name, status) in
        [("order_shipped", "approved"), ("spring_sale", "pending"), ("old_offer", "rejected (PROMOTIONAL)")]
    {
        let row = html.split(&format!("data-template=\"{name}\"")).nth(1).expect(name);
        let row = row.split("</tr>").next().expect("row");
        assert!(row.contains(status), "{name}: {row}");
    }
    // Another workspace's member sees none of it.
    let (other, _) = app.advanced_with_key().await;
    let stranger = crate::pages::sign_in(&app, &other).await;
    let html = stranger.get(&app, "/settings/workspace/channels").await.text().await.expect("html");
    assert!(!html.contains("order_shipped"));
}

#[tokio::test]
async fn upgrading_gives_existing_threads_the_window_of_their_stored_inbound_messages() {
    use diesel_async::SimpleAsyncConnection;
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let wrote = time::OffsetDateTime::now_utc().replace_nanosecond(0).expect("ns") - time::Duration::hours(3);
    app.contact_wrote_at(ch, TO, wrote).await;
    app.contact_wrote_at(ch, TO, wrote - time::Duration::hours(5)).await;
    let (_, threads) = app.get_json("/v1/threads", &key).await;
    let thread = threads["data"][0]["id"].as_i64().expect("thread");
    // The database as it was before the migration, filled; then the migration.
    let mut conn = app.db.conn().await.expect("conn");
    conn.batch_execute(include_str!("../../../../migrations/2026-11-26-000801_service_window/down.sql"))
        .await
        .expect("down");
    conn.batch_execute(include_str!("../../../../migrations/2026-11-26-000801_service_window/up.sql"))
        .await
        .expect("up");
    let window = &thread_of(&app, &key, thread).await["service_window"];
    assert_eq!(*window, json!({"open": true, "expires_at": rfc3339(wrote + time::Duration::hours(24))}));
    let (status, _) = post(&app, &key, json!({"channel_id": ch, "content": "Welcome back", "thread_id": thread})).await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn a_status_update_for_a_template_not_yet_synced_brings_it_from_meta_with_its_event() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_with_waba(&app, &key, "pn-w10", "waba-10").await;
    // Created at Meta since the last sync, and approved at once.
    let mut listed = meta_templates();
    listed["data"].as_array_mut().expect("data").push(json!({"name": "welcome_back", "language": "en_US",
        "status": "APPROVED", "category": "UTILITY", "components": [{"type": "BODY", "text": "Welcome back, {{1}}!"}]}));
    graph.templates_reply(200, listed);
    let body = template_status_update("waba-10", "welcome_back", "APPROVED");
    assert_eq!(callback(&app, "whatsapp", &body, None).await.status(), 200);
    let (_, list) = app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await;
    let new = list["data"].as_array().expect("data").iter().find(|t| t["name"] == "welcome_back").cloned();
    let new = new.expect("the new template is in the catalogue at once");
    assert_eq!((new["status"].as_str(), new["parameters"].as_i64()), (Some("approved"), Some(1)));
    let all = crate::events_helpers::feed(&app, &key).await;
    let events: Vec<&Value> = all.iter().filter(|e| e["type"] == "template.status_updated").collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["name"], "welcome_back");
    // And it can be sent right away.
    let (status, m) = post(
        &app,
        &key,
        json!({"channel_id": ch, "content": "Welcome back", "to": TO,
        "template": {"name": "welcome_back", "language": "en_US", "parameters": ["Ana"]}}),
    )
    .await;
    assert_eq!(status, 201, "{m}");
}

#[tokio::test]
async fn template_status_updates_share_the_bad_signature_budget_of_the_other_callbacks() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_with_waba(&app, &key, "pn-w11", "waba-11").await;
    let body = template_status_update("waba-11", "order_shipped", "PAUSED");
    let forged = "sha256=".to_owned() + &"0".repeat(64);
    for n in 0..20 {
        assert_eq!(callback(&app, "whatsapp", &body, Some(forged.clone())).await.status(), 401, "forged #{n}");
    }
    // The 21st bad signature of the minute, and then even a good one, from the same address: 429.
    let res = callback(&app, "whatsapp", &body, Some(forged)).await;
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    assert_eq!(callback(&app, "whatsapp", &body, None).await.status(), 429);
    let (_, list) = app.get_json(&format!("/v1/channels/{ch}/templates"), &key).await;
    let shipped = list["data"].as_array().expect("data").iter().find(|t| t["name"] == "order_shipped").cloned();
    assert_eq!(shipped.expect("template")["status"], "approved", "nothing applied");
    // A body over 256 KiB is refused before anything is read.
    let mut big = template_status_update("waba-11", "order_shipped", "PAUSED");
    big["padding"] = json!("x".repeat(300 * 1024));
    assert_eq!(callback(&app, "whatsapp", &big, None).await.status(), 413);
}

#[tokio::test]
async fn human_agent_may_answer_on_instagram_up_to_7_days_too() {
    let graph = Graph::start();
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = meta_channel(&app, &key, "instagram", "ig-w12").await;
    let wrote = time::OffsetDateTime::now_utc().replace_nanosecond(0).expect("ns") - time::Duration::days(6);
    app.contact_wrote_at(ch, "igsid-1", wrote).await;
    let (status, p) = post(&app, &key, json!({"channel_id": ch, "content": "Late", "to": "igsid-1"})).await;
    assert_eq!((status, p["code"].as_str()), (422, Some("service_window_closed")));
    assert_eq!(p["expires_at"], json!(rfc3339(wrote + time::Duration::days(1))));
    let tagged = json!({"channel_id": ch, "content": "Late", "to": "igsid-1", "tag": "human_agent"});
    let (status, m) = post(&app, &key, tagged).await;
    assert_eq!(status, 201, "{m}");
    dispatch(&app).await;
    let sent = graph.seen_bodies();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0]["messaging_type"].as_str(), sent[0]["tag"].as_str()),
        (Some("MESSAGE_TAG"), Some("HUMAN_AGENT"))
    );

    let long_ago = wrote - time::Duration::days(2);
    app.contact_wrote_at(ch, "igsid-2", long_ago).await;
    let late = json!({"channel_id": ch, "content": "Too late", "to": "igsid-2", "tag": "human_agent"});
    let (status, p) = post(&app, &key, late).await;
    assert_eq!((status, p["code"].as_str()), (422, Some("service_window_closed")));
    assert_eq!(p["expires_at"], json!(rfc3339(long_ago + time::Duration::days(7))));
    dispatch(&app).await;
    assert_eq!(graph.seen_bodies().len(), 1, "nothing more was sent");
}

#[tokio::test]
async fn the_periodic_sync_loop_refreshes_catalogues_that_are_due() {
    let graph = Graph::start();
    graph.templates_reply(200, meta_templates());
    let app = spawn(&graph).await;
    let (_, key) = app.advanced_with_key().await;
    let ch = whatsapp_with_waba(&app, &key, "pn-w13", "waba-13").await;
    let path = format!("/v1/channels/{ch}/templates");
    assert_eq!(app.get_json(&path, &key).await.1["data"].as_array().map(Vec::len), Some(3));
    // At Meta, two templates were deleted; the catalogue was last synced over an hour ago.
    graph.templates_reply(
        200,
        json!({"data": [{"name": "order_shipped", "language": "en_US", "status": "PAUSED",
        "category": "UTILITY", "components": [{"type": "BODY", "text": "Hi {{1}}, order {{2}} shipped."}]}]}),
    );
    let mut conn = app.db.conn().await.expect("conn");
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query("UPDATE channels SET templates_synced_at = now() - interval '61 minutes' WHERE id = $1")
            .bind::<diesel::sql_types::BigInt, _>(ch),
        &mut conn,
    )
    .await
    .expect("due");
    let mut settings = app.settings.clone();
    app::secrets::resolve_key(&mut settings, &app.db, false).await.expect("key");
    settings.connectors.workers = 1;
    settings.connectors.template_sync_minutes = 60;
    let loops = app::connectors::start(&settings, &app.db).expect("loops");
    let started = std::time::Instant::now();
    let list = loop {
        let (_, list) = app.get_json(&path, &key).await;
        if list["data"].as_array().map(Vec::len) == Some(1) {
            break list;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "not synced: {list}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    loops.stop(std::time::Duration::from_secs(2)).await;
    assert_eq!(
        (list["data"][0]["name"].as_str(), list["data"][0]["status"].as_str()),
        (Some("order_shipped"), Some("paused"))
    );
    let fetched = graph.proof_paths().iter().filter(|p| *p == "/v21.0/waba-13/message_templates").count();
    assert_eq!(fetched, 2, "once when the credentials were set, once by the loop");
}

#[tokio::test]
async fn the_template_list_pages_by_name_and_refuses_bad_pages() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550177", "active").await; // holds the test template
    for i in 0..29 {
        app.approved_template(ch, &format!("t_{i:02}"), 0).await;
    }
    let path = format!("/v1/channels/{ch}/templates");
    let (status, first) = app.get_json(&path, &key).await;
    assert_eq!(status, 200);
    assert_eq!(first["data"].as_array().map(Vec::len), Some(25), "the default page");
    let mut names: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = cursor.as_ref().map(|c| format!("?limit=7&cursor={c}")).unwrap_or_else(|| "?limit=7".into());
        let (status, page) = app.get_json(&format!("{path}{query}"), &key).await;
        assert_eq!(status, 200, "{page}");
        let data = page["data"].as_array().expect("data");
        assert!(data.len() <= 7);
        names.extend(data.iter().map(|t| t["name"].as_str().expect("name").to_owned()));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!((names.len(), names.clone()), (30, sorted), "every template once, by name");
    for (query, field) in [("limit=0", "limit"), ("limit=101", "limit"), ("cursor=nope", "cursor")] {
        let res = app.authed(Method::GET, &format!("{path}?{query}"), &key).send().await.expect("request");
        assert_eq!(res.status(), 422, "{query}");
        let p: Value = res.json().await.expect("problem");
        assert_eq!(error_fields(&p), [field], "{query}");
    }
}

/// A template send may leave `content` out: the message's text is then the template's body with
/// its parameters filled in. Without a template, `content` is required (422 naming it).
#[tokio::test]
async fn a_template_send_without_content_stores_the_filled_in_body() {
    let app = TestApp::spawn().await;
    let (_, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    crate::credentials::sql(
        &app,
        &format!(
            "INSERT INTO whatsapp_templates (workspace_id, channel_id, name, language, category, status, parameters, body)
             SELECT workspace_id, id, 'order_shipped', 'en_US', 'UTILITY', 'approved', 2,
                    'Hi {{{{1}}}}, order {{{{2}}}} has shipped.' FROM channels WHERE id = {ch}"
        ),
    )
    .await;
    let template = json!({"name": "order_shipped", "language": "en_US", "parameters": ["Ann", "#1042"]});
    let (status, sent) = post(&app, &key, json!({"channel_id": ch, "to": "+14155550123", "template": template})).await;
    assert_eq!(status, 201, "{sent}");
    assert_eq!(sent["content"], "Hi Ann, order #1042 has shipped.");
    // Given, it is kept as it is.
    let (status, sent) =
        post(&app, &key, json!({"channel_id": ch, "to": "+14155550123", "template": template, "content": "Shipped!"}))
            .await;
    assert_eq!((status, &sent["content"]), (201, &json!("Shipped!")));
    let (status, refused) = post(&app, &key, json!({"channel_id": ch, "to": "+14155550123"})).await;
    assert_eq!(status, 422);
    assert_eq!(error_fields(&refused), ["content"]);
}
