//! The error bodies of the token and registration endpoints (RFC 6749 section 5.2, RFC 7591
//! section 3.2.2): `{"error", "error_description"}`, 400, or 401 for `invalid_client`. A storage
//! failure is `temporarily_unavailable` (503) or `server_error` (500, logged), in the same form.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use domain::oauth::{OAuthErrorCode, OAuthRefusal, RegisterError, TokenError};
use domain::RepoError;

/// An answer of the protocol's endpoints that is not a success.
#[derive(Debug, thiserror::Error)]
pub enum OAuthReply {
    /// A refusal with its RFC code.
    #[error(transparent)]
    Refused(#[from] OAuthRefusal),
    /// Storage failed.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl From<TokenError> for OAuthReply {
    fn from(e: TokenError) -> Self {
        match e {
            TokenError::Refused(r) => OAuthReply::Refused(r),
            TokenError::Unknown(e) => OAuthReply::Unknown(e),
        }
    }
}

impl From<RegisterError> for OAuthReply {
    fn from(e: RegisterError) -> Self {
        match e {
            RegisterError::Refused(r) => OAuthReply::Refused(r),
            RegisterError::Unknown(e) => OAuthReply::Unknown(e),
        }
    }
}

impl OAuthReply {
    /// `invalid_request` with `why`.
    pub fn invalid_request(why: impl Into<String>) -> Self {
        OAuthReply::Refused(OAuthRefusal::new(OAuthErrorCode::InvalidRequest, why))
    }

    /// A body that could not be read (too large, or cut off), in the protocol's own form:
    /// `invalid_request`.
    pub fn unreadable(e: crate::error::ApiError) -> Self {
        Self::invalid_request(e.to_string())
    }
}

/// Headers every answer of these endpoints carries: never cached (RFC 6749 section 5.1), and
/// readable by browser-based clients (no cookie is ever read here).
pub fn protocol_headers(res: &mut HttpResponse) {
    let headers = res.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
}

impl ResponseError for OAuthReply {
    fn status_code(&self) -> StatusCode {
        match self {
            OAuthReply::Refused(r) if r.code == OAuthErrorCode::InvalidClient => StatusCode::UNAUTHORIZED,
            OAuthReply::Refused(_) => StatusCode::BAD_REQUEST,
            OAuthReply::Unknown(e) if e.is_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            OAuthReply::Unknown(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (error, description) = match self {
            OAuthReply::Refused(r) => (r.code.as_str(), r.description.clone()),
            OAuthReply::Unknown(e) => {
                tracing::error!(error = format!("{e:#}"), "oauth endpoint failed");
                if e.is_unavailable() {
                    ("temporarily_unavailable", "the database is out of reach; retry shortly".to_owned())
                } else {
                    ("server_error", "internal error".to_owned())
                }
            }
        };
        let mut res = HttpResponse::build(self.status_code())
            .json(serde_json::json!({ "error": error, "error_description": description }));
        protocol_headers(&mut res);
        if self.status_code() == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="wms""#));
        }
        if self.status_code() == StatusCode::SERVICE_UNAVAILABLE {
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
        }
        res
    }
}

/// The answer to a CORS preflight (`OPTIONS`) of a protocol endpoint: `204` with what
/// browser-based MCP clients may send.
pub fn preflight() -> HttpResponse {
    let mut res = HttpResponse::NoContent().finish();
    protocol_headers(&mut res);
    let headers = res.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type, mcp-protocol-version"),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    res
}
