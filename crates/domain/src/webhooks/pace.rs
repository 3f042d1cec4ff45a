//! The adaptive delivery pace of a destination: how many deliveries may be in flight to it at
//! once and how many per second, learnt from its answers (docs/webhooks.md, "Delivery pace").
//!
//! The rule is TCP's congestion control (AIMD with slow start), as Envoy's adaptive concurrency
//! and Netflix's concurrency-limits apply it to requests:
//! - each attempt answered 2xx within [`IN_TIME`] is a *good* signal; 429, 503, a timeout or a
//!   refused connection an *overload* signal; anything else (a 500, a 404) says nothing about
//!   load and changes nothing;
//! - an overload cuts the limit that was binding. The claim gives each delivery its *window*: the
//!   deliveries to its destination in flight once the claim's are sent, its own included
//!   ([`PaceSample::window`]). Refused in a window of 2 or more, the receiver takes so many at
//!   once: the concurrency halves (never below 1) and the halved value becomes the threshold;
//!   the refused delivery waits its own `Retry-After` and the destination goes on at the lower
//!   concurrency. Refused alone (a window of 1, or at a concurrency below 2), the receiver takes
//!   so many a second, or none at all: the rate halves (never below 1) and a `Retry-After` holds
//!   the whole destination. Only attempts *started after* the last decrease can decrease again:
//!   the requests that were already in flight under the old pace answer for the old pace (TCP
//!   reduces once per window for the same reason);
//! - below the threshold (and before any overload) each good answer adds 1 to the concurrency
//!   (slow start: it doubles per window); at or above it, 1/concurrency (one more per window);
//! - the rate grows by 1/s per good answer (it at most doubles per second of full use).
//!
//! Why cut only the binding limit: halving the rate and holding the destination on every refusal
//! of a receiver that takes `K` at a time starved it — each probe above `K` stopped all sending for
//! the `Retry-After` and took half the rate, so the rate settled near twice the good answers of
//! one cycle (about 18/s for `K = 4`, a fifth of what that receiver takes) and a backlog waited
//! tens of seconds.
//!
//! Why it converges: for a receiver of capacity `K` (at once), the concurrency climbs by one per
//! window while below `K` and halves when above, so it oscillates between `K/2` and `K + 1`
//! (Chiu and Jain 1989: additive increase with multiplicative decrease is the linear rule that
//! converges to the efficient, fair point, also between several senders — here several instances
//! share one state, so they are one sender). A cycle lasts about `K/2` windows of `~K` requests,
//! so about one attempt in `K²/4` is refused once settled (1.6 % for `K = 8`). The server settings
//! bound both values from above and a destination's own settings cap them; the claim enforces the
//! result exactly across instances.

use std::time::Duration;

use time::OffsetDateTime;

/// A 2xx slower than this says the receiver is at its limit: no increase.
pub const IN_TIME: Duration = Duration::from_secs(2);
/// Concurrency of a destination never measured.
pub const START_CONCURRENCY: f64 = 16.0;
/// Rate (per second) of a destination never measured.
pub const START_RATE: f64 = 200.0;
/// Longest hold a `Retry-After` puts on a whole destination (the refused delivery itself waits
/// its full `Retry-After`).
pub const MAX_HOLD: Duration = Duration::from_secs(300);

/// One attempt as the pace sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaceSample {
    /// When it was sent.
    pub started: OffsetDateTime,
    /// What its answer says.
    pub signal: PaceSignal,
    /// The deliveries to its destination in flight once it was sent, itself included (0: not
    /// sent by a claim, such as a manual retry).
    pub window: u32,
}

/// What one attempt says about the receiver's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaceSignal {
    /// 2xx in time.
    Good,
    /// Says nothing about load (a slow 2xx, a 500, a 404…).
    Neutral,
    /// 429, 503, a timeout or a refused connection; with the `Retry-After` it asked for.
    Overload(Option<Duration>),
}

