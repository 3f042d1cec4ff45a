//! Authentication and key-management errors in HTTP terms.

use domain::api_keys::{CreateApiKeyError, DeleteApiKeyError, ListApiKeysError, RevokeApiKeyError, RollApiKeyError};
use domain::auth::{AuthenticateError, LoginError, LogoutError, MemberAuthError};
use domain::oauth::{AccessRefusal, AdmitAppError};

use crate::error::ApiError;

impl From<AuthenticateError> for ApiError {
    fn from(e: AuthenticateError) -> Self {
        match e {
            AuthenticateError::Missing => ApiError::Unauthenticated,
            AuthenticateError::InvalidToken(reason) => ApiError::InvalidToken(reason.to_string()),
            AuthenticateError::Revoked => ApiError::TokenRevoked,
            AuthenticateError::Expired => ApiError::TokenExpired,
            AuthenticateError::WorkspaceInactive => ApiError::Forbidden(e.to_string()),
            AuthenticateError::PlanRequired { required, current, .. } => {
                ApiError::PlanRequired { required: required.to_string(), current: current.to_string() }
            }
            AuthenticateError::Limited { rate } => crate::rate_limit::refused(&rate),
            AuthenticateError::Unknown(e) => e.into(),
        }
    }
}

impl From<MemberAuthError> for ApiError {
    fn from(e: MemberAuthError) -> Self {
        match e {
            MemberAuthError::Missing => ApiError::Unauthenticated,
            MemberAuthError::InvalidToken(reason) => ApiError::InvalidToken(reason.to_string()),
            MemberAuthError::Revoked => ApiError::TokenRevoked,
            MemberAuthError::Expired => ApiError::TokenExpired,
            MemberAuthError::ApiKey => ApiError::Forbidden(e.to_string()),
            MemberAuthError::NotMember => ApiError::NotFound(e.to_string()),
            MemberAuthError::Limited { rate } => crate::rate_limit::refused(&rate),
            MemberAuthError::Unknown(e) => e.into(),
        }
    }
}

impl From<LoginError> for ApiError {
    fn from(e: LoginError) -> Self {
        match e {
            LoginError::Invalid(v) => ApiError::Validation(v),
            LoginError::InvalidCredentials => ApiError::InvalidCredentials,
            LoginError::Throttled { retry_after_secs } => ApiError::RateLimited { retry_after: retry_after_secs },
            LoginError::NoWorkspace => ApiError::Forbidden(e.to_string()),
            LoginError::Unknown(e) => e.into(),
        }
    }
}

impl From<LogoutError> for ApiError {
    fn from(e: LogoutError) -> Self {
        match e {
            LogoutError::Auth(e) => e.into(),
            LogoutError::ApiKey { .. } => ApiError::Forbidden(e.to_string()),
        }
    }
}

impl From<CreateApiKeyError> for ApiError {
    fn from(e: CreateApiKeyError) -> Self {
        match e {
            CreateApiKeyError::Forbidden => ApiError::Forbidden(e.to_string()),
            CreateApiKeyError::PlanRequired { required, current } => {
                ApiError::PlanRequired { required: required.to_string(), current: current.to_string() }
            }
            CreateApiKeyError::Invalid(v) => ApiError::Validation(v),
            CreateApiKeyError::Unknown(e) => e.into(),
        }
    }
}

impl From<ListApiKeysError> for ApiError {
    fn from(e: ListApiKeysError) -> Self {
        match e {
            ListApiKeysError::Forbidden => ApiError::Forbidden(e.to_string()),
            ListApiKeysError::Unknown(e) => e.into(),
        }
    }
}

impl From<RevokeApiKeyError> for ApiError {
    fn from(e: RevokeApiKeyError) -> Self {
        match e {
            RevokeApiKeyError::Forbidden => ApiError::Forbidden(e.to_string()),
            RevokeApiKeyError::NotFound(_) => ApiError::NotFound(e.to_string()),
            RevokeApiKeyError::Unknown(e) => e.into(),
        }
    }
}

impl From<RollApiKeyError> for ApiError {
    fn from(e: RollApiKeyError) -> Self {
        match e {
            RollApiKeyError::Forbidden => ApiError::Forbidden(e.to_string()),
            RollApiKeyError::PlanRequired { required, current } => {
                ApiError::PlanRequired { required: required.to_string(), current: current.to_string() }
            }
            RollApiKeyError::Invalid(v) => ApiError::Validation(v),
            RollApiKeyError::NotFound(_) => ApiError::NotFound(e.to_string()),
            // docs/api-keys.md: a revoked, expired or already rolled key is a state conflict.
            RollApiKeyError::Refused(r) => ApiError::Conflict(r.to_string()),
            RollApiKeyError::Unknown(e) => e.into(),
        }
    }
}

impl From<DeleteApiKeyError> for ApiError {
    fn from(e: DeleteApiKeyError) -> Self {
        match e {
            DeleteApiKeyError::Forbidden => ApiError::Forbidden(e.to_string()),
            DeleteApiKeyError::NotFound(_) => ApiError::NotFound(e.to_string()),
            DeleteApiKeyError::Unknown(e) => e.into(),
        }
    }
}

impl From<AdmitAppError> for ApiError {
    fn from(e: AdmitAppError) -> Self {
        match e {
            // A member no longer active (or a workspace switched off): the token is of no use
            // now, a 401 with the challenge, as the MCP authorization spec asks of any token that
            // cannot be used, so that the client signs in again.
            AdmitAppError::Refused(
                r @ (AccessRefusal::Unknown | AccessRefusal::OtherWorkspace | AccessRefusal::MemberInactive),
            ) => ApiError::InvalidToken(r.to_string()),
            AdmitAppError::Refused(AccessRefusal::Revoked) => ApiError::TokenRevoked,
            AdmitAppError::Refused(AccessRefusal::Expired) => ApiError::TokenExpired,
            AdmitAppError::Unknown(e) => e.into(),
        }
    }
}
