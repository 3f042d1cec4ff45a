//! Assignment by team policy: channel default teams, round robin and balanced with capacity, the
//! waiting queue served oldest first, availability, and team deletion.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};

use super::{add_agent, new_thread, patch, thread, thread_events};
use crate::helpers::{error_fields, problem, test_template, TestApp};

/// A team of `members` with the policy, made the default team of `channel`.
async fn routed_team(app: &TestApp, key: &str, channel: i64, members: &[i64], mode: &str, capacity: Value) -> i64 {
    let res = app.post_json("/v1/teams", key, &json!({"name": format!("Team {mode}"), "member_ids": members})).await;
    assert_eq!(res.status(), 201);
    let team = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let res =
        patch(app, key, &format!("/v1/teams/{team}"), json!({"assignment": {"mode": mode, "capacity": capacity}}))
            .await;
    assert_eq!(res.status(), 200);
    let t: Value = res.json().await.expect("json");
    assert_eq!(t["assignment"], json!({"mode": mode, "capacity": capacity}));
    let res = patch(app, key, &format!("/v1/channels/{channel}"), json!({"default_team_id": team})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json")["default_team_id"], team);
    team
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    who: String,
}

/// Every thread of `ws`: id and `user:<id>:<status>` or `team:<id>:<status>` or `none:<status>`,
/// in waiting order then id.
async fn holders(app: &TestApp, ws: i64) -> Vec<(i64, String)> {
    let mut conn = app.db.conn().await.expect("conn");
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT id, coalesce(assignee_type || ':' || coalesce(assignee_user_id, assignee_team_id), 'none') || ':' || status AS who
         FROM threads WHERE workspace_id = $1 ORDER BY waiting_since NULLS FIRST, id",
    )
    .bind::<BigInt, _>(ws)
    .load(&mut conn)
    .await
    .expect("threads");
    rows.into_iter().map(|r| (r.id, r.who)).collect()
}

#[tokio::test]
async fn fifty_threads_at_once_on_two_instances_fill_a_balanced_team_to_capacity_then_wait_their_turn() {
    let app = TestApp::spawn_with(|s| s.database.pool_size = 8).await;
    let bases = [app.address.clone(), app.spawn_instance()];
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let members = [add_agent(&app, ws.id).await, add_agent(&app, ws.id).await, add_agent(&app, ws.id).await];
    let team = routed_team(&app, &key, ch, &members, "balanced", json!(5)).await;

    let mut sends = tokio::task::JoinSet::new();
    for n in 0..50 {
        let (client, base, key) = (app.client.clone(), bases[n % 2].clone(), key.clone());
        sends.spawn(async move {
            let to = format!("+1415556{n:04}");
            let body = json!({"channel_id": ch, "content": "Hello", "to": to, "template": test_template()});
            client.post(format!("{base}/v1/messages")).bearer_auth(key).json(&body).send().await.expect("send").status()
        });
    }
    while let Some(status) = sends.join_next().await {
        assert_eq!(status.expect("task"), 201);
    }
    let all = holders(&app, ws.id).await;
    let per = |who: String| all.iter().filter(|(_, w)| *w == who).count();
    for m in members {
        assert_eq!(per(format!("user:{m}:open")), 5, "member {m}: {all:?}");
    }
    assert_eq!(per(format!("team:{team}:open")), 35);
    // Assigned as they were created: `thread.created` carries the member, no `thread.assigned`.
    for (id, who) in &all {
        let events = thread_events(&app, *id).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let created = &events[0].1;
        assert_eq!(created["team_id"], team);
        if who.starts_with("user:") {
            assert_eq!(created["assignment_reason"], "balanced");
            assert_eq!(format!("user:{}:open", created["assignee"]["id"]), *who);
        } else {
            assert_eq!(created["assignee"], json!({"type": "team", "id": team}));
        }
    }

    // As members resolve threads, the oldest waiting ones go to them, one for one.
    let mut waiting: Vec<i64> = all.iter().filter(|(_, w)| w.starts_with("team:")).map(|(id, _)| *id).collect();
    for round in 0..6 {
        let member = members[round % 3];
        let held = holders(&app, ws.id).await;
        let (done, _) = held.iter().find(|(_, w)| *w == format!("user:{member}:open")).expect("a thread of theirs");
        assert_eq!(
            patch(&app, &key, &format!("/v1/threads/{done}"), json!({"status": "resolved"})).await.status(),
            200
        );
        let pass = app::lifecycle::run_once(&app.db).await.expect("pass");
        assert_eq!(pass.assigned, 1, "round {round}");
        let oldest = waiting.remove(0);
        let t = thread(&app, &key, oldest).await;
        assert_eq!(
            (&t["assignee"]["id"], &t["assignment_reason"]),
            (&json!(member), &json!("balanced")),
            "round {round}"
        );
        let assigned = thread_events(&app, oldest).await.into_iter().filter(|(ty, _)| ty == "thread.assigned").count();
        assert_eq!(assigned, 1);
    }
    // Nobody is ever over capacity.
    let held = holders(&app, ws.id).await;
    let mut conn = app.db.conn().await.expect("conn");
    #[derive(QueryableByName)]
    struct Max {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let max: Max = diesel::sql_query(
        "SELECT coalesce(max(c), 0) AS n FROM (SELECT count(*) AS c FROM threads WHERE workspace_id = $1
         AND assignee_user_id IS NOT NULL AND status IN ('open', 'pending') GROUP BY assignee_user_id) x",
    )
    .bind::<BigInt, _>(ws.id)
    .get_result(&mut conn)
    .await
    .expect("max");
    assert_eq!(max.n, 5, "{held:?}");
}