/// The signal of an attempt answered `status` (none: no answer) after `took`.
pub fn signal(status: Option<u16>, overloaded: bool, retry_after: Option<Duration>, took: Duration) -> PaceSignal {
    match status {
        Some(s) if (200..300).contains(&s) && took <= IN_TIME => PaceSignal::Good,
        Some(429 | 503) => PaceSignal::Overload(retry_after),
        None if overloaded => PaceSignal::Overload(None),
        _ => PaceSignal::Neutral,
    }
}

/// A destination's stored pace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Deliveries in flight at once (fractional: additive increase adds fractions).
    pub concurrency: f64,
    /// Deliveries per second.
    pub rate: f64,
    /// Where slow start ends; `None` before the first overload.
    pub threshold: Option<f64>,
    /// The last decrease.
    pub decreased_at: Option<OffsetDateTime>,
    /// Nothing new is sent before this (a `Retry-After`).
    pub hold_until: Option<OffsetDateTime>,
}

/// The server's upper bounds (`webhooks.max_in_flight_per_destination`,
/// `webhooks.rate_per_destination`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaceBounds {
    /// Most deliveries in flight to one destination.
    pub max_in_flight: u32,
    /// Most deliveries per second to one destination.
    pub rate: f64,
}

/// A destination's own hard caps (`max_in_flight`, `rate_limit_per_second`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaceCaps {
    /// Its `max_in_flight`.
    pub max_in_flight: Option<u32>,
    /// Its `rate_limit_per_second`.
    pub rate: Option<u32>,
}

/// What the claim enforces for one destination now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DestinationLimits {
    /// Deliveries in flight at once.
    pub max_in_flight: u32,
    /// Deliveries per second (and the bucket's burst).
    pub rate: f64,
    /// Nothing is claimed before this.
    pub hold_until: Option<OffsetDateTime>,
}

impl Pace {
    /// The pace of a destination never measured, within `bounds`.
    pub fn start(bounds: PaceBounds) -> Self {
        Pace {
            concurrency: START_CONCURRENCY.min(f64::from(bounds.max_in_flight.max(1))),
            rate: START_RATE.min(bounds.rate.max(1.0)),
            threshold: None,
            decreased_at: None,
            hold_until: None,
        }
    }

    /// The pace after `attempts`, judged at `now`.
    pub fn after(self, attempts: &[PaceSample], bounds: PaceBounds, now: OffsetDateTime) -> Self {
        let mut p = self;
        let fresh = |started: OffsetDateTime| p.decreased_at.is_none_or(|d| started >= d);
        let (mut at_once, mut per_second) = (false, false);
        let mut retry_after: Option<Duration> = None;
        let mut good = 0u32;
        for a in attempts {
            match a.signal {
                PaceSignal::Good => good += 1,
                PaceSignal::Neutral => {}
                PaceSignal::Overload(wanted) => {
                    let at_once_refusal = a.window >= 2 && p.concurrency >= 2.0;
                    if fresh(a.started) {
                        if at_once_refusal {
                            at_once = true;
                        } else {
                            per_second = true;
                        }
                    }
                    if !at_once_refusal {
                        if let Some(r) = wanted {
                            retry_after = Some(retry_after.map_or(r, |h| h.max(r)));
                        }
                    }
                }
            }
        }
        if at_once || per_second {
            if at_once {
                p.concurrency = (p.concurrency / 2.0).max(1.0);
                p.threshold = Some(p.concurrency);
            }
            if per_second {
                p.rate = (p.rate / 2.0).max(1.0);
            }
            p.decreased_at = Some(now);
        } else if good > 0 {
            let g = f64::from(good);
            let slow_start = p.threshold.is_none_or(|t| p.concurrency < t);
            p.concurrency += if slow_start { g } else { g / p.concurrency };
            p.rate += g;
        }
        if let Some(h) = retry_after {
            let until = now + h.min(MAX_HOLD);
            p.hold_until = Some(p.hold_until.map_or(until, |u| u.max(until)));
        }
        p.concurrency = p.concurrency.min(f64::from(bounds.max_in_flight.max(1)));
        p.rate = p.rate.min(bounds.rate.max(1.0));
        p
    }

