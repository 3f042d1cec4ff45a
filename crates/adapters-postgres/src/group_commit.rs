//! Group commit for writes: the writes that arrive while one transaction for their key is in
//! flight go together in the next one, and each caller is answered only after that transaction
//! has committed (or failed) — never earlier, never with another caller's result.
//!
//! It is [`crate::coalesce`]'s idea for requests that are not interchangeable: each carries its
//! own item and gets its own answer. A write that finds nothing in flight is sent at once (no
//! timer, no added latency without contention); under contention, N writes cost one transaction,
//! one commit (one WAL flush) and one execution of every statement-level trigger instead of N.
//!
//! Users: `POST /v1/messages` ([`crate::messages::PgMessageRepository`]), keyed by channel.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use domain::RepoError;
use tokio::sync::oneshot;

/// The most writes one transaction carries by default.
pub const DEFAULT_MAX_BATCH: usize = 128;

/// One transaction that makes several writes: the storage side of [`GroupCommit`].
#[async_trait]
pub trait Commit: Send + Sync + 'static {
    /// Writes with the same key may share a transaction.
    type Key: Clone + Eq + Hash + Send + Sync + 'static;
    /// One write.
    type Item: Send + 'static;
    /// One write's answer.
    type Output: Send + 'static;
    /// One write's failure.
    type Error: From<RepoError> + Send + 'static;

    /// Makes `items` (at least one), and returns exactly one result per item, in order. An `Ok`
    /// must be committed when this returns.
    async fn run(&self, key: &Self::Key, items: Vec<Self::Item>) -> Vec<Result<Self::Output, Self::Error>>;
}

type Reply<C> = oneshot::Sender<Result<<C as Commit>::Output, <C as Commit>::Error>>;
type Queues<C> = HashMap<<C as Commit>::Key, VecDeque<(<C as Commit>::Item, Reply<C>)>>;

struct Shared<C: Commit> {
    commit: C,
    max_batch: usize,
    /// An entry exists exactly while a driver task runs for the key.
    queues: Mutex<Queues<C>>,
}

impl<C: Commit> Shared<C> {
    fn queues(&self) -> MutexGuard<'_, Queues<C>> {
        // Every change to the map is a single call, so it is consistent after any panic.
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Groups concurrent writes with the same key into shared transactions (module documentation).
pub struct GroupCommit<C: Commit> {
    shared: Arc<Shared<C>>,
}

impl<C: Commit> Clone for GroupCommit<C> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<C: Commit> std::fmt::Debug for GroupCommit<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("max_batch", &self.shared.max_batch)
            .field("keys_in_flight", &self.shared.queues().len())
            .finish()
    }
}

impl<C: Commit> GroupCommit<C> {
    /// Transactions of at most [`DEFAULT_MAX_BATCH`] writes.
    pub fn new(commit: C) -> Self {
        Self::with_max_batch(commit, DEFAULT_MAX_BATCH)
    }

    /// Transactions of at most `max_batch` (at least 1) writes, one at a time per key.
    pub fn with_max_batch(commit: C, max_batch: usize) -> Self {
        Self { shared: Arc::new(Shared { commit, max_batch: max_batch.max(1), queues: Mutex::new(HashMap::new()) }) }
    }

    /// Makes one write: at once when no transaction for `key` is in flight, else with the writes
    /// that arrived during that transaction, in the next one.
    ///
    /// # Errors
    /// The write's own failure, or the failure of the transaction that carried it.
    pub async fn call(&self, key: C::Key, item: C::Item) -> Result<C::Output, C::Error> {
        let (reply, answer) = oneshot::channel();
        let start_driver = match self.shared.queues().entry(key.clone()) {
            Entry::Occupied(mut queue) => {
                queue.get_mut().push_back((item, reply));
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(VecDeque::from([(item, reply)]));
                true
            }
        };
        if start_driver {
            // A task of its own, so that a caller that goes away (its future dropped) never
            // strands the writes queued behind it, nor abandons a transaction half way.
            tokio::spawn(drive(self.shared.clone(), key));
        }
        answer.await.unwrap_or_else(|_| Err(RepoError::new(anyhow::anyhow!("the transaction was abandoned")).into()))
    }
}

/// Removes the key's queue if its driver ends abnormally (panic, runtime shutdown), so later
/// writes start a new driver and the queued ones get an error instead of waiting forever.
struct Abandon<'a, C: Commit> {
    shared: &'a Shared<C>,
    key: &'a C::Key,
    armed: bool,
}

