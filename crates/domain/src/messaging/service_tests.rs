//! Unit tests of [`MessagingService`] on mocks.

use super::*;
use crate::channels::{Channel, MockChannelRepository};
use crate::messaging::{Direction, MessageId, MessageStatus, MockMessageRepository, ThreadRef};

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
    let service = MessagingService::new(Arc::new(channels), Arc::new(messages));
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
    m.expect_find_thread().returning(|_, id| Ok(Some(ThreadRef { id, channel_id: ChannelId(99) })));
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
    m.expect_can_send_as().returning(|_, _| Ok(false));
    let mut i = input(Some("+14155550123"), None);
    i.sender = Some(("user".into(), 77));
    let r =
        send_message(channels(ChannelStatus::Active, ChannelType::Whatsapp), m, WorkspaceId(1), i, None, None).await;
    assert!(matches!(r, Err(SendMessageError::Invalid(e)) if e.0[0].field == "sender"));
}