    /// What the claim enforces: the pace within the server's bounds and the destination's caps.
    pub fn limits(self, bounds: PaceBounds, caps: PaceCaps) -> DestinationLimits {
        let mut in_flight = bounds.max_in_flight.max(1);
        if let Some(c) = caps.max_in_flight {
            in_flight = in_flight.min(c.max(1));
        }
        // The fractional part is growth in progress: it counts once it reaches a whole request.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let paced = self.concurrency.floor().max(1.0) as u32;
        let mut rate = self.rate.min(bounds.rate).max(1.0);
        if let Some(r) = caps.rate {
            rate = rate.min(f64::from(r.max(1)));
        }
        DestinationLimits { max_in_flight: in_flight.min(paced), rate, hold_until: self.hold_until }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);
    const BOUNDS: PaceBounds = PaceBounds { max_in_flight: 256, rate: 10_000.0 };

    fn sample(started: OffsetDateTime, signal: PaceSignal, window: u32) -> PaceSample {
        PaceSample { started, signal, window }
    }

    fn goods(n: usize, at: OffsetDateTime) -> Vec<PaceSample> {
        vec![sample(at, PaceSignal::Good, 1); n]
    }

    #[test]
    fn slow_start_doubles_per_window_up_to_the_bounds() {
        let p = Pace::start(BOUNDS);
        let p = p.after(&goods(16, NOW), BOUNDS, NOW);
        assert!((p.concurrency - 32.0).abs() < 1e-9 && (p.rate - 216.0).abs() < 1e-9, "{p:?}");
        let p = p.after(&goods(1000, NOW), BOUNDS, NOW);
        assert!((p.concurrency - 256.0).abs() < 1e-9, "bounded: {p:?}");
    }

