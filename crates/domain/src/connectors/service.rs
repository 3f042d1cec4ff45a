//! Connector rules: dispatching queued messages and accepting platform callbacks.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};

use super::model::{ChannelCredentials, GatewayError, OutboundRequest};
use super::ports::{ChannelGateway, Dispatch, DispatchQueue};
use crate::common::error::RepoError;
use crate::common::ports::{Clock, SecretCipher, SecretPlace};

/// How long a claimed message is leased to its dispatcher.
pub const LEASE_SECS: i64 = 120;
/// Attempts before a message that keeps failing transiently is given up.
pub const MAX_ATTEMPTS: i32 = 12;
/// Pause when the platform rate-limits without saying for how long.
pub const DEFAULT_PAUSE_SECS: u64 = 60;
/// Longest pause honoured from a platform's answer.
pub const MAX_PAUSE_SECS: u64 = 3600;

/// Delay before retry number `attempts` (5 s, doubling, at most 15 minutes), or `None` to give up.
pub fn retry_delay(attempts: i32) -> Option<Duration> {
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let exp = u32::try_from(attempts.clamp(1, 12) - 1).unwrap_or(0);
    Some(Duration::seconds((5i64 << exp).min(900)))
}

/// The dispatch attempts to store for a message whose send the platform rate-limited, given the
/// attempts stored now (the claim counted this one): the platform's limit is not the message's
/// fault, so this attempt does not count, and none is ever below zero.
pub fn attempts_after_rate_limit(stored: i32) -> i32 {
    (stored - 1).max(0)
}

/// What one dispatch pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchReport {
    /// Messages claimed.
    pub claimed: usize,
    /// Accepted by the platform.
    pub sent: usize,
    /// Failed for good.
    pub failed: usize,
    /// Put back for a later attempt (transient error or rate limit).
    pub deferred: usize,
}

/// The dispatcher's use case: claiming queued messages and sending each through its platform, over
/// the queue, the platforms' send APIs, the cipher that opens the channels' credentials and the
/// clock of retries and pauses.
#[derive(Clone)]
pub struct DispatchService {
    queue: Arc<dyn DispatchQueue>,
    gateway: Arc<dyn ChannelGateway>,
    cipher: Arc<dyn SecretCipher>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for DispatchService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatchService").finish_non_exhaustive()
    }
}

impl DispatchService {
    /// The service over its ports.
    pub fn new(
        queue: Arc<dyn DispatchQueue>,
        gateway: Arc<dyn ChannelGateway>,
        cipher: Arc<dyn SecretCipher>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { queue, gateway, cipher, clock }
    }

    /// Claims up to `limit` queued messages and sends each through its platform.
    ///
    /// # Errors
    /// Infrastructure failures of the queue (a platform failure is recorded on its message).
    pub async fn dispatch(&self, limit: i64) -> Result<DispatchReport, RepoError> {
        let queue = self.queue.as_ref();
        let claimed = queue.claim(limit, LEASE_SECS).await?;
        let mut report = DispatchReport { claimed: claimed.len(), ..DispatchReport::default() };
        for d in &claimed {
            match self.send_one(d).await {
                Ok(platform_id) => {
                    queue.sent(d, &platform_id).await?;
                    report.sent += 1;
                }
                Err(GatewayError::Rejected { reason }) => {
                    queue.failed(d, &reason).await?;
                    report.failed += 1;
                }
                Err(GatewayError::RateLimited { retry_after_secs }) => {
                    let secs = retry_after_secs.unwrap_or(DEFAULT_PAUSE_SECS).clamp(1, MAX_PAUSE_SECS);
                    let until = self.clock.now() + Duration::seconds(i64::try_from(secs).unwrap_or(60));
                    queue.pause_channel(d, until).await?;
                    report.deferred += 1;
                }
                Err(GatewayError::Transient(reason)) => match retry_delay(d.attempts) {
                    Some(delay) => {
                        queue.retry_at(d, self.clock.now() + delay).await?;
                        report.deferred += 1;
                    }
                    None => {
                        queue.failed(d, &format!("gave up after {} attempts: {reason}", d.attempts)).await?;
                        report.failed += 1;
                    }
                },
            }
        }
        Ok(report)
    }

