//! The threads use cases for integrators (`docs/contract.md`, "Integrator resources"): read one,
//! list with filters, change status and assignee, replace the labels. The route's action has been
//! allowed by the policy already.

use std::sync::Arc;

use super::model::{LabelNames, Thread, ThreadChange, ThreadFilter};
use super::ports::{LifecycleTimers, ListThreadsError, SetThreadLabelsError, ThreadRepository, UpdateThreadError};
use crate::common::error::RepoError;
use crate::common::page::{Page, PageRequest};
use crate::common::ports::Clock;
use crate::workspace::WorkspaceId;

/// Why a thread could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GetThreadError {
    /// Not a thread of this workspace.
    #[error("thread {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// A change as received: the body's `status`, `snoozed_until` and `assignee` (`Some(None)`
/// unassigns).
#[derive(Debug, Clone, Default)]
pub struct ThreadChangeInput {
    /// New status.
    pub status: Option<String>,
    /// The snooze's end (RFC 3339), with `snoozed`.
    pub snoozed_until: Option<String>,
    /// New assignee: kind and id.
    pub assignee: Option<Option<(String, i64)>>,
}

/// The threads use cases.
#[derive(Clone)]
pub struct ThreadsService {
    repo: Arc<dyn ThreadRepository>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ThreadsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadsService").finish_non_exhaustive()
    }
}

impl ThreadsService {
    /// The service over its storage and clock.
    pub fn new(repo: Arc<dyn ThreadRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { repo, clock }
    }

    /// One thread of the workspace.
    ///
    /// # Errors
    /// [`GetThreadError`].
    pub async fn get(&self, ws: WorkspaceId, id: i64) -> Result<Thread, GetThreadError> {
        self.repo.find(ws, id).await?.ok_or(GetThreadError::NotFound(id))
    }

    /// A page of the workspace's threads, newest first.
    ///
    /// # Errors
    /// [`ListThreadsError`].
    pub async fn list(
        &self,
        ws: WorkspaceId,
        filter: &ThreadFilter,
        page: PageRequest,
    ) -> Result<Page<Thread>, ListThreadsError> {
        self.repo.list(ws, filter, page).await
    }

    /// Changes status (and snooze) or assignee; the storage decides over the locked row.
    ///
    /// # Errors
    /// [`UpdateThreadError`]; `Invalid` names each bad field and changes nothing.
    pub async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        input: ThreadChangeInput,
    ) -> Result<Thread, UpdateThreadError> {
        let now = self.clock.now();
        let assignee = input.assignee.as_ref().map(|a| a.as_ref().map(|(k, id)| (k.as_str(), *id)));
        let change = ThreadChange::new(input.status.as_deref(), input.snoozed_until.as_deref(), assignee, now)?;
        self.repo.update(ws, id, &change, now).await
    }

    /// Replaces the thread's labels by `labels` (names of existing labels).
    ///
    /// # Errors
    /// [`SetThreadLabelsError`].
    pub async fn set_labels(
        &self,
        ws: WorkspaceId,
        id: i64,
        labels: &LabelNames,
    ) -> Result<Thread, SetThreadLabelsError> {
        self.repo.set_labels(ws, id, labels).await
    }
}

/// What one pass of the lifecycle's timers did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LifecyclePass {
    /// Snoozed threads opened.
    pub reopened: usize,
    /// Waiting threads given to members.
    pub assigned: usize,
}

/// The lifecycle's timed work: snoozes coming to their time, waiting threads served when someone
/// became eligible. Run every second by each instance (`app::lifecycle`).
#[derive(Clone)]
pub struct LifecycleService {
    timers: Arc<dyn LifecycleTimers>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for LifecycleService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LifecycleService").finish_non_exhaustive()
    }
}

/// How many due snoozes one transaction opens.
pub const SNOOZE_BATCH: i64 = 100;

impl LifecycleService {
    /// The service over its storage and clock.
    pub fn new(timers: Arc<dyn LifecycleTimers>, clock: Arc<dyn Clock>) -> Self {
        Self { timers, clock }
    }

    /// One pass: every due snooze (a batch at a time), then every team's queue.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn run_once(&self) -> Result<LifecyclePass, RepoError> {
        let mut pass = LifecyclePass::default();
        loop {
            let n = self.timers.expire_snoozes(self.clock.now(), SNOOZE_BATCH).await?;
            pass.reopened += n;
            if i64::try_from(n).unwrap_or(i64::MAX) < SNOOZE_BATCH {
                break;
            }
        }
        // After the reopenings: a snooze that ended may count toward a member's load.
        pass.assigned = self.timers.serve_waiting(self.clock.now()).await?;
        Ok(pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::ports::MockThreadRepository;

    #[tokio::test]
    async fn a_missing_thread_is_not_found() {
        let mut repo = MockThreadRepository::new();
        repo.expect_find().returning(|_, _| Ok(None));
        let service = ThreadsService::new(Arc::new(repo), Arc::new(crate::common::ports::MockClock::new()));
        assert!(matches!(service.get(WorkspaceId(1), 7).await, Err(GetThreadError::NotFound(7))));
    }

    #[tokio::test]
    async fn a_bad_change_never_reaches_storage() {
        let mut clock = crate::common::ports::MockClock::new();
        clock.expect_now().returning(|| time::macros::datetime!(2026-11-26 12:00 UTC));
        let service = ThreadsService::new(Arc::new(MockThreadRepository::new()), Arc::new(clock));
        let input = ThreadChangeInput {
            status: Some("snoozed".into()),
            snoozed_until: Some("2025-01-01T00:00:00Z".into()),
            assignee: None,
        };
        let e = service.update(WorkspaceId(1), 7, input).await;
        assert!(matches!(e, Err(UpdateThreadError::Invalid(v)) if v.0[0].field == "snoozed_until"));
    }

    #[tokio::test]
    async fn a_pass_opens_due_snoozes_batch_by_batch_then_serves_the_queues() {
        let mut timers = crate::threads::ports::MockLifecycleTimers::new();
        let mut seq = mockall::Sequence::new();
        timers.expect_expire_snoozes().times(1).in_sequence(&mut seq).returning(|_, n| Ok(n as usize));
        timers.expect_expire_snoozes().times(1).in_sequence(&mut seq).returning(|_, _| Ok(3));
        timers.expect_serve_waiting().times(1).in_sequence(&mut seq).returning(|_| Ok(2));
        let mut clock = crate::common::ports::MockClock::new();
        clock.expect_now().returning(|| time::macros::datetime!(2026-11-26 12:00 UTC));
        let pass = LifecycleService::new(Arc::new(timers), Arc::new(clock)).run_once().await.expect("pass");
        assert_eq!(pass, LifecyclePass { reopened: 103, assigned: 2 });
    }
}
