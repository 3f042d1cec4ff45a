//! A destination's delivery figures (`GET /v1/webhooks/{id}/stats`, the settings page).

use time::OffsetDateTime;

use super::pace::{Pace, PaceBounds, PaceCaps};

/// The latest failed attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LastFailure {
    /// When the attempt started.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: OffsetDateTime,
    /// The HTTP status, null when the endpoint did not answer.
    pub status: Option<u16>,
    /// The transport error or the start of the answer.
    pub message: String,
}

/// Attempt durations, in milliseconds; null when there was no attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LatencyMs {
    /// Median.
    pub p50: Option<u64>,
    /// 95th percentile.
    pub p95: Option<u64>,
}

/// The pace wms delivers to the destination at now (adaptive, within the caps).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaceView {
    /// Deliveries in flight at once it may have now.
    pub max_in_flight: u32,
    /// Deliveries per second it may have now.
    pub rate_per_second: f64,
    /// Until when it gets nothing new (a `Retry-After`); null when not held.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub held_until: Option<OffsetDateTime>,
}

/// A destination's figures since a time.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DestinationStats {
    /// Start of the window.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub since: OffsetDateTime,
    /// Attempts that succeeded (2xx) since then.
    pub delivered: u64,
    /// Attempts that failed since then.
    pub failed_attempts: u64,
    /// Deliveries not finished now (waiting, being sent, or paused with the destination).
    pub pending: u64,
    /// Deliveries given up since then (every attempt failed, or the endpoint answered 410).
    pub exhausted: u64,
    /// `delivered / (delivered + failed_attempts)`, 0..1; 1 when there was no attempt.
    pub success_rate: f64,
    /// Attempt durations since then.
    pub latency_ms: LatencyMs,
    /// The latest failed attempt since then.
    pub last_failure: Option<LastFailure>,
    /// The pace now.
    pub pace: PaceView,
}

/// What the repository reads for the figures.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsFacts {
    /// Successful attempts since the start of the window.
    pub delivered: u64,
    /// Failed attempts since then.
    pub failed_attempts: u64,
    /// Unfinished deliveries now.
    pub pending: u64,
    /// Deliveries given up since then.
    pub exhausted: u64,
    /// Attempt durations since then.
    pub latency_ms: LatencyMs,
    /// The latest failed attempt since then.
    pub last_failure: Option<LastFailure>,
    /// The stored pace; `None` when never measured.
    pub pace: Option<Pace>,
    /// The destination's own caps.
    pub caps: PaceCaps,
}

impl StatsFacts {
    /// The figures since `since`, with the pace as the claim enforces it at `now`.
    pub fn into_stats(self, since: OffsetDateTime, bounds: PaceBounds, now: OffsetDateTime) -> DestinationStats {
        let limits = self.pace.unwrap_or_else(|| Pace::start(bounds)).limits(bounds, self.caps);
        DestinationStats {
            since,
            delivered: self.delivered,
            failed_attempts: self.failed_attempts,
            pending: self.pending,
            exhausted: self.exhausted,
            success_rate: success_rate(self.delivered, self.failed_attempts),
            latency_ms: self.latency_ms,
            last_failure: self.last_failure,
            pace: PaceView {
                max_in_flight: limits.max_in_flight,
                rate_per_second: (limits.rate * 10.0).round() / 10.0,
                held_until: limits.hold_until.filter(|h| *h > now),
            },
        }
    }
}

/// The share of successful attempts; 1 when there was none (nothing failed).
pub fn success_rate(delivered: u64, failed_attempts: u64) -> f64 {
    let total = delivered + failed_attempts;
    if total == 0 {
        1.0
    } else {
        // Counts stay far below 2^52: exact as f64.
        #[allow(clippy::cast_precision_loss)]
        let r = delivered as f64 / total as f64;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_rate_is_a_fraction() {
        assert!((success_rate(3, 1) - 0.75).abs() < 1e-12);
        assert!((success_rate(0, 0) - 1.0).abs() < 1e-12);
        assert!(success_rate(0, 5).abs() < 1e-12);
    }
}
