//! Ports of the connectors: the platforms' send APIs, the dispatch queue and the callback store.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{ChannelCredentials, GatewayError, OutboundContent, OutboundRequest, PlatformEvents, ProofError};
use crate::auth::throttle::{ThrottlePolicy, ThrottleRecord, ThrottleSubject};
use crate::channels::{ChannelId, ChannelType};
use crate::common::error::RepoError;
use crate::messaging::MessageId;
use crate::workspace::WorkspaceId;

/// A platform's send API (WhatsApp Cloud API, Messenger Send API, Instagram messaging).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ChannelGateway: Send + Sync {
    /// Sends one message and returns the platform's message id.
    ///
    /// # Errors
    /// [`GatewayError`] classifying the failure: rejected, rate-limited or transient.
    async fn send(&self, request: &OutboundRequest) -> Result<String, GatewayError>;
}

/// Proves that credentials control the platform account they name, before a channel is bound to
/// it (docs/contract.md, "Abuse limits"): the platform must answer a read of that phone number id or
/// page with the access token, for that same id.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AccountProof: Send + Sync {
    /// `Ok` when the platform vouches for the account.
    ///
    /// # Errors
    /// [`ProofError::Refused`] for wrong credentials, [`ProofError::Unreachable`] when the
    /// platform cannot tell.
    async fn prove(&self, channel_type: ChannelType, credentials: &ChannelCredentials) -> Result<(), ProofError>;
}

/// A queued outbound message claimed by a dispatcher, with everything needed to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// Workspace.
    pub workspace_id: WorkspaceId,
    /// The message.
    pub message_id: MessageId,
    /// Its channel.
    pub channel_id: ChannelId,
    /// The channel's platform.
    pub channel_type: ChannelType,
    /// The channel's sealed credentials.
    pub credentials_sealed: Vec<u8>,
    /// The recipient's address (E.164 phone or platform user id); `None` when the contact has none
    /// for this platform.
    pub to: Option<String>,
    /// Text or template.
    pub content: OutboundContent,
    /// The Meta message tag it goes out with (`HUMAN_AGENT`).
    pub tag: Option<crate::messaging::window::MessageTag>,
    /// Attempts including this one.
    pub attempts: i32,
}

/// Queued outbound messages, shared safely by every dispatcher of every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DispatchQueue: Send + Sync {
    /// Claims up to `limit` due messages of connected, unpaused channels (`FOR UPDATE SKIP
    /// LOCKED`), leasing each for `lease_secs` so that a crashed dispatcher's message is taken again.
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn claim(&self, limit: i64, lease_secs: i64) -> Result<Vec<Dispatch>, RepoError>;

    /// The platform accepted the message: `sent`, with its id (emits `message.status_updated`).
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn sent(&self, d: &Dispatch, platform_message_id: &str) -> Result<(), RepoError>;

    /// The message cannot be delivered: `failed` with `reason` (emits `message.status_updated`).
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn failed(&self, d: &Dispatch, reason: &str) -> Result<(), RepoError>;

    /// Try again at `at`.
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn retry_at(&self, d: &Dispatch, at: OffsetDateTime) -> Result<(), RepoError>;

    /// The platform rate-limited the channel: pause it until `until`; this message waits without
    /// the attempt counting.
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn pause_channel(&self, d: &Dispatch, until: OffsetDateTime) -> Result<(), RepoError>;
}

/// The channel a callback is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackChannel {
    /// Workspace.
    pub workspace_id: WorkspaceId,
    /// Channel.
    pub channel_id: ChannelId,
    /// Its platform account (phone number id or page id).
    pub account_id: String,
    /// Its sealed credentials (holding the app secret that signs callbacks).
    pub credentials_sealed: Vec<u8>,
}

/// What applying a callback changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    /// Messages whose status moved forward.
    pub statuses: usize,
    /// Inbound messages stored (redeliveries are not counted).
    pub inbound: usize,
}

/// Channels by platform account, and the changes callbacks report.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CallbackStore: Send + Sync {
    /// The channels of `channel_type` whose platform account is one of `account_ids`, in one
    /// query whatever their number (channels without credentials are left out).
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn channels_for_accounts(
        &self,
        channel_type: ChannelType,
        account_ids: &[String],
    ) -> Result<Vec<CallbackChannel>, RepoError>;

    /// Whether any channel of `channel_type` has this verify token (by its SHA-256).
    ///
    /// # Errors
    /// Infrastructure failures.
    async fn verify_token_known(&self, channel_type: ChannelType, digest: [u8; 32]) -> Result<bool, RepoError>;

    /// Applies the events of one channel, idempotently: statuses only move forward, an inbound
    /// message already stored is skipped; every change emits its webhook event.
    ///
    /// # Errors
    /// Infrastructure failures (nothing is half-applied).
    async fn apply(&self, channel: &CallbackChannel, events: &PlatformEvents) -> Result<Applied, RepoError>;
}

/// The CPU-bound part of a callback, run away from the threads that answer requests (the tokio
/// blocking pool), so that a flood of large forged bodies never delays another route.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CallbackWork: Send + Sync {
    /// The events of `body` by platform account, each account once, in the order first named
    /// (empty when the body is not JSON or for another object).
    async fn accounts(&self, platform: ChannelType, body: Arc<[u8]>) -> Vec<(String, PlatformEvents)>;

    /// The index of the first of `secrets` that signed `body` with `mac`
    /// ([`signer_of`](super::callbacks::signer_of)), if any.
    async fn signer(&self, body: Arc<[u8]>, mac: Vec<u8>, secrets: Vec<Vec<u8>>) -> Option<usize>;

    /// WhatsApp's `message_template_status_update` changes of `body` by WABA id, each WABA once,
    /// in the order first named (empty for anything else).
    async fn template_updates(&self, body: Arc<[u8]>) -> Vec<(String, Vec<super::templates::TemplateStatusChange>)>;
}

/// Badly signed callbacks per client address, counted across every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CallbackThrottle: Send + Sync {
    /// The subject's latest failures, if it has any.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn record(&self, subject: &ThrottleSubject) -> Result<Option<ThrottleRecord>, RepoError>;

    /// Counts one badly signed callback at `now` ([`ThrottleRecord::after_failure`] under the
    /// subject's lock, so concurrent failures from every instance all count).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn count_failure(
        &self,
        subject: &ThrottleSubject,
        now: OffsetDateTime,
        policy: ThrottlePolicy,
    ) -> Result<(), RepoError>;
}