    async fn send_one(&self, d: &Dispatch) -> Result<String, GatewayError> {
        let place = SecretPlace::channel_credentials(d.workspace_id.0, d.channel_id.0);
        let credentials = open_credentials(self.cipher.as_ref(), &d.credentials_sealed, &place).map_err(|_| {
            GatewayError::Rejected { reason: "the channel's credentials cannot be read; set them again".into() }
        })?;
        let to = d.to.clone().ok_or_else(|| GatewayError::Rejected {
            reason: format!("the contact has no {} address", d.channel_type),
        })?;
        let request =
            OutboundRequest { channel_type: d.channel_type, credentials, to, content: d.content.clone(), tag: d.tag };
        self.gateway.send(&request).await
    }
}

/// Encrypts credentials for storage at `place` (the channel's row).
pub fn seal_credentials(cipher: &dyn SecretCipher, credentials: &ChannelCredentials, place: &SecretPlace) -> Vec<u8> {
    cipher.seal(&serde_json::to_vec(credentials).unwrap_or_default(), place)
}

/// Decrypts stored credentials.
///
/// # Errors
/// When they were sealed with another key, for another row or workspace, or altered.
pub fn open_credentials(
    cipher: &dyn SecretCipher,
    sealed: &[u8],
    place: &SecretPlace,
) -> anyhow::Result<ChannelCredentials> {
    Ok(serde_json::from_slice(&cipher.open(sealed, place)?)?)
}

