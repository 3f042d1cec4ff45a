//! The rate limit (`docs/rate-limit.md`): a number of requests per rolling window per credential
//! (a key, or a member across their tokens, sessions and the assistant), which requests a counted
//! batch admits and which it refuses with 429 `rate_limited` and their `Retry-After`
//! ([`spread`]), and the headers of `docs/contract.md` that report it. The window itself is
//! counted in storage under a row lock, once for every entry point (`wms_rate_window`).

use std::fmt::Write as _;

/// The name of the policy in `RateLimit-Policy` and `RateLimit`.
pub const POLICY_NAME: &str = "hourly";

/// How many requests one credential may make per rolling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimitPolicy {
    /// Requests admitted per window (at least 1).
    pub limit: u32,
    /// The window, in seconds.
    pub window_secs: u32,
}

impl RateLimitPolicy {
    /// `limit` requests per rolling hour (`docs/contract.md`, "Rate limit": 1000 by default).
    pub fn per_hour(limit: u32) -> Self {
        Self { limit: limit.max(1), window_secs: 3600 }
    }
}

/// Where a credential stands after a request was counted (or refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitStatus {
    /// The policy applied.
    pub policy: RateLimitPolicy,
    /// Requests still admitted in the current window.
    pub remaining: u32,
    /// Seconds until the oldest counted request leaves the window and `remaining` grows again
    /// (0 when nothing is counted).
    pub reset_after_secs: u32,
    /// When refused: seconds until a request will be admitted.
    pub retry_after_secs: Option<u32>,
    /// The shared clock's time of the decision, in epoch seconds.
    pub now_epoch: i64,
}

impl RateLimitStatus {
    /// Whether the request was refused.
    pub fn is_limited(&self) -> bool {
        self.retry_after_secs.is_some()
    }

    /// The response headers of `docs/contract.md`, in order: `RateLimit-Policy`, `RateLimit`,
    /// `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds).
    /// `Retry-After` is the error response's business.
    pub fn headers(&self) -> [(&'static str, String); 5] {
        let mut policy = String::with_capacity(32);
        let _ = write!(policy, "\"{POLICY_NAME}\";q={};w={}", self.policy.limit, self.policy.window_secs);
        let mut limit = String::with_capacity(32);
        let _ = write!(limit, "\"{POLICY_NAME}\";r={};t={}", self.remaining, self.reset_after_secs);
        [
            ("ratelimit-policy", policy),
            ("ratelimit", limit),
            ("x-ratelimit-limit", self.policy.limit.to_string()),
            ("x-ratelimit-remaining", self.remaining.to_string()),
            ("x-ratelimit-reset", (self.now_epoch + i64::from(self.reset_after_secs)).to_string()),
        ]
    }
}

/// A window's answer for a batch of requests counted together under one row lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowCount {
    /// How many of the batch the window admitted (the first ones, in arrival order).
    pub admitted: u32,
    /// Requests still admitted in the window after the batch.
    pub remaining: u32,
    /// Seconds until the oldest counted request leaves the window.
    pub reset_after_secs: u32,
    /// Seconds until a request will be admitted; set when some of the batch were refused.
    pub retry_after_secs: Option<u32>,
    /// The shared clock's time of the count, in epoch seconds.
    pub now_epoch: i64,
}

impl WindowCount {
    /// Where a credential stands after the count, admitted: the window's figures, with the time
    /// to reset never longer than the window (`t` ≤ `w`: the oldest counted request, counted in
    /// the current second, leaves the window at most `w` seconds from now, which the storage's
    /// whole-second arithmetic rounds up to `w + 1`).
    pub fn status(&self, policy: RateLimitPolicy) -> RateLimitStatus {
        RateLimitStatus {
            policy,
            remaining: self.remaining,
            reset_after_secs: self.reset_after_secs.min(policy.window_secs),
            retry_after_secs: None,
            now_epoch: self.now_epoch,
        }
    }
}

/// The window answered a refusal without saying when to retry (a storage bug, never a 429).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the rate-limit window refused requests without a retry_after")]
pub struct RefusalWithoutRetry;

