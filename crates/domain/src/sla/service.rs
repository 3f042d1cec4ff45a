//! The SLA policy use cases (the route's action has been allowed by the policy already), and the
//! breach timer's pass.

use std::sync::Arc;

use serde_json::json;

use super::policy::{SlaPolicy, SlaPolicyChangeInput, SlaPolicyInput};
use super::ports::{CreateSlaPolicyError, DeleteSlaPolicyError, SlaPolicyRepository, SlaTimers, UpdateSlaPolicyError};
use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::common::ports::Clock;
use crate::workspace::WorkspaceId;

/// The SLA policy use cases.
#[derive(Clone)]
pub struct SlaPoliciesService {
    repo: Arc<dyn SlaPolicyRepository>,
}

impl std::fmt::Debug for SlaPoliciesService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlaPoliciesService").finish_non_exhaustive()
    }
}

impl SlaPoliciesService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn SlaPolicyRepository>) -> Self {
        Self { repo }
    }

    /// A page of the workspace's policies, by id.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<SlaPolicy>, RepoError> {
        self.repo.list(ws, page).await
    }

    /// Creates a policy.
    ///
    /// # Errors
    /// [`CreateSlaPolicyError`]: invalid fields, channels or labels not of the workspace.
    pub async fn create(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        input: SlaPolicyInput,
    ) -> Result<SlaPolicy, CreateSlaPolicyError> {
        let new = input.validate()?;
        let entry =
            audit.entry(ws, AuditAction::SlaPolicyCreated, AuditTarget::sla_policy(None), json!({ "name": new.name }));
        self.repo.create(ws, &new, &entry).await
    }

    /// Changes a policy; threads whose cycle already started keep the targets they started with.
    ///
    /// # Errors
    /// [`UpdateSlaPolicyError`].
    pub async fn update(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: i64,
        input: SlaPolicyChangeInput,
    ) -> Result<SlaPolicy, UpdateSlaPolicyError> {
        let change = input.validate()?;
        let fields: Vec<&str> = [
            ("name", change.name.is_some()),
            ("first_response_seconds", change.first_response.is_some()),
            ("next_response_seconds", change.next_response.is_some()),
            ("resolution_seconds", change.resolution.is_some()),
            ("business_hours", change.business_hours.is_some()),
            ("channel_ids", change.channel_ids.is_some()),
            ("labels", change.labels.is_some()),
        ]
        .iter()
        .filter(|f| f.1)
        .map(|f| f.0)
        .collect();
        let entry = audit.entry(
            ws,
            AuditAction::SlaPolicyUpdated,
            AuditTarget::sla_policy(Some(id)),
            json!({ "fields": fields }),
        );
        self.repo.update(ws, id, &change, &entry).await
    }

    /// Deletes a policy.
    ///
    /// # Errors
    /// [`DeleteSlaPolicyError`].
    pub async fn delete(&self, ws: WorkspaceId, audit: &AuditContext, id: i64) -> Result<(), DeleteSlaPolicyError> {
        let entry = audit.entry(ws, AuditAction::SlaPolicyDeleted, AuditTarget::sla_policy(Some(id)), json!({}));
        self.repo.delete(ws, id, &entry).await
    }
}

/// How many due SLAs one transaction settles.
pub const SLA_BATCH: i64 = 100;

/// The breach timer: run every second by each instance (`app::sla`).
#[derive(Clone)]
pub struct SlaTimerService {
    timers: Arc<dyn SlaTimers>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for SlaTimerService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlaTimerService").finish_non_exhaustive()
    }
}

impl SlaTimerService {
    /// The service over its storage and clock.
    pub fn new(timers: Arc<dyn SlaTimers>, clock: Arc<dyn Clock>) -> Self {
        Self { timers, clock }
    }

    /// One pass: every due SLA, a batch at a time; returns how many were settled.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn run_once(&self) -> Result<usize, RepoError> {
        let mut settled = 0;
        loop {
            let n = self.timers.breach_due(self.clock.now(), SLA_BATCH).await?;
            settled += n;
            if i64::try_from(n).unwrap_or(i64::MAX) < SLA_BATCH {
                return Ok(settled);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sla::ports::{MockSlaPolicyRepository, MockSlaTimers};

    #[tokio::test]
    async fn invalid_input_never_reaches_the_storage() {
        let service = SlaPoliciesService::new(Arc::new(MockSlaPolicyRepository::new()));
        let input =
            SlaPolicyInput { name: "Gold".into(), first_response_seconds: Some(0), ..SlaPolicyInput::default() };
        let e = service.create(WorkspaceId(1), &AuditContext::cli(), input).await;
        assert!(matches!(e, Err(CreateSlaPolicyError::Invalid(v)) if v.0[0].field == "first_response_seconds"));
        let e = service.update(WorkspaceId(1), &AuditContext::cli(), 3, SlaPolicyChangeInput::default()).await;
        assert!(matches!(e, Err(UpdateSlaPolicyError::Invalid(v)) if v.0[0].field == "body"));
    }

    #[tokio::test]
    async fn a_pass_settles_batch_by_batch() {
        let mut timers = MockSlaTimers::new();
        let mut seq = mockall::Sequence::new();
        timers.expect_breach_due().times(1).in_sequence(&mut seq).returning(|_, n| Ok(n as usize));
        timers.expect_breach_due().times(1).in_sequence(&mut seq).returning(|_, _| Ok(2));
        let mut clock = crate::common::ports::MockClock::new();
        clock.expect_now().returning(|| time::macros::datetime!(2026-11-26 12:00 UTC));
        let n = SlaTimerService::new(Arc::new(timers), Arc::new(clock)).run_once().await.expect("pass");
        assert_eq!(n, 102);
    }
}
