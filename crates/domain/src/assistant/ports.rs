//! The live workspace data the tools read. Every method runs in one read-only transaction and is
//! scoped to the workspace it is given: nothing of another workspace is ever read.

use async_trait::async_trait;
use time::{Date, OffsetDateTime};

use super::model::{
    ChannelSummary, ContactDay, ContactProfile, Conversation, DeliveryCounts, Responder, WebhookList, WorkspaceOverview,
};
use crate::channels::{ChannelId, ChannelType};
use crate::common::error::RepoError;
use crate::workspace::WorkspaceId;

/// Daily WhatsApp figures as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhatsappDays {
    /// The WhatsApp channels covered.
    pub channels: Vec<ChannelSummary>,
    /// The workspace's IANA time zone.
    pub time_zone: String,
    /// Today in that time zone.
    pub today: Date,
    /// Figures of the days in the period that have any; missing days had none.
    pub days: Vec<(Date, DeliveryCounts)>,
}

/// What the store found for a channel analytics request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelStats {
    /// WhatsApp figures; `asked` is the channel named in the request, if one was.
    Whatsapp {
        /// The requested channel.
        asked: Option<ChannelSummary>,
        /// The figures.
        data: WhatsappDays,
    },
    /// The requested channel is on Messenger or Instagram.
    OtherPlatform(ChannelSummary),
}

/// Why channel figures could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ChannelStatsError {
    /// The workspace has no channel with this id (another workspace's id included).
    #[error("no channel with id {0} in this workspace")]
    UnknownChannel(ChannelId),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// How to find a contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactKey {
    /// By E.164 phone number (unique per workspace).
    Phone(String),
    /// By lowercase e-mail (several contacts may share one).
    Email(String),
}

/// Everything the contact report is built from, for the period and label asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactFacts {
    /// The workspace's IANA time zone.
    pub time_zone: String,
    /// Today in that time zone.
    pub today: Date,
    /// Whether the requested label exists in the workspace (true when none was requested).
    pub label_exists: bool,
    /// The contact's threads (carrying the label, when one was given), latest activity first.
    pub threads: Vec<Conversation>,
    /// Message figures of the days in the period that have any, over those threads.
    pub days: Vec<ContactDay>,
    /// Team members who wrote to the contact in the period, over those threads.
    pub responders: Vec<Responder>,
}

/// Read-only access to a workspace's live data.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LiveData: Send + Sync {
    /// The counts of `get_workspace_overview`, or `None` when the workspace does not exist.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn overview(&self, ws: WorkspaceId, now: OffsetDateTime) -> Result<Option<WorkspaceOverview>, RepoError>;

    /// The workspace's channels, optionally of one type, oldest first.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn channels(
        &self,
        ws: WorkspaceId,
        channel_type: Option<ChannelType>,
    ) -> Result<Vec<ChannelSummary>, RepoError>;

    /// The workspace's webhook destinations, optionally only active ones, oldest first.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn webhooks(&self, ws: WorkspaceId, active_only: bool) -> Result<WebhookList, RepoError>;

    /// Outbound figures per day over the `days` days ending on today's date at `now` in the
    /// workspace's time zone, for one channel or (when `channel` is `None`) every WhatsApp channel.
    ///
    /// # Errors
    /// [`ChannelStatsError::UnknownChannel`] when the workspace has no such channel.
    async fn channel_stats(
        &self,
        ws: WorkspaceId,
        channel: Option<ChannelId>,
        days: u16,
        now: OffsetDateTime,
    ) -> Result<ChannelStats, ChannelStatsError>;

    /// Contacts matching `key`, at most `limit`, oldest first.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn find_contacts(
        &self,
        ws: WorkspaceId,
        key: &ContactKey,
        limit: i64,
    ) -> Result<Vec<ContactProfile>, RepoError>;

    /// The facts of one contact over the `days` days ending today, restricted to threads carrying
    /// the label named `label` (case-insensitive) when one is given.
    ///
    /// # Errors
    /// Only infrastructure failures.
    async fn contact_facts(
        &self,
        ws: WorkspaceId,
        contact_id: i64,
        label: Option<String>,
        days: u16,
        now: OffsetDateTime,
    ) -> Result<ContactFacts, RepoError>;
}
