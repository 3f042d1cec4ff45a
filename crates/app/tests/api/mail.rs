//! The e-mail outbox against a real SMTP server (aiosmtpd): mails written inside a transaction
//! are sent once it commits and never if it rolls back, an SMTP outage delays them without losing
//! or repeating any, and several instances never send one mail twice.

use std::collections::HashMap;
use std::time::Duration;

use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::mail::{Letter, Mail, MailLink};
use domain::users::Email;

use crate::helpers::TestApp;
use crate::mail_sink::{free_port, mail_to, SmtpSink};

fn mail(to: &str, n: usize) -> Mail {
    let letter = Letter {
        paragraphs: vec![format!("Message number {n} for <you>.")],
        link: Some(MailLink { label: "Open it".into(), url: format!("http://127.0.0.1:1/things/{n}") }),
        closing: vec!["You got this because a test sent it.".into()],
    };
    Mail::compose(Email::new("to", to).expect("email"), &format!("Test mail {n}"), &letter)
}

async fn enqueue(app: &TestApp, mails: Vec<Mail>) {
    let mut conn = app.db.conn().await.expect("conn");
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        async move { adapters_postgres::mail::enqueue(conn, &mails).await }.scope_boxed()
    })
    .await
    .expect("enqueue");
}

#[derive(diesel::QueryableByName, Debug)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    recipient: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    status: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    attempts: i32,
    #[diesel(sql_type = diesel::sql_types::Text)]
    body_text: String,
}

async fn outbox(app: &TestApp) -> Vec<Row> {
    let mut conn = app.db.conn().await.expect("conn");
    diesel::sql_query("SELECT recipient, status, attempts, body_text FROM mail_outbox ORDER BY id")
        .load(&mut conn)
        .await
        .expect("outbox")
}

