//! The delivery limiter: per destination, a token bucket (sustained rate, burst), the sends of the
//! last [`RATE_WINDOW`] (so that no window of a second ever holds more sends than the rate, which
//! a bucket alone allows twice over after an idle spell: its burst, then its refill) and a cap on
//! deliveries in flight at once. The queue adapter reads the destinations with deliveries due,
//! asks [`shares`] how many of each one's oldest to read, reads those candidates, the throttles
//! and the in-flight counts under lock, asks [`allot`], and writes the result back.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use time::OffsetDateTime;

use super::pace::{DestinationLimits, PaceCaps};

/// A due delivery the claim looks at (oldest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryCandidate {
    /// The delivery.
    pub id: i64,
    /// Its destination.
    pub destination_id: i64,
}

/// A destination with deliveries due, as a claim finds it before it locks anything.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DueDestination {
    /// The destination.
    pub destination_id: i64,
    /// Its oldest due delivery that is not waiting for its thread's turn.
    pub oldest_due: OffsetDateTime,
    /// Its deliveries in flight (claimed, lease not expired).
    pub in_flight: i64,
    /// Its limits now (its pace within the bounds and its caps).
    pub limits: DestinationLimits,
}

/// How many of its oldest due deliveries a claim of at most `claim` reads for each destination,
/// `budget` in all: a destination held by a `Retry-After` or with every slot in flight gets none,
/// so however long its backlog, it takes no room from the others; the others get their free slots
/// (never more than `claim`) in turns, one each per turn, the destination with the oldest due
/// delivery first, until the budget runs out. In that order (oldest due first), without the
/// destinations given nothing.
pub fn shares(due: &[DueDestination], now: OffsetDateTime, claim: usize, budget: usize) -> Vec<(i64, u32)> {
    let mut order: Vec<&DueDestination> = due.iter().collect();
    order.sort_by_key(|d| (d.oldest_due, d.destination_id));
    let claim = i64::try_from(claim).unwrap_or(i64::MAX);
    let rooms: Vec<i64> = order
        .iter()
        .map(|d| {
            if d.limits.hold_until.is_some_and(|h| h > now) {
                0
            } else {
                (i64::from(d.limits.max_in_flight) - d.in_flight).clamp(0, claim)
            }
        })
        .collect();
    let mut given = vec![0i64; order.len()];
    let mut left = budget;
    'turns: loop {
        let mut gave = false;
        for (g, room) in given.iter_mut().zip(&rooms) {
            if left == 0 {
                break 'turns;
            }
            if *g < *room {
                *g += 1;
                left -= 1;
                gave = true;
            }
        }
        if !gave {
            break;
        }
    }
    order
        .iter()
        .zip(given)
        .filter(|(_, g)| *g > 0)
        .map(|(d, g)| (d.destination_id, u32::try_from(g).unwrap_or(u32::MAX)))
        .collect()
}

/// The span in which a destination receives at most its rate: a second, and a margin for the
/// spread of the sends themselves (a claim's deliveries leave over a few milliseconds, and a new
/// connection's first request arrives later than a reused one's), so that a receiver counting
/// arrivals in any second of its own clock never counts more than the rate.
pub const RATE_WINDOW: Duration = Duration::from_millis(1020);

/// A destination's stored throttle: its token bucket and its recent sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Throttle {
    /// Tokens left at `refilled_at`.
    pub tokens: f64,
    /// When `tokens` was counted.
    pub refilled_at: OffsetDateTime,
    /// The claims that sent to it within [`RATE_WINDOW`] of `refilled_at`: when, and how many,
    /// oldest first.
    pub recent: Vec<(OffsetDateTime, u32)>,
}

impl Throttle {
    /// A throttle never used: a full bucket, no recent sends.
    pub fn unused(now: OffsetDateTime) -> Self {
        Self { tokens: f64::MAX, refilled_at: now, recent: Vec::new() }
    }
}

