//! Webhook destinations and the delivery log, as validated values (the event catalog: `event_type.rs`).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use time::OffsetDateTime;

use crate::access::{sees_webhook_header_values, Caller};
use crate::common::error::FieldError;
use crate::common::text::bounded;
use crate::workspace::WorkspaceId;

/// A webhook destination's database id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct DestinationId(pub i64);

impl fmt::Display for DestinationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A delivery's database id (one event to one destination).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct DeliveryId(pub i64);

impl fmt::Display for DeliveryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The host part of a destination URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlHost {
    /// A literal IP address.
    Ip(IpAddr),
    /// A DNS name, lowercase, without a trailing dot.
    Name(String),
}

/// The longest destination URL accepted.
pub const MAX_URL_CHARS: usize = 2048;

/// A syntactically valid destination URL: absolute, `http` or `https`, with a host, at most 2048
/// characters. Whether `http` and the host's addresses are allowed is the service's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestinationUrl {
    url: String,
    host: UrlHost,
    port: u16,
    https: bool,
}

impl DestinationUrl {
    /// Parses `raw`.
    ///
    /// # Errors
    /// A [`FieldError`] on `url`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let t = raw.trim();
        if t.is_empty() {
            return Err(FieldError::new("url", "must not be empty"));
        }
        if t.chars().count() > MAX_URL_CHARS {
            return Err(FieldError::new("url", format!("must have at most {MAX_URL_CHARS} characters")));
        }
        // The parser would drop tabs and line breaks silently and encode spaces: the URL is kept
        // as written, so it must be one as written.
        if t.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(FieldError::new("url", "must not contain spaces or control characters"));
        }
        let parsed =
            url::Url::parse(t).map_err(|e| FieldError::new("url", format!("must be an absolute URL ({e})")))?;
        let https = match parsed.scheme() {
            "https" => true,
            "http" => false,
            other => return Err(FieldError::new("url", format!("must use https, not `{other}`"))),
        };
        let host = match parsed.host() {
            Some(url::Host::Ipv4(a)) => UrlHost::Ip(IpAddr::V4(a)),
            Some(url::Host::Ipv6(a)) => UrlHost::Ip(IpAddr::V6(a)),
            Some(url::Host::Domain(d)) if !d.is_empty() => UrlHost::Name(d.trim_end_matches('.').to_ascii_lowercase()),
            _ => return Err(FieldError::new("url", "must name a host")),
        };
        let port = parsed.port_or_known_default().unwrap_or(if https { 443 } else { 80 });
        // Kept as written (an integrator reads back the URL it set, as it set it); the host
        // checked is the parsed one, which is what every request parses it to again.
        Ok(Self { url: t.to_owned(), host, port, https })
    }

    /// The URL as stored and requested.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// Its host.
    pub fn host(&self) -> &UrlHost {
        &self.host
    }

    /// Its port (explicit or the scheme's default).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the scheme is `https`.
    pub fn is_https(&self) -> bool {
        self.https
    }
}

/// The free label of what receives the events (`custom`, `zapier`, `make`, `n8n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform(String);

impl Platform {
    /// The label when none is given.
    pub const DEFAULT: &'static str = "custom";

    /// Validates a label: 1 to 50 characters, no control characters.
    ///
    /// # Errors
    /// A [`FieldError`] on `platform`.
    pub fn new(raw: &str) -> Result<Self, FieldError> {
        bounded("platform", raw, 1, 50).map(Self)
    }

    /// The label.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A webhook destination as clients see it (the secret is never part of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDestination {
    /// Its id.
    pub id: DestinationId,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// Where deliveries go.
    pub url: String,
    /// Free label.
    pub platform: String,
    /// Subscribed event names.
    pub events: Vec<String>,
    /// Whether deliveries are sent.
    pub active: bool,
    /// Why wms deactivated it (410, days of failures); `None` when active or paused by a person.
    pub disabled_reason: Option<String>,
    /// When it was deactivated.
    pub disabled_at: Option<OffsetDateTime>,
    /// Creation time.
    pub created_at: OffsetDateTime,
    /// Last change.
    pub updated_at: OffsetDateTime,
    /// The integrator's caps, headers, filter and ordering. As stored, `headers` holds the names
    /// with blank values; the service fills the values from `headers_sealed` for its answers.
    pub controls: super::controls::DestinationControls,
    /// The static header values, sealed ([`super::headers`]); `None` without headers.
    pub headers_sealed: Option<Vec<u8>>,
}

