//! `TestApp`: the real server, in-process on port 0, over a fresh database cloned from the template.

#![allow(dead_code)]

use std::net::TcpListener;

use adapters_postgres::Db;
use app::config::Settings;
use domain::workspace::PlanTier;
use test_db::TestDatabase;

/// A running server and its database.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`
    pub address: String,
    /// A pool on the test database.
    pub db: Db,
    /// The settings the server runs with.
    pub settings: Settings,
    /// An HTTP client that does not follow redirects.
    pub client: reqwest::Client,
    /// Kept so the database lives as long as the app.
    pub database: TestDatabase,
    /// The PgBouncer the server reaches its database through, if any (dropped after the server's
    /// pools, so stopped last).
    pub bouncer: Option<test_db::pgbouncer::PgBouncer>,
}

/// A workspace created through the real provisioning code.
#[derive(Debug, Clone)]
pub struct TestWorkspace {
    /// Its id.
    pub id: i64,
    /// Its admin's id.
    pub admin_id: i64,
    /// Its admin's e-mail.
    pub admin_email: String,
    /// Its admin's password.
    pub admin_password: String,
}

impl TestApp {
    /// A server with the default settings.
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    /// A server with settings adjusted by `adjust`.
    pub async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
        app::telemetry::init_for_tests();
        let database = TestDatabase::new().await.expect("test database");
        let url = database.url.clone();
        Self::spawn_on(database, url, adjust).await
    }

    /// A server that reaches its database as a role of its own (`<database>_role`, not a
    /// superuser), so a test can refuse that role's connections (`ALTER ROLE … CONNECTION LIMIT 0`:
    /// superusers are exempt) without touching any other test. The caller drops the role
    /// ([`TestApp::drop_role`]) when done.
    pub async fn spawn_as_role(adjust: impl FnOnce(&mut Settings)) -> (TestApp, String) {
        use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
        app::telemetry::init_for_tests();
        let database = TestDatabase::new().await.expect("test database");
        let role = format!("{}_role", database.name);
        let mut admin = AsyncPgConnection::establish(&test_db::admin_url()).await.expect("admin");
        diesel::sql_query(format!("CREATE ROLE \"{role}\" LOGIN")).execute(&mut admin).await.expect("role");
        let mut owner = AsyncPgConnection::establish(&database.url).await.expect("owner");
        for grant in [
            format!("GRANT ALL ON SCHEMA public TO \"{role}\""),
            format!("GRANT ALL ON ALL TABLES IN SCHEMA public TO \"{role}\""),
            format!("GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \"{role}\""),
            format!("GRANT ALL ON ALL FUNCTIONS IN SCHEMA public TO \"{role}\""),
        ] {
            diesel::sql_query(grant).execute(&mut owner).await.expect("grant");
        }
        let url = as_user(&database.url, &role);
        (Self::spawn_on(database, url, adjust).await, role)
    }

    /// A server that reaches its database through a PgBouncer of its own
    /// (`database.pgbouncer = true`, migrations on the direct URL), in transaction pooling with at
    /// most `server_connections` server connections (`test_db::pgbouncer`: Debian's 1.18, which
    /// keeps no prepared statements there; wms sends unnamed ones).
    /// [`TestApp::spawn_instance`] starts more instances behind the same PgBouncer.
    pub async fn spawn_behind_pgbouncer(server_connections: u32, adjust: impl FnOnce(&mut Settings)) -> TestApp {
        app::telemetry::init_for_tests();
        let database = TestDatabase::new().await.expect("test database");
        let bouncer =
            test_db::pgbouncer::PgBouncer::start(&database.url, server_connections).await.expect("start PgBouncer");
        let url = bouncer.url(&database.url);
        let direct = database.url.clone();
        let mut app = Self::spawn_on(database, url, |s| {
            s.database.pgbouncer = true;
            s.database.migrate_url = Some(direct);
            adjust(s);
        })
        .await;
        app.bouncer = Some(bouncer);
        app
    }

    /// Checks that the traffic so far went through this app's PgBouncer in transaction pooling,
    /// keeping no prepared statements (`max_prepared_statements` 0, or a PgBouncer before 1.21
    /// that has no such setting) and resetting each server connection after every transaction:
    /// its transactions were handed more server connections than PgBouncer ever opened (a server
    /// connection served many clients' transactions), no more than `server_connections` are open,
    /// and no statement was missing where it was used.
    pub fn assert_transaction_pooling(&self, server_connections: usize) {
        let bouncer = self.bouncer.as_ref().expect("a PgBouncer");
        let config = bouncer.show("SHOW CONFIG").expect("SHOW CONFIG");
        let setting = |key: &str| config.iter().find(|r| r["key"] == key).map(|r| r["value"].clone());
        assert_eq!(setting("pool_mode").as_deref(), Some("transaction"));
        assert_eq!(setting("server_reset_query_always").as_deref(), Some("1"));
        assert!(matches!(setting("max_prepared_statements").as_deref(), None | Some("0")), "keeps no statements");
        let db = self.database.name.as_str();
        let stats = bouncer.show("SHOW STATS").expect("SHOW STATS");
        let row = stats.iter().find(|r| r["database"] == db).expect("stats of the test database");
        let n = |col: &str| row[col].parse::<u64>().unwrap_or_else(|_| panic!("{col}: {row:?}"));
        let servers = bouncer.show("SHOW SERVERS").expect("SHOW SERVERS");
        let open = servers.iter().filter(|r| r["database"] == db).count();
        assert!(open <= server_connections, "{open} server connections, at most {server_connections}");
        // Each transaction is handed a server connection (1.23+ counts the hand-overs; before,
        // every transaction is one).
        let handed = if row.contains_key("total_server_assignment_count") {
            n("total_server_assignment_count")
        } else {
            n("total_xact_count")
        };
        assert!(
            handed > 10 * server_connections as u64,
            "server connections were shared between transactions: {row:?}"
        );
        let log = bouncer.log();
        assert!(!log.contains("prepared statement"), "PgBouncer logged: {log}");
    }

    /// A server on `database` (of another server than the suite's, say), with settings adjusted
    /// by `adjust`.
    pub async fn spawn_on_database(database: TestDatabase, adjust: impl FnOnce(&mut Settings)) -> TestApp {
        app::telemetry::init_for_tests();
        let url = database.url.clone();
        Self::spawn_on(database, url, adjust).await
    }

    /// Drops a role made by [`TestApp::spawn_as_role`], after its server and database.
    pub async fn drop_role(self, role: &str) {
        use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
        drop(self);
        let mut admin = AsyncPgConnection::establish(&test_db::admin_url()).await.expect("admin");
        let _ = diesel::sql_query(format!("DROP ROLE IF EXISTS \"{role}\"")).execute(&mut admin).await;
    }

    async fn spawn_on(database: TestDatabase, url: String, adjust: impl FnOnce(&mut Settings)) -> TestApp {
        let mut settings = Settings::defaults().expect("default settings");
        settings.database.url = Some(url.clone());
        settings.database.pool_size = 4;
        settings.http.workers = 1;
        // The suite's tests run side by side on two shared cores: a wait that is slow only because
        // of them is not the database being out of reach (tests of the bound set their own).
        settings.database.acquire_timeout_ms = 5000;
        adjust(&mut settings);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        // As `serve` does without `http.public_url`: links are built on the address listened on.
        settings.http.bind = Some(listener.local_addr().expect("addr").to_string());
        let statements = app::wiring::statements(&settings, &url);
        let db =
            Db::with_statements(&url, settings.database.pool_size, settings.database.acquire_timeout(), statements)
                .expect("pool");
        // As `serve` does: the key that seals webhook secrets, shared by every instance.
        app::secrets::resolve_key(&mut settings, &db, false).await.expect("encryption key");
        let address = start_server_on(&settings, &db, listener);
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
        TestApp { address, db, settings, client, database, bouncer: None }
    }

    /// Another server instance on the same database (for multi-instance behaviour).
    pub fn spawn_instance(&self) -> String {
        let url = self.settings.database.url.clone().unwrap_or_else(|| self.database.url.clone());
        let statements = app::wiring::statements(&self.settings, &url);
        let db = Db::with_statements(&url, 4, self.settings.database.acquire_timeout(), statements).expect("pool");
        start_server(&self.settings, &db)
    }

    /// Another server instance on the same settings, reaching its database at `url` (e.g.
    /// through a proxy that watches the traffic).
    pub fn spawn_instance_at(&self, url: &str) -> String {
        let db = Db::new(url, 4, std::time::Duration::from_secs(5)).expect("pool");
        start_server(&self.settings, &db)
    }

    /// The absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.expect("request")
    }

    /// Creates a workspace on `plan` with an admin, through the domain service.
    pub async fn create_workspace(&self, plan: PlanTier) -> TestWorkspace {
        use domain::workspace::CreateWorkspace;
        let n = uuid_like();
        let admin_email = format!("admin-{n}@test.wms");
        let admin_password = "correct horse battery staple".to_owned();
        let created = app::wiring::workspace_service(&self.db)
            .create(CreateWorkspace {
                name: format!("Workspace {n}"),
                plan,
                admin_email: admin_email.clone(),
                admin_password: admin_password.clone(),
                admin_name: Some("Test Admin".into()),
            })
            .await
            .expect("create workspace");
        TestWorkspace { id: created.workspace_id.0, admin_id: created.user_id.0, admin_email, admin_password }
    }
}

