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

impl PasswordHash {
    /// Whether it is a hash at all (a PHC string, `$argon2id$…`): the stored value of an account
    /// without a password (an invited person's) is not, and no password verifies against it.
    pub fn holds_a_password(&self) -> bool {
        self.0.starts_with('$')
    }
}

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

/// Where a sealed secret is kept: one field of one row of one workspace. Its text is the
/// associated data of the ciphertext, so a ciphertext copied onto another row, field or workspace
/// does not open there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SecretPlace {
    /// The table (`channels`, `webhook_destinations`).
    pub table: &'static str,
    /// The field; a value that moves between columns of its row keeps one name (a webhook's
    /// current and previous secret are both `secret`).
    pub field: &'static str,
    /// The owning workspace's id.
    pub workspace_id: i64,
    /// The row's id.
    pub row_id: i64,
}

impl SecretPlace {
    /// A channel's platform credentials (`channels.credentials_encrypted`).
    pub const fn channel_credentials(workspace_id: i64, channel_id: i64) -> Self {
        Self { table: "channels", field: "credentials", workspace_id, row_id: channel_id }
    }

    /// A webhook destination's signing secret, current or previous
    /// (`webhook_destinations.secret_encrypted`, `previous_secret_encrypted`).
    pub const fn webhook_secret(workspace_id: i64, destination_id: i64) -> Self {
        Self { table: "webhook_destinations", field: "secret", workspace_id, row_id: destination_id }
    }

    /// A webhook destination's static header values, sealed together as one JSON object
    /// (`webhook_destinations.headers_encrypted`).
    pub const fn webhook_headers(workspace_id: i64, destination_id: i64) -> Self {
        Self { table: "webhook_destinations", field: "headers", workspace_id, row_id: destination_id }
    }

    /// The associated data: `table:field:workspace_id:row_id`.
    pub fn associated_data(&self) -> String {
        format!("{}:{}:{}:{}", self.table, self.field, self.workspace_id, self.row_id)
    }
}

/// Authenticated encryption of secrets that must be readable again (webhook signing secrets,
/// channel access tokens), so a database dump alone does not reveal them. Each ciphertext is
/// bound to its [`SecretPlace`].
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait SecretCipher: Send + Sync {
    /// Encrypts `plain` for `place`; every call uses a fresh nonce.
    fn seal(&self, plain: &[u8], place: &SecretPlace) -> Vec<u8>;

    /// Decrypts what [`SecretCipher::seal`] produced for the same `place`.
    ///
    /// # Errors
    /// When the data was altered, sealed for another place or with a key this cipher lacks.
    fn open(&self, sealed: &[u8], place: &SecretPlace) -> anyhow::Result<Vec<u8>>;
}
