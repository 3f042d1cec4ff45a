//! Keys are part of the REST API's plan on every surface: a key of a workspace below `advanced` is
//! refused on the assistant's endpoints (execute, capabilities, MCP) as on `/v1`, while members
//! keep the assistant on every plan.

use domain::workspace::PlanTier;
use serde_json::{json, Value};

use crate::credentials::{admin_token, set_plan};
use crate::helpers::{problem, TestApp};

#[tokio::test]
async fn a_key_of_a_downgraded_workspace_is_refused_on_every_assistant_endpoint_and_members_keep_it() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let key = app.api_key_with_scopes(&ws, &["assistant:read"]).await;
    let admin = admin_token(&app, &ws).await;
    let execute = format!("/workspaces/{}/co-admin/tools/execute", ws.id);
    let capabilities = format!("/workspaces/{}/co-admin/capabilities", ws.id);
    let mcp = format!("/workspaces/{}/co-admin/mcp", ws.id);
    let tool = json!({"tool": "list_channels", "arguments": {}});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let calls = |credential: String| {
        let app = &app;
        let (execute, capabilities, mcp, tool, list) = (&execute, &capabilities, &mcp, &tool, &list);
        async move {
            vec![
                app.client.post(app.url(execute)).bearer_auth(&credential).json(tool).send().await.expect("execute"),
                app.client.get(app.url(capabilities)).bearer_auth(&credential).send().await.expect("capabilities"),
                app.client
                    .post(app.url(mcp))
                    .bearer_auth(&credential)
                    .header("accept", "application/json, text/event-stream")
                    .json(list)
                    .send()
                    .await
                    .expect("mcp"),
            ]
        }
    };
    for res in calls(key.clone()).await {
        assert_eq!(res.status(), 200, "the key works on advanced");
    }
    for plan in [PlanTier::Growth, PlanTier::Free] {
        set_plan(&app, ws.id, plan).await;
        for res in calls(key.clone()).await {
            let body = problem(res, 403, "plan_required").await;
            assert!(body["detail"].as_str().unwrap_or_default().contains("advanced"), "{body}");
        }
        for res in calls(admin.clone()).await {
            let status = res.status();
            let body: Value = res.json().await.unwrap_or(Value::Null);
            assert_eq!(status, 200, "members keep the assistant on {plan}: {body}");
        }
    }
}
