//! Ports for the outside world's non-determinism: time, randomness and password hashing.

use time::OffsetDateTime;

/// The current time. Injected so that expiry, windows and retries are testable without sleeping.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> OffsetDateTime;
}

/// Cryptographically secure random bytes (the OS CSPRNG in production).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait RandomSource: Send + Sync {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]);
}

/// A one-way password hash in PHC string form (`$argon2id$v=19$...`).
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(pub String);

impl std::fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordHash(..)")
    }
}

/// Hashes and verifies passwords. Slow on purpose: adapters run it off the request threads.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait::async_trait]
pub trait PasswordHasher: Send + Sync {
    /// Hashes a new password.
    ///
    /// # Errors
    /// Only on an internal failure of the hashing library.
    async fn hash(&self, password: &crate::users::Password) -> anyhow::Result<PasswordHash>;

    /// Whether `password` matches `hash`, in time independent of where they differ.
    async fn verify(&self, password: &crate::users::Password, hash: &PasswordHash) -> bool;
}

/// Authenticated encryption of secrets that must be readable again (webhook signing secrets,
/// channel access tokens), so a database dump alone does not reveal them.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait SecretCipher: Send + Sync {
    /// Encrypts `plain`; every call uses a fresh nonce.
    fn seal(&self, plain: &[u8]) -> Vec<u8>;

    /// Decrypts what [`SecretCipher::seal`] produced.
    ///
    /// # Errors
    /// When the data was altered or sealed with another key.
    fn open(&self, sealed: &[u8]) -> anyhow::Result<Vec<u8>>;
}
