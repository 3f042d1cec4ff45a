//! Accepting a platform callback: before any work that an unsigned body could multiply, the
//! sender's address is checked against its recent bad signatures, and the signature is checked
//! only against the app secrets of the accounts the body names (`docs/contract.md`, "Abuse limits").
//!
//! Meta signs a callback (`X-Hub-Signature-256`) with the secret of the Meta app, and a channel
//! holds that secret in its sealed credentials. A body names the platform accounts it is for; the
//! channels of those accounts are read in one query, and the body is checked against at most
//! [`MAX_CANDIDATE_SECRETS`] distinct secrets among theirs (one Meta app serves many accounts, so
//! a real callback needs one). A body naming no connected account is refused at once, without any
//! hashing. The hashing itself (HMAC-SHA256 over up to 256 KiB per secret) and the parsing of the
//! body run through [`CallbackWork`], away from the threads that answer requests; and an address
//! that sent more than [`CALLBACK_THROTTLE`]'s budget of badly signed callbacks in a minute is
//! refused (429) before either. A flood of forged callbacks therefore costs a few hashes per
//! request at most, then nothing but the refusal, and never slows the other routes.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use time::{Duration, OffsetDateTime};

use super::ports::{Applied, CallbackChannel, CallbackStore, CallbackThrottle, CallbackWork};
use super::service::{open_credentials, verify_token_digest};
use super::template_sync::TemplatesService;
use super::templates::{ChangedTemplate, SyncTarget, TemplateStatusChange};
use crate::auth::throttle::{ThrottlePolicy, ThrottleSubject};
use crate::channels::{ChannelId, ChannelType};
use crate::common::error::RepoError;
use crate::common::ports::{Clock, SecretCipher, SecretPlace};

/// Most distinct platform accounts one callback may name (`docs/contract.md`, "Abuse limits").
pub const MAX_CALLBACK_ACCOUNTS: usize = 100;

/// Most distinct app secrets one callback is checked against (`docs/contract.md`, "Abuse limits").
pub const MAX_CANDIDATE_SECRETS: usize = 4;

/// Badly signed callbacks per client address: more than 20 within any minute are refused (429)
/// until the oldest of the latest 20 is a minute old.
pub const CALLBACK_THROTTLE: ThrottlePolicy =
    ThrottlePolicy { per_email: 20, per_client: 20, window: Duration::minutes(1) };

/// Addresses remembered as refused before expired ones are swept.
const MAX_REMEMBERED: usize = 10_000;

/// Why a callback was refused.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    /// The signature is missing, malformed or made with none of the named accounts' app secrets
    /// (401), whatever the body names.
    #[error("X-Hub-Signature-256 is missing or does not match")]
    BadSignature,
    /// The address sent too many badly signed callbacks (429).
    #[error("too many badly signed callbacks from this address; retry in {retry_after} seconds")]
    Throttled {
        /// Seconds until the address's window ends.
        retry_after: u64,
    },
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
    /// Distinct platform accounts the body named (0: not JSON, another object, or nothing read).
    pub named: usize,
    /// The channels whose events were applied, with what changed.
    pub applied: Vec<(ChannelId, Applied)>,
    /// Accounts named that are not connected, or whose channel's secret did not sign the body.
    pub skipped: Vec<String>,
    /// Templates whose status a WhatsApp `message_template_status_update` changed.
    pub templates: Vec<ChangedTemplate>,
}

/// A channel's app secret (if it has one) and the sealed credentials it was opened from.
type OpenedSecret = (Vec<u8>, Option<Vec<u8>>);

/// One callback as received.
#[derive(Debug, Clone)]
pub struct ReceivedCallback<'a> {
    /// The platform of the path.
    pub platform: ChannelType,
    /// The body, as signed.
    pub body: Arc<[u8]>,
    /// `X-Hub-Signature-256`, if sent.
    pub signature: Option<&'a str>,
    /// The sender's address (`None` when unknown: such senders share one budget).
    pub client: Option<IpAddr>,
}

/// The platforms' callbacks: the subscription handshake and signed bodies of statuses and inbound
/// messages, over the store of channels by platform account, the cipher that opens their app
/// secrets, the off-thread parsing and hashing, the count of bad signatures per address and the
/// clock of its windows.
pub struct CallbackService {
    store: Arc<dyn CallbackStore>,
    cipher: Arc<dyn SecretCipher>,
    work: Arc<dyn CallbackWork>,
    throttle: Arc<dyn CallbackThrottle>,
    clock: Arc<dyn Clock>,
    /// The template catalogue, for WhatsApp's template status changes (named by WABA id, checked
    /// against the app secrets of the channels holding those WABAs).
    templates: Option<Arc<TemplatesService>>,
    /// Addresses found over budget, until the oldest of their budget's failures leaves the
    /// window: a flood is refused from memory, without a query per request. Never wrong: only
    /// time moves failures out of the window.
    refused: Mutex<HashMap<ThrottleSubject, OffsetDateTime>>,
    /// Channels' app secrets by the sealed credentials they were opened from, so a flood naming
    /// the same accounts again costs no decryption; changed credentials are opened anew.
    opened: Mutex<HashMap<ChannelId, OpenedSecret>>,
}

