//! The database out of reach (docs/contract.md, "Abuse limits"): while no connection can be had, every
//! route and page answers 503 `service_unavailable` with `Retry-After` within
//! `database.acquire_timeout_ms` — never 500, never a hang — nothing is written, and requests and
//! the webhook workers resume by themselves once connections are allowed again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::webhooks::EventType;
use domain::workspace::{PlanTier, WorkspaceId};
use reqwest::header::{COOKIE, RETRY_AFTER};
use serde_json::json;

use crate::helpers::TestApp;
use crate::webhooks_receiver::Receiver;

/// The bound the servers of these tests run with.
const BOUND_MS: u64 = 500;

/// How long an answer may take: the bound, plus room for two shared and busy cores.
const ANSWERED_WITHIN: Duration = Duration::from_secs(4);

fn settings(s: &mut app::config::Settings) {
    s.database.acquire_timeout_ms = BOUND_MS;
    s.database.pool_size = 4;
    crate::webhooks_delivery::loopback(s);
}

async fn admin() -> AsyncPgConnection {
    AsyncPgConnection::establish(&test_db::admin_url()).await.expect("admin connection")
}

async fn sql(conn: &mut AsyncPgConnection, q: &str) {
    diesel::sql_query(q).execute(conn).await.unwrap_or_else(|e| panic!("{q}: {e}"));
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(conn: &mut AsyncPgConnection, q: &str) -> i64 {
    diesel::sql_query(q).get_result::<Count>(conn).await.expect("count").n
}

/// Refuses every new connection of `role` and ends its sessions (wms's pooled connections).
async fn refuse(admin: &mut AsyncPgConnection, role: &str) {
    sql(admin, &format!("ALTER ROLE \"{role}\" CONNECTION LIMIT 0")).await;
    sql(admin, &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'")).await;
}

/// One request of each kind the service answers, as a label and a builder.
struct Calls {
    key: String,
    token: String,
    cookie: String,
    ws: i64,
    channel: i64,
}

impl Calls {
    fn all(&self, app: &TestApp) -> Vec<(&'static str, reqwest::RequestBuilder)> {
        let ws = self.ws;
        vec![
            ("GET /v1/channels", app.authed(reqwest::Method::GET, "/v1/channels", &self.key)),
            (
                "POST /v1/messages",
                app.authed(reqwest::Method::POST, "/v1/messages", &self.key)
                    .json(&json!({"channel_id": self.channel, "content": "during the outage", "to": "+14155550123", "template": crate::helpers::test_template()})),
            ),
            ("settings API", app.authed(reqwest::Method::GET, &format!("/api/workspaces/{ws}/api-keys"), &self.token)),
            (
                "assistant",
                app.authed(reqwest::Method::GET, &format!("/workspaces/{ws}/co-admin/capabilities"), &self.token),
            ),
            (
                "login API",
                app.client.post(app.url("/v1/auth/login")).json(&json!({"email": "a@b.test", "password": "whatever1"})),
            ),
            ("page", app.client.get(app.url("/settings/workspace/api-keys")).header(COOKIE, &self.cookie)),
        ]
    }
}

async fn calls(app: &TestApp) -> Calls {
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = app.api_key(&ws).await;
    let token = crate::credentials::admin_token(app, &ws).await;
    let cookie = crate::pages::sign_in(app, &ws).await.cookie;
    let channel = app.channel(&key, "whatsapp", "+14155550100", "active").await;
    Calls { key, token, cookie, ws: ws.id, channel }
}

/// Sends `requests` at once; each must be a 503 `service_unavailable` with `Retry-After`, in time.
async fn all_refused(requests: Vec<(&'static str, reqwest::RequestBuilder)>) {
    let answers = futures_util::future::join_all(requests.into_iter().map(|(what, r)| async move {
        let started = Instant::now();
        let res = tokio::time::timeout(Duration::from_secs(30), r.send()).await;
        (what, started.elapsed(), res)
    }))
    .await;
    for (what, took, res) in answers {
        let res = res.unwrap_or_else(|_| panic!("{what} hung")).expect("response");
        assert!(took < ANSWERED_WITHIN, "{what} took {took:?}");
        assert_eq!(res.status(), 503, "{what}");
        assert_eq!(res.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("2"), "{what}");
        let body = res.text().await.expect("body");
        if what.ends_with("page") {
            assert!(body.contains("unavailable"), "{what}: {body}");
        } else {
            let problem: serde_json::Value =
                serde_json::from_str(&body).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
            assert_eq!(problem["code"], "service_unavailable", "{what}: {problem}");
        }
    }
}

/// Sends `POST /v1/messages` until it is accepted; how long that took.
async fn accepted_again(app: &TestApp, c: &Calls, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let res = app
            .post_json(
                "/v1/messages",
                &c.key,
                &json!({"channel_id": c.channel, "content": "after", "to": "+14155550123", "template": crate::helpers::test_template()}),
            )
            .await;
        if res.status() == 201 {
            return started.elapsed();
        }
        assert_eq!(res.status(), 503, "only 503 while recovering");
        assert!(started.elapsed() < within, "not recovered within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn refused_connections_are_answered_503_in_time_and_everything_resumes_after() {
    let (app, role) = TestApp::spawn_as_role(settings).await;
    let receiver = Receiver::start().await;
    let c = calls(&app).await;
    let (_, _) =
        crate::webhooks_delivery::destination(&app, &c.key, &receiver.url("/hook"), &["message.created"]).await;
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    let mut admin = admin().await;
    let mut owner = AsyncPgConnection::establish(&app.database.url).await.expect("owner");

    refuse(&mut admin, &role).await;
    // Every kind of request, and a burst of sends beside them: none waits past the bound.
    let mut requests = c.all(&app);
    for _ in 0..12 {
        requests.push(("burst", c.all(&app).swap_remove(1).1));
    }
    all_refused(requests).await;
    // A second round, once the pooled connections are known to be gone.
    all_refused(c.all(&app)).await;
    assert_eq!(count(&mut owner, "SELECT count(*) AS n FROM messages").await, 0, "nothing written");
    // An event recorded meanwhile by another program: delivered once the workers can claim again.
    adapters_postgres::webhooks::outbox::record(
        &mut owner,
        WorkspaceId(c.ws),
        time::OffsetDateTime::now_utc(),
        &[crate::webhooks_delivery::event_of(EventType::MessageCreated, &json!({"id": 0}))],
    )
    .await
    .expect("event recorded by another program");

    sql(&mut admin, &format!("ALTER ROLE \"{role}\" CONNECTION LIMIT -1")).await;
    let took = accepted_again(&app, &c, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(10), "recovered in {took:?}");
    for (what, r) in c.all(&app) {
        let res = r.send().await.expect("response");
        assert_ne!(res.status(), 503, "{what} after recovery");
        assert!(res.status().as_u16() < 500, "{what}: {}", res.status());
    }
    // The event of the outage and the messages sent after it.
    receiver.wait_for(3, Duration::from_secs(20)).await;
    workers.stop(Duration::from_secs(5)).await;
    drop(owner);
    app.drop_role(&role).await;
}

#[tokio::test]
async fn with_every_slot_taken_by_others_requests_never_hang_and_resume_when_slots_free_up() {
    // The load run: wms keeps the connections it has, idle, while the server refuses any
    // new one because other clients took every slot. Emulated with the role's own limit, set to
    // what it uses now and filled by other sessions of the role.
    let (app, role) = TestApp::spawn_as_role(settings).await;
    let c = calls(&app).await;
    let mut admin = admin().await;
    sql(&mut admin, &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'")).await;
    // Let one send open a connection again, so wms holds some and needs more under load.
    accepted_again(&app, &c, Duration::from_secs(10)).await;
    let held = count(&mut admin, &format!("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = '{role}'")).await;
    sql(&mut admin, &format!("ALTER ROLE \"{role}\" CONNECTION LIMIT {}", held + 2)).await;
    let other_url = app.settings.database.url.clone().expect("url");
    let mut others = Vec::new();
    for _ in 0..2 {
        others.push(AsyncPgConnection::establish(&other_url).await.expect("another client"));
    }

    let sends: Vec<_> = (0..40).map(|_| c.all(&app).swap_remove(1).1).collect();
    let answers = futures_util::future::join_all(sends.into_iter().map(|r| async move {
        let started = Instant::now();
        let res = tokio::time::timeout(Duration::from_secs(30), r.send()).await;
        (started.elapsed(), res)
    }))
    .await;
    for (took, res) in answers {
        let res = res.expect("no request hangs").expect("response");
        assert!(matches!(res.status().as_u16(), 201 | 503), "{}", res.status());
        assert!(took < ANSWERED_WITHIN * 2, "answered in {took:?}");
    }

    drop(others);
    sql(&mut admin, &format!("ALTER ROLE \"{role}\" CONNECTION LIMIT -1")).await;
    accepted_again(&app, &c, Duration::from_secs(10)).await;
    app.drop_role(&role).await;
}

/// The `application_name` of the other clients, which tell them apart from wms's sessions.
const OTHER: &str = "other_client";

/// Opens connections to `url` as another client until the server refuses one for want of slots.
async fn take_every_slot(url: &str, others: &mut Vec<AsyncPgConnection>) {
    loop {
        match AsyncPgConnection::establish(url).await {
            Ok(conn) => others.push(conn),
            Err(e) => {
                assert!(e.to_string().contains("too many clients"), "refused for another reason: {e}");
                return;
            }
        }
    }
}

/// The server's client sessions that are not the other clients': wms's.
const WMS_SESSIONS: &str =
    "FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name <> 'other_client'";

/// Ends wms's sessions and lets the other clients take the slots they free, until wms holds none.
async fn evict_wms(url: &str, others: &mut Vec<AsyncPgConnection>) {
    for _ in 0..100 {
        if count(&mut others[0], &format!("SELECT count(*) AS n {WMS_SESSIONS}")).await == 0 {
            return;
        }
        sql(&mut others[0], &format!("SELECT pg_terminate_backend(pid) {WMS_SESSIONS}")).await;
        // An ended session frees its slot only when its backend has exited, and wms reconnects
        // as soon as it can: ask for the slots without pause for a while, so that the other
        // clients win most of the races even on a loaded machine.
        let until = std::time::Instant::now() + Duration::from_millis(500);
        while std::time::Instant::now() < until {
            match AsyncPgConnection::establish(url).await {
                Ok(conn) => others.push(conn),
                Err(e) => {
                    assert!(e.to_string().contains("too many clients"), "refused for another reason: {e}");
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
        }
    }
    panic!("wms kept reconnecting into the freed slots");
}

#[tokio::test]
async fn with_max_connections_used_up_by_other_clients_requests_get_503_in_time_and_work_resumes() {
    // The load run for real: a private server whose every slot (`max_connections`, the
    // superuser-reserved ones included) is taken by other clients while requests and workers run.
    let cluster = test_db::cluster::Cluster::start_with("max_connections = 30\nsuperuser_reserved_connections = 0")
        .await
        .expect("private server");
    let database = test_db::TestDatabase::new_on(cluster.primary_url("postgres")).await.expect("database");
    let other_url = format!("{}?application_name={OTHER}", database.url);
    let app = TestApp::spawn_on_database(database, settings).await;
    let receiver = Receiver::start().await;
    let c = calls(&app).await;
    crate::webhooks_delivery::destination(&app, &c.key, &receiver.url("/hook"), &["message.created"]).await;
    let workers = app::webhooks::start(
        &app.settings,
        app::webhooks::engine(&app.settings, &app.db, Arc::new(app::platform::SystemClock)),
    );
    accepted_again(&app, &c, Duration::from_secs(10)).await;

    // 1. wms keeps the connections it holds; every free slot goes to others. A burst of sends
    // beside every kind of request: each is answered (sent, or 503 within the bound), none hangs.
    let mut others = Vec::new();
    take_every_slot(&other_url, &mut others).await;
    assert!(!others.is_empty(), "no slot was free for the other clients");
    let mut requests = c.all(&app);
    for _ in 0..30 {
        requests.push(("burst", c.all(&app).swap_remove(1).1));
    }
    let answers = futures_util::future::join_all(requests.into_iter().map(|(what, r)| async move {
        let started = Instant::now();
        (what, tokio::time::timeout(Duration::from_secs(30), r.send()).await, started.elapsed())
    }))
    .await;
    for (what, res, took) in answers {
        let res = res.unwrap_or_else(|_| panic!("{what} hung")).expect("response");
        assert!(took < ANSWERED_WITHIN * 2, "{what} answered in {took:?}");
        assert!(res.status().as_u16() < 500 || res.status() == 503, "{what}: {}", res.status());
        if res.status() == 503 {
            assert!(res.headers().contains_key(RETRY_AFTER), "{what}: 503 without Retry-After");
        }
    }

    // 2. wms's own sessions end too, and the others take their slots: every request is 503.
    evict_wms(&other_url, &mut others).await;
    let before = count(&mut others[0], "SELECT count(*) AS n FROM messages").await;
    all_refused(c.all(&app)).await;
    let mut requests = c.all(&app);
    for _ in 0..12 {
        requests.push(("burst", c.all(&app).swap_remove(1).1));
    }
    all_refused(requests).await;
    assert_eq!(count(&mut others[0], "SELECT count(*) AS n FROM messages").await, before, "nothing written");
    assert_eq!(count(&mut others[0], &format!("SELECT count(*) AS n {WMS_SESSIONS}")).await, 0, "no slot for wms");
    // An event recorded meanwhile by another client: delivered once the workers can claim again.
    adapters_postgres::webhooks::outbox::record(
        &mut others[0],
        WorkspaceId(c.ws),
        time::OffsetDateTime::now_utc(),
        &[crate::webhooks_delivery::event_of(EventType::MessageCreated, &json!({"id": 0}))],
    )
    .await
    .expect("event recorded by another client");

    // 3. The other clients leave: requests and workers resume by themselves within seconds.
    drop(others);
    let took = accepted_again(&app, &c, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(10), "recovered in {took:?}");
    for (what, r) in c.all(&app) {
        let res = r.send().await.expect("response");
        assert!(res.status().as_u16() < 500, "{what} after recovery: {}", res.status());
    }
    let mut owner = AsyncPgConnection::establish(&other_url).await.expect("a connection again");
    let sent = count(&mut owner, "SELECT count(*) AS n FROM messages").await;
    // One delivery per message sent, plus the event of the outage.
    receiver.wait_for(usize::try_from(sent).expect("count") + 1, Duration::from_secs(30)).await;
    workers.stop(Duration::from_secs(5)).await;
    drop(owner);
    drop(app);
    drop(cluster);
}

/// A database that stops answering on the connections wms already holds (a PgBouncer `PAUSE`d in
/// front of it; a frozen server looks the same): no connection wait runs out, so every request
/// is answered 503 once it has outlived the bound and a probe finds the database silent — the
/// login API, password reset, an invitation link, the docs search, platform callbacks and
/// `/readyz` as much as `/v1` — and all of it works again after `RESUME`.
#[tokio::test]
async fn a_paused_pgbouncer_is_answered_503_in_time_and_work_resumes() {
    let app = TestApp::spawn_behind_pgbouncer(4, settings).await;
    let c = calls(&app).await;
    accepted_again(&app, &c, Duration::from_secs(10)).await;
    let bouncer = app.bouncer.as_ref().expect("a PgBouncer");
    // A well-formed link nobody was sent: only the database can tell.
    let link = domain::auth::NewToken::generate(domain::auth::TokenKind::User, &app::platform::OsRandom).secret;
    bouncer.show("PAUSE").expect("PAUSE");
    let mut requests = c.all(&app);
    requests.extend([
        (
            "password reset",
            app.client.post(app.url("/v1/auth/password-reset")).json(&json!({"email": "someone@example.org"})),
        ),
        ("invitation page", app.client.get(app.url(&format!("/invitations/{link}")))),
        ("docs search page", app.client.get(app.url("/docs?q=webhooks"))),
        (
            "platform callback",
            app.client
                .post(app.url("/platform-webhooks/whatsapp"))
                .header("x-hub-signature-256", "sha256=00")
                .body("{}"),
        ),
    ]);
    all_refused(requests).await;
    let started = Instant::now();
    let ready = tokio::time::timeout(Duration::from_secs(30), app.get("/readyz")).await.expect("/readyz hung");
    assert_eq!(ready.status(), 503, "/readyz");
    assert!(started.elapsed() < ANSWERED_WITHIN, "/readyz took {:?}", started.elapsed());

    bouncer.show("RESUME").expect("RESUME");
    accepted_again(&app, &c, Duration::from_secs(10)).await;
    for (what, r) in c.all(&app) {
        let res = r.send().await.expect("response");
        assert!(res.status().as_u16() < 500, "{what} after RESUME: {}", res.status());
    }
    assert_eq!(app.get("/readyz").await.status(), 200);
}
