//! Contract test with a tool nobody here wrote: schemathesis generates requests from
//! `/v1/openapi.json` for every operation and checks the live server's answers against it.

use crate::helpers::TestApp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing() {
    let Some(python) = std::env::var_os("WMS_TEST_PYTHON") else {
        panic!("WMS_TEST_PYTHON is not set: run the tests through scripts/test, which installs schemathesis");
    };
    let schemathesis = std::path::Path::new(&python).with_file_name("schemathesis");
    // The limit is not under test here; generated traffic must not be cut short by it. Channel
    // credentials are confirmed by a stand-in Graph API (offline, the real one would be 502).
    let graph = crate::connectors::Graph::start();
    let app = TestApp::spawn_with(move |s| {
        s.rate_limit.requests_per_hour = 1_000_000;
        s.connectors.graph_base_url = graph.url.clone();
    })
    .await;
    let (ws, key) = app.advanced_with_key().await;
    let cipher = app::secrets::cipher(&app.settings, &app.db, false).await.expect("cipher");
    app::commands::seed_demo(&app.db, cipher.as_ref(), Some(domain::workspace::WorkspaceId(ws.id)))
        .await
        .expect("seed");

    let config = std::env::temp_dir().join(format!("wms-schemathesis-{}.toml", std::process::id()));
    std::fs::write(&config, CONFIG).expect("write the schemathesis configuration");
    let out = tokio::process::Command::new(&schemathesis)
        .arg("--config-file")
        .arg(&config)
        .args(["run", &app.url("/v1/openapi.json"), "--url", &app.address])
        .args(["--header", &format!("Authorization: Bearer {key}")])
        // Every check (the default; `--checks` would override CONFIG's per-operation settings),
        // with the exceptions CONFIG lists and explains.
        .args(["--max-examples", "20", "--seed", "20261120", "--no-color"])
        .env("SCHEMATHESIS_HOOKS", "")
        .output()
        .await
        .expect("run schemathesis");
    let _ = std::fs::remove_file(&config);
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "schemathesis found problems:\n{report}");
}

/// Where the document cannot say which values are taken. A `cursor` is a position this API issued
/// (any other is 422): generated ones are replaced by the empty cursor, the first page. The
/// operations below take values that must name something that exists or fit another value,
/// which no schema describes; `positive_data_acceptance` (a schema-valid request must not be 4xx
/// but 401, 403, 404, 409 or 429) is off for them alone, every other check stays on.
const CONFIG: &str = r#"
[parameters]
"query.cursor" = ""

# A label name must be one of the workspace's labels (the run renames and deletes them).
[[operations]]
include-operation-id = ["list_threads", "list_contacts", "set_thread_labels"]
checks.positive_data_acceptance.enabled = false

# A contact keeps a phone or an e-mail: clearing one depends on the other being there.
[[operations]]
include-operation-id = ["update_contact"]
checks.positive_data_acceptance.enabled = false

# Members, teams, AI agents, channels and templates named in a body must exist and be usable.
[[operations]]
include-operation-id = ["update_thread", "send_message", "create_team", "update_team"]
checks.positive_data_acceptance.enabled = false

# Channel credentials depend on the channel's type; a template sync needs a WhatsApp account id.
[[operations]]
include-operation-id = ["create_channel", "update_channel", "sync_channel_templates"]
checks.positive_data_acceptance.enabled = false

# SLA policies name labels and channels that must exist. schemathesis 4.32.5 reports their bodies
# without `labels` as "missing required property: labels", which the document does not require
# (`CreateSlaPolicyBody.required` is `["name"]`).
[[operations]]
include-operation-id = ["create_sla_policy", "update_sla_policy"]
checks.positive_data_acceptance.enabled = false
checks.negative_data_rejection.enabled = false

# A destination's URL must resolve to a public address; its filter names the workspace's channels.
# schemathesis 4.32.5 also reports bodies without an optional member as "missing required
# property" (`platform` on POST, `url` on PATCH), which the document does not require, as for the
# SLA policies.
[[operations]]
include-operation-id = ["post_webhooks", "patch_webhooks_webhook_id"]
checks.positive_data_acceptance.enabled = false
checks.negative_data_rejection.enabled = false

# A period: `since` before `until`, and at most a year (a report) or the retention (a replay).
[[operations]]
include-operation-id = ["get_conversation_report", "get_conversation_report_csv", "post_webhooks_webhook_id_replay"]
checks.positive_data_acceptance.enabled = false

# A time zone must be one the database knows.
[[operations]]
include-operation-id = ["set_business_hours"]
checks.positive_data_acceptance.enabled = false
"#;
