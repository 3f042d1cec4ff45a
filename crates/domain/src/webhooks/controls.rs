//! What an integrator controls on a destination: switching it on and off ([`decide_activation`]),
//! hard caps on its pace, static headers, a filter and per-thread ordering; and the rules that
//! apply them to an event (which destinations get it, in which thread's turn). docs/webhooks.md,
//! "Destination controls".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use super::{DeliveryStatus, EventType};
use crate::common::error::{FieldError, ValidationErrors};

/// The most static headers a destination may have.
pub const MAX_HEADERS: usize = 10;
/// The longest header value accepted.
pub const MAX_HEADER_VALUE: usize = 2048;
/// The most entries of each filter list.
const MAX_FILTER_ITEMS: usize = 100;

/// What switching a destination on or off changes besides the flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// The flag is not asked to change: nothing else changes.
    Unchanged,
    /// Inactive → active: a fresh start. The deactivation note and time and the failure clock are
    /// cleared, and the paused deliveries resume now.
    Reactivated,
    /// Active → inactive by a person: the deactivation time is stamped (no note: the note is
    /// wms's own reason), and the pending deliveries are paused.
    Deactivated,
}

/// What switching a destination on or off does to its unfinished deliveries: those in `from`
/// go to `to`, due at once when `due_now` (else they keep their time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryShift {
    /// The status moved out of.
    pub from: DeliveryStatus,
    /// The status moved into.
    pub to: DeliveryStatus,
    /// Whether the moved deliveries become due now.
    pub due_now: bool,
}

impl DeliveryShift {
    /// A destination switched off (by a person or by wms): its waiting deliveries are paused,
    /// keeping their times; one being sent finishes its attempt, and a failure is then recorded
    /// paused ([`DeliveryStatus::recorded_for`]).
    pub const PAUSE: Self = Self { from: DeliveryStatus::Pending, to: DeliveryStatus::Paused, due_now: false };
    /// A destination switched back on: its paused deliveries are due now.
    pub const RESUME: Self = Self { from: DeliveryStatus::Paused, to: DeliveryStatus::Pending, due_now: true };

    /// The new due time of the moved deliveries, applied at `now` (none: each keeps its own).
    pub fn due_at(self, now: OffsetDateTime) -> Option<OffsetDateTime> {
        self.due_now.then_some(now)
    }
}

impl Activation {
    /// What happens to the destination's deliveries.
    pub fn deliveries(self) -> Option<DeliveryShift> {
        match self {
            Activation::Unchanged => None,
            Activation::Reactivated => Some(DeliveryShift::RESUME),
            Activation::Deactivated => Some(DeliveryShift::PAUSE),
        }
    }
}

/// What a change asking for `wanted` (none: the flag is not part of the change) does to a
/// destination that `was_active`.
pub fn decide_activation(was_active: bool, wanted: Option<bool>) -> Activation {
    match (was_active, wanted) {
        (false, Some(true)) => Activation::Reactivated,
        (true, Some(false)) => Activation::Deactivated,
        _ => Activation::Unchanged,
    }
}

/// Whether a destination's events of one thread wait for each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryOrdering {
    /// Each event is sent as soon as the limits allow.
    #[default]
    None,
    /// An event of a thread is sent only after the thread's previous event to this destination
    /// succeeded or was given up; other threads are not held back.
    PerThread,
}

impl DeliveryOrdering {
    /// The wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryOrdering::None => "none",
            DeliveryOrdering::PerThread => "per_thread",
        }
    }

    /// Parses the `ordering` input or stored value.
    ///
    /// # Errors
    /// A [`FieldError`] on `ordering`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        match raw {
            "none" => Ok(DeliveryOrdering::None),
            "per_thread" => Ok(DeliveryOrdering::PerThread),
            other => Err(FieldError::new("ordering", format!("`{other}` is not `none` or `per_thread`"))),
        }
    }
}