#[tokio::test]
async fn round_robin_takes_online_members_in_turn_and_skips_away_ones() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let m = [add_agent(&app, ws.id).await, add_agent(&app, ws.id).await, add_agent(&app, ws.id).await];
    let team = routed_team(&app, &key, ch, &m, "round_robin", Value::Null).await;
    let res = patch(&app, &key, &format!("/v1/users/{}", m[1]), json!({"availability": "away"})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json")["availability"], "away");

    let mut given = Vec::new();
    for n in 0..4 {
        let id = new_thread(&app, &key, ch, &format!("+1415557{n:04}")).await;
        let t = thread(&app, &key, id).await;
        assert_eq!((&t["team_id"], &t["assignment_reason"]), (&json!(team), &json!("round_robin")));
        given.push(t["assignee"]["id"].as_i64().expect("a member"));
        let events = thread_events(&app, id).await;
        assert_eq!(events.iter().map(|(ty, _)| ty.as_str()).collect::<Vec<_>>(), ["thread.created"]);
        assert_eq!(events[0].1["assignee"], t["assignee"]);
    }
    assert_eq!(given, [m[0], m[2], m[0], m[2]]);
    // Back online: their turn is the oldest (never given one).
    assert_eq!(
        patch(&app, &key, &format!("/v1/users/{}", m[1]), json!({"availability": "online"})).await.status(),
        200
    );
    let id = new_thread(&app, &key, ch, "+14155579999").await;
    assert_eq!(thread(&app, &key, id).await["assignee"]["id"], m[1]);
}

/// The members of a team take new threads in turn, and editing the team's `member_ids` (here
/// rewriting the same list) keeps each remaining member's turn: round robin goes on from where it
/// was instead of starting again from the first member.
#[tokio::test]
async fn round_robin_keeps_each_members_turn_across_a_member_edit() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let (a, b) = (add_agent(&app, ws.id).await, add_agent(&app, ws.id).await);
    let team = routed_team(&app, &key, ch, &[a, b], "round_robin", Value::Null).await;
    let mut given = Vec::new();
    for n in 0..3 {
        let id = new_thread(&app, &key, ch, &format!("+1415558{n:04}")).await;
        given.push(thread(&app, &key, id).await["assignee"]["id"].clone());
    }
    assert_eq!(given, [a, b, a]);
    let res = patch(&app, &key, &format!("/v1/teams/{team}"), json!({"member_ids": [a, b]})).await;
    assert_eq!(res.status(), 200);
    let id = new_thread(&app, &key, ch, "+14155589999").await;
    assert_eq!(thread(&app, &key, id).await["assignee"], json!({"type": "user", "id": b}), "b's turn");
}