/// What the limits allow for the candidates of one claim: who is sent now, who waits until when
/// (held back by the rate), and each destination's throttle after the claim (as of `now`). A candidate
/// held back only because its destination has no free slot is in neither list: it stays due and
/// untouched, and is claimed as soon as a slot frees (writing it back "for later" cost a
/// statement per claim and delayed it by a guessed backoff).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allotment {
    /// Deliveries to send now, in candidate order.
    pub claimed: Vec<i64>,
    /// Deliveries held back by the rate, with the time they come due.
    pub deferred: Vec<(i64, OffsetDateTime)>,
    /// Each looked-at destination's throttle after the claim, in destination id order.
    pub throttles: Vec<(i64, Throttle)>,
    /// Each destination given deliveries, with its deliveries in flight once they are sent (the
    /// window the pace judges a refusal by), in destination id order.
    pub windows: Vec<(i64, u32)>,
}

/// Allots the `candidates` (oldest first) against each destination's throttle (a missing one is
/// unused): its bucket refilled up to `now` (never above the rate: a second's worth), the sends of
/// its last [`RATE_WINDOW`] (fewer than the rate, rounded up), and its free slots (`max_in_flight`
/// minus `in_flight`), with each destination's limits (its pace within the bounds and its caps;
/// one held by a `Retry-After` gets nothing until then).
pub fn allot(
    candidates: &[DeliveryCandidate],
    in_flight: &HashMap<i64, i64>,
    throttles: &HashMap<i64, Throttle>,
    limits: &HashMap<i64, DestinationLimits>,
    now: OffsetDateTime,
) -> Allotment {
    struct State {
        slots: i64,
        tokens: f64,
        rate: f64,
        /// The window's send times, one per send, oldest first; then the times planned for the
        /// ones held back by the rate, in order.
        sends: Vec<OffsetDateTime>,
        per_window: usize,
        earlier: Vec<(OffsetDateTime, u32)>,
        rate_waiting: u32,
        in_flight: i64,
        claimed: u32,
    }
    let mut states: BTreeMap<i64, State> = BTreeMap::new();
    let mut out = Allotment::default();
    for c in candidates {
        let limit = limits.get(&c.destination_id).copied().unwrap_or(DestinationLimits {
            max_in_flight: 1,
            rate: 1.0,
            hold_until: None,
        });
        let s = states.entry(c.destination_id).or_insert_with(|| {
            let rate = limit.rate.max(1.0);
            let throttle = throttles.get(&c.destination_id).cloned().unwrap_or_else(|| Throttle::unused(now));
            let elapsed = (now - throttle.refilled_at).as_seconds_f64().max(0.0);
            let held = limit.hold_until.is_some_and(|h| h > now);
            let in_flight = in_flight.get(&c.destination_id).copied().unwrap_or(0);
            let earlier: Vec<(OffsetDateTime, u32)> =
                throttle.recent.into_iter().filter(|(at, n)| *at > now - RATE_WINDOW && *n > 0).collect();
            let mut sends: Vec<OffsetDateTime> =
                earlier.iter().flat_map(|(at, n)| std::iter::repeat_n(*at, *n as usize)).collect();
            sends.sort_unstable();
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let per_window = rate.ceil().min(1e6) as usize;
            State {
                slots: if held { 0 } else { i64::from(limit.max_in_flight) - in_flight },
                tokens: (throttle.tokens.min(rate) + elapsed * rate).min(rate),
                rate,
                sends,
                per_window,
                earlier,
                rate_waiting: 0,
                in_flight,
                claimed: 0,
            }
        });
        let window_full = s.sends.len() >= s.per_window;
        if s.slots > 0 && s.tokens >= 1.0 && !window_full {
            s.slots -= 1;
            s.tokens -= 1.0;
            s.claimed += 1;
            s.sends.push(now);
            out.claimed.push(c.id);
        } else if s.tokens < 1.0 || window_full {
            // Spread the waiting ones at the sustained rate, so they come due one token apart
            // (the first as soon as the bucket holds one), and each no sooner than a window after
            // the send whose place in the window it takes.
            let by_tokens = ((f64::from(s.rate_waiting) + 1.0 - s.tokens) / s.rate).max(0.0);
            let mut at = now + Duration::from_secs_f64(by_tokens.min(3600.0));
            if let Some(freed) = s.sends.len().checked_sub(s.per_window).map(|i| s.sends[i] + RATE_WINDOW) {
                at = at.max(freed);
            }
            s.rate_waiting += 1;
            s.sends.push(at);
            out.deferred.push((c.id, at));
        }
        // Else: no free slot. Left due, untouched.
    }
    out.windows = states
        .iter()
        .filter(|(_, s)| s.claimed > 0)
        .map(|(id, s)| (*id, u32::try_from(s.in_flight + i64::from(s.claimed)).unwrap_or(u32::MAX)))
        .collect();
    out.throttles = states
        .into_iter()
        .map(|(id, s)| {
            let mut recent = s.earlier;
            if s.claimed > 0 {
                recent.push((now, s.claimed));
            }
            (id, Throttle { tokens: s.tokens, refilled_at: now, recent })
        })
        .collect();
    out
}