/// Which events a destination receives beyond its event types: each non-empty list must match.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventFilter {
    /// The event's channel (a channel event's own id) is one of these.
    #[serde(default)]
    pub channel_ids: Vec<i64>,
    /// The event's thread has one of these labels (never matched by an event without a thread).
    #[serde(default)]
    pub labels: Vec<String>,
}

impl EventFilter {
    /// A filter with both lists empty matches everything, like none at all.
    pub fn is_empty(&self) -> bool {
        self.channel_ids.is_empty() && self.labels.is_empty()
    }
}

/// The controls of one destination as stored and answered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DestinationControls {
    /// Hard cap on deliveries per second (1..1000); `None`: the server's bound.
    pub rate_limit_per_second: Option<u32>,
    /// Hard cap on deliveries in flight at once (1..100); `None`: the server's bound.
    pub max_in_flight: Option<u32>,
    /// Static headers sent with each delivery (lowercase names).
    pub headers: BTreeMap<String, String>,
    /// `None`: every event of the subscribed types.
    pub filter: Option<EventFilter>,
    /// Per-thread ordering or none.
    pub ordering: DeliveryOrdering,
}

/// Validates `rate_limit_per_second`.
///
/// # Errors
/// A [`FieldError`] on `rate_limit_per_second` outside 1..1000.
pub fn rate_cap(raw: i64) -> Result<u32, FieldError> {
    u32::try_from(raw)
        .ok()
        .filter(|v| (1..=1000).contains(v))
        .ok_or_else(|| FieldError::new("rate_limit_per_second", "must be between 1 and 1000 (or null)"))
}

/// Validates `max_in_flight`.
///
/// # Errors
/// A [`FieldError`] on `max_in_flight` outside 1..100.
pub fn in_flight_cap(raw: i64) -> Result<u32, FieldError> {
    u32::try_from(raw)
        .ok()
        .filter(|v| (1..=100).contains(v))
        .ok_or_else(|| FieldError::new("max_in_flight", "must be between 1 and 100 (or null)"))
}

/// Validates the static `headers`: at most [`MAX_HEADERS`], valid HTTP token names (kept as
/// written: names are compared without regard to case, as HTTP does), visible-ASCII values, none
/// that wms sets itself or that would break the request.
///
/// # Errors
/// [`FieldError`]s on `headers`.
pub fn static_headers(raw: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, FieldError> {
    let err = |m: String| FieldError::new("headers", m);
    if raw.len() > MAX_HEADERS {
        return Err(err(format!("at most {MAX_HEADERS} headers")));
    }
    let mut out = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, value) in raw {
        let lower = name.to_ascii_lowercase();
        let token =
            !lower.is_empty() && lower.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(err(format!("`{name}` is not a valid header name")));
        }
        // wms signs and frames every delivery itself: a receiver must be able to trust these.
        if lower.starts_with("webhook-") || matches!(lower.as_str(), "content-type" | "content-length" | "host") {
            return Err(err(format!("`{name}` is set by wms and cannot be overridden")));
        }
        // Hop-by-hop framing of the connection itself: set, they would break the request.
        if matches!(lower.as_str(), "transfer-encoding" | "connection" | "te" | "upgrade") {
            return Err(err(format!("`{name}` cannot be set")));
        }
        if value.len() > MAX_HEADER_VALUE || !value.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b)) {
            return Err(err(format!(
                "the value of `{name}` must be visible ASCII of at most {MAX_HEADER_VALUE} bytes"
            )));
        }
        if !seen.insert(lower) {
            return Err(err(format!("`{name}` is given twice")));
        }
        out.insert(name.clone(), value.trim().to_owned());
    }
    Ok(out)
}

