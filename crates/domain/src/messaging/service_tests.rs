//! Unit tests of [`MessagingService`] on mocks.

use super::*;
use crate::channels::{Channel, MockChannelRepository};
use crate::common::ports::MockClock;
use crate::connectors::templates::{MockTemplateStore, WhatsappTemplate};
use crate::connectors::Template;
use crate::messaging::{Direction, MessageId, MessageStatus, MockMessageRepository, ThreadRef};

const NOW: time::OffsetDateTime = time::macros::datetime!(2026-03-02 10:00:00 UTC);

fn clock() -> MockClock {
    let mut c = MockClock::new();
    c.expect_now().returning(|| NOW);
    c
}

fn channel(status: ChannelStatus, t: ChannelType) -> Channel {
    Channel {
        id: ChannelId(7),
        channel_type: t,
        display_name: "Support".into(),
        identifier: "+14155550101".into(),
        status,
        created_at: time::OffsetDateTime::UNIX_EPOCH,
        default_team_id: None,
    }
}

fn stored() -> Stored {
    Stored {
        message: Message {
            id: MessageId(1),
            channel_id: ChannelId(7),
            thread_id: ThreadId(3),
            direction: Direction::Outbound,
            content: "hi".into(),
            status: MessageStatus::Queued,
            created_at: time::OffsetDateTime::UNIX_EPOCH,
            sender: crate::messaging::Sender::ApiKey(Some(1)),
        },
        replayed: false,
    }
}

fn channels(status: ChannelStatus, t: ChannelType) -> MockChannelRepository {
    let mut c = MockChannelRepository::new();
    c.expect_find().returning(move |_, _| Ok(Some(channel(status, t))));
    c
}

async fn send_message(
    channels: MockChannelRepository,
    messages: MockMessageRepository,
    ws: WorkspaceId,
    input: SendInput,
    author: Option<UserId>,
    idempotency_key: Option<&str>,
) -> Result<Stored, SendMessageError> {
    send_with(channels, messages, MockTemplateStore::new(), ws, input, author, idempotency_key).await
}

async fn send_with(
    channels: MockChannelRepository,
    messages: MockMessageRepository,
    templates: MockTemplateStore,
    ws: WorkspaceId,
    input: SendInput,
    author: Option<UserId>,
    idempotency_key: Option<&str>,
) -> Result<Stored, SendMessageError> {
    let service = MessagingService::new(Arc::new(channels), Arc::new(messages), Arc::new(templates), Arc::new(clock()));
    let by = author.map_or(SendAs::ApiKey(1), SendAs::Member);
    service.send(ws, input, by, idempotency_key).await
}

fn input(to: Option<&str>, thread: Option<i64>) -> SendInput {
    SendInput {
        channel_id: 7,
        content: "hi".into(),
        thread_id: thread,
        to: to.map(Into::into),
        template: None,
        sender: None,
        tag: None,
    }
}

#[tokio::test]
async fn a_new_whatsapp_recipient_is_normalised() {
    let mut m = MockMessageRepository::new();
    m.expect_insert_outbound()
        .withf(|_, n| {
            n.recipient == Recipient::Address("+14155550123".into())
                && n.sender == crate::messaging::Sender::ApiKey(Some(1))
        })
        .returning(|_, _| Ok(stored()));
    let r = send_message(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        m,
        WorkspaceId(1),
        input(Some("+1 (415) 555-0123"), None),
        None,
        None,
    )
    .await;
    assert!(r.is_ok());
}

#[tokio::test]
async fn without_thread_or_recipient_the_error_names_to() {
    let r = send_message(
        MockChannelRepository::new(),
        MockMessageRepository::new(),
        WorkspaceId(1),
        input(None, None),
        None,
        None,
    )
    .await;
    let Err(SendMessageError::Invalid(v)) = r else { panic!("expected validation error") };
    assert_eq!(v.0[0].field, "to");
}

#[tokio::test]
async fn empty_and_oversized_content_is_refused() {
    for content in ["  ".to_owned(), "x".repeat(4097)] {
        let i = SendInput { content, ..input(Some("+14155550123"), None) };
        let r = send_message(MockChannelRepository::new(), MockMessageRepository::new(), WorkspaceId(1), i, None, None)
            .await;
        assert!(matches!(r, Err(SendMessageError::Invalid(v)) if v.0[0].field == "content"));
    }
    let i = SendInput { content: "é".repeat(4096), ..input(Some("+14155550123"), None) };
    let mut m = MockMessageRepository::new();
    m.expect_insert_outbound().returning(|_, _| Ok(stored()));
    assert!(send_message(channels(ChannelStatus::Active, ChannelType::Whatsapp), m, WorkspaceId(1), i, None, None)
        .await
        .is_ok());
}

