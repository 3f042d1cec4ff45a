use std::sync::{Arc, Mutex};

use time::macros::datetime;

use super::*;
use crate::common::ports::MockClock;
use crate::mail::{Letter, Mail, MailId, MockMailQueue, MockMailTransport};
use crate::users::Email;

fn retry() -> MailRetry {
    MailRetry {
        delays: vec![Duration::from_secs(10), Duration::from_secs(60)],
        give_up_after: Some(Duration::from_secs(3600)),
        lease: Duration::from_secs(120),
    }
}

fn claim(attempt: u32, queued_at: OffsetDateTime) -> ClaimedMail {
    let to = Email::new("to", "a@b.test").expect("email");
    ClaimedMail { id: MailId(7), attempt, queued_at, mail: Mail::compose(to, "s", &Letter::default()) }
}

#[test]
fn a_transient_failure_is_retried_after_the_attempts_delay_and_the_last_delay_repeats() {
    let t0 = datetime!(2026-11-26 10:00 UTC);
    let r = retry();
    let err = || Err(TransportError::Transient("connection refused".into()));
    assert_eq!(
        fate(&claim(1, t0), err(), t0, &r),
        MailFate::Retry { at: t0 + Duration::from_secs(10), error: "connection refused".into() }
    );
    assert_eq!(
        fate(&claim(2, t0), err(), t0, &r),
        MailFate::Retry { at: t0 + Duration::from_secs(60), error: "connection refused".into() }
    );
    assert_eq!(
        fate(&claim(9, t0), err(), t0, &r),
        MailFate::Retry { at: t0 + Duration::from_secs(60), error: "connection refused".into() }
    );
}

#[test]
fn a_mail_that_waited_too_long_or_was_refused_for_good_fails() {
    let t0 = datetime!(2026-11-26 10:00 UTC);
    let r = retry();
    let late = t0 + Duration::from_secs(3590);
    assert!(matches!(
        fate(&claim(5, t0), Err(TransportError::Transient("x".into())), late, &r),
        MailFate::Failed { .. }
    ));
    assert_eq!(
        fate(&claim(1, t0), Err(TransportError::Permanent("550 no such user".into())), t0, &r),
        MailFate::Failed { error: "550 no such user".into() }
    );
    assert_eq!(fate(&claim(3, t0), Ok(()), late, &r), MailFate::Sent);
}

#[test]
fn without_a_limit_an_outage_of_days_only_delays_a_mail() {
    let t0 = datetime!(2026-11-26 10:00 UTC);
    let r = MailRetry { give_up_after: None, ..retry() };
    let days_later = t0 + Duration::from_secs(5 * 24 * 3600);
    assert!(matches!(
        fate(&claim(500, t0), Err(TransportError::Transient("connection refused".into())), days_later, &r),
        MailFate::Retry { .. }
    ));
}

#[tokio::test]
async fn each_result_is_recorded_for_its_claim() {
    let t0 = datetime!(2026-11-26 10:00 UTC);
    let mut queue = MockMailQueue::new();
    queue.expect_claim_due().returning(move |_, max, lease| {
        assert_eq!((max, lease), (10, Duration::from_secs(120)));
        Ok(vec![claim(1, t0), ClaimedMail { id: MailId(8), ..claim(2, t0) }])
    });
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let r2 = recorded.clone();
    queue.expect_record().times(2).returning(move |r| {
        r2.lock().expect("lock").push(r.clone());
        Ok(())
    });
    let mut transport = MockMailTransport::new();
    let mut first = true;
    transport.expect_send().times(2).returning(move |_| {
        let out = if first { Ok(()) } else { Err(TransportError::Transient("421 busy".into())) };
        first = false;
        out
    });
    let mut clock = MockClock::new();
    clock.expect_now().return_const(t0);
    let sender =
        MailSender { queue: Arc::new(queue), transport: Arc::new(transport), clock: Arc::new(clock), retry: retry() };
    let results = sender.send_due(10).await.expect("sent");
    assert_eq!(results, *recorded.lock().expect("lock"));
    assert_eq!(results[0], MailResult { id: MailId(7), attempt: 1, fate: MailFate::Sent });
    assert_eq!(results[1].attempt, 2);
    assert_eq!(results[1].fate, MailFate::Retry { at: t0 + Duration::from_secs(60), error: "421 busy".into() });
}
