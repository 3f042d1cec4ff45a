//! Keys reported leaked by secret scanning: looked up by digest in every workspace, the live ones
//! revoked with their audit records and the e-mails to their workspace's admins in one transaction
//! ([`domain::secret_scanning::decide_leak`], [`domain::api_keys::leak_mails`]).

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::api_keys::{leak_mails, ApiKey};
use domain::mail::SiteUrl;
use domain::secret_scanning::{decide_leak, LeakLabel, LeakReport, LeakedKeyStore};
use domain::RepoError;
use time::OffsetDateTime;

use crate::api_keys::ApiKeyRow;
use crate::error::repo;
use crate::pool::Db;
use crate::schema::api_keys;

/// [`LeakedKeyStore`] on PostgreSQL; the mails link to `site`.
#[derive(Debug, Clone)]
pub struct PgLeakedKeyStore {
    db: Db,
    site: SiteUrl,
}

impl PgLeakedKeyStore {
    /// A store on `db` whose mails link to `site`.
    pub fn new(db: Db, site: SiteUrl) -> Self {
        Self { db, site }
    }
}

#[async_trait]
impl LeakedKeyStore for PgLeakedKeyStore {
    async fn revoke_leaked(&self, reports: &[LeakReport], at: OffsetDateTime) -> Result<Vec<LeakLabel>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (reports, site) = (reports.to_vec(), self.site.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let digests: Vec<Vec<u8>> = reports.iter().map(|r| r.digest.0.to_vec()).collect();
                // Locked in id order, so two alerts naming the same keys never deadlock.
                let rows: Vec<(Vec<u8>, ApiKeyRow)> = api_keys::table
                    .filter(api_keys::key_digest.eq_any(&digests))
                    .order(api_keys::id)
                    .select((api_keys::key_digest, ApiKeyRow::as_select()))
                    .for_update()
                    .load(conn)
                    .await?;
                let mut found: HashMap<Vec<u8>, ApiKey> =
                    rows.into_iter().map(|(digest, row)| (digest, ApiKey::from(row))).collect();
                let mut labels = Vec::with_capacity(reports.len());
                for report in &reports {
                    let key = found.get(report.digest.0.as_slice());
                    let decision = decide_leak(key, &report.reported, at);
                    if let (Some(entry), Some(key)) = (&decision.revoke, key) {
                        // A rolled key in its grace period is revoked now (least() keeps an
                        // earlier time).
                        let revoked_at: Option<OffsetDateTime> = diesel::update(
                            api_keys::table
                                .filter(api_keys::workspace_id.eq(key.workspace_id.0))
                                .filter(api_keys::id.eq(key.id.0)),
                        )
                        .set(
                            api_keys::revoked_at.eq(diesel::dsl::sql::<
                                diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>,
                            >("least(revoked_at, ")
                            .bind::<diesel::sql_types::Timestamptz, _>(at)
                            .sql(")")),
                        )
                        .returning(api_keys::revoked_at)
                        .get_result(conn)
                        .await?;
                        crate::audit::write(conn, std::slice::from_ref(entry), None).await?;
                        let admins = crate::mail::admin_recipients(conn, key.workspace_id).await?;
                        let mails = leak_mails(key, report.reported.url.as_deref(), &admins, &site);
                        crate::mail::enqueue(conn, &mails).await?;
                        // The same token twice in one alert is revoked (and recorded) once.
                        let digest = report.digest.0.to_vec();
                        if let Some(k) = found.get_mut(&digest) {
                            k.revoked_at = revoked_at;
                        }
                    }
                    labels.push(decision.label);
                }
                Ok(labels)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
