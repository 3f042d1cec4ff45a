//! Labels are managed by admins only (docs/contract.md, "Access"), so their changes are privileged
//! and recorded: `label.created`, `label.updated` (the fields changed), `label.deleted`; a
//! refused or invalid change, or one of a label that does not exist, leaves none.

use reqwest::Method;
use serde_json::json;

use super::{advanced, check, count, one, records, req};
use crate::helpers::TestApp;

#[tokio::test]
async fn label_changes_are_recorded_once_and_failed_ones_not_at_all() {
    let app = TestApp::spawn().await;
    let (ws, token) = advanced(&app).await;
    let actor = ("user", Some(ws.admin_id));
    let body = json!({"name": "VIP", "color": "#ef4444"});
    let res = req(&app, Method::POST, "/v1/labels", &token, "rid-label-create").json(&body).send().await;
    let res = res.expect("request");
    assert_eq!(res.status(), 201);
    let id = res.json::<serde_json::Value>().await.expect("json")["id"].as_i64().expect("id");
    let r = one(&app, &token, "label.created").await;
    check(&r, actor, ("label", id), "rid-label-create");
    assert_eq!(r["details"]["name"], "VIP");
    // The same name again: 409, nothing recorded.
    let res = req(&app, Method::POST, "/v1/labels", &token, "rid-label-dup").json(&body).send().await;
    assert_eq!(res.expect("request").status(), 409);

    let path = format!("/v1/labels/{id}");
    let res = req(&app, Method::PATCH, &path, &token, "rid-label-update").json(&json!({"color": "#000000"}));
    assert_eq!(res.send().await.expect("request").status(), 200);
    let r = one(&app, &token, "label.updated").await;
    check(&r, actor, ("label", id), "rid-label-update");
    assert_eq!(r["details"]["fields"], json!(["color"]));

    let res = req(&app, Method::DELETE, &path, &token, "rid-label-delete").send().await;
    assert_eq!(res.expect("request").status(), 204);
    check(&one(&app, &token, "label.deleted").await, actor, ("label", id), "rid-label-delete");
    // Gone: changing or deleting it again is 404 and not recorded.
    let res = req(&app, Method::PATCH, &path, &token, "rid-label-404").json(&json!({"name": "X"}));
    assert_eq!(res.send().await.expect("request").status(), 404);
    let res = req(&app, Method::DELETE, &path, &token, "rid-label-404-2").send().await;
    assert_eq!(res.expect("request").status(), 404);
    assert_eq!(records(&app, &token, "label.updated").await.len(), 1);
    assert_eq!(records(&app, &token, "label.deleted").await.len(), 1);
    assert_eq!(count(&app, ws.id).await, 3);
}
