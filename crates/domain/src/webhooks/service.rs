//! The destinations API: create, list, read, update, delete, reveal and rotate the secret, read
//! the delivery log, redeliver and send a test event. Shared by `/v1/webhooks` and the settings API.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::delivery::DeliveryEngine;
use super::model::{
    Delivery, DeliveryId, DestinationId, DestinationUrl, EventList, EventType, Platform, UrlHost, WebhookDestination,
};
use super::payload::{envelope, test_data};
use super::ports::{DestinationChange, HostResolver, ManualClaim, NewDestination, WebhookRepository};
use super::signing::SigningSecret;
use super::ssrf::{is_local_name, AddressPolicy};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::common::error::{FieldError, RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::SecretPlace;
use crate::workspace::WorkspaceId;

/// How long the previous secret keeps signing after a rotation.
pub const ROTATION_OVERLAP: Duration = Duration::from_secs(24 * 3600);

/// Why a webhooks operation failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// No such destination (or delivery) in this workspace.
    #[error("no such webhook destination or delivery in this workspace")]
    NotFound,
    /// The input is invalid.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// A worker is delivering it right now.
    #[error("an attempt of this delivery is in progress; try again in a moment")]
    InProgress,
    /// The stored secret does not open with the configured keys: altered, sealed for another row
    /// or workspace, or with a key no longer configured.
    #[error("the signing secret stored for this destination cannot be opened with the configured keys; rotate the secret to get a new one")]
    SecretUnreadable,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Raw input of a new destination.
#[derive(Debug, Clone, Default)]
pub struct DestinationInput {
    /// Absolute URL.
    pub url: String,
    /// Free label; `custom` when omitted.
    pub platform: Option<String>,
    /// Event names.
    pub events: Vec<String>,
    /// Default `true`.
    pub active: Option<bool>,
}

/// Raw partial update.
#[derive(Debug, Clone, Default)]
pub struct DestinationPatch {
    /// New URL.
    pub url: Option<String>,
    /// New label.
    pub platform: Option<String>,
    /// New event names.
    pub events: Option<Vec<String>>,
    /// Activate or pause.
    pub active: Option<bool>,
}

/// The webhooks use cases.
pub struct WebhookService {
    /// Destinations and the log.
    pub repo: Arc<dyn WebhookRepository>,
    /// DNS, for the creation-time address check.
    pub resolver: Arc<dyn HostResolver>,
    /// Sends manual and test attempts; also holds the cipher, clock and random source.
    pub engine: Arc<DeliveryEngine>,
    /// Which addresses destinations may have.
    pub addresses: AddressPolicy,
}

impl std::fmt::Debug for WebhookService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookService").field("addresses", &self.addresses).finish_non_exhaustive()
    }
}

impl WebhookService {
    /// Creates a destination and returns it with its new secret.
    ///
    /// # Errors
    /// [`WebhookError::Invalid`] naming every bad field.
    pub async fn create(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        input: DestinationInput,
    ) -> Result<(WebhookDestination, SigningSecret), WebhookError> {
        let mut errors = ValidationErrors::default();
        let url = errors.check(self.check_url(&input.url).await);
        let platform = errors.check(Platform::new(input.platform.as_deref().unwrap_or(Platform::DEFAULT)));
        let events = match EventList::new(&input.events) {
            Ok(e) => Some(e),
            Err(e) => {
                errors.0.extend(e.0);
                None
            }
        };
        let (Some(url), Some(platform), Some(events)) = (url, platform, events) else {
            return Err(WebhookError::Invalid(errors));
        };
        let secret = SigningSecret::generate(self.engine.random.as_ref());
        let id = self.repo.reserve_id().await?;
        let new = NewDestination {
            id,
            url: url.as_str().to_owned(),
            platform: platform.as_str().to_owned(),
            events: events.names(),
            active: input.active.unwrap_or(true),
            secret_sealed: self
                .engine
                .cipher
                .seal(secret.expose().as_bytes(), &SecretPlace::webhook_secret(ws.0, id.0)),
        };
        let entry = audit.entry(
            ws,
            AuditAction::WebhookCreated,
            AuditTarget::webhook(None),
            serde_json::json!({ "url": new.url, "events": new.events, "active": new.active }),
        );
        let created = self.repo.insert(ws, &new, &entry).await?;
        Ok((created, secret))
    }

