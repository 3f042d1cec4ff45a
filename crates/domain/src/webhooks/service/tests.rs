//! Unit tests of the webhooks use cases, on mocks.

use super::*;
use crate::audit::AuditContext;
use crate::common::ports::{MockClock, MockRandomSource, MockSecretCipher};
use crate::webhooks::delivery::DeliveryPolicy;
use crate::webhooks::limiter::{CapReached, FullCap};
use crate::webhooks::model::{DeliveryId, WebhookDestination};
use crate::webhooks::ports::{
    ClaimLimits, ManualClaim, MockDeliveryQueue, MockHostResolver, MockWebhookRepository, MockWebhookTransport,
    ResolveError, StoredSecrets,
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
        controls: Default::default(),
        headers_sealed: None,
    }
}

fn service(repo: MockWebhookRepository, resolver: MockHostResolver, allowed: &[&str]) -> WebhookService {
    WebhookService {
        repo: Arc::new(repo),
        resolver: Arc::new(resolver),
        engine: Arc::new(engine(MockDeliveryQueue::new())),
        addresses: AddressPolicy::new(allowed.iter().filter_map(|c| Cidr::parse(c)).collect()),
    }
}

/// The engine over `queue`; the cipher "seals" by prefixing `sealed:`.
fn engine(queue: MockDeliveryQueue) -> DeliveryEngine {
    let mut cipher = MockSecretCipher::new();
    cipher.expect_seal().returning(|p, _| [b"sealed:".as_slice(), p].concat());
    cipher.expect_open().returning(|s, _| Ok(s.strip_prefix(b"sealed:").unwrap_or(s).to_vec()));
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    let mut random = MockRandomSource::new();
    random.expect_fill().returning(|b| b.fill(9));
    DeliveryEngine {
        queue: Arc::new(queue),
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
                claim_lease: Duration::from_secs(5),
                max_in_flight: 4,
                rate_per_sec: 10.0,
            },
        },
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
        controls: Default::default(),
    }
}

