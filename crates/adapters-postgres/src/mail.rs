//! The e-mail outbox (`mail_outbox`): [`enqueue`] writes mails inside the caller's transaction,
//! [`admin_recipients`] finds whom to tell about a workspace, and [`PgMailQueue`] is what the
//! mail workers claim from and record into (`FOR UPDATE SKIP LOCKED` with a lease, so instances
//! never take the same mail, and one that died mid-send leaves it to another after the lease).

use std::time::Duration;

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Integer, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::mail::{ClaimedMail, Mail, MailFate, MailId, MailQueue, MailResult};
use domain::members::{told_about_workspace, MemberStatus};
use domain::users::{Email, Role};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;

/// Mail send attempts, by `outcome` (`sent`, `retrying`, `failed`).
pub const SENDS: &str = "wms_mail_sends_total";

/// Writes `mails` to the outbox **inside the caller's open transaction**: they are sent once it
/// commits, and never if it rolls back.
///
/// ```ignore
/// conn.transaction(|conn| async move {
///     let key = mark_key_leaked(conn, ws, id).await?;
///     let admins = adapters_postgres::mail::admin_recipients(conn, ws).await?;
///     adapters_postgres::mail::enqueue(conn, &domain::api_keys::leak_mails(&key, &admins, &site)).await?;
///     Ok(key)
/// }.scope_boxed()).await
/// ```
///
/// # Errors
/// Database errors, which should fail (roll back) the caller's transaction.
pub async fn enqueue(conn: &mut AsyncPgConnection, mails: &[Mail]) -> diesel::QueryResult<()> {
    for mail in mails {
        diesel::sql_query(
            "INSERT INTO mail_outbox (recipient, subject, body_text, body_html, next_attempt_at)
             VALUES ($1, $2, $3, $4, clock_timestamp())",
        )
        .bind::<Text, _>(mail.to.as_str())
        .bind::<Text, _>(&mail.subject)
        .bind::<Text, _>(&mail.text)
        .bind::<Text, _>(&mail.html)
        .execute(conn)
        .await?;
    }
    Ok(())
}

#[derive(QueryableByName)]
struct Recipient {
    #[diesel(sql_type = Text)]
    email: String,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Text)]
    status: String,
}

/// The addresses of the workspace's members the domain tells about its keys and webhooks
/// ([`told_about_workspace`]: its active admins), read inside the caller's transaction.
///
/// # Errors
/// Database errors.
pub async fn admin_recipients(conn: &mut AsyncPgConnection, ws: WorkspaceId) -> diesel::QueryResult<Vec<Email>> {
    let rows: Vec<Recipient> = diesel::sql_query(
        "SELECT u.email, m.role, m.status FROM workspace_members m JOIN users u ON u.id = m.user_id
         WHERE m.workspace_id = $1
         ORDER BY m.user_id",
    )
    .bind::<BigInt, _>(ws.0)
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .filter(|r| {
            let (role, status) = (r.role.parse::<Role>(), MemberStatus::parse(&r.status));
            role.is_ok_and(|role| status.is_ok_and(|status| told_about_workspace(role, status)))
        })
        // Stored addresses were validated on the way in; one that no longer parses is skipped.
        .filter_map(|r| Email::new("email", &r.email).ok())
        .collect())
}

/// [`MailQueue`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMailQueue {
    db: Db,
}

impl PgMailQueue {
    /// The outbox on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// Deletes sent and failed mails queued before `before`; how many.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn prune(&self, before: OffsetDateTime) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        diesel::sql_query("DELETE FROM mail_outbox WHERE status IN ('sent', 'failed') AND created_at < $1")
            .bind::<Timestamptz, _>(before)
            .execute(&mut conn)
            .await
            .map_err(repo)
    }
}

#[derive(QueryableByName)]
struct ClaimRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Text)]
    recipient: String,
    #[diesel(sql_type = Text)]
    subject: String,
    #[diesel(sql_type = Text)]
    body_text: String,
    #[diesel(sql_type = Text)]
    body_html: String,
}

#[async_trait]
impl MailQueue for PgMailQueue {
    async fn claim_due(&self, now: OffsetDateTime, max: usize, lease: Duration) -> Result<Vec<ClaimedMail>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let lease_end = now + lease;
        // One statement: the rows are locked, skipped by every other claimer, and leased before
        // the lock is released at its end.
        let rows: Vec<ClaimRow> = diesel::sql_query(
            "WITH due AS (
                 SELECT id FROM mail_outbox
                 WHERE status IN ('pending', 'sending') AND next_attempt_at <= $1
                 ORDER BY next_attempt_at, id
                 LIMIT $2
                 FOR UPDATE SKIP LOCKED
             )
             UPDATE mail_outbox m
             SET status = 'sending', attempts = m.attempts + 1, next_attempt_at = $3
             FROM due WHERE m.id = due.id
             RETURNING m.id, m.attempts, m.created_at, m.recipient, m.subject, m.body_text, m.body_html",
        )
        .bind::<Timestamptz, _>(now)
        .bind::<BigInt, _>(i64::try_from(max).unwrap_or(i64::MAX))
        .bind::<Timestamptz, _>(lease_end)
        .load(&mut conn)
        .await
        .map_err(repo)?;
        rows.into_iter()
            .map(|r| {
                let to = Email::new("recipient", &r.recipient).map_err(|e| repo(anyhow::anyhow!("{}", e.message)))?;
                Ok(ClaimedMail {
                    id: MailId(r.id),
                    attempt: u32::try_from(r.attempts).unwrap_or(1),
                    queued_at: r.created_at,
                    mail: Mail { to, subject: r.subject, text: r.body_text, html: r.body_html },
                })
            })
            .collect()
    }

    async fn record(&self, result: &MailResult) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let id = result.id.0;
        let attempt = i32::try_from(result.attempt).unwrap_or(i32::MAX);
        // Only the mail's latest claim records: a worker whose lease ran out finds nothing here.
        let outcome = match &result.fate {
            MailFate::Sent => {
                diesel::sql_query(
                    "UPDATE mail_outbox SET status = 'sent', sent_at = now(), last_error = NULL,
                         body_text = '', body_html = ''
                     WHERE id = $1 AND attempts = $2 AND status = 'sending'",
                )
                .bind::<BigInt, _>(id)
                .bind::<Integer, _>(attempt)
                .execute(&mut conn)
                .await
                .map_err(repo)?;
                "sent"
            }
            MailFate::Retry { at, error } => {
                diesel::sql_query(
                    "UPDATE mail_outbox SET status = 'pending', next_attempt_at = $3, last_error = $4
                     WHERE id = $1 AND attempts = $2 AND status = 'sending'",
                )
                .bind::<BigInt, _>(id)
                .bind::<Integer, _>(attempt)
                .bind::<Timestamptz, _>(*at)
                .bind::<Text, _>(error)
                .execute(&mut conn)
                .await
                .map_err(repo)?;
                "retrying"
            }
            MailFate::Failed { error } => {
                diesel::sql_query(
                    "UPDATE mail_outbox SET status = 'failed', last_error = $3, body_text = '', body_html = ''
                     WHERE id = $1 AND attempts = $2 AND status = 'sending'",
                )
                .bind::<BigInt, _>(id)
                .bind::<Integer, _>(attempt)
                .bind::<Text, _>(error)
                .execute(&mut conn)
                .await
                .map_err(repo)?;
                "failed"
            }
        };
        metrics::counter!(SENDS, "outcome" => outcome).increment(1);
        Ok(())
    }
}
