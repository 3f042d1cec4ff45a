//! The `/v1` rate limit: a number of requests per rolling window per credential, and the headers
//! of `docs/contract.md` that report it. The counting itself happens in storage under a row lock (see
//! `docs/rate-limit.md`); this module holds the policy and the wire format.

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
    /// `limit` requests per rolling hour (spec section 8: 1000 by default).
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