/// The status of each of the `count` requests of a batch that `window` counted under `policy`:
/// the first `admitted` are admitted, `remaining` counting down to the window's value after the
/// batch as one-by-one admissions would have reported; the others are refused (429) with the
/// window's `Retry-After` (at least 1 second).
///
/// # Errors
/// [`RefusalWithoutRetry`] when some were refused and the window gave no `retry_after`.
pub fn spread(
    policy: RateLimitPolicy,
    window: WindowCount,
    count: u32,
) -> Result<Vec<RateLimitStatus>, RefusalWithoutRetry> {
    let admitted = window.admitted.min(count);
    let retry = window.retry_after_secs.map(|r| r.clamp(1, policy.window_secs.max(1)));
    if admitted < count && retry.is_none() {
        return Err(RefusalWithoutRetry);
    }
    let status = window.status(policy);
    Ok((0..count)
        .map(|i| {
            if i < admitted {
                RateLimitStatus { remaining: status.remaining.saturating_add(admitted - 1 - i), ..status }
            } else {
                RateLimitStatus { retry_after_secs: retry, ..status }
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(remaining: u32, reset: u32, retry: Option<u32>) -> RateLimitStatus {
        RateLimitStatus {
            policy: RateLimitPolicy::per_hour(1000),
            remaining,
            reset_after_secs: reset,
            retry_after_secs: retry,
            now_epoch: 1_800_000_000,
        }
    }

    #[test]
    fn the_time_to_reset_and_retry_never_exceeds_the_window() {
        let policy = RateLimitPolicy::per_hour(2);
        let window = WindowCount {
            admitted: 1,
            remaining: 0,
            reset_after_secs: 3601,
            retry_after_secs: Some(3601),
            now_epoch: 1_800_000_000,
        };
        let all = spread(policy, window, 2).expect("spread");
        assert_eq!(
            all.iter().map(|s| (s.reset_after_secs, s.retry_after_secs)).collect::<Vec<_>>(),
            [(3600, None), (3600, Some(3600))]
        );
        assert!(all[1].headers()[1].1.ends_with(";t=3600"));
        assert_eq!(window.status(policy).reset_after_secs, 3600);
    }

    #[test]
    fn headers_follow_the_contract() {
        let h = status(999, 3601, None).headers();
        assert_eq!(h[0], ("ratelimit-policy", r#""hourly";q=1000;w=3600"#.to_owned()));
        assert_eq!(h[1], ("ratelimit", r#""hourly";r=999;t=3601"#.to_owned()));
        assert_eq!(h[2], ("x-ratelimit-limit", "1000".to_owned()));
        assert_eq!(h[3], ("x-ratelimit-remaining", "999".to_owned()));
        assert_eq!(h[4], ("x-ratelimit-reset", "1800003601".to_owned()));
    }

    #[test]
    fn a_refusal_is_limited() {
        assert!(status(0, 12, Some(12)).is_limited());
        assert!(!status(0, 12, None).is_limited());
    }

    fn window(admitted: u32, remaining: u32, retry: Option<u32>) -> WindowCount {
        WindowCount { admitted, remaining, reset_after_secs: 60, retry_after_secs: retry, now_epoch: 1_800_000_000 }
    }

    #[test]
    fn a_batch_admits_its_first_requests_counting_down_and_refuses_the_rest() {
        let policy = RateLimitPolicy::per_hour(5);
        let got = spread(policy, window(2, 0, Some(30)), 4).expect("consistent");
        let seen: Vec<(u32, Option<u32>)> = got.iter().map(|s| (s.remaining, s.retry_after_secs)).collect();
        assert_eq!(seen, [(1, None), (0, None), (0, Some(30)), (0, Some(30))]);
        assert!(got[2].is_limited() && !got[1].is_limited());
    }

    #[test]
    fn a_whole_batch_admitted_needs_no_retry() {
        let got = spread(RateLimitPolicy::per_hour(10), window(3, 7, None), 3).expect("consistent");
        assert_eq!(got.iter().map(|s| s.remaining).collect::<Vec<_>>(), [9, 8, 7]);
        assert!(got.iter().all(|s| !s.is_limited()));
    }

    #[test]
    fn a_refusal_waits_at_least_a_second_and_always_says_how_long() {
        let got = spread(RateLimitPolicy::per_hour(1), window(0, 0, Some(0)), 1).expect("consistent");
        assert_eq!(got[0].retry_after_secs, Some(1));
        assert_eq!(spread(RateLimitPolicy::per_hour(1), window(0, 0, None), 1), Err(RefusalWithoutRetry));
    }

    #[test]
    fn a_zero_limit_is_raised_to_one() {
        assert_eq!(RateLimitPolicy::per_hour(0).limit, 1);
    }
}

/// The rate-limit windows of members: one per (workspace, user), shared by all of the member's
/// login tokens and sessions, on `/v1` and the assistant endpoints alike (docs/contract.md, "Abuse
/// limits"). `/v1` counts a login token's request in its credential check; the assistant endpoints
/// count through this port, for a token or a session.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait::async_trait]
pub trait MemberWindows: Send + Sync {
    /// Counts one request of the member of `workspace` against their window under `policy`: the
    /// window after it, with `retry_after_secs` set when the request was refused.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn admit(
        &self,
        workspace: crate::workspace::WorkspaceId,
        user: crate::users::UserId,
        policy: RateLimitPolicy,
    ) -> Result<RateLimitStatus, crate::common::error::RepoError>;
}
