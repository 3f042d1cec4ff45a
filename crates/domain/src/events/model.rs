//! Positions in the feed, pages and replay windows.

use std::collections::BTreeMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use time::{Duration, OffsetDateTime};

use crate::audit::AuditEntry;
use crate::webhooks::controls::{EventScope, Routing};
use crate::webhooks::{DestinationId, DomainEvent, EventType};

/// Where an event sits in the feed: its writing transaction, then its id.
///
/// Ids are handed out before commit, so ordering by id alone would let a reader pass an event
/// whose transaction commits later. The store only shows events of transactions older than any
/// still running, ordered by (transaction, id), so nothing can appear behind a position once it
/// was handed out (`docs/webhooks.md`, "Events feed").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EventPosition {
    /// The writing transaction's id (64-bit, never wraps).
    pub txid: i64,
    /// The event's id.
    pub id: i64,
}

const CURSOR_PREFIX: &str = "e1.";

impl EventPosition {
    /// The opaque cursor of this position.
    pub fn cursor(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{}.{}", self.txid, self.id))
    }

    /// Reads a cursor made by [`EventPosition::cursor`]; `None` for anything else.
    pub fn from_cursor(c: &str) -> Option<Self> {
        let raw = URL_SAFE_NO_PAD.decode(c).ok()?;
        let s = std::str::from_utf8(&raw).ok()?.strip_prefix(CURSOR_PREFIX)?;
        let (txid, id) = s.split_once('.')?;
        let (txid, id) = (txid.parse::<i64>().ok()?, id.parse::<i64>().ok()?);
        (txid >= 0 && id >= 0).then_some(Self { txid, id })
    }
}

/// A validated request for a page of the feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedQuery {
    /// Events strictly after this position (the start of the feed by default).
    pub after: EventPosition,
    /// Only this type.
    pub event_type: Option<EventType>,
    /// Only events that happened at or after this time.
    pub since: Option<OffsetDateTime>,
    /// At most this many events.
    pub limit: u16,
}

/// One event of the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// `msg_…`: the `webhook-id` of its deliveries.
    pub message_id: String,
    /// Its place in the feed.
    pub position: EventPosition,
    /// The exact body its deliveries sign and send: `{"type","timestamp","workspace_id","data"}`.
    pub payload: String,
}

impl StoredEvent {
    /// The feed record `{"id","type","timestamp","workspace_id","data"}`: the delivered body with
    /// the id in front, byte for byte what the destinations received after it.
    pub fn record_json(&self) -> String {
        let rest = self.payload.strip_prefix('{').unwrap_or(&self.payload);
        let sep = if rest.trim_start().starts_with('}') { "" } else { "," };
        format!("{{\"id\":{}{sep}{rest}", serde_json::Value::from(self.message_id.as_str()))
    }
}

/// A page of the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedPage {
    /// The events, oldest first.
    pub events: Vec<StoredEvent>,
    /// Where to resume: after the last event, or, at the end of the feed, a position every
    /// later event will follow. Never absent: a client polls with it.
    pub next: EventPosition,
}

/// The events a replay sends again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayWindow {
    /// Events that happened at or after this time…
    pub since: OffsetDateTime,
    /// …and before this one.
    pub until: OffsetDateTime,
    /// Only these types (further limited to what the destination subscribes to); all when empty.
    pub event_types: Vec<EventType>,
    /// When the replayed deliveries become due.
    pub now: OffsetDateTime,
}

/// An event of a replay's window that its destination has neither received nor has on its way,
/// with where it happened and the destination it is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayCandidate {
    /// The event's id.
    pub event_id: i64,
    /// Its channel and thread ([`EventScope::of`]).
    pub scope: EventScope,
    /// The destination that never receives it ([`DomainEvent::excluded_destination_of`]).
    pub about: Option<DestinationId>,
}

impl ReplayCandidate {
    /// The stored event `event_id`, read back from its type as stored and its delivered body
    /// (`{"type","timestamp","workspace_id","data"}`). An unknown type or an unreadable body has
    /// no scope (which a filter never matches) and is about no destination.
    pub fn of_stored(event_id: i64, event_type: &str, payload: &str) -> Self {
        let none = Self { event_id, scope: EventScope::default(), about: None };
        let Ok(event) = event_type.parse::<EventType>() else { return none };
        let Ok(body) = serde_json::from_str::<serde_json::Value>(payload) else { return none };
        let data = &body["data"];
        Self { event_id, scope: EventScope::of(event, data), about: DomainEvent::excluded_destination_of(event, data) }
    }
}

