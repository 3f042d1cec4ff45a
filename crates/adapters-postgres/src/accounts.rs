//! Password resets (`password_resets`): the link and its e-mail in one transaction, and the reset
//! that uses the link, sets the password, voids the other links and signs the account out
//! everywhere in another.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::accounts::{NewPasswordReset, PasswordResetRepository};
use domain::auth::TokenDigest;
use domain::common::ports::PasswordHash;
use domain::users::{Email, UserId};
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::members::NO_PASSWORD;
use crate::pool::Db;
use crate::schema::{password_resets, sessions, user_tokens, users};

/// [`PasswordResetRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgPasswordResets {
    db: Db,
}

impl PgPasswordResets {
    /// Resets on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl PasswordResetRepository for PgPasswordResets {
    async fn account_with_password(&self, email: &Email) -> Result<Option<UserId>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let id: Option<i64> = users::table
            .filter(
                diesel::dsl::sql::<diesel::sql_types::Bool>("lower(email) = ")
                    .bind::<diesel::sql_types::Text, _>(email.as_str()),
            )
            .filter(users::password_hash.ne(NO_PASSWORD))
            .select(users::id)
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(id.map(UserId))
    }

    async fn create(&self, reset: &NewPasswordReset) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let reset = reset.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                diesel::insert_into(password_resets::table)
                    .values((
                        password_resets::user_id.eq(reset.user_id.0),
                        password_resets::token_digest.eq(reset.digest.0.as_slice()),
                        password_resets::expires_at.eq(reset.expires_at),
                    ))
                    .execute(conn)
                    .await?;
                crate::mail::enqueue(conn, std::slice::from_ref(&reset.mail)).await
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn open(&self, digest: &TokenDigest, now: OffsetDateTime) -> Result<Option<String>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        password_resets::table
            .inner_join(users::table)
            .filter(password_resets::token_digest.eq(digest.0.as_slice()))
            .filter(password_resets::used_at.is_null())
            .filter(password_resets::expires_at.gt(now))
            .select(users::email)
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)
    }

    async fn complete(
        &self,
        digest: &TokenDigest,
        now: OffsetDateTime,
        password: &PasswordHash,
    ) -> Result<Option<UserId>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let digest = digest.0.to_vec();
        let hash = password.0.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // The UPDATE takes the row: of two concurrent submissions, one finds it used.
                let user: Option<i64> = diesel::update(
                    password_resets::table
                        .filter(password_resets::token_digest.eq(&digest))
                        .filter(password_resets::used_at.is_null())
                        .filter(password_resets::expires_at.gt(now)),
                )
                .set(password_resets::used_at.eq(now))
                .returning(password_resets::user_id)
                .get_result(conn)
                .await
                .optional()?;
                let Some(user) = user else { return Ok(None) };
                diesel::update(users::table.find(user))
                    .set((users::password_hash.eq(&hash), users::updated_at.eq(diesel::dsl::now)))
                    .execute(conn)
                    .await?;
                diesel::update(
                    password_resets::table
                        .filter(password_resets::user_id.eq(user))
                        .filter(password_resets::used_at.is_null()),
                )
                .set(password_resets::used_at.eq(now))
                .execute(conn)
                .await?;
                diesel::update(
                    user_tokens::table.filter(user_tokens::user_id.eq(user)).filter(user_tokens::revoked_at.is_null()),
                )
                .set(user_tokens::revoked_at.eq(now))
                .execute(conn)
                .await?;
                diesel::update(
                    sessions::table.filter(sessions::user_id.eq(user)).filter(sessions::revoked_at.is_null()),
                )
                .set(sessions::revoked_at.eq(now))
                .execute(conn)
                .await?;
                Ok(Some(UserId(user)))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}
