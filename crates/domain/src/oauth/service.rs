//! The authorization server's operations: registration, the authorization request and the
//! member's consent, the token endpoint, admitting access tokens, and the member's grants.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use super::grant::{admit_access, AccessRefusal, CodeExchange, Exchange, RefreshExchange};
use super::model::{
    is_code_verifier, is_s256_challenge, resource_workspace, scope_is_granted, ClientMetadata, OAuthErrorCode,
    OAuthRefusal, ACCESS_TTL, APP_SCOPE, CODE_TTL, REFRESH_TTL,
};
use super::ports::{Client, GrantRecord, IssuedTokens, NewGrant, OAuthStore};
use crate::access::{authorize, Action, Actor, Caller, Denied, Surface};
use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::auth::{digest, NewToken, PresentedToken, TokenKind};
use crate::common::error::RepoError;
use crate::common::ports::{Clock, RandomSource};
use crate::users::UserId;
use crate::workspace::WorkspaceId;

/// The authorization server.
#[derive(Clone)]
pub struct OAuthService {
    /// Clients, grants, codes, tokens.
    pub store: Arc<dyn OAuthStore>,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// The OS CSPRNG, for client ids, codes and tokens.
    pub random: Arc<dyn RandomSource>,
}

/// Why a registration was refused.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// `invalid_redirect_uri` or `invalid_client_metadata` (400).
    #[error(transparent)]
    Refused(#[from] OAuthRefusal),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The parameters of an authorization request, as sent (query or consent form).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationRequest {
    /// `response_type`.
    pub response_type: Option<String>,
    /// `client_id`.
    pub client_id: Option<String>,
    /// `redirect_uri`.
    pub redirect_uri: Option<String>,
    /// `code_challenge`.
    pub code_challenge: Option<String>,
    /// `code_challenge_method`.
    pub code_challenge_method: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `resource` (RFC 8707).
    pub resource: Option<String>,
}

/// An authorization request that may be shown to the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidAuthorization {
    /// The app.
    pub client: Client,
    /// Where the answer goes (one of the client's registered URIs).
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The client's `state`, returned as sent.
    pub state: Option<String>,
    /// The workspace whose MCP endpoint the `resource` names.
    pub workspace_id: WorkspaceId,
    /// The `resource`.
    pub resource: String,
}

impl ValidAuthorization {
    /// The redirect URI with `params` (and `state`) added to its query.
    pub fn redirect_with(&self, params: &[(&str, &str)]) -> String {
        redirect_with(&self.redirect_uri, params, self.state.as_deref())
    }
}

fn redirect_with(uri: &str, params: &[(&str, &str)], state: Option<&str>) -> String {
    let Ok(mut url) = url::Url::parse(uri) else { return uri.to_owned() };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if let Some(state) = state {
            q.append_pair("state", state);
        }
    }
    url.into()
}

/// Why an authorization request cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum AuthorizeError {
    /// The client or its redirect URI cannot be trusted: the member is told, and nothing is
    /// sent to the redirect URI (RFC 6749 section 4.1.2.1).
    #[error("{0}")]
    NoRedirect(String),
    /// A refusal reported to the client at its redirect URI.
    #[error("{refusal}")]
    Redirect {
        /// Where it goes, with the `error` parameters.
        location: String,
        /// The refusal.
        refusal: OAuthRefusal,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why the member cannot consent (or their consent was not stored).
#[derive(Debug, thiserror::Error)]
pub enum ConsentError {
    /// The request itself is refused.
    #[error(transparent)]
    Authorize(#[from] AuthorizeError),
    /// The signed-in person is not an active member of the workspace the resource names.
    #[error("your account is not an active member of the workspace this app asks for")]
    NotMember,
    /// The policy does not let the member use the assistant there.
    #[error("{0}")]
    Denied(Denied),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(RepoError),
}

impl From<RepoError> for ConsentError {
    fn from(e: RepoError) -> Self {
        ConsentError::Unknown(e)
    }
}

/// What the consent page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentView {
    /// The checked request.
    pub request: ValidAuthorization,
    /// The workspace's name.
    pub workspace_name: String,
    /// The scope asked for.
    pub scope: &'static str,
}

/// The parameters of a token request, as sent (`application/x-www-form-urlencoded`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    /// `grant_type`.
    pub grant_type: Option<String>,
    /// `code`.
    pub code: Option<String>,
    /// `redirect_uri`.
    pub redirect_uri: Option<String>,
    /// `client_id`.
    pub client_id: Option<String>,
    /// `code_verifier`.
    pub code_verifier: Option<String>,
    /// `refresh_token`.
    pub refresh_token: Option<String>,
    /// `resource`.
    pub resource: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
}

