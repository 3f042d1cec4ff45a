//! Credentials reported leaked by secret scanning: looked up by digest in every workspace, the
//! live ones revoked (or, for links, voided) with their audit records and e-mails in one
//! transaction — a key's to its workspace's admins ([`domain::secret_scanning::decide_leak`],
//! [`domain::api_keys::leak_mails`]), a login token's to its owner
//! ([`domain::secret_scanning::decide_login_token_leak`]), an app token's whole grant, to the
//! member who granted it ([`domain::secret_scanning::decide_app_token_leak`]), an invitation link's
//! to the workspace's admins ([`domain::secret_scanning::decide_invitation_leak`]) and a
//! password-reset link's to its account's owner
//! ([`domain::secret_scanning::decide_password_reset_leak`]).

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::api_keys::{leak_mails, ApiKey};
use domain::auth::{OneTimeLink, TokenKind};
use domain::mail::SiteUrl;
use domain::members::MemberStatus;
use domain::secret_scanning::{
    decide_app_token_leak, decide_invitation_leak, decide_leak, decide_login_token_leak, decide_password_reset_leak,
    LeakLabel, LeakReport, LeakedAppToken, LeakedCredentialStore, LeakedInvitation, LeakedLoginToken,
    LeakedPasswordReset, UserTokenHolder,
};
use domain::users::{Email, UserId};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::api_keys::ApiKeyRow;
use crate::error::repo;
use crate::pool::Db;
use crate::schema::{api_keys, member_invitations, password_resets, user_tokens, users, workspace_members, workspaces};

/// [`LeakedCredentialStore`] on PostgreSQL; the mails link to `site`.
#[derive(Debug, Clone)]
pub struct PgLeakedCredentialStore {
    db: Db,
    site: SiteUrl,
}

impl PgLeakedCredentialStore {
    /// A store on `db` whose mails link to `site`.
    pub fn new(db: Db, site: SiteUrl) -> Self {
        Self { db, site }
    }
}