impl WebhookDestination {
    /// The destination as `caller` may see it: the static header values emptied, the names kept,
    /// unless the access policy lets the caller see them
    /// ([`crate::access::sees_webhook_header_values`]). Empty, not a mask such as `••••`: the same
    /// convention as event `data` and a value that is still a valid header value.
    pub fn seen_by(mut self, caller: &Caller) -> Self {
        if !sees_webhook_header_values(caller) {
            for value in self.controls.headers.values_mut() {
                value.clear();
            }
        }
        self
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Waiting for its next attempt.
    Pending,
    /// An attempt is in progress (leased by a worker).
    Sending,
    /// Its destination is inactive; it resumes when the destination is reactivated.
    Paused,
    /// A 2xx answer was received.
    Succeeded,
    /// Every attempt failed (or the destination answered 410).
    Failed,
}

impl DeliveryStatus {
    /// Every status.
    pub const ALL: [DeliveryStatus; 5] = [
        DeliveryStatus::Pending,
        DeliveryStatus::Sending,
        DeliveryStatus::Paused,
        DeliveryStatus::Succeeded,
        DeliveryStatus::Failed,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Sending => "sending",
            DeliveryStatus::Paused => "paused",
            DeliveryStatus::Succeeded => "succeeded",
            DeliveryStatus::Failed => "failed",
        }
    }

    /// The status an attempt's outcome leaves its delivery in when it is recorded, given whether
    /// its destination is active then: a delivery to wait for another attempt to an inactive
    /// destination is paused instead (it resumes when the destination is reactivated); every
    /// other outcome stands.
    pub fn recorded_for(self, destination_active: bool) -> DeliveryStatus {
        match self {
            DeliveryStatus::Pending if !destination_active => DeliveryStatus::Paused,
            status => status,
        }
    }

    /// Whether a delivery in this status is still on its retry schedule, so that it keeps the
    /// schedule after a manual attempt fails: a delivery waiting, paused or being sent keeps
    /// retrying; one that succeeded or failed for good is only attempted again by hand.
    pub fn on_schedule(self) -> bool {
        self.is_unfinished()
    }

    /// Whether the delivery is still under way: waiting, being sent or paused; not yet succeeded
    /// or failed for good. [`on_schedule`](Self::on_schedule) and
    /// [`holds_back_its_key`](Self::holds_back_its_key) are this one fact, read for two rules.
    pub fn is_unfinished(self) -> bool {
        matches!(self, DeliveryStatus::Pending | DeliveryStatus::Paused | DeliveryStatus::Sending)
    }

    /// Whether a delivery in this status already takes care of its event for its destination,
    /// so that a replay does not queue the event again: received, or on its way (waiting, being
    /// sent, or paused until the destination is active again). A delivery that failed for good
    /// does not: a replay queues a new one.
    pub fn holds_event(self) -> bool {
        self != DeliveryStatus::Failed
    }

    /// Whether a delivery in this status holds back the later deliveries of its ordering key
    /// (a destination that orders by thread or contact): until it succeeded or failed for good,
    /// they wait; a paused one keeps them waiting until the destination is active again.
    pub fn holds_back_its_key(self) -> bool {
        self.is_unfinished()
    }

