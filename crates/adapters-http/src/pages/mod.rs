//! The settings web app: server-rendered pages (maud) for workspace admins, served by the binary
//! itself with every stylesheet and script embedded, so they work with no internet.
//!
//! - [`session`]: the session cookie, the signed-in extractor and the anti-forgery (CSRF) checks.
//! - [`guard`]: middleware of every page: security headers (a CSP that allows only this server)
//!   and refusal of cross-site state-changing requests.
//! - one file per page or action, the markup beside its handler; [`layout`] holds the shell.
//!
//! Pages share the services of the settings API (`/api/workspaces/{id}/…`) rather than calling
//! it over HTTP, so both enforce the same rules.

pub mod analytics;
pub mod api_keys;
pub mod assets;
pub mod audit_log;
pub mod business_hours;
pub mod channels;
pub mod docs;
pub mod error;
pub mod form;
pub mod guard;
pub mod invitation;
pub mod layout;
pub mod login;
pub mod logout;
pub mod members;
pub mod oauth;
pub mod password_reset;
pub mod reports;
pub mod rest_api;
pub mod session;
pub mod sla_policies;
pub mod teams;
pub mod webhooks;

use std::sync::Arc;

use domain::analytics::CountryStats;
use domain::assistant::LiveData;
use domain::sessions::SessionService;

pub use error::PageError;

/// What the pages need besides the API's state.
#[derive(Clone)]
pub struct PagesState {
    /// Sign-in, sessions and sign-out.
    pub sessions: Arc<SessionService>,
    /// The assistant's live data: channels and the daily WhatsApp figures.
    pub live: Arc<dyn LiveData>,
    /// The conversation reports of the reports page and its CSV download (and of the assistant's
    /// `get_conversation_report`), read from the replica when there is one; `/v1` reports read the
    /// primary ([`crate::state::AppState::reports`]).
    pub reports: Arc<domain::reports::ReportsService>,
    /// The top-countries export.
    pub countries: Arc<dyn CountryStats>,
    /// The pace of anonymous searches of the documentation pages, per client address.
    pub docs_visitors: Arc<dyn domain::docs::VisitorSearches>,
    /// Whether cookies carry `Secure` (true except in `wms dev`, which serves plain HTTP).
    pub secure_cookies: bool,
    /// The public base URL (`https://wms.example.com`), for the origin check; when unset, the
    /// request's own host is used.
    pub public_url: Option<String>,
    /// The base of every link wms builds (the OAuth issuer and the MCP resources, the REST
    /// reference's server): `public_url`, else the address listened on; never a request's `Host`,
    /// `X-Forwarded-Host` or `Forwarded`, which whoever sends the request chooses.
    pub site: String,
}

impl std::fmt::Debug for PagesState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PagesState")
            .field("secure_cookies", &self.secure_cookies)
            .field("public_url", &self.public_url)
            .field("site", &self.site)
            .finish_non_exhaustive()
    }
}

/// `GET /`: the settings an admin manages, the analytics for an agent (or the sign-in page, for
/// visitors, through the page they land on).
pub async fn home(req: actix_web::HttpRequest) -> actix_web::HttpResponse {
    let agent = matches!(session::signed(&req).await, Ok(s) if !s.may(domain::access::Action::ApiKeysRead));
    let to = if agent { "/analytics" } else { api_keys::PATH };
    actix_web::HttpResponse::SeeOther().insert_header((actix_web::http::header::LOCATION, to)).finish()
}
