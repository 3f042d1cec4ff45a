//! Password resets (`password_resets`): the link and its e-mail in one transaction, and the reset
//! that uses the link, sets the password, voids the other links and signs the account out
//! everywhere in another.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::accounts::{decide_reset, NewPasswordReset, PasswordResetRepository, ResetAccount, ResetLinkFacts};
use domain::auth::{OneTimeLink, TokenDigest};
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
    async fn account(&self, email: &Email) -> Result<Option<ResetAccount>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<(i64, String)> = users::table
            .filter(
                diesel::dsl::sql::<diesel::sql_types::Bool>("lower(email) = ")
                    .bind::<diesel::sql_types::Text, _>(email.as_str()),
            )
            .select((users::id, users::password_hash))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(|(id, hash)| ResetAccount { user_id: UserId(id), has_password: hash != NO_PASSWORD }))
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

    async fn link(&self, digest: &TokenDigest) -> Result<Option<ResetLinkFacts>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<LinkRow> = password_resets::table
            .inner_join(users::table)
            .filter(password_resets::token_digest.eq(digest.0.as_slice()))
            .select(LINK_COLUMNS)
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        Ok(row.map(link_facts))
    }

    async fn complete(
        &self,
        digest: &TokenDigest,
        now: OffsetDateTime,
        password: &PasswordHash,
    ) -> Result<Option<UserId>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let digest = digest.0.to_vec();
        let password = password.clone();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // The account's live login tokens, then every link of the account, are locked in
                // id order before anything is decided: of two submissions of one link, one finds
                // it used; two links of the account completed at once take turns instead of each
                // holding its own and waiting for the other's (completing voids them all); and a
                // leak alert, which locks login tokens before reset links too, takes turns with
                // it. The account is only read, as voiding a leaked link does.
                let owner: Option<i64> = password_resets::table
                    .filter(password_resets::token_digest.eq(&digest))
                    .select(password_resets::user_id)
                    .first(conn)
                    .await
                    .optional()?;
                let Some(owner) = owner else { return Ok(None) };
                user_tokens::table
                    .filter(user_tokens::user_id.eq(owner))
                    .filter(user_tokens::revoked_at.is_null())
                    .order(user_tokens::id)
                    .select(user_tokens::id)
                    .for_update()
                    .load::<i64>(conn)
                    .await?;
                password_resets::table
                    .filter(password_resets::user_id.eq(owner))
                    .order(password_resets::id)
                    .select(password_resets::id)
                    .for_update()
                    .load::<i64>(conn)
                    .await?;
                let row: Option<LinkRow> = password_resets::table
                    .inner_join(users::table)
                    .filter(password_resets::token_digest.eq(&digest))
                    .select(LINK_COLUMNS)
                    .first(conn)
                    .await
                    .optional()?;
                let Some(facts) = row.map(link_facts) else { return Ok(None) };
                let Some(reset) = decide_reset(&facts, now, password) else { return Ok(None) };
                let (user, at) = (reset.user_id.0, reset.at);
                diesel::update(users::table.find(user))
                    .set((users::password_hash.eq(&reset.password.0), users::updated_at.eq(diesel::dsl::now)))
                    .execute(conn)
                    .await?;
                diesel::update(
                    password_resets::table
                        .filter(password_resets::user_id.eq(user))
                        .filter(password_resets::used_at.is_null()),
                )
                .set(password_resets::used_at.eq(at))
                .execute(conn)
                .await?;
                diesel::update(
                    user_tokens::table.filter(user_tokens::user_id.eq(user)).filter(user_tokens::revoked_at.is_null()),
                )
                .set(user_tokens::revoked_at.eq(at))
                .execute(conn)
                .await?;
                diesel::update(
                    sessions::table.filter(sessions::user_id.eq(user)).filter(sessions::revoked_at.is_null()),
                )
                .set(sessions::revoked_at.eq(at))
                .execute(conn)
                .await?;
                Ok(Some(reset.user_id))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }
}

/// A reset link as read: its account (id, address) and its expiry and use.
type LinkRow = (i64, String, OffsetDateTime, Option<OffsetDateTime>);

const LINK_COLUMNS: (password_resets::user_id, users::email, password_resets::expires_at, password_resets::used_at) =
    (password_resets::user_id, users::email, password_resets::expires_at, password_resets::used_at);

fn link_facts((user, email, expires_at, used_at): LinkRow) -> ResetLinkFacts {
    ResetLinkFacts { user_id: UserId(user), email, link: OneTimeLink { expires_at, used_at } }
}

/// The account's stored password hash, its row locked (`FOR SHARE`) until the transaction ends:
/// the fact a sign-in's [`domain::auth::SignInProof`] is checked against where its token or
/// session is stored. A reset that changes the password waits for the sign-in's commit (and then
/// revokes what it stored), or the sign-in reads the new hash.
///
/// # Errors
/// Database failures.
pub(crate) async fn password_for_sign_in(
    conn: &mut diesel_async::AsyncPgConnection,
    user: UserId,
) -> Result<PasswordHash, diesel::result::Error> {
    let hash: String = users::table.find(user.0).select(users::password_hash).for_share().first(conn).await?;
    Ok(PasswordHash(hash))
}
