//! Unit tests of [`ContactsService`] on mocks.

use super::*;
use crate::contacts::ports::MockContactRepository;
use time::OffsetDateTime;

fn contact(id: i64) -> Contact {
    Contact {
        id,
        name: Some("Ana".into()),
        phone: Some("+14155550123".into()),
        email: None,
        country: None,
        language: None,
        note: None,
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
        first_contacted_at: None,
        last_contacted_at: None,
    }
}

fn fields(e: &ValidationErrors) -> Vec<&str> {
    e.0.iter().map(|f| f.field.as_str()).collect()
}

#[test]
fn new_contacts_need_a_phone_or_an_email_and_valid_fields() {
    let e = validate_new(&ContactInput { name: "Ana".into(), ..ContactInput::default() }).expect_err("no address");
    assert_eq!(fields(&e), ["phone"]);
    let bad = ContactInput {
        name: " ".into(),
        phone: Some("555-0101".into()),
        email: Some("not-an-address".into()),
        country: Some("BRA".into()),
        language: Some("brazilian".into()),
        note: None,
    };
    assert_eq!(fields(&validate_new(&bad).expect_err("invalid")), ["name", "phone", "email", "country", "language"]);
    let ok = ContactInput {
        name: "Ana".into(),
        phone: Some("+1 (415) 555-0123".into()),
        email: Some("Ana@Example.com".into()),
        country: Some("br".into()),
        ..ContactInput::default()
    };
    let c = validate_new(&ok).expect("valid");
    assert_eq!(c.phone.as_ref().map(E164Phone::as_str), Some("+14155550123"));
    assert_eq!(c.email.as_ref().map(Email::as_str), Some("ana@example.com"));
    assert_eq!(c.country.as_ref().map(CountryCode::as_str), Some("BR"));
}

#[test]
fn changes_distinguish_null_from_absent() {
    let c = validate_change(&ContactChangeInput { note: Some(None), ..ContactChangeInput::default() })
        .expect("clears the note");
    assert_eq!(c.note, Some(None));
    assert_eq!(c.phone, None);
    let e = validate_change(&ContactChangeInput::default()).expect_err("empty");
    assert_eq!(fields(&e), ["body"]);
    let e = validate_change(&ContactChangeInput { name: Some(None), ..ContactChangeInput::default() })
        .expect_err("null name");
    assert_eq!(fields(&e), ["name"]);
}

#[test]
fn a_cursor_only_fits_the_filters_it_was_made_for() {
    let a = ContactFilter { name_prefix: Some("an".into()), ..ContactFilter::default() };
    let b = ContactFilter { name_prefix: Some("be".into()), ..ContactFilter::default() };
    let c = encode_cursor(42, &fingerprint(&a));
    assert_eq!(decode_cursor(&c, &fingerprint(&a)), Some(42));
    assert_eq!(decode_cursor(&c, &fingerprint(&b)), None);
    assert_eq!(decode_cursor(&crate::common::page::encode_cursor(42), &fingerprint(&a)), None);
}

#[test]
fn the_unfiltered_fingerprint_is_the_one_scripts_bench_rest_computes() {
    assert_eq!(fingerprint(&ContactFilter::default()), "1bfe0413f7890c1d");
}

#[tokio::test]
async fn an_unknown_label_is_a_validation_failure_naming_label() {
    let mut repo = MockContactRepository::new();
    repo.expect_list().returning(|_, _, _, _| Err(ListContactsStoreError::UnknownLabel("vip".into())));
    let svc = ContactsService::new(Arc::new(repo));
    let input = ListContactsInput { label: Some("vip".into()), ..ListContactsInput::default() };
    match svc.list(WorkspaceId(1), input).await {
        Err(ListContactsError::Invalid(e)) => assert_eq!(fields(&e), ["label"]),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn pages_carry_a_cursor_for_the_same_filters() {
    let mut repo = MockContactRepository::new();
    repo.expect_list().returning(|_, _, after, fetch| {
        let start = after.unwrap_or(0) + 1;
        Ok((start..start + fetch).map(contact).collect())
    });
    let svc = ContactsService::new(Arc::new(repo));
    let first = svc
        .list(WorkspaceId(1), ListContactsInput { limit: Some(2), ..ListContactsInput::default() })
        .await
        .expect("page");
    assert_eq!(first.data.iter().map(|c| c.id).collect::<Vec<_>>(), [1, 2]);
    let next = ListContactsInput { limit: Some(2), cursor: first.next_cursor.clone(), ..ListContactsInput::default() };
    let second = svc.list(WorkspaceId(1), next).await.expect("page");
    assert_eq!(second.data.iter().map(|c| c.id).collect::<Vec<_>>(), [3, 4]);
    let other = ListContactsInput { q: Some("an".into()), cursor: first.next_cursor, ..ListContactsInput::default() };
    match svc.list(WorkspaceId(1), other).await {
        Err(ListContactsError::Invalid(e)) => assert_eq!(fields(&e), ["cursor"]),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn clearing_the_last_address_is_refused() {
    let mut repo = MockContactRepository::new();
    repo.expect_find().returning(|_, id| Ok(Some(contact(id))));
    let svc = ContactsService::new(Arc::new(repo));
    let input = ContactChangeInput { phone: Some(None), ..ContactChangeInput::default() };
    match svc.update(WorkspaceId(1), 7, input).await {
        Err(UpdateContactError::Invalid(e)) => assert_eq!(fields(&e), ["phone"]),
        other => panic!("unexpected {other:?}"),
    }
}