#[async_trait]
impl LeakedCredentialStore for PgLeakedCredentialStore {
    async fn revoke_leaked(&self, reports: &[LeakReport], at: OffsetDateTime) -> Result<Vec<LeakLabel>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let (reports, site) = (reports.to_vec(), self.site.clone());
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let digests = |kind: TokenKind| -> Vec<Vec<u8>> {
                    reports.iter().filter(|r| r.kind == kind).map(|r| r.digest.0.to_vec()).collect()
                };
                // Locked in id order (keys, then login tokens, app grants, invitations and reset
                // links), so two alerts naming the same credentials never deadlock.
                let rows: Vec<(Vec<u8>, ApiKeyRow)> = api_keys::table
                    .filter(api_keys::key_digest.eq_any(&digests(TokenKind::ApiKey)))
                    .order(api_keys::id)
                    .select((api_keys::key_digest, ApiKeyRow::as_select()))
                    .for_update()
                    .load(conn)
                    .await?;
                let mut found: HashMap<Vec<u8>, ApiKey> =
                    rows.into_iter().map(|(digest, row)| (digest, ApiKey::from(row))).collect();
                let tokens = lock_login_tokens(conn, &digests(TokenKind::User)).await?;
                let app_digests: Vec<Vec<u8>> =
                    digests(TokenKind::AppAccess).into_iter().chain(digests(TokenKind::AppRefresh)).collect();
                let mut app_tokens = lock_app_grants(conn, &app_digests).await?;
                // A `wmsu_` token is a login token, or else an invitation or reset link's.
                let links: Vec<Vec<u8>> = digests(TokenKind::User)
                    .into_iter()
                    .filter(|d| UserTokenHolder::may_be_a_link(tokens.contains_key(d.as_slice())))
                    .collect();
                let mut invitations = lock_invitations(conn, &links).await?;
                let mut resets = lock_password_resets(conn, &links).await?;
                let mut labels = Vec::with_capacity(reports.len());
                for report in &reports {
                    if report.kind.is_app() {
                        let token = app_tokens.get(report.digest.0.as_slice());
                        let decision = decide_app_token_leak(token, &report.reported, at, &site);
                        if let Some(revocation) = &decision.revoke {
                            crate::oauth::revoke(conn, revocation.grant_id, at, &revocation.audit).await?;
                            crate::mail::enqueue(conn, revocation.mail.as_slice()).await?;
                            // The grant's other tokens in this alert see it revoked by it.
                            for t in app_tokens.values_mut().filter(|t| t.grant_id == revocation.grant_id) {
                                t.grant_revoked_at = Some(at);
                            }
                        }
                        labels.push(decision.label);
                        continue;
                    }
                    if report.kind == TokenKind::User {
                        let digest = report.digest.0.as_slice();
                        let holder = UserTokenHolder::of(
                            tokens.contains_key(digest),
                            invitations.contains_key(digest),
                            resets.contains_key(digest),
                        );
                        let label = match holder {
                            UserTokenHolder::Invitation => {
                                let Some(invitation) = invitations.get_mut(digest) else {
                                    labels.push(LeakLabel::FalsePositive);
                                    continue;
                                };
                                let decision = decide_invitation_leak(invitation, &report.reported, at, &site);
                                if let Some(void) = &decision.void {
                                    // As re-sending the invitation does: the link goes, the
                                    // membership stays invited.
                                    diesel::delete(member_invitations::table.find(void.invitation_id))
                                        .execute(conn)
                                        .await?;
                                    crate::audit::write(conn, std::slice::from_ref(&void.audit), None).await?;
                                    crate::mail::enqueue(conn, &void.mails).await?;
                                    // The same link twice in one alert is voided (and recorded) once.
                                    invitation.link.used_at = Some(at);
                                }
                                decision.label
                            }
                            UserTokenHolder::PasswordReset => {
                                let Some(reset) = resets.get_mut(digest) else {
                                    labels.push(LeakLabel::FalsePositive);
                                    continue;
                                };
                                let decision = decide_password_reset_leak(reset, &report.reported, at, &site);
                                if let Some(void) = &decision.void {
                                    // As using another link of the account does.
                                    diesel::update(password_resets::table.find(void.reset_id))
                                        .set(password_resets::used_at.eq(at))
                                        .execute(conn)
                                        .await?;
                                    crate::mail::enqueue(conn, void.mail.as_slice()).await?;
                                    reset.link.used_at = Some(at);
                                }
                                decision.label
                            }
                            UserTokenHolder::Login | UserTokenHolder::Nobody => {
                                let token = tokens.get(digest);
                                let decision = decide_login_token_leak(token, &report.reported, at, &site);
                                if let (Some(revocation), Some(token)) = (&decision.revoke, token) {
                                    // As signing out does: the row stays, revoked.
                                    diesel::update(
                                        user_tokens::table
                                            .filter(user_tokens::id.eq(token.id))
                                            .filter(user_tokens::revoked_at.is_null()),
                                    )
                                    .set(user_tokens::revoked_at.eq(at))
                                    .execute(conn)
                                    .await?;
                                    crate::audit::write(conn, std::slice::from_ref(&revocation.audit), None).await?;
                                    crate::mail::enqueue(conn, revocation.mail.as_slice()).await?;
                                }
                                decision.label
                            }
                        };
                        labels.push(label);
                        continue;
                    }
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

/// The login tokens of `digests` with their owners' addresses; the tokens locked in id order (the
/// owners are only read: a password change locks the user before the tokens it revokes).
async fn lock_login_tokens(
    conn: &mut AsyncPgConnection,
    digests: &[Vec<u8>],
) -> diesel::QueryResult<HashMap<Vec<u8>, LeakedLoginToken>> {
    if digests.is_empty() {
        return Ok(HashMap::new());
    }
    type Row = (i64, Vec<u8>, i64, i64, OffsetDateTime, Option<OffsetDateTime>);
    let rows: Vec<Row> = user_tokens::table
        .filter(user_tokens::token_digest.eq_any(digests))
        .order(user_tokens::id)
        .select((
            user_tokens::id,
            user_tokens::token_digest,
            user_tokens::workspace_id,
            user_tokens::user_id,
            user_tokens::expires_at,
            user_tokens::revoked_at,
        ))
        .for_update()
        .load(conn)
        .await?;
    let owners: Vec<i64> = rows.iter().map(|r| r.3).collect();
    let emails = emails_of(conn, &owners).await?;
    Ok(rows
        .into_iter()
        .map(|(id, digest, workspace_id, user_id, expires_at, revoked_at)| {
            let token = LeakedLoginToken {
                id,
                workspace_id: WorkspaceId(workspace_id),
                user_id: UserId(user_id),
                // Stored addresses were validated on the way in; one that no longer parses gets
                // no mail, and the token is revoked all the same.
                owner_email: emails.get(&user_id).and_then(|e| Email::new("email", e).ok()),
                expires_at,
                revoked_at,
            };
            (digest, token)
        })
        .collect())
}

/// The app tokens of `digests` with their grants, apps and the granting members' addresses; the
/// grants locked in id order (after the keys and login tokens, as a member's revocation locks only
/// the grant).
async fn lock_app_grants(
    conn: &mut AsyncPgConnection,
    digests: &[Vec<u8>],
) -> diesel::QueryResult<HashMap<Vec<u8>, LeakedAppToken>> {
    use diesel::sql_types::{Array, BigInt, Bytea, Nullable, Text, Timestamptz};
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = Bytea)]
        token_digest: Vec<u8>,
        #[diesel(sql_type = BigInt)]
        grant_id: i64,
        #[diesel(sql_type = BigInt)]
        workspace_id: i64,
        #[diesel(sql_type = BigInt)]
        user_id: i64,
        #[diesel(sql_type = Text)]
        email: String,
        #[diesel(sql_type = Text)]
        client_name: String,
        #[diesel(sql_type = Timestamptz)]
        expires_at: OffsetDateTime,
        #[diesel(sql_type = Nullable<Timestamptz>)]
        revoked_at: Option<OffsetDateTime>,
    }
    if digests.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT t.token_digest, g.id AS grant_id, g.workspace_id, g.user_id, u.email, c.client_name, t.expires_at, \
                g.revoked_at \
           FROM oauth_tokens t \
           JOIN oauth_grants g ON g.workspace_id = t.workspace_id AND g.id = t.grant_id \
           JOIN oauth_clients c ON c.id = g.client_id \
           JOIN users u ON u.id = g.user_id \
          WHERE t.token_digest = ANY($1) \
          ORDER BY g.id \
            FOR UPDATE OF g",
    )
    .bind::<Array<Bytea>, _>(digests)
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let token = LeakedAppToken {
                grant_id: r.grant_id,
                workspace_id: WorkspaceId(r.workspace_id),
                user_id: UserId(r.user_id),
                // As for login tokens: an address that no longer parses gets no mail.
                owner_email: Email::new("email", &r.email).ok(),
                client_name: r.client_name,
                expires_at: r.expires_at,
                grant_revoked_at: r.revoked_at,
            };
            (r.token_digest, token)
        })
        .collect())
}