#[tokio::test]
async fn a_committed_mail_arrives_with_text_and_html_and_leaves_no_body_behind() {
    let sink = SmtpSink::start().await;
    let app = TestApp::spawn_with(|s| {
        mail_to(s, sink.port);
        s.mail.from = "Acme Support <support@acme.test>".into();
    })
    .await;
    let workers = app.start_mail();
    enqueue(&app, vec![mail("Ann@Example.test", 1)]).await;

    let got = sink.wait_for(1, Duration::from_secs(15)).await;
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m.to, ["ann@example.test"]);
    assert_eq!(m.from, "support@acme.test");
    assert!(m.header_from.contains("Acme Support"), "{}", m.header_from);
    assert_eq!(m.subject, "Test mail 1");
    assert!(m.text.as_deref().is_some_and(|t| t.contains("Message number 1 for <you>.")), "{m:?}");
    assert!(m.html.as_deref().is_some_and(|h| h.contains("Message number 1 for &lt;you&gt;.")), "{m:?}");
    assert_eq!(m.link("/things/").as_deref(), Some("http://127.0.0.1:1/things/1"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rows = outbox(&app).await;
    assert_eq!((rows[0].status.as_str(), rows[0].attempts), ("sent", 1));
    // The bodies hold one-time links: nothing of them stays once sent.
    assert_eq!(rows[0].body_text, "");
    workers.stop(Duration::from_secs(5)).await;
    sink.stop().await;
}

#[tokio::test]
async fn a_rolled_back_change_sends_no_mail() {
    let sink = SmtpSink::start().await;
    let app = TestApp::spawn_with(|s| mail_to(s, sink.port)).await;
    let workers = app.start_mail();
    let mut conn = app.db.conn().await.expect("conn");
    let mails = vec![mail("bob@example.test", 1)];
    let r = conn
        .transaction::<(), diesel::result::Error, _>(|conn| {
            async move {
                adapters_postgres::mail::enqueue(conn, &mails).await?;
                Err(diesel::result::Error::RollbackTransaction)
            }
            .scope_boxed()
        })
        .await;
    assert!(r.is_err());
    enqueue(&app, vec![mail("carol@example.test", 2)]).await;
    let got = sink.wait_for(2, Duration::from_secs(3)).await;
    assert_eq!(got.iter().map(|m| m.to[0].as_str()).collect::<Vec<_>>(), ["carol@example.test"]);
    assert_eq!(outbox(&app).await.len(), 1);
    workers.stop(Duration::from_secs(5)).await;
    sink.stop().await;
}

#[tokio::test]
async fn smtp_down_while_three_people_are_invited_all_three_arrive_after_it_comes_back_none_twice() {
    // The server's port is chosen now and nobody listens on it until later: an outage.
    let port = free_port();
    let app = TestApp::spawn_with(|s| mail_to(s, port)).await;
    let workers = app.start_mail();
    let people = ["ann@example.test", "bob@example.test", "carol@example.test"];
    for (n, p) in people.iter().enumerate() {
        enqueue(&app, vec![mail(p, n)]).await;
    }
    // Several attempts fail meanwhile; the mails wait, counted by the queue's metrics.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let rows = outbox(&app).await;
    assert!(rows.iter().all(|r| r.status != "sent" && r.status != "failed"), "{rows:?}");
    assert!(rows.iter().all(|r| r.attempts >= 2), "retried during the outage: {rows:?}");
    let stats = adapters_postgres::queue_stats::queue_stats(&app.db).await.expect("stats");
    let mail_queue = stats.iter().find(|s| s.queue == "mail").expect("the mail queue");
    assert_eq!(mail_queue.depth, 3);

    let sink = SmtpSink::start_on(port).await;
    let got = sink.wait_for(3, Duration::from_secs(20)).await;
    assert_eq!(got.len(), 3, "{got:?}");
    // Later attempts would repeat them: none comes.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut per_person: HashMap<String, usize> = HashMap::new();
    for m in sink.received() {
        *per_person.entry(m.to[0].clone()).or_default() += 1;
    }
    assert_eq!(per_person.len(), 3, "{per_person:?}");
    assert!(per_person.values().all(|n| *n == 1), "{per_person:?}");
    let rows = outbox(&app).await;
    assert!(rows.iter().all(|r| r.status == "sent"), "{rows:?}");
    assert_eq!(rows.iter().map(|r| r.recipient.as_str()).collect::<Vec<_>>(), people);
    workers.stop(Duration::from_secs(5)).await;
    sink.stop().await;
}

#[tokio::test]
async fn several_instances_never_send_one_mail_twice() {
    let sink = SmtpSink::start().await;
    let app = TestApp::spawn_with(|s| {
        mail_to(s, sink.port);
        s.mail.workers = 3;
    })
    .await;
    let (a, b) = (app.start_mail(), app.start_mail());
    let mails: Vec<Mail> = (0..30).map(|n| mail(&format!("person{n}@example.test"), n)).collect();
    enqueue(&app, mails).await;
    sink.wait_for(30, Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let got = sink.received();
    let mut seen: Vec<String> = got.iter().map(|m| m.to[0].clone()).collect();
    seen.sort();
    seen.dedup();
    assert_eq!((got.len(), seen.len()), (30, 30));
    a.stop(Duration::from_secs(5)).await;
    b.stop(Duration::from_secs(5)).await;
    sink.stop().await;
}

#[tokio::test]
async fn without_an_smtp_server_serve_keeps_mail_queued() {
    let app = TestApp::spawn().await;
    assert!(app.settings.mail.smtp_url.is_none());
    let workers = app.start_mail();
    enqueue(&app, vec![mail("ann@example.test", 1)]).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rows = outbox(&app).await;
    assert_eq!((rows[0].status.as_str(), rows[0].attempts), ("pending", 0));
    assert!(rows[0].body_text.contains("Message number 1"));
    workers.stop(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_admins_to_tell_are_the_active_admins_only() {
    let app = TestApp::spawn().await;
    let ws = app.create_workspace(domain::workspace::PlanTier::Advanced).await;
    let mut conn = app.db.conn().await.expect("conn");
    let admins = adapters_postgres::mail::admin_recipients(&mut conn, domain::workspace::WorkspaceId(ws.id))
        .await
        .expect("admins");
    assert_eq!(admins.iter().map(|e| e.as_str()).collect::<Vec<_>>(), [ws.admin_email.as_str()]);
}
