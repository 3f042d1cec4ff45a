//! Storage port for contacts.

use async_trait::async_trait;

use super::model::{Contact, ContactChange, ContactField, ContactFilter, NewContact};
use crate::audit::AuditContext;
use crate::common::error::RepoError;
use crate::workspace::WorkspaceId;

/// Why contacts could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListContactsStoreError {
    /// The `label` filter names no label of the workspace.
    #[error("no label named `{0}` in this workspace")]
    UnknownLabel(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum InsertContactError {
    /// Another contact of the workspace has this phone or e-mail.
    #[error("a contact with this {} already exists", .0.as_str())]
    Duplicate(ContactField),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ChangeContactError {
    /// Not a (live) contact of this workspace.
    #[error("contact {0} not found")]
    NotFound(i64),
    /// Another contact of the workspace has this phone or e-mail.
    #[error("a contact with this {} already exists", .0.as_str())]
    Duplicate(ContactField),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be erased.
#[derive(Debug, thiserror::Error)]
pub enum EraseContactStoreError {
    /// Not a (live) contact of this workspace.
    #[error("contact {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Contacts of a workspace. Every method is scoped by the workspace, and an erased contact is
/// never found by any of them.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ContactRepository: Send + Sync {
    /// Up to `fetch` contacts matching `filter` with an id above `after`, by id.
    ///
    /// # Errors
    /// [`ListContactsStoreError::UnknownLabel`] for a label name the workspace does not have.
    async fn list(
        &self,
        ws: WorkspaceId,
        filter: &ContactFilter,
        after: Option<i64>,
        fetch: i64,
    ) -> Result<Vec<Contact>, ListContactsStoreError>;

    /// One contact.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Contact>, RepoError>;

    /// Stores a contact and records `contact.created` in the same transaction.
    ///
    /// # Errors
    /// [`InsertContactError::Duplicate`] naming the phone or e-mail already in use.
    async fn insert(&self, ws: WorkspaceId, new: &NewContact) -> Result<Contact, InsertContactError>;

    /// Applies a change and records `contact.updated` in the same transaction (nothing when no
    /// value changed).
    ///
    /// # Errors
    /// [`ChangeContactError`].
    async fn change(&self, ws: WorkspaceId, id: i64, change: &ContactChange) -> Result<Contact, ChangeContactError>;

    /// Erases the person in one transaction: with the contact locked, loads the
    /// [`ErasureFacts`](super::ErasureFacts) (its threads' messages, and the stored events whose
    /// contact or thread is its own, found by index) and applies what
    /// [`plan_erasure`](super::plan_erasure) decides: message contents cleared, queued outbound
    /// messages failed as `erased`, the events scrubbed and their receivers' answers dropped,
    /// personal fields (`country` too) cleared, the contact marked erased, `contact.deleted`
    /// recorded with the id only and the plan's `contact.erased` audit record written. Counts,
    /// rollups and analytics are left as they were; nothing of any other contact is read or
    /// changed.
    ///
    /// # Errors
    /// [`EraseContactStoreError::NotFound`] for an unknown or already erased contact (nothing is
    /// changed).
    async fn erase(&self, ws: WorkspaceId, id: i64, audit: &AuditContext) -> Result<(), EraseContactStoreError>;
}
