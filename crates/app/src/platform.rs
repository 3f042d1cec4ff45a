//! Adapters for the platform ports: the system clock, the OS random source, argon2id password
//! hashing and XChaCha20-Poly1305 secret encryption.

use std::sync::Arc;

use argon2::password_hash::{PasswordHash as PhcHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use async_trait::async_trait;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use domain::common::ports::{Clock, PasswordHash, PasswordHasher, RandomSource, SecretCipher};
use domain::users::Password;
use rand::RngCore;
use time::OffsetDateTime;

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// The operating system's CSPRNG.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsRandom;

impl RandomSource for OsRandom {
    fn fill(&self, buf: &mut [u8]) {
        rand::rngs::OsRng.fill_bytes(buf);
    }
}

/// argon2id at OWASP's recommended parameters (m = 19 MiB, t = 2, p = 1), run on the blocking
/// pool so a sign-in never stalls the request threads, at most `auth.max_concurrent_hashes` at
/// once: each hash holds 19 MiB and a core, so without a cap a flood of sign-ins from many
/// addresses would take all memory and every core (spec "Abuse limits"). Hashes beyond the cap
/// wait their turn without holding any memory of their own.
#[derive(Clone)]
pub struct Argon2Hasher {
    argon: Arc<Argon2<'static>>,
    permits: Arc<tokio::sync::Semaphore>,
}

impl Argon2Hasher {
    /// A hasher running at most `max_concurrent` hashes at once (at least one).
    pub fn with_max_concurrent(max_concurrent: usize) -> Self {
        Self { permits: Arc::new(tokio::sync::Semaphore::new(max_concurrent.max(1))), ..Self::default() }
    }

    /// The default cap: the number of cores.
    pub fn default_max_concurrent() -> usize {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    }
}

impl std::fmt::Debug for Argon2Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Argon2Hasher")
    }
}

impl Default for Argon2Hasher {
    fn default() -> Self {
        // The parameters are constants known to be valid; `default()` is the fallback that cannot happen.
        let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
        Self {
            argon: Arc::new(Argon2::new(Algorithm::Argon2id, Version::V0x13, params)),
            permits: Arc::new(tokio::sync::Semaphore::new(Self::default_max_concurrent())),
        }
    }
}

#[async_trait]
impl PasswordHasher for Argon2Hasher {
    async fn hash(&self, password: &Password) -> anyhow::Result<PasswordHash> {
        let argon = self.argon.clone();
        let password = password.clone();
        // The semaphore is never closed, so acquiring only waits.
        let permit = self.permits.clone().acquire_owned().await?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let salt = SaltString::generate(&mut rand::rngs::OsRng);
            argon
                .hash_password(password.expose().as_bytes(), &salt)
                .map(|h| PasswordHash(h.to_string()))
                .map_err(|e| anyhow::anyhow!("argon2: {e}"))
        })
        .await?
    }

    async fn verify(&self, password: &Password, hash: &PasswordHash) -> bool {
        let argon = self.argon.clone();
        let password = password.clone();
        let hash = hash.0.clone();
        let Ok(permit) = self.permits.clone().acquire_owned().await else { return false };
        tokio::task::spawn_blocking(move || {
            // Held until the hash is done, even if the request that asked is gone.
            let _permit = permit;
            PhcHash::new(&hash)
                .map(|h| argon.verify_password(password.expose().as_bytes(), &h).is_ok())
                .unwrap_or(false)
        })
        .await
        .unwrap_or(false)
    }
}

/// XChaCha20-Poly1305 with a random 192-bit nonce per message. Layout: `1 || nonce || ciphertext`;
/// the leading version byte leaves room for key rotation.
#[derive(Clone)]
pub struct XChaChaCipher {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for XChaChaCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("XChaChaCipher(..)")
    }
}

const SEALED_V1: u8 = 1;

impl XChaChaCipher {
    /// A cipher with a 32-byte key.
    pub fn new(key: &[u8; 32]) -> Self {
        Self { cipher: XChaCha20Poly1305::new(key.into()) }
    }
}

impl SecretCipher for XChaChaCipher {
    fn seal(&self, plain: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        // Encryption with a valid key and nonce cannot fail for in-memory buffers.
        let ct = self.cipher.encrypt(XNonce::from_slice(&nonce), plain).unwrap_or_default();
        let mut out = Vec::with_capacity(1 + 24 + ct.len());
        out.push(SEALED_V1);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        out
    }

    fn open(&self, sealed: &[u8]) -> anyhow::Result<Vec<u8>> {
        match sealed.split_first() {
            Some((&SEALED_V1, rest)) if rest.len() > 24 => {
                let (nonce, ct) = rest.split_at(24);
                self.cipher
                    .decrypt(XNonce::from_slice(nonce), ct)
                    .map_err(|_| anyhow::anyhow!("secret cannot be decrypted with this key"))
            }
            _ => Err(anyhow::anyhow!("not a sealed secret")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_only_with_their_key() -> anyhow::Result<()> {
        let a = XChaChaCipher::new(&[7; 32]);
        let b = XChaChaCipher::new(&[8; 32]);
        let sealed = a.seal(b"whsec_abc");
        assert_eq!(a.open(&sealed)?, b"whsec_abc");
        assert!(b.open(&sealed).is_err());
        assert_ne!(a.seal(b"whsec_abc"), sealed, "nonces must differ");
        Ok(())
    }

    #[test]
    fn tampered_secret_is_refused() {
        let a = XChaChaCipher::new(&[7; 32]);
        let mut sealed = a.seal(b"token");
        if let Some(last) = sealed.last_mut() {
            *last ^= 1;
        }
        assert!(a.open(&sealed).is_err());
    }

    #[tokio::test]
    async fn argon2_hashes_verify() -> anyhow::Result<()> {
        let h = Argon2Hasher::default();
        let pw = Password::attempt("correct horse battery");
        let hash = h.hash(&pw).await?;
        assert!(hash.0.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(h.verify(&pw, &hash).await);
        assert!(!h.verify(&Password::attempt("wrong horse battery"), &hash).await);
        Ok(())
    }

    #[tokio::test]
    async fn no_more_hashes_run_than_the_cap() -> anyhow::Result<()> {
        let h = Argon2Hasher::with_max_concurrent(1);
        let hash = h.hash(&Password::attempt("correct horse battery")).await?;
        // While the only permit is taken, a verification waits instead of hashing.
        let held = h.permits.clone().acquire_owned().await?;
        let waiting = tokio::spawn({
            let h = h.clone();
            let hash = hash.clone();
            async move { h.verify(&Password::attempt("correct horse battery"), &hash).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "a hash ran beyond the cap");
        drop(held);
        assert!(waiting.await?);
        assert_eq!(h.permits.available_permits(), 1, "every permit comes back");
        Ok(())
    }
}
