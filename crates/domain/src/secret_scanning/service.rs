//! Receiving a secret-scanning alert: verify GitHub's signature, read the tokens, revoke the live
//! credentials among them (and void the live links), label each token.

use std::collections::HashMap;
use std::sync::Arc;

use super::alert::{leak_candidate, parse_alert, AlertBodyError, LeakLabel, ReportedToken};
use super::ports::{LeakReport, LeakedCredentialStore, ScanningKeySource};
use super::signature::{names_key, verify_alert, AlertSignature};
use crate::auth::TokenDigest;
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
    store: Arc<dyn LeakedCredentialStore>,
    clock: Arc<dyn crate::common::ports::Clock>,
}

impl std::fmt::Debug for SecretScanningService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretScanningService").finish_non_exhaustive()
    }
}

impl SecretScanningService {
    /// The service over its ports.
    pub fn new(keys: Arc<dyn ScanningKeySource>, store: Arc<dyn LeakedCredentialStore>, clock: Arc<dyn Clock>) -> Self {
        Self { keys, store, clock }
    }

    /// Takes an alert: the signature is checked over the raw `body` before anything in it is
    /// read; then every well-formed wms credential among the tokens is looked up and, if
    /// live, revoked. The verdicts come in the alert's order; a token reported twice is looked up
    /// once and answered alike both times.
    ///
    /// # Errors
    /// [`ReceiveAlertError`]; nothing changes then.
    pub async fn receive(
        &self,
        signature: AlertSignature<'_>,
        body: &[u8],
    ) -> Result<Vec<TokenVerdict>, ReceiveAlertError> {
        if !signature.is_present() {
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
        // The distinct candidates in the alert's order, and each token's place among them.
        let mut reports: Vec<LeakReport> = Vec::new();
        let mut seen: HashMap<TokenDigest, usize> = HashMap::new();
        let positions: Vec<Option<usize>> = reported
            .iter()
            .map(|r| {
                let (kind, digest) = leak_candidate(r)?;
                Some(*seen.entry(digest).or_insert_with(|| {
                    reports.push(LeakReport { kind, digest, reported: r.clone() });
                    reports.len() - 1
                }))
            })
            .collect();
        let found =
            if reports.is_empty() { Vec::new() } else { self.store.revoke_leaked(&reports, self.clock.now()).await? };
        let labels: Vec<LeakLabel> = positions
            .iter()
            .map(|p| p.and_then(|p| found.get(p).copied()).unwrap_or(LeakLabel::FalsePositive))
            .collect();
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

#[cfg(test)]
mod tests {
    use base64::Engine;
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::{Signature, SigningKey};
    use p256::pkcs8::{EncodePublicKey, LineEnding};
    use time::macros::datetime;

    use super::*;
    use crate::auth::{NewToken, TokenKind};
    use crate::common::ports::{MockClock, MockRandomSource};
    use crate::secret_scanning::{MockLeakedCredentialStore, MockScanningKeySource, ScanningPublicKey};

    fn github() -> (SigningKey, ScanningPublicKey) {
        let key = SigningKey::from_slice(&[3; 32]).expect("scalar");
        let pem = key.verifying_key().to_public_key_pem(LineEnding::LF).expect("pem");
        (key, ScanningPublicKey { identifier: "gh".into(), pem, is_current: true })
    }

    fn service(keys: MockScanningKeySource, store: MockLeakedCredentialStore) -> SecretScanningService {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(datetime!(2026-06-01 0:00 UTC));
        SecretScanningService::new(Arc::new(keys), Arc::new(store), Arc::new(clock))
    }

    fn sign(key: &SigningKey, body: &[u8]) -> String {
        let s: Signature = key.sign(body);
        base64::engine::general_purpose::STANDARD.encode(s.to_der().as_bytes())
    }

    fn minted(kind: TokenKind, byte: u8) -> String {
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(move |b| b.fill(byte));
        NewToken::generate(kind, &random).secret
    }

    #[tokio::test]
    async fn only_well_formed_credentials_reach_the_store_once_and_verdicts_keep_the_alerts_order() {
        let (signer, public) = github();
        let mut keys = MockScanningKeySource::new();
        keys.expect_keys().withf(|refresh| !refresh).times(1).returning(move |_| Ok(vec![public.clone()]));
        let key = minted(TokenKind::ApiKey, 9);
        let login = minted(TokenKind::User, 9);
        let app = minted(TokenKind::AppAccess, 9);
        let body = serde_json::to_vec(&serde_json::json!([
            {"token": "wmsk_garbage", "type": "wms"},
            {"token": key, "type": "wms", "url": "https://x"},
            {"token": login, "type": "wms_login"},
            {"token": app, "type": "wms"},
            {"token": login, "type": "wms_login"},
        ]))
        .expect("json");
        let mut store = MockLeakedCredentialStore::new();
        store
            .expect_revoke_leaked()
            .withf(move |reports, _| {
                let kinds: Vec<TokenKind> = reports.iter().map(|r| r.kind).collect();
                kinds == [TokenKind::ApiKey, TokenKind::User, TokenKind::AppAccess]
                    && reports[0].reported.url.as_deref() == Some("https://x")
            })
            .times(1)
            .returning(|_, _| Ok(vec![LeakLabel::TruePositive, LeakLabel::TruePositive, LeakLabel::FalsePositive]));
        let sig = sign(&signer, &body);
        let verdicts = service(keys, store)
            .receive(AlertSignature { key_identifier: Some("gh"), signature: Some(&sig) }, &body)
            .await
            .expect("taken");
        let labels: Vec<LeakLabel> = verdicts.iter().map(|v| v.label).collect();
        assert_eq!(
            labels,
            [
                LeakLabel::FalsePositive,
                LeakLabel::TruePositive,
                LeakLabel::TruePositive,
                LeakLabel::FalsePositive,
                LeakLabel::TruePositive
            ]
        );
        assert_eq!(verdicts[1].token_raw, key);
        assert_eq!(verdicts[4].token_raw, login);
    }

    #[tokio::test]
    async fn an_unknown_identifier_asks_for_fresh_keys_and_a_bad_signature_touches_nothing() {
        let (_, public) = github();
        let mut keys = MockScanningKeySource::new();
        let listed = public.clone();
        keys.expect_keys().withf(|refresh| !refresh).times(1).returning(move |_| Ok(vec![listed.clone()]));
        keys.expect_keys().withf(|refresh| *refresh).times(1).returning(move |_| Ok(vec![public.clone()]));
        let forger = SigningKey::from_slice(&[4; 32]).expect("scalar");
        let sig = sign(&forger, b"[]");
        // No expectation on the store: a call would panic.
        let err = service(keys, MockLeakedCredentialStore::new())
            .receive(AlertSignature { key_identifier: Some("new"), signature: Some(&sig) }, b"[]")
            .await
            .expect_err("refused");
        assert!(matches!(err, ReceiveAlertError::BadSignature));
        let err = service(MockScanningKeySource::new(), MockLeakedCredentialStore::new())
            .receive(AlertSignature::default(), b"[]")
            .await
            .expect_err("refused");
        assert!(matches!(err, ReceiveAlertError::Unsigned));
    }
}
