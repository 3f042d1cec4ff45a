//! `/v1/reports/conversations` and its CSV (docs/contract.md, "Conversation reports, business
//! hours and SLAs"): conversations built with known times (inbound platform timestamps in the
//! past, replies now) give the figures a hand computation gives: a reopen starts a new cycle, an
//! AI reply is a first response of its own, business hours that exclude the window make every
//! duration 0 (still counted), the CSV and the assistant's `get_conversation_report` (execute
//! endpoint and MCP) say what the JSON says; bad input and access, on both.

use reqwest::Method;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::assistant_helpers::{execute_path, sql_json};
use crate::credentials::{add_member, token_for};
use crate::helpers::{error_fields, problem, TestApp};

/// Whole seconds from `a` to `b`.
fn secs(a: OffsetDateTime, b: OffsetDateTime) -> i64 {
    (b - a).whole_seconds()
}

/// `{"count", "avg", "median", "p90"}` by hand: the mean, and the values at ranks ⌈n/2⌉ and ⌈0.9n⌉.
fn figure(values: &[i64]) -> Value {
    if values.is_empty() {
        return json!({"count": 0, "avg": null, "median": null, "p90": null});
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    let rank = |p: f64| v[((p * n as f64).ceil() as usize).max(1) - 1];
    let avg = v.iter().sum::<i64>() as f64 / n as f64;
    json!({"count": n, "avg": avg, "median": rank(0.5), "p90": rank(0.9)})
}

fn figure_eq(got: &Value, want: &Value, what: &str) {
    assert_eq!(got["count"], want["count"], "{what} count: {got} vs {want}");
    assert_eq!(got["median"], want["median"], "{what} median: {got} vs {want}");
    assert_eq!(got["p90"], want["p90"], "{what} p90: {got} vs {want}");
    match (got["avg"].as_f64(), want["avg"].as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-6, "{what} avg: {g} vs {w}"),
        (g, w) => assert_eq!(g, w, "{what} avg"),
    }
}

/// A reply to `to` by `sender` now; its `created_at`.
pub async fn reply(app: &TestApp, key: &str, channel: i64, to: &str, sender: Value) -> OffsetDateTime {
    let body = json!({"channel_id": channel, "to": to, "content": "On it", "sender": sender});
    let res = app.post_json("/v1/messages", key, &body).await;
    assert_eq!(res.status(), 201, "reply");
    let m: Value = res.json().await.expect("json");
    OffsetDateTime::parse(m["created_at"].as_str().expect("created_at"), &Rfc3339).expect("time")
}

async fn report(app: &TestApp, key: &str, query: &str) -> Value {
    let (status, body) = app.get_json(&format!("/v1/reports/conversations?{query}"), key).await;
    assert_eq!(status, 200, "{query}: {body}");
    body
}

async fn csv(app: &TestApp, key: &str, query: &str) -> Vec<Vec<String>> {
    let res =
        app.authed(Method::GET, &format!("/v1/reports/conversations.csv?{query}"), key).send().await.expect("csv");
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"].to_str().expect("type").starts_with("text/csv"));
    let text = res.text().await.expect("text");
    text.split("\r\n").filter(|l| !l.is_empty()).map(|l| l.split(',').map(str::to_owned).collect()).collect()
}

/// The arguments of `get_conversation_report` that ask what the REST query
/// `since=…&until=…&group_by=…&business_hours=…` asks.
fn tool_arguments(since: &str, until: &str, group_by: &str, business_hours: bool) -> Value {
    json!({"since": since, "until": until, "group_by": group_by, "business_hours": business_hours})
}

/// `get_conversation_report` through the execute endpoint.
async fn tool(app: &TestApp, ws: i64, credential: &str, arguments: &Value) -> reqwest::Response {
    app.authed(Method::POST, &execute_path(ws), credential)
        .json(&json!({"tool": "get_conversation_report", "arguments": arguments}))
        .send()
        .await
        .expect("execute")
}

async fn tool_result(app: &TestApp, ws: i64, credential: &str, arguments: &Value) -> Value {
    let res = tool(app, ws, credential, arguments).await;
    let status = res.status();
    let body: Value = res.json().await.expect("json");
    assert_eq!(status, 200, "{arguments}: {body}");
    assert_eq!(body["tool"], "get_conversation_report");
    body["result"].clone()
}

