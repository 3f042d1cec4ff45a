//! The key that encrypts secrets at rest.

use std::sync::Arc;

use adapters_postgres::Db;
use base64::Engine;
use domain::common::ports::SecretCipher;
use rand::RngCore;

use crate::config::Settings;
use crate::platform::XChaChaCipher;

/// The cipher for secrets at rest: from `secrets.encryption_key`, or else a key generated once
/// and kept in the database (which protects against leaks of single columns and logs, not
/// against a full database dump; `serve` warns about it).
///
/// # Errors
/// On database failure or a stored key of the wrong size.
pub async fn cipher(settings: &Settings, db: &Db, warn: bool) -> anyhow::Result<Arc<dyn SecretCipher>> {
    let key: Vec<u8> = match &settings.secrets.encryption_key {
        Some(k) => base64::engine::general_purpose::STANDARD.decode(k.trim())?,
        None => {
            if warn {
                tracing::warn!(
                    "secrets.encryption_key is not set: secrets at rest are encrypted with a key kept in the database; \
                     set WMS__SECRETS__ENCRYPTION_KEY to keep the key apart from the data"
                );
            }
            adapters_postgres::service_keys::get_or_create(db, "secrets.encryption_key", || {
                let mut k = vec![0u8; 32];
                rand::rngs::OsRng.fill_bytes(&mut k);
                k
            })
            .await?
        }
    };
    let key: [u8; 32] = key.try_into().map_err(|_| anyhow::anyhow!("the encryption key must be 32 bytes"))?;
    Ok(Arc::new(XChaChaCipher::new(&key)))
}

/// Puts the key (configured, or kept in the database) into `settings.secrets.encryption_key`, so
/// the synchronous wiring that follows ([`crate::wiring::state`], the webhook workers) builds the
/// same cipher with [`cipher_of`]. Every command that serves requests calls it first.
///
/// # Errors
/// On database failure or a stored key of the wrong size.
pub async fn resolve_key(settings: &mut Settings, db: &Db, warn: bool) -> anyhow::Result<()> {
    if settings.secrets.encryption_key.is_none() {
        if warn {
            // The same warning `cipher` gives.
            let _ = cipher(settings, db, true).await?;
        }
        let key = adapters_postgres::service_keys::get_or_create(db, "secrets.encryption_key", || {
            let mut k = vec![0u8; 32];
            rand::rngs::OsRng.fill_bytes(&mut k);
            k
        })
        .await?;
        settings.secrets.encryption_key = Some(base64::engine::general_purpose::STANDARD.encode(key));
    }
    Ok(())
}

/// The cipher of settings whose key is set (see [`resolve_key`]); `None` without a valid key.
pub fn cipher_of(settings: &Settings) -> Option<Arc<dyn SecretCipher>> {
    let raw = settings.secrets.encryption_key.as_deref()?;
    let key: [u8; 32] = base64::engine::general_purpose::STANDARD.decode(raw.trim()).ok()?.try_into().ok()?;
    Some(Arc::new(XChaChaCipher::new(&key)))
}

/// The cipher the wiring uses: from the resolved key; if a command forgot to resolve it (a bug),
/// a temporary key with a loud error, since secrets sealed with it would not open after a restart.
pub fn wired_cipher(settings: &Settings) -> Arc<dyn SecretCipher> {
    cipher_of(settings).unwrap_or_else(|| {
        tracing::error!("secrets.encryption_key was not resolved before wiring; using a temporary key");
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        Arc::new(XChaChaCipher::new(&key))
    })
}