impl std::fmt::Debug for CallbackService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackService").finish_non_exhaustive()
    }
}

impl CallbackService {
    /// The service over its ports.
    pub fn new(
        store: Arc<dyn CallbackStore>,
        cipher: Arc<dyn SecretCipher>,
        work: Arc<dyn CallbackWork>,
        throttle: Arc<dyn CallbackThrottle>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store,
            cipher,
            work,
            throttle,
            clock,
            templates: None,
            refused: Mutex::default(),
            opened: Mutex::default(),
        }
    }

    /// The same, also applying WhatsApp's template status changes to `templates`.
    #[must_use]
    pub fn with_templates(mut self, templates: Arc<TemplatesService>) -> Self {
        self.templates = Some(templates);
        self
    }

    /// Whether `token` is the verify token of one of the platform's channels (the subscription
    /// handshake).
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn verify_token_known(&self, platform: ChannelType, token: &str) -> Result<bool, RepoError> {
        self.store.verify_token_known(platform, verify_token_digest(token)).await
    }

    /// Verifies a callback and applies its events: refused at once for an address over its budget
    /// of bad signatures; then the signature against the secrets of the accounts named; then the
    /// events of each named account whose channel's own secret signed the body.
    ///
    /// # Errors
    /// [`CallbackError`].
    pub async fn receive(&self, callback: ReceivedCallback<'_>) -> Result<CallbackReport, CallbackError> {
        let subject = ThrottleSubject::callbacks_from(callback.client);
        let now = self.clock.now();
        self.admit(&subject, now).await?;
        let verdict = self.check(&callback).await;
        if matches!(verdict, Err(CallbackError::BadSignature)) {
            self.throttle.count_failure(&subject, now, CALLBACK_THROTTLE).await?;
        }
        let Checked { secret, entries, mut channels, templates } = verdict?;
        let named = entries.len() + templates.len();
        let mut report = CallbackReport { named, ..CallbackReport::default() };
        if named > MAX_CALLBACK_ACCOUNTS {
            return Err(CallbackError::TooManyAccounts { named });
        }
        for (account, events) in entries {
            // One tenant's app secret never vouches for another tenant's account.
            match channels.remove(&account).filter(|c| self.app_secret(c).is_some_and(|own| own == secret)) {
                Some(channel) => {
                    let applied = self.store.apply(&channel, &events).await?;
                    report.applied.push((channel.channel_id, applied));
                }
                None => report.skipped.push(account),
            }
        }
        if let Some(service) = &self.templates {
            for (waba, holders, changes) in templates {
                // Only the channels whose own secret signed the body.
                let signed: Vec<SyncTarget> =
                    holders.into_iter().filter(|h| self.secret_of(h).is_some_and(|own| own == secret)).collect();
                if signed.is_empty() {
                    report.skipped.push(waba);
                    continue;
                }
                report.templates.extend(service.apply_status_updates(&signed, &changes).await?);
            }
        }
        Ok(report)
    }

    /// Refuses an address over its budget, from memory when it was refused before.
    async fn admit(&self, subject: &ThrottleSubject, now: OffsetDateTime) -> Result<(), CallbackError> {
        let remembered = self.refused.lock().unwrap_or_else(PoisonError::into_inner).get(subject).copied();
        let until = match remembered {
            Some(until) if until > now => Some(until),
            _ => {
                let record = self.throttle.record(subject).await?;
                record.and_then(|r| CALLBACK_THROTTLE.refused_until(&r, now)).inspect(|until| {
                    let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
                    if refused.len() >= MAX_REMEMBERED {
                        refused.retain(|_, u| *u > now);
                    }
                    refused.insert(subject.clone(), *until);
                })
            }
        };
        match until {
            Some(until) => {
                let left = until - now;
                let secs = u64::try_from(left.whole_seconds()).unwrap_or(0) + u64::from(left.subsec_nanoseconds() > 0);
                Err(CallbackError::Throttled { retry_after: secs.max(1) })
            }
            None => Ok(()),
        }
    }

    /// The secret that signed the body, the body's events by account, the named accounts'
    /// channels, and WhatsApp's template status changes by WABA with the channels holding it;
    /// [`CallbackError::BadSignature`] when no candidate signed it.
    async fn check(&self, callback: &ReceivedCallback<'_>) -> Result<Checked, CallbackError> {
        let mac = callback.signature.and_then(parse_signature).ok_or(CallbackError::BadSignature)?;
        let entries = self.work.accounts(callback.platform, callback.body.clone()).await;
        // The first accounts named, enough to refuse a body naming too many once it is proven.
        let first: Vec<String> = entries.iter().take(MAX_CALLBACK_ACCOUNTS + 1).map(|(a, _)| a.clone()).collect();
        let found = if first.is_empty() {
            Vec::new()
        } else {
            self.store.channels_for_accounts(callback.platform, &first).await?
        };
        let channels: HashMap<String, CallbackChannel> = found.into_iter().map(|c| (c.account_id.clone(), c)).collect();
        let mut candidates = self.candidate_secrets(&first, &channels);
        let templates = self.template_holders(callback).await?;
        for holder in templates.iter().flat_map(|(_, holders, _)| holders) {
            if candidates.len() == MAX_CANDIDATE_SECRETS {
                break;
            }
            if let Some(secret) = self.secret_of(holder) {
                if !candidates.contains(&secret) {
                    candidates.push(secret);
                }
            }
        }
        if candidates.is_empty() {
            return Err(CallbackError::BadSignature);
        }
        let signer = self.work.signer(callback.body.clone(), mac, candidates.clone()).await;
        let secret = signer.and_then(|i| candidates.get(i).cloned()).ok_or(CallbackError::BadSignature)?;
        Ok(Checked { secret, entries, channels, templates })
    }

    /// WhatsApp's template status changes of the body (parsed off the request threads), each WABA
    /// with the channels holding it; none for other platforms or without the catalogue.
    async fn template_holders(&self, callback: &ReceivedCallback<'_>) -> Result<Vec<TemplateUpdates>, RepoError> {
        let Some(service) = &self.templates else { return Ok(Vec::new()) };
        if callback.platform != ChannelType::Whatsapp {
            return Ok(Vec::new());
        }
        let mut updates = self.work.template_updates(callback.body.clone()).await;
        updates.truncate(MAX_CALLBACK_ACCOUNTS + 1);
        let wabas: Vec<String> = updates.iter().map(|(w, _)| w.clone()).collect();
        let holders = service.holders_of(&wabas).await?;
        Ok(updates
            .into_iter()
            .map(|(waba, changes)| {
                let held = holders.iter().filter(|(w, _)| *w == waba).map(|(_, h)| h.clone()).collect();
                (waba, held, changes)
            })
            .collect())
    }

    /// The distinct app secrets of the accounts `named`, in the order named, at most
    /// [`MAX_CANDIDATE_SECRETS`].
    fn candidate_secrets(&self, named: &[String], channels: &HashMap<String, CallbackChannel>) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for channel in named.iter().filter_map(|a| channels.get(a)) {
            if out.len() == MAX_CANDIDATE_SECRETS {
                break;
            }
            if let Some(secret) = self.app_secret(channel) {
                if !out.contains(&secret) {
                    out.push(secret);
                }
            }
        }
        out
    }

    /// The channel's app secret; `None` without one (such a channel accepts no callback).
    fn app_secret(&self, channel: &CallbackChannel) -> Option<Vec<u8>> {
        self.opened_secret(channel.workspace_id, channel.channel_id, &channel.credentials_sealed)
    }

    /// The app secret of a channel holding a WABA.
    fn secret_of(&self, holder: &SyncTarget) -> Option<Vec<u8>> {
        self.opened_secret(holder.workspace_id, holder.channel_id, &holder.credentials_sealed)
    }

    fn opened_secret(&self, ws: crate::workspace::WorkspaceId, channel: ChannelId, sealed: &[u8]) -> Option<Vec<u8>> {
        let mut opened = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((known, secret)) = opened.get(&channel) {
            if known.as_slice() == sealed {
                return secret.clone();
            }
        }
        let place = SecretPlace::channel_credentials(ws.0, channel.0);
        let secret = open_credentials(self.cipher.as_ref(), sealed, &place)
            .ok()
            .and_then(|c| c.app_secret)
            .map(String::into_bytes);
        if opened.len() >= MAX_REMEMBERED {
            opened.clear();
        }
        opened.insert(channel, (sealed.to_vec(), secret.clone()));
        secret
    }
}