/// SHA-256 of a verify token, the form in which it is looked up.
pub fn verify_token_digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The current time as a platform timestamp would give it (seconds since the epoch).
pub fn from_unix(secs: i64) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::{ChannelId, ChannelType};
    use crate::common::ports::{MockClock, MockSecretCipher};
    use crate::connectors::{MockChannelGateway, MockDispatchQueue, OutboundContent};
    use crate::messaging::MessageId;
    use crate::workspace::WorkspaceId;

    fn dispatch(attempts: i32) -> Dispatch {
        Dispatch {
            workspace_id: WorkspaceId(1),
            message_id: MessageId(9),
            channel_id: ChannelId(2),
            channel_type: ChannelType::Whatsapp,
            credentials_sealed: b"sealed".to_vec(),
            to: Some("+14155550123".into()),
            content: OutboundContent::Text("hi".into()),
            attempts,
            tag: None,
        }
    }

    fn cipher() -> MockSecretCipher {
        let mut c = MockSecretCipher::new();
        c.expect_open().returning(|_, _| {
            Ok(serde_json::to_vec(&ChannelCredentials {
                phone_number_id: Some("123".into()),
                access_token: Some("token-123456".into()),
                app_secret: Some("app-secret-1".into()),
                ..ChannelCredentials::default()
            })
            .unwrap_or_default())
        });
        c
    }

    fn clock() -> MockClock {
        let mut c = MockClock::new();
        c.expect_now().returning(|| OffsetDateTime::UNIX_EPOCH);
        c
    }

    fn queue_with(d: Dispatch) -> MockDispatchQueue {
        let mut q = MockDispatchQueue::new();
        q.expect_claim().returning(move |_, _| Ok(vec![d.clone()]));
        q
    }

    async fn dispatch_batch(
        q: MockDispatchQueue,
        g: &Arc<MockChannelGateway>,
        cipher: MockSecretCipher,
        clock: MockClock,
        limit: i64,
    ) -> Result<DispatchReport, RepoError> {
        DispatchService::new(Arc::new(q), g.clone(), Arc::new(cipher), Arc::new(clock)).dispatch(limit).await
    }

    #[tokio::test]
    async fn an_accepted_message_is_marked_sent_with_the_platform_id() {
        let mut q = queue_with(dispatch(1));
        q.expect_sent().withf(|_, id| id == "wamid.1").times(1).returning(|_, _| Ok(()));
        let mut g = MockChannelGateway::new();
        g.expect_send()
            .withf(|r| r.to == "+14155550123" && r.credentials.phone_number_id.as_deref() == Some("123"))
            .returning(|_| Ok("wamid.1".into()));
        let r = dispatch_batch(q, &Arc::new(g), cipher(), clock(), 10).await;
        assert_eq!(r.ok(), Some(DispatchReport { claimed: 1, sent: 1, ..DispatchReport::default() }));
    }

    #[tokio::test]
    async fn a_rejection_fails_the_message_with_the_reason() {
        let mut q = queue_with(dispatch(1));
        q.expect_failed().withf(|_, r| r.contains("131026")).times(1).returning(|_, _| Ok(()));
        let mut g = MockChannelGateway::new();
        g.expect_send().returning(|_| Err(GatewayError::Rejected { reason: "131026: message undeliverable".into() }));
        assert_eq!(dispatch_batch(q, &Arc::new(g), cipher(), clock(), 10).await.ok().map(|r| r.failed), Some(1));
    }

    #[tokio::test]
    async fn a_rate_limit_pauses_the_channel_instead_of_failing() {
        let mut q = queue_with(dispatch(3));
        q.expect_pause_channel()
            .withf(|_, until| *until == OffsetDateTime::UNIX_EPOCH + Duration::seconds(30))
            .times(1)
            .returning(|_, _| Ok(()));
        let mut g = MockChannelGateway::new();
        g.expect_send().returning(|_| Err(GatewayError::RateLimited { retry_after_secs: Some(30) }));
        assert_eq!(dispatch_batch(q, &Arc::new(g), cipher(), clock(), 10).await.ok().map(|r| r.deferred), Some(1));
    }

    #[tokio::test]
    async fn transient_errors_back_off_then_give_up() {
        let mut q = queue_with(dispatch(2));
        q.expect_retry_at()
            .withf(|_, at| *at == OffsetDateTime::UNIX_EPOCH + Duration::seconds(10))
            .times(1)
            .returning(|_, _| Ok(()));
        let mut g = MockChannelGateway::new();
        g.expect_send().returning(|_| Err(GatewayError::Transient("503".into())));
        let g = Arc::new(g);
        assert!(dispatch_batch(q, &g, cipher(), clock(), 10).await.is_ok());

        let mut q = queue_with(dispatch(MAX_ATTEMPTS));
        q.expect_failed().withf(|_, r| r.starts_with("gave up after 12 attempts")).times(1).returning(|_, _| Ok(()));
        assert!(dispatch_batch(q, &g, cipher(), clock(), 10).await.is_ok());
    }

    #[tokio::test]
    async fn a_contact_without_an_address_fails_without_calling_the_platform() {
        let mut q = queue_with(Dispatch { to: None, ..dispatch(1) });
        q.expect_failed().times(1).returning(|_, _| Ok(()));
        let g = MockChannelGateway::new();
        assert!(dispatch_batch(q, &Arc::new(g), cipher(), clock(), 10).await.is_ok());
    }

    #[tokio::test]
    async fn unreadable_credentials_fail_the_message_without_calling_the_platform() {
        let mut q = queue_with(dispatch(1));
        q.expect_failed().withf(|_, r| r.contains("cannot be read")).times(1).returning(|_, _| Ok(()));
        let mut cipher = MockSecretCipher::new();
        cipher.expect_open().returning(|_, _| Err(anyhow::anyhow!("sealed for another row")));
        let r = dispatch_batch(q, &Arc::new(MockChannelGateway::new()), cipher, clock(), 10).await;
        assert_eq!(r.ok(), Some(DispatchReport { claimed: 1, failed: 1, ..DispatchReport::default() }));
    }

    #[test]
    fn retry_delays_double_and_cap() {
        let secs: Vec<i64> = (1..=11).filter_map(retry_delay).map(|d| d.whole_seconds()).collect();
        assert_eq!(secs, [5, 10, 20, 40, 80, 160, 320, 640, 900, 900, 900]);
        assert_eq!(retry_delay(MAX_ATTEMPTS), None);
    }

    #[test]
    fn a_rate_limited_attempt_does_not_count() {
        assert_eq!(attempts_after_rate_limit(3), 2);
        assert_eq!(attempts_after_rate_limit(1), 0);
        assert_eq!(attempts_after_rate_limit(0), 0, "never below zero");
    }

    #[test]
    fn credentials_are_validated_per_platform() {
        let wa = ChannelCredentials {
            phone_number_id: Some("1234".into()),
            access_token: Some("token-123456".into()),
            ..Default::default()
        };
        assert!(wa.clone().validate(ChannelType::Whatsapp).is_ok());
        let fields: Vec<String> =
            wa.validate(ChannelType::Messenger).expect_err("wrong platform").0.into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["credentials.page_id", "credentials.phone_number_id"]);
        let weak = ChannelCredentials {
            page_id: Some("1".into()),
            access_token: Some("x".into()),
            app_secret: Some("short".into()),
            ..Default::default()
        };
        let fields: Vec<String> =
            weak.validate(ChannelType::Instagram).expect_err("weak").0.into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["credentials.access_token", "credentials.app_secret"]);
    }

    #[test]
    fn debug_never_shows_secrets() {
        let c = ChannelCredentials { access_token: Some("EAAG-secret-token".into()), ..Default::default() };
        assert!(!format!("{c:?}").contains("EAAG"));
    }
}
