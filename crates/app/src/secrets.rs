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
