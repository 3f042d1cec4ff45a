//! Accepting a platform callback: the signature is decided before any work an unsigned body could
//! multiply, then the events of each named account are applied (spec "Abuse limits").
//!
//! Meta signs a callback (`X-Hub-Signature-256`) with the secret of the Meta app, and a channel
//! holds that secret in its sealed credentials. Checking the signature with the secret of each
//! account the body names would cost a lookup and a decryption per account before anything is
//! known about the sender, and would answer differently for connected and unknown accounts. The
//! secrets are few per deployment (one per Meta app, shared by the channels made with it), so the
//! body is checked against the secrets known to the process; only when none matches are the
//! channels of the first accounts named looked up, in one query, for secrets the process has not
//! seen yet (a channel connected since, possibly on another instance). An unsigned body therefore
//! costs at most one query, however many accounts it names, and is refused with one answer.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::model::PlatformEvents;
use super::ports::{Applied, CallbackChannel, CallbackStore};
use super::service::{open_credentials, verify_token_digest};
use crate::channels::{ChannelId, ChannelType};
use crate::common::error::RepoError;
use crate::common::ports::{SecretCipher, SecretPlace};

/// Most distinct platform accounts one callback may name (spec "Abuse limits").
pub const MAX_CALLBACK_ACCOUNTS: usize = 100;

/// The app secrets known to sign callbacks, per platform, remembered by the process. Secrets of
/// deleted channels may stay: a body they sign is acknowledged but changes nothing, because events
/// are applied only to channels whose own secret signed the body.
#[derive(Debug, Default)]
struct CallbackSecrets {
    known: RwLock<HashMap<ChannelType, Known>>,
}

#[derive(Debug, Default)]
struct Known {
    /// Whether every channel of the platform was read once.
    loaded: bool,
    secrets: Vec<Vec<u8>>,
}

impl CallbackSecrets {
    fn matching(&self, platform: ChannelType, body: &[u8], mac: &[u8]) -> Option<Vec<u8>> {
        let known = self.known.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.get(&platform)?.secrets.iter().find(|s| signed_with(s, body, mac)).cloned()
    }

    fn loaded(&self, platform: ChannelType) -> bool {
        let known = self.known.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.get(&platform).is_some_and(|k| k.loaded)
    }

    /// Remembers `secrets` (deduplicated); `complete` when they are every channel's.
    fn learn(&self, platform: ChannelType, secrets: impl IntoIterator<Item = Vec<u8>>, complete: bool) {
        let mut known = self.known.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = known.entry(platform).or_default();
        for s in secrets {
            if !entry.secrets.contains(&s) {
                entry.secrets.push(s);
            }
        }
        entry.loaded |= complete;
    }
}

/// Why a callback was refused.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    /// The signature is missing, malformed or made with no known app secret (401), whatever the
    /// body names.
    #[error("X-Hub-Signature-256 is missing or does not match")]
    BadSignature,
    /// A validly signed body names more accounts than allowed (413).
    #[error("the callback names {named} platform accounts; at most {MAX_CALLBACK_ACCOUNTS} are accepted")]
    TooManyAccounts {
        /// Distinct accounts named.
        named: usize,
    },
    /// Infrastructure failure (503, so the platform retries).
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// What a callback did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CallbackReport {
    /// The channels whose events were applied, with what changed.
    pub applied: Vec<(ChannelId, Applied)>,
    /// Accounts named that are not connected, or whose channel's secret did not sign the body.
    pub skipped: Vec<String>,
}

/// The platforms' callbacks: the subscription handshake and signed bodies of statuses and inbound
/// messages, over the store of channels by platform account, the cipher that opens their app
/// secrets and the secrets this process has learnt.
pub struct CallbackService {
    store: Arc<dyn CallbackStore>,
    cipher: Arc<dyn SecretCipher>,
    secrets: CallbackSecrets,
}

impl std::fmt::Debug for CallbackService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackService").finish_non_exhaustive()
    }
}