/// Balanced ties go to the member given a thread longest ago, and a member edit keeps that order.
#[tokio::test]
async fn a_balanced_tie_still_goes_to_the_longest_waiting_member_after_a_member_edit() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let (x, y) = (add_agent(&app, ws.id).await, add_agent(&app, ws.id).await);
    let team = routed_team(&app, &key, ch, &[x, y], "balanced", Value::Null).await;
    let first = new_thread(&app, &key, ch, "+14155580001").await;
    let second = new_thread(&app, &key, ch, "+14155580002").await;
    assert_eq!(patch(&app, &key, &format!("/v1/threads/{first}"), json!({"status": "resolved"})).await.status(), 200);
    let third = new_thread(&app, &key, ch, "+14155580003").await;
    let holder = |t: Value| t["assignee"]["id"].clone();
    assert_eq!(
        [
            holder(thread(&app, &key, first).await),
            holder(thread(&app, &key, second).await),
            holder(thread(&app, &key, third).await)
        ],
        [x, y, x]
    );
    // One open thread each: a tie, and y's thread is the older one.
    let res = patch(&app, &key, &format!("/v1/teams/{team}"), json!({"member_ids": [x, y]})).await;
    assert_eq!(res.status(), 200);
    let id = new_thread(&app, &key, ch, "+14155589999").await;
    assert_eq!(thread(&app, &key, id).await["assignee"], json!({"type": "user", "id": y}), "y's turn");
}

/// A thread that waits with its team because its members are at capacity goes to the first member
/// who becomes eligible, within 5 s: here because the team's capacity rises.
#[tokio::test]
async fn raising_a_teams_capacity_hands_out_its_waiting_threads() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let agent = add_agent(&app, ws.id).await;
    let team = routed_team(&app, &key, ch, &[agent], "round_robin", json!(1)).await;
    let held = new_thread(&app, &key, ch, "+14155550123").await;
    assert_eq!(thread(&app, &key, held).await["assignee"], json!({"type": "user", "id": agent}));
    let waiting = new_thread(&app, &key, ch, "+14155550124").await;
    assert_eq!(thread(&app, &key, waiting).await["assignee"], json!({"type": "team", "id": team}));

    let timers = app::lifecycle::start(&app.db);
    let policy = json!({"assignment": {"mode": "round_robin", "capacity": 2}});
    let res = patch(&app, &key, &format!("/v1/teams/{team}"), policy).await;
    assert_eq!(res.status(), 200);
    let started = std::time::Instant::now();
    while thread(&app, &key, waiting).await["assignee"]["type"] != "user" {
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "not served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    timers.abort();
    let t = thread(&app, &key, waiting).await;
    assert_eq!(
        (&t["assignee"], &t["assignment_reason"]),
        (&json!({"type": "user", "id": agent}), &json!("round_robin"))
    );
}

#[tokio::test]
async fn a_waiting_thread_goes_to_a_member_who_comes_back_online() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let agent = add_agent(&app, ws.id).await;
    let team = routed_team(&app, &key, ch, &[agent], "balanced", json!(2)).await;
    assert_eq!(patch(&app, &key, &format!("/v1/users/{agent}"), json!({"availability": "away"})).await.status(), 200);
    let id = new_thread(&app, &key, ch, "+14155550123").await;
    assert_eq!(thread(&app, &key, id).await["assignee"], json!({"type": "team", "id": team}));
    assert_eq!(app::lifecycle::run_once(&app.db).await.expect("pass").assigned, 0);
    assert_eq!(patch(&app, &key, &format!("/v1/users/{agent}"), json!({"availability": "online"})).await.status(), 200);
    // The running timers serve the queue within 5 s.
    let timers = app::lifecycle::start(&app.db);
    let started = std::time::Instant::now();
    while thread(&app, &key, id).await["assignee"]["type"] != "user" {
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "not served");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    timers.abort();
    assert_eq!(thread(&app, &key, id).await["assignee"], json!({"type": "user", "id": agent}));
}

