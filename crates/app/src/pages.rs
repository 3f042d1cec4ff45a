//! Wiring of the settings web app: sessions on PostgreSQL, the analytics data, and the cookie
//! settings.

use std::sync::Arc;

use adapters_http::authentication::AuthState;
use adapters_http::pages::PagesState;
use adapters_postgres::analytics::PgCountryStats;
use adapters_postgres::assistant::PgLiveData;
use adapters_postgres::docs_visitors::PgVisitorSearches;
use adapters_postgres::sessions::PgSessionRepository;
use adapters_postgres::Db;
use domain::sessions::SessionService;

use crate::config::Settings;
use crate::platform::{OsRandom, SystemClock};

/// The pages' state: sessions on `db`, the analytics and reports on `reads` (`db`, or its read
/// replica).
pub fn state(settings: &Settings, db: &Db, reads: &Db) -> PagesState {
    PagesState {
        reports: crate::wiring::reports(reads),
        sessions: Arc::new(SessionService {
            repo: Arc::new(PgSessionRepository::new(db.clone())),
            clock: Arc::new(SystemClock),
            random: Arc::new(OsRandom),
            ttl: time::Duration::hours(i64::from(settings.auth.session_ttl_hours)),
        }),
        live: Arc::new(PgLiveData::new(reads.clone())),
        countries: Arc::new(PgCountryStats::new(reads.clone())),
        // Written on every anonymous search: the primary, never the replica.
        docs_visitors: Arc::new(PgVisitorSearches::new(db.clone())),
        // `Secure` outside `wms dev` (which sets it to false unless configured): README, "Configuration".
        secure_cookies: settings.http.secure_cookies.unwrap_or(true),
        public_url: settings.http.public_url.clone(),
        site: crate::mail::site_url(settings).as_str().to_owned(),
    }
}

/// `auth` with the session cookie accepted as a member credential (the settings API and the
/// assistant's endpoints).
pub fn with_sessions(mut auth: AuthState, pages: &PagesState) -> AuthState {
    auth.sessions = Some(pages.sessions.clone());
    auth
}
