//! The one loop behind the timers that poll PostgreSQL every second (the lifecycle's snoozes and
//! queues, the SLA breach timer): a pass, then a pause; a pass that cannot reach the database
//! doubles the pause up to 10 s, and the first good pass goes back to the normal pace.

use std::future::Future;
use std::time::Duration;

use domain::RepoError;
use tokio::task::JoinHandle;

/// The longest pause after failed passes.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Spawns the loop: `pass` every `every` (after a first pause), `done` told of each good pass's
/// outcome; `what` names the timer in the warning logged when a pass fails. Abort the handle to
/// stop it.
pub fn spawn<T, F, Fut, D>(every: Duration, what: &'static str, mut pass: F, done: D) -> JoinHandle<()>
where
    T: Send,
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, RepoError>> + Send,
    D: Fn(T) + Send + 'static,
{
    tokio::spawn(async move {
        let mut wait = every;
        loop {
            tokio::time::sleep(wait).await;
            match pass().await {
                Ok(outcome) => {
                    wait = every;
                    done(outcome);
                }
                Err(e) => {
                    tracing::warn!(
                        error = format!("{:#}", e.0),
                        timer = what,
                        "a timer pass cannot reach the database"
                    );
                    wait = (wait * 2).min(MAX_BACKOFF);
                }
            }
        }
    })
}