fn start_server(settings: &Settings, db: &Db) -> String {
    start_server_on(settings, db, TcpListener::bind("127.0.0.1:0").expect("bind"))
}

fn start_server_on(settings: &Settings, db: &Db, listener: TcpListener) -> String {
    let port = listener.local_addr().expect("addr").port();
    let server = app::wiring::server(settings, db, app::wiring::state(settings, db), listener).expect("server");
    tokio::spawn(server);
    format!("http://127.0.0.1:{port}")
}

/// `url` with `user` (and no password) in place of its credentials.
fn as_user(url: &str, user: &str) -> String {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[scheme_end..];
    let host = rest.find('@').map_or(rest, |at| &rest[at + 1..]);
    format!("{}{user}@{host}", &url[..scheme_end])
}

fn uuid_like() -> String {
    use rand::RngCore;
    let mut b = [0u8; 6];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The JSON body of a problem response, after checking its content type and status.
pub async fn problem(res: reqwest::Response, status: u16, code: &str) -> serde_json::Value {
    assert_eq!(res.status().as_u16(), status, "status");
    let ct = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(ct, "application/problem+json");
    let body: serde_json::Value = res.json().await.expect("json body");
    assert_eq!(body["code"], code, "code in {body}");
    assert_eq!(body["status"], status);
    assert!(body["title"].is_string() && body["detail"].is_string() && body["type"].is_string());
    body
}

impl TestApp {
    /// A fresh API key of `ws`, stored the way the service stores keys (digest and mask only).
    pub async fn api_key(&self, ws: &TestWorkspace) -> String {
        use diesel_async::RunQueryDsl;
        let token = domain::auth::NewToken::generate(domain::auth::TokenKind::ApiKey, &app::platform::OsRandom);
        let mut conn = self.db.conn().await.expect("conn");
        diesel::sql_query(
            "INSERT INTO api_keys (workspace_id, name, key_digest, masked_key) VALUES ($1, 'test key', $2, $3)",
        )
        .bind::<diesel::sql_types::BigInt, _>(ws.id)
        .bind::<diesel::sql_types::Bytea, _>(token.digest().0.to_vec())
        .bind::<diesel::sql_types::Text, _>(token.masked())
        .execute(&mut conn)
        .await
        .expect("insert key");
        token.secret
    }

    /// A fresh API key of `ws` holding only `scopes`, stored as the service stores keys.
    pub async fn api_key_with_scopes(&self, ws: &TestWorkspace, scopes: &[&str]) -> String {
        use diesel_async::RunQueryDsl;
        let token = domain::auth::NewToken::generate(domain::auth::TokenKind::ApiKey, &app::platform::OsRandom);
        let mut conn = self.db.conn().await.expect("conn");
        diesel::sql_query(
            "INSERT INTO api_keys (workspace_id, name, key_digest, masked_key, scopes) \
             VALUES ($1, 'scoped key', $2, $3, $4)",
        )
        .bind::<diesel::sql_types::BigInt, _>(ws.id)
        .bind::<diesel::sql_types::Bytea, _>(token.digest().0.to_vec())
        .bind::<diesel::sql_types::Text, _>(token.masked())
        .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(scopes)
        .execute(&mut conn)
        .await
        .expect("insert key");
        token.secret
    }

    /// An `advanced` workspace and an API key of it.
    pub async fn advanced_with_key(&self) -> (TestWorkspace, String) {
        let ws = self.create_workspace(PlanTier::Advanced).await;
        let key = self.api_key(&ws).await;
        (ws, key)
    }

    /// An authenticated request builder.
    pub fn authed(&self, method: reqwest::Method, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path)).bearer_auth(key)
    }

    /// `GET` with a bearer token, returning status and JSON body.
    pub async fn get_json(&self, path: &str, key: &str) -> (u16, serde_json::Value) {
        let res = self.authed(reqwest::Method::GET, path, key).send().await.expect("request");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// `POST` JSON with a bearer token, returning the response.
    pub async fn post_json(&self, path: &str, key: &str, body: &serde_json::Value) -> reqwest::Response {
        self.authed(reqwest::Method::POST, path, key).json(body).send().await.expect("request")
    }

    /// Creates a channel through the API and returns its id. A WhatsApp channel's template
    /// catalogue holds the approved [`TEST_TEMPLATE`], so tests can open conversations with it.
    pub async fn channel(&self, key: &str, channel_type: &str, identifier: &str, status: &str) -> i64 {
        let body = serde_json::json!({"channel_type": channel_type, "display_name": "Test", "identifier": identifier, "status": status});
        let res = self.post_json("/v1/channels", key, &body).await;
        assert_eq!(res.status(), 201, "create channel");
        let id = res.json::<serde_json::Value>().await.expect("json")["id"].as_i64().expect("id");
        if channel_type == "whatsapp" {
            self.approved_template(id, TEST_TEMPLATE, 0).await;
        }
        id
    }

    /// Puts an approved template with `parameters` placeholders in the channel's catalogue, as a
    /// sync from Meta would have (the sync itself is tested against the Graph API stand-in).
    pub async fn approved_template(&self, channel_id: i64, name: &str, parameters: i32) {
        use diesel_async::RunQueryDsl;
        let mut conn = self.db.conn().await.expect("conn");
        diesel::sql_query(
            "INSERT INTO whatsapp_templates (workspace_id, channel_id, name, language, category, status, parameters, body)
             SELECT workspace_id, id, $2, 'en_US', 'UTILITY', 'approved', $3, 'Hello from the test' FROM channels WHERE id = $1
             ON CONFLICT DO NOTHING",
        )
        .bind::<diesel::sql_types::BigInt, _>(channel_id)
        .bind::<diesel::sql_types::Text, _>(name)
        .bind::<diesel::sql_types::Integer, _>(parameters)
        .execute(&mut conn)
        .await
        .expect("template");
    }

    /// The contact at `address` writes to the channel at `at` (platform time): stored through the
    /// same code as a platform callback's inbound message, so the service window opens.
    pub async fn contact_wrote_at(&self, channel_id: i64, address: &str, at: time::OffsetDateTime) {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use domain::connectors::{CallbackChannel, CallbackStore, InboundMessage, PlatformEvents};
        let mut conn = self.db.conn().await.expect("conn");
        let ws: i64 = adapters_postgres::schema::channels::table
            .filter(adapters_postgres::schema::channels::id.eq(channel_id))
            .select(adapters_postgres::schema::channels::workspace_id)
            .first(&mut conn)
            .await
            .expect("channel");
        let channel = CallbackChannel {
            workspace_id: domain::workspace::WorkspaceId(ws),
            channel_id: domain::channels::ChannelId(channel_id),
            account_id: String::new(),
            credentials_sealed: Vec::new(),
        };
        let n = WROTE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let events = PlatformEvents {
            inbound: vec![InboundMessage {
                platform_message_id: format!("test-inbound-{n}"),
                from: address.to_owned(),
                name: None,
                text: "Hello".to_owned(),
                at,
            }],
            ..PlatformEvents::default()
        };
        adapters_postgres::connectors::PgConnectors::new(self.db.clone())
            .apply(&channel, &events)
            .await
            .expect("inbound");
    }

    /// The contact at `address` writes to the channel now: its service window opens.
    pub async fn contact_wrote(&self, channel_id: i64, address: &str) {
        self.contact_wrote_at(channel_id, address, time::OffsetDateTime::now_utc()).await;
    }
}

