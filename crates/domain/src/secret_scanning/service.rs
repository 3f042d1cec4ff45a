//! Receiving a secret-scanning alert: verify GitHub's signature, read the tokens, revoke the live
//! keys among them, label each token.

use std::sync::Arc;

use super::alert::{key_digest, parse_alert, AlertBodyError, LeakLabel, ReportedToken};
use super::ports::{LeakReport, LeakedKeyStore, ScanningKeySource};
use super::signature::{names_key, verify_alert, AlertSignature};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::ports::Clock;

/// The answer for one reported token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenVerdict {
    /// The token as reported.
    pub token_raw: String,
    /// The alert's `type` for it.
    pub token_type: String,
    /// True or false positive.
    pub label: LeakLabel,
}

/// Why an alert was not taken.
#[derive(Debug, thiserror::Error)]
pub enum ReceiveAlertError {
    /// No `Github-Public-Key-Identifier` or `Github-Public-Key-Signature` header.
    #[error("the alert carries no GitHub signature")]
    Unsigned,
    /// The signature is malformed or made by no listed key: nothing is read.
    #[error("the alert's signature is not GitHub's")]
    BadSignature,
    /// Signed, but not a JSON array of tokens.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// Signed, but with more than [`super::MAX_ALERT_TOKENS`] tokens.
    #[error("an alert may report at most {limit} tokens; this one has {count}", limit = super::MAX_ALERT_TOKENS)]
    TooMany {
        /// Tokens in the alert.
        count: usize,
    },
    /// GitHub's keys could not be had: the signature cannot be checked now (GitHub retries).
    #[error(transparent)]
    KeysUnavailable(#[from] super::ports::KeysUnavailable),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The secret-scanning intake over GitHub's keys, the key store and the clock.
#[derive(Clone)]
pub struct SecretScanningService {
    keys: Arc<dyn ScanningKeySource>,
    store: Arc<dyn LeakedKeyStore>,
    clock: Arc<dyn crate::common::ports::Clock>,
}

impl std::fmt::Debug for SecretScanningService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretScanningService").finish_non_exhaustive()
    }
}

impl SecretScanningService {
    /// The service over its ports.
    pub fn new(keys: Arc<dyn ScanningKeySource>, store: Arc<dyn LeakedKeyStore>, clock: Arc<dyn Clock>) -> Self {
        Self { keys, store, clock }
    }

    /// Takes an alert: the signature is checked over the raw `body` before anything in it is
    /// read; then every well-formed API key among the tokens is looked up and, if live, revoked.
    /// The verdicts come in the alert's order.
    ///
    /// # Errors
    /// [`ReceiveAlertError`]; nothing changes then.
    pub async fn receive(
        &self,
        signature: AlertSignature<'_>,
        body: &[u8],
    ) -> Result<Vec<TokenVerdict>, ReceiveAlertError> {
        if signature.key_identifier.is_none() || signature.signature.is_none() {
            return Err(ReceiveAlertError::Unsigned);
        }
        let mut keys = self.keys.keys(false).await?;
        if !names_key(&keys, signature.key_identifier) {
            keys = self.keys.keys(true).await?;
        }
        if !verify_alert(&keys, signature, body) {
            return Err(ReceiveAlertError::BadSignature);
        }
        let reported = parse_alert(body).map_err(|e| match e {
            AlertBodyError::Invalid(v) => ReceiveAlertError::Invalid(v),
            AlertBodyError::TooMany(count) => ReceiveAlertError::TooMany { count },
        })?;
        let candidates: Vec<(usize, LeakReport)> = reported
            .iter()
            .enumerate()
            .filter_map(|(i, r)| key_digest(r).map(|digest| (i, LeakReport { digest, reported: r.clone() })))
            .collect();
        let mut labels = vec![LeakLabel::FalsePositive; reported.len()];
        if !candidates.is_empty() {
            let reports: Vec<LeakReport> = candidates.iter().map(|(_, r)| r.clone()).collect();
            let found = self.store.revoke_leaked(&reports, self.clock.now()).await?;
            for ((i, _), label) in candidates.iter().zip(found) {
                labels[*i] = label;
            }
        }
        Ok(reported
            .into_iter()
            .zip(labels)
            .map(|(ReportedToken { token, token_type, .. }, label)| TokenVerdict {
                token_raw: token,
                token_type,
                label,
            })
            .collect())
    }
}
