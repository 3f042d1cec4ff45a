//! Authenticating a request: the `Authorization: Bearer` header for `/v1` (keys and login tokens,
//! with the plan and the rate limit), and member credentials for the workspace-scoped endpoints.

use super::model::{CredentialOwner, Identity, WorkspaceMember};
use super::ports::{CredentialCheck, CredentialStore, Requirements, SessionLookup};
use super::token::{parse, PresentedToken, TokenFormatError, TokenKind};
use crate::access::{Actor, Caller, Surface};
use crate::common::error::RepoError;
use crate::rate_limit::{RateLimitPolicy, RateLimitStatus};
use crate::workspace::{PlanTier, WorkspaceId};

/// Why a presented credential is not a credential at all (401 `invalid_token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidToken {
    /// `Authorization` uses another scheme than `Bearer`.
    #[error("the Authorization header must be `Bearer <token>`")]
    WrongScheme,
    /// Not a `wmsk_`/`wmsu_` token of the right shape.
    #[error("the token is malformed")]
    Malformed,
    /// The checksum does not match: mistyped or made up (refused without a database query).
    #[error("the token's checksum does not match: it was mistyped or truncated")]
    BadChecksum,
    /// Well-formed but no credential has it.
    #[error("the token is not valid")]
    Unknown,
    /// An app's OAuth token (`wmso_`, `wmsr_`) anywhere but the assistant endpoints of the
    /// workspace it was granted for (`docs/oauth.md`).
    #[error("this OAuth token works only on the assistant endpoints of the workspace it was granted for")]
    AppToken,
}

impl From<TokenFormatError> for InvalidToken {
    fn from(e: TokenFormatError) -> Self {
        match e {
            TokenFormatError::Malformed => InvalidToken::Malformed,
            TokenFormatError::BadChecksum => InvalidToken::BadChecksum,
        }
    }
}

