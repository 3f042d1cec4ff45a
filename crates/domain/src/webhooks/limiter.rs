//! The delivery limiter: per destination, a token bucket (sustained rate, burst) and a cap on
//! deliveries in flight at once. The queue adapter reads the destinations with deliveries due,
//! asks [`shares`] how many of each one's oldest to read, reads those candidates, the buckets and
//! the in-flight counts under lock, asks [`allot`], and writes the result back.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use time::OffsetDateTime;

use super::pace::DestinationLimits;

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

/// A destination's stored token bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    /// Tokens left at `refilled_at`.
    pub tokens: f64,
    /// When `tokens` was counted.
    pub refilled_at: OffsetDateTime,
}

/// What the limits allow for the candidates of one claim: who is sent now, who waits until when
/// (held back by the rate), and each destination's remaining tokens (as of `now`). A candidate
/// held back only because its destination has no free slot is in neither list: it stays due and
/// untouched, and is claimed as soon as a slot frees (writing it back "for later" cost a
/// statement per claim and delayed it by a guessed backoff).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allotment {
    /// Deliveries to send now, in candidate order.
    pub claimed: Vec<i64>,
    /// Deliveries held back by the rate, with the time they come due.
    pub deferred: Vec<(i64, OffsetDateTime)>,
    /// Each looked-at destination's tokens after the claim, in destination id order.
    pub tokens: Vec<(i64, f64)>,
    /// Each destination given deliveries, with its deliveries in flight once they are sent (the
    /// window the pace judges a refusal by), in destination id order.
    pub windows: Vec<(i64, u32)>,
}

/// Allots the `candidates` (oldest first) against each destination's bucket (a missing one is
/// full) refilled up to `now`, and its free slots (`max_in_flight` minus `in_flight`), with each
/// destination's limits (its pace within the bounds and its caps; one held by a `Retry-After`
/// gets nothing until then).
pub fn allot(
    candidates: &[DeliveryCandidate],
    in_flight: &HashMap<i64, i64>,
    buckets: &HashMap<i64, TokenBucket>,
    limits: &HashMap<i64, DestinationLimits>,
    now: OffsetDateTime,
) -> Allotment {
    struct State {
        slots: i64,
        tokens: f64,
        rate_waiting: u32,
        in_flight: i64,
        claimed: i64,
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
            let burst = limit.rate.max(1.0);
            let bucket =
                buckets.get(&c.destination_id).copied().unwrap_or(TokenBucket { tokens: burst, refilled_at: now });
            let elapsed = (now - bucket.refilled_at).as_seconds_f64().max(0.0);
            let held = limit.hold_until.is_some_and(|h| h > now);
            let in_flight = in_flight.get(&c.destination_id).copied().unwrap_or(0);
            State {
                slots: if held { 0 } else { i64::from(limit.max_in_flight) - in_flight },
                tokens: (bucket.tokens + elapsed * limit.rate).min(burst),
                rate_waiting: 0,
                in_flight,
                claimed: 0,
            }
        });
        if s.slots > 0 && s.tokens >= 1.0 {
            s.slots -= 1;
            s.tokens -= 1.0;
            s.claimed += 1;
            out.claimed.push(c.id);
        } else if s.tokens < 1.0 {
            // Spread the waiting ones at the sustained rate, so they come due one token apart.
            let wait = (1.0 - s.tokens + f64::from(s.rate_waiting)) / limit.rate.max(0.001);
            s.rate_waiting += 1;
            out.deferred.push((c.id, now + Duration::from_secs_f64(wait.min(3600.0))));
        }
        // Else: no free slot. Left due, untouched.
    }
    out.windows = states
        .iter()
        .filter(|(_, s)| s.claimed > 0)
        .map(|(id, s)| (*id, u32::try_from(s.in_flight + s.claimed).unwrap_or(u32::MAX)))
        .collect();
    out.tokens = states.into_iter().map(|(id, s)| (id, s.tokens)).collect();
    out
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

    fn bucket(tokens: f64, secs_ago: i64) -> TokenBucket {
        TokenBucket { tokens, refilled_at: NOW - time::Duration::seconds(secs_ago) }
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
        assert_eq!(a.tokens, vec![(7, 2.0), (8, 2.0)], "only the claimed ones took tokens");
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
        assert_eq!(a.tokens, vec![(7, 3.0)]);
    }

    #[test]
    fn rate_limit_spreads_the_waiting_ones_at_the_rate() {
        let buckets = HashMap::from([(7, bucket(1.0, 0))]);
        let a = allot(&cands(&[7, 7, 7]), &HashMap::new(), &buckets, &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1]);
        let waits: Vec<f64> = a.deferred.iter().map(|(_, at)| (*at - NOW).as_seconds_f64()).collect();
        assert!((waits[0] - 1.0 / 3.0).abs() < 1e-6 && (waits[1] - 2.0 / 3.0).abs() < 1e-6, "{waits:?}");
        assert_eq!(a.tokens, vec![(7, 0.0)]);
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
        let buckets =
            HashMap::from([(7, TokenBucket { tokens: 0.0, refilled_at: NOW - time::Duration::milliseconds(500) })]);
        let a = allot(&cands(&[7, 7]), &HashMap::new(), &buckets, &unlimited_slots(), NOW);
        assert_eq!(a.claimed, vec![1]);
        assert!((a.tokens[0].1 - 0.5).abs() < 1e-9, "{:?}", a.tokens);
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
}
