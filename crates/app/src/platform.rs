//! Adapters for the platform ports: the system clock, the OS random source, argon2id password
//! hashing and XChaCha20-Poly1305 secret encryption.

use std::sync::Arc;

use argon2::password_hash::{PasswordHash as PhcHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use async_trait::async_trait;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use domain::common::ports::{Clock, PasswordHash, PasswordHasher, RandomSource, SecretCipher, SecretPlace};
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
/// addresses would take all memory and every core (`docs/contract.md`, "Abuse limits"). Hashes beyond the cap
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

/// XChaCha20-Poly1305 with a random 192-bit nonce per message, bound to its [`SecretPlace`].
///
/// Layout (version 2): `2 || key id (4 bytes) || nonce (24) || ciphertext`, with the associated
/// data `wms-sealed-v2:` + the place (`table:field:workspace_id:row_id`), so a ciphertext copied onto
/// another row, field or workspace does not open. The key id says which key sealed it, so a
/// cipher holding the current key and previous ones (a key rotation in progress) opens both.
/// Version 1 (`1 || nonce || ciphertext`, no associated data), written by earlier versions, still
/// opens with any of the keys; `wms secrets rotate-key` re-seals it as version 2.
#[derive(Clone)]
pub struct XChaChaCipher {
    /// The sealing key first, then the keys that only open.
    keys: Vec<(KeyId, XChaCha20Poly1305)>,
}

/// The first 4 bytes of SHA-256 over a label and the key: names a key without revealing it.
pub type KeyId = [u8; 4];

impl std::fmt::Debug for XChaChaCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("XChaChaCipher(..)")
    }
}

const SEALED_V1: u8 = 1;
const SEALED_V2: u8 = 2;
const NONCE: usize = 24;
const AAD_V2: &str = "wms-sealed-v2:";

impl XChaChaCipher {
    /// A cipher sealing and opening with a 32-byte key.
    pub fn new(key: &[u8; 32]) -> Self {
        Self::with_previous(key, &[])
    }

    /// A cipher sealing with `key` and also opening what `previous` keys sealed.
    pub fn with_previous(key: &[u8; 32], previous: &[[u8; 32]]) -> Self {
        let mut keys = vec![(Self::key_id(key), XChaCha20Poly1305::new(key.into()))];
        for k in previous {
            let id = Self::key_id(k);
            if keys.iter().all(|(known, _)| *known != id) {
                keys.push((id, XChaCha20Poly1305::new(k.into())));
            }
        }
        Self { keys }
    }

    /// The id of `key` as written into its ciphertexts.
    pub fn key_id(key: &[u8; 32]) -> KeyId {
        use sha2::Digest;
        let digest = sha2::Sha256::new().chain_update(b"wms secrets key id\0").chain_update(key).finalize();
        let mut id = [0u8; 4];
        id.copy_from_slice(&digest[..4]);
        id
    }

    /// Whether `sealed` is already in the current form: version 2 under the sealing key.
    pub fn is_current(&self, sealed: &[u8]) -> bool {
        sealed.first() == Some(&SEALED_V2) && sealed.get(1..5) == Some(&self.keys[0].0[..])
    }