#[tokio::test]
async fn an_inactive_channel_is_a_conflict() {
    let r = send_message(
        channels(ChannelStatus::Disconnected, ChannelType::Whatsapp),
        MockMessageRepository::new(),
        WorkspaceId(1),
        input(Some("+14155550123"), None),
        None,
        None,
    )
    .await;
    assert!(matches!(r, Err(SendMessageError::ChannelNotActive { id: 7, status: "disconnected" })));
}

#[tokio::test]
async fn a_thread_on_another_channel_is_refused() {
    let mut m = MockMessageRepository::new();
    m.expect_find_thread().returning(|_, id| {
        Ok(Some(ThreadRef { id, channel_id: ChannelId(99), latest_inbound_at: None, contact_erased: false }))
    });
    let r = send_message(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        m,
        WorkspaceId(1),
        input(None, Some(3)),
        None,
        None,
    )
    .await;
    assert!(matches!(r, Err(SendMessageError::Invalid(v)) if v.0[0].field == "thread_id"));
}

#[tokio::test]
async fn an_idempotent_retry_returns_the_first_message_without_storing() {
    let mut m = MockMessageRepository::new();
    m.expect_replay().returning(|_, _| Ok(Some(stored().message)));
    m.expect_insert_outbound().never();
    let r = send_message(
        MockChannelRepository::new(),
        m,
        WorkspaceId(1),
        input(Some("+14155550123"), None),
        None,
        Some("order-1"),
    )
    .await;
    assert!(matches!(r, Ok(Stored { replayed: true, .. })));
}

#[test]
fn fingerprints_differ_for_different_requests() {
    let a = fingerprint(&input(Some("+1"), None));
    assert_eq!(a, fingerprint(&input(Some("+1"), None)));
    assert_ne!(a, fingerprint(&input(Some("+2"), None)));
    assert_ne!(a, fingerprint(&input(None, Some(1))));
}

#[test]
fn a_key_may_name_a_member_or_agent_and_a_member_only_themselves() {
    use crate::messaging::Sender;
    assert_eq!(decide_sender(SendAs::ApiKey(4), None), Ok(Sender::ApiKey(Some(4))));
    assert_eq!(decide_sender(SendAs::ApiKey(4), Some(("user", 9))), Ok(Sender::User(9)));
    assert_eq!(decide_sender(SendAs::ApiKey(4), Some(("ai_agent", 2))), Ok(Sender::AiAgent(2)));
    assert_eq!(decide_sender(SendAs::Member(UserId(9)), None), Ok(Sender::User(9)));
    assert_eq!(decide_sender(SendAs::Member(UserId(9)), Some(("user", 9))), Ok(Sender::User(9)));
    for (by, named) in [
        (SendAs::ApiKey(4), ("contact", 1)),
        (SendAs::ApiKey(4), ("api_key", 4)),
        (SendAs::Member(UserId(9)), ("user", 8)),
        (SendAs::Member(UserId(9)), ("ai_agent", 2)),
    ] {
        assert_eq!(decide_sender(by, Some(named)).map_err(|e| e.field), Err("sender".to_owned()), "{named:?}");
    }
}

#[tokio::test]
async fn a_key_naming_someone_who_cannot_send_is_refused_naming_sender() {
    let mut m = MockMessageRepository::new();
    m.expect_sender_standing().returning(|_, _| Ok(SenderStanding::Member { active: false }));
    let mut i = input(Some("+14155550123"), None);
    i.sender = Some(("user".into(), 77));
    let r =
        send_message(channels(ChannelStatus::Active, ChannelType::Whatsapp), m, WorkspaceId(1), i, None, None).await;
    assert!(matches!(r, Err(SendMessageError::Invalid(e)) if e.0[0].field == "sender"));
}

#[test]
fn only_active_members_and_active_agents_are_sent_for() {
    assert_eq!(admit_sender(Sender::User(9), SenderStanding::Member { active: true }), Ok(()));
    assert_eq!(admit_sender(Sender::AiAgent(2), SenderStanding::agent("active")), Ok(()));
    for (sender, standing, message) in [
        (Sender::User(9), SenderStanding::Member { active: false }, "no active user 9 in this workspace"),
        (Sender::User(9), SenderStanding::Unknown, "no active user 9 in this workspace"),
        (Sender::AiAgent(2), SenderStanding::agent("paused"), "no active ai_agent 2 in this workspace"),
        (Sender::AiAgent(2), SenderStanding::Unknown, "no active ai_agent 2 in this workspace"),
    ] {
        let refused = admit_sender(sender, standing).expect_err("refused");
        assert_eq!((refused.field.as_str(), refused.message.as_str()), ("sender", message), "{standing:?}");
    }
}