/// A destination's own cap that keeps a manual attempt back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullCap {
    /// Its `max_in_flight`: that many of its deliveries are in flight.
    InFlight(u32),
    /// Its `rate_limit_per_second`: that many sends within the last [`RATE_WINDOW`].
    Rate(u32),
}

impl std::fmt::Display for FullCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FullCap::InFlight(n) => write!(f, "its max_in_flight ({n}) deliveries are in flight"),
            FullCap::Rate(n) => write!(f, "its rate_limit_per_second ({n}) was sent within the last second"),
        }
    }
}

impl CapReached {
    /// Whole seconds from `now` until `retry_at`, at least 1 (for `Retry-After`).
    pub fn retry_after_secs(&self, now: OffsetDateTime) -> u64 {
        let secs = (self.retry_at - now).as_seconds_f64().ceil();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let secs = secs.clamp(1.0, 3600.0) as u64;
        secs
    }
}

/// A manual attempt kept back by a full cap: which one, and when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapReached {
    /// The full cap.
    pub cap: FullCap,
    /// When a place frees: the oldest counted send leaving the window, or, for the in-flight cap,
    /// a second from now (an attempt in flight ends when its receiver answers).
    pub retry_at: OffsetDateTime,
}

/// Whether a manual attempt (a retry or a test send, made on request) goes now.
#[derive(Debug, Clone, PartialEq)]
pub enum ManualAdmission {
    /// It goes now; the destination's throttle with it counted.
    Send(Throttle),
    /// A cap of the destination's own is full.
    Full(CapReached),
}

