//! The template catalogue's use cases: listing a channel's templates, syncing them from Meta (on
//! demand, when credentials are set, and periodically by a worker), and Meta's signed
//! `message_template_status_update` callbacks.

use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::callbacks::MAX_CALLBACK_ACCOUNTS;
use super::service::open_credentials;
use super::templates::{
    ChangedTemplate, SyncTarget, TemplateSource, TemplateStatusChange, TemplateStore, WhatsappTemplate,
};
use crate::channels::ChannelId;
use crate::common::error::RepoError;
use crate::common::ports::{Clock, SecretCipher, SecretPlace};
use crate::workspace::WorkspaceId;

/// Most distinct app secrets one template callback is checked against.
const MAX_CANDIDATE_SECRETS: usize = 4;

/// Why a channel's templates could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListTemplatesError {
    /// No such channel in the workspace.
    #[error("channel {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a channel's templates could not be synced.
#[derive(Debug, thiserror::Error)]
pub enum SyncTemplatesError {
    /// No such WhatsApp channel in the workspace (other channel types have no templates).
    #[error("WhatsApp channel {0} not found")]
    NotFound(i64),
    /// The channel has no credentials with a WABA id (422 naming `credentials.waba_id`).
    #[error("the channel's credentials have no waba_id: set it to sync its templates")]
    NoWaba,
    /// Meta could not be read (502).
    #[error("{0}")]
    Platform(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a template status callback was refused.
#[derive(Debug, thiserror::Error)]
pub enum TemplateCallbackError {
    /// Not signed by the app secret of a channel holding a WABA the body names (401).
    #[error("X-Hub-Signature-256 is missing or does not match")]
    BadSignature,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The template catalogue's use cases over the store, Meta's template API, the cipher that opens
/// the channels' credentials and the clock.
#[derive(Clone)]
pub struct TemplatesService {
    store: Arc<dyn TemplateStore>,
    source: Arc<dyn TemplateSource>,
    cipher: Arc<dyn SecretCipher>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for TemplatesService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplatesService").finish_non_exhaustive()
    }
}

impl TemplatesService {
    /// The service over its ports.
    pub fn new(
        store: Arc<dyn TemplateStore>,
        source: Arc<dyn TemplateSource>,
        cipher: Arc<dyn SecretCipher>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { store, source, cipher, clock }
    }

    /// The channel's templates, by name and language.
    ///
    /// # Errors
    /// [`ListTemplatesError`].
    pub async fn list(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Vec<WhatsappTemplate>, ListTemplatesError> {
        self.store.list(ws, channel).await?.ok_or(ListTemplatesError::NotFound(channel.0))
    }

    /// Reads the channel's templates from Meta and replaces its catalogue with them (templates
    /// gone at Meta disappear); returns the new list.
    ///
    /// # Errors
    /// [`SyncTemplatesError`].
    pub async fn sync(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Vec<WhatsappTemplate>, SyncTemplatesError> {
        let target = self.store.sync_target(ws, channel).await?.ok_or(SyncTemplatesError::NotFound(channel.0))?;
        let target = target.ok_or(SyncTemplatesError::NoWaba)?;
        self.sync_target(&target).await?;
        self.store.list(ws, channel).await?.ok_or(SyncTemplatesError::NotFound(channel.0))
    }

    /// Syncs up to `limit` channels whose catalogue is older than `every_secs` (or was never
    /// synced: new credentials); each is claimed so that one instance syncs it. Returns how many
    /// were synced; a channel Meta refuses is tried again at its next turn.
    ///
    /// # Errors
    /// Infrastructure failures of the claim.
    pub async fn sync_due(&self, every_secs: i64, limit: i64) -> Result<usize, RepoError> {
        let due = self.store.claim_due(every_secs, limit).await?;
        let mut synced = 0;
        for target in &due {
            if self.sync_target(target).await.is_ok() {
                synced += 1;
            }
        }
        Ok(synced)
    }

    async fn sync_target(&self, target: &SyncTarget) -> Result<(), SyncTemplatesError> {
        let place = SecretPlace::channel_credentials(target.workspace_id.0, target.channel_id.0);
        let credentials = open_credentials(self.cipher.as_ref(), &target.credentials_sealed, &place)
            .map_err(|e| SyncTemplatesError::Unknown(RepoError::new(anyhow::anyhow!("{e}"))))?;
        if credentials.waba_id.is_none() {
            return Err(SyncTemplatesError::NoWaba);
        }
        let mut templates = self.source.fetch(&credentials).await.map_err(SyncTemplatesError::Platform)?;
        let now = self.clock.now();
        for t in &mut templates {
            t.updated_at = now;
        }
        self.store.replace(target.workspace_id, target.channel_id, &templates).await?;
        Ok(())
    }

    /// Meta's `message_template_status_update` callbacks: `updates` are the changes by WABA id
    /// (each WABA once). The body must be signed with the app secret of a channel holding one of
    /// those WABAs (at most four distinct secrets are tried); the changes apply to the channels
    /// whose own secret signed it, each changed template emitting `template.status_updated`.
    ///
    /// # Errors
    /// [`TemplateCallbackError`].
    pub async fn receive_status_updates(
        &self,
        body: &[u8],
        signature: Option<&str>,
        updates: Vec<(String, Vec<TemplateStatusChange>)>,
    ) -> Result<Vec<ChangedTemplate>, TemplateCallbackError> {
        let mac = signature.and_then(parse_signature).ok_or(TemplateCallbackError::BadSignature)?;
        let wabas: Vec<String> = updates.iter().take(MAX_CALLBACK_ACCOUNTS).map(|(w, _)| w.clone()).collect();
        if wabas.is_empty() {
            return Err(TemplateCallbackError::BadSignature);
        }
        let all = self.store.channels_for_wabas(&wabas).await?;
        let mut candidates: Vec<Vec<u8>> = Vec::new();
        let mut by_waba: Vec<(Vec<SyncTarget>, Vec<TemplateStatusChange>)> = Vec::new();
        let mut signed = false;
        for (waba, changes) in updates.into_iter().take(MAX_CALLBACK_ACCOUNTS) {
            let channels = all.iter().filter(|(w, _)| *w == waba).map(|(_, c)| c.clone());
            let mut holders = Vec::new();
            for c in channels {
                let Some(secret) = self.app_secret(&c) else { continue };
                if !candidates.contains(&secret) {
                    if candidates.len() >= MAX_CANDIDATE_SECRETS {
                        continue;
                    }
                    candidates.push(secret.clone());
                }
                if signed_with(&secret, body, &mac) {
                    signed = true;
                    holders.push(c);
                }
            }
            by_waba.push((holders, changes));
        }
        if !signed {
            return Err(TemplateCallbackError::BadSignature);
        }
        let at = self.clock.now();
        let mut changed = Vec::new();
        for (holders, changes) in by_waba {
            if !holders.is_empty() {
                changed.extend(self.store.apply_status(&holders, &changes, at).await?);
            }
        }
        Ok(changed)
    }

    fn app_secret(&self, c: &SyncTarget) -> Option<Vec<u8>> {
        let place = SecretPlace::channel_credentials(c.workspace_id.0, c.channel_id.0);
        open_credentials(self.cipher.as_ref(), &c.credentials_sealed, &place).ok()?.app_secret.map(String::into_bytes)
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
    use super::*;
    use crate::common::ports::{MockClock, MockSecretCipher};
    use crate::connectors::templates::{MockTemplateSource, MockTemplateStore, TemplateStatus};
    use crate::connectors::ChannelCredentials;
    use time::macros::datetime;

    fn target(id: i64, secret: &str) -> SyncTarget {
        let creds = ChannelCredentials {
            app_secret: Some(secret.into()),
            waba_id: Some("waba-1".into()),
            ..ChannelCredentials::default()
        };
        SyncTarget {
            workspace_id: WorkspaceId(id),
            channel_id: ChannelId(id),
            credentials_sealed: serde_json::to_vec(&creds).unwrap_or_default(),
        }
    }

    fn service(store: MockTemplateStore) -> TemplatesService {
        let mut cipher = MockSecretCipher::new();
        cipher.expect_open().returning(|b, _| Ok(b.to_vec()));
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| datetime!(2026-03-01 10:00:00 UTC));
        TemplatesService::new(Arc::new(store), Arc::new(MockTemplateSource::new()), Arc::new(cipher), Arc::new(clock))
    }

    fn sign(secret: &str, body: &[u8]) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
        m.update(body);
        format!("sha256={}", m.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
    }

    fn change() -> Vec<(String, Vec<TemplateStatusChange>)> {
        vec![(
            "waba-1".into(),
            vec![TemplateStatusChange {
                name: "order_update".into(),
                language: Some("en_US".into()),
                status: TemplateStatus::Paused,
                reason: None,
            }],
        )]
    }

    #[tokio::test]
    async fn a_status_update_applies_only_to_channels_whose_secret_signed_it() {
        let mut store = MockTemplateStore::new();
        store
            .expect_channels_for_wabas()
            .returning(|_| Ok(vec![("waba-1".into(), target(1, "app-a")), ("waba-1".into(), target(2, "app-b"))]));
        store
            .expect_apply_status()
            .withf(|holders, _, _| holders.iter().map(|h| h.channel_id).collect::<Vec<_>>() == [ChannelId(1)])
            .times(1)
            .returning(|_, _, _| Ok(Vec::new()));
        let r = service(store).receive_status_updates(b"{}", Some(&sign("app-a", b"{}")), change()).await;
        assert!(r.is_ok(), "{r:?}");
    }

    #[tokio::test]
    async fn a_status_update_not_signed_by_a_holder_of_the_waba_is_refused() {
        let mut store = MockTemplateStore::new();
        store.expect_channels_for_wabas().returning(|_| Ok(vec![("waba-1".into(), target(1, "app-a"))]));
        store.expect_apply_status().never();
        let s = service(store);
        for signature in [None, Some("sha256=00".to_owned()), Some(sign("forged", b"{}"))] {
            let r = s.receive_status_updates(b"{}", signature.as_deref(), change()).await;
            assert!(matches!(r, Err(TemplateCallbackError::BadSignature)), "{r:?}");
        }
    }
}
