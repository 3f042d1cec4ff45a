//! RFC 9457 problem responses and the one mapping from errors to status codes and `code`s.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use domain::{FieldError, ValidationErrors};
use serde::Serialize;

/// One invalid field of a request.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FieldErrorSchema {
    /// The field as the client sent it (`content`, `events[2]`, `limit`).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// The body of every 4xx and 5xx response (`application/problem+json`, RFC 9457).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Problem {
    /// Always `about:blank`: the title is the HTTP status phrase and `code` names the problem.
    #[serde(rename = "type")]
    pub type_: String,
    /// Short summary of the problem type.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What happened this time.
    pub detail: String,
    /// Stable snake_case code (`docs/contract.md`).
    #[schema(value_type = String, example = "validation_failed")]
    pub code: &'static str,
    /// Every invalid field, on validation failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<FieldErrorSchema>>)]
    pub errors: Option<Vec<FieldError>>,
    /// On `service_window_closed`: when the recipient's window closed (RFC 3339), null when the
    /// contact never wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<serde_json::Value>,
}

/// Everything a handler can fail with, in HTTP terms.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No credentials were sent.
    #[error("this endpoint needs credentials: send `Authorization: Bearer <token>`")]
    Unauthenticated,
    /// Credentials were sent but are malformed, unknown or use the wrong scheme.
    #[error("{0}")]
    InvalidToken(String),
    /// The token was revoked.
    #[error("the token has been revoked")]
    TokenRevoked,
    /// The token is past its expiry.
    #[error("the token has expired")]
    TokenExpired,
    /// Wrong e-mail or password (never says which).
    #[error("the e-mail or password is wrong")]
    InvalidCredentials,
    /// Too many requests; retry after this many seconds.
    #[error("too many requests; retry in {retry_after} seconds")]
    RateLimited {
        /// Seconds until a request will be admitted.
        retry_after: u64,
    },
    /// A cap of a webhook destination's own keeps a manual attempt back; retry after this many
    /// seconds.
    #[error("{detail}")]
    CapReached {
        /// Which cap, and when to try again.
        detail: String,
        /// Seconds until a place frees.
        retry_after: u64,
    },
    /// The workspace's plan does not include the feature.
    #[error("this needs the {required} plan; the workspace is on {current}")]
    PlanRequired {
        /// The lowest tier that includes the feature.
        required: String,
        /// The workspace's tier.
        current: String,
    },
    /// Authenticated but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// An API key without the scope the route needs.
    #[error("this API key lacks the scope `{0}`; create a key with it (docs/access.md)")]
    InsufficientScope(domain::access::Scope),
    /// No such resource in this workspace (also for other workspaces' resources).
    #[error("{0}")]
    NotFound(String),
    /// The method is not supported on this path.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// Invalid input fields.
    #[error("{0}")]
    Validation(ValidationErrors),
    /// The body is not valid JSON, or the request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// The body is too large.
    #[error("the request body is larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The body is within the size limit but holds more than a limit allows (e.g. accounts).
    #[error("{0}")]
    TooLarge(String),
    /// The body is not `application/json`.
    #[error("send the body as application/json")]
    UnsupportedMediaType,
    /// The request conflicts with the current state.
    #[error("{0}")]
    Conflict(String),
    /// Free text outside the recipient's service window: 422 `service_window_closed`.
    #[error("{detail}")]
    ServiceWindowClosed {
        /// What happened.
        detail: String,
        /// When the window closed; `None` when the contact never wrote.
        expires_at: Option<time::OffsetDateTime>,
    },
    /// A WhatsApp template that is not approved: 422 `template_not_approved`.
    #[error("{0}")]
    TemplateNotApproved(String),
    /// A value must be unique and another resource has it: 409 `conflict` naming the field.
    #[error("{}: {}", .0.field, .0.message)]
    FieldConflict(FieldError),
    /// A dependency (the database) is unavailable.
    #[error("{0}")]
    ServiceUnavailable(String),
    /// The messaging platform (Meta's Graph API) cannot be reached: 502 `service_unavailable`.
    #[error("{0}")]
    PlatformUnreachable(String),
    /// A bug or infrastructure failure; the cause is logged, never sent.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    /// A validation failure of one field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation(ValidationErrors::one(field, message))
    }

    /// The stable problem `code`.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthenticated => "unauthenticated",
            ApiError::InvalidToken(_) => "invalid_token",
            ApiError::TokenRevoked => "token_revoked",
            ApiError::TokenExpired => "token_expired",
            ApiError::InvalidCredentials => "invalid_credentials",
            ApiError::RateLimited { .. } | ApiError::CapReached { .. } => "rate_limited",
            ApiError::PlanRequired { .. } => "plan_required",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::InsufficientScope(_) => "insufficient_scope",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::Validation(_) => "validation_failed",
            ApiError::BadRequest(_) => "bad_request",
            ApiError::PayloadTooLarge { .. } | ApiError::TooLarge(_) => "payload_too_large",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::Conflict(_) | ApiError::FieldConflict(_) => "conflict",
            ApiError::ServiceWindowClosed { .. } => "service_window_closed",
            ApiError::TemplateNotApproved(_) => "template_not_approved",
            ApiError::ServiceUnavailable(_) | ApiError::PlatformUnreachable(_) => "service_unavailable",
            ApiError::Internal(_) if self.database_unavailable() => "service_unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }

    /// The problem body.
    pub fn problem(&self) -> Problem {
        let status = self.status_code();
        let code = self.code();
        let detail = match self {
            ApiError::Validation(v) if v.0.len() == 1 => format!("{}: {}", v.0[0].field, v.0[0].message),
            ApiError::Validation(v) => format!("{} fields are invalid", v.0.len()),
            other if other.database_unavailable() => DATABASE_UNAVAILABLE.to_owned(),
            other => other.to_string(),
        };
        Problem {
            type_: "about:blank".to_owned(),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail,
            code,
            errors: match self {
                ApiError::Validation(v) => Some(v.0.clone()),
                ApiError::FieldConflict(f) => Some(vec![f.clone()]),
                _ => None,
            },
            expires_at: match self {
                ApiError::ServiceWindowClosed { expires_at, .. } => Some(
                    expires_at
                        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
                        .map_or(serde_json::Value::Null, serde_json::Value::String),
                ),
                _ => None,
            },
        }
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(v: ValidationErrors) -> Self {
        ApiError::Validation(v)
    }
}

