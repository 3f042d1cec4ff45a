//! The channels use cases. The route's action has been allowed by the policy already.

use std::sync::Arc;

use super::model::{Channel, ChannelFilter, ChannelId};
use super::ports::{ChangeChannelError, ChannelRepository, InsertChannelError};
use super::validate::{
    channel_change_entries, channel_created_entry, validate_channel_change, validate_new_channel, ChannelChangeInput,
    ChannelInput,
};
use crate::audit::AuditContext;
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::SecretCipher;
use crate::connectors::template_sync::TemplatesService;
use crate::connectors::{AccountProof, ChannelCredentials, ProofError};
use crate::workspace::WorkspaceId;

/// Why a channel could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GetChannelError {
    /// Not a channel of this workspace.
    #[error("channel {0} not found")]
    NotFound(ChannelId),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a channel could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateChannelError {
    /// Invalid fields, each named.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// The platform does not confirm the credentials for the account they name.
    #[error("{0}")]
    CredentialsRefused(String),
    /// The platform cannot be reached to confirm the credentials; nothing is stored.
    #[error("{0}")]
    PlatformUnreachable(String),
    /// The workspace already has a channel of this type with this identifier, or another channel
    /// is connected to the same platform account.
    #[error("a {channel_type} channel with identifier {identifier} (or its platform account) already exists")]
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

/// Why a channel could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateChannelError {
    /// Not a channel of this workspace.
    #[error("channel {0} not found")]
    NotFound(ChannelId),
    /// Invalid fields, each named, or an empty change.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// The platform does not confirm the credentials for the account they name.
    #[error("{0}")]
    CredentialsRefused(String),
    /// The platform cannot be reached to confirm the credentials; nothing changes.
    #[error("{0}")]
    PlatformUnreachable(String),
    /// Another channel already uses this platform account.
    #[error("another channel is connected to this platform account")]
    AccountInUse,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

impl From<InsertChannelError> for CreateChannelError {
    fn from(e: InsertChannelError) -> Self {
        match e {
            InsertChannelError::Duplicate { channel_type, identifier } => Self::Duplicate { channel_type, identifier },
            InsertChannelError::UnknownTeam(_) => {
                Self::Invalid(ValidationErrors::one("default_team_id", e.to_string()))
            }
            InsertChannelError::Unknown(e) => Self::Unknown(e),
        }
    }
}

impl From<ProofError> for CreateChannelError {
    fn from(e: ProofError) -> Self {
        match e {
            ProofError::Refused(m) => Self::CredentialsRefused(m),
            ProofError::Unreachable(m) => Self::PlatformUnreachable(m),
        }
    }
}

impl From<ChangeChannelError> for UpdateChannelError {
    fn from(e: ChangeChannelError) -> Self {
        match e {
            ChangeChannelError::NotFound(id) => Self::NotFound(id),
            ChangeChannelError::AccountInUse => Self::AccountInUse,
            ChangeChannelError::UnknownTeam(_) => {
                Self::Invalid(ValidationErrors::one("default_team_id", e.to_string()))
            }
            ChangeChannelError::Unknown(e) => Self::Unknown(e),
        }
    }
}

impl From<ProofError> for UpdateChannelError {
    fn from(e: ProofError) -> Self {
        match e {
            ProofError::Refused(m) => Self::CredentialsRefused(m),
            ProofError::Unreachable(m) => Self::PlatformUnreachable(m),
        }
    }
}

/// The channels use cases: the storage, the cipher that seals credentials for their row, and the
/// platform that vouches for them.
#[derive(Clone)]
pub struct ChannelsService {
    repo: Arc<dyn ChannelRepository>,
    cipher: Arc<dyn SecretCipher>,
    proof: Arc<dyn AccountProof>,
    templates: Option<Arc<TemplatesService>>,
}

impl std::fmt::Debug for ChannelsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelsService").finish_non_exhaustive()
    }
}

impl ChannelsService {
    /// The service over its ports.
    pub fn new(repo: Arc<dyn ChannelRepository>, cipher: Arc<dyn SecretCipher>, proof: Arc<dyn AccountProof>) -> Self {
        Self { repo, cipher, proof, templates: None }
    }

    /// Syncs a WhatsApp channel's template catalogue as soon as credentials with a `waba_id` are
    /// set (the periodic sync takes it again if Meta cannot be read then).
    #[must_use]
    pub fn with_templates(mut self, templates: Arc<TemplatesService>) -> Self {
        self.templates = Some(templates);
        self
    }

    async fn sync_templates(&self, ws: WorkspaceId, channel: &Channel, credentials: Option<&ChannelCredentials>) {
        if let (Some(t), Some(_)) = (&self.templates, credentials.and_then(|c| c.waba_id.as_ref())) {
            // A failure leaves the catalogue due: the periodic sync tries again shortly.
            let _ = t.sync(ws, channel.id).await;
        }
    }

    /// A page of the workspace's channels matching `filter`, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(
        &self,
        ws: WorkspaceId,
        filter: ChannelFilter,
        page: PageRequest,
    ) -> Result<Page<Channel>, RepoError> {
        self.repo.list(ws, filter, page).await
    }

    /// One channel of the workspace.
    ///
    /// # Errors
    /// [`GetChannelError`].
    pub async fn get(&self, ws: WorkspaceId, id: ChannelId) -> Result<Channel, GetChannelError> {
        self.repo.find(ws, id).await?.ok_or(GetChannelError::NotFound(id))
    }

    /// Creates a channel, recording `audit` with it.
    ///
    /// # Errors
    /// [`CreateChannelError`].
    pub async fn create(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        input: ChannelInput,
    ) -> Result<Channel, CreateChannelError> {
        // The id first: the credentials are sealed for the row they go into.
        let id = self.repo.reserve_id().await?;
        let new = validate_new_channel(ws, id, &input, self.cipher.as_ref())?;
        // Bound to the platform account only once the platform vouches for the token (nothing
        // stored otherwise).
        self.prove(new.channel_type, input.credentials.as_ref()).await?;
        let entry = channel_created_entry(ws, audit, &new);
        let channel = self.repo.create(ws, &new, &entry).await?;
        self.sync_templates(ws, &channel, input.credentials.as_ref()).await;
        Ok(channel)
    }

    /// Renames a channel, changes its status or replaces its credentials, recording `audit`.
    ///
    /// # Errors
    /// [`UpdateChannelError`].
    pub async fn update(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: ChannelId,
        input: ChannelChangeInput,
    ) -> Result<Channel, UpdateChannelError> {
        let channel = self.repo.find(ws, id).await?.ok_or(UpdateChannelError::NotFound(id))?;
        let credentials = input.credentials.clone();
        let change = validate_channel_change(ws, id, channel.channel_type, input, self.cipher.as_ref())?;
        // New credentials bind only once the platform vouches for the token (nothing changes otherwise).
        self.prove(channel.channel_type, credentials.as_ref()).await?;
        let entries = channel_change_entries(ws, audit, id, &change);
        let channel = self.repo.update(ws, id, &change, &entries).await?;
        self.sync_templates(ws, &channel, credentials.as_ref()).await;
        Ok(channel)
    }

    async fn prove(
        &self,
        channel_type: super::model::ChannelType,
        credentials: Option<&ChannelCredentials>,
    ) -> Result<(), ProofError> {
        match credentials {
            Some(c) => self.proof.prove(channel_type, c).await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
