//! Storage port for channels.

use async_trait::async_trait;

use super::model::{Channel, ChannelFilter, ChannelId, NewChannel};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why a channel could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateChannelError {
    /// The workspace already has a channel of this type with this identifier.
    #[error("a {channel_type} channel with identifier {identifier} already exists")]
    Duplicate {
        /// Platform name.
        channel_type: String,
        /// The identifier.
        identifier: String,
    },
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
    async fn list(&self, ws: WorkspaceId, filter: ChannelFilter, page: PageRequest) -> Result<Page<Channel>, RepoError>;

    /// One channel, `None` when it is not this workspace's.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: ChannelId) -> Result<Option<Channel>, RepoError>;

    /// Stores a channel and records `channel.created` in the same transaction.
    ///
    /// # Errors
    /// [`CreateChannelError::Duplicate`] for an identifier already used by this type in the workspace.
    async fn create(&self, ws: WorkspaceId, new: &NewChannel) -> Result<Channel, CreateChannelError>;
}
