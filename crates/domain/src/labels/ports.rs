//! Storage port for labels.

use async_trait::async_trait;

use super::model::{Label, LabelChange, NewLabel};
use crate::audit::AuditEntry;
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why a label could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateLabelError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Another label has this name (ignoring case).
    #[error("a label named `{0}` exists in this workspace")]
    Duplicate(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a label could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateLabelError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Not a label of this workspace.
    #[error("label {0} not found")]
    NotFound(i64),
    /// Another label has this name (ignoring case).
    #[error("a label named `{0}` exists in this workspace")]
    Duplicate(String),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a label could not be deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteLabelError {
    /// Not a label of this workspace.
    #[error("label {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Labels of a workspace. Every method is scoped by the workspace; each change stores its audit
/// record in its transaction (the created label's id fills an open target id).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LabelRepository: Send + Sync {
    /// A page of labels, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<Label>, RepoError>;

    /// Stores a new label.
    ///
    /// # Errors
    /// [`CreateLabelError::Duplicate`] for a name in use.
    async fn create(&self, ws: WorkspaceId, new: &NewLabel, audit: &AuditEntry) -> Result<Label, CreateLabelError>;

    /// Renames or recolours a label.
    ///
    /// # Errors
    /// [`UpdateLabelError::NotFound`], [`UpdateLabelError::Duplicate`].
    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &LabelChange,
        audit: &AuditEntry,
    ) -> Result<Label, UpdateLabelError>;

    /// Deletes a label; the threads carrying it lose it.
    ///
    /// # Errors
    /// [`DeleteLabelError::NotFound`].
    async fn delete(&self, ws: WorkspaceId, id: i64, audit: &AuditEntry) -> Result<(), DeleteLabelError>;
}