/// Admits a manual attempt against its destination's own caps (`caps`: `max_in_flight` and
/// `rate_limit_per_second`, which are hard caps, whoever sends), with `in_flight` of its
/// deliveries in flight and its stored throttle (`None`: never used). The adaptive pace and a
/// `Retry-After` hold do not keep a manual attempt back: the member asks for this one request.
/// An admitted attempt is counted like a claimed delivery: in the window of recent sends and as a
/// token of the bucket refilled at `limits.rate` (never below empty), so the scheduled deliveries
/// that follow leave room for it.
pub fn admit_manual(
    throttle: Option<Throttle>,
    in_flight: i64,
    limits: DestinationLimits,
    caps: PaceCaps,
    now: OffsetDateTime,
) -> ManualAdmission {
    if let Some(max) = caps.max_in_flight {
        if in_flight >= i64::from(max) {
            let retry_at = now + Duration::from_secs(1);
            return ManualAdmission::Full(CapReached { cap: FullCap::InFlight(max), retry_at });
        }
    }
    let throttle = throttle.unwrap_or_else(|| Throttle::unused(now));
    let mut recent: Vec<(OffsetDateTime, u32)> =
        throttle.recent.into_iter().filter(|(at, n)| *at > now - RATE_WINDOW && *n > 0).collect();
    if let Some(rate) = caps.rate {
        let mut sends: Vec<OffsetDateTime> =
            recent.iter().flat_map(|(at, n)| std::iter::repeat_n(*at, *n as usize)).collect();
        sends.sort_unstable();
        let per_window = rate.max(1) as usize;
        if let Some(oldest) = sends.len().checked_sub(per_window).map(|i| sends[i]) {
            let retry_at = oldest + RATE_WINDOW;
            return ManualAdmission::Full(CapReached { cap: FullCap::Rate(rate), retry_at });
        }
    }
    let rate = limits.rate.max(1.0);
    let elapsed = (now - throttle.refilled_at).as_seconds_f64().max(0.0);
    let tokens = ((throttle.tokens.min(rate) + elapsed * rate).min(rate) - 1.0).max(0.0);
    recent.push((now, 1));
    recent.sort_by_key(|(at, _)| *at);
    // Never back in time: a claim that took the lock after this one read the clock may have
    // stored a later count, and an earlier one would refill the bucket twice over that span.
    ManualAdmission::Send(Throttle { tokens, refilled_at: now.max(throttle.refilled_at), recent })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    fn each(max_in_flight: u32, rate: f64) -> HashMap<i64, DestinationLimits> {
        (1..10).map(|d| (d, DestinationLimits { max_in_flight, rate, hold_until: None })).collect()
    }

    fn limits() -> HashMap<i64, DestinationLimits> {
        each(2, 3.0)
    }

    fn unlimited_slots() -> HashMap<i64, DestinationLimits> {
        each(100, 3.0)
    }

    fn cands(dests: &[i64]) -> Vec<DeliveryCandidate> {
        dests.iter().enumerate().map(|(i, d)| DeliveryCandidate { id: i as i64 + 1, destination_id: *d }).collect()
    }

    fn bucket(tokens: f64, secs_ago: i64) -> Throttle {
        Throttle { tokens, refilled_at: NOW - time::Duration::seconds(secs_ago), recent: Vec::new() }
    }

    fn tokens(a: &Allotment) -> Vec<(i64, f64)> {
        a.throttles.iter().map(|(id, t)| (*id, t.tokens)).collect()
    }

    fn due(destination_id: i64, secs_ago: i64, in_flight: i64, max_in_flight: u32) -> DueDestination {
        DueDestination {
            destination_id,
            oldest_due: NOW - time::Duration::seconds(secs_ago),
            in_flight,
            limits: DestinationLimits { max_in_flight, rate: 3.0, hold_until: None },
        }
    }

    #[test]
    fn destinations_with_every_slot_in_flight_get_no_share_however_old_their_backlog() {
        let stuck: Vec<DueDestination> = (1..=10).map(|d| due(d, 3600, 1, 1)).collect();
        let mut all = stuck.clone();
        all.push(due(99, 0, 0, 16));
        assert_eq!(shares(&all, NOW, 100, 1000), vec![(99, 16)]);
        assert!(shares(&stuck, NOW, 100, 1000).is_empty());
    }

    #[test]
    fn a_destination_held_by_retry_after_gets_no_share_until_then() {
        let mut held = due(7, 60, 0, 16);
        held.limits.hold_until = Some(NOW + time::Duration::seconds(30));
        assert_eq!(shares(&[held, due(8, 0, 0, 2)], NOW, 100, 1000), vec![(8, 2)]);
        held.limits.hold_until = Some(NOW);
        assert_eq!(shares(&[held], NOW, 100, 1000), vec![(7, 16)], "the hold is over");
    }

    #[test]
    fn shares_are_the_free_slots_at_most_the_claim() {
        let got = shares(&[due(7, 10, 3, 5), due(8, 5, 0, 256)], NOW, 100, 1000);
        assert_eq!(got, vec![(7, 2), (8, 100)]);
    }

    #[test]
    fn a_short_budget_goes_in_turns_the_oldest_due_first() {
        let got = shares(&[due(9, 1, 0, 16), due(7, 30, 0, 16), due(8, 20, 0, 1)], NOW, 100, 6);
        assert_eq!(got, vec![(7, 3), (8, 1), (9, 2)], "one each per turn, 7 first: it waited longest");
        let many: Vec<DueDestination> = (1..=5).map(|d| due(d, 100 - d, 0, 16)).collect();
        assert_eq!(shares(&many, NOW, 100, 3), vec![(1, 1), (2, 1), (3, 1)], "the oldest due first");
    }

    #[test]
    fn in_flight_limit_leaves_the_rest_due_and_untouched() {
        let a = allot(&cands(&[7, 7, 7, 8]), &HashMap::from([(7, 1)]), &HashMap::new(), &limits(), NOW);
        assert_eq!(a.claimed, vec![1, 4], "one slot left for 7, 8 is free");
        assert!(a.deferred.is_empty(), "2 and 3 are not rescheduled: {:?}", a.deferred);
        assert_eq!(tokens(&a), vec![(7, 2.0), (8, 2.0)], "only the claimed ones took tokens");
        assert_eq!(a.windows, vec![(7, 2), (8, 1)], "in flight once sent, the claim's own included");
    }

    #[test]
    fn a_destination_given_nothing_has_no_window() {
        let a = allot(&cands(&[7, 7, 8, 8, 8]), &HashMap::from([(7, 2)]), &HashMap::new(), &unlimited_slots(), NOW);
        assert_eq!(a.windows, vec![(7, 4), (8, 3)]);
        let a = allot(&cands(&[7]), &HashMap::from([(7, 2)]), &HashMap::new(), &limits(), NOW);
        assert!(a.windows.is_empty(), "{a:?}");
    }

    #[test]
    fn a_destination_with_every_slot_in_flight_gets_nothing_and_keeps_its_tokens() {
        let a = allot(&cands(&[7, 7]), &HashMap::from([(7, 2)]), &HashMap::new(), &limits(), NOW);
        assert!(a.claimed.is_empty() && a.deferred.is_empty(), "{a:?}");
        assert_eq!(tokens(&a), vec![(7, 3.0)]);
    }

    #[test]
    fn rate_limit_spreads_the_waiting_ones_at_the_rate() {
        let buckets = HashMap::from([(7, bucket(1.0, 0))]);
        let a = allot(&cands(&[7, 7, 7]), &HashMap::new(), &buckets, &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1]);
        let waits: Vec<f64> = a.deferred.iter().map(|(_, at)| (*at - NOW).as_seconds_f64()).collect();
        assert!((waits[0] - 1.0 / 3.0).abs() < 1e-6 && (waits[1] - 2.0 / 3.0).abs() < 1e-6, "{waits:?}");
        assert_eq!(tokens(&a), vec![(7, 0.0)]);
    }

    #[test]
    fn an_empty_bucket_defers_everything() {
        let buckets = HashMap::from([(7, bucket(0.0, 0))]);
        let a = allot(&cands(&[7, 7]), &HashMap::new(), &buckets, &unlimited_slots(), NOW);
        assert!(a.claimed.is_empty());
        assert_eq!(a.deferred.iter().map(|d| d.0).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn tokens_refill_with_time_up_to_the_burst() {
        let buckets = HashMap::from([(7, bucket(0.0, 60))]);
        let a = allot(&cands(&[7, 7, 7, 7]), &HashMap::new(), &buckets, &unlimited_slots(), NOW);
        assert_eq!(a.claimed.len(), 3, "burst of 3");
    }

    #[test]
    fn tokens_refill_at_the_rate() {
        // 0.5 s at 3/s is 1.5 tokens: one delivery now, half a token left.
        let buckets = HashMap::from([(
            7,
            Throttle { tokens: 0.0, refilled_at: NOW - time::Duration::milliseconds(500), recent: vec![] },
        )]);
        let a = allot(&cands(&[7, 7]), &HashMap::new(), &buckets, &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1]);
        assert!((tokens(&a)[0].1 - 0.5).abs() < 1e-9, "{:?}", a.throttles);
    }

    #[test]
    fn a_destination_without_a_bucket_starts_full() {
        let a = allot(&cands(&[9, 9, 9, 9]), &HashMap::new(), &HashMap::new(), &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1, 2, 3]);
        assert_eq!(a.deferred.len(), 1);
    }

    #[test]
    fn a_destination_held_by_retry_after_gets_nothing_until_then() {
        let mut held = unlimited_slots();
        held.insert(
            7,
            DestinationLimits { max_in_flight: 100, rate: 3.0, hold_until: Some(NOW + time::Duration::seconds(1)) },
        );
        let a = allot(&cands(&[7, 8]), &HashMap::new(), &HashMap::new(), &held, NOW);
        assert_eq!(a.claimed, vec![2]);
        assert!(a.deferred.is_empty(), "left due: {a:?}");
    }

    #[test]
    fn after_an_idle_spell_a_window_holds_the_rate_not_the_burst_and_its_refill() {
        // Full bucket (3 tokens): 3 now; the 4th would be the refill's, but the window is full.
        let a = allot(&cands(&[7, 7, 7, 7, 7, 7, 7]), &HashMap::new(), &HashMap::new(), &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1, 2, 3]);
        let waits: Vec<f64> = a.deferred.iter().map(|(_, at)| (*at - NOW).as_seconds_f64()).collect();
        let w = RATE_WINDOW.as_secs_f64();
        assert_eq!(waits.len(), 4);
        for (got, want) in waits.iter().zip([w, w, w, 2.0 * w]) {
            assert!((got - want).abs() < 1e-6, "{waits:?}");
        }
        assert_eq!(a.throttles[0].1.recent, vec![(NOW, 3)]);
    }

    #[test]
    fn sends_of_the_last_window_count_against_a_refilled_bucket() {
        let half = time::Duration::milliseconds(500);
        let throttle = Throttle { tokens: 3.0, refilled_at: NOW - half, recent: vec![(NOW - half, 2)] };
        let a = allot(&cands(&[7, 7, 7]), &HashMap::new(), &HashMap::from([(7, throttle)]), &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1], "two of three already sent in this window");
        assert_eq!(a.deferred[0].1, NOW - half + RATE_WINDOW, "when the first earlier send leaves the window");
        assert_eq!(a.throttles[0].1.recent, vec![(NOW - half, 2), (NOW, 1)]);
    }

    #[test]
    fn held_back_by_the_window_alone_they_all_come_due_when_it_frees() {
        // Sent in two claims 10 ms apart (2, then 1), the bucket refilled since: the three waiting
        // take the places of those three sends, a window after each, not a token apart.
        let (a_at, b_at) = (NOW - time::Duration::milliseconds(900), NOW - time::Duration::milliseconds(890));
        let throttle = Throttle { tokens: 0.0, refilled_at: b_at, recent: vec![(a_at, 2), (b_at, 1)] };
        let a = allot(&cands(&[7, 7, 7]), &HashMap::new(), &HashMap::from([(7, throttle)]), &unlimited_slots(), NOW);
        assert!(a.claimed.is_empty());
        let due: Vec<OffsetDateTime> = a.deferred.iter().map(|(_, at)| *at).collect();
        assert_eq!(due, vec![a_at + RATE_WINDOW, a_at + RATE_WINDOW, b_at + RATE_WINDOW]);
    }

    #[test]
    fn sends_older_than_the_window_are_forgotten() {
        let old = NOW - RATE_WINDOW - time::Duration::milliseconds(1);
        let throttle = Throttle { tokens: 3.0, refilled_at: old, recent: vec![(old, 3)] };
        let a = allot(&cands(&[7, 7, 7]), &HashMap::new(), &HashMap::from([(7, throttle)]), &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1, 2, 3]);
        assert_eq!(a.throttles[0].1.recent, vec![(NOW, 3)]);
    }

    /// Claims every 10 ms (each at the time of the poll, claiming only what is due) over a long
    /// backlog: no window of a second ever holds more than the rate, and the rate is kept.
    #[test]
    fn no_second_ever_holds_more_than_the_rate_and_the_rate_is_kept() {
        for rate in [1u32, 3, 20, 50] {
            let limits = HashMap::from([(
                7,
                DestinationLimits { max_in_flight: 1000, rate: f64::from(rate), hold_until: None },
            )]);
            let mut throttles: HashMap<i64, Throttle> = HashMap::new();
            let mut due: Vec<(i64, OffsetDateTime)> = (1..=400).map(|id| (id, NOW)).collect();
            let mut sent: Vec<OffsetDateTime> = Vec::new();
            for tick in 0..1000 {
                let now = NOW + time::Duration::milliseconds(10 * tick);
                let ready: Vec<DeliveryCandidate> = due
                    .iter()
                    .filter(|(_, at)| *at <= now)
                    .take(100)
                    .map(|(id, _)| DeliveryCandidate { id: *id, destination_id: 7 })
                    .collect();
                if ready.is_empty() {
                    continue;
                }
                let a = allot(&ready, &HashMap::new(), &throttles, &limits, now);
                for id in &a.claimed {
                    sent.push(now);
                    due.retain(|(d, _)| d != id);
                }
                for (id, at) in &a.deferred {
                    due.iter_mut().filter(|(d, _)| d == id).for_each(|d| d.1 = *at);
                }
                throttles = a.throttles.into_iter().collect();
            }
            for (i, first) in sent.iter().enumerate() {
                let within = sent[i..].iter().take_while(|t| **t < *first + time::Duration::seconds(1)).count();
                assert!(within <= rate as usize, "rate {rate}: {within} sends in the second from {first}");
            }
            // 10 s of claims: about 10 / RATE_WINDOW windows' worth.
            let expected = f64::from(rate) * 10.0 / RATE_WINDOW.as_secs_f64();
            #[allow(clippy::cast_precision_loss)]
            let got = sent.len().min(400) as f64;
            assert!(got >= (expected * 0.95).min(400.0), "rate {rate}: {got} sent, about {expected} expected");
        }
    }

    fn caps(max_in_flight: Option<u32>, rate: Option<u32>) -> PaceCaps {
        PaceCaps { max_in_flight, rate }
    }

    fn paced(rate: f64) -> DestinationLimits {
        DestinationLimits { max_in_flight: 100, rate, hold_until: None }
    }

    #[test]
    fn a_manual_attempt_waits_for_a_free_slot_under_its_own_in_flight_cap() {
        let got = admit_manual(None, 2, paced(10.0), caps(Some(2), None), NOW);
        let want = CapReached { cap: FullCap::InFlight(2), retry_at: NOW + Duration::from_secs(1) };
        assert_eq!(got, ManualAdmission::Full(want));
        assert!(matches!(admit_manual(None, 1, paced(10.0), caps(Some(2), None), NOW), ManualAdmission::Send(_)));
    }

    #[test]
    fn a_manual_attempt_takes_a_place_in_the_window_under_its_own_rate_cap() {
        let ms = |m: i64| NOW - time::Duration::milliseconds(m);
        let busy = Throttle { tokens: 3.0, refilled_at: ms(10), recent: vec![(ms(900), 2), (ms(10), 1)] };
        let got = admit_manual(Some(busy.clone()), 0, paced(3.0), caps(None, Some(3)), NOW);
        let want = CapReached { cap: FullCap::Rate(3), retry_at: ms(900) + RATE_WINDOW };
        assert_eq!(got, ManualAdmission::Full(want), "three sends in the window: the oldest frees the place");
        let ManualAdmission::Send(after) = admit_manual(Some(busy), 0, paced(4.0), caps(None, Some(4)), NOW) else {
            panic!("a fourth place is free under a cap of 4");
        };
        assert_eq!(after.recent, vec![(ms(900), 2), (ms(10), 1), (NOW, 1)]);
        assert_eq!(after.refilled_at, NOW);
    }

    #[test]
    fn a_counted_manual_attempt_holds_back_the_scheduled_ones_in_its_window() {
        let ManualAdmission::Send(after) = admit_manual(None, 0, paced(2.0), caps(None, Some(2)), NOW) else {
            panic!("an unused destination takes it");
        };
        let throttles = HashMap::from([(7, after)]);
        let limits = HashMap::from([(7, paced(2.0))]);
        let a = allot(&cands(&[7, 7]), &HashMap::new(), &throttles, &limits, NOW);
        assert_eq!(a.claimed, vec![1], "the manual attempt took one of the two places");
        assert_eq!(a.deferred, vec![(2, NOW + RATE_WINDOW)]);
    }

    #[test]
    fn a_manual_attempt_never_moves_the_bucket_back_in_time() {
        // A claim that took the lock after this attempt read the clock stored a later count.
        let later = NOW + time::Duration::milliseconds(40);
        let stored = Throttle { tokens: 0.0, refilled_at: later, recent: Vec::new() };
        let ManualAdmission::Send(after) = admit_manual(Some(stored), 0, paced(10.0), caps(None, None), NOW) else {
            panic!("no caps");
        };
        assert_eq!(after.refilled_at, later, "an earlier time would refill the bucket twice over 40 ms");
        assert_eq!(after.tokens, 0.0);
    }

    #[test]
    fn without_caps_a_manual_attempt_always_goes_and_is_still_counted() {
        let spent = Throttle { tokens: 0.0, refilled_at: NOW, recent: vec![(NOW, 50)] };
        let ManualAdmission::Send(after) = admit_manual(Some(spent), 500, paced(50.0), caps(None, None), NOW) else {
            panic!("no cap of its own: the pace and the bounds do not hold a manual attempt back");
        };
        assert_eq!(after.tokens, 0.0, "never below an empty bucket");
        assert_eq!(after.recent, vec![(NOW, 50), (NOW, 1)]);
        let held = DestinationLimits { hold_until: Some(NOW + time::Duration::minutes(5)), ..paced(1.0) };
        assert!(matches!(admit_manual(None, 0, held, caps(None, None), NOW), ManualAdmission::Send(_)));
    }
}