/// MCP `tools/call` of `get_conversation_report`: the JSON-RPC result.
async fn mcp_call(app: &TestApp, ws: i64, credential: &str, arguments: &Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_conversation_report", "arguments": arguments}});
    let res = app
        .authed(Method::POST, &format!("/workspaces/{ws}/co-admin/mcp"), credential)
        .json(&call)
        .send()
        .await
        .expect("mcp");
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.expect("json");
    body["result"].clone()
}

/// The CSV row of a JSON group, cell for cell.
fn csv_row(g: &Value) -> Vec<String> {
    let cell = |v: &Value| match v {
        Value::Null => String::new(),
        Value::Number(n) => {
            n.as_f64().filter(|f| f.fract() != 0.0).map_or_else(|| n.to_string().replace(".0", ""), |f| f.to_string())
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut row = match &g["key"] {
        Value::Null => vec![String::new(), String::new(), String::new()],
        k => vec![cell(&k["type"]), cell(&k["id"]), cell(&k["name"])],
    };
    for f in ["conversations", "incoming_messages", "outgoing_messages", "resolutions"] {
        row.push(cell(&g[f]));
    }
    for f in ["first_response", "first_response_ai", "reply", "resolution"] {
        for part in ["count", "avg", "median", "p90"] {
            row.push(cell(&g[f][part]));
        }
    }
    row.push(cell(&g["sla"]["hit"]));
    row.push(cell(&g["sla"]["missed"]));
    row
}

#[tokio::test]
async fn figures_match_a_hand_computation_with_a_reopen_an_ai_reply_and_business_hours() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    let (member_email, _) = add_member(&app, ws.id, "agent").await;
    let member = sql_json(
        &app,
        &format!("SELECT json_build_object('id', id)::text AS j FROM users WHERE email = '{member_email}' AND $1 = $1"),
        ws.id,
    )
    .await["id"]
        .as_i64()
        .expect("member");
    let bot = sql_json(
        &app,
        "WITH a AS (INSERT INTO ai_agents (workspace_id, name, status) VALUES ($1, 'Bot', 'active') RETURNING id)
         SELECT json_build_object('id', id)::text AS j FROM a",
        ws.id,
    )
    .await["id"]
        .as_i64()
        .expect("bot");
    let (ana, ben) = ("+4915100000001", "+4915100000002");
    let now = OffsetDateTime::now_utc().replace_nanosecond(0).expect("whole second");

    // Ana writes twice (4 h and 3 h ago): one cycle, one run. The bot answers, then the admin.
    let t1 = now - Duration::hours(4);
    app.contact_wrote_at(ch, ana, t1).await;
    app.contact_wrote_at(ch, ana, now - Duration::hours(3)).await;
    let r1 = reply(&app, &key, ch, ana, json!({"type": "ai_agent", "id": bot})).await;
    let r2 = reply(&app, &key, ch, ana, json!({"type": "user", "id": ws.admin_id})).await;
    let threads =
        sql_json(&app, "SELECT json_agg(id ORDER BY id)::text AS j FROM threads WHERE workspace_id = $1", ws.id).await;
    let ana_thread = threads[0].as_i64().expect("thread");
    let before_resolve = OffsetDateTime::now_utc();
    let res = app
        .authed(Method::PATCH, &format!("/v1/threads/{ana_thread}"), &key)
        .json(&json!({"status": "resolved"}))
        .send()
        .await
        .expect("resolve");
    assert_eq!(res.status(), 200);
    let after_resolve = OffsetDateTime::now_utc();
    // Ana writes again: the resolved thread reopens, a new cycle starts at her message.
    let t3 = OffsetDateTime::now_utc().replace_nanosecond(0).expect("whole second");
    app.contact_wrote_at(ch, ana, t3).await;
    let r3 = reply(&app, &key, ch, ana, json!({"type": "user", "id": ws.admin_id})).await;
    // Ben wrote 2 h ago; the member answers.
    let t4 = now - Duration::hours(2);
    app.contact_wrote_at(ch, ben, t4).await;
    let r4 = reply(&app, &key, ch, ben, json!({"type": "user", "id": member})).await;

    let since = (now - Duration::days(1)).format(&Rfc3339).expect("since");
    let until = (now + Duration::hours(1)).format(&Rfc3339).expect("until");
    let period = format!("since={}&until={}", urlencode(&since), urlencode(&until));
    let body = report(&app, &key, &period).await;
    assert_eq!(body["business_hours"], false);
    let g = &body["groups"][0];
    assert_eq!(body["groups"].as_array().map(Vec::len), Some(1));
    assert_eq!(g["key"], Value::Null);
    assert_eq!((g["conversations"].as_i64(), g["incoming_messages"].as_i64()), (Some(3), Some(4)));
    assert_eq!((g["outgoing_messages"].as_i64(), g["resolutions"].as_i64()), (Some(4), Some(1)));
    figure_eq(&g["first_response"], &figure(&[secs(t1, r2), secs(t3, r3), secs(t4, r4)]), "first_response");
    figure_eq(&g["first_response_ai"], &figure(&[secs(t1, r1)]), "first_response_ai");
    figure_eq(&g["reply"], &figure(&[secs(t1, r1), secs(t3, r3), secs(t4, r4)]), "reply");
    let resolution = g["resolution"]["median"].as_i64().expect("resolution");
    assert!((secs(t1, before_resolve)..=secs(t1, after_resolve) + 1).contains(&resolution), "{resolution}");
    assert_eq!(g["sla"], json!({"hit": 0, "missed": 0}));

    // Per member: each response goes to whoever wrote it; the bot's to no member. A member is
    // named as the members list names them (their name in this workspace).
    let res = app
        .authed(Method::PATCH, &format!("/v1/users/{member}"), &key)
        .json(&json!({"name": "Ann B"}))
        .send()
        .await
        .expect("rename");
    assert_eq!(res.status(), 200);
    let agents = report(&app, &key, &format!("{period}&group_by=agent")).await;
    let of = |id: i64| {
        agents["groups"].as_array().expect("groups").iter().find(|g| g["key"]["id"] == id).cloned().expect("group")
    };
    let admin = of(ws.admin_id);
    assert_eq!(admin["key"]["type"], "user");
    figure_eq(&admin["first_response"], &figure(&[secs(t1, r2), secs(t3, r3)]), "admin first_response");
    figure_eq(&admin["reply"], &figure(&[secs(t3, r3)]), "admin reply");
    assert_eq!(admin["outgoing_messages"], 2);
    figure_eq(&of(member)["first_response"], &figure(&[secs(t4, r4)]), "member first_response");
    assert_eq!(of(member)["key"]["name"], "Ann B");

    // Per label: Ben's thread carries `vip` (its labels now).
    let ben_thread =
        sql_json(&app, "SELECT json_agg(id ORDER BY id)::text AS j FROM threads WHERE workspace_id = $1", ws.id).await
            [1]
        .as_i64()
        .expect("ben");
    let res = app.post_json("/v1/labels", &key, &json!({"name": "vip"})).await;
    assert_eq!(res.status(), 201);
    let res = app
        .authed(Method::PUT, &format!("/v1/threads/{ben_thread}/labels"), &key)
        .json(&json!({"labels": ["vip"]}))
        .send()
        .await
        .expect("labels");
    assert_eq!(res.status(), 200);
    let labels = report(&app, &key, &format!("{period}&group_by=label")).await;
    let vip = &labels["groups"][0];
    assert_eq!((vip["key"]["type"].as_str(), vip["key"]["name"].as_str()), (Some("label"), Some("vip")));
    assert_eq!((vip["conversations"].as_i64(), vip["incoming_messages"].as_i64()), (Some(1), Some(1)));
    figure_eq(&vip["reply"], &figure(&[secs(t4, r4)]), "vip reply");
    let channels = report(&app, &key, &format!("{period}&group_by=channel")).await;
    assert_eq!(channels["groups"][0]["key"], json!({"type": "channel", "id": ch, "name": "Test"}));
    assert_eq!(channels["groups"][0]["reply"], g["reply"]);

    // CSV = JSON = the assistant's tool (execute endpoint and MCP), for every grouping.
    for grouping in ["none", "agent", "label", "channel", "team"] {
        let json_report = report(&app, &key, &format!("{period}&group_by={grouping}")).await;
        let arguments = tool_arguments(&since, &until, grouping, false);
        assert_eq!(tool_result(&app, ws.id, &key, &arguments).await, json_report, "{grouping}: tool");
        let via_mcp = mcp_call(&app, ws.id, &key, &arguments).await;
        assert_eq!(via_mcp["isError"], false, "{grouping}: {via_mcp}");
        assert_eq!(via_mcp["structuredContent"], json_report, "{grouping}: MCP");
        let rows = csv(&app, &key, &format!("{period}&group_by={grouping}")).await;
        assert_eq!(rows[0].len(), 25, "{grouping} header");
        assert_eq!(rows[0][0], "key_type");
        let groups = json_report["groups"].as_array().expect("groups");
        assert_eq!(rows.len() - 1, groups.len(), "{grouping} rows");
        for (row, g) in rows[1..].iter().zip(groups) {
            assert_eq!(row, &csv_row(g), "{grouping}");
        }
    }

    // Business hours that exclude the whole window: every duration is 0 and still counted. The
    // hours set after the facts were stored apply to them too.
    let closed_day = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        [((now + Duration::days(3)).weekday().number_days_from_monday()) as usize];
    let hours = json!({"timezone": "UTC", "days": {closed_day: [["00:00", "24:00"]]}});
    let res = app.authed(Method::PUT, "/v1/business-hours", &key).json(&hours).send().await.expect("hours");
    assert_eq!(res.status(), 200);
    let business = report(&app, &key, &format!("{period}&business_hours=true")).await;
    assert_eq!(tool_result(&app, ws.id, &key, &tool_arguments(&since, &until, "none", true)).await, business);
    let b = &business["groups"][0];
    assert_eq!(business["business_hours"], true);
    figure_eq(&b["first_response"], &figure(&[0, 0, 0]), "business first_response");
    figure_eq(&b["first_response_ai"], &figure(&[0]), "business first_response_ai");
    figure_eq(&b["reply"], &figure(&[0, 0, 0]), "business reply");
    figure_eq(&b["resolution"], &figure(&[0]), "business resolution");
    assert_eq!(b["conversations"], 3);
    let wall = report(&app, &key, &period).await;
    assert_eq!(wall["groups"][0]["reply"], g["reply"], "the wall clock is unchanged");
    // Every hour open: business time is wall time again.
    let all_day = json!([["00:00", "24:00"]]);
    let open = json!({"timezone": "Europe/Berlin", "days": {"mon": all_day, "tue": all_day, "wed": all_day, "thu": all_day, "fri": all_day, "sat": all_day, "sun": all_day}});
    app.authed(Method::PUT, "/v1/business-hours", &key).json(&open).send().await.expect("hours");
    let again = report(&app, &key, &format!("{period}&business_hours=true")).await;
    assert_eq!(again["groups"][0]["reply"], g["reply"]);

    // A period that holds none of it: zeros and nulls.
    let (from, to) = (now + Duration::minutes(30), now + Duration::hours(2));
    let later_period = format!(
        "since={}&until={}",
        urlencode(&from.format(&Rfc3339).expect("since")),
        urlencode(&to.format(&Rfc3339).expect("until"))
    );
    let later = report(&app, &key, &later_period).await;
    assert_eq!(later["groups"][0]["conversations"], 0);
    figure_eq(&later["groups"][0]["reply"], &figure(&[]), "empty");
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

#[tokio::test]
async fn bad_report_queries_are_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    for (query, field) in [
        ("since=2026-11-03&until=2026-11-02", "since"),
        ("since=yesterday", "since"),
        ("until=2026-02-30", "until"),
        ("group_by=inbox", "group_by"),
        ("business_hours=sometimes", "business_hours"),
    ] {
        for path in ["/v1/reports/conversations", "/v1/reports/conversations.csv"] {
            let res = app.authed(Method::GET, &format!("{path}?{query}"), &key).send().await.expect("request");
            let body = problem(res, 422, "validation_failed").await;
            assert_eq!(error_fields(&body), [field], "{path}?{query}");
        }
    }
    let res = app.authed(Method::GET, "/v1/reports/conversations?inbox=1", &key).send().await.expect("request");
    assert_eq!(res.status(), 422, "unknown parameters are refused");

    // The assistant's tool refuses the same input, naming the argument: 422 from the execute
    // endpoint, a result with `isError` over MCP (so a model can correct its call).
    for (arguments, field) in [
        (json!({"since": "2026-11-03", "until": "2026-11-02"}), "since"),
        (json!({"since": "yesterday"}), "since"),
        (json!({"until": "2026-02-30"}), "until"),
        (json!({"since": "2024-01-01", "until": "2026-11-02"}), "since"),
        (json!({"group_by": "inbox"}), "group_by"),
        (json!({"business_hours": "sometimes"}), "business_hours"),
        (json!({"inbox": 1}), "inbox"),
    ] {
        let body = problem(tool(&app, ws.id, &key, &arguments).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&body), [format!("arguments.{field}")], "{arguments}");
        let via_mcp = mcp_call(&app, ws.id, &key, &arguments).await;
        assert_eq!(via_mcp["isError"], true, "{arguments}: {via_mcp}");
        assert!(via_mcp.get("structuredContent").is_none(), "{via_mcp}");
        let text = via_mcp["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("get_conversation_report") && text.contains(field), "{arguments}: {text}");
    }
}

#[tokio::test]
async fn reports_are_for_admins_and_reports_read_keys() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let (email, password) = add_member(&app, ws.id, "agent").await;
    let agent = token_for(&app, &email, &password, Some(ws.id)).await;
    let res = app.authed(Method::GET, "/v1/reports/conversations", &agent).send().await.expect("request");
    problem(res, 403, "forbidden").await;
    let reader = app.api_key_with_scopes(&ws, &["reports:read"]).await;
    assert_eq!(app.get_json("/v1/reports/conversations?group_by=team", &reader).await.0, 200);
    let other = app.api_key_with_scopes(&ws, &["threads:read"]).await;
    let res = app.authed(Method::GET, "/v1/reports/conversations.csv", &other).send().await.expect("request");
    problem(res, 403, "insufficient_scope").await;

    // The assistant's tool follows the same rule, though agents and `assistant:read` keys may use
    // the assistant's other tools: refused before its arguments are looked at.
    let args = json!({"group_by": "team"});
    let refused = problem(tool(&app, ws.id, &agent, &args).await, 403, "forbidden").await;
    assert!(refused["detail"].as_str().is_some_and(|d| d.contains("admin")), "{refused}");
    problem(tool(&app, ws.id, &agent, &json!({"group_by": "inbox"})).await, 403, "forbidden").await;
    let assistant_only = app.api_key_with_scopes(&ws, &["assistant:read"]).await;
    let res = tool(&app, ws.id, &assistant_only, &args).await;
    let challenge = res.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(challenge.contains("scope=\"reports:read\""), "{challenge}");
    problem(res, 403, "insufficient_scope").await;
    let res = app
        .authed(Method::POST, &execute_path(ws.id), &agent)
        .json(&json!({"tool": "list_channels", "arguments": {}}))
        .send()
        .await
        .expect("execute");
    assert_eq!(res.status(), 200, "the agent keeps the other tools");
    for (credential, why) in [(&agent, "admins"), (&assistant_only, "reports:read")] {
        let via_mcp = mcp_call(&app, ws.id, credential, &args).await;
        assert_eq!(via_mcp["isError"], true, "{via_mcp}");
        assert!(via_mcp.get("structuredContent").is_none(), "{via_mcp}");
        let text = via_mcp["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("not allowed") && text.contains(why), "{text}");
    }
    // Both scopes: the report; the REST answer and the tool's are one.
    let both = app.api_key_with_scopes(&ws, &["assistant:read", "reports:read"]).await;
    let period = tool_arguments("2026-10-01", "2026-11-01", "team", false);
    let (status, rest) =
        app.get_json("/v1/reports/conversations?since=2026-10-01&until=2026-11-01&group_by=team", &reader).await;
    assert_eq!(status, 200);
    assert_eq!(tool_result(&app, ws.id, &both, &period).await, rest);
    assert_eq!(tool_result(&app, ws.id, &crate::credentials::admin_token(&app, &ws).await, &period).await, rest);
}
