//! Storage ports for SLA policies and the breach timer.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::policy::{NewSlaPolicy, SlaPolicy, SlaPolicyChange};
use crate::audit::AuditEntry;
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// Why a policy could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateSlaPolicyError {
    /// Invalid fields.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Ids that are no channel of this workspace.
    #[error("no channel {} in this workspace", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    UnknownChannels(Vec<i64>),
    /// Names that are no label of this workspace.
    #[error("no label named {} in this workspace", .0.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))]
    UnknownLabels(Vec<String>),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a policy could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateSlaPolicyError {
    /// Invalid fields (a change that leaves no target included).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Not a policy of this workspace.
    #[error("SLA policy {0} not found")]
    NotFound(i64),
    /// Ids that are no channel of this workspace.
    #[error("no channel {} in this workspace", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    UnknownChannels(Vec<i64>),
    /// Names that are no label of this workspace.
    #[error("no label named {} in this workspace", .0.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))]
    UnknownLabels(Vec<String>),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a policy could not be deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteSlaPolicyError {
    /// Not a policy of this workspace.
    #[error("SLA policy {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// SLA policies of a workspace. Every method is scoped by the workspace; each change stores its
/// audit record in its transaction.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SlaPolicyRepository: Send + Sync {
    /// A page of policies, by id (the order in which they are tried).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<SlaPolicy>, RepoError>;

    /// Stores a new policy after checking its channels and labels belong to the workspace.
    ///
    /// # Errors
    /// [`CreateSlaPolicyError`].
    async fn create(
        &self,
        ws: WorkspaceId,
        new: &NewSlaPolicy,
        audit: &AuditEntry,
    ) -> Result<SlaPolicy, CreateSlaPolicyError>;

    /// Changes a policy (its row locked; [`SlaPolicyChange::apply`] then
    /// [`super::some_target`] over it). Threads whose cycle already started keep their targets.
    ///
    /// # Errors
    /// [`UpdateSlaPolicyError`].
    async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        change: &SlaPolicyChange,
        audit: &AuditEntry,
    ) -> Result<SlaPolicy, UpdateSlaPolicyError>;

    /// Deletes a policy; the threads it applies to keep their SLA with `policy_id` null.
    ///
    /// # Errors
    /// [`DeleteSlaPolicyError`].
    async fn delete(&self, ws: WorkspaceId, id: i64, audit: &AuditEntry) -> Result<(), DeleteSlaPolicyError>;
}

/// The breach timer over every workspace, safe on any number of instances (due SLAs claimed with
/// `FOR UPDATE SKIP LOCKED`; each breach committed with its `sla.breached`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait SlaTimers: Send + Sync {
    /// Settles up to `limit` SLAs with a target due by `now` ([`super::decide_sla`] with
    /// [`super::SlaFact::Tick`]); returns how many it claimed.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn breach_due(&self, now: OffsetDateTime, limit: i64) -> Result<usize, RepoError>;
}