/// The invitations of `digests`, locked in id order, with their workspaces, invited addresses,
/// membership states and the workspaces' active admins.
async fn lock_invitations(
    conn: &mut AsyncPgConnection,
    digests: &[Vec<u8>],
) -> diesel::QueryResult<HashMap<Vec<u8>, LeakedInvitation>> {
    if digests.is_empty() {
        return Ok(HashMap::new());
    }
    type Row = (i64, Vec<u8>, i64, i64, OffsetDateTime, Option<OffsetDateTime>);
    let rows: Vec<Row> = member_invitations::table
        .filter(member_invitations::token_digest.eq_any(digests))
        .order(member_invitations::id)
        .select((
            member_invitations::id,
            member_invitations::token_digest,
            member_invitations::workspace_id,
            member_invitations::user_id,
            member_invitations::expires_at,
            member_invitations::used_at,
        ))
        .for_update()
        .load(conn)
        .await?;
    let mut found = HashMap::with_capacity(rows.len());
    for (id, digest, ws, user, expires_at, used_at) in rows {
        let (workspace_name, invitee): (String, String) = workspaces::table
            .inner_join(users::table.on(users::id.eq(user)))
            .filter(workspaces::id.eq(ws))
            .select((workspaces::name, users::email))
            .first(conn)
            .await?;
        let status: Option<String> =
            workspace_members::table.find((ws, user)).select(workspace_members::status).first(conn).await.optional()?;
        let admins = crate::mail::admin_recipients(conn, WorkspaceId(ws)).await?;
        let invitation = LeakedInvitation {
            id,
            workspace_id: WorkspaceId(ws),
            workspace_name,
            user_id: UserId(user),
            invitee,
            link: OneTimeLink { expires_at, used_at },
            membership: status
                .map(|s| MemberStatus::parse(&s))
                .transpose()
                .map_err(|e| diesel::result::Error::DeserializationError(e.into()))?,
            admins,
        };
        found.insert(digest, invitation);
    }
    Ok(found)
}

/// The password-reset links of `digests`, locked in id order, with their accounts' addresses
/// (only read, as for login tokens: using a link locks the link before the account).
async fn lock_password_resets(
    conn: &mut AsyncPgConnection,
    digests: &[Vec<u8>],
) -> diesel::QueryResult<HashMap<Vec<u8>, LeakedPasswordReset>> {
    if digests.is_empty() {
        return Ok(HashMap::new());
    }
    type Row = (i64, Vec<u8>, i64, OffsetDateTime, Option<OffsetDateTime>);
    let rows: Vec<Row> = password_resets::table
        .filter(password_resets::token_digest.eq_any(digests))
        .order(password_resets::id)
        .select((
            password_resets::id,
            password_resets::token_digest,
            password_resets::user_id,
            password_resets::expires_at,
            password_resets::used_at,
        ))
        .for_update()
        .load(conn)
        .await?;
    let owners: Vec<i64> = rows.iter().map(|r| r.2).collect();
    let emails = emails_of(conn, &owners).await?;
    Ok(rows
        .into_iter()
        .map(|(id, digest, user, expires_at, used_at)| {
            // As for login tokens: an address that no longer parses gets no mail.
            let owner_email = emails.get(&user).and_then(|e| Email::new("email", e).ok());
            (
                digest,
                LeakedPasswordReset {
                    id,
                    user_id: UserId(user),
                    owner_email,
                    link: OneTimeLink { expires_at, used_at },
                },
            )
        })
        .collect())
}

/// The stored addresses of `users`.
async fn emails_of(conn: &mut AsyncPgConnection, users: &[i64]) -> diesel::QueryResult<HashMap<i64, String>> {
    Ok(users::table
        .filter(users::id.eq_any(users))
        .select((users::id, users::email))
        .load(conn)
        .await?
        .into_iter()
        .collect())
}
