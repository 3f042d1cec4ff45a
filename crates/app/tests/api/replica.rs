//! The read replica (docs/contract.md, "Operations at scale"): a private primary and a streaming
//! replica; the assistant's tools read from the replica while it keeps up, from the primary when it
//! lags beyond the bound or is stopped, and from the replica again once it is back; `/readyz`
//! reports it without failing on it. The conversation report reads from the replica too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel_async::{AsyncConnection, AsyncPgConnection};
use domain::workspace::PlanTier;
use serde_json::{json, Value};
use test_db::cluster::Cluster;
use test_db::TestDatabase;

use crate::credentials::admin_token;
use crate::helpers::TestApp;

struct Setup {
    app: TestApp,
    cluster: Cluster,
    replica_url: String,
    ws: i64,
    key: String,
    token: String,
}

async fn setup() -> Setup {
    let cluster = Cluster::start().await.expect("primary");
    let database = TestDatabase::new_on(cluster.primary_url("postgres")).await.expect("database");
    cluster.start_replica().await.expect("replica");
    let replica_url = cluster.replica_url(&database.name);
    let url = replica_url.clone();
    let app = TestApp::spawn_on_database(database, |s| {
        s.database.replica_url = Some(url);
        s.database.max_replica_lag_ms = 2000;
        // The load below is one member's requests as fast as they go: on a quiet machine they
        // pass the member's hourly window (1,000) within seconds, and 429 is not what is tested.
        s.rate_limit.requests_per_hour = 1_000_000;
    })
    .await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = app.api_key(&ws).await;
    let token = admin_token(&app, &ws).await;
    Setup { app, cluster, replica_url, ws: ws.id, key, token }
}

impl Setup {
    /// The replica's state as `/readyz` reports it (which is 200 whatever it is).
    async fn replica_state(&self) -> String {
        let res = self.app.get("/readyz").await;
        assert_eq!(res.status(), 200);
        let body: Value = res.json().await.expect("json");
        assert!(body["replica"]["lag_ms"].is_u64() && body["replica"]["max_lag_ms"] == 2000, "{body}");
        body["replica"]["state"].as_str().expect("replica state").to_owned()
    }

