//! [`VisitorSearches`] on `docs_search_visitors`: the pace of each client address searching the
//! public documentation pages without credentials, decided by the domain's [`admit_visitor`].

use async_trait::async_trait;
use diesel::sql_types::{Array, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::docs::{admit_visitor, VisitorPace, VisitorSearches, VisitorVerdict};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;

/// [`VisitorSearches`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgVisitorSearches {
    db: Db,
}

impl PgVisitorSearches {
    /// Paces kept in `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Stored {
    #[diesel(sql_type = Array<Timestamptz>)]
    searches: Vec<OffsetDateTime>,
}

#[async_trait]
impl VisitorSearches for PgVisitorSearches {
    async fn admit(&self, key: &str, now: OffsetDateTime) -> Result<VisitorVerdict, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let key = key.to_owned();
        conn.transaction::<_, diesel::result::Error, _>(|c| {
            async move {
                // The row exists before it is locked, so concurrent first searches of one client
                // take turns on it like any later ones.
                diesel::sql_query(
                    "INSERT INTO docs_search_visitors (client, expires_at) VALUES ($1, $2) ON CONFLICT (client) DO NOTHING",
                )
                .bind::<Text, _>(&key)
                .bind::<Timestamptz, _>(now)
                .execute(c)
                .await?;
                let stored: Stored =
                    diesel::sql_query("SELECT searches FROM docs_search_visitors WHERE client = $1 FOR UPDATE")
                        .bind::<Text, _>(&key)
                        .get_result(c)
                        .await?;
                let verdict = admit_visitor(&VisitorPace { searches: stored.searches }, now);
                if let VisitorVerdict::Admitted(pace) = &verdict {
                    diesel::sql_query(
                        "UPDATE docs_search_visitors SET searches = $2, expires_at = $3 WHERE client = $1",
                    )
                    .bind::<Text, _>(&key)
                    .bind::<Array<Timestamptz>, _>(&pace.searches)
                    .bind::<Timestamptz, _>(pace.expires_at().unwrap_or(now))
                    .execute(c)
                    .await?;
                    // Rows a minute past their newest search are no row at all: a few go with each
                    // search.
                    diesel::sql_query(
                        "DELETE FROM docs_search_visitors WHERE client IN (
                             SELECT client FROM docs_search_visitors WHERE expires_at < $1 AND client <> $2
                             LIMIT 10 FOR UPDATE SKIP LOCKED)",
                    )
                    .bind::<Timestamptz, _>(now)
                    .bind::<Text, _>(&key)
                    .execute(c)
                    .await?;
                }
                Ok(verdict)
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
