//! E-mails about API keys, received by a real SMTP server (aiosmtpd): the expiry notices seven
//! days and one day before a key expires, each sent once even with several instances looking.

use std::sync::Arc;
use std::time::Duration;

use domain::workspace::PlanTier;
use serde_json::json;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::credentials::{add_member, admin_token, create_key, sql_bool};
use crate::helpers::{TestApp, TestWorkspace};
use crate::mail_sink::{mail_to, SmtpSink};

/// An app mailing `sink`, its mail workers running, and an `advanced` workspace with two admins.
async fn spawn(sink: &SmtpSink) -> (TestApp, app::mail::MailWorkers, TestWorkspace, String) {
    let app = TestApp::spawn_with(|s| mail_to(s, sink.port)).await;
    let workers = app.start_mail();
    let ws = app.create_workspace(PlanTier::Advanced).await;
    let (second_admin, _) = add_member(&app, ws.id, "admin").await;
    (app, workers, ws, second_admin)
}

/// A notice loop of `app`, looking every 200 ms.
fn notices(app: &TestApp) -> tokio::task::JoinHandle<()> {
    let service = app::key_notices::service(&app.settings, &app.db, Arc::new(app::platform::SystemClock));
    app::key_notices::start_every(service, Duration::from_millis(200))
}

fn in_(duration: time::Duration) -> String {
    (OffsetDateTime::now_utc() + duration).format(&Rfc3339).expect("rfc3339")
}

#[tokio::test]
async fn the_admins_are_told_seven_days_before_a_key_expires_once_with_several_instances() {
    let sink = SmtpSink::start().await;
    let (app, _workers, ws, second_admin) = spawn(&sink).await;
    let expires = time::Duration::days(7) + time::Duration::seconds(3);
    let (key, record) = create_key(&app, &ws, &json!({"name": "nightly export", "expires_at": in_(expires)})).await;
    let (_, never) = create_key(&app, &ws, &json!({"name": "forever"})).await;
    // Two instances look for due notices at once.
    let (first, second) = (notices(&app), notices(&app));

    let mail = sink.wait_for_mail_to(&ws.admin_email, Duration::from_secs(30)).await;
    assert_eq!(mail.subject, "API key “nightly export” expires in 7 days");
    let text = mail.text.clone().expect("text part");
    assert!(text.contains(record["masked_key"].as_str().expect("masked")), "{text}");
    assert!(text.contains("/settings/workspace/api-keys"));
    assert!(!text.contains(&key[5..]), "never the key itself");
    assert!(mail.html.expect("html part").contains("nightly export"));
    sink.wait_for_mail_to(&second_admin, Duration::from_secs(10)).await;

    // Each notice once: nothing more arrives while both loops keep looking.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(sink.received().len(), 2, "{:?}", sink.received());
    let id = record["id"].as_i64().expect("id");
    assert!(
        sql_bool(
            &app,
            &format!("(SELECT mailed FROM api_key_expiry_notices WHERE api_key_id = {id} AND notice = '7d')")
        )
        .await
    );
    let never_id = never["id"].as_i64().expect("id");
    assert!(
        sql_bool(&app, &format!("NOT EXISTS (SELECT 1 FROM api_key_expiry_notices WHERE api_key_id = {never_id})"))
            .await
    );
    first.abort();
    second.abort();
}

#[tokio::test]
async fn one_day_before_the_admins_are_told_again_and_a_revoked_key_is_not_mentioned() {
    let sink = SmtpSink::start().await;
    let (app, _workers, ws, _) = spawn(&sink).await;
    let token = admin_token(&app, &ws).await;
    let (_, soon) = create_key(
        &app,
        &ws,
        &json!({"name": "soon", "expires_at": in_(time::Duration::days(1) + time::Duration::seconds(2))}),
    )
    .await;
    let (_, revoked) =
        create_key(&app, &ws, &json!({"name": "revoked", "expires_at": in_(time::Duration::hours(20))})).await;
    let revoked_id = revoked["id"].as_i64().expect("id");
    let res =
        app.authed(reqwest::Method::POST, &format!("/api/workspaces/{}/api-keys/{revoked_id}/revoke", ws.id), &token);
    assert_eq!(res.send().await.expect("request").status(), 200);
    let looking = notices(&app);

    let mail = sink.wait_for_mail_to(&ws.admin_email, Duration::from_secs(30)).await;
    assert_eq!(mail.subject, "API key “soon” expires in 1 day");
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Two admins, one notice each: no seven-day notice for a key made to last a day, nothing
    // about the revoked key.
    let subjects: Vec<String> = sink.received().into_iter().map(|m| m.subject).collect();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(subjects.iter().all(|s| s.contains("“soon”")));
    let soon_id = soon["id"].as_i64().expect("id");
    assert!(
        sql_bool(
            &app,
            &format!("(SELECT NOT mailed FROM api_key_expiry_notices WHERE api_key_id = {soon_id} AND notice = '7d')")
        )
        .await
    );
    assert!(
        sql_bool(
            &app,
            &format!(
                "(SELECT NOT mailed FROM api_key_expiry_notices WHERE api_key_id = {revoked_id} AND notice = '1d')"
            )
        )
        .await
    );
    looking.abort();
}
