//! The template catalogue's use cases: listing a channel's templates, syncing them from Meta (on
//! demand, when credentials are set, and periodically by a worker), and Meta's signed
//! `message_template_status_update` callbacks.

use crate::common::page::{Page, PageRequest};
use std::sync::Arc;

use super::service::open_credentials;
use super::templates::{
    ChangedTemplate, SyncTarget, TemplateSource, TemplateStatusChange, TemplateStore, WhatsappTemplate,
};
use crate::channels::ChannelId;
use crate::common::error::RepoError;
use crate::common::ports::{Clock, SecretCipher, SecretPlace};
use crate::workspace::WorkspaceId;

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
    /// No such channel in the workspace.
    #[error("channel {0} not found")]
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

    /// A page of the channel's templates, by name and language (`GET
    /// /v1/channels/:channel_id/templates`). A catalogue is small (Meta keeps at most a few
    /// hundred per account) and read whole; the cursor is a position in it, so a sync between
    /// two pages may shift what the next one starts with.
    ///
    /// # Errors
    /// [`ListTemplatesError`].
    pub async fn page(
        &self,
        ws: WorkspaceId,
        channel: ChannelId,
        page: PageRequest,
    ) -> Result<Page<WhatsappTemplate>, ListTemplatesError> {
        let all = self.list(ws, channel).await?;
        let skip = usize::try_from(page.after.unwrap_or(0)).unwrap_or(usize::MAX);
        let fetch = usize::try_from(page.fetch()).unwrap_or(usize::MAX);
        let rows: Vec<(i64, WhatsappTemplate)> = all
            .into_iter()
            .enumerate()
            .skip(skip)
            .take(fetch)
            .map(|(i, t)| (i64::try_from(i + 1).unwrap_or(i64::MAX), t))
            .collect();
        Ok(Page::from_rows(rows, page, |(position, _)| *position).map(|(_, t)| t))
    }

    /// Reads the channel's templates from Meta and replaces its catalogue with them (templates
    /// gone at Meta disappear); returns the new list. A channel of a platform without templates
    /// has nothing to sync: its list is empty, as its listing is.
    ///
    /// # Errors
    /// [`SyncTemplatesError`].
    pub async fn sync(&self, ws: WorkspaceId, channel: ChannelId) -> Result<Vec<WhatsappTemplate>, SyncTemplatesError> {
        let facts = self.store.sync_facts(ws, channel).await?.ok_or(SyncTemplatesError::NotFound(channel.0))?;
        if !facts.channel_type.has_templates() {
            return Ok(Vec::new());
        }
        let target = facts.target.ok_or(SyncTemplatesError::NoWaba)?;
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

    /// The WhatsApp channels holding each of `wabas` (with credentials), for the check of a
    /// `message_template_status_update` callback's signature
    /// ([`CallbackService`](super::CallbackService) verifies it with the other callbacks).
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn holders_of(&self, wabas: &[String]) -> Result<Vec<(String, SyncTarget)>, RepoError> {
        if wabas.is_empty() {
            return Ok(Vec::new());
        }
        self.store.channels_for_wabas(wabas).await
    }

    /// Applies Meta's status changes to the templates of `holders` (channels whose app secret
    /// signed the callback), each changed template emitting `template.status_updated`. A change
    /// naming a template the channel's catalogue does not have yet (created at Meta since the last
    /// sync) syncs that catalogue from Meta at once and then applies, so the new template appears
    /// with its status and its event; if Meta cannot be read now, the periodic sync brings it.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn apply_status_updates(
        &self,
        holders: &[SyncTarget],
        changes: &[TemplateStatusChange],
    ) -> Result<Vec<ChangedTemplate>, RepoError> {
        if holders.is_empty() || changes.is_empty() {
            return Ok(Vec::new());
        }
        let at = self.clock.now();
        let mut changed = self.store.apply_status(holders, changes, at).await?;
        for holder in holders {
            let unknown = unmatched(holder.channel_id, changes, &changed);
            if unknown.is_empty() {
                continue;
            }
            match self.sync_target(holder).await {
                Ok(()) => changed.extend(self.store.apply_status(std::slice::from_ref(holder), &unknown, at).await?),
                Err(SyncTemplatesError::Unknown(e)) => return Err(e),
                // Meta unreachable or no WABA: the periodic sync brings the template later.
                Err(_) => {}
            }
        }
        Ok(changed)
    }
}

