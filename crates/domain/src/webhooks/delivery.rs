//! One delivery attempt: sign, send, judge the answer, schedule what comes next.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

use super::model::DeliveryStatus;
use super::pace::signal;
use super::ports::{
    AttemptRecord, ClaimLimits, ClaimedDelivery, DeliveryQueue, DestinationEffect, OutboundRequest, TransportOutcome,
    WebhookTransport,
};
use super::retry::{classify, parse_retry_after, AttemptOutcome, RetryAfterBounds, RetrySchedule};
use super::signing::{signature_header, SigningSecret};
use crate::common::error::RepoError;
use crate::common::ports::{Clock, RandomSource, SecretCipher, SecretPlace};

/// The `user-agent` of every delivery.
pub const USER_AGENT: &str = concat!("wms-webhooks/", env!("CARGO_PKG_VERSION"));

/// The secret a destination had before its last rotation, while it still signs at `now`: until
/// `until`, the end of the rotation's grace (excluded), and never without one.
pub fn previous_secret_at<T>(previous: Option<T>, until: Option<OffsetDateTime>, now: OffsetDateTime) -> Option<T> {
    previous.filter(|_| until.is_some_and(|until| until > now))
}

/// The rules of delivery, from configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryPolicy {
    /// Delays between attempts.
    pub schedule: RetrySchedule,
    /// Bounds on a receiver's `Retry-After`.
    pub retry_after: RetryAfterBounds,
    /// Failures for this long deactivate a destination.
    pub auto_disable_after: Duration,
    /// Claim lease and per-destination limits.
    pub limits: ClaimLimits,
}

/// Sends claimed deliveries and works out what happens next. Shared by the background workers
/// and by the manual redelivery and test endpoints.
pub struct DeliveryEngine {
    /// The queue in storage.
    pub queue: Arc<dyn DeliveryQueue>,
    /// The HTTP client.
    pub transport: Arc<dyn WebhookTransport>,
    /// Opens the sealed signing secrets.
    pub cipher: Arc<dyn SecretCipher>,
    /// The time.
    pub clock: Arc<dyn Clock>,
    /// Jitter.
    pub random: Arc<dyn RandomSource>,
    /// The rules.
    pub policy: DeliveryPolicy,
}