/// Validates the shape of a `filter` (whether its channels are the workspace's is the service's
/// check, with the repository). An empty filter is stored as none.
///
/// # Errors
/// [`ValidationErrors`] on `filter`.
pub fn event_filter(raw: EventFilter) -> Result<Option<EventFilter>, ValidationErrors> {
    if raw.channel_ids.len() > MAX_FILTER_ITEMS || raw.labels.len() > MAX_FILTER_ITEMS {
        return Err(ValidationErrors::one("filter", format!("at most {MAX_FILTER_ITEMS} channel ids and labels")));
    }
    if raw.channel_ids.iter().any(|id| *id <= 0) {
        return Err(ValidationErrors::one("filter", "channel ids are positive integers"));
    }
    let mut f = EventFilter {
        channel_ids: raw.channel_ids,
        labels: raw.labels.into_iter().map(|l| l.trim().to_owned()).collect(),
    };
    // A label's name (`labels::LabelName`): one that could never name a label would never match.
    let max = crate::threads::MAX_LABEL_NAME;
    if f.labels.iter().any(|l| crate::common::text::bounded("filter", l, 1, max).is_err()) {
        return Err(ValidationErrors::one(
            "filter",
            format!("labels are label names: 1 to {max} characters, no control characters"),
        ));
    }
    f.channel_ids.sort_unstable();
    f.channel_ids.dedup();
    f.labels.dedup();
    Ok((!f.is_empty()).then_some(f))
}

/// Where an event happened ([`super::DomainEvent::scope`]): what a destination's filter and
/// per-thread ordering look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventScope {
    /// Its channel (a channel event's own id).
    pub channel_id: Option<i64>,
    /// Its thread (a message's thread, a thread event's own id).
    pub thread_id: Option<i64>,
}

impl EventScope {
    /// The scope of an event of type `event` whose `data` is `data`, read back from storage (a
    /// replay): what [`super::DomainEvent::scope`] gave when it was recorded.
    pub fn of(event: EventType, data: &Value) -> Self {
        let id = |name: &str| data.get(name).and_then(Value::as_i64);
        match event {
            EventType::MessageCreated | EventType::MessageStatusUpdated => {
                Self { channel_id: id("channel_id"), thread_id: id("thread_id") }
            }
            EventType::ThreadCreated
            | EventType::ThreadStatusChanged
            | EventType::ThreadAssigned
            | EventType::ThreadLabelsChanged
            | EventType::SlaBreached => Self { channel_id: id("channel_id"), thread_id: id("id") },
            EventType::ChannelCreated | EventType::ChannelUpdated => Self { channel_id: id("id"), thread_id: None },
            EventType::TemplateStatusUpdated => Self { channel_id: id("channel_id"), thread_id: None },
            EventType::ContactCreated
            | EventType::ContactUpdated
            | EventType::ContactDeleted
            | EventType::WebhookDisabled
            | EventType::WebhookFailing
            | EventType::WebhookRecovered
            | EventType::WebhookTest => Self::default(),
        }
    }
}

impl EventFilter {
    /// Whether an event in `scope`, whose thread has `thread_labels`, passes. Label names compare
    /// ignoring case, as labels are named everywhere else (`vip` is the label `VIP`).
    pub fn matches(&self, scope: EventScope, thread_labels: &[String]) -> bool {
        let channel_ok = self.channel_ids.is_empty() || scope.channel_id.is_some_and(|c| self.channel_ids.contains(&c));
        let same = |a: &str, b: &str| a == b || a.to_lowercase() == b.to_lowercase();
        let labels_ok = self.labels.is_empty()
            || (scope.thread_id.is_some()
                && thread_labels.iter().any(|l| self.labels.iter().any(|wanted| same(wanted, l))));
        channel_ok && labels_ok
    }

    /// Whether deciding needs the labels of the event's thread.
    pub fn needs_labels(&self) -> bool {
        !self.labels.is_empty()
    }
}

/// The turn an event waits for at a destination with `ordering`: its thread, or none.
pub fn ordering_key(ordering: DeliveryOrdering, scope: EventScope) -> Option<i64> {
    match ordering {
        DeliveryOrdering::None => None,
        DeliveryOrdering::PerThread => scope.thread_id,
    }
}

/// What a subscribed destination does with each event of its types: its filter and ordering.
/// One rule for new events (the outbox) and replayed ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Routing {
    /// `None`: every event.
    pub filter: Option<EventFilter>,
    /// Per-thread turns or none.
    pub ordering: DeliveryOrdering,
}

