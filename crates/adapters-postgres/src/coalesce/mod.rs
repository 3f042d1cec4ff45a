//! Group commit for statements: concurrent requests that ask the database the same thing share one
//! statement instead of each making its own round trip (and, for credential checks, instead of
//! queueing one by one on the credential's rate-limit row lock).
//!
//! While a statement for a key is in flight, later requests with the same key wait in a queue.
//! When the statement returns, the queued requests — up to a bound — go together in ONE statement
//! that answers all of them; the answers are handed out in arrival order. A request that finds
//! nothing in flight is sent at once (no timer, no added latency when there is no contention).
//!
//! Users: the credential check of `/v1` ([`crate::credentials::PgCredentialStore`]: one
//! `wms_authenticate` verifies the credential and asks the limiter to admit the whole batch) and
//! the channel listing ([`crate::channels::PgChannelRepository`], what integrators poll for the
//! state of their connections: one query, its page handed to every identical request) and the read
//! of one channel (every `POST /v1/messages` reads its channel first).
//!
//! Freshness: a request is only ever put in a batch that is taken from the queue *after* the
//! request joined it, so the batch's statement starts — and takes its snapshot — after the
//! request arrived. Whatever was committed before a request arrived (a revocation, a plan change, a
//! new channel) is therefore always seen by that request; nothing is reused from a statement that
//! started earlier (`docs/rate-limit.md`, "Coalescing").
//!
//! Bounded waits: a request waits for its answer at most the coalescer's `wait`
//! (`database.acquire_timeout_ms`), and a statement that has not returned within it is given up:
//! its requests are answered "database unavailable" and the next batch is sent. Without the bound
//! one statement stuck on the database (no connection to be had, or a connection that stopped
//! answering) held its key's place for as long as it lasted, and every later request for that
//! credential queued behind it, however long, even once the database was back.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use domain::RepoError;
use tokio::sync::oneshot;

/// The most requests one statement carries by default.
pub const DEFAULT_MAX_BATCH: usize = 256;

/// One statement that answers several interchangeable requests: the storage side of the
/// coalescer.
#[async_trait]
pub trait Batch: Send + Sync + 'static {
    /// What makes requests interchangeable, and everything the statement needs.
    type Key: Clone + Eq + Hash + Send + Sync + 'static;
    /// One request's answer.
    type Output: Send + 'static;

    /// Answers `count` (≥ 1) requests for `key` in one round trip, and returns exactly `count`
    /// answers in the requests' order.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn run(&self, key: &Self::Key, count: usize) -> Result<Vec<Self::Output>, RepoError>;
}

type Reply<T> = oneshot::Sender<Result<T, RepoError>>;

/// The requests waiting for the next statement, per key.
type Queues<B> = HashMap<<B as Batch>::Key, VecDeque<Reply<<B as Batch>::Output>>>;

struct Shared<B: Batch> {
    batch: B,
    max_batch: usize,
    /// The longest a request waits for its answer, and a statement for its result.
    wait: Duration,
    /// An entry exists exactly while a driver task runs for the key.
    queues: Mutex<Queues<B>>,
}

impl<B: Batch> Shared<B> {
    fn queues(&self) -> MutexGuard<'_, Queues<B>> {
        // The map is consistent after any panic (every change is a single call), so a poisoned
        // lock is still usable.
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Coalesces concurrent requests with the same key (see the module documentation).
pub struct Coalescer<B: Batch> {
    shared: Arc<Shared<B>>,
}

impl<B: Batch> Clone for Coalescer<B> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<B: Batch> std::fmt::Debug for Coalescer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coalescer")
            .field("max_batch", &self.shared.max_batch)
            .field("keys_in_flight", &self.shared.queues().len())
            .finish()
    }
}

impl<B: Batch> Coalescer<B> {
    /// Batches of at most [`DEFAULT_MAX_BATCH`] requests; no request waits longer than `wait`.
    pub fn new(batch: B, wait: Duration) -> Self {
        Self::with_max_batch(batch, DEFAULT_MAX_BATCH, wait)
    }