impl std::fmt::Debug for DeliveryEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeliveryEngine").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl DeliveryEngine {
    /// The signed request for `claim` at `now`.
    ///
    /// # Errors
    /// When the stored secret cannot be opened (the encryption key changed).
    pub fn request(&self, claim: &ClaimedDelivery, now: OffsetDateTime) -> Result<OutboundRequest, String> {
        let place = SecretPlace::webhook_secret(claim.workspace_id.0, claim.destination_id.0);
        let open = |sealed: &[u8]| -> Result<SigningSecret, String> {
            let plain =
                self.cipher.open(sealed, &place).map_err(|e| format!("the signing secret cannot be opened: {e}"))?;
            let text = String::from_utf8(plain).map_err(|_| "the signing secret is not text".to_owned())?;
            SigningSecret::parse(&text).map_err(|e| e.to_string())
        };
        let mut secrets = vec![open(&claim.secret_sealed)?];
        if let Some(prev) = &claim.previous_secret_sealed {
            secrets.push(open(prev)?);
        }
        let timestamp = now.unix_timestamp();
        let signature = signature_header(&secrets, &claim.message_id, timestamp, claim.payload.as_bytes());
        Ok(OutboundRequest {
            url: claim.url.clone(),
            headers: vec![
                ("webhook-id", claim.message_id.clone()),
                ("webhook-timestamp", timestamp.to_string()),
                ("webhook-signature", signature),
                ("content-type", "application/json".to_owned()),
                ("user-agent", USER_AGENT.to_owned()),
            ],
            static_headers: match &claim.headers_sealed {
                Some(sealed) => {
                    super::headers::open(self.cipher.as_ref(), claim.workspace_id.0, claim.destination_id.0, sealed)?
                        .into_iter()
                        .collect()
                }
                None => claim.headers.clone(),
            },
            body: claim.payload.clone(),
        })
    }

    /// Makes one attempt and returns its record (not yet written).
    pub async fn attempt(&self, claim: &ClaimedDelivery) -> AttemptRecord {
        let started = self.clock.now();
        let outcome = match self.request(claim, started) {
            Ok(req) => self.transport.send(req).await,
            Err(e) => TransportOutcome {
                status: None,
                retry_after: None,
                excerpt: String::new(),
                error: Some(e),
                duration: Duration::ZERO,
                overloaded: false,
            },
        };
        self.conclude(claim, started, &outcome)
    }

    /// Makes one attempt now and writes it.
    ///
    /// # Errors
    /// When the attempt cannot be written.
    pub async fn deliver_now(&self, claim: &ClaimedDelivery) -> Result<AttemptRecord, RepoError> {
        let record = self.attempt(claim).await;
        self.queue
            .record(std::slice::from_ref(&record), self.policy.auto_disable_after, self.policy.limits.bounds())
            .await?;
        Ok(record)
    }

    /// Judges `outcome` of the attempt that started at `attempted_at`.
    pub fn conclude(
        &self,
        claim: &ClaimedDelivery,
        attempted_at: OffsetDateTime,
        outcome: &TransportOutcome,
    ) -> AttemptRecord {
        let retry_after = outcome.retry_after.as_deref().and_then(|v| parse_retry_after(v, attempted_at));
        let pace = signal(
            outcome.status,
            outcome.overloaded,
            retry_after.map(|r| self.policy.retry_after.clamp(r)),
            outcome.duration,
        );
        let (status, next, effect) = match classify(outcome.status, retry_after) {
            AttemptOutcome::Delivered => (DeliveryStatus::Succeeded, None, DestinationEffect::Healthy),
            AttemptOutcome::Gone => (DeliveryStatus::Failed, None, DestinationEffect::Gone),
            AttemptOutcome::Failed { retry_after } => {
                let attempts = u32::try_from(claim.attempt_number).unwrap_or(u32::MAX);
                let delay = if claim.retries_on_failure {
                    self.policy.schedule.delay_after(attempts, self.random.as_ref())
                } else {
                    None
                };
                // Retry-After replaces the scheduled delay but never adds attempts.
                match delay.map(|d| retry_after.map_or(d, |r| self.policy.retry_after.clamp(r))) {
                    Some(d) => (DeliveryStatus::Pending, Some(attempted_at + d), DestinationEffect::Failing),
                    None => (DeliveryStatus::Failed, None, DestinationEffect::Failing),
                }
            }
        };
        AttemptRecord {
            delivery_id: claim.delivery_id,
            workspace_id: claim.workspace_id,
            destination_id: claim.destination_id,
            attempt_number: claim.attempt_number,
            trigger: claim.trigger,
            attempted_at,
            status_code: outcome.status,
            error: outcome.error.clone(),
            duration_ms: i64::try_from(outcome.duration.as_millis()).unwrap_or(i64::MAX),
            response_excerpt: outcome.excerpt.clone(),
            next_attempt_at: next,
            status,
            effect,
            pace,
            window: claim.window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::{MockClock, MockRandomSource, MockSecretCipher};
    use crate::webhooks::model::{AttemptTrigger, DeliveryId, DestinationId};
    use crate::webhooks::ports::{MockDeliveryQueue, MockWebhookTransport};
    use crate::workspace::WorkspaceId;
    use time::macros::datetime;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    #[test]
    fn the_previous_secret_signs_only_until_the_end_of_its_grace() {
        let now = datetime!(2026-03-01 10:00:00 UTC);
        let later = datetime!(2026-03-02 10:00:00 UTC);
        assert_eq!(previous_secret_at(Some("old"), Some(later), now), Some("old"));
        assert_eq!(previous_secret_at(Some("old"), Some(now), now), None);
        assert_eq!(previous_secret_at(Some("old"), None, now), None);
        assert_eq!(previous_secret_at(None::<&str>, Some(later), now), None);
    }
    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    fn claim(attempt_number: i32) -> ClaimedDelivery {
        ClaimedDelivery {
            delivery_id: DeliveryId(5),
            workspace_id: WorkspaceId(1),
            destination_id: DestinationId(2),
            url: "https://hooks.example.com/x".into(),
            message_id: "msg_abc".into(),
            payload: r#"{"type":"thread.created"}"#.into(),
            secret_sealed: b"sealed:current".to_vec(),
            previous_secret_sealed: None,
            attempt_number,
            trigger: AttemptTrigger::Scheduled,
            retries_on_failure: true,
            headers: Vec::new(),
            headers_sealed: None,
            window: 3,
        }
    }

    fn engine(transport: MockWebhookTransport) -> DeliveryEngine {
        let mut cipher = MockSecretCipher::new();
        cipher.expect_open().returning(|sealed, _| match sealed {
            b"sealed:current" => Ok(SECRET.as_bytes().to_vec()),
            b"sealed:previous" => Ok(format!("whsec_{}", "A".repeat(43) + "=").into_bytes()),
            _ => Err(anyhow::anyhow!("wrong key")),
        });
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        let mut random = MockRandomSource::new();
        // The bottom of the jitter range: delays are the schedule's.
        random.expect_fill().returning(|b| b.fill(0));
        DeliveryEngine {
            queue: Arc::new(MockDeliveryQueue::new()),
            transport: Arc::new(transport),
            cipher: Arc::new(cipher),
            clock: Arc::new(clock),
            random: Arc::new(random),
            policy: DeliveryPolicy {
                schedule: RetrySchedule::standard(),
                retry_after: RetryAfterBounds::default(),
                auto_disable_after: Duration::from_secs(5 * 86400),
                limits: ClaimLimits {
                    lease: Duration::from_secs(60),
                    max_in_flight: 4,
                    claim_lease: Duration::from_secs(5),
                    rate_per_sec: 10.0,
                },
            },
        }
    }

    fn answer(status: u16, retry_after: Option<&str>) -> TransportOutcome {
        TransportOutcome {
            status: Some(status),
            retry_after: retry_after.map(str::to_owned),
            excerpt: "nope".into(),
            error: None,
            duration: Duration::from_millis(12),
            overloaded: false,
        }
    }

    fn near(a: Option<OffsetDateTime>, b: OffsetDateTime) -> bool {
        a.is_some_and(|a| (a - b).abs() < time::Duration::milliseconds(5))
    }

    #[test]
    fn request_is_signed_with_standard_headers() {
        let e = engine(MockWebhookTransport::new());
        let req = e.request(&claim(1), NOW).expect("request");
        let h = |n: &str| req.headers.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()).unwrap_or_default();
        assert_eq!(h("webhook-id"), "msg_abc");
        assert_eq!(h("webhook-timestamp"), NOW.unix_timestamp().to_string());
        let expected =
            SigningSecret::parse(SECRET).map(|s| s.sign("msg_abc", NOW.unix_timestamp(), req.body.as_bytes()));
        assert_eq!(Some(h("webhook-signature")), expected.ok());
        assert_eq!(h("content-type"), "application/json");
        assert!(h("user-agent").starts_with("wms-webhooks/"));
    }

    #[test]
    fn rotation_adds_the_previous_signature() {
        let e = engine(MockWebhookTransport::new());
        let mut c = claim(1);
        c.previous_secret_sealed = Some(b"sealed:previous".to_vec());
        let req = e.request(&c, NOW).expect("request");
        let sig =
            req.headers.iter().find(|(k, _)| *k == "webhook-signature").map(|(_, v)| v.clone()).unwrap_or_default();
        assert_eq!(sig.split(' ').count(), 2);
        assert!(sig.split(' ').all(|s| s.starts_with("v1,")));
    }

    #[test]
    fn success_finishes_the_delivery() {
        let e = engine(MockWebhookTransport::new());
        let r = e.conclude(&claim(1), NOW, &answer(204, None));
        assert_eq!(
            (r.status, r.effect, r.next_attempt_at),
            (DeliveryStatus::Succeeded, DestinationEffect::Healthy, None)
        );
        assert_eq!(r.duration_ms, 12);
    }

    #[test]
    fn failures_follow_the_schedule_then_give_up() {
        let e = engine(MockWebhookTransport::new());
        let expected = [5i64, 300, 1800, 7200, 18000, 36000, 36000];
        for (i, secs) in expected.iter().enumerate() {
            let r = e.conclude(&claim(i as i32 + 1), NOW, &answer(500, None));
            assert_eq!(r.status, DeliveryStatus::Pending);
            assert!(
                near(r.next_attempt_at, NOW + time::Duration::seconds(*secs)),
                "attempt {}: {:?}",
                i + 1,
                r.next_attempt_at
            );
        }
        let last = e.conclude(&claim(8), NOW, &answer(500, None));
        assert_eq!((last.status, last.next_attempt_at), (DeliveryStatus::Failed, None));
        assert_eq!(last.effect, DestinationEffect::Failing);
    }

    #[test]
    fn retry_after_is_honoured_within_bounds_on_429_and_503() {
        let e = engine(MockWebhookTransport::new());
        let r = e.conclude(&claim(1), NOW, &answer(429, Some("120")));
        assert_eq!(r.next_attempt_at, Some(NOW + time::Duration::seconds(120)));
        let r = e.conclude(&claim(1), NOW, &answer(503, Some("9999999")));
        assert_eq!(r.next_attempt_at, Some(NOW + time::Duration::hours(24)));
        let r = e.conclude(&claim(1), NOW, &answer(500, Some("120")));
        assert!(near(r.next_attempt_at, NOW + time::Duration::seconds(5)));
    }

    #[test]
    fn gone_disables_and_one_off_attempts_do_not_retry() {
        let e = engine(MockWebhookTransport::new());
        let r = e.conclude(&claim(1), NOW, &answer(410, None));
        assert_eq!((r.status, r.effect), (DeliveryStatus::Failed, DestinationEffect::Gone));
        let mut c = claim(3);
        c.retries_on_failure = false;
        c.trigger = AttemptTrigger::Manual;
        let r = e.conclude(&c, NOW, &answer(500, None));
        assert_eq!((r.status, r.next_attempt_at), (DeliveryStatus::Failed, None));
    }

    #[tokio::test]
    async fn unreadable_secret_fails_without_sending() {
        let mut transport = MockWebhookTransport::new();
        transport.expect_send().never();
        let e = engine(transport);
        let mut c = claim(1);
        c.secret_sealed = b"other key".to_vec();
        let r = e.attempt(&c).await;
        assert_eq!(r.status, DeliveryStatus::Pending);
        assert!(r.error.is_some_and(|e| e.contains("cannot be opened")));
    }

    #[tokio::test]
    async fn attempt_sends_and_records_the_answer() {
        let mut transport = MockWebhookTransport::new();
        transport.expect_send().times(1).returning(|req| {
            assert_eq!(req.url, "https://hooks.example.com/x");
            answer(200, None)
        });
        let r = engine(transport).attempt(&claim(1)).await;
        assert_eq!((r.status_code, r.status), (Some(200), DeliveryStatus::Succeeded));
        assert_eq!(r.attempted_at, NOW);
    }
}