/// Why a `/v1` request is not authenticated or not admitted.
#[derive(Debug, thiserror::Error)]
pub enum AuthenticateError {
    /// No `Authorization` header (401 `unauthenticated`).
    #[error("no credentials were sent")]
    Missing,
    /// 401 `invalid_token`.
    #[error(transparent)]
    InvalidToken(#[from] InvalidToken),
    /// The credential was revoked, or the member removed from the workspace (401 `token_revoked`).
    #[error("the token has been revoked")]
    Revoked,
    /// Past its expiry (401 `token_expired`).
    #[error("the token has expired")]
    Expired,
    /// The workspace was deactivated (403 `forbidden`).
    #[error("the workspace is deactivated")]
    WorkspaceInactive,
    /// The workspace's plan does not include the REST API (403 `plan_required`).
    #[error("this needs the {required} plan; the workspace is on {current}")]
    PlanRequired {
        /// The plan needed.
        required: PlanTier,
        /// The workspace's plan.
        current: PlanTier,
        /// The window as it stands, for the response headers.
        rate: Option<RateLimitStatus>,
    },
    /// The rate limit refused the request (429 `rate_limited`).
    #[error("rate limit exceeded")]
    Limited {
        /// The window, with the retry delay.
        rate: RateLimitStatus,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl AuthenticateError {
    /// The window to report in the response headers, when the credential was valid.
    pub fn rate(&self) -> Option<&RateLimitStatus> {
        match self {
            AuthenticateError::PlanRequired { rate, .. } => rate.as_ref(),
            AuthenticateError::Limited { rate } => Some(rate),
            _ => None,
        }
    }
}

/// An admitted `/v1` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Authenticated {
    /// Whose credential.
    pub identity: Identity,
    /// The window after counting this request, when rate limited.
    pub rate: Option<RateLimitStatus>,
}

/// The token of an `Authorization` header value: `Bearer`, in any case, then the token.
///
/// # Errors
/// [`InvalidToken::WrongScheme`] for another scheme or a value that is not text.
pub fn bearer_token(value: &[u8]) -> Result<&str, InvalidToken> {
    let value = std::str::from_utf8(value).map_err(|_| InvalidToken::Malformed)?.trim();
    let (scheme, token) = value.split_once([' ', '\t']).ok_or(InvalidToken::WrongScheme)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(InvalidToken::WrongScheme);
    }
    let token = token.trim_start_matches([' ', '\t']);
    if token.is_empty() {
        return Err(InvalidToken::Malformed);
    }
    Ok(token)
}

/// The offline checks of an `Authorization` header: scheme, shape and checksum. Nothing here
/// touches storage, so garbage costs no query.
///
/// # Errors
/// [`AuthenticateError::Missing`] or [`AuthenticateError::InvalidToken`].
pub fn presented_token(authorization: Option<&[u8]>) -> Result<PresentedToken, AuthenticateError> {
    let value = authorization.ok_or(AuthenticateError::Missing)?;
    Ok(parse(bearer_token(value)?).map_err(InvalidToken::from)?)
}

/// Authenticates a `/v1` request from its `Authorization` header value and counts it against the
/// credential's rate limit, in one storage round trip.
///
/// # Errors
/// [`AuthenticateError`].
pub async fn authenticate_v1_request(
    store: &dyn CredentialStore,
    authorization: Option<&[u8]>,
    needs: &Requirements,
) -> Result<Authenticated, AuthenticateError> {
    authenticate_token(store, &presented_token(authorization)?, needs).await
}

/// [`authenticate_v1_request`] for a token whose offline checks ([`presented_token`]) already passed.
///
/// # Errors
/// [`AuthenticateError`].
pub async fn authenticate_token(
    store: &dyn CredentialStore,
    token: &PresentedToken,
    needs: &Requirements,
) -> Result<Authenticated, AuthenticateError> {
    if token.kind.is_app() {
        return Err(InvalidToken::AppToken.into());
    }
    let check = store.verify(token, needs).await?;
    admitted(check, needs)
}

/// The verdict as a result.
///
/// # Errors
/// [`AuthenticateError`] for every verdict but [`CredentialCheck::Admitted`].
pub fn admitted(check: CredentialCheck, needs: &Requirements) -> Result<Authenticated, AuthenticateError> {
    match check {
        CredentialCheck::Admitted { identity, rate } => Ok(Authenticated { identity, rate }),
        CredentialCheck::Unknown => Err(InvalidToken::Unknown.into()),
        CredentialCheck::Revoked | CredentialCheck::MemberInactive => Err(AuthenticateError::Revoked),
        CredentialCheck::Expired => Err(AuthenticateError::Expired),
        CredentialCheck::WorkspaceInactive => Err(AuthenticateError::WorkspaceInactive),
        CredentialCheck::PlanRequired { identity, rate } => Err(AuthenticateError::PlanRequired {
            required: needs.plan.unwrap_or(PlanTier::Advanced),
            current: identity.plan,
            rate,
        }),
        CredentialCheck::Limited { rate, .. } => Err(AuthenticateError::Limited { rate }),
    }
}

/// The credential a workspace-scoped (member) request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberCredential<'a> {
    /// An `Authorization` header value.
    Authorization(&'a [u8]),
    /// The settings session cookie's value.
    Session(&'a str),
    /// Nothing.
    None,
}

/// Why a request is not from a member of the workspace.
#[derive(Debug, thiserror::Error)]
pub enum MemberAuthError {
    /// No credentials (401 `unauthenticated`), or a session that is not valid.
    #[error("no credentials were sent")]
    Missing,
    /// 401 `invalid_token`.
    #[error(transparent)]
    InvalidToken(#[from] InvalidToken),
    /// 401 `token_revoked`.
    #[error("the token has been revoked")]
    Revoked,
    /// 401 `token_expired`.
    #[error("the token has expired")]
    Expired,
    /// An API key: keys act for a workspace, not a member (403 `forbidden`).
    #[error("API keys cannot be used here: sign in as a workspace member")]
    ApiKey,
    /// Not an active member of this workspace, or the credential belongs to another one (404).
    #[error("workspace not found")]
    NotMember,
    /// An API key's rate limit refused the request (429 `rate_limited`).
    #[error("rate limit exceeded")]
    Limited {
        /// The window, with the retry delay.
        rate: RateLimitStatus,
    },
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Authenticates a member of workspace `ws` by login token (bound to one membership) or by the
/// settings session cookie. Login tokens here are not rate limited: the limit is the REST API's.
///
/// # Errors
/// [`MemberAuthError`].
pub async fn authenticate_member(
    store: &dyn CredentialStore,
    sessions: Option<&dyn SessionLookup>,
    credential: MemberCredential<'_>,
    ws: WorkspaceId,
) -> Result<WorkspaceMember, MemberAuthError> {
    match credential {
        MemberCredential::None => Err(MemberAuthError::Missing),
        MemberCredential::Session(cookie) => {
            let Some(sessions) = sessions else { return Err(MemberAuthError::Missing) };
            let session = sessions.user_for_session(cookie).await?.ok_or(MemberAuthError::Missing)?;
            // A session works in the one workspace it was opened for.
            if session.workspace_id != Some(ws) {
                return Err(MemberAuthError::NotMember);
            }
            sessions.member(ws, session.user_id).await?.ok_or(MemberAuthError::NotMember)
        }
        MemberCredential::Authorization(value) => {
            let token = parse(bearer_token(value)?).map_err(InvalidToken::from)?;
            if token.kind == TokenKind::ApiKey {
                return Err(MemberAuthError::ApiKey);
            }
            if token.kind.is_app() {
                return Err(InvalidToken::AppToken.into());
            }
            let identity = match store.verify(&token, &Requirements::default()).await? {
                CredentialCheck::Admitted { identity, .. }
                | CredentialCheck::PlanRequired { identity, .. }
                | CredentialCheck::Limited { identity, .. } => identity,
                CredentialCheck::Unknown => return Err(InvalidToken::Unknown.into()),
                CredentialCheck::Revoked => return Err(MemberAuthError::Revoked),
                CredentialCheck::Expired => return Err(MemberAuthError::Expired),
                CredentialCheck::MemberInactive | CredentialCheck::WorkspaceInactive => {
                    return Err(MemberAuthError::NotMember)
                }
            };
            match identity.owner {
                CredentialOwner::User { user_id, role } if identity.workspace_id == ws => {
                    Ok(WorkspaceMember { workspace_id: ws, plan: identity.plan, user_id, role })
                }
                CredentialOwner::User { .. } => Err(MemberAuthError::NotMember),
                CredentialOwner::ApiKey { .. } => Err(MemberAuthError::ApiKey),
            }
        }
    }
}

/// Authenticates a caller of the assistant's endpoints in workspace `ws`: a member (login token
/// or settings session, as [`authenticate_member`]) or an API key of that workspace
/// (`docs/contract.md`: the unattended credential of an assistant backend; the policy then asks for
/// `assistant:read`). Another workspace's key is not found, as a non-member is. A key's request
/// counts against the key's window (`key_limit`), as on `/v1`; the window comes back for the
/// response headers. `client`, the request's address, becomes the key's `last_used_ip`.
///
/// # Errors
/// [`MemberAuthError`] (never [`MemberAuthError::ApiKey`]).
pub async fn authenticate_assistant(
    store: &dyn CredentialStore,
    sessions: Option<&dyn SessionLookup>,
    credential: MemberCredential<'_>,
    ws: WorkspaceId,
    key_limit: Option<RateLimitPolicy>,
    client: Option<std::net::IpAddr>,
) -> Result<(Caller, Option<RateLimitStatus>), MemberAuthError> {
    if let MemberCredential::Authorization(value) = credential {
        let token = parse(bearer_token(value)?).map_err(InvalidToken::from)?;
        if token.kind == TokenKind::ApiKey {
            let needs = Requirements { plan: None, rate_limit: key_limit, client };
            let (identity, rate) = match store.verify(&token, &needs).await? {
                CredentialCheck::Admitted { identity, rate } => (identity, rate),
                CredentialCheck::PlanRequired { identity, rate } => (identity, rate),
                CredentialCheck::Limited { identity, rate } => {
                    if identity.workspace_id != ws {
                        return Err(MemberAuthError::NotMember);
                    }
                    return Err(MemberAuthError::Limited { rate });
                }
                CredentialCheck::Unknown => return Err(InvalidToken::Unknown.into()),
                CredentialCheck::Revoked => return Err(MemberAuthError::Revoked),
                CredentialCheck::Expired => return Err(MemberAuthError::Expired),
                CredentialCheck::MemberInactive | CredentialCheck::WorkspaceInactive => {
                    return Err(MemberAuthError::NotMember)
                }
            };
            return match identity.owner {
                CredentialOwner::ApiKey { key_id, scopes } if identity.workspace_id == ws => Ok((
                    Caller {
                        workspace_id: ws,
                        plan: identity.plan,
                        actor: Actor::ApiKey { key_id, scopes },
                        surface: Surface::Assistant,
                    },
                    rate,
                )),
                _ => Err(MemberAuthError::NotMember),
            };
        }
    }
    let m = authenticate_member(store, sessions, credential, ws).await?;
    let caller = Caller {
        workspace_id: m.workspace_id,
        plan: m.plan,
        actor: Actor::Member { user_id: m.user_id, role: m.role },
        surface: Surface::Assistant,
    };
    Ok((caller, None))
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
