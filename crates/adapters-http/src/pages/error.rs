//! Page failures, answered as HTML pages (the JSON endpoints answer problem+json instead).

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use maud::html;

use super::layout;

/// Why a page cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// Not signed in: to the sign-in page, then back to `next`.
    #[error("please sign in")]
    SignIn {
        /// Where to return after signing in (a local path).
        next: String,
    },
    /// Signed in, but the workspace is still to be picked.
    #[error("choose a workspace")]
    ChooseWorkspace,
    /// A state-changing request without this session's anti-forgery token, or from another site.
    #[error("this form has expired or was sent from another site; reload the page and try again")]
    Csrf,
    /// Not allowed (agents on admin pages).
    #[error("{0}")]
    Forbidden(String),
    /// No such thing in this workspace.
    #[error("{0}")]
    NotFound(String),
    /// A malformed request.
    #[error("{0}")]
    BadRequest(String),
    /// The member's hourly window is full (`docs/rate-limit.md`): 429 with `Retry-After`.
    #[error("too many requests this hour; try again in {retry_after} seconds")]
    RateLimited {
        /// Seconds until a request will be admitted.
        retry_after: u64,
    },
    /// The database is out of reach (docs/contract.md, "Abuse limits"): 503 with `Retry-After`.
    #[error("the service is briefly unavailable; try again in a few seconds")]
    Unavailable(#[source] anyhow::Error),
    /// A bug or infrastructure failure; the cause is logged, never shown.
    #[error("something went wrong on our side")]
    Internal(#[source] anyhow::Error),
}

impl From<domain::RepoError> for PageError {
    fn from(e: domain::RepoError) -> Self {
        if e.is_unavailable() {
            PageError::Unavailable(e.0)
        } else {
            PageError::Internal(e.0)
        }
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            PageError::SignIn { .. } | PageError::ChooseWorkspace => StatusCode::SEE_OTHER,
            PageError::Csrf | PageError::Forbidden(_) => StatusCode::FORBIDDEN,
            PageError::NotFound(_) => StatusCode::NOT_FOUND,
            PageError::BadRequest(_) => StatusCode::BAD_REQUEST,
            PageError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            PageError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            PageError::Internal(e) if domain::is_unavailable(e) => StatusCode::SERVICE_UNAVAILABLE,
            PageError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            PageError::SignIn { next } => {
                let location =
                    format!("/login?next={}", form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>());
                return HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish();
            }
            PageError::ChooseWorkspace => {
                return HttpResponse::SeeOther().insert_header((header::LOCATION, "/login/workspace")).finish();
            }
            PageError::Unavailable(e) => tracing::warn!(error = format!("{e:#}"), "page: database unavailable"),
            PageError::Internal(e) if domain::is_unavailable(e) => {
                tracing::warn!(error = format!("{e:#}"), "page: database unavailable");
            }
            PageError::Internal(e) => tracing::error!(error = ?e, "page failed"),
            _ => {}
        }
        let status = self.status_code();
        let title = status.canonical_reason().unwrap_or("Error");
        let body = html! {
            h1 { (title) }
            p.error-text role="alert" { (self.to_string()) }
            p { a href="/" { "Back to the settings" } }
        };
        let mut res = HttpResponse::build(status);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            res.insert_header((header::RETRY_AFTER, crate::error::RETRY_UNAVAILABLE_SECS.to_string()));
        }
        if let PageError::RateLimited { retry_after } = self {
            res.insert_header((header::RETRY_AFTER, retry_after.to_string()));
        }
        res.insert_header(CacheControl(vec![CacheDirective::NoStore]))
            .content_type("text/html; charset=utf-8")
            .body(layout::bare(title, body).into_string())
    }
}
