//! The `wms` binary itself: arguments, settings and failures end with a clear message and the
//! right exit code, never a panic.

use std::process::{Command, Output};

use crate::helpers::TestApp;

fn wms(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    cmd.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run wms")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_clean_failure(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "exit code; stderr: {err}");
    assert!(err.contains(needle), "stderr should mention {needle:?}: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "panic: {err}");
}

#[test]
fn help_lists_every_command() {
    let o = wms(&["--help"], &[]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for c in ["serve", "dev", "migrate", "workspace", "seed"] {
        assert!(out.contains(c), "{c} missing from --help");
    }
    let o = wms(&["workspace", "create", "--help"], &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--admin-email"));
    let o = wms(&["seed", "scale", "--help"], &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--messages"));
}

#[test]
fn unknown_command_and_bad_arguments_exit_2() {
    assert_clean_failure(&wms(&["frobnicate"], &[]), 2, "frobnicate");
    assert_clean_failure(
        &wms(
            &[
                "workspace",
                "create",
                "--name",
                "x",
                "--plan",
                "gold",
                "--admin-email",
                "a@b.io",
                "--admin-password",
                "12345678",
            ],
            &[],
        ),
        2,
        "unknown plan `gold`",
    );
    assert_clean_failure(&wms(&["seed", "scale", "--messages", "0"], &[]), 2, "--messages");
    assert_clean_failure(
        &wms(&["workspace", "set-plan", "--workspace-id", "x", "--plan", "free"], &[]),
        2,
        "--workspace-id",
    );
}

#[test]
fn invalid_settings_exit_2_naming_the_setting() {
    for (var, value, setting) in [
        ("WMS__HTTP__BIND", "not-an-address", "http.bind"),
        ("WMS__RATE_LIMIT__REQUESTS_PER_HOUR", "lots", "rate_limit.requests_per_hour"),
        ("WMS__RATE_LIMIT__REQUESTS_PER_HOUR", "0", "rate_limit.requests_per_hour"),
        ("WMS__WEBHOOKS__RETRY_SCHEDULE", "5,soon", "webhooks.retry_schedule"),
        ("WMS__WEBHOOKS__ALLOWED_SUBNETS", "10.0.0.0/99", "webhooks.allowed_subnets"),
        ("WMS__CO_ADMIN__COMPRESS_OVERVIEW", "maybe", "co_admin.compress_overview"),
        ("WMS__AUDIT__RETENTION_DAYS", "0", "audit.retention_days"),
        ("WMS__AUDIT__RETENTION_DAYS", "forever", "audit.retention_days"),
        ("WMS__MAIL__GIVE_UP_AFTER_HOURS", "0", "mail.give_up_after_hours"),
        ("WMS__MAIL__GIVE_UP_AFTER_HOURS", "never", "mail.give_up_after_hours"),
        ("WMS__SECRETS__ENCRYPTION_KEY", "c2hvcnQ=", "secrets.encryption_key"),
        ("DATABASE_URL", "mysql://x", "database.url"),
    ] {
        assert_clean_failure(&wms(&["migrate"], &[(var, value)]), 2, &format!("`{setting}`"));
    }
}

#[test]
fn a_missing_config_file_exits_2() {
    assert_clean_failure(&wms(&["--config", "/nonexistent/wms.toml", "migrate"], &[]), 2, "no such file");
}

#[test]
fn a_config_file_is_read_and_env_overrides_it() {
    let dir = std::env::temp_dir().join(format!("wms-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("wms.toml");
    std::fs::write(&file, "[http]\nbind = \"bad address\"\n").expect("write");
    let path = file.to_str().expect("utf8");
    assert_clean_failure(&wms(&["--config", path, "migrate"], &[]), 2, "`http.bind`");
    assert_clean_failure(&wms(&["migrate"], &[("WMS_CONFIG", path)]), 2, "`http.bind`");
    // The environment wins over the file: a good bind in env, then the next problem is the database.
    assert_clean_failure(
        &wms(&["--config", path, "serve"], &[("WMS__HTTP__BIND", "127.0.0.1:0")]),
        2,
        "`database.url`",
    );
}

#[test]
fn serve_without_a_database_exits_2() {
    assert_clean_failure(&wms(&["serve"], &[]), 2, "DATABASE_URL");
}

#[test]
fn serve_refuses_to_start_without_an_encryption_key_unless_told_to_keep_it_in_the_database() {
    let db = ("DATABASE_URL", "postgres://u@127.0.0.1:1/x");
    let patience = ("WMS__DATABASE__CONNECT_TIMEOUT_SECS", "1");
    let o = wms(&["serve", "--bind", "127.0.0.1:0"], &[db, patience]);
    assert_clean_failure(&o, 2, "secrets.encryption_key");
    assert!(stderr(&o).contains("WMS__SECRETS__ALLOW_KEY_IN_DATABASE"), "{}", stderr(&o));
    // Either way past the check, `serve` goes on to the database (unreachable here).
    let key = ("WMS__SECRETS__ENCRYPTION_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    assert_clean_failure(
        &wms(&["serve", "--bind", "127.0.0.1:0"], &[db, patience, key]),
        1,
        "cannot reach the database",
    );
    let allowed = ("WMS__SECRETS__ALLOW_KEY_IN_DATABASE", "true");
    assert_clean_failure(
        &wms(&["serve", "--bind", "127.0.0.1:0"], &[db, patience, allowed]),
        1,
        "cannot reach the database",
    );
}

#[test]
fn an_unreachable_database_ends_with_a_clear_error() {
    let o = wms(
        &["serve", "--bind", "127.0.0.1:0"],
        &[
            ("DATABASE_URL", "postgres://u:pw@127.0.0.1:1/x"),
            ("WMS__DATABASE__CONNECT_TIMEOUT_SECS", "1"),
            ("WMS__SECRETS__ALLOW_KEY_IN_DATABASE", "true"),
        ],
    );
    assert_clean_failure(&o, 1, "cannot reach the database");
    assert!(!stderr(&o).contains(":pw@"), "password leaked: {}", stderr(&o));
    assert_clean_failure(
        &wms(&["migrate"], &[("DATABASE_URL", "postgres://127.0.0.1:1/x")]),
        1,
        "cannot reach the database",
    );
}

#[tokio::test]
async fn workspace_create_prints_json_and_set_plan_changes_the_tier() {
    let app = TestApp::spawn().await;
    let env = [("DATABASE_URL", app.database.url.as_str())];
    let o = wms(
        &[
            "workspace",
            "create",
            "--name",
            "Acme Support",
            "--plan",
            "growth",
            "--admin-email",
            "Ops@Acme.test",
            "--admin-password",
            "s3cret-pass",
            "--json",
        ],
        &env,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["slug"], "acme-support");
    assert!(v["workspace_id"].is_i64() && v["user_id"].is_i64());
    let id = v["workspace_id"].to_string();

    let o = wms(&["workspace", "set-plan", "--workspace-id", &id, "--plan", "advanced"], &env);
    assert!(o.status.success(), "{}", stderr(&o));
    let repo = adapters_postgres::PgWorkspaceRepository::new(app.db.clone());
    let ws = domain::workspace::WorkspaceRepository::find(
        &repo,
        domain::workspace::WorkspaceId(v["workspace_id"].as_i64().unwrap_or(0)),
    )
    .await
    .expect("find")
    .expect("exists");
    assert_eq!(ws.plan, domain::workspace::PlanTier::Advanced);

    assert_clean_failure(
        &wms(&["workspace", "set-plan", "--workspace-id", "424242", "--plan", "free"], &env),
        1,
        "no workspace with id 424242",
    );
    assert_clean_failure(
        &wms(
            &[
                "workspace",
                "create",
                "--name",
                " ",
                "--plan",
                "free",
                "--admin-email",
                "nope",
                "--admin-password",
                "short",
            ],
            &env,
        ),
        2,
        "--admin-email",
    );
}

#[tokio::test]
async fn seed_demo_json_gives_usable_credentials() {
    let app = TestApp::spawn().await;
    let o = wms(&["seed", "demo", "--json"], &[("DATABASE_URL", app.database.url.as_str())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert!(v["workspace_id"].is_i64());
    assert!(v["email"].as_str().unwrap_or("").ends_with("@demo.wms.test"));
    assert!(v["password"].as_str().unwrap_or("").len() >= 12);
}

#[tokio::test]
async fn seed_scale_generates_the_requested_messages() {
    let app = TestApp::spawn().await;
    let o = wms(&["seed", "scale", "--messages", "2000", "--json"], &[("DATABASE_URL", app.database.url.as_str())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["counts"]["messages"], 2000);
    assert_eq!(v["counts"]["threads"], 200);
    assert_eq!(v["counts"]["contacts"], 100);
    // The folded queue and the rollups' first versions are vacuumed, whether autovacuum runs or
    // not: the first reports are planned on live rows.
    let vacuumed = "SELECT count(*) = 2 FROM pg_stat_user_tables
                    WHERE relname IN ('conversation_facts_pending', 'conversation_rollups') AND last_vacuum IS NOT NULL";
    assert!(crate::credentials::sql_bool(&app, vacuumed).await, "vacuumed after the fold");
}

#[tokio::test]
async fn migrate_is_idempotent_and_reversible() {
    let app = TestApp::spawn().await;
    let env = [("DATABASE_URL", app.database.url.as_str())];
    let o = wms(&["migrate"], &env);
    assert!(String::from_utf8_lossy(&o.stdout).contains("up to date"), "{}", stderr(&o));
    let o = wms(&["migrate", "--revert"], &env);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = wms(&["migrate"], &env);
    assert!(String::from_utf8_lossy(&o.stdout).contains("applied migration"), "{}", stderr(&o));
}

#[tokio::test]
async fn serve_ingests_the_documentation_it_carries() {
    use diesel_async::RunQueryDsl;
    let app = TestApp::spawn().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" {
            cmd.env_remove(k);
        }
    }
    // Run from a directory without docs/: the pages must come from the binary.
    let mut child = cmd
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &app.database.url)
        .env("WMS__SECRETS__ENCRYPTION_KEY", app.settings.secrets.encryption_key.as_deref().unwrap_or(""))
        .current_dir(std::env::temp_dir())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut ready = 0;
    for _ in 0..100 {
        let mut conn = app.db.conn().await.expect("conn");
        ready = diesel::sql_query("SELECT count(*) AS n FROM docs_documents WHERE status = 'ready'")
            .get_result::<N>(&mut conn)
            .await
            .map(|r| r.n)
            .unwrap_or(0);
        if ready >= 30 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(ready >= 30, "only {ready} documents ingested");
}

fn out_first_url(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("json")["invitation_url"].clone()
}

/// `workspace create` for an admin whose account exists without a password (invited elsewhere,
/// never accepted): the admin is invited to the new workspace, as `add-member` does it, never
/// left active without any password to sign in with.
#[tokio::test]
async fn create_invites_an_admin_whose_account_has_no_password() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Growth).await;
    let url = app.database.url.clone();
    let env = [("DATABASE_URL", url.as_str()), ("WMS__HTTP__PUBLIC_URL", "https://wms.example.com")];
    let id = ws.id.to_string();
    let invited =
        wms(&["workspace", "add-member", "--workspace-id", &id, "--email", "new@example.com", "--role", "agent"], &env);
    assert!(invited.status.success(), "{}", stderr(&invited));
    let created = wms(
        &[
            "workspace",
            "create",
            "--name",
            "Second",
            "--plan",
            "advanced",
            "--admin-email",
            "new@example.com",
            "--admin-password",
            "a long password",
            "--json",
        ],
        &env,
    );
    assert!(created.status.success(), "{}", stderr(&created));
    assert!(stderr(&created).contains("without a password"), "{}", stderr(&created));
    let out: serde_json::Value = serde_json::from_slice(&created.stdout).expect("json");
    let link = out["invitation_url"].as_str().expect("an invitation");
    assert!(link.starts_with("https://wms.example.com/invitations/wmsu_"), "{link}");
    let second = out["workspace_id"].as_i64().expect("id");
    let status = format!(
        "(SELECT m.status = 'invited' AND m.role = 'admin' AND u.password_hash NOT LIKE '$%' FROM workspace_members m \
          JOIN users u ON u.id = m.user_id WHERE u.email = 'new@example.com' AND m.workspace_id = {second})"
    );
    assert!(crate::credentials::sql_bool(&app, &status).await);
    let token = link.rsplit('/').next().expect("token");
    assert_eq!(app.get(&format!("/invitations/{token}")).await.status(), 200, "the link opens the invitation");
    // A new account takes the operator's password and is active at once.
    let fresh = wms(
        &[
            "workspace",
            "create",
            "--name",
            "Third",
            "--plan",
            "advanced",
            "--admin-email",
            "fresh@example.com",
            "--admin-password",
            "a long password",
            "--json",
        ],
        &env,
    );
    let out: serde_json::Value = serde_json::from_slice(&fresh.stdout).expect("json");
    let keys: Vec<&str> = out.as_object().expect("an object").keys().map(String::as_str).collect();
    assert_eq!(keys, ["slug", "user_id", "workspace_id"], "exactly the contract's members: {out}");
    let third = out["workspace_id"].as_i64().expect("id");
    crate::credentials::token_for(&app, "fresh@example.com", "a long password", Some(third)).await;
}

#[tokio::test]
async fn add_member_invites_a_new_person_or_sets_a_password_and_refuses_bad_input() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Growth).await;
    let url = app.database.url.clone();
    let id = ws.id.to_string();
    let env = [("DATABASE_URL", url.as_str()), ("WMS__HTTP__PUBLIC_URL", "https://wms.example.com")];
    let base = ["workspace", "add-member", "--workspace-id", id.as_str()];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        wms(&args, &env)
    };
    let invited = run(&["--email", "new@example.com", "--role", "agent", "--json"]);
    assert!(invited.status.success(), "{}", stderr(&invited));
    let out: serde_json::Value = serde_json::from_slice(&invited.stdout).expect("json");
    assert!(out["user_id"].as_i64().is_some());
    assert!(out["invitation_url"].as_str().is_some_and(|u| u.starts_with("https://wms.example.com/invitations/wmsu_")));
    let with_password =
        run(&["--email", "pw@example.com", "--role", "admin", "--password", "a long password", "--json"]);
    assert!(with_password.status.success(), "{}", stderr(&with_password));
    let out: serde_json::Value = serde_json::from_slice(&with_password.stdout).expect("json");
    assert!(out["invitation_url"].is_null());
    crate::credentials::token_for(&app, "pw@example.com", "a long password", Some(ws.id)).await;

    // Invited, not accepted: adding again sends a new link (the old one stops working).
    let again = run(&["--email", "new@example.com", "--role", "agent", "--json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_ne!(again["invitation_url"], out_first_url(&invited));
    // An account without a password never takes the operator's (a new account only): invited again,
    // never active without any password to sign in with.
    let vouched = run(&["--email", "new@example.com", "--role", "agent", "--password", "a long password", "--json"]);
    assert!(vouched.status.success(), "{}", stderr(&vouched));
    assert!(stderr(&vouched).contains("without a password"), "{}", stderr(&vouched));
    assert!(out_first_url(&vouched).as_str().is_some_and(|u| u.contains("/invitations/wmsu_")));
    assert!(
        crate::credentials::sql_bool(
            &app,
            "(SELECT m.status = 'invited' AND u.password_hash NOT LIKE '$%' FROM workspace_members m \
              JOIN users u ON u.id = m.user_id WHERE u.email = 'new@example.com')"
        )
        .await
    );
    assert_clean_failure(&run(&["--email", "pw@example.com", "--role", "agent"]), 1, "already a member");
    assert_clean_failure(&run(&["--email", "not-an-email", "--role", "agent"]), 2, "--email");
    assert_clean_failure(&run(&["--email", "x@example.com", "--role", "owner"]), 2, "--role");
    assert_clean_failure(
        &run(&["--email", "x@example.com", "--role", "agent", "--password", "short"]),
        2,
        "--password",
    );
    let missing = wms(
        &["workspace", "add-member", "--workspace-id", "999999", "--email", "y@example.com", "--role", "agent"],
        &env,
    );
    assert_clean_failure(&missing, 1, "no workspace with id 999999");
    assert!(
        !crate::credentials::sql_bool(
            &app,
            "EXISTS (SELECT 1 FROM users WHERE email IN ('x@example.com', 'y@example.com', 'not-an-email'))"
        )
        .await
    );
}