/// The changes that matched no template of `channel` (by name, and language when given).
fn unmatched(
    channel: ChannelId,
    changes: &[TemplateStatusChange],
    changed: &[ChangedTemplate],
) -> Vec<TemplateStatusChange> {
    changes
        .iter()
        .filter(|c| {
            !changed.iter().any(|t| {
                t.channel_id == channel
                    && t.template.name == c.name
                    && c.language.as_ref().is_none_or(|l| *l == t.template.language)
            })
        })
        .cloned()
        .collect()
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

    fn service_with(store: MockTemplateStore, source: MockTemplateSource) -> TemplatesService {
        let mut cipher = MockSecretCipher::new();
        cipher.expect_open().returning(|b, _| Ok(b.to_vec()));
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| datetime!(2026-03-01 10:00:00 UTC));
        TemplatesService::new(Arc::new(store), Arc::new(source), Arc::new(cipher), Arc::new(clock))
    }

    fn change(name: &str) -> TemplateStatusChange {
        TemplateStatusChange {
            name: name.into(),
            language: Some("en_US".into()),
            status: TemplateStatus::Approved,
            reason: None,
        }
    }

    fn changed(channel: i64, name: &str) -> ChangedTemplate {
        ChangedTemplate {
            workspace_id: WorkspaceId(channel),
            channel_id: ChannelId(channel),
            template: WhatsappTemplate {
                name: name.into(),
                language: "en_US".into(),
                category: "UTILITY".into(),
                status: TemplateStatus::Approved,
                quality: None,
                parameters: 0,
                body: String::new(),
                rejected_reason: None,
                updated_at: datetime!(2026-03-01 10:00:00 UTC),
            },
        }
    }

    #[tokio::test]
    async fn a_status_update_for_a_template_not_yet_synced_syncs_the_catalogue_then_applies() {
        let mut store = MockTemplateStore::new();
        let mut seq = mockall::Sequence::new();
        store.expect_apply_status().times(1).in_sequence(&mut seq).returning(|_, _, _| Ok(vec![changed(1, "known")]));
        store.expect_replace().times(1).in_sequence(&mut seq).returning(|_, _, _| Ok(()));
        store
            .expect_apply_status()
            .withf(|_, changes, _| changes.iter().map(|c| c.name.as_str()).collect::<Vec<_>>() == ["brand_new"])
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _| Ok(vec![changed(1, "brand_new")]));
        let mut source = MockTemplateSource::new();
        source.expect_fetch().times(1).returning(|_| Ok(Vec::new()));
        let s = service_with(store, source);
        let got = s.apply_status_updates(&[target(1, "app-a")], &[change("known"), change("brand_new")]).await;
        let names: Vec<String> = got.expect("applied").into_iter().map(|c| c.template.name).collect();
        assert_eq!(names, ["known", "brand_new"]);
    }

    #[tokio::test]
    async fn known_templates_need_no_sync_and_meta_unreachable_leaves_the_rest_to_the_periodic_sync() {
        let mut store = MockTemplateStore::new();
        store.expect_apply_status().times(1).returning(|_, _, _| Ok(vec![changed(1, "known")]));
        store.expect_replace().never();
        let s = service_with(store, MockTemplateSource::new());
        assert_eq!(s.apply_status_updates(&[target(1, "a")], &[change("known")]).await.expect("ok").len(), 1);

        let mut store = MockTemplateStore::new();
        store.expect_apply_status().times(1).returning(|_, _, _| Ok(Vec::new()));
        store.expect_replace().never();
        let mut source = MockTemplateSource::new();
        source.expect_fetch().times(1).returning(|_| Err("unreachable".into()));
        let s = service_with(store, source);
        assert_eq!(s.apply_status_updates(&[target(1, "a")], &[change("new")]).await.expect("ok"), []);
    }
}
