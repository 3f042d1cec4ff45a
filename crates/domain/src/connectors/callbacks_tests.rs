//! Unit tests of [`CallbackService`]: the signature, the candidate secrets, the throttle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use proptest::prelude::*;
use time::macros::datetime;

use super::*;
use crate::auth::throttle::ThrottleRecord;
use crate::common::ports::{MockClock, MockSecretCipher};
use crate::connectors::{ChannelCredentials, MockCallbackStore, MockCallbackThrottle, PlatformEvents};
use crate::workspace::WorkspaceId;

const NOW: OffsetDateTime = datetime!(2026-11-26 12:00 UTC);

/// "Sealing" is the JSON itself, so each channel can carry its own secret.
fn cipher() -> MockSecretCipher {
    let mut c = MockSecretCipher::new();
    c.expect_open().returning(|b, _| Ok(b.to_vec()));
    c
}

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now().return_const(NOW);
    c
}

fn channel(id: i64, account: &str, secret: &str) -> CallbackChannel {
    let creds = ChannelCredentials { app_secret: Some(secret.into()), ..ChannelCredentials::default() };
    CallbackChannel {
        workspace_id: WorkspaceId(id),
        channel_id: ChannelId(id),
        account_id: account.into(),
        credentials_sealed: serde_json::to_vec(&creds).unwrap_or_default(),
    }
}