    /// One page of destinations.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<WebhookDestination>, WebhookError> {
        Ok(self.repo.list(ws, page).await?)
    }

    /// One destination.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`].
    pub async fn get(&self, ws: WorkspaceId, id: DestinationId) -> Result<WebhookDestination, WebhookError> {
        self.repo.find(ws, id).await?.ok_or(WebhookError::NotFound)
    }

    /// Applies a partial update.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`], or [`WebhookError::Invalid`] naming every bad field.
    pub async fn update(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        patch: DestinationPatch,
    ) -> Result<WebhookDestination, WebhookError> {
        let mut errors = ValidationErrors::default();
        let mut change = DestinationChange { active: patch.active, ..DestinationChange::default() };
        if let Some(raw) = &patch.url {
            change.url = errors.check(self.check_url(raw).await).map(|u| u.as_str().to_owned());
        }
        if let Some(raw) = &patch.platform {
            change.platform = errors.check(Platform::new(raw)).map(|p| p.as_str().to_owned());
        }
        if let Some(raw) = &patch.events {
            match EventList::new(raw) {
                Ok(e) => change.events = Some(e.names()),
                Err(e) => errors.0.extend(e.0),
            }
        }
        errors.into_result()?;
        let now = self.engine.clock.now();
        let fields: Vec<&str> = [
            ("url", change.url.is_some()),
            ("platform", change.platform.is_some()),
            ("events", change.events.is_some()),
            ("active", change.active.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect();
        let entry = audit.entry(
            ws,
            AuditAction::WebhookUpdated,
            AuditTarget::webhook(Some(id.0)),
            serde_json::json!({ "fields": fields, "active": change.active }),
        );
        self.repo.update(ws, id, &change, now, &entry).await?.ok_or(WebhookError::NotFound)
    }

    /// Deletes a destination and its delivery log.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`].
    pub async fn delete(&self, ws: WorkspaceId, audit: &AuditContext, id: DestinationId) -> Result<(), WebhookError> {
        let entry =
            audit.entry(ws, AuditAction::WebhookDeleted, AuditTarget::webhook(Some(id.0)), serde_json::json!({}));
        if self.repo.delete(ws, id, &entry).await? {
            Ok(())
        } else {
            Err(WebhookError::NotFound)
        }
    }

    /// The current signing secret (the viewing is recorded).
    ///
    /// # Errors
    /// [`WebhookError::NotFound`]; an infrastructure error when it cannot be decrypted.
    pub async fn secret(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<SigningSecret, WebhookError> {
        let entry =
            audit.entry(ws, AuditAction::WebhookSecretViewed, AuditTarget::webhook(Some(id.0)), serde_json::json!({}));
        let stored = self.repo.secrets(ws, id, Some(&entry)).await?.ok_or(WebhookError::NotFound)?;
        let plain = self
            .engine
            .cipher
            .open(&stored.current, &SecretPlace::webhook_secret(ws.0, id.0))
            .map_err(|_| WebhookError::SecretUnreadable)?;
        let text = String::from_utf8(plain).map_err(RepoError::new)?;
        SigningSecret::parse(&text).map_err(|e| WebhookError::Unknown(RepoError::new(e)))
    }

    /// Replaces the secret; the old one keeps signing for [`ROTATION_OVERLAP`].
    ///
    /// # Errors
    /// [`WebhookError::NotFound`].
    pub async fn rotate_secret(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<SigningSecret, WebhookError> {
        let secret = SigningSecret::generate(self.engine.random.as_ref());
        let sealed = self.engine.cipher.seal(secret.expose().as_bytes(), &SecretPlace::webhook_secret(ws.0, id.0));
        let now = self.engine.clock.now();
        let entry =
            audit.entry(ws, AuditAction::WebhookSecretRotated, AuditTarget::webhook(Some(id.0)), serde_json::json!({}));
        if self.repo.rotate_secret(ws, id, &sealed, now + ROTATION_OVERLAP, now, &entry).await? {
            Ok(secret)
        } else {
            Err(WebhookError::NotFound)
        }
    }

    /// One page of the delivery log, newest first.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`].
    pub async fn deliveries(
        &self,
        ws: WorkspaceId,
        id: DestinationId,
        page: PageRequest,
    ) -> Result<Page<Delivery>, WebhookError> {
        self.repo.deliveries(ws, id, page).await?.ok_or(WebhookError::NotFound)
    }

    /// Delivers one event again now, with the same `webhook-id`, and returns the delivery with
    /// the new attempt.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`]; [`WebhookError::InProgress`] while a worker is sending it.
    pub async fn redeliver(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        delivery: DeliveryId,
    ) -> Result<Delivery, WebhookError> {
        let now = self.engine.clock.now();
        let lease = self.engine.policy.limits.lease;
        let entry =
            Self::send_entry(ws, audit, id, AuditAction::WebhookDeliveryRetried, json!({ "delivery_id": delivery.0 }));
        let claim = match self.engine.queue.claim_manual(ws, id, delivery, now, lease, &entry).await? {
            ManualClaim::Claimed(c) => c,
            ManualClaim::NotFound => return Err(WebhookError::NotFound),
            ManualClaim::InProgress => return Err(WebhookError::InProgress),
        };
        self.engine.deliver_now(&claim).await?;
        self.repo.delivery(ws, id, delivery).await?.ok_or(WebhookError::NotFound)
    }

    /// Sends a signed `webhook.test` event now and returns its delivery with the attempt.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`].
    pub async fn send_test(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<Delivery, WebhookError> {
        self.send_sample(ws, audit, id, EventType::WebhookTest, &test_data(id)).await
    }

    /// Sends a signed sample event of type `event` with `data` to the destination now (also
    /// when it is inactive): what an integrator's endpoint will receive, without causing the
    /// change. Samples are not in the events feed, not retried and not replayed.
    ///
    /// # Errors
    /// [`WebhookError::NotFound`] for another workspace's or a missing destination.
    pub async fn send_sample(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        event: EventType,
        data: &serde_json::Value,
    ) -> Result<Delivery, WebhookError> {
        let now = self.engine.clock.now();
        let payload = envelope(event, now, ws, data);
        let lease = self.engine.policy.limits.lease;
        // The queue adds the new delivery's id (`delivery_id`) to the details.
        let entry =
            Self::send_entry(ws, audit, id, AuditAction::WebhookTestSent, json!({ "event_type": event.as_str() }));
        let claim = self
            .engine
            .queue
            .create_test(ws, id, event, &payload, now, lease, &entry)
            .await?
            .ok_or(WebhookError::NotFound)?;
        self.engine.deliver_now(&claim).await?;
        self.repo.delivery(ws, id, claim.delivery_id).await?.ok_or(WebhookError::NotFound)
    }

    /// The record of a manual send, which the queue stores in the transaction that claims or
    /// creates the delivery (before the HTTP request, which no transaction covers). A refused send
    /// (unknown delivery, one in progress) is never recorded; the payload and the signature never
    /// are (docs/product/audit-log.md).
    fn send_entry(
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        action: AuditAction,
        details: serde_json::Value,
    ) -> AuditEntry {
        audit.entry(ws, action, AuditTarget::webhook(Some(id.0)), details)
    }

    /// Validates a URL and the addresses it points at (spec: SSRF guard at creation).
    async fn check_url(&self, raw: &str) -> Result<DestinationUrl, FieldError> {
        let url = DestinationUrl::parse(raw)?;
        // The message never names the address: what a name resolves to inside our network is
        // not the tenant's to learn (issue: refusals echoed internal addresses).
        let refused = || {
            FieldError::new(
                "url",
                "points at a private, loopback or otherwise reserved address that webhooks may not reach",
            )
        };
        let need_https = || FieldError::new("url", "must use https (plain http only for hosts in the allowed subnets)");
        // Addresses the name is known to have, to decide on plain http.
        let addresses: Vec<IpAddr> = match url.host() {
            UrlHost::Ip(ip) => vec![*ip],
            UrlHost::Name(name) => {
                let resolved = self.resolver.resolve(name, url.port()).await.unwrap_or_default();
                if resolved.is_empty() && is_local_name(name) && !self.addresses.permits_local_name() {
                    return Err(FieldError::new(
                        "url",
                        format!("`{name}` is a local host name that webhooks may not reach"),
                    ));
                }
                // A public name that does not resolve now is accepted: it is checked again at
                // every connection, which is what actually guards the network.
                resolved
            }
        };
        if addresses.iter().any(|ip| !self.addresses.permits(*ip)) {
            return Err(refused());
        }
        let plain_allowed = !addresses.is_empty() && addresses.iter().all(|ip| self.addresses.is_allowed_subnet(*ip));
        if !url.is_https() && !plain_allowed {
            return Err(need_https());
        }
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::{MockClock, MockRandomSource, MockSecretCipher};
    use crate::webhooks::delivery::DeliveryPolicy;
    use crate::webhooks::ports::{
        ClaimLimits, MockDeliveryQueue, MockHostResolver, MockWebhookRepository, MockWebhookTransport, ResolveError,
    };
    use crate::webhooks::retry::{RetryAfterBounds, RetrySchedule};
    use crate::webhooks::ssrf::Cidr;
    use time::macros::datetime;
    use time::OffsetDateTime;

    const NOW: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    fn destination(url: &str) -> WebhookDestination {
        WebhookDestination {
            id: DestinationId(3),
            workspace_id: WorkspaceId(1),
            url: url.into(),
            platform: "custom".into(),
            events: vec!["message.created".into()],
            active: true,
            disabled_reason: None,
            disabled_at: None,
            created_at: NOW,
            updated_at: NOW,
        }
    }

    fn service(repo: MockWebhookRepository, resolver: MockHostResolver, allowed: &[&str]) -> WebhookService {
        let mut cipher = MockSecretCipher::new();
        cipher.expect_seal().returning(|p, _| [b"sealed:".as_slice(), p].concat());
        cipher.expect_open().returning(|s, _| Ok(s.strip_prefix(b"sealed:").unwrap_or(s).to_vec()));
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(|b| b.fill(9));
        let engine = DeliveryEngine {
            queue: Arc::new(MockDeliveryQueue::new()),
            transport: Arc::new(MockWebhookTransport::new()),
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
                    rate_per_sec: 10.0,
                    burst: 10.0,
                },
            },
        };
        WebhookService {
            repo: Arc::new(repo),
            resolver: Arc::new(resolver),
            engine: Arc::new(engine),
            addresses: AddressPolicy::new(allowed.iter().filter_map(|c| Cidr::parse(c)).collect()),
        }
    }

    fn resolver_to(ips: &'static [&'static str]) -> MockHostResolver {
        let mut r = MockHostResolver::new();
        r.expect_resolve().returning(move |_, _| Ok(ips.iter().filter_map(|s| s.parse().ok()).collect()));
        r
    }

    fn input(url: &str, events: &[&str]) -> DestinationInput {
        DestinationInput {
            url: url.into(),
            platform: None,
            events: events.iter().map(|s| (*s).to_owned()).collect(),
            active: None,
        }
    }

    fn fields(e: WebhookError) -> Vec<String> {
        match e {
            WebhookError::Invalid(v) => v.0.into_iter().map(|f| f.field).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn create_seals_a_fresh_secret_and_defaults_platform_and_active() {
        let mut repo = MockWebhookRepository::new();
        repo.expect_reserve_id().returning(|| Ok(DestinationId(7)));
        repo.expect_insert().times(1).returning(|_, new, _| {
            assert_eq!(new.platform, "custom");
            assert!(new.active);
            assert!(new.secret_sealed.starts_with(b"sealed:whsec_"));
            Ok(destination(&new.url))
        });
        let s = service(repo, resolver_to(&["93.184.215.14"]), &[]);
        let (d, secret) = s
            .create(WorkspaceId(1), &AuditContext::system(), input("https://hooks.example.com/a", &["message.created"]))
            .await
            .expect("created");
        assert_eq!(d.url, "https://hooks.example.com/a");
        assert!(secret.expose().starts_with("whsec_"));
    }

    #[tokio::test]
    async fn every_bad_field_is_named() {
        let s = service(MockWebhookRepository::new(), resolver_to(&[]), &[]);
        let mut i = input("ftp://x", &["message.created", "message.exploded"]);
        i.platform = Some(String::new());
        let f = fields(s.create(WorkspaceId(1), &AuditContext::system(), i).await.expect_err("invalid"));
        assert_eq!(f, ["url", "platform", "events[1]"]);
    }

    #[tokio::test]
    async fn refusals_never_name_the_resolved_addresses() {
        const PRIVATE: &[&str] = &["10.20.30.40"];
        const MIXED: &[&str] = &["93.184.215.14", "fd00::7"];
        const METADATA: &[&str] = &["169.254.169.254"];
        for ips in [PRIVATE, MIXED, METADATA] {
            let s = service(MockWebhookRepository::new(), resolver_to(ips), &[]);
            let err = s
                .create(
                    WorkspaceId(1),
                    &AuditContext::system(),
                    input("https://internal.example.com/", &["thread.created"]),
                )
                .await;
            let Err(WebhookError::Invalid(v)) = err else { panic!("expected a refusal, got {err:?}") };
            assert_eq!(v.0.len(), 1);
            assert!(v.0[0].message.contains("private, loopback or otherwise reserved"), "{}", v.0[0].message);
            for ip in ips {
                assert!(!v.0[0].message.contains(ip), "`{}` names {ip}", v.0[0].message);
            }
        }
    }

    #[tokio::test]
    async fn names_resolving_to_loopback_are_refused_unless_allowed() {
        let s = service(MockWebhookRepository::new(), resolver_to(&["127.0.0.1"]), &[]);
        let f = fields(
            s.create(
                WorkspaceId(1),
                &AuditContext::system(),
                input("https://sneaky.example.com/", &["thread.created"]),
            )
            .await
            .expect_err("refused"),
        );
        assert_eq!(f, ["url"]);
        let f = fields(
            s.create(WorkspaceId(1), &AuditContext::system(), input("https://localhost/", &["thread.created"]))
                .await
                .expect_err("refused"),
        );
        assert_eq!(f, ["url"]);
        let f = fields(
            s.create(WorkspaceId(1), &AuditContext::system(), input("https://169.254.169.254/", &["thread.created"]))
                .await
                .expect_err("refused"),
        );
        assert_eq!(f, ["url"]);

        let mut repo = MockWebhookRepository::new();
        repo.expect_reserve_id().returning(|| Ok(DestinationId(7)));
        repo.expect_insert().returning(|_, n, _| Ok(destination(&n.url)));
        let s = service(repo, resolver_to(&["127.0.0.1"]), &["127.0.0.0/8"]);
        assert!(s
            .create(WorkspaceId(1), &AuditContext::system(), input("http://localhost:9000/", &["thread.created"]))
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn plain_http_only_for_allowed_subnets() {
        let s = service(MockWebhookRepository::new(), resolver_to(&["93.184.215.14"]), &["127.0.0.0/8"]);
        let f = fields(
            s.create(WorkspaceId(1), &AuditContext::system(), input("http://hooks.example.com/", &["thread.created"]))
                .await
                .expect_err("http"),
        );
        assert_eq!(f, ["url"]);
    }

    #[tokio::test]
    async fn unresolvable_https_names_are_accepted_for_the_connect_time_check() {
        let mut resolver = MockHostResolver::new();
        resolver.expect_resolve().returning(|_, _| Err(ResolveError::NotFound));
        let mut repo = MockWebhookRepository::new();
        repo.expect_reserve_id().returning(|| Ok(DestinationId(7)));
        repo.expect_insert().returning(|_, n, _| Ok(destination(&n.url)));
        let s = service(repo, resolver, &[]);
        assert!(s
            .create(WorkspaceId(1), &AuditContext::system(), input("https://not-yet.example.com/", &["thread.created"]))
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn rotation_keeps_the_old_secret_for_a_day() {
        let mut repo = MockWebhookRepository::new();
        repo.expect_rotate_secret().times(1).returning(|_, _, sealed, until, now, _| {
            assert!(sealed.starts_with(b"sealed:whsec_"));
            assert_eq!(until - now, time::Duration::hours(24));
            Ok(true)
        });
        let s = service(repo, resolver_to(&[]), &[]);
        assert!(s.rotate_secret(WorkspaceId(1), &AuditContext::system(), DestinationId(3)).await.is_ok());
    }

    #[tokio::test]
    async fn unknown_destination_is_not_found() {
        let mut repo = MockWebhookRepository::new();
        repo.expect_find().returning(|_, _| Ok(None));
        repo.expect_update().returning(|_, _, _, _, _| Ok(None));
        repo.expect_delete().returning(|_, _, _| Ok(false));
        let s = service(repo, resolver_to(&[]), &[]);
        assert!(matches!(s.get(WorkspaceId(1), DestinationId(9)).await, Err(WebhookError::NotFound)));
        assert!(matches!(
            s.update(WorkspaceId(1), &AuditContext::system(), DestinationId(9), DestinationPatch::default()).await,
            Err(WebhookError::NotFound)
        ));
        assert!(matches!(
            s.delete(WorkspaceId(1), &AuditContext::system(), DestinationId(9)).await,
            Err(WebhookError::NotFound)
        ));
    }
}