#[tokio::test]
async fn a_team_switched_from_manual_hands_out_what_it_held_oldest_first() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let agent = add_agent(&app, ws.id).await;
    let team = routed_team(&app, &key, ch, &[agent], "manual", json!(1)).await;
    let first = new_thread(&app, &key, ch, "+14155550123").await;
    let second = new_thread(&app, &key, ch, "+14155550124").await;
    assert_eq!(app::lifecycle::run_once(&app.db).await.expect("pass").assigned, 0, "manual: nobody is given one");
    for id in [first, second] {
        assert_eq!(thread(&app, &key, id).await["assignee"], json!({"type": "team", "id": team}));
    }
    let policy = json!({"assignment": {"mode": "round_robin", "capacity": 1}});
    assert_eq!(patch(&app, &key, &format!("/v1/teams/{team}"), policy).await.status(), 200);
    assert_eq!(app::lifecycle::run_once(&app.db).await.expect("pass").assigned, 1, "capacity 1");
    let got = thread(&app, &key, first).await;
    assert_eq!(
        (got["assignee"].clone(), got["assignment_reason"].clone()),
        (json!({"type": "user", "id": agent}), json!("round_robin"))
    );
    assert_eq!(thread(&app, &key, second).await["assignee"], json!({"type": "team", "id": team}), "waits for room");
    let events = thread_events(&app, first).await;
    assert_eq!(events.iter().filter(|(t, _)| t == "thread.assigned").count(), 1, "{events:?}");
}

#[tokio::test]
async fn deleting_a_team_unassigns_its_own_threads_once_and_members_keep_theirs() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let agent = add_agent(&app, ws.id).await;
    let team = routed_team(&app, &key, ch, &[agent], "manual", Value::Null).await;
    let with_team = new_thread(&app, &key, ch, "+14155550123").await;
    let t = thread(&app, &key, with_team).await;
    assert_eq!((&t["assignee"], &t["team_id"]), (&json!({"type": "team", "id": team}), &json!(team)));
    let with_member = new_thread(&app, &key, ch, "+14155550124").await;
    let path = format!("/v1/threads/{with_member}");
    let res = patch(&app, &key, &path, json!({"assignee": {"type": "user", "id": agent}})).await;
    let t: Value = res.json().await.expect("json");
    assert_eq!((&t["assignment_reason"], &t["team_id"]), (&json!("manual"), &json!(team)));

    assert_eq!(
        app.authed(reqwest::Method::DELETE, &format!("/v1/teams/{team}"), &key).send().await.expect("delete").status(),
        204
    );
    let t = thread(&app, &key, with_team).await;
    assert_eq!(
        (&t["assignee"], &t["team_id"], &t["assignment_reason"]),
        (&Value::Null, &Value::Null, &json!("team_deleted"))
    );
    let assigned: Vec<Value> = thread_events(&app, with_team)
        .await
        .into_iter()
        .filter(|(ty, _)| ty == "thread.assigned")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(assigned.len(), 1);
    assert_eq!(assigned[0]["assignment_reason"], "team_deleted");
    let t = thread(&app, &key, with_member).await;
    assert_eq!((&t["assignee"], &t["team_id"]), (&json!({"type": "user", "id": agent}), &Value::Null));
    assert_eq!(thread_events(&app, with_member).await.iter().filter(|(ty, _)| ty == "thread.assigned").count(), 1);
    let (_, channel) = app.get_json(&format!("/v1/channels/{ch}"), &key).await;
    assert_eq!(channel["default_team_id"], Value::Null);
    // Its channel's record changed: a `channel.updated`, the record as GET answers it.
    let updates = crate::assistant_helpers::sql_json(
        &app,
        "SELECT coalesce(json_agg(payload::jsonb -> 'data' ORDER BY id), '[]')::text AS j FROM webhook_events
         WHERE workspace_id = $1 AND event_type = 'channel.updated'",
        ws.id,
    )
    .await;
    let counts = updates.as_array().map(|u| u.iter().filter(|d| d["id"] == json!(ch)).count());
    assert_eq!(counts, Some(2), "one when the team became its default, one now: {updates}");
    assert_eq!(updates.as_array().and_then(|u| u.last()), Some(&channel));
}