fn fields(e: CreateWebhookError) -> Vec<String> {
    match e {
        CreateWebhookError::Invalid(v) => v.0.into_iter().map(|f| f.field).collect(),
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
        let Err(CreateWebhookError::Invalid(v)) = err else { panic!("expected a refusal, got {err:?}") };
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
        s.create(WorkspaceId(1), &AuditContext::system(), input("https://sneaky.example.com/", &["thread.created"]))
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
async fn a_dual_stack_localhost_is_reachable_through_its_allowed_family() {
    // `localhost` answers `127.0.0.1` and `::1`; only the IPv4 loopback is allowed: deliveries go
    // to 127.0.0.1 (the transport drops ::1), so the destination is accepted, on plain http too.
    let mut repo = MockWebhookRepository::new();
    repo.expect_reserve_id().returning(|| Ok(DestinationId(7)));
    repo.expect_insert().returning(|_, n, _| Ok(destination(&n.url)));
    let s = service(repo, resolver_to(&["127.0.0.1", "::1"]), &["127.0.0.0/8"]);
    let made = s
        .create(WorkspaceId(1), &AuditContext::system(), input("http://localhost:9000/hook", &["thread.created"]))
        .await;
    assert!(made.is_ok(), "{made:?}");
    // Beside a public address, an address webhooks may not reach is still refused, and so is a
    // name whose reachable addresses are not all in the allowed subnets.
    const PUBLIC_AND_LOOPBACK: &[&str] = &["93.184.215.14", "::1"];
    const ALLOWED_PUBLIC_PRIVATE: &[&str] = &["127.0.0.1", "93.184.215.14", "10.0.0.1"];
    for ips in [PUBLIC_AND_LOOPBACK, ALLOWED_PUBLIC_PRIVATE] {
        let s = service(MockWebhookRepository::new(), resolver_to(ips), &["127.0.0.0/8"]);
        let f = fields(
            s.create(WorkspaceId(1), &AuditContext::system(), input("https://mixed.example.com/", &["thread.created"]))
                .await
                .expect_err("refused"),
        );
        assert_eq!(f, ["url"], "{ips:?}");
    }
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
    assert!(matches!(s.get(WorkspaceId(1), DestinationId(9)).await, Err(WebhookNotFound::NotFound)));
    assert!(matches!(
        s.update(WorkspaceId(1), &AuditContext::system(), DestinationId(9), DestinationPatch::default()).await,
        Err(UpdateWebhookError::NotFound)
    ));
    assert!(matches!(
        s.delete(WorkspaceId(1), &AuditContext::system(), DestinationId(9)).await,
        Err(DeleteWebhookError::NotFound)
    ));
}

#[tokio::test]
async fn a_manual_attempt_at_a_full_cap_is_refused_with_when_to_try_again() {
    let full = CapReached { cap: FullCap::Rate(5), retry_at: NOW + time::Duration::milliseconds(300) };
    let mut queue = MockDeliveryQueue::new();
    queue.expect_claim_manual().times(1).returning(move |_, _, _, _, _, _| Ok(ManualClaim::CapReached(full)));
    queue.expect_create_test().times(1).returning(move |_, _, _, _, _, _, _| Ok(ManualClaim::CapReached(full)));
    let s = WebhookService {
        engine: Arc::new(engine(queue)),
        ..service(MockWebhookRepository::new(), resolver_to(&[]), &[])
    };
    let audit = AuditContext::system();
    let retried = s.redeliver(WorkspaceId(1), &audit, DestinationId(3), DeliveryId(8)).await;
    assert!(
        matches!(retried, Err(RedeliverError::CapReached { cap: FullCap::Rate(5), retry_after_secs: 1 })),
        "{retried:?}"
    );
    let tested = s.send_test(WorkspaceId(1), &audit, DestinationId(3)).await;
    assert!(matches!(tested, Err(SendTestError::CapReached { cap: FullCap::Rate(5), retry_after_secs: 1 })));
    assert_eq!(
        tested.err().map(|e| e.to_string()).unwrap_or_default(),
        "the destination is at its cap: its rate_limit_per_second (5) was sent within the last second; \
         try again in 1 s"
    );
}

#[tokio::test]
async fn redelivery_of_a_delivery_in_progress_or_unknown_is_refused_before_any_attempt() {
    let mut queue = MockDeliveryQueue::new();
    let mut answers = vec![ManualClaim::NotFound, ManualClaim::InProgress];
    queue
        .expect_claim_manual()
        .times(2)
        .returning(move |_, _, _, _, _, _| Ok(answers.pop().unwrap_or(ManualClaim::NotFound)));
    let s = WebhookService {
        engine: Arc::new(engine(queue)),
        ..service(MockWebhookRepository::new(), resolver_to(&[]), &[])
    };
    let audit = AuditContext::system();
    let retry = || s.redeliver(WorkspaceId(1), &audit, DestinationId(3), DeliveryId(8));
    assert!(matches!(retry().await, Err(RedeliverError::InProgress)));
    assert!(matches!(retry().await, Err(RedeliverError::NotFound)));
}

#[tokio::test]
async fn a_secret_that_does_not_open_is_unreadable_and_a_missing_destination_not_found() {
    let mut repo = MockWebhookRepository::new();
    let mut answers = vec![None, Some(StoredSecrets { current: b"not sealed".to_vec(), previous: None })];
    repo.expect_secrets().times(2).returning(move |_, _, _| Ok(answers.pop().flatten()));
    let mut cipher = MockSecretCipher::new();
    cipher.expect_open().returning(|_, _| Err(anyhow::anyhow!("altered")));
    let mut e = engine(MockDeliveryQueue::new());
    e.cipher = Arc::new(cipher);
    let s = WebhookService { engine: Arc::new(e), ..service(repo, resolver_to(&[]), &[]) };
    let audit = AuditContext::system();
    let reveal = || s.secret(WorkspaceId(1), &audit, DestinationId(3));
    assert!(matches!(reveal().await, Err(RevealSecretError::SecretUnreadable)));
    assert!(matches!(reveal().await, Err(RevealSecretError::NotFound)));
}