static WROTE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The approved template every WhatsApp channel made by [`TestApp::channel`] has (no parameters).
pub const TEST_TEMPLATE: &str = "wms_test";

/// A `template` field sending [`TEST_TEMPLATE`].
pub fn test_template() -> serde_json::Value {
    serde_json::json!({"name": TEST_TEMPLATE, "language": "en_US"})
}

/// The `field`s named in a problem's `errors`.
pub fn error_fields(problem: &serde_json::Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["field"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// A database of its own in the shape it had before migration `version` ([`revert_through`]),
/// filled by `statements` (each must succeed): what an upgrade test migrates.
pub async fn filled_before(
    version: &str,
    statements: &[&str],
) -> (test_db::TestDatabase, adapters_postgres::Db, adapters_postgres::pool::Conn) {
    use diesel_async::RunQueryDsl;
    let database = test_db::TestDatabase::new().await.expect("database");
    revert_through(&database.url, version).await;
    let db = adapters_postgres::Db::new(&database.url, 2, std::time::Duration::from_secs(5)).expect("pool");
    let mut conn = db.conn().await.expect("conn");
    for sql in statements {
        diesel::sql_query(*sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    (database, db, conn)
}

/// Reverts the database at `url` migration by migration until the one whose version starts with
/// `version` (digits only, such as `20261129000101`) is reverted too: the schema as it was before
/// it, for the upgrade tests that fill a database in that shape.
pub async fn revert_through(url: &str, version: &str) {
    let mut reverted = Vec::new();
    loop {
        let v = adapters_postgres::migrate::revert_last(url).await.expect("revert");
        let done = v.replace('-', "").starts_with(version);
        reverted.push(v);
        if done {
            return;
        }
        assert!(reverted.len() < 100, "migration {version} was never reverted: {reverted:?}");
    }
}
