//! Storage port for channels.

use async_trait::async_trait;

use super::model::{Channel, ChannelChange, ChannelFilter, ChannelId, NewChannel};
use crate::audit::AuditEntry;
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why the storage refused a new channel.
#[derive(Debug, thiserror::Error)]
pub enum InsertChannelError {
    /// The workspace already has a channel of this type with this identifier, or another channel
    /// is connected to the same platform account.
    #[error("a {channel_type} channel with identifier {identifier} (or its platform account) already exists")]
    Duplicate {
        /// Platform name.
        channel_type: String,
        /// The identifier.
        identifier: String,
    },
    /// The default team named is no team of the workspace.
    #[error("team {0} is no team of this workspace")]
    UnknownTeam(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why the storage refused a channel change.
#[derive(Debug, thiserror::Error)]
pub enum ChangeChannelError {
    /// Not a channel of this workspace.
    #[error("channel {0} not found")]
    NotFound(ChannelId),
    /// Another channel already uses this platform account.
    #[error("another channel is connected to this platform account")]
    AccountInUse,
    /// The default team named is no team of this workspace.
    #[error("team {0} not found in this workspace")]
    UnknownTeam(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Channels of a workspace. Every method is scoped by the workspace.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ChannelRepository: Send + Sync {
    /// Channels matching `filter`, oldest first, one page.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, filter: ChannelFilter, page: PageRequest)
        -> Result<Page<Channel>, RepoError>;

    /// One channel, `None` when it is not this workspace's.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: ChannelId) -> Result<Option<Channel>, RepoError>;

    /// A new channel id, reserved so credentials can be sealed for the row before it is written
    /// (an id reserved but not used is a gap, as after a failed insert).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn reserve_id(&self) -> Result<ChannelId, RepoError>;

    /// Stores a channel under its reserved id and records `channel.created` and `audit` in the
    /// same transaction.
    ///
    /// # Errors
    /// [`InsertChannelError::Duplicate`] for an identifier already used by this type in the workspace.
    async fn create(
        &self,
        ws: WorkspaceId,
        new: &NewChannel,
        audit: &AuditEntry,
    ) -> Result<Channel, InsertChannelError>;

    /// Applies a change and records `channel.updated` and `audit` in the same transaction.
    ///
    /// # Errors
    /// [`ChangeChannelError`].
    async fn update(
        &self,
        ws: WorkspaceId,
        id: ChannelId,
        change: &ChannelChange,
        audit: &[AuditEntry],
    ) -> Result<Channel, ChangeChannelError>;
}