    /// Batches of at most `max_batch` (at least 1) requests. One statement at a time per key:
    /// allowing a second one in flight was measured to lose throughput (smaller batches, more
    /// statements; `docs/rate-limit.md`, "Coalescing").
    pub fn with_max_batch(batch: B, max_batch: usize, wait: Duration) -> Self {
        Self {
            shared: Arc::new(Shared { batch, max_batch: max_batch.max(1), wait, queues: Mutex::new(HashMap::new()) }),
        }
    }

    /// The answer to one request: sent at once when no statement for `key` is in flight, else
    /// with the requests that arrived during that statement, in the next one.
    ///
    /// # Errors
    /// Infrastructure failures of the statement that carried the request; "database
    /// unavailable" when no answer came within the coalescer's `wait`.
    pub async fn call(&self, key: B::Key) -> Result<B::Output, RepoError> {
        let (reply, answer) = oneshot::channel();
        let start_driver = match self.shared.queues().entry(key.clone()) {
            Entry::Occupied(mut queue) => {
                queue.get_mut().push_back(reply);
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(VecDeque::from([reply]));
                true
            }
        };
        if start_driver {
            // A task of its own, so that a request whose client goes away (its future dropped)
            // never strands the requests queued behind it.
            tokio::spawn(drive(self.shared.clone(), key));
        }
        match tokio::time::timeout(self.shared.wait, answer).await {
            Ok(answer) => {
                answer.unwrap_or_else(|_| Err(RepoError::new(anyhow::anyhow!("the statement was abandoned"))))
            }
            // Dropping `answer` closes the reply: the driver no longer sends this request.
            Err(_) => Err(unanswered(self.shared.wait)),
        }
    }
}

fn unanswered(wait: Duration) -> RepoError {
    RepoError::unavailable(format!("no answer from the database within {} ms", wait.as_millis()))
}

/// Removes the key's queue if its driver ends abnormally (panic, runtime shutdown), so later
/// requests start a new driver and the queued ones get an error instead of waiting forever.
struct Abandon<'a, B: Batch> {
    shared: &'a Shared<B>,
    key: &'a B::Key,
    armed: bool,
}

impl<B: Batch> Drop for Abandon<'_, B> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.queues().remove(self.key);
        }
    }
}

/// Runs statements for `key` until its queue is empty, then removes the queue (under the lock,
/// so a request arriving later starts a new driver).
async fn drive<B: Batch>(shared: Arc<Shared<B>>, key: B::Key) {
    let mut abandon = Abandon { shared: &shared, key: &key, armed: true };
    loop {
        let batch = {
            let mut queues = shared.queues();
            let Some(queue) = queues.get_mut(&key) else {
                abandon.armed = false;
                return;
            };
            // Requests whose caller went away are not sent (and not counted).
            queue.retain(|reply| !reply.is_closed());
            if queue.is_empty() {
                queues.remove(&key);
                abandon.armed = false;
                return;
            }
            let n = queue.len().min(shared.max_batch);
            queue.drain(..n).collect::<Vec<_>>()
        };
        let ran = match tokio::time::timeout(shared.wait, shared.batch.run(&key, batch.len())).await {
            Ok(ran) => ran,
            Err(_) => Err(unanswered(shared.wait)),
        };
        match ran {
            Ok(answers) if answers.len() == batch.len() => {
                for (reply, answer) in batch.into_iter().zip(answers) {
                    let _ = reply.send(Ok(answer));
                }
            }
            Ok(answers) => {
                let message = format!("{} answers for a batch of {} requests", answers.len(), batch.len());
                for reply in batch {
                    let _ = reply.send(Err(RepoError::new(anyhow::anyhow!("{message}"))));
                }
            }
            Err(e) => {
                let message = format!("{:#}", e.0);
                // Every request of the batch learns the same kind of failure (a 503 for all when the
                // database is out of reach, not for the first one only).
                let unavailable = e.is_unavailable();
                let copy = || {
                    if unavailable {
                        RepoError::unavailable(message.clone())
                    } else {
                        RepoError::new(anyhow::anyhow!("{message}"))
                    }
                };
                let mut first = Some(e);
                for reply in batch {
                    let e = first.take().unwrap_or_else(copy);
                    let _ = reply.send(Err(e));
                }
            }
        }
    }
}

/// One read's result for each of the `count` requests of its batch.
pub fn shared_answer<T: Clone>(answer: T, count: usize) -> Vec<T> {
    std::iter::repeat_n(answer, count).collect()
}

#[cfg(test)]
mod tests;