#[tokio::test]
async fn bad_policies_teams_and_availability_name_the_field_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let other = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let other_key = app.api_key(&other).await;
    let ch = app.channel(&key, "whatsapp", "+14155550101", "active").await;
    let agent = add_agent(&app, ws.id).await;
    let team = routed_team(&app, &key, ch, &[agent], "balanced", json!(3)).await;
    let res = app.post_json("/v1/teams", &other_key, &json!({"name": "Theirs"})).await;
    let theirs = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    for (path, body, field) in [
        (
            format!("/v1/teams/{team}"),
            json!({"assignment": {"mode": "balanced", "capacity": 0}}),
            "assignment.capacity",
        ),
        (
            format!("/v1/teams/{team}"),
            json!({"assignment": {"mode": "balanced", "capacity": -2}}),
            "assignment.capacity",
        ),
        (format!("/v1/teams/{team}"), json!({"assignment": {"mode": "random"}}), "assignment.mode"),
        (format!("/v1/channels/{ch}"), json!({"default_team_id": theirs}), "default_team_id"),
        (format!("/v1/channels/{ch}"), json!({"default_team_id": 987654}), "default_team_id"),
        (format!("/v1/users/{agent}"), json!({"availability": "busy"}), "availability"),
    ] {
        let p = problem(patch(&app, &key, &path, body.clone()).await, 422, "validation_failed").await;
        assert_eq!(error_fields(&p), [field], "{body}");
    }
    let (_, t) = app.get_json(&format!("/v1/teams/{team}"), &key).await;
    assert_eq!(t["assignment"], json!({"mode": "balanced", "capacity": 3}));
    let (_, c) = app.get_json(&format!("/v1/channels/{ch}"), &key).await;
    assert_eq!(c["default_team_id"], team);
    let (_, u) = app.get_json(&format!("/v1/users/{agent}"), &key).await;
    assert_eq!(u["availability"], "online");
    // The policy change is in the audit log, with the policy.
    let (_, audit) = app.get_json("/v1/audit-events?action=team.updated", &key).await;
    assert_eq!(audit["data"][0]["details"]["assignment"], json!({"mode": "balanced", "capacity": 3}), "{audit}");
}

#[tokio::test]
async fn a_member_sets_their_own_availability_and_only_admins_set_others() {
    let app = TestApp::spawn().await;
    let (ws, _) = app.advanced_with_key().await;
    let me = add_agent(&app, ws.id).await;
    let colleague = add_agent(&app, ws.id).await;
    let token = user_token(&app, ws.id, me).await;
    let res = patch(&app, &token, &format!("/v1/users/{me}"), json!({"availability": "away"})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.expect("json")["availability"], "away");
    problem(
        patch(&app, &token, &format!("/v1/users/{colleague}"), json!({"availability": "away"})).await,
        403,
        "forbidden",
    )
    .await;
    let admin = user_token(&app, ws.id, ws.admin_id).await;
    let res = patch(&app, &admin, &format!("/v1/users/{colleague}"), json!({"availability": "away"})).await;
    assert_eq!(res.status(), 200);
}

/// A login token of `user` in `ws`, stored as the service stores them.
pub(crate) async fn user_token(app: &TestApp, ws: i64, user: i64) -> String {
    let token = domain::auth::NewToken::generate(domain::auth::TokenKind::User, &app::platform::OsRandom);
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query(
        "INSERT INTO user_tokens (workspace_id, user_id, token_digest, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')",
    )
    .bind::<BigInt, _>(ws)
    .bind::<BigInt, _>(user)
    .bind::<diesel::sql_types::Bytea, _>(token.digest().0.to_vec())
    .execute(&mut conn)
    .await
    .expect("token");
    token.secret
}

/// A WhatsApp channel routed to a one-agent team of `mode` with capacity 1, whose contacts write
/// through the platform's callbacks (so a resolved thread reopens as in production).
struct Inbox {
    _graph: crate::connectors::Graph,
    app: TestApp,
    ws: crate::helpers::TestWorkspace,
    key: String,
    agent: i64,
    team: i64,
    phone_id: &'static str,
    now: i64,
}