    /// The statuses that [`holds_event`](Self::holds_event), by stored name.
    pub fn holding_event() -> Vec<&'static str> {
        Self::ALL.into_iter().filter(|s| s.holds_event()).map(DeliveryStatus::as_str).collect()
    }

    /// Whether a replay that covers the event of a delivery in this status brings that delivery
    /// forward (due now, in the replay's turn) instead of leaving it: one waiting for its next
    /// attempt has not been received, and a replay is asked for when the receiver is back, not
    /// hours later on the retry schedule. It is not queued twice.
    pub fn brought_forward_by_replay(self) -> bool {
        self == DeliveryStatus::Pending
    }

    /// The statuses that keep an event out of a replay altogether: received, being sent, or
    /// paused with its destination; by stored name.
    pub fn kept_from_replay() -> Vec<&'static str> {
        Self::ALL
            .into_iter()
            .filter(|s| s.holds_event() && !s.brought_forward_by_replay())
            .map(DeliveryStatus::as_str)
            .collect()
    }

    /// The statuses [`brought_forward_by_replay`](Self::brought_forward_by_replay), by stored
    /// name.
    pub fn brought_forward() -> Vec<&'static str> {
        Self::ALL.into_iter().filter(|s| s.brought_forward_by_replay()).map(DeliveryStatus::as_str).collect()
    }

    /// When the delivery is next attempted, as its record shows it, given its stored
    /// `next_attempt_at`: only a pending delivery has a planned attempt (while one is being sent
    /// the stored time is the worker's lease, not an attempt).
    pub fn planned_attempt(self, next_attempt_at: Option<OffsetDateTime>) -> Option<OffsetDateTime> {
        next_attempt_at.filter(|_| self == DeliveryStatus::Pending)
    }

    /// The status a delivery is queued in for a destination that is `active` or not: pending, or
    /// paused until it is reactivated.
    pub fn queued_for(destination_active: bool) -> DeliveryStatus {
        DeliveryStatus::Pending.recorded_for(destination_active)
    }

    /// What a manual attempt may do with a delivery in this status, given its stored
    /// `next_attempt_at` (while it is being sent, the end of the worker's lease) at `now`. A
    /// worker whose lease is live is attempting it right now: the manual attempt waits its turn.
    /// Any other delivery is claimed, and keeps its retry schedule when it is
    /// [`on_schedule`](Self::on_schedule); a lease that ran out is a worker that died.
    pub fn manual_attempt(self, next_attempt_at: Option<OffsetDateTime>, now: OffsetDateTime) -> ManualAttempt {
        if self == DeliveryStatus::Sending && next_attempt_at.is_some_and(|lease_end| lease_end > now) {
            return ManualAttempt::InProgress;
        }
        ManualAttempt::Claim { on_schedule: self.on_schedule() }
    }
}

/// What a manual attempt may do with a delivery ([`DeliveryStatus::manual_attempt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManualAttempt {
    /// Claim it for an attempt now; `on_schedule`: it keeps its retry schedule if the attempt
    /// fails.
    Claim {
        /// Whether it was on its retry schedule.
        on_schedule: bool,
    },
    /// A worker is attempting it right now.
    InProgress,
}

impl FromStr for DeliveryStatus {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| FieldError::new("status", "must be one of pending, sending, paused, succeeded, failed"))
    }
}

/// What caused an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptTrigger {
    /// The first attempt or an automatic retry.
    Scheduled,
    /// A person asked for a redelivery.
    Manual,
    /// A `webhook.test` event sent on request.
    Test,
}

impl AttemptTrigger {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptTrigger::Scheduled => "scheduled",
            AttemptTrigger::Manual => "manual",
            AttemptTrigger::Test => "test",
        }
    }
}

impl FromStr for AttemptTrigger {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [AttemptTrigger::Scheduled, AttemptTrigger::Manual, AttemptTrigger::Test]
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| FieldError::new("trigger", "unknown trigger"))
    }
}

/// One logged attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// 1 for the first attempt.
    pub attempt_number: i32,
    /// Why it was made.
    pub trigger: AttemptTrigger,
    /// When it started.
    pub attempted_at: OffsetDateTime,
    /// The endpoint's HTTP status, when it answered.
    pub status_code: Option<u16>,
    /// The transport error, when it did not.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: i64,
    /// The start of the response body (lossy UTF-8).
    pub response_excerpt: String,
    /// When the next attempt was planned after this one, if any.
    pub next_attempt_at: Option<OffsetDateTime>,
}