impl From<domain::RepoError> for ApiError {
    fn from(e: domain::RepoError) -> Self {
        ApiError::Internal(e.0)
    }
}

/// How long a client is asked to wait before retrying a 503 (`Retry-After`, seconds).
pub const RETRY_UNAVAILABLE_SECS: u32 = 2;

/// The detail of a 503 caused by the database being out of reach.
pub const DATABASE_UNAVAILABLE: &str = "the database is unavailable right now; retry shortly";

impl ApiError {
    /// An infrastructure failure that is the database being out of reach (`database.acquire_timeout_ms`
    /// ran out, or the connection was cut) is answered 503 `service_unavailable`, never 500: the
    /// client may retry, and nothing was written (docs/contract.md, "Abuse limits").
    fn database_unavailable(&self) -> bool {
        matches!(self, ApiError::Internal(cause) if domain::is_unavailable(cause))
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Unauthenticated
            | ApiError::InvalidToken(_)
            | ApiError::TokenRevoked
            | ApiError::TokenExpired
            | ApiError::InvalidCredentials => StatusCode::UNAUTHORIZED,
            ApiError::RateLimited { .. } | ApiError::CapReached { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::PlanRequired { .. } | ApiError::Forbidden(_) | ApiError::InsufficientScope(_) => {
                StatusCode::FORBIDDEN
            }
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Validation(_) | ApiError::ServiceWindowClosed { .. } | ApiError::TemplateNotApproved(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::PayloadTooLarge { .. } | ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Conflict(_) | ApiError::FieldConflict(_) => StatusCode::CONFLICT,
            ApiError::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::PlatformUnreachable(_) => StatusCode::BAD_GATEWAY,
            ApiError::Internal(_) if self.database_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(cause) = self {
            // The cause chain goes to the log (inside the request's span, so with its id), never to the client.
            if self.database_unavailable() {
                tracing::warn!(error = format!("{cause:#}"), "database unavailable");
            } else {
                tracing::error!(error = format!("{cause:#}"), "internal error");
            }
        }
        let mut res = HttpResponse::build(self.status_code());
        res.insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json")));
        res.insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
        match self {
            ApiError::Unauthenticated => {
                res.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="wms""#)));
            }
            ApiError::InvalidToken(_) | ApiError::TokenRevoked | ApiError::TokenExpired => {
                res.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(r#"Bearer realm="wms", error="invalid_token""#),
                ));
            }
            ApiError::InvalidCredentials => {
                res.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="wms""#)));
            }
            ApiError::InsufficientScope(scope) => {
                // RFC 6750 section 3.1: the scope the request needed.
                res.insert_header((
                    header::WWW_AUTHENTICATE,
                    format!(r#"Bearer realm="wms", error="insufficient_scope", scope="{scope}""#),
                ));
            }
            ApiError::RateLimited { retry_after } | ApiError::CapReached { retry_after, .. } => {
                res.insert_header((header::RETRY_AFTER, retry_after.to_string()));
            }
            _ if self.status_code() == StatusCode::SERVICE_UNAVAILABLE => {
                res.insert_header((header::RETRY_AFTER, RETRY_UNAVAILABLE_SECS.to_string()));
            }
            _ => {}
        }
        res.body(serde_json::to_string(&self.problem()).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_problem_lists_every_field() {
        let e = ApiError::Validation(ValidationErrors(vec![
            FieldError::new("name", "must not be empty"),
            FieldError::new("to", "required"),
        ]));
        let p = e.problem();
        assert_eq!((p.status, p.code), (422, "validation_failed"));
        assert_eq!(p.errors.map(|e| e.len()), Some(2));
    }

    #[test]
    fn the_database_out_of_reach_is_a_503_with_retry_after() {
        let e = ApiError::from(domain::RepoError::unavailable("no connection within 2000 ms"));
        let p = e.problem();
        assert_eq!((p.status, p.code), (503, "service_unavailable"));
        assert!(!p.detail.contains("2000"), "the cause stays in the log: {}", p.detail);
        let res = e.error_response();
        assert_eq!(res.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("2"));
        let other = ApiError::from(domain::RepoError::new(anyhow::anyhow!("syntax error")));
        assert_eq!(other.problem().status, 500);
    }

    #[test]
    fn internal_detail_is_generic() {
        let e = ApiError::Internal(anyhow::anyhow!("password=hunter2 connection refused"));
        let p = e.problem();
        assert_eq!(p.detail, "internal error");
        assert_eq!(p.status, 500);
    }
}