/// An event a destination gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routed {
    /// The turn its delivery waits for ([`ordering_key`]).
    pub ordering_key: Option<i64>,
}

impl Routing {
    /// The routing of a destination as stored: its `filter` (JSON; the API validated it before
    /// it was stored, so one that no longer reads is no filter) and its `ordering`.
    pub fn stored(filter: Option<&str>, ordering: &str) -> Self {
        Self {
            filter: filter.and_then(|f| serde_json::from_str::<EventFilter>(f).ok()),
            ordering: DeliveryOrdering::parse(ordering).unwrap_or_default(),
        }
    }

    /// Whether every event goes to the destination at once, in no turn (no filter, no ordering):
    /// then there is nothing to decide per event.
    pub fn is_plain(&self) -> bool {
        self.filter.is_none() && self.ordering == DeliveryOrdering::None
    }

    /// Whether deciding needs the labels of the events' threads.
    pub fn needs_labels(&self) -> bool {
        self.filter.as_ref().is_some_and(EventFilter::needs_labels)
    }

    /// Whether an event in `scope`, whose thread has `thread_labels`, reaches the destination,
    /// and in which turn.
    pub fn route(&self, scope: EventScope, thread_labels: &[String]) -> Option<Routed> {
        self.filter
            .as_ref()
            .is_none_or(|f| f.matches(scope, thread_labels))
            .then(|| Routed { ordering_key: ordering_key(self.ordering, scope) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn caps_are_bounded() {
        assert_eq!(rate_cap(1), Ok(1));
        assert_eq!(rate_cap(1000), Ok(1000));
        assert!(rate_cap(0).is_err() && rate_cap(1001).is_err() && rate_cap(-5).is_err());
        assert_eq!(in_flight_cap(100), Ok(100));
        assert_eq!(in_flight_cap(101).map_err(|e| e.field), Err("max_in_flight".to_owned()));
    }

    #[test]
    fn reserved_and_malformed_headers_are_refused() {
        for name in ["webhook-id", "Webhook-Signature", "content-type", "Content-Length", "HOST", "bad name", ""] {
            let e = static_headers(&headers(&[(name, "x")])).err();
            assert_eq!(e.map(|e| e.field), Some("headers".to_owned()), "{name}");
        }
        assert!(static_headers(&headers(&[("x-a", "line\nbreak")])).is_err());
        let many: BTreeMap<String, String> = (0..11).map(|i| (format!("x-{i}"), "v".to_owned())).collect();
        assert!(static_headers(&many).is_err());
        // Names are kept as written, and compared without regard to case.
        let ok = static_headers(&headers(&[("X-Api-Key", "abc"), ("Authorization", "Bearer t"), ("User-Agent", "gw")]));
        assert_eq!(
            ok.ok().map(|h| h.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["Authorization".into(), "User-Agent".into(), "X-Api-Key".into()])
        );
        assert!(static_headers(&headers(&[("X-Api-Key", "a"), ("x-api-key", "b")])).is_err(), "given twice");
        assert!(static_headers(&headers(&[("Connection", "close")])).is_err());
    }

    #[test]
    fn the_filter_needs_each_non_empty_list_to_match() {
        let f = EventFilter { channel_ids: vec![3], labels: vec!["vip".into()] };
        let msg = EventScope { channel_id: Some(3), thread_id: Some(9) };
        assert!(f.matches(msg, &["vip".into()]));
        assert!(f.matches(msg, &["VIP".into()]), "label names ignore case");
        assert!(!f.matches(msg, &["other".into()]));
        let other_channel = EventScope { channel_id: Some(4), thread_id: Some(9) };
        assert!(!f.matches(other_channel, &["vip".into()]));
        let channels_only = EventFilter { channel_ids: vec![3], labels: vec![] };
        assert!(channels_only.matches(EventScope { channel_id: Some(3), thread_id: None }, &[]));
        let labels_only = EventFilter { channel_ids: vec![], labels: vec!["vip".into()] };
        assert!(!labels_only.matches(EventScope::default(), &["vip".into()]));
    }

    #[test]
    fn empty_filters_are_none_and_ordering_keys_are_threads() {
        assert_eq!(event_filter(EventFilter::default()).ok(), Some(None));
        assert!(event_filter(EventFilter { channel_ids: vec![0], labels: vec![] }).is_err());
        let scope = EventScope { channel_id: Some(1), thread_id: Some(7) };
        assert_eq!(ordering_key(DeliveryOrdering::PerThread, scope), Some(7));
        assert_eq!(ordering_key(DeliveryOrdering::None, scope), None);
        assert_eq!(DeliveryOrdering::parse("per_thread"), Ok(DeliveryOrdering::PerThread));
        assert!(DeliveryOrdering::parse("fifo").is_err());
    }

    #[test]
    fn filter_labels_are_label_names() {
        let labels =
            |l: &[&str]| EventFilter { channel_ids: vec![], labels: l.iter().map(|s| (*s).to_owned()).collect() };
        let kept = event_filter(labels(&[" vip ", "billing"])).expect("names");
        assert_eq!(kept.map(|f| f.labels), Some(vec!["vip".to_owned(), "billing".to_owned()]));
        let long = "x".repeat(crate::threads::MAX_LABEL_NAME + 1);
        for bad in [" ", "a\u{9b}b", "a\rb", long.as_str()] {
            assert!(event_filter(labels(&[bad])).is_err(), "{bad:?} can never name a label");
        }
    }

    #[test]
    fn routing_filters_then_names_the_turn_and_reads_what_was_stored() {
        let scope = EventScope { channel_id: Some(3), thread_id: Some(9) };
        let plain = Routing::stored(None, "none");
        assert!(plain.is_plain() && !plain.needs_labels());
        assert_eq!(plain.route(scope, &[]), Some(Routed { ordering_key: None }));
        let controlled = Routing::stored(Some(r#"{"channel_ids":[3],"labels":["vip"]}"#), "per_thread");
        assert!(!controlled.is_plain() && controlled.needs_labels());
        assert_eq!(controlled.route(scope, &["vip".into()]), Some(Routed { ordering_key: Some(9) }));
        assert_eq!(controlled.route(scope, &[]), None, "no vip label");
        assert_eq!(controlled.route(EventScope { channel_id: Some(4), ..scope }, &["vip".into()]), None);
        let ordered = Routing::stored(None, "per_thread");
        assert!(!ordered.is_plain() && !ordered.needs_labels());
        assert_eq!(ordered.route(EventScope::default(), &[]), Some(Routed { ordering_key: None }), "no thread");
        // What no longer reads is no control at all.
        assert!(Routing::stored(Some("not json"), "fifo").is_plain());
    }

    #[test]
    fn switching_a_destination_on_starts_afresh_and_off_pauses_it() {
        assert_eq!(decide_activation(false, Some(true)), Activation::Reactivated);
        assert_eq!(decide_activation(true, Some(false)), Activation::Deactivated);
        let resume = Activation::Reactivated.deliveries().expect("resumes");
        assert_eq!((resume.from, resume.to, resume.due_now), (DeliveryStatus::Paused, DeliveryStatus::Pending, true));
        let pause = Activation::Deactivated.deliveries().expect("pauses");
        assert_eq!((pause.from, pause.to, pause.due_now), (DeliveryStatus::Pending, DeliveryStatus::Paused, false));
        assert_eq!(Activation::Unchanged.deliveries(), None);
        let now = time::macros::datetime!(2026-11-27 10:00 UTC);
        assert_eq!((resume.due_at(now), pause.due_at(now)), (Some(now), None));
        // A pause is the queued status of an inactive destination.
        assert_eq!(DeliveryStatus::queued_for(false), pause.to);
        for (was, wanted) in [(true, Some(true)), (false, Some(false)), (true, None), (false, None)] {
            assert_eq!(decide_activation(was, wanted), Activation::Unchanged, "{was} {wanted:?}");
        }
    }
}