impl<C: Commit> Drop for Abandon<'_, C> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.queues().remove(self.key);
        }
    }
}

/// Runs transactions for `key` until its queue is empty, then removes the queue (under the
/// lock, so a write arriving later starts a new driver).
async fn drive<C: Commit>(shared: Arc<Shared<C>>, key: C::Key) {
    let mut abandon = Abandon { shared: &shared, key: &key, armed: true };
    loop {
        let batch = {
            let mut queues = shared.queues();
            let Some(queue) = queues.get_mut(&key) else {
                abandon.armed = false;
                return;
            };
            // A write whose caller went away before its transaction started is not made.
            queue.retain(|(_, reply)| !reply.is_closed());
            if queue.is_empty() {
                queues.remove(&key);
                abandon.armed = false;
                return;
            }
            let n = queue.len().min(shared.max_batch);
            queue.drain(..n).collect::<Vec<_>>()
        };
        let (items, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
        let count = items.len();
        let mut results = shared.commit.run(&key, items).await.into_iter();
        for reply in replies {
            let result = results.next().unwrap_or_else(|| {
                Err(RepoError::new(anyhow::anyhow!("fewer answers than the {count} writes of a batch")).into())
            });
            let _ = reply.send(result);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::Notify;

    use super::*;

    /// Records each transaction's items; each waits on `gate` so tests decide when it commits.
    struct Fake {
        batches: Mutex<Vec<Vec<u32>>>,
        gate: Arc<Notify>,
        running: AtomicUsize,
    }

    #[async_trait]
    impl Commit for Arc<Fake> {
        type Key = u8;
        type Item = u32;
        type Output = u32;
        type Error = RepoError;

        async fn run(&self, _key: &u8, items: Vec<u32>) -> Vec<Result<u32, RepoError>> {
            assert_eq!(self.running.fetch_add(1, Ordering::SeqCst), 0, "one transaction at a time per key");
            self.gate.notified().await;
            self.batches.lock().unwrap_or_else(PoisonError::into_inner).push(items.clone());
            self.running.fetch_sub(1, Ordering::SeqCst);
            items
                .into_iter()
                .map(|i| if i == 13 { Err(RepoError::new(anyhow::anyhow!("unlucky"))) } else { Ok(i * 10) })
                .collect()
        }
    }

    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn writes_arriving_during_a_transaction_share_the_next_and_get_their_own_answers() {
        let fake = Arc::new(Fake { batches: Mutex::new(Vec::new()), gate: Arc::new(Notify::new()), running: 0.into() });
        let gc = GroupCommit::new(fake.clone());
        let call = |i: u32| {
            let gc = gc.clone();
            tokio::spawn(async move { gc.call(1, i).await })
        };
        let first = call(1);
        settle().await;
        let rest: Vec<_> = [2, 13, 4].into_iter().map(call).collect();
        settle().await;
        // Nothing is answered before its transaction commits.
        assert!(!first.is_finished() && rest.iter().all(|r| !r.is_finished()));
        fake.gate.notify_one();
        assert_eq!(first.await.expect("task").expect("ok"), 10);
        settle().await;
        assert!(rest.iter().all(|r| !r.is_finished()), "the second batch has not committed yet");
        fake.gate.notify_one();
        let answers: Vec<_> =
            futures_util::future::join_all(rest).await.into_iter().map(|r| r.expect("task")).collect();
        assert_eq!(answers[0].as_ref().ok(), Some(&20));
        assert!(answers[1].is_err(), "a failed write fails alone");
        assert_eq!(answers[2].as_ref().ok(), Some(&40));
        assert_eq!(*fake.batches.lock().expect("lock"), vec![vec![1], vec![2, 13, 4]]);
    }

    #[tokio::test]
    async fn a_lone_write_is_sent_at_once_and_a_later_one_starts_afresh() {
        let fake = Arc::new(Fake { batches: Mutex::new(Vec::new()), gate: Arc::new(Notify::new()), running: 0.into() });
        let gc = GroupCommit::new(fake.clone());
        for i in [5, 6] {
            let pending = {
                let gc = gc.clone();
                tokio::spawn(async move { gc.call(1, i).await })
            };
            settle().await;
            fake.gate.notify_one();
            assert_eq!(pending.await.expect("task").expect("ok"), i * 10);
        }
        assert_eq!(*fake.batches.lock().expect("lock"), vec![vec![5], vec![6]]);
    }
}