    fn aad(place: &SecretPlace) -> String {
        format!("{AAD_V2}{}", place.associated_data())
    }
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

impl SecretCipher for XChaChaCipher {
    fn seal(&self, plain: &[u8], place: &SecretPlace) -> Vec<u8> {
        let (id, cipher) = &self.keys[0];
        let mut nonce = [0u8; NONCE];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let aad = Self::aad(place);
        // Encryption with a valid key and nonce cannot fail for in-memory buffers.
        let ct =
            cipher.encrypt(XNonce::from_slice(&nonce), Payload { msg: plain, aad: aad.as_bytes() }).unwrap_or_default();
        let mut out = Vec::with_capacity(1 + id.len() + NONCE + ct.len());
        out.push(SEALED_V2);
        out.extend_from_slice(id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        out
    }

    fn open(&self, sealed: &[u8], place: &SecretPlace) -> anyhow::Result<Vec<u8>> {
        match sealed.split_first() {
            Some((&SEALED_V2, rest)) if rest.len() > 4 + NONCE => {
                let (id, rest) = rest.split_at(4);
                let (nonce, ct) = rest.split_at(NONCE);
                let (_, cipher) = self.keys.iter().find(|(k, _)| k[..] == *id).ok_or_else(|| {
                    anyhow::anyhow!(
                        "the secret was sealed with a key this service does not have (key id {}); \
                         configure it in secrets.encryption_key or secrets.previous_keys",
                        hex(id)
                    )
                })?;
                let aad = Self::aad(place);
                cipher.decrypt(XNonce::from_slice(nonce), Payload { msg: ct, aad: aad.as_bytes() }).map_err(|_| {
                    anyhow::anyhow!(
                        "the secret stored for {}:{} {} does not open: it was altered, or sealed for another row or workspace",
                        place.table,
                        place.field,
                        place.row_id
                    )
                })
            }
            Some((&SEALED_V1, rest)) if rest.len() > NONCE => {
                let (nonce, ct) = rest.split_at(NONCE);
                self.keys
                    .iter()
                    .find_map(|(_, c)| c.decrypt(XNonce::from_slice(nonce), ct).ok())
                    .ok_or_else(|| anyhow::anyhow!("secret cannot be decrypted with the configured keys"))
            }
            _ => Err(anyhow::anyhow!("not a sealed secret")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HERE: SecretPlace = SecretPlace::channel_credentials(1, 10);

    #[test]
    fn sealed_secrets_open_only_with_their_key() -> anyhow::Result<()> {
        let a = XChaChaCipher::new(&[7; 32]);
        let b = XChaChaCipher::new(&[8; 32]);
        let sealed = a.seal(b"whsec_abc", &HERE);
        assert_eq!(a.open(&sealed, &HERE)?, b"whsec_abc");
        let refused = b.open(&sealed, &HERE).expect_err("another key").to_string();
        assert!(refused.contains("key this service does not have"), "{refused}");
        assert_ne!(a.seal(b"whsec_abc", &HERE), sealed, "nonces must differ");
        Ok(())
    }

    #[test]
    fn tampered_secret_is_refused() {
        let a = XChaChaCipher::new(&[7; 32]);
        let mut sealed = a.seal(b"token", &HERE);
        if let Some(last) = sealed.last_mut() {
            *last ^= 1;
        }
        assert!(a.open(&sealed, &HERE).is_err());
    }

    #[test]
    fn a_secret_moved_to_another_row_field_or_workspace_does_not_open() {
        let a = XChaChaCipher::new(&[7; 32]);
        let sealed = a.seal(b"token", &HERE);
        for elsewhere in [
            SecretPlace::channel_credentials(1, 11),
            SecretPlace::channel_credentials(2, 10),
            SecretPlace::webhook_secret(1, 10),
        ] {
            let e = a.open(&sealed, &elsewhere).expect_err("moved").to_string();
            assert!(e.contains("sealed for another row or workspace"), "{e}");
        }
    }

    #[test]
    fn previous_keys_open_but_never_seal() -> anyhow::Result<()> {
        let old = XChaChaCipher::new(&[7; 32]);
        let both = XChaChaCipher::with_previous(&[8; 32], &[[7; 32]]);
        let by_old = old.seal(b"old", &HERE);
        assert_eq!(both.open(&by_old, &HERE)?, b"old");
        assert!(!both.is_current(&by_old));
        let by_new = both.seal(b"new", &HERE);
        assert!(both.is_current(&by_new));
        assert_eq!(XChaChaCipher::new(&[8; 32]).open(&by_new, &HERE)?, b"new");
        assert!(old.open(&by_new, &HERE).is_err());
        Ok(())
    }

    #[test]
    fn version_1_secrets_of_earlier_versions_still_open() -> anyhow::Result<()> {
        // `1 || nonce || ciphertext` without associated data, as earlier versions wrote.
        let key = [7u8; 32];
        let nonce = [3u8; NONCE];
        let ct = XChaCha20Poly1305::new((&key).into())
            .encrypt(XNonce::from_slice(&nonce), b"legacy".as_slice())
            .map_err(|_| anyhow::anyhow!("encrypt"))?;
        let v1 = [&[SEALED_V1][..], &nonce, &ct].concat();
        assert_eq!(XChaChaCipher::with_previous(&[9; 32], &[key]).open(&v1, &HERE)?, b"legacy");
        assert!(!XChaChaCipher::new(&key).is_current(&v1));
        assert!(XChaChaCipher::new(&[9; 32]).open(&v1, &HERE).is_err());
        Ok(())
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
