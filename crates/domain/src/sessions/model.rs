//! Session values: the cookie secret, the stored session, and the CSRF token derived from it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

use crate::auth::{digest, Standing, TokenDigest};
use crate::common::ports::RandomSource;
use crate::users::{Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// Random bytes in a session cookie.
const SECRET_BYTES: usize = 32;
/// Characters of a session cookie value: unpadded base64url of 32 bytes.
const SECRET_CHARS: usize = 43;

/// A session cookie's value: 32 bytes of the OS CSPRNG, base64url. Only its SHA-256 is stored.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionSecret(String);

impl std::fmt::Debug for SessionSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionSecret(..)")
    }
}

impl SessionSecret {
    /// Mints a new secret.
    pub fn generate(random: &dyn RandomSource) -> Self {
        let mut bytes = [0u8; SECRET_BYTES];
        random.fill(&mut bytes);
        Self(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A cookie value as presented, when it has the shape of a secret (anything else is refused
    /// without a database query).
    pub fn parse(raw: &str) -> Option<Self> {
        (raw.len() == SECRET_CHARS && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
            .then(|| Self(raw.to_owned()))
    }

    /// The cookie value.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The stored form.
    pub fn digest(&self) -> TokenDigest {
        digest(&self.0)
    }

    /// The session's anti-forgery token: HMAC-SHA256 keyed with the session secret, so that it
    /// is bound to this session, cannot be computed without the cookie (which scripts cannot read:
    /// `HttpOnly`), and does not reveal the cookie when a page showing it leaks.
    pub fn csrf_token(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.csrf_mac())
    }

    /// Whether `presented` is this session's anti-forgery token, compared in constant time.
    pub fn csrf_matches(&self, presented: &str) -> bool {
        let Ok(bytes) = URL_SAFE_NO_PAD.decode(presented.trim()) else { return false };
        bool::from(self.csrf_mac().as_slice().ct_eq(bytes.as_slice()))
    }

    fn csrf_mac(&self) -> Vec<u8> {
        // Any key length is valid for HMAC; the fallback is unreachable but keeps this total.
        match Hmac::<Sha256>::new_from_slice(self.0.as_bytes()) {
            Ok(mut mac) => {
                mac.update(b"wms settings csrf v1");
                mac.finalize().into_bytes().to_vec()
            }
            Err(_) => vec![0; 32],
        }
    }
}

/// A session as stored, with the names the pages show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Its id.
    pub id: i64,
    /// The signed-in user.
    pub user_id: UserId,
    /// Their e-mail.
    pub user_email: String,
    /// The workspace it works in; `None` until picked.
    pub workspace_id: Option<WorkspaceId>,
    /// When it was opened.
    pub created_at: OffsetDateTime,
    /// When it ends.
    pub expires_at: OffsetDateTime,
    /// When it was signed out.
    pub revoked_at: Option<OffsetDateTime>,
}

impl Session {
    /// Whether it still signs its user in at `now`.
    pub fn is_valid(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && now < self.expires_at
    }
}

/// A workspace a user may work in, for the workspace picker and the page header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceChoice {
    /// The workspace.
    pub id: WorkspaceId,
    /// Its name.
    pub name: String,
    /// Its plan.
    pub plan: PlanTier,
    /// The user's role there.
    pub role: Role,
    /// Whether the membership counts (only those that do are offered).
    pub standing: Standing,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::MockRandomSource;

    fn secret(fill: u8) -> SessionSecret {
        let mut r = MockRandomSource::new();
        r.expect_fill().returning(move |b| b.fill(fill));
        SessionSecret::generate(&r)
    }

    #[test]
    fn secrets_round_trip_and_garbage_is_refused() {
        let s = secret(7);
        assert_eq!(s.expose().len(), SECRET_CHARS);
        assert_eq!(SessionSecret::parse(s.expose()), Some(s.clone()));
        assert_eq!(SessionSecret::parse("short"), None);
        assert_eq!(SessionSecret::parse(&format!("{}=", &s.expose()[1..])), None);
        assert_ne!(s.digest(), secret(8).digest());
        assert_eq!(format!("{s:?}"), "SessionSecret(..)");
    }

    #[test]
    fn csrf_tokens_are_bound_to_their_session() {
        let (a, b) = (secret(1), secret(2));
        assert!(a.csrf_matches(&a.csrf_token()));
        assert!(!a.csrf_matches(&b.csrf_token()));
        assert!(!a.csrf_matches(""));
        assert!(!a.csrf_matches("not base64 !"));
        assert!(!a.csrf_token().contains(a.expose()));
    }
}