impl CallbackService {
    /// The service over its ports, knowing no secret yet.
    pub fn new(store: Arc<dyn CallbackStore>, cipher: Arc<dyn SecretCipher>) -> Self {
        Self { store, cipher, secrets: CallbackSecrets::default() }
    }

    /// Whether `token` is the verify token of one of the platform's channels (the subscription
    /// handshake).
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn verify_token_known(&self, platform: ChannelType, token: &str) -> Result<bool, RepoError> {
        self.store.verify_token_known(platform, verify_token_digest(token)).await
    }

    /// Verifies a callback and applies its events. `entries` are the body's events by account,
    /// each account once (empty when the body is not JSON or for another object).
    ///
    /// # Errors
    /// [`CallbackError`].
    pub async fn receive(
        &self,
        platform: ChannelType,
        body: &[u8],
        signature: Option<&str>,
        entries: Vec<(String, PlatformEvents)>,
    ) -> Result<CallbackReport, CallbackError> {
        let mac = signature.and_then(parse_signature).ok_or(CallbackError::BadSignature)?;
        let secret = self.signing_secret(platform, body, &mac, &entries).await?;
        if entries.len() > MAX_CALLBACK_ACCOUNTS {
            return Err(CallbackError::TooManyAccounts { named: entries.len() });
        }
        let mut report = CallbackReport::default();
        if entries.is_empty() {
            return Ok(report);
        }
        let accounts: Vec<String> = entries.iter().map(|(a, _)| a.clone()).collect();
        let mut channels: HashMap<String, CallbackChannel> = self
            .store
            .channels_for_accounts(platform, &accounts)
            .await?
            .into_iter()
            .map(|c| (c.account_id.clone(), c))
            .collect();
        for (account, events) in entries {
            // One tenant's app secret never vouches for another tenant's account.
            let signed_by_own = |c: &CallbackChannel| self.app_secret(c).as_deref() == Some(secret.as_slice());
            match channels.remove(&account).filter(signed_by_own) {
                Some(channel) => {
                    let applied = self.store.apply(&channel, &events).await?;
                    report.applied.push((channel.channel_id, applied));
                }
                None => report.skipped.push(account),
            }
        }
        Ok(report)
    }

    /// The known app secret that made `mac`, learning the platform's secrets when none does.
    async fn signing_secret(
        &self,
        platform: ChannelType,
        body: &[u8],
        mac: &[u8],
        entries: &[(String, PlatformEvents)],
    ) -> Result<Vec<u8>, CallbackError> {
        if let Some(s) = self.secrets.matching(platform, body, mac) {
            return Ok(s);
        }
        if !self.secrets.loaded(platform) {
            // Once per process and platform: every channel's secret, in one query.
            let all = self.store.platform_channels(platform).await?;
            self.secrets.learn(platform, all.iter().filter_map(|c| self.app_secret(c)), true);
            if let Some(s) = self.secrets.matching(platform, body, mac) {
                return Ok(s);
            }
        }
        // Channels connected since: only the first accounts named, in one query, so that the work
        // does not grow with the body.
        let first: Vec<String> = entries.iter().take(MAX_CALLBACK_ACCOUNTS + 1).map(|(a, _)| a.clone()).collect();
        if !first.is_empty() {
            let channels = self.store.channels_for_accounts(platform, &first).await?;
            self.secrets.learn(platform, channels.iter().filter_map(|c| self.app_secret(c)), false);
        }
        self.secrets.matching(platform, body, mac).ok_or(CallbackError::BadSignature)
    }

    /// The channel's app secret; `None` without one (such a channel accepts no callback).
    fn app_secret(&self, channel: &CallbackChannel) -> Option<Vec<u8>> {
        let place = SecretPlace::channel_credentials(channel.workspace_id.0, channel.channel_id.0);
        open_credentials(self.cipher.as_ref(), &channel.credentials_sealed, &place)
            .ok()?
            .app_secret
            .map(String::into_bytes)
    }
}