/// A delivery with its attempts, for the delivery log.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// Its id.
    pub id: DeliveryId,
    /// The destination.
    pub destination_id: DestinationId,
    /// The `webhook-id` header value, the same on every attempt.
    pub message_id: String,
    /// The event type.
    pub event_type: String,
    /// The exact body sent.
    pub payload: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made so far.
    pub attempt_count: i32,
    /// When the next attempt is planned.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// When the event was recorded.
    pub created_at: OffsetDateTime,
    /// Every attempt, oldest first.
    pub attempts: Vec<DeliveryAttempt>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_waiting_paused_or_being_sent_keeps_its_schedule_after_a_manual_attempt() {
        let kept: Vec<DeliveryStatus> = DeliveryStatus::ALL.into_iter().filter(|s| s.on_schedule()).collect();
        assert_eq!(kept, [DeliveryStatus::Pending, DeliveryStatus::Sending, DeliveryStatus::Paused]);
    }

    #[test]
    fn a_manual_attempt_waits_only_for_a_live_lease() {
        let now = time::macros::datetime!(2026-03-01 10:00 UTC);
        let (live, ran_out) = (Some(now + time::Duration::seconds(1)), Some(now));
        assert_eq!(DeliveryStatus::Sending.manual_attempt(live, now), ManualAttempt::InProgress);
        assert_eq!(
            DeliveryStatus::Sending.manual_attempt(ran_out, now),
            ManualAttempt::Claim { on_schedule: true },
            "the worker died"
        );
        for status in DeliveryStatus::ALL.into_iter().filter(|s| *s != DeliveryStatus::Sending) {
            for at in [live, ran_out, None] {
                assert_eq!(
                    status.manual_attempt(at, now),
                    ManualAttempt::Claim { on_schedule: status.on_schedule() },
                    "{status:?}"
                );
            }
        }
    }

    #[test]
    fn only_a_pending_delivery_shows_its_next_attempt() {
        let at = Some(time::macros::datetime!(2026-03-01 10:00 UTC));
        for status in DeliveryStatus::ALL {
            let shown = status.planned_attempt(at);
            assert_eq!(shown, if status == DeliveryStatus::Pending { at } else { None }, "{status:?}");
        }
    }

    #[test]
    fn an_unfinished_delivery_holds_back_the_later_ones_of_its_key() {
        let holding: Vec<DeliveryStatus> = DeliveryStatus::ALL.into_iter().filter(|s| s.holds_back_its_key()).collect();
        assert_eq!(holding, [DeliveryStatus::Pending, DeliveryStatus::Sending, DeliveryStatus::Paused]);
    }

    #[test]
    fn a_replay_queues_again_only_an_event_whose_delivery_failed_for_good() {
        assert_eq!(DeliveryStatus::holding_event(), ["pending", "sending", "paused", "succeeded"]);
        // A retry waiting for its time is brought forward instead of queued twice.
        assert_eq!(DeliveryStatus::brought_forward(), ["pending"]);
        assert_eq!(DeliveryStatus::kept_from_replay(), ["sending", "paused", "succeeded"]);
    }

    #[test]
    fn a_delivery_is_queued_pending_for_an_active_destination_and_paused_for_an_inactive_one() {
        assert_eq!(DeliveryStatus::queued_for(true), DeliveryStatus::Pending);
        assert_eq!(DeliveryStatus::queued_for(false), DeliveryStatus::Paused);
    }

    #[test]
    fn a_retry_to_an_inactive_destination_is_paused_and_every_other_outcome_stands() {
        assert_eq!(DeliveryStatus::Pending.recorded_for(false), DeliveryStatus::Paused);
        for status in DeliveryStatus::ALL {
            assert_eq!(status.recorded_for(true), status, "{status:?}");
        }
        for status in
            [DeliveryStatus::Succeeded, DeliveryStatus::Failed, DeliveryStatus::Paused, DeliveryStatus::Sending]
        {
            assert_eq!(status.recorded_for(false), status, "{status:?}");
        }
    }

    #[test]
    fn urls_must_be_absolute_http_or_https_and_bounded() {
        let u = DestinationUrl::parse(" https://Hooks.Example.com/wms ").ok();
        assert_eq!(u.as_ref().map(DestinationUrl::as_str), Some("https://Hooks.Example.com/wms"), "kept as written");
        assert_eq!(u.as_ref().map(DestinationUrl::host), Some(&UrlHost::Name("hooks.example.com".into())));
        assert_eq!(u.map(|u| u.port()), Some(443));
        assert!(DestinationUrl::parse("/relative").is_err());
        assert!(DestinationUrl::parse("ftp://example.com/").is_err());
        assert!(DestinationUrl::parse("").is_err());
        assert_eq!(
            DestinationUrl::parse("http://127.0.0.1:9000").ok().map(|u| u.as_str().to_owned()).as_deref(),
            Some("http://127.0.0.1:9000")
        );
        for bad in ["https://exa\tmple.com/", "https://example.com/a b", "https://example.com/\na"] {
            assert!(DestinationUrl::parse(bad).is_err(), "{bad:?}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(DestinationUrl::parse(&long).is_err());
        let ip = DestinationUrl::parse("http://[::1]:8080/x").ok();
        assert_eq!(
            ip.as_ref().map(DestinationUrl::host),
            Some(&UrlHost::Ip("::1".parse().unwrap_or(IpAddr::from([0; 4]))))
        );
        assert_eq!(ip.map(|u| (u.port(), u.is_https())), Some((8080, false)));
    }

    #[test]
    fn platform_is_a_bounded_label() {
        assert_eq!(Platform::new(" zapier ").map(|p| p.as_str().to_owned()), Ok("zapier".into()));
        assert!(Platform::new("").is_err());
        assert!(Platform::new(&"x".repeat(51)).is_err());
    }
}
