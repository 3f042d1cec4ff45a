//! Wiring of authentication: the credential store, key repository, sign-in ports and the
//! settings they run with.

use std::sync::Arc;

use adapters_http::authentication::AuthState;
use adapters_postgres::api_keys::PgApiKeyRepository;
use adapters_postgres::credentials::{PgCredentialStore, PgLoginThrottle, PgUserDirectory};
use adapters_postgres::Db;
use domain::auth::{LoginSettings, ThrottlePolicy};
use domain::common::ports::PasswordHash;
use domain::rate_limit::RateLimitPolicy;

use crate::config::Settings;
use crate::platform::{Argon2Hasher, OsRandom, SystemClock};

/// An argon2id hash, at the production parameters, of 32 random bytes that were thrown away: a
/// sign-in with an unknown e-mail is verified against it so that it costs what a wrong password
/// costs and the two cannot be told apart by timing.
pub const DUMMY_PASSWORD_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$s9dI8mCjEF2JdqwyeK8dxA$verSQ3zbHd7a9pLs3m0bFg28kICN3ACL4MFGtvo5R/k";

/// Authentication for the handlers' state.
pub fn auth_state(settings: &Settings, db: &Db) -> AuthState {
    AuthState {
        credentials: Arc::new(PgCredentialStore::new(db.clone())),
        api_keys: Arc::new(PgApiKeyRepository::new(db.clone())),
        users: Arc::new(PgUserDirectory::new(db.clone())),
        login_throttle: Arc::new(PgLoginThrottle::new(db.clone())),
        // Plugged in by the settings web app's sessions (cookie `wms_session`).
        sessions: None,
        hasher: hasher(settings),
        clock: Arc::new(SystemClock),
        random: Arc::new(OsRandom),
        rate_limit: RateLimitPolicy::per_hour(settings.rate_limit.requests_per_hour),
        login: LoginSettings {
            token_ttl: time::Duration::hours(i64::from(settings.auth.token_ttl_hours)),
            throttle: ThrottlePolicy::default(),
            dummy_hash: PasswordHash(DUMMY_PASSWORD_HASH.to_owned()),
        },
        admitted: Arc::default(),
        member_windows: Arc::new(adapters_postgres::rate_limit::PgMemberWindows::new(db.clone())),
        audit: Arc::new(adapters_postgres::audit::PgAuditRepository::new(db.clone())),
    }
}

/// A password hasher running at most `auth.max_concurrent_hashes` hashes at once (default: the
/// number of cores). The server builds one and shares it with every service that hashes.
pub fn hasher(settings: &Settings) -> Arc<dyn domain::common::ports::PasswordHasher> {
    Arc::new(Argon2Hasher::with_max_concurrent(
        settings.auth.max_concurrent_hashes.unwrap_or_else(Argon2Hasher::default_max_concurrent),
    ))
}

#[cfg(test)]
mod tests {
    use domain::common::ports::PasswordHasher;
    use domain::users::Password;

    use super::*;

    #[tokio::test]
    async fn the_dummy_hash_has_the_production_parameters_and_matches_nothing() {
        let real = Argon2Hasher::default().hash(&Password::attempt("correct horse battery")).await.expect("hash");
        let params = |h: &str| h.split('$').nth(3).map(str::to_owned);
        assert_eq!(params(DUMMY_PASSWORD_HASH), params(&real.0));
        assert!(DUMMY_PASSWORD_HASH.starts_with("$argon2id$v=19$"));
        let dummy = PasswordHash(DUMMY_PASSWORD_HASH.to_owned());
        assert!(!Argon2Hasher::default().verify(&Password::attempt(""), &dummy).await);
        assert!(!Argon2Hasher::default().verify(&Password::attempt("correct horse battery"), &dummy).await);
    }
}