/// A WABA named by template status changes, the channels holding it, and the changes.
type TemplateUpdates = (String, Vec<SyncTarget>, Vec<TemplateStatusChange>);

/// What [`CallbackService::check`] proves: the signing secret, the events by account, the named
/// accounts' channels, and the template status changes with the channels holding their WABAs.
struct Checked {
    secret: Vec<u8>,
    entries: Vec<(String, super::model::PlatformEvents)>,
    channels: HashMap<String, CallbackChannel>,
    templates: Vec<TemplateUpdates>,
}

/// The MAC of `sha256=<64 hex digits>`.
fn parse_signature(header: &str) -> Option<Vec<u8>> {
    let hex = header.trim().strip_prefix("sha256=")?;
    if hex.len() != 64 {
        return None;
    }
    (0..64).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

/// The index of the first of `secrets` whose HMAC-SHA256 of `body` is `mac` (compared in constant
/// time). CPU-bound: [`CallbackWork::signer`] runs it away from the request threads.
pub fn signer_of(secrets: &[Vec<u8>], body: &[u8], mac: &[u8]) -> Option<usize> {
    secrets.iter().position(|secret| {
        let Ok(mut m) = Hmac::<Sha256>::new_from_slice(secret) else { return false };
        m.update(body);
        m.verify_slice(mac).is_ok()
    })
}

#[cfg(test)]
#[path = "callbacks_tests.rs"]
mod tests;