fn sign(secret: &str, body: &[u8]) -> String {
    let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    m.update(body);
    format!("sha256={}", m.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The body's accounts as given, and the hashing done inline, counting the secrets it was given.
struct Inline {
    accounts: Vec<String>,
    hashed: Arc<AtomicUsize>,
}

#[async_trait]
impl CallbackWork for Inline {
    async fn accounts(&self, _: ChannelType, _: Arc<[u8]>) -> Vec<(String, PlatformEvents)> {
        self.accounts.iter().map(|a| (a.clone(), PlatformEvents::default())).collect()
    }

    async fn signer(&self, body: Arc<[u8]>, mac: Vec<u8>, secrets: Vec<Vec<u8>>) -> Option<usize> {
        self.hashed.fetch_add(secrets.len(), Ordering::SeqCst);
        signer_of(&secrets, &body, &mac)
    }

    async fn template_updates(&self, _: Arc<[u8]>) -> Vec<(String, Vec<TemplateStatusChange>)> {
        Vec::new()
    }
}

/// Channels 1..=n on `pn-1`.. with secrets `app-1`..; `pn-9` has the secret of `pn-1`.
fn store(channels: Vec<CallbackChannel>, queries: Arc<AtomicUsize>) -> MockCallbackStore {
    let mut s = MockCallbackStore::new();
    s.expect_channels_for_accounts().returning(move |_, accounts| {
        queries.fetch_add(1, Ordering::SeqCst);
        Ok(channels.iter().filter(|c| accounts.contains(&c.account_id)).cloned().collect())
    });
    s.expect_apply().returning(|_, _| Ok(Applied { statuses: 1, inbound: 0 }));
    s
}

/// A throttle with no failures yet, counting those it is told of.
fn throttle(failures: Arc<AtomicUsize>) -> MockCallbackThrottle {
    let mut t = MockCallbackThrottle::new();
    t.expect_record().returning(|_| Ok(None));
    t.expect_count_failure().returning(move |_, _, _| {
        failures.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    t
}

struct Setup {
    service: CallbackService,
    queries: Arc<AtomicUsize>,
    hashed: Arc<AtomicUsize>,
    failures: Arc<AtomicUsize>,
}

fn setup(channels: Vec<CallbackChannel>, accounts: &[&str], t: Option<MockCallbackThrottle>) -> Setup {
    let (queries, hashed, failures) = (Arc::default(), Arc::<AtomicUsize>::default(), Arc::default());
    let work = Inline { accounts: accounts.iter().map(|a| (*a).to_owned()).collect(), hashed: hashed.clone() };
    let t = t.unwrap_or_else(|| throttle(Arc::clone(&failures)));
    let service = CallbackService::new(
        Arc::new(store(channels, Arc::clone(&queries))),
        Arc::new(cipher()),
        Arc::new(work),
        Arc::new(t),
        Arc::new(clock()),
    );
    Setup { service, queries, hashed, failures }
}

fn two_tenants() -> Vec<CallbackChannel> {
    vec![channel(1, "pn-1", "app-a"), channel(2, "pn-2", "app-b")]
}

async fn receive(s: &CallbackService, signature: Option<&str>) -> Result<CallbackReport, CallbackError> {
    let body: Arc<[u8]> = Arc::from(&b"{}"[..]);
    s.receive(ReceivedCallback {
        platform: ChannelType::Whatsapp,
        body,
        signature,
        client: Some("10.0.0.1".parse().expect("ip")),
    })
    .await
}

#[tokio::test]
async fn a_bad_signature_is_refused_alike_for_known_unknown_and_no_accounts_and_counted() {
    let wrong = sign("not-our-secret", b"{}");
    let right = sign("app-a", b"{}");
    let mut calls = 0;
    for accounts in [&["pn-1"][..], &["pn-unknown"], &[]] {
        let s = setup(two_tenants(), accounts, None);
        for signature in [None, Some("sha256=00"), Some(""), Some(wrong.as_str())] {
            let err = receive(&s.service, signature).await;
            assert!(matches!(err, Err(CallbackError::BadSignature)), "{signature:?} {accounts:?}: {err:?}");
            calls += 1;
        }
        if accounts != ["pn-1"] {
            // No secret known for the accounts named: refused even when signed by a real secret.
            assert!(matches!(receive(&s.service, Some(&right)).await, Err(CallbackError::BadSignature)));
            calls += 1;
        }
        assert_eq!(s.failures.load(Ordering::SeqCst), if accounts == ["pn-1"] { 4 } else { 5 });
    }
    assert_eq!(calls, 14);
}

#[tokio::test]
async fn a_forged_body_naming_thousands_of_accounts_costs_one_query_and_at_most_four_hashes() {
    let channels: Vec<CallbackChannel> =
        (0..200).map(|i| channel(i, &format!("pn-{i}"), &format!("app-{i}"))).collect();
    let many: Vec<String> = (0..20_000).map(|i| format!("pn-{i}")).collect();
    let named: Vec<&str> = many.iter().map(String::as_str).collect();
    let s = setup(channels, &named, None);
    let err = receive(&s.service, Some(&sign("forged", b"{}"))).await;
    assert!(matches!(err, Err(CallbackError::BadSignature)));
    assert_eq!(s.queries.load(Ordering::SeqCst), 1);
    assert_eq!(s.hashed.load(Ordering::SeqCst), MAX_CANDIDATE_SECRETS);
}

#[tokio::test]
async fn no_known_account_means_no_hashing_at_all() {
    let s = setup(two_tenants(), &["pn-unknown", "pn-other"], None);
    assert!(matches!(receive(&s.service, Some(&sign("app-a", b"{}"))).await, Err(CallbackError::BadSignature)));
    assert_eq!(s.hashed.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn events_apply_only_to_channels_whose_secret_signed() {
    let mut channels = two_tenants();
    channels.push(channel(9, "pn-9", "app-a"));
    let s = setup(channels, &["pn-1", "pn-2", "pn-9", "pn-unknown"], None);
    let report = receive(&s.service, Some(&sign("app-a", b"{}"))).await.expect("accepted");
    assert_eq!(report.applied.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [ChannelId(1), ChannelId(9)]);
    assert_eq!(report.skipped, ["pn-2", "pn-unknown"]);
    assert_eq!(report.named, 4);
    assert_eq!(s.failures.load(Ordering::SeqCst), 0, "a good signature is no failure");
}

#[tokio::test]
async fn more_than_a_hundred_accounts_in_a_signed_body_are_too_many() {
    let many: Vec<String> = (0..=MAX_CALLBACK_ACCOUNTS).map(|i| format!("pn-{i}")).collect();
    let named: Vec<&str> = many.iter().map(String::as_str).collect();
    let channels = vec![channel(1, "pn-1", "app-a")];
    let s = setup(channels.clone(), &named, None);
    let err = receive(&s.service, Some(&sign("app-a", b"{}"))).await;
    assert!(matches!(err, Err(CallbackError::TooManyAccounts { named: 101 })), "{err:?}");
    let s = setup(channels, &named[..MAX_CALLBACK_ACCOUNTS], None);
    assert!(receive(&s.service, Some(&sign("app-a", b"{}"))).await.is_ok());
}

#[tokio::test]
async fn an_address_over_its_budget_is_refused_before_any_work_and_then_from_memory() {
    let mut t = MockCallbackThrottle::new();
    let subject = ThrottleSubject::callbacks_from(Some("10.0.0.1".parse().expect("ip")));
    let record = ThrottleRecord { subject, failed_at: vec![NOW - Duration::seconds(15); 20] };
    t.expect_record().times(1).returning(move |_| Ok(Some(record.clone())));
    t.expect_count_failure().never();
    let s = setup(two_tenants(), &["pn-1"], Some(t));
    for _ in 0..3 {
        let err = receive(&s.service, Some(&sign("app-a", b"{}"))).await;
        assert!(matches!(err, Err(CallbackError::Throttled { retry_after: 45 })), "{err:?}");
    }
    assert_eq!(s.queries.load(Ordering::SeqCst), 0);
    assert_eq!(s.hashed.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn nineteen_failures_within_the_minute_still_admit() {
    let at = |ago: i64| NOW - Duration::seconds(ago);
    // 19 just now; 20 a minute ago; 20 of which the oldest left the minute a second ago.
    let cases = [vec![at(10); 19], vec![at(61); 20], std::iter::once(at(61)).chain(vec![at(10); 19]).collect()];
    for failed_at in cases {
        let mut t = MockCallbackThrottle::new();
        let subject = ThrottleSubject::callbacks_from(None);
        let record = ThrottleRecord { subject, failed_at: failed_at.clone() };
        t.expect_record().returning(move |_| Ok(Some(record.clone())));
        let s = setup(two_tenants(), &["pn-1"], Some(t));
        assert!(receive(&s.service, Some(&sign("app-a", b"{}"))).await.is_ok(), "{failed_at:?}");
    }
}

#[test]
fn callback_failures_are_counted_apart_from_sign_ins() {
    let ip = "10.0.0.1".parse().expect("ip");
    assert_eq!(ThrottleSubject::callbacks_from(Some(ip)).as_str(), "callback:ip:10.0.0.1");
    assert_ne!(ThrottleSubject::callbacks_from(Some(ip)), ThrottleSubject::client(ip));
    assert_eq!(ThrottleSubject::callbacks_from(None).as_str(), "callback:ip:unknown");
}

#[tokio::test]
async fn the_handshake_looks_the_verify_token_up_by_its_digest_only() {
    let mut s = MockCallbackStore::new();
    s.expect_verify_token_known()
        .withf(|p, d| *p == ChannelType::Messenger && *d == verify_token_digest("verify-me-please"))
        .times(1)
        .returning(|_, _| Ok(true));
    let service = CallbackService::new(
        Arc::new(s),
        Arc::new(cipher()),
        Arc::new(Inline { accounts: Vec::new(), hashed: Arc::default() }),
        Arc::new(MockCallbackThrottle::new()),
        Arc::new(clock()),
    );
    assert!(service.verify_token_known(ChannelType::Messenger, "verify-me-please").await.expect("known"));
}

proptest! {
    /// Any header parses without panicking; a well-formed one round-trips.
    #[test]
    fn signature_headers_never_panic(header in any::<String>(), mac in proptest::collection::vec(any::<u8>(), 32)) {
        let _ = parse_signature(&header);
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        prop_assert_eq!(parse_signature(&format!("sha256={hex}")), Some(mac.clone()));
        prop_assert_eq!(parse_signature(&format!("sha256={}", hex.to_uppercase())), Some(mac));
    }

    /// The signer is found among the candidates whatever its place; others never match.
    #[test]
    fn the_signer_is_found_among_the_candidates(body in proptest::collection::vec(any::<u8>(), 0..512), at in 0..4usize) {
        let secrets: Vec<Vec<u8>> = (0..4).map(|i| format!("secret-{i}").into_bytes()).collect();
        let mut m = Hmac::<Sha256>::new_from_slice(&secrets[at]).expect("key");
        m.update(&body);
        let mac = m.finalize().into_bytes().to_vec();
        prop_assert_eq!(signer_of(&secrets, &body, &mac), Some(at));
        prop_assert_eq!(signer_of(&secrets[..at], &body, &mac), None);
    }
}