impl Inbox {
    async fn new(mode: &str, phone_id: &'static str) -> Inbox {
        let graph = crate::connectors::Graph::start();
        let app = crate::connectors::spawn(&graph).await;
        let (ws, key) = app.advanced_with_key().await;
        let ch = crate::connectors::whatsapp_channel(&app, &key, phone_id).await;
        let agent = add_agent(&app, ws.id).await;
        let team = routed_team(&app, &key, ch, &[agent], mode, json!(1)).await;
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        Inbox { _graph: graph, app, ws, key, agent, team, phone_id, now }
    }

    /// The contact `from` writes `after` seconds after the start.
    async fn write(&self, from: &str, message_id: &str, after: i64) {
        let body = crate::connectors::wa_inbound(self.phone_id, message_id, from, "hi", self.now + after);
        assert_eq!(crate::connectors::callback(&self.app, "whatsapp", &body, None).await.status(), 200);
    }
}

#[tokio::test]
async fn a_reopened_thread_never_takes_its_member_over_capacity_it_waits_for_room() {
    let inbox = Inbox::new("balanced", "pn-31").await;
    let (app, ws, key, agent, team) = (&inbox.app, &inbox.ws, &inbox.key, inbox.agent, inbox.team);
    inbox.write("14155550123", "wamid.1", 0).await;
    let (_, list) = app.get_json("/v1/threads", key).await;
    let first = list["data"][0]["id"].as_i64().expect("thread");
    let me = json!({"type": "user", "id": agent});
    assert_eq!(thread(app, key, first).await["assignee"], me);
    assert_eq!(patch(app, key, &format!("/v1/threads/{first}"), json!({"status": "resolved"})).await.status(), 200);
    inbox.write("14155550124", "wamid.2", 1).await;
    let (_, list) = app.get_json("/v1/threads", key).await;
    let second =
        list["data"].as_array().expect("data").iter().map(|t| t["id"].as_i64().expect("id")).max().expect("two");
    assert_eq!(thread(app, key, second).await["assignee"], me, "the member has room for one");

    // The first contact writes again: the member is at capacity, so the thread waits with the team,
    // assigned to it now by its policy.
    let assigned_before = thread(app, key, first).await["assigned_at"].clone();
    inbox.write("14155550123", "wamid.3", 2).await;
    let t = thread(app, key, first).await;
    assert_eq!((&t["status"], &t["assignee"]), (&json!("open"), &json!({"type": "team", "id": team})));
    assert_eq!(t["assignment_reason"], "balanced");
    assert!(t["assigned_at"].as_str() > assigned_before.as_str(), "{} after {assigned_before}", t["assigned_at"]);
    let events: Vec<(String, Value)> = thread_events(app, first).await;
    let tail: Vec<&str> = events.iter().rev().take(2).rev().map(|(ty, _)| ty.as_str()).collect();
    assert_eq!(tail, ["thread.status_changed", "thread.assigned"]);
    assert_eq!(events.last().map(|e| &e.1), Some(&t), "one event with where it went");

    // The member snoozes the other thread: room again, and the queue is served.
    let until = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
    let until = until.format(&time::format_description::well_known::Rfc3339).expect("time");
    let snooze = json!({"status": "snoozed", "snoozed_until": until});
    assert_eq!(patch(app, key, &format!("/v1/threads/{second}"), snooze).await.status(), 200);
    assert_eq!(app::lifecycle::run_once(&app.db).await.expect("pass").assigned, 1);
    assert_eq!(thread(app, key, first).await["assignee"], me);

    // The snooze ends while the member is at capacity: that thread waits with the team in turn.
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("UPDATE threads SET snoozed_until = now() - interval '1 second' WHERE id = $1")
        .bind::<BigInt, _>(second)
        .execute(&mut conn)
        .await
        .expect("due");
    assert_eq!(app::lifecycle::run_once(&app.db).await.expect("pass").reopened, 1);
    let t = thread(app, key, second).await;
    assert_eq!((&t["status"], &t["assignee"]), (&json!("open"), &json!({"type": "team", "id": team})));
    let open_with_member = holders(app, ws.id).await.iter().filter(|(_, w)| *w == format!("user:{agent}:open")).count();
    assert_eq!(open_with_member, 1, "never over capacity");
}

