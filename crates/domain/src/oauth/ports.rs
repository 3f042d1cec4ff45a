//! Storage of the authorization server: clients, grants, codes and tokens (digests only).

use async_trait::async_trait;
use time::OffsetDateTime;

use super::grant::{AccessFacts, CodeExchange, Exchange, RefreshExchange};
use super::model::ClientMetadata;
use crate::audit::{AuditContext, AuditEntry};
use crate::auth::{Standing, TokenDigest, WorkspaceMember};
use crate::common::error::RepoError;
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// A registered app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The row id.
    pub id: i64,
    /// The public `client_id`.
    pub client_id: String,
    /// The name the consent page shows.
    pub client_name: String,
    /// Where codes may be sent.
    pub redirect_uris: Vec<String>,
    /// When it registered.
    pub created_at: OffsetDateTime,
}

/// A member of a workspace, with the workspace's name, for the consent page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentingMember {
    /// The membership.
    pub member: WorkspaceMember,
    /// The workspace's name.
    pub workspace_name: String,
    /// Whether the membership counts.
    pub standing: Standing,
}

/// A grant and its first authorization code, to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGrant {
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// The member.
    pub user_id: UserId,
    /// The client's row id.
    pub client: i64,
    /// The scope granted.
    pub scope: String,
    /// The MCP endpoint it is for.
    pub resource: String,
    /// SHA-256 of the code.
    pub code: TokenDigest,
    /// The redirect URI of the request.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// When the code expires.
    pub code_expires_at: OffsetDateTime,
}

/// The tokens a successful exchange issues (digests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssuedTokens {
    /// The access token's digest.
    pub access: TokenDigest,
    /// When it expires.
    pub access_expires_at: OffsetDateTime,
    /// The refresh token's digest.
    pub refresh: TokenDigest,
    /// When it expires.
    pub refresh_expires_at: OffsetDateTime,
}

/// A grant as its member sees it on the connected apps page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRecord {
    /// The grant.
    pub id: i64,
    /// The app's name.
    pub client_name: String,
    /// The workspace.
    pub workspace_id: WorkspaceId,
    /// Its name.
    pub workspace_name: String,
    /// The scope granted.
    pub scope: String,
    /// When it was granted.
    pub created_at: OffsetDateTime,
    /// When one of its access tokens was last used (to the minute).
    pub last_used_at: Option<OffsetDateTime>,
}

/// The authorization server's storage.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OAuthStore: Send + Sync {
    /// Registers a client under `client_id`.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn insert_client(&self, client_id: &str, metadata: &ClientMetadata) -> Result<Client, RepoError>;

    /// The client with this public id.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn client(&self, client_id: &str) -> Result<Option<Client>, RepoError>;

    /// The user's membership of `ws`, whatever its standing.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn consenting_member(&self, ws: WorkspaceId, user: UserId) -> Result<Option<ConsentingMember>, RepoError>;

    /// Stores a grant, its code and its `oauth.granted` record in one transaction; returns the
    /// grant's id.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn insert_grant(&self, grant: &NewGrant, audit: &AuditEntry) -> Result<i64, RepoError>;

    /// Exchanges the code with this digest: loads it locked, asks
    /// [`super::grant::redeem_code`], and applies its answer in the same transaction (marks the
    /// code used and stores `tokens`, or revokes the grant). `None` when no code has the digest.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn exchange_code(
        &self,
        code: &TokenDigest,
        req: &CodeExchange,
        tokens: &IssuedTokens,
        now: OffsetDateTime,
        ctx: &AuditContext,
    ) -> Result<Option<Exchange>, RepoError>;

    /// Rotates the refresh token with this digest the same way, through
    /// [`super::grant::rotate_refresh`]. `None` when no refresh token has the digest.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn refresh(
        &self,
        token: &TokenDigest,
        req: &RefreshExchange,
        tokens: &IssuedTokens,
        now: OffsetDateTime,
        ctx: &AuditContext,
    ) -> Result<Option<Exchange>, RepoError>;

    /// The access token with this digest and its grant (and notes the grant's use, at most once a
    /// minute).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn access(&self, token: &TokenDigest, now: OffsetDateTime) -> Result<Option<AccessFacts>, RepoError>;

    /// The user's grants that are not revoked, newest first, in every workspace.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn grants(&self, user: UserId) -> Result<Vec<GrantRecord>, RepoError>;

    /// Revokes the user's grant `grant_id` with its `oauth.revoked` record
    /// ([`super::grant::member_revocation`]) in one transaction; `false` when the user has no
    /// such grant that is not revoked.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn revoke_grant(
        &self,
        user: UserId,
        grant_id: i64,
        now: OffsetDateTime,
        ctx: &AuditContext,
    ) -> Result<bool, RepoError>;
}
