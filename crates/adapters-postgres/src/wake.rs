//! In-process wake-ups of the background workers: a committed send or event wakes this
//! instance's webhook delivery loops and channel dispatchers at once instead of at their next
//! poll. The polls stay, slower, as the fallback for work committed by other instances (nothing
//! here crosses a process; `LISTEN/NOTIFY` would not work through a transaction-mode pooler).
//!
//! Each signal is a `tokio::sync::watch` channel used as a counter: a receiver remembers what it
//! has seen, so a wake-up that arrives while its worker is busy is not lost; several wake-ups
//! before the worker looks again are one.

use async_trait::async_trait;
use domain::webhooks::WorkSignal;
use tokio::sync::watch;

/// The signals of one instance, shared by every clone of its [`crate::Db`].
#[derive(Debug)]
pub struct Wake {
    events: watch::Sender<()>,
    outbound: watch::Sender<()>,
}

impl Default for Wake {
    fn default() -> Self {
        Self { events: watch::channel(()).0, outbound: watch::channel(()).0 }
    }
}

impl Wake {
    /// Webhook events were committed: deliveries may be due.
    pub fn events_committed(&self) {
        self.events.send_modify(|()| {});
    }

    /// Outbound messages were queued and committed (their `message.created` events too).
    pub fn outbound_committed(&self) {
        self.outbound.send_modify(|()| {});
        self.events_committed();
    }

    /// A signal for one delivery loop.
    pub fn events(&self) -> Signal {
        Signal(self.events.subscribe())
    }

    /// A signal for one channel dispatcher.
    pub fn outbound(&self) -> Signal {
        Signal(self.outbound.subscribe())
    }
}

/// One worker's view of a signal.
#[derive(Debug)]
pub struct Signal(watch::Receiver<()>);

#[async_trait]
impl WorkSignal for Signal {
    async fn changed(&mut self) {
        // The sender lives as long as the Db; if it is gone, there is nothing to wait for.
        if self.0.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_wake_up_while_busy_is_kept_and_several_are_one() {
        let wake = Wake::default();
        let mut s = wake.events();
        wake.events_committed();
        wake.outbound_committed();
        tokio::time::timeout(Duration::from_secs(1), s.changed()).await.expect("woken");
        assert!(tokio::time::timeout(Duration::from_millis(20), s.changed()).await.is_err(), "seen once");
        let mut o = wake.outbound();
        wake.events_committed();
        assert!(tokio::time::timeout(Duration::from_millis(20), o.changed()).await.is_err(), "events alone");
    }
}
