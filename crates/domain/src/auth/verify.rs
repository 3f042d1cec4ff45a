//! What authenticating a request reads and how it fails: the `Authorization: Bearer` header's
//! offline checks, a member request's credential, and the errors. The path from a credential to
//! the one caller is [`crate::identity::IdentityService`].

use super::ports::CredentialCheck;
use super::token::{parse, PresentedToken, TokenFormatError};
use crate::access::Caller;
use crate::common::error::RepoError;
use crate::rate_limit::RateLimitStatus;
use crate::workspace::PlanTier;

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

/// An admitted request: the one caller, and the window after counting it when rate limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Who calls.
    pub caller: Caller,
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

/// The verdict as a result.
///
/// # Errors
/// [`AuthenticateError`] for every verdict but [`CredentialCheck::Admitted`].
pub fn admitted(check: CredentialCheck) -> Result<Admission, AuthenticateError> {
    match check {
        CredentialCheck::Admitted { caller, rate } => Ok(Admission { caller, rate }),
        CredentialCheck::Unknown => Err(InvalidToken::Unknown.into()),
        CredentialCheck::Revoked | CredentialCheck::MemberInactive => Err(AuthenticateError::Revoked),
        CredentialCheck::Expired => Err(AuthenticateError::Expired),
        CredentialCheck::WorkspaceInactive => Err(AuthenticateError::WorkspaceInactive),
        // Not counted for its plan: the policy names the plan the caller needs.
        CredentialCheck::Uncounted { caller, rate } => {
            Err(AuthenticateError::PlanRequired { required: caller.required_plan(), current: caller.plan, rate })
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_is_case_insensitive_and_others_are_refused() {
        assert_eq!(bearer_token(b"bEaReR  abc"), Ok("abc"));
        assert_eq!(bearer_token(b"Basic YWJj"), Err(InvalidToken::WrongScheme));
        assert_eq!(bearer_token(b"Bearer"), Err(InvalidToken::WrongScheme));
        assert_eq!(bearer_token(b"Bearer   "), Err(InvalidToken::WrongScheme));
        assert_eq!(bearer_token(b"wmsk_abc"), Err(InvalidToken::WrongScheme));
        assert_eq!(bearer_token(&[0x42, 0xff, 0x20, 0x41]), Err(InvalidToken::Malformed));
    }
}
