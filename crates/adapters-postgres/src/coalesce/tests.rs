//! Unit tests of the coalescer.

use std::sync::atomic::{AtomicU32, Ordering};

use domain::access::{Actor, Caller, Surface};
use domain::auth::{CredentialCheck, PresentedToken, Requirements, TokenDigest, TokenKind};
use domain::rate_limit::{RateLimitPolicy, RateLimitStatus};
use domain::workspace::PlanTier;
use domain::workspace::WorkspaceId;
use tokio::sync::Notify;

use super::*;

/// A bound no test reaches, except the one about the bound.
const LONG: Duration = Duration::from_secs(3600);

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

fn caller() -> Caller {
    Caller {
        workspace_id: WorkspaceId(1),
        plan: PlanTier::Advanced,
        actor: Actor::ApiKey { key_id: 7, scopes: domain::access::ScopeSet::full() },
        surface: Surface::RestApi,
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
impl Batch for Arc<Fake> {
    type Key = (PresentedToken, Requirements);
    type Output = CredentialCheck;

    async fn run(&self, _key: &Self::Key, count: usize) -> Result<Vec<CredentialCheck>, RepoError> {
        let count = u32::try_from(count).expect("small batch");
        // Like the statement's snapshot: what was committed when it started.
        let (revoked, fail) = (self.revoked.load(Ordering::SeqCst), self.fail.load(Ordering::SeqCst));
        if let Some(gate) = &self.gate {
            gate.notified().await;
        }
        self.batches.lock().unwrap_or_else(PoisonError::into_inner).push(count);
        if fail {
            return Err(RepoError::unavailable("database down"));
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
                    CredentialCheck::Admitted { caller: caller(), rate: Some(status(after + (admitted - 1 - i), None)) }
                } else {
                    CredentialCheck::Limited { caller: caller(), rate: status(0, Some(60)) }
                }
            })
            .collect())
    }
}

fn token(byte: u8) -> PresentedToken {
    PresentedToken { kind: TokenKind::ApiKey, digest: TokenDigest([byte; 32]) }
}

fn needs() -> Requirements {
    Requirements {
        surface: Surface::RestApi,
        plan: Some(PlanTier::Advanced),
        rate_limit: Some(RateLimitPolicy::per_hour(1000)),
        client: None,
    }
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
    tokio::spawn(async move { c.call((t, needs())).await })
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
    let c = Coalescer::new(fake.clone(), LONG);
    let check = c.call((token(1), needs())).await.expect("verdict");
    assert_eq!(remaining(&check), Some(9));
    let check = c.call((token(1), needs())).await.expect("verdict");
    assert_eq!(remaining(&check), Some(8));
    assert_eq!(fake.batches(), vec![1, 1]);
    assert!(c.shared.queues().is_empty(), "no queue is left behind");
}

#[tokio::test]
async fn requests_arriving_during_a_check_share_the_next_statement_in_arrival_order() {
    let fake = Arc::new(Fake::new(1000, true));
    let gate = fake.gate.clone().expect("gated");
    let c = Coalescer::new(fake.clone(), LONG);
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
    let c = Coalescer::new(fake.clone(), LONG);
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
    let c = Coalescer::with_max_batch(fake.clone(), 3, LONG);
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
    let c = Coalescer::new(fake.clone(), LONG);
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
    let c = Coalescer::new(fake.clone(), LONG);
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
        assert!(e.is_unavailable(), "every request of the batch is told the database is out of reach");
    }
    assert_eq!(fake.batches(), vec![1, 2], "the aborted request was not sent");
    settle().await;
    assert!(c.shared.queues().is_empty());
}

#[tokio::test]
async fn a_statement_that_never_returns_is_given_up_within_the_bound_and_the_key_recovers() {
    let fake = Arc::new(Fake::new(1000, true)); // the gate is never opened for the first two
    let gate = fake.gate.clone().expect("gated");
    let c = Coalescer::new(fake.clone(), Duration::from_millis(100));
    let stuck = spawn_check(&c, token(1));
    settle().await;
    let queued = spawn_check(&c, token(1));
    let started = std::time::Instant::now();
    for p in [stuck, queued] {
        let e = p.await.expect("task").expect_err("no answer in time");
        assert!(e.is_unavailable(), "{e:#}");
    }
    assert!(started.elapsed() < Duration::from_secs(2), "answered within the bound");
    // The stuck statement was dropped at the bound; the next request gets a statement of its own.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let next = spawn_check(&c, token(1));
    settle().await;
    gate.notify_one();
    assert!(matches!(next.await.expect("task"), Ok(CredentialCheck::Admitted { .. })));
}

struct Panics;

#[async_trait]
impl Batch for Panics {
    type Key = u8;
    type Output = ();

    async fn run(&self, _key: &u8, _count: usize) -> Result<Vec<()>, RepoError> {
        panic!("bug in the statement");
    }
}

#[tokio::test]
async fn a_driver_that_dies_does_not_strand_the_credential() {
    let c = Coalescer::new(Panics, LONG);
    assert!(c.call(1).await.is_err());
    assert!(c.shared.queues().is_empty());
    assert!(c.call(1).await.is_err(), "a new driver is started");
}