    async fn wait_for_state(&self, state: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let now = self.replica_state().await;
            if now == state {
                return;
            }
            assert!(Instant::now() < deadline, "replica still {now}, not {state}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Creates a channel through `/v1` (the primary).
    async fn channel(&self, identifier: &str) {
        self.app.channel(&self.key, "messenger", identifier, "active").await;
    }

    /// The channel list as the assistant's `list_channels` tool sees it.
    async fn tool_channels(&self) -> String {
        let res = self
            .app
            .client
            .post(self.app.url(&format!("/workspaces/{}/co-admin/tools/execute", self.ws)))
            .bearer_auth(&self.token)
            .json(&json!({"tool": "list_channels", "arguments": {}}))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 200);
        res.text().await.expect("body")
    }

    async fn on_replica(&self, sql: &str) {
        use diesel_async::RunQueryDsl;
        let mut c = AsyncPgConnection::establish(&self.replica_url).await.expect("replica");
        diesel::sql_query(sql).execute(&mut c).await.expect(sql);
    }

    /// Pauses replay, writes `identifier` on the primary, and checks that the tools do not see it
    /// while the lag is under the bound (they read the replica), then do once it is beyond.
    async fn lagging_replica_is_passed_over(&self, identifier: &str) {
        self.on_replica("SELECT pg_wal_replay_pause()").await;
        self.channel(identifier).await;
        let seen = self.tool_channels().await;
        let state = self.replica_state().await;
        assert_eq!(state, "in_use", "read within the bound");
        assert!(!seen.contains(identifier), "the paused replica answered: {seen}");
        self.wait_for_state("lagging").await;
        assert!(self.tool_channels().await.contains(identifier), "the primary answered");
        self.on_replica("SELECT pg_wal_replay_resume()").await;
        self.wait_for_state("in_use").await;
        assert!(self.tool_channels().await.contains(identifier), "the replica caught up");
    }
}

#[tokio::test]
async fn reads_follow_the_replica_while_it_keeps_up_and_survive_its_stop() {
    let s = setup().await;
    s.wait_for_state("in_use").await;
    s.channel("page-before").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.tool_channels().await.contains("page-before") {
        assert!(Instant::now() < deadline, "the replica never showed the channel");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Replay paused beyond the bound: not read from; resumed: read from again.
    s.lagging_replica_is_passed_over("page-paused").await;

    // Stopped under load: every request is answered from the primary.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let s = Arc::new(s);
    let load: Vec<_> = (0..4)
        .map(|_| {
            let (s, stop, ok, failed) = (s.clone(), stop.clone(), ok.clone(), failed.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let res = s
                        .app
                        .client
                        .post(s.app.url(&format!("/workspaces/{}/co-admin/tools/execute", s.ws)))
                        .bearer_auth(&s.token)
                        .json(&json!({"tool": "list_channels", "arguments": {}}))
                        .send()
                        .await
                        .expect("request");
                    let counter = if res.status() == 200 { &ok } else { &failed };
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A smart stop refuses new connections at once and ends when the last client has gone: the
    // replica is out of use at once, and the stop completes because wms lets go of it.
    let stopping = {
        let s = s.clone();
        tokio::task::spawn_blocking(move || s.cluster.stop_replica("smart"))
    };
    s.wait_for_state("unreachable").await;
    stopping.await.expect("join").expect("stop the replica");
    let during = ok.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(ok.load(Ordering::SeqCst) > during, "reads go on without the replica");
    s.channel("page-while-stopped").await;
    assert!(s.tool_channels().await.contains("page-while-stopped"), "from the primary");

    // Started again: back to the replica by itself.
    s.cluster.restart_replica().await.expect("restart the replica");
    s.wait_for_state("in_use").await;
    stop.store(true, Ordering::SeqCst);
    for t in load {
        t.await.expect("load task");
    }
    assert_eq!(failed.load(Ordering::SeqCst), 0, "no failed request ({} answered)", ok.load(Ordering::SeqCst));
    s.lagging_replica_is_passed_over("page-after-restart").await;
}

/// A replica that goes away under statements in flight (a crash, `-m immediate`, or a fast
/// stop, `-m fast`): those requests answer 503 `service_unavailable` with `Retry-After`, never
/// 500, and the reads after it are answered by the primary; started again, the replica is read
/// from again.
///
/// To have statements surely in flight, the primary holds `ACCESS EXCLUSIVE` on `channels`: the
/// replica replays the lock, so the tools' reads of `channels` on the replica wait for it.
#[tokio::test]
async fn statements_in_flight_on_a_replica_that_goes_away_answer_503_never_500() {
    let s = Arc::new(setup().await);
    s.wait_for_state("in_use").await;
    s.channel("page-crash").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.tool_channels().await.contains("page-crash") {
        assert!(Instant::now() < deadline, "the replica never showed the channel");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for mode in ["fast", "immediate"] {
        let mut locker = AsyncPgConnection::establish(&s.app.database.url).await.expect("primary");
        {
            use diesel_async::SimpleAsyncConnection;
            locker.batch_execute("BEGIN; LOCK TABLE channels IN ACCESS EXCLUSIVE MODE").await.expect("lock");
        }
        // The lock reaches the replica once its WAL is flushed: a WAL switch flushes it now.
        {
            use diesel_async::RunQueryDsl;
            let mut other = AsyncPgConnection::establish(&s.app.database.url).await.expect("primary");
            diesel::sql_query("SELECT pg_switch_wal()").execute(&mut other).await.expect("pg_switch_wal");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut in_flight: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                tokio::spawn(async move {
                    let res = s
                        .app
                        .client
                        .post(s.app.url(&format!("/workspaces/{}/co-admin/tools/execute", s.ws)))
                        .bearer_auth(&s.token)
                        .json(&json!({"tool": "list_channels", "arguments": {}}))
                        .send()
                        .await
                        .expect("request");
                    let status = res.status().as_u16();
                    let retry_after = res.headers().contains_key("retry-after");
                    (status, retry_after, res.text().await.expect("body"))
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(1000)).await;
        if let Some(done) = in_flight.iter_mut().find(|t| t.is_finished()) {
            let (status, _, body) = done.await.expect("request task");
            panic!("{mode}: the reads should wait on the replica, one answered {status} {body}");
        }
        let stopping = {
            let s = s.clone();
            tokio::task::spawn_blocking(move || s.cluster.stop_replica(mode))
        };
        stopping.await.expect("join").expect("stop the replica");
        {
            use diesel_async::SimpleAsyncConnection;
            locker.batch_execute("COMMIT").await.expect("unlock");
        }
        // Not retried on the primary (a read is not told apart from a write there): the client's
        // retry is, once the watcher has seen the replica gone.
        for t in in_flight {
            let (status, retry_after, body) = t.await.expect("request task");
            assert_eq!(status, 503, "{mode}: {body}");
            assert!(retry_after, "{mode}: a 503 says when to retry");
            let problem: Value = serde_json::from_str(&body).expect("problem+json");
            assert_eq!(problem["code"], "service_unavailable", "{mode}: {body}");
        }
        s.wait_for_state("unreachable").await;
        assert!(s.tool_channels().await.contains("page-crash"), "{mode}: the primary answers");
        s.cluster.restart_replica().await.expect("restart the replica");
        s.wait_for_state("in_use").await;
        assert!(s.tool_channels().await.contains("page-crash"), "{mode}: the replica answers again");
    }
}

/// The conversation report of the assistant (and the reports page) reads from the replica: with
/// its replay paused (within the bound), a conversation started on the primary is not in it;
/// replay resumed, it is. `GET /v1/reports/conversations`, a `/v1` read, answers from the primary
/// at once.
#[tokio::test]
async fn the_conversation_report_reads_from_the_replica_except_on_v1() {
    let s = setup().await;
    s.wait_for_state("in_use").await;
    let ch = s.app.channel(&s.key, "whatsapp", "+14155550100", "active").await;
    let on_v1 = || async {
        let (status, body) = s.app.get_json("/v1/reports/conversations", &s.key).await;
        assert_eq!(status, 200, "{body}");
        body["groups"][0]["conversations"].as_i64().expect("conversations")
    };
    let by_the_assistant = || async {
        let res = s
            .app
            .client
            .post(s.app.url(&format!("/workspaces/{}/co-admin/tools/execute", s.ws)))
            .bearer_auth(&s.token)
            .json(&json!({"tool": "get_conversation_report", "arguments": {}}))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 200);
        let body: Value = res.json().await.expect("json");
        body["result"]["groups"][0]["conversations"].as_i64().unwrap_or_else(|| panic!("conversations in {body}"))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.tool_channels().await.contains("+14155550100") {
        assert!(Instant::now() < deadline, "the replica never showed the channel");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.on_replica("SELECT pg_wal_replay_pause()").await;
    s.app.contact_wrote(ch, "+4915100000001").await;
    assert_eq!(by_the_assistant().await, 0, "the paused replica answered");
    assert_eq!(on_v1().await, 1, "a /v1 read sees the write at once");
    assert_eq!(s.replica_state().await, "in_use", "read within the bound");
    s.on_replica("SELECT pg_wal_replay_resume()").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while by_the_assistant().await != 1 {
        assert!(Instant::now() < deadline, "the replica never showed the conversation");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