/// A delivery a replay queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayedDelivery {
    /// The event sent again.
    pub event_id: i64,
    /// When it becomes due.
    pub due: OffsetDateTime,
    /// The turn it waits for: its thread's at a destination ordered per thread, else
    /// [`REPLAY_ORDERING_KEY`], the replay's own.
    pub ordering_key: Option<i64>,
}

/// The ordering key of every replayed delivery ([`ReplayWindow::deliveries`]): a key of their
/// own (thread ids, the per-thread keys, are positive), so a replay reaches its destination in
/// feed order without holding back new events.
pub const REPLAY_ORDERING_KEY: i64 = -1;

impl ReplayWindow {
    /// The deliveries a replay queues for `candidates` (in feed order) at `destination`, which
    /// routes events by `routing` as the outbox routes new events: never an event about itself
    /// (its own `webhook.failing` / `webhook.recovered`), and by the filter and the per-thread
    /// turn ([`Routing::route`]); a labels filter looks at `labels`, each thread's labels now.
    /// The deliveries are due a microsecond apart in feed order, the last at
    /// [`ReplayWindow::now`], and take turns: a destination ordered per thread gets each thread's
    /// in its thread's turn, as new events; every other one under [`REPLAY_ORDERING_KEY`], so
    /// the destination gets them one after another, oldest first (each once the one before
    /// succeeded or was given up), whatever the pace would let run at once.
    pub fn deliveries(
        &self,
        destination: DestinationId,
        candidates: &[ReplayCandidate],
        routing: &Routing,
        labels: &BTreeMap<i64, Vec<String>>,
    ) -> Vec<ReplayedDelivery> {
        let kept: Vec<(i64, Option<i64>)> = candidates
            .iter()
            .filter(|c| c.about != Some(destination))
            .filter_map(|c| {
                let thread_labels = c.scope.thread_id.and_then(|t| labels.get(&t)).map_or(&[][..], Vec::as_slice);
                routing
                    .route(c.scope, thread_labels)
                    .map(|r| (c.event_id, Some(r.ordering_key.unwrap_or(REPLAY_ORDERING_KEY))))
            })
            .collect();
        let last = kept.len();
        kept.into_iter()
            .enumerate()
            .map(|(i, (event_id, ordering_key))| {
                let before = i64::try_from(last - 1 - i).unwrap_or(i64::MAX);
                ReplayedDelivery { event_id, due: self.now - Duration::microseconds(before), ordering_key }
            })
            .collect()
    }

    /// Of `candidates`, the events about `destination` itself (its own `webhook.failing` /
    /// `webhook.recovered`), which a replay never sends it, as the outbox never queued them.
    pub fn own_events(destination: DestinationId, candidates: &[ReplayCandidate]) -> Vec<i64> {
        candidates.iter().filter(|c| c.about == Some(destination)).map(|c| c.event_id).collect()
    }

