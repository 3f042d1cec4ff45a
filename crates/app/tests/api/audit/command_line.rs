//! The command line's changes are recorded with `cli` as the actor.

use super::*;

fn wms(args: &[&str], database_url: &str) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wms"));
    cmd.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("WMS") || k == "DATABASE_URL" || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd.env("DATABASE_URL", database_url).output().expect("run wms")
}

#[tokio::test]
async fn the_command_line_records_plan_changes_and_added_members_as_cli() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let id = ws.id.to_string();
    let o = wms(&["workspace", "set-plan", "--workspace-id", &id, "--plan", "growth"], &app.database.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = wms(&["workspace", "set-plan", "--workspace-id", &id, "--plan", "advanced"], &app.database.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The plan it has already: it succeeds, changes nothing and records nothing.
    let o = wms(&["workspace", "set-plan", "--workspace-id", &id, "--plan", "advanced"], &app.database.url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let all = records(&app, &token, "workspace.plan_changed").await;
    assert_eq!(all.len(), 2, "{all:?}");
    let r = &all[1]; // oldest: advanced → growth
    assert_eq!((r["actor"]["type"].as_str(), r["actor"]["id"].as_i64()), (Some("cli"), None), "{r}");
    assert_eq!(r["actor"]["label"], "wms CLI");
    assert_eq!((r["target"]["type"].as_str(), r["target"]["id"].as_i64()), (Some("workspace"), Some(ws.id)));
    assert_eq!(
        (r["details"]["plan"].as_str(), r["details"]["previous_plan"].as_str()),
        (Some("growth"), Some("advanced"))
    );
    assert!(all[0]["id"].as_i64() > all[1]["id"].as_i64(), "newest first");

    let o = wms(
        &[
            "workspace",
            "add-member",
            "--workspace-id",
            &id,
            "--email",
            "ops@test.wms",
            "--role",
            "agent",
            "--password",
            "a long password 1",
        ],
        &app.database.url,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = one(&app, &token, "member.added").await;
    assert_eq!(r["actor"]["type"], "cli");
    assert!(r["details"].get("invited").is_none(), "{r}");
    assert!(!r.to_string().contains("a long password 1"));
}