fn thread_written_at(at: Option<time::OffsetDateTime>) -> MockMessageRepository {
    let mut m = MockMessageRepository::new();
    m.expect_find_thread().returning(move |_, id| {
        Ok(Some(ThreadRef { id, channel_id: ChannelId(7), latest_inbound_at: at, contact_erased: false }))
    });
    m
}

#[tokio::test]
async fn free_text_to_a_thread_whose_window_closed_is_refused_before_storing() {
    let mut m = thread_written_at(Some(NOW - time::Duration::hours(25)));
    m.expect_insert_outbound().never();
    let r = send_message(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        m,
        WorkspaceId(1),
        input(None, Some(3)),
        None,
        None,
    )
    .await;
    let Err(SendMessageError::WindowClosed(c)) = r else { panic!("expected a closed window: {r:?}") };
    assert_eq!(c.expires_at, Some(NOW - time::Duration::hours(1)));
}

#[tokio::test]
async fn free_text_within_the_window_is_stored_with_what_it_needs() {
    let mut m = thread_written_at(Some(NOW - time::Duration::hours(23)));
    m.expect_insert_outbound()
        .withf(|_, n| n.need == WindowNeed::FreeText && n.tag.is_none() && n.at == NOW)
        .returning(|_, _| Ok(stored()));
    let r = send_message(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        m,
        WorkspaceId(1),
        input(None, Some(3)),
        None,
        None,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
}

#[tokio::test]
async fn a_human_agent_tag_stretches_the_window_to_7_days_on_messenger_only() {
    let mut m = thread_written_at(Some(NOW - time::Duration::days(6)));
    m.expect_insert_outbound().withf(|_, n| n.tag == Some(MessageTag::HumanAgent)).returning(|_, _| Ok(stored()));
    let tagged = SendInput { tag: Some("human_agent".into()), ..input(None, Some(3)) };
    let r = send_message(
        channels(ChannelStatus::Active, ChannelType::Messenger),
        m,
        WorkspaceId(1),
        tagged.clone(),
        None,
        None,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    let r = send_message(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        MockMessageRepository::new(),
        WorkspaceId(1),
        tagged,
        None,
        None,
    )
    .await;
    assert!(matches!(r, Err(SendMessageError::Invalid(v)) if v.0[0].field == "tag"));
}

fn catalogue(status: TemplateStatus) -> MockTemplateStore {
    let mut t = MockTemplateStore::new();
    t.expect_find().returning(move |_, _, name, language| {
        Ok((name == "order_update" && language == "en_US").then(|| WhatsappTemplate {
            name: name.into(),
            language: language.into(),
            category: "UTILITY".into(),
            status,
            quality: None,
            parameters: 1,
            body: "Order {{1}} shipped".into(),
            rejected_reason: None,
            updated_at: NOW,
        }))
    });
    t
}

fn template_send(name: &str, parameters: &[&str]) -> SendInput {
    let template = Template {
        name: name.into(),
        language: "en_US".into(),
        parameters: parameters.iter().map(|p| (*p).to_owned()).collect(),
    };
    SendInput { template: Some(template), ..input(Some("+14155550123"), None) }
}

#[tokio::test]
async fn a_template_send_is_checked_against_the_catalogue_before_storing() {
    let cases = [
        (template_send("order_updat", &["42"]), TemplateStatus::Approved, "template.name"),
        (template_send("order_update", &[]), TemplateStatus::Approved, "template.parameters"),
    ];
    for (send, status, field) in cases {
        let mut m = MockMessageRepository::new();
        m.expect_insert_outbound().never();
        let r = send_with(
            channels(ChannelStatus::Active, ChannelType::Whatsapp),
            m,
            catalogue(status),
            WorkspaceId(1),
            send,
            None,
            None,
        )
        .await;
        assert!(matches!(&r, Err(SendMessageError::Invalid(v)) if v.0[0].field == field), "{r:?}");
    }
    let mut m = MockMessageRepository::new();
    m.expect_insert_outbound().never();
    let r = send_with(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        m,
        catalogue(TemplateStatus::Paused),
        WorkspaceId(1),
        template_send("order_update", &["42"]),
        None,
        None,
    )
    .await;
    assert!(matches!(r, Err(SendMessageError::TemplateNotApproved { status: TemplateStatus::Paused, .. })));
    let mut m = MockMessageRepository::new();
    m.expect_insert_outbound().withf(|_, n| n.need == WindowNeed::Template).returning(|_, _| Ok(stored()));
    let r = send_with(
        channels(ChannelStatus::Active, ChannelType::Whatsapp),
        m,
        catalogue(TemplateStatus::Approved),
        WorkspaceId(1),
        template_send("order_update", &["42"]),
        None,
        None,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
}