    #[test]
    fn refused_among_others_halves_the_concurrency_once_per_window_and_holds_nothing() {
        let p = Pace { concurrency: 20.0, rate: 400.0, threshold: None, decreased_at: None, hold_until: None };
        let earlier = NOW - time::Duration::milliseconds(50);
        let over = PaceSignal::Overload(Some(Duration::from_secs(1)));
        let p = p.after(&[sample(earlier, over, 20), sample(earlier, over, 20)], BOUNDS, NOW);
        assert!((p.concurrency - 10.0).abs() < 1e-9 && (p.rate - 400.0).abs() < 1e-9, "{p:?}");
        assert_eq!(p.threshold, Some(10.0));
        assert_eq!(p.hold_until, None, "the refused delivery waits its Retry-After, the destination goes on");
        // Answers to requests sent before the decrease do not decrease again.
        let later = NOW + time::Duration::milliseconds(10);
        let p = p.after(&[sample(earlier, PaceSignal::Overload(None), 10)], BOUNDS, later);
        assert!((p.concurrency - 10.0).abs() < 1e-9, "{p:?}");
        let p = p.after(&[sample(later, PaceSignal::Overload(None), 10)], BOUNDS, later);
        assert!((p.concurrency - 5.0).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn refused_alone_halves_the_rate_and_honours_retry_after() {
        let p = Pace { concurrency: 20.0, rate: 400.0, threshold: None, decreased_at: None, hold_until: None };
        let over = PaceSignal::Overload(Some(Duration::from_secs(1)));
        let p = p.after(&[sample(NOW, over, 1)], BOUNDS, NOW);
        assert!((p.concurrency - 20.0).abs() < 1e-9 && (p.rate - 200.0).abs() < 1e-9, "{p:?}");
        assert_eq!(p.hold_until, Some(NOW + time::Duration::seconds(1)));
        // Below a concurrency of 2 every refusal says "too many a second" (or "none at all").
        let one = Pace { concurrency: 1.5, rate: 50.0, threshold: Some(1.0), decreased_at: None, hold_until: None };
        let p = one.after(&[sample(NOW, PaceSignal::Overload(Some(Duration::from_secs(30))), 2)], BOUNDS, NOW);
        assert!((p.concurrency - 1.5).abs() < 1e-9 && (p.rate - 25.0).abs() < 1e-9, "{p:?}");
        assert_eq!(p.hold_until, Some(NOW + time::Duration::seconds(30)));
    }

    #[test]
    fn after_an_overload_growth_is_additive() {
        let p = Pace { concurrency: 8.0, rate: 100.0, threshold: Some(8.0), decreased_at: Some(NOW), hold_until: None };
        let p = p.after(&goods(8, NOW), BOUNDS, NOW);
        assert!((p.concurrency - 9.0).abs() < 1e-9, "one more per window: {p:?}");
    }

    /// Rounds of 20 ms in which the sender sends what its pace allows (the rate spread over the
    /// round, the concurrency at once) to a receiver taking `at_once` at a time and `per_second`
    /// a second; returns the share refused after the first 200 rounds and the sends per second.
    fn simulate(at_once: u32, per_second: f64) -> (f64, f64) {
        let mut p = Pace::start(BOUNDS);
        let (mut sent, mut refused, mut taken_this_second) = (0u32, 0u32, 0.0);
        let mut t = NOW;
        let rounds = 2000;
        for round in 0..rounds {
            t += time::Duration::milliseconds(20);
            if round % 50 == 0 {
                taken_this_second = 0.0;
            }
            if p.hold_until.is_some_and(|h| h > t) {
                continue;
            }
            let l = p.limits(BOUNDS, PaceCaps::default());
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let n = l.max_in_flight.min((l.rate / 50.0).ceil().max(1.0) as u32);
            let mut answers = Vec::new();
            for i in 0..n {
                let ok = i < at_once && taken_this_second < per_second;
                if ok {
                    taken_this_second += 1.0;
                }
                let s = if ok { PaceSignal::Good } else { PaceSignal::Overload(Some(Duration::from_secs(1))) };
                answers.push(sample(t, s, n));
                if round >= 200 {
                    sent += 1;
                    refused += u32::from(!ok);
                }
            }
            p = p.after(&answers, BOUNDS, t + time::Duration::milliseconds(1));
        }
        let seconds = f64::from(rounds - 200) * 0.02;
        (f64::from(refused) / f64::from(sent.max(1)), f64::from(sent - refused) / seconds)
    }

    #[test]
    fn a_receiver_taking_8_at_a_time_is_refused_rarely_once_settled_and_kept_busy() {
        let (share, per_second) = simulate(8, f64::INFINITY);
        assert!(share < 0.05, "{share} refused");
        // 8 at a time, a round each: 400 a second at most; the pace keeps most of it.
        assert!(per_second > 200.0, "{per_second} delivered a second");
    }

    #[test]
    fn a_receiver_taking_20_a_second_gets_about_that() {
        let (share, per_second) = simulate(64, 20.0);
        assert!(share < 0.1, "{share} refused");
        assert!(per_second > 10.0 && per_second <= 20.0, "{per_second} delivered a second");
    }

    #[test]
    fn caps_and_bounds_limit_what_the_claim_enforces() {
        let p = Pace { concurrency: 40.7, rate: 900.0, threshold: None, decreased_at: None, hold_until: None };
        let l = p.limits(BOUNDS, PaceCaps { max_in_flight: Some(10), rate: Some(50) });
        assert_eq!((l.max_in_flight, l.rate), (10, 50.0));
        let l = p.limits(PaceBounds { max_in_flight: 20, rate: 300.0 }, PaceCaps::default());
        assert_eq!((l.max_in_flight, l.rate), (20, 300.0));
        assert_eq!(p.limits(BOUNDS, PaceCaps::default()).max_in_flight, 40);
    }

    #[test]
    fn signals() {
        let fast = Duration::from_millis(5);
        assert_eq!(signal(Some(204), false, None, fast), PaceSignal::Good);
        assert_eq!(signal(Some(200), false, None, Duration::from_secs(3)), PaceSignal::Neutral);
        assert_eq!(signal(Some(500), false, None, fast), PaceSignal::Neutral);
        assert_eq!(signal(Some(429), false, Some(fast), fast), PaceSignal::Overload(Some(fast)));
        assert_eq!(signal(None, true, None, fast), PaceSignal::Overload(None));
        assert_eq!(signal(None, false, None, fast), PaceSignal::Neutral);
    }
}
