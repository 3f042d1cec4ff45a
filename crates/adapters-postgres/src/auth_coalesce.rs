//! Group commit for credential checks: the concurrent `/v1` requests of one credential share one
//! database statement instead of queueing one by one on the credential's rate-limit row lock.
//!
//! While a check of a credential is in flight, later requests for the same credential (same token
//! digest and same requirements) wait in a queue. When the statement returns, the queued requests
//! — up to a bound — go together in ONE statement that verifies the credential and asks the limiter
//! to admit all of them; the verdicts are handed out in arrival order. A request that finds nothing
//! in flight is sent at once (no timer, no added latency when there is no contention).
//!
//! Freshness: a request is only ever put in a batch that is taken from the queue *after* the
//! request joined it, so the batch's statement starts — and reads the credential — after the
//! request arrived. A revocation, deletion, expiry or plan change committed before a request
//! arrived is therefore always seen by that request's check; nothing is reused from a statement
//! that started earlier (`docs/rate-limit.md`, "Coalescing").

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use domain::auth::{CredentialCheck, PresentedToken, Requirements, TokenDigest, TokenKind};
use domain::workspace::PlanTier;
use domain::RepoError;
use tokio::sync::oneshot;

/// The most requests one statement carries by default.
pub const DEFAULT_MAX_BATCH: usize = 256;

/// One atomic check of a credential for several requests: the storage side of the coalescer.
#[async_trait]
pub trait BatchVerify: Send + Sync + 'static {
    /// Verifies `token` against `needs` for `count` (≥ 1) requests at once, in one round trip and
    /// atomically across instances, and returns exactly `count` verdicts in the requests' order
    /// (admissions first when the limit admits only some of them).
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn verify_batch(
        &self,
        token: &PresentedToken,
        needs: &Requirements,
        count: u32,
    ) -> Result<Vec<CredentialCheck>, RepoError>;
}

/// What makes two requests interchangeable for a batch: the same credential and requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    kind: TokenKind,
    digest: TokenDigest,
    plan: Option<PlanTier>,
    limit: Option<(u32, u32)>,
}

impl Key {
    fn of(token: &PresentedToken, needs: &Requirements) -> Self {
        Self {
            kind: token.kind,
            digest: token.digest,
            plan: needs.plan,
            limit: needs.rate_limit.map(|p| (p.limit, p.window_secs)),
        }
    }
}

type Reply = oneshot::Sender<Result<CredentialCheck, RepoError>>;

/// The requests of one credential waiting for the next statement. The entry exists exactly while
/// a driver task runs for the key.
struct Queue {
    token: PresentedToken,
    needs: Requirements,
    waiting: VecDeque<Reply>,
}

struct Shared<B> {
    verifier: B,
    max_batch: usize,
    queues: Mutex<HashMap<Key, Queue>>,
}

impl<B> Shared<B> {
    fn queues(&self) -> MutexGuard<'_, HashMap<Key, Queue>> {
        // The map is consistent after any panic (every change is a single call), so a poisoned
        // lock is still usable.
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Coalesces concurrent checks of the same credential (see the module documentation).
pub struct Coalescer<B> {
    shared: Arc<Shared<B>>,
}

impl<B> Clone for Coalescer<B> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<B> std::fmt::Debug for Coalescer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coalescer")
            .field("max_batch", &self.shared.max_batch)
            .field("credentials_in_flight", &self.shared.queues().len())
            .finish()
    }
}

impl<B: BatchVerify> Coalescer<B> {
    /// Batches of at most [`DEFAULT_MAX_BATCH`] requests.
    pub fn new(verifier: B) -> Self {
        Self::with_max_batch(verifier, DEFAULT_MAX_BATCH)
    }

    /// Batches of at most `max_batch` (at least 1) requests.
    pub fn with_max_batch(verifier: B, max_batch: usize) -> Self {
        Self { shared: Arc::new(Shared { verifier, max_batch: max_batch.max(1), queues: Mutex::new(HashMap::new()) }) }
    }