#[tokio::test]
async fn a_manual_teams_capacity_sends_a_reopened_thread_back_keeping_its_reason() {
    let inbox = Inbox::new("manual", "pn-41").await;
    let (app, key, agent, team) = (&inbox.app, &inbox.key, inbox.agent, inbox.team);
    let me = json!({"type": "user", "id": agent});
    let by_hand = json!({"assignee": me});
    // The first contact's thread, given to the agent by hand, then resolved.
    inbox.write("14155550141", "wamid.41", 0).await;
    let first = app.get_json("/v1/threads", key).await.1["data"][0]["id"].as_i64().expect("thread");
    assert_eq!(patch(app, key, &format!("/v1/threads/{first}"), by_hand.clone()).await.status(), 200);
    assert_eq!(patch(app, key, &format!("/v1/threads/{first}"), json!({"status": "resolved"})).await.status(), 200);
    // The second contact's thread takes the agent's one place.
    inbox.write("14155550142", "wamid.42", 1).await;
    let (_, list) = app.get_json("/v1/threads", key).await;
    let second =
        list["data"].as_array().expect("data").iter().map(|t| t["id"].as_i64().expect("id")).max().expect("two");
    assert_eq!(patch(app, key, &format!("/v1/threads/{second}"), by_hand).await.status(), 200);
    let before = thread(app, key, first).await;
    assert_eq!(before["assignment_reason"], "manual");

    // The first contact writes again: at capacity, the thread goes back to the manual team, which
    // no policy serves: the reason stays, the time is the move's.
    inbox.write("14155550141", "wamid.43", 2).await;
    let t = thread(app, key, first).await;
    assert_eq!((&t["status"], &t["assignee"]), (&json!("open"), &json!({"type": "team", "id": team})));
    assert_eq!(t["assignment_reason"], "manual", "{t}");
    assert!(t["assigned_at"].as_str() > before["assigned_at"].as_str(), "{t}");
}

/// A channel and a team may be created with what PATCH sets on them: the channel's default team
/// and the team's policy. Its first thread is then placed at once; another workspace's team is
/// refused (422 naming `default_team_id`) and nothing is created.
#[tokio::test]
async fn a_channel_created_with_a_default_team_routes_its_first_thread() {
    let app = TestApp::spawn().await;
    let (ws, key) = app.advanced_with_key().await;
    let agent = add_agent(&app, ws.id).await;
    let body = json!({"name": "Front", "member_ids": [agent], "assignment": {"mode": "round_robin"}});
    let res = app.post_json("/v1/teams", &key, &body).await;
    assert_eq!(res.status(), 201);
    let team = res.json::<Value>().await.expect("json")["id"].as_i64().expect("id");
    let body = json!({"channel_type": "whatsapp", "display_name": "Front", "identifier": "+14155550142",
                      "default_team_id": team});
    let res = app.post_json("/v1/channels", &key, &body).await;
    assert_eq!(res.status(), 201);
    let channel: Value = res.json().await.expect("json");
    assert_eq!(channel["default_team_id"], team);
    let ch = channel["id"].as_i64().expect("id");
    app.approved_template(ch, crate::helpers::TEST_TEMPLATE, 0).await;
    let id = new_thread(&app, &key, ch, "+14155571234").await;
    let t = thread(&app, &key, id).await;
    assert_eq!((&t["team_id"], &t["assignee"]["id"]), (&json!(team), &json!(agent)));

    let (_, other_key) = app.advanced_with_key().await;
    let res = app.post_json("/v1/teams", &other_key, &json!({"name": "Theirs"})).await;
    let theirs = res.json::<Value>().await.expect("json")["id"].clone();
    let body = json!({"channel_type": "whatsapp", "display_name": "X", "identifier": "+14155550143",
                      "default_team_id": theirs});
    let p = problem(app.post_json("/v1/channels", &key, &body).await, 422, "validation_failed").await;
    assert_eq!(error_fields(&p), ["default_team_id"]);
    let (_, all) = app.get_json("/v1/channels", &key).await;
    assert_eq!(all["data"].as_array().map(Vec::len), Some(1), "nothing created: {all}");
}