/// A successful token response; the tokens exist in full only here.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenGrant {
    /// `wmso_…`.
    pub access_token: String,
    /// `wmsr_…`.
    pub refresh_token: String,
    /// Seconds the access token works.
    pub expires_in: i64,
    /// The scope granted.
    pub scope: &'static str,
}

impl std::fmt::Debug for TokenGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenGrant(..)")
    }
}

/// Why the token endpoint refused.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// An RFC 6749 refusal (400, or 401 for `invalid_client`).
    #[error(transparent)]
    Refused(#[from] OAuthRefusal),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why an app's access token does not admit a request to the assistant.
#[derive(Debug, thiserror::Error)]
pub enum AdmitAppError {
    /// The token is refused.
    #[error(transparent)]
    Refused(#[from] AccessRefusal),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a grant could not be revoked.
#[derive(Debug, thiserror::Error)]
pub enum RevokeGrantError {
    /// The member has no such grant (or it is revoked already).
    #[error("no such connected app")]
    NotFound,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Whether `client_id` has the shape of the ids [`OAuthService::register`] issues (base64url of
/// 18 random bytes): anything else names no app, without asking the store (a NUL, say, which
/// PostgreSQL cannot even compare).
fn could_be_issued(client_id: &str) -> bool {
    client_id.len() == 24 && client_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn refused(code: OAuthErrorCode, why: impl Into<String>) -> OAuthRefusal {
    OAuthRefusal::new(code, why)
}

impl OAuthService {
    fn secret(&self, bytes: usize) -> String {
        let mut buf = vec![0u8; bytes];
        self.random.fill(&mut buf);
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// Registers a public client (RFC 7591).
    ///
    /// # Errors
    /// [`RegisterError`].
    pub async fn register(&self, body: &Value) -> Result<Client, RegisterError> {
        let metadata = ClientMetadata::from_json(body)?;
        let client_id = self.secret(18);
        Ok(self.store.insert_client(&client_id, &metadata).await?)
    }

    /// Checks an authorization request against its client: the client and the redirect URI
    /// first (refused without redirecting), then the rest (reported to the redirect URI).
    /// `issuer` is this server's base URL.
    ///
    /// # Errors
    /// [`AuthorizeError`].
    pub async fn check(&self, req: &AuthorizationRequest, issuer: &str) -> Result<ValidAuthorization, AuthorizeError> {
        let client_id = req.client_id.as_deref().filter(|c| !c.is_empty());
        let Some(client_id) = client_id else { return Err(AuthorizeError::NoRedirect("client_id is missing".into())) };
        let client = if could_be_issued(client_id) { self.store.client(client_id).await? } else { None };
        let Some(client) = client else {
            return Err(AuthorizeError::NoRedirect("no app is registered with this client_id".into()));
        };
        let redirect_uri = match req.redirect_uri.as_deref() {
            Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_owned(),
            Some(_) => {
                return Err(AuthorizeError::NoRedirect("redirect_uri is not one the app registered".into()));
            }
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            None => return Err(AuthorizeError::NoRedirect("redirect_uri is missing".into())),
        };
        let back = |refusal: OAuthRefusal| {
            let location = redirect_with(
                &redirect_uri,
                &[("error", refusal.code.as_str()), ("error_description", &refusal.description)],
                req.state.as_deref(),
            );
            AuthorizeError::Redirect { location, refusal }
        };
        use OAuthErrorCode::{InvalidRequest, InvalidScope, InvalidTarget, UnsupportedResponseType};
        if req.response_type.as_deref() != Some("code") {
            return Err(back(refused(UnsupportedResponseType, "response_type must be `code`")));
        }
        let Some(challenge) = req.code_challenge.as_deref() else {
            return Err(back(refused(InvalidRequest, "code_challenge is required (PKCE with S256)")));
        };
        if req.code_challenge_method.as_deref() != Some("S256") {
            return Err(back(refused(InvalidRequest, "code_challenge_method must be `S256`")));
        }
        if !is_s256_challenge(challenge) {
            return Err(back(refused(InvalidRequest, "code_challenge must be 43 characters of base64url")));
        }
        if !scope_is_granted(req.scope.as_deref()) {
            return Err(back(refused(InvalidScope, format!("the only scope is `{APP_SCOPE}`"))));
        }
        let Some(resource) = req.resource.as_deref() else {
            return Err(back(refused(InvalidTarget, "resource is required: the MCP endpoint's URL")));
        };
        let Some(workspace_id) = resource_workspace(issuer, resource) else {
            return Err(back(refused(InvalidTarget, "resource is not an MCP endpoint of this server")));
        };
        Ok(ValidAuthorization {
            client,
            redirect_uri,
            code_challenge: challenge.to_owned(),
            state: req.state.clone(),
            workspace_id,
            resource: resource.trim_end_matches('/').to_owned(),
        })
    }

    /// What the member `user` is asked to consent to.
    ///
    /// # Errors
    /// [`ConsentError`].
    pub async fn consent(
        &self,
        req: &AuthorizationRequest,
        issuer: &str,
        user: UserId,
    ) -> Result<ConsentView, ConsentError> {
        let request = self.check(req, issuer).await?;
        let member = self.store.consenting_member(request.workspace_id, user).await?;
        let Some(m) = member.filter(|m| m.standing.counts()) else {
            return Err(ConsentError::NotMember);
        };
        let caller = Caller {
            workspace_id: m.member.workspace_id,
            plan: m.member.plan,
            actor: Actor::Member { user_id: user, role: m.member.role },
            surface: Surface::Assistant,
        };
        authorize(&caller, Action::AssistantUse).map_err(ConsentError::Denied)?;
        Ok(ConsentView { request, workspace_name: m.workspace_name, scope: APP_SCOPE })
    }

    /// The member allows: stores the grant with a code (and the `oauth.granted` record) and
    /// answers where to send the browser.
    ///
    /// # Errors
    /// [`ConsentError`].
    pub async fn approve(
        &self,
        req: &AuthorizationRequest,
        issuer: &str,
        user: UserId,
        ctx: &AuditContext,
    ) -> Result<String, ConsentError> {
        let view = self.consent(req, issuer, user).await?;
        let v = &view.request;
        let code = self.secret(32);
        let grant = NewGrant {
            workspace_id: v.workspace_id,
            user_id: user,
            client: v.client.id,
            scope: APP_SCOPE.to_owned(),
            resource: v.resource.clone(),
            code: digest(&code),
            redirect_uri: v.redirect_uri.clone(),
            code_challenge: v.code_challenge.clone(),
            code_expires_at: self.clock.now() + CODE_TTL,
        };
        let entry = ctx.entry(
            v.workspace_id,
            AuditAction::OAuthGranted,
            AuditTarget::oauth_grant(None),
            json!({ "client_name": v.client.client_name, "client_id": v.client.client_id, "scope": APP_SCOPE }),
        );
        self.store.insert_grant(&grant, &entry).await?;
        Ok(v.redirect_with(&[("code", &code)]))
    }

    /// The member declines: where to send the browser.
    ///
    /// # Errors
    /// [`AuthorizeError`] when the request itself is refused.
    pub async fn deny(&self, req: &AuthorizationRequest, issuer: &str) -> Result<String, AuthorizeError> {
        let v = self.check(req, issuer).await?;
        Ok(v.redirect_with(&[("error", "access_denied"), ("error_description", "the member declined")]))
    }

    fn issue(&self) -> (NewToken, NewToken, IssuedTokens) {
        let now = self.clock.now();
        let access = NewToken::generate(TokenKind::AppAccess, self.random.as_ref());
        let refresh = NewToken::generate(TokenKind::AppRefresh, self.random.as_ref());
        let issued = IssuedTokens {
            access: access.digest(),
            access_expires_at: now + ACCESS_TTL,
            refresh: refresh.digest(),
            refresh_expires_at: now + REFRESH_TTL,
        };
        (access, refresh, issued)
    }

    /// The token endpoint: `authorization_code` (with the PKCE verifier) or `refresh_token`.
    /// `ctx` is the request's, for the record of a replay.
    ///
    /// # Errors
    /// [`TokenError`].
    pub async fn token(&self, req: &TokenRequest, ctx: &AuditContext) -> Result<TokenGrant, TokenError> {
        use OAuthErrorCode::{InvalidClient, InvalidGrant, InvalidRequest, InvalidScope, UnsupportedGrantType};
        let need = |v: &Option<String>, name: &str| {
            v.clone().filter(|s| !s.is_empty()).ok_or_else(|| refused(InvalidRequest, format!("{name} is required")))
        };
        let grant_type = need(&req.grant_type, "grant_type")?;
        if !matches!(grant_type.as_str(), "authorization_code" | "refresh_token") {
            return Err(refused(UnsupportedGrantType, "grant_type must be authorization_code or refresh_token").into());
        }
        let client_id = need(&req.client_id, "client_id")?;
        if !scope_is_granted(req.scope.as_deref()) {
            return Err(refused(InvalidScope, format!("the only scope is `{APP_SCOPE}`")).into());
        }
        if !could_be_issued(&client_id) || self.store.client(&client_id).await?.is_none() {
            return Err(refused(InvalidClient, "no app is registered with this client_id").into());
        }
        let (access, refresh, issued) = self.issue();
        let now = self.clock.now();
        let outcome = if grant_type == "authorization_code" {
            let code = need(&req.code, "code")?;
            let verifier = need(&req.code_verifier, "code_verifier")?;
            if !is_code_verifier(&verifier) {
                return Err(refused(InvalidRequest, "code_verifier must be 43 to 128 unreserved characters").into());
            }
            let exchange = CodeExchange {
                client_id,
                redirect_uri: need(&req.redirect_uri, "redirect_uri")?,
                code_verifier: verifier,
                resource: req.resource.clone(),
            };
            self.store.exchange_code(&digest(&code), &exchange, &issued, now, ctx).await?
        } else {
            let token = need(&req.refresh_token, "refresh_token")?;
            let presented = crate::auth::parse(&token)
                .ok()
                .filter(|t| t.kind == TokenKind::AppRefresh)
                .ok_or_else(|| refused(InvalidGrant, "the refresh token is not valid"))?;
            let exchange = RefreshExchange { client_id, resource: req.resource.clone() };
            self.store.refresh(&presented.digest, &exchange, &issued, now, ctx).await?
        };
        match outcome {
            None => Err(refused(InvalidGrant, format!("the {} is not valid", grant_type.replace('_', " "))).into()),
            Some(Exchange::Refuse(r) | Exchange::RevokeGrant(r, _)) => Err(r.into()),
            Some(Exchange::Issue) => Ok(TokenGrant {
                access_token: access.secret,
                refresh_token: refresh.secret,
                expires_in: ACCESS_TTL.whole_seconds(),
                scope: APP_SCOPE,
            }),
        }
    }

    /// Admits an app's access token (`wmso_`) on the assistant endpoints of `ws`.
    ///
    /// # Errors
    /// [`AdmitAppError`].
    pub async fn admit(&self, token: &PresentedToken, ws: WorkspaceId) -> Result<Caller, AdmitAppError> {
        if token.kind != TokenKind::AppAccess {
            return Err(AccessRefusal::Unknown.into());
        }
        let now = self.clock.now();
        let facts = self.store.access(&token.digest, now).await?;
        Ok(admit_access(facts.as_ref(), ws, now)?)
    }

    /// The member's grants.
    ///
    /// # Errors
    /// Infrastructure failures.
    pub async fn grants(&self, user: UserId) -> Result<Vec<GrantRecord>, RepoError> {
        self.store.grants(user).await
    }

    /// The member revokes one of their grants: every token of it stops working.
    ///
    /// # Errors
    /// [`RevokeGrantError`].
    pub async fn revoke(&self, user: UserId, grant_id: i64, ctx: &AuditContext) -> Result<(), RevokeGrantError> {
        if self.store.revoke_grant(user, grant_id, self.clock.now(), ctx).await? {
            Ok(())
        } else {
            Err(RevokeGrantError::NotFound)
        }
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