/// The MAC of `sha256=<64 hex digits>`.
fn parse_signature(header: &str) -> Option<Vec<u8>> {
    let hex = header.trim().strip_prefix("sha256=")?;
    if hex.len() != 64 {
        return None;
    }
    (0..64).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

fn signed_with(secret: &[u8], body: &[u8], mac: &[u8]) -> bool {
    let Ok(mut m) = Hmac::<Sha256>::new_from_slice(secret) else { return false };
    m.update(body);
    // Constant time.
    m.verify_slice(mac).is_ok()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::common::ports::MockSecretCipher;
    use crate::connectors::{ChannelCredentials, MockCallbackStore};
    use crate::workspace::WorkspaceId;

    /// "Sealing" is the JSON itself, so each channel can carry its own secret.
    fn cipher() -> MockSecretCipher {
        let mut c = MockSecretCipher::new();
        c.expect_open().returning(|b, _| Ok(b.to_vec()));
        c
    }

    fn channel(id: i64, account: &str, secret: &str) -> CallbackChannel {
        let creds = ChannelCredentials { app_secret: Some(secret.into()), ..ChannelCredentials::default() };
        CallbackChannel {
            workspace_id: WorkspaceId(id),
            channel_id: ChannelId(id),
            account_id: account.into(),
            credentials_sealed: serde_json::to_vec(&creds).unwrap_or_default(),
        }
    }

    fn sign(secret: &str, body: &[u8]) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
        m.update(body);
        format!("sha256={}", m.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
    }

    fn entries(accounts: &[&str]) -> Vec<(String, PlatformEvents)> {
        accounts.iter().map(|a| ((*a).to_owned(), PlatformEvents::default())).collect()
    }

    /// A store with channel 1 on `pn-1` (secret `app-a`) and channel 2 on `pn-2` (secret `app-b`),
    /// counting its queries.
    fn store(queries: Arc<AtomicUsize>) -> MockCallbackStore {
        let all = vec![channel(1, "pn-1", "app-a"), channel(2, "pn-2", "app-b")];
        let mut s = MockCallbackStore::new();
        let (q, every) = (queries.clone(), all.clone());
        s.expect_platform_channels().returning(move |_| {
            q.fetch_add(1, Ordering::SeqCst);
            Ok(every.clone())
        });
        s.expect_channels_for_accounts().returning(move |_, accounts| {
            queries.fetch_add(1, Ordering::SeqCst);
            Ok(all.iter().filter(|c| accounts.contains(&c.account_id)).cloned().collect())
        });
        s.expect_apply().returning(|_, _| Ok(Applied { statuses: 1, inbound: 0 }));
        s
    }

    fn service(s: MockCallbackStore) -> CallbackService {
        CallbackService::new(Arc::new(s), Arc::new(cipher()))
    }

    async fn receive(
        s: &CallbackService,
        signature: Option<&str>,
        accounts: &[&str],
    ) -> Result<CallbackReport, CallbackError> {
        s.receive(ChannelType::Whatsapp, b"{}", signature, entries(accounts)).await
    }

    #[tokio::test]
    async fn a_bad_signature_is_refused_alike_for_known_unknown_and_no_accounts() {
        let queries = Arc::new(AtomicUsize::new(0));
        let s = service(store(queries.clone()));
        let wrong = sign("not-our-secret", b"{}");
        for signature in [None, Some("sha256=00"), Some(""), Some(wrong.as_str())] {
            let named: [&[&str]; 3] = [&["pn-1"], &["pn-unknown"], &[]];
            for accounts in named {
                let err = receive(&s, signature, accounts).await;
                assert!(matches!(err, Err(CallbackError::BadSignature)), "{signature:?} {accounts:?}: {err:?}");
            }
        }
    }

    #[tokio::test]
    async fn an_unsigned_body_naming_thousands_of_accounts_costs_at_most_two_queries() {
        let queries = Arc::new(AtomicUsize::new(0));
        let s = service(store(queries.clone()));
        let many: Vec<String> = (0..20_000).map(|i| format!("pn-{i}")).collect();
        let named: Vec<&str> = many.iter().map(String::as_str).collect();
        let err = receive(&s, Some(sign("forged", b"{}").as_str()), &named).await;
        assert!(matches!(err, Err(CallbackError::BadSignature)));
        // The platform's secrets once, then the first accounts named: never one per account.
        assert_eq!(queries.load(Ordering::SeqCst), 2);
        let err = receive(&s, Some(sign("forged", b"{}").as_str()), &named).await;
        assert!(matches!(err, Err(CallbackError::BadSignature)));
        assert_eq!(queries.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn events_apply_only_to_channels_whose_secret_signed() {
        let queries = Arc::new(AtomicUsize::new(0));
        let s = service(store(queries));
        let report = receive(&s, Some(sign("app-a", b"{}").as_str()), &["pn-1", "pn-2", "pn-unknown"]).await;
        let report = report.expect("accepted");
        assert_eq!(report.applied.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [ChannelId(1)]);
        assert_eq!(report.skipped, ["pn-2", "pn-unknown"]);
        // A validly signed body for no known account, or none at all, is acknowledged.
        assert!(receive(&s, Some(sign("app-b", b"{}").as_str()), &["pn-gone"]).await.is_ok());
        assert!(receive(&s, Some(sign("app-b", b"{}").as_str()), &[]).await.is_ok());
    }

    #[tokio::test]
    async fn a_channel_connected_after_the_secrets_were_read_is_found_by_its_account() {
        let mut s = MockCallbackStore::new();
        s.expect_platform_channels().times(1).returning(|_| Ok(vec![channel(1, "pn-1", "app-a")]));
        s.expect_channels_for_accounts().returning(|_, _| Ok(vec![channel(3, "pn-3", "app-new")]));
        s.expect_apply().times(1).returning(|_, _| Ok(Applied::default()));
        let s = service(s);
        assert!(receive(&s, Some(sign("app-a", b"{}").as_str()), &[]).await.is_ok());
        let report = receive(&s, Some(sign("app-new", b"{}").as_str()), &["pn-3"]).await.expect("accepted");
        assert_eq!(report.applied.len(), 1);
    }

    #[tokio::test]
    async fn more_than_a_hundred_accounts_in_a_signed_body_are_too_many() {
        let queries = Arc::new(AtomicUsize::new(0));
        let s = service(store(queries.clone()));
        let many: Vec<String> = (0..=MAX_CALLBACK_ACCOUNTS).map(|i| format!("pn-{i}")).collect();
        let named: Vec<&str> = many.iter().map(String::as_str).collect();
        let err = receive(&s, Some(sign("app-a", b"{}").as_str()), &named).await;
        assert!(matches!(err, Err(CallbackError::TooManyAccounts { named: 101 })), "{err:?}");
        assert!(receive(&s, Some(sign("app-a", b"{}").as_str()), &named[..MAX_CALLBACK_ACCOUNTS]).await.is_ok());
    }

    #[tokio::test]
    async fn the_handshake_looks_the_verify_token_up_by_its_digest_only() {
        let mut s = MockCallbackStore::new();
        s.expect_verify_token_known()
            .withf(|p, d| *p == ChannelType::Messenger && *d == verify_token_digest("verify-me-please"))
            .times(1)
            .returning(|_, _| Ok(true));
        assert!(service(s).verify_token_known(ChannelType::Messenger, "verify-me-please").await.expect("known"));
    }

    proptest! {
        /// Any header parses without panicking; a well-formed one round-trips.
        #[test]
        fn signature_headers_never_panic(header in any::<String>(), mac in proptest::collection::vec(any::<u8>(), 32)) {
            let _ = parse_signature(&header);
            let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
            prop_assert_eq!(parse_signature(&format!("sha256={hex}")), Some(mac.clone()));
            prop_assert_eq!(parse_signature(&format!("sha256={}", hex.to_uppercase())), Some(mac));
        }
    }
}