    /// The audit record of a replay that queued `queued` deliveries, `audit` with their count: a
    /// replay that queues nothing changed nothing and is not recorded.
    pub fn record(audit: &AuditEntry, queued: u64) -> Option<AuditEntry> {
        (queued > 0).then(|| audit.with_detail("queued", queued))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{AuditAction, AuditContext, AuditTarget};
    use crate::workspace::WorkspaceId;

    #[test]
    fn a_replay_is_recorded_with_its_count_only_when_it_queued_something() {
        let target = AuditTarget { kind: "webhook", id: Some(4) };
        let audit =
            AuditContext::cli().entry(WorkspaceId(1), AuditAction::WebhookReplayed, target, serde_json::json!({}));
        assert_eq!(ReplayWindow::record(&audit, 0), None);
        let recorded = ReplayWindow::record(&audit, 3).expect("recorded");
        assert_eq!(recorded.details, serde_json::json!({ "queued": 3 }));
    }

    #[test]
    fn a_replay_routes_like_new_events_and_keeps_feed_order() {
        let now = time::macros::datetime!(2026-11-27 10:00:00 UTC);
        let window = ReplayWindow { since: now - Duration::hours(1), until: now, event_types: vec![], now };
        let at = |id, channel, thread| ReplayCandidate {
            event_id: id,
            scope: EventScope { channel_id: Some(channel), thread_id: thread },
            about: None,
        };
        let candidates = [at(1, 3, Some(10)), at(2, 4, Some(20)), at(3, 3, Some(30)), at(4, 3, None)];
        // No controls: everything, one after another in feed order, the last one due now.
        let all = window.deliveries(DestinationId(9), &candidates, &Routing::default(), &BTreeMap::new());
        let ids: Vec<i64> = all.iter().map(|d| d.event_id).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        assert!(all.iter().all(|d| d.ordering_key == Some(REPLAY_ORDERING_KEY)));
        assert_eq!(all[3].due, now);
        assert_eq!(all[0].due, now - Duration::microseconds(3));
        // Channel 3 and the vip label (labels as they are now), per thread.
        let routing = Routing::stored(Some(r#"{"channel_ids":[3],"labels":["vip"]}"#), "per_thread");
        let labels = BTreeMap::from([(10, vec!["vip".to_owned()]), (20, vec!["vip".to_owned()])]);
        let kept = window.deliveries(DestinationId(9), &candidates, &routing, &labels);
        assert_eq!(
            kept,
            [ReplayedDelivery { event_id: 1, due: now, ordering_key: Some(10) }],
            "the last one kept is due now"
        );
        // Per thread: each thread's turn, and the replay's own for an event of no thread.
        let ordered =
            window.deliveries(DestinationId(9), &candidates, &Routing::stored(None, "per_thread"), &BTreeMap::new());
        let keys: Vec<Option<i64>> = ordered.iter().map(|d| d.ordering_key).collect();
        assert_eq!(keys, [Some(10), Some(20), Some(30), Some(REPLAY_ORDERING_KEY)]);
        // Never its own health events; another destination's, yes.
        let own = ReplayCandidate { event_id: 5, scope: EventScope::default(), about: Some(DestinationId(9)) };
        let other = ReplayCandidate { about: Some(DestinationId(8)), event_id: 6, ..own };
        let sent = window.deliveries(DestinationId(9), &[own, other], &Routing::default(), &BTreeMap::new());
        assert_eq!(sent.iter().map(|d| d.event_id).collect::<Vec<_>>(), [6]);
        assert_eq!(ReplayWindow::own_events(DestinationId(9), &[own, other]), [5]);
    }

    #[test]
    fn a_stored_event_is_read_back_from_its_body() {
        let body = r#"{"type":"message.created","timestamp":"2026-11-26T10:00:00Z","workspace_id":1,
                       "data":{"id":5,"channel_id":3,"thread_id":9}}"#;
        let read = ReplayCandidate::of_stored(1, "message.created", body);
        assert_eq!((read.scope, read.about), (EventScope { channel_id: Some(3), thread_id: Some(9) }, None));
        let read = ReplayCandidate::of_stored(1, "channel.updated", body);
        assert_eq!(read.scope, EventScope { channel_id: Some(5), thread_id: None });
        assert_eq!(ReplayCandidate::of_stored(1, "webhook.failing", body).about, Some(DestinationId(5)));
        assert_eq!(ReplayCandidate::of_stored(1, "message.exploded", body).scope, EventScope::default());
        assert_eq!(ReplayCandidate::of_stored(1, "message.created", "{").scope, EventScope::default());
    }

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let p = EventPosition { txid: 9_000_000_123, id: 42 };
        assert_eq!(EventPosition::from_cursor(&p.cursor()), Some(p));
        for junk in ["", "x", "!!!", &URL_SAFE_NO_PAD.encode("e1.5"), &URL_SAFE_NO_PAD.encode("e1.-1.5")] {
            assert_eq!(EventPosition::from_cursor(junk), None, "{junk}");
        }
        // A list cursor of another endpoint is not a feed position.
        assert_eq!(EventPosition::from_cursor(&crate::common::page::encode_cursor(5)), None);
    }

    #[test]
    fn the_record_is_the_delivered_body_with_the_id_first() {
        let e = StoredEvent {
            message_id: "msg_1".into(),
            position: EventPosition::default(),
            payload: r#"{"type":"message.created","timestamp":"2026-11-24T00:00:00Z","workspace_id":1,"data":{}}"#
                .into(),
        };
        assert_eq!(
            e.record_json(),
            r#"{"id":"msg_1","type":"message.created","timestamp":"2026-11-24T00:00:00Z","workspace_id":1,"data":{}}"#
        );
    }
}