    /// The verdict on one request: sent at once when no check of this credential is in flight,
    /// else with the requests that arrived during that check, in the next statement.
    ///
    /// # Errors
    /// Infrastructure failures of the statement that carried the request.
    pub async fn verify(&self, token: &PresentedToken, needs: &Requirements) -> Result<CredentialCheck, RepoError> {
        let key = Key::of(token, needs);
        let (reply, verdict) = oneshot::channel();
        let start_driver = match self.shared.queues().entry(key) {
            Entry::Occupied(mut queue) => {
                queue.get_mut().waiting.push_back(reply);
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(Queue { token: *token, needs: *needs, waiting: VecDeque::from([reply]) });
                true
            }
        };
        if start_driver {
            // A task of its own, so that a request whose client goes away (its future dropped)
            // never strands the requests queued behind it.
            tokio::spawn(drive(self.shared.clone(), key));
        }
        verdict.await.unwrap_or_else(|_| Err(RepoError::new(anyhow::anyhow!("the credential check was abandoned"))))
    }
}

/// Removes the key's queue if its driver ends abnormally (panic, runtime shutdown), so later
/// requests start a new driver and the queued ones get an error instead of waiting forever.
struct Abandon<'a, B> {
    shared: &'a Shared<B>,
    key: Key,
    armed: bool,
}

impl<B> Drop for Abandon<'_, B> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.queues().remove(&self.key);
        }
    }
}

