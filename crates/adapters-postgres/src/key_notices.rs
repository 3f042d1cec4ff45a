//! The API keys' expiry notices: keys whose notice is due, found by the expiry index, handled once
//! each ([`domain::api_keys::decide_expiry_notice`]); the e-mails go to the mail outbox in the same
//! transaction as the record that the notice was handled.

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::api_keys::{decide_expiry_notice, expiry_mails, ApiKey, ExpiryNotice, ExpiryNoticeStore, NoticeDecision};
use domain::mail::SiteUrl;
use domain::users::Email;
use domain::RepoError;
use time::OffsetDateTime;

use crate::api_keys::ApiKeyRow;
use crate::error::repo;
use crate::pool::Db;
use crate::schema::{api_key_expiry_notices, api_keys};

/// [`ExpiryNoticeStore`] on PostgreSQL; the mails link to `site`.
#[derive(Debug, Clone)]
pub struct PgExpiryNotices {
    db: Db,
    site: SiteUrl,
}

impl PgExpiryNotices {
    /// A store on `db` whose mails link to `site`.
    pub fn new(db: Db, site: SiteUrl) -> Self {
        Self { db, site }
    }
}

#[async_trait]
impl ExpiryNoticeStore for PgExpiryNotices {
    async fn handle_due(&self, notice: ExpiryNotice, now: OffsetDateTime, limit: i64) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let site = self.site.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // The facts: keys that expire within the notice's lead and have no record of it,
                // by the expiry index; a key another instance holds is left to it.
                let handled = api_key_expiry_notices::table
                    .filter(api_key_expiry_notices::api_key_id.eq(api_keys::id))
                    .filter(api_key_expiry_notices::notice.eq(notice.as_str()));
                let rows: Vec<ApiKeyRow> = api_keys::table
                    .filter(api_keys::expires_at.gt(now))
                    .filter(api_keys::expires_at.le(now + notice.lead()))
                    .filter(diesel::dsl::not(diesel::dsl::exists(handled)))
                    .order(api_keys::expires_at)
                    .limit(limit)
                    .select(ApiKeyRow::as_select())
                    .for_update()
                    .skip_locked()
                    .load(conn)
                    .await?;
                let count = rows.len();
                let mut admins: HashMap<i64, Vec<Email>> = HashMap::new();
                for key in rows.into_iter().map(ApiKey::from) {
                    let Some(decision) = decide_expiry_notice(&key, notice, now) else { continue };
                    // The record first: an instance whose read came before another's commit finds
                    // the notice recorded here (the insert sees committed rows) and mails nothing.
                    let recorded = diesel::insert_into(api_key_expiry_notices::table)
                        .values((
                            api_key_expiry_notices::workspace_id.eq(key.workspace_id.0),
                            api_key_expiry_notices::api_key_id.eq(key.id.0),
                            api_key_expiry_notices::notice.eq(notice.as_str()),
                            api_key_expiry_notices::mailed.eq(decision == NoticeDecision::Send),
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await?;
                    if recorded == 0 || decision != NoticeDecision::Send {
                        continue;
                    }
                    let ws = key.workspace_id;
                    // The admins are read once per workspace and batch.
                    let to = match admins.entry(ws.0) {
                        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::hash_map::Entry::Vacant(e) => {
                            e.insert(crate::mail::admin_recipients(conn, ws).await?)
                        }
                    };
                    crate::mail::enqueue(conn, &expiry_mails(&key, to, &site, now)).await?;
                }
                Ok(count)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