/// Runs statements for `key` until its queue is empty, then removes the queue (under the lock,
/// so a request arriving later starts a new driver).
async fn drive<B: BatchVerify>(shared: Arc<Shared<B>>, key: Key) {
    let mut abandon = Abandon { shared: &shared, key, armed: true };
    loop {
        let (token, needs, batch) = {
            let mut queues = shared.queues();
            let Some(queue) = queues.get_mut(&key) else {
                abandon.armed = false;
                return;
            };
            // Requests whose caller went away are not sent (and not counted).
            queue.waiting.retain(|reply| !reply.is_closed());
            if queue.waiting.is_empty() {
                queues.remove(&key);
                abandon.armed = false;
                return;
            }
            let n = queue.waiting.len().min(shared.max_batch);
            (queue.token, queue.needs, queue.waiting.drain(..n).collect::<Vec<_>>())
        };
        let count = u32::try_from(batch.len()).unwrap_or(u32::MAX);
        match shared.verifier.verify_batch(&token, &needs, count).await {
            Ok(checks) if checks.len() == batch.len() => {
                for (reply, check) in batch.into_iter().zip(checks) {
                    let _ = reply.send(Ok(check));
                }
            }
            Ok(checks) => {
                let message = format!("{} verdicts for a batch of {} requests", checks.len(), batch.len());
                for reply in batch {
                    let _ = reply.send(Err(RepoError::new(anyhow::anyhow!("{message}"))));
                }
            }
            Err(e) => {
                let message = format!("{:#}", e.0);
                let mut first = Some(e);
                for reply in batch {
                    let e = first.take().unwrap_or_else(|| RepoError::new(anyhow::anyhow!("{message}")));
                    let _ = reply.send(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use domain::auth::{CredentialOwner, Identity};
    use domain::rate_limit::{RateLimitPolicy, RateLimitStatus};
    use domain::workspace::WorkspaceId;
    use tokio::sync::Notify;

    use super::*;

    /// A limiter in memory: `remaining` admissions left; records every batch size; each call
    /// waits for a permit on `gate` when one is set, so tests decide when a statement "returns".
    struct Fake {
        remaining: AtomicU32,
        batches: Mutex<Vec<u32>>,
        gate: Option<Arc<Notify>>,
        revoked: std::sync::atomic::AtomicBool,
        fail: std::sync::atomic::AtomicBool,
    }

    impl Fake {
        fn new(remaining: u32, gated: bool) -> Self {
            Self {
                remaining: AtomicU32::new(remaining),
                batches: Mutex::new(Vec::new()),
                gate: gated.then(|| Arc::new(Notify::new())),
                revoked: false.into(),
                fail: false.into(),
            }
        }

        fn batches(&self) -> Vec<u32> {
            self.batches.lock().unwrap_or_else(PoisonError::into_inner).clone()
        }
    }

    fn identity() -> Identity {
        Identity {
            workspace_id: WorkspaceId(1),
            plan: PlanTier::Advanced,
            owner: CredentialOwner::ApiKey { key_id: 7 },
        }
    }

    fn status(remaining: u32, retry: Option<u32>) -> RateLimitStatus {
        RateLimitStatus {
            policy: RateLimitPolicy::per_hour(1000),
            remaining,
            reset_after_secs: 3601,
            retry_after_secs: retry,
            now_epoch: 1,
        }
    }

    #[async_trait]
    impl BatchVerify for Arc<Fake> {
        async fn verify_batch(
            &self,
            _token: &PresentedToken,
            _needs: &Requirements,
            count: u32,
        ) -> Result<Vec<CredentialCheck>, RepoError> {
            // Like the statement's snapshot: what was committed when it started.
            let (revoked, fail) = (self.revoked.load(Ordering::SeqCst), self.fail.load(Ordering::SeqCst));
            if let Some(gate) = &self.gate {
                gate.notified().await;
            }
            self.batches.lock().unwrap_or_else(PoisonError::into_inner).push(count);
            if fail {
                return Err(RepoError::new(anyhow::anyhow!("database down")));
            }
            if revoked {
                return Ok(vec![CredentialCheck::Revoked; count as usize]);
            }
            let left = self.remaining.load(Ordering::SeqCst);
            let admitted = count.min(left);
            self.remaining.store(left - admitted, Ordering::SeqCst);
            let after = left - admitted;
            Ok((0..count)
                .map(|i| {
                    if i < admitted {
                        CredentialCheck::Admitted {
                            identity: identity(),
                            rate: Some(status(after + (admitted - 1 - i), None)),
                        }
                    } else {
                        CredentialCheck::Limited { identity: identity(), rate: status(0, Some(60)) }
                    }
                })
                .collect())
        }
    }

    fn token(byte: u8) -> PresentedToken {
        PresentedToken { kind: TokenKind::ApiKey, digest: TokenDigest([byte; 32]) }
    }

    fn needs() -> Requirements {
        Requirements { plan: Some(PlanTier::Advanced), rate_limit: Some(RateLimitPolicy::per_hour(1000)) }
    }

    /// Lets spawned tasks run until they block (a few turns of the scheduler, no sleeping).
    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    fn remaining(check: &CredentialCheck) -> Option<u32> {
        match check {
            CredentialCheck::Admitted { rate, .. } => rate.map(|r| r.remaining),
            _ => None,
        }
    }

    type Pending = tokio::task::JoinHandle<Result<CredentialCheck, RepoError>>;

    fn spawn_check(c: &Coalescer<Arc<Fake>>, t: PresentedToken) -> Pending {
        let c = c.clone();
        tokio::spawn(async move { c.verify(&t, &needs()).await })
    }

    async fn verdicts(pending: Vec<Pending>) -> Vec<CredentialCheck> {
        let mut out = Vec::new();
        for p in pending {
            out.push(p.await.expect("task").expect("verdict"));
        }
        out
    }

    #[tokio::test]
    async fn a_lone_request_is_sent_at_once() {
        let fake = Arc::new(Fake::new(10, false));
        let c = Coalescer::new(fake.clone());
        let check = c.verify(&token(1), &needs()).await.expect("verdict");
        assert_eq!(remaining(&check), Some(9));
        let check = c.verify(&token(1), &needs()).await.expect("verdict");
        assert_eq!(remaining(&check), Some(8));
        assert_eq!(fake.batches(), vec![1, 1]);
        assert!(c.shared.queues().is_empty(), "no queue is left behind");
    }

    #[tokio::test]
    async fn requests_arriving_during_a_check_share_the_next_statement_in_arrival_order() {
        let fake = Arc::new(Fake::new(1000, true));
        let gate = fake.gate.clone().expect("gated");
        let c = Coalescer::new(fake.clone());
        let first = spawn_check(&c, token(1));
        settle().await; // the first statement is in flight
        let mut rest = Vec::new();
        for _ in 0..5 {
            rest.push(spawn_check(&c, token(1)));
            settle().await; // arrival order is spawn order
        }
        gate.notify_one();
        assert_eq!(remaining(&first.await.expect("task").expect("verdict")), Some(999));
        settle().await;
        gate.notify_one();
        let got: Vec<_> = verdicts(rest).await.iter().map(remaining).collect();
        assert_eq!(got, [998, 997, 996, 995, 994].map(Some), "remaining counts down within the batch");
        assert_eq!(fake.batches(), vec![1, 5]);
        settle().await;
        assert!(c.shared.queues().is_empty());
    }

    #[tokio::test]
    async fn the_limit_admits_the_earliest_and_refuses_the_rest() {
        let fake = Arc::new(Fake::new(3, true));
        let gate = fake.gate.clone().expect("gated");
        let c = Coalescer::new(fake.clone());
        let first = spawn_check(&c, token(1));
        settle().await;
        let mut rest = Vec::new();
        for _ in 0..4 {
            rest.push(spawn_check(&c, token(1)));
            settle().await;
        }
        gate.notify_one();
        assert_eq!(remaining(&first.await.expect("task").expect("verdict")), Some(2));
        settle().await;
        gate.notify_one();
        let got = verdicts(rest).await;
        assert_eq!(remaining(&got[0]), Some(1));
        assert_eq!(remaining(&got[1]), Some(0));
        for refused in &got[2..] {
            assert!(
                matches!(refused, CredentialCheck::Limited { rate, .. } if rate.retry_after_secs == Some(60)),
                "{refused:?}"
            );
        }
        assert_eq!(fake.batches(), vec![1, 4]);
    }

    #[tokio::test]
    async fn batches_are_bounded_and_other_credentials_are_not_held_up() {
        let fake = Arc::new(Fake::new(1000, true));
        let gate = fake.gate.clone().expect("gated");
        let c = Coalescer::with_max_batch(fake.clone(), 3);
        let first = spawn_check(&c, token(1));
        settle().await;
        let rest: Vec<_> = (0..7).map(|_| spawn_check(&c, token(1))).collect();
        let other = spawn_check(&c, token(2)); // its own driver, in flight at the same time
        settle().await;
        for _ in 0..5 {
            gate.notify_one();
            settle().await;
        }
        first.await.expect("task").expect("verdict");
        other.await.expect("task").expect("verdict");
        assert_eq!(verdicts(rest).await.len(), 7);
        let mut sizes = fake.batches();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![1, 1, 1, 3, 3], "1 + 3 + 3 + 1 for the first key, 1 for the other");
        assert_eq!(fake.remaining.load(Ordering::SeqCst), 1000 - 9);
    }

    #[tokio::test]
    async fn a_revocation_before_arrival_is_seen_even_while_an_older_check_is_in_flight() {
        let fake = Arc::new(Fake::new(1000, true));
        let gate = fake.gate.clone().expect("gated");
        let c = Coalescer::new(fake.clone());
        let before = spawn_check(&c, token(1));
        settle().await; // in flight, will answer "admitted" (its statement started before)
        fake.revoked.store(true, Ordering::SeqCst); // "committed" now
        let after = spawn_check(&c, token(1));
        settle().await;
        gate.notify_one();
        settle().await;
        gate.notify_one();
        // The statement that started before the revocation admits; the request that arrived
        // after it waited for a statement of its own and is refused.
        assert_eq!(remaining(&before.await.expect("task").expect("verdict")), Some(999));
        assert_eq!(after.await.expect("task").expect("verdict"), CredentialCheck::Revoked);
        assert_eq!(fake.batches(), vec![1, 1]);
    }

    #[tokio::test]
    async fn callers_that_went_away_are_not_sent_and_errors_reach_everyone() {
        let fake = Arc::new(Fake::new(1000, true));
        fake.fail.store(true, Ordering::SeqCst);
        let gate = fake.gate.clone().expect("gated");
        let c = Coalescer::new(fake.clone());
        let first = spawn_check(&c, token(1));
        settle().await;
        let gone = spawn_check(&c, token(1));
        let kept: Vec<_> = (0..2).map(|_| spawn_check(&c, token(1))).collect();
        settle().await;
        gone.abort();
        settle().await;
        gate.notify_one();
        assert!(first.await.expect("task").is_err());
        settle().await;
        gate.notify_one();
        for k in kept {
            let e = k.await.expect("task").expect_err("database down");
            assert!(format!("{e:#}").contains("database down"), "{e:#}");
        }
        assert_eq!(fake.batches(), vec![1, 2], "the aborted request was not sent");
        settle().await;
        assert!(c.shared.queues().is_empty());
    }

    struct Panics;

    #[async_trait]
    impl BatchVerify for Panics {
        async fn verify_batch(
            &self,
            _token: &PresentedToken,
            _needs: &Requirements,
            _count: u32,
        ) -> Result<Vec<CredentialCheck>, RepoError> {
            panic!("bug in the statement");
        }
    }

    #[tokio::test]
    async fn a_driver_that_dies_does_not_strand_the_credential() {
        let c = Coalescer::new(Panics);
        assert!(c.verify(&token(1), &needs()).await.is_err());
        assert!(c.shared.queues().is_empty());
        assert!(c.verify(&token(1), &needs()).await.is_err(), "a new driver is started");
    }
}
