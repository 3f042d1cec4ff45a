//! Unit tests of [`ChannelsService`] on mocks.

use super::*;
use crate::audit::AuditAction;
use crate::channels::model::{ChannelStatus, ChannelType};
use crate::channels::ports::MockChannelRepository;
use crate::common::ports::MockSecretCipher;
use crate::connectors::MockAccountProof;

const WS: WorkspaceId = WorkspaceId(7);

fn channel(id: i64, channel_type: ChannelType) -> Channel {
    Channel {
        id: ChannelId(id),
        channel_type,
        display_name: "Support".into(),
        identifier: "+14155550101".into(),
        status: ChannelStatus::Active,
        created_at: time::OffsetDateTime::UNIX_EPOCH,
        default_team_id: None,
    }
}

fn cipher() -> Arc<MockSecretCipher> {
    let mut c = MockSecretCipher::new();
    c.expect_seal().returning(|p, _| p.iter().rev().copied().collect());
    Arc::new(c)
}

fn credentials() -> ChannelCredentials {
    ChannelCredentials {
        phone_number_id: Some("109876".into()),
        access_token: Some("EAAG-token-1".into()),
        ..ChannelCredentials::default()
    }
}

fn whatsapp(credentials: Option<ChannelCredentials>) -> ChannelInput {
    ChannelInput {
        channel_type: "whatsapp".into(),
        display_name: "Support".into(),
        identifier: "+1 415 555 0101".into(),
        status: None,
        credentials,
        default_team_id: None,
    }
}

fn service(repo: MockChannelRepository, proof: MockAccountProof) -> ChannelsService {
    ChannelsService::new(Arc::new(repo), cipher(), Arc::new(proof))
}

#[tokio::test]
async fn a_channel_without_credentials_is_stored_with_its_audit_record_and_no_platform_call() {
    let mut repo = MockChannelRepository::new();
    repo.expect_reserve_id().times(1).returning(|| Ok(ChannelId(12)));
    repo.expect_create()
        .withf(|ws, new, entry| {
            *ws == WS
                && new.id == ChannelId(12)
                && new.identifier == "+14155550101"
                && entry.action == AuditAction::ChannelCreated
        })
        .times(1)
        .returning(|_, new, _| Ok(channel(new.id.0, new.channel_type)));
    // No expectation on the proof: calling it would fail the test.
    let created = service(repo, MockAccountProof::new()).create(WS, &AuditContext::cli(), whatsapp(None)).await;
    assert_eq!(created.expect("created").id, ChannelId(12));
}

#[tokio::test]
async fn invalid_fields_never_reach_the_platform_or_the_storage() {
    let mut repo = MockChannelRepository::new();
    repo.expect_reserve_id().returning(|| Ok(ChannelId(12)));
    let input = ChannelInput { display_name: String::new(), ..whatsapp(Some(credentials())) };
    let e = service(repo, MockAccountProof::new()).create(WS, &AuditContext::cli(), input).await;
    assert!(matches!(e, Err(CreateChannelError::Invalid(v)) if v.0[0].field == "display_name"));
}

#[tokio::test]
async fn credentials_the_platform_refuses_store_nothing() {
    let mut repo = MockChannelRepository::new();
    repo.expect_reserve_id().returning(|| Ok(ChannelId(12)));
    let mut proof = MockAccountProof::new();
    proof
        .expect_prove()
        .withf(|t, c| *t == ChannelType::Whatsapp && c.phone_number_id.as_deref() == Some("109876"))
        .times(1)
        .returning(|_, _| Err(ProofError::Refused("the token is not for this number".into())));
    let e = service(repo, proof).create(WS, &AuditContext::cli(), whatsapp(Some(credentials()))).await;
    assert!(matches!(e, Err(CreateChannelError::CredentialsRefused(_))), "{e:?}");
}

#[tokio::test]
async fn a_duplicate_identifier_is_the_domains_conflict() {
    let mut repo = MockChannelRepository::new();
    repo.expect_reserve_id().returning(|| Ok(ChannelId(12)));
    repo.expect_create().returning(|_, _, _| {
        Err(InsertChannelError::Duplicate { channel_type: "whatsapp".into(), identifier: "+14155550101".into() })
    });
    let e = service(repo, MockAccountProof::new()).create(WS, &AuditContext::cli(), whatsapp(None)).await;
    assert!(matches!(e, Err(CreateChannelError::Duplicate { .. })), "{e:?}");
}

#[tokio::test]
async fn another_workspaces_channel_is_not_found() {
    let mut repo = MockChannelRepository::new();
    repo.expect_find().withf(|ws, id| *ws == WS && *id == ChannelId(3)).returning(|_, _| Ok(None));
    let repo = Arc::new(repo);
    let service = ChannelsService::new(repo, cipher(), Arc::new(MockAccountProof::new()));
    assert!(matches!(service.get(WS, ChannelId(3)).await, Err(GetChannelError::NotFound(ChannelId(3)))));
    // An unknown channel is reported before its (empty, invalid) change.
    let e = service.update(WS, &AuditContext::cli(), ChannelId(3), ChannelChangeInput::default()).await;
    assert!(matches!(e, Err(UpdateChannelError::NotFound(ChannelId(3)))), "{e:?}");
}

#[tokio::test]
async fn new_credentials_are_proven_for_the_stored_channels_platform_before_the_change() {
    let mut repo = MockChannelRepository::new();
    repo.expect_find().returning(|_, id| Ok(Some(channel(id.0, ChannelType::Messenger))));
    let mut proof = MockAccountProof::new();
    proof
        .expect_prove()
        .withf(|t, _| *t == ChannelType::Messenger)
        .times(1)
        .returning(|_, _| Err(ProofError::Unreachable("graph.facebook.com timed out".into())));
    let input = ChannelChangeInput {
        credentials: Some(ChannelCredentials {
            page_id: Some("104829301928374".into()),
            access_token: Some("EAAG-token-2".into()),
            ..ChannelCredentials::default()
        }),
        ..ChannelChangeInput::default()
    };
    let e = service(repo, proof).update(WS, &AuditContext::cli(), ChannelId(3), input).await;
    assert!(matches!(e, Err(UpdateChannelError::PlatformUnreachable(_))), "{e:?}");
}

#[tokio::test]
async fn a_rename_records_the_changed_field() {
    let mut repo = MockChannelRepository::new();
    repo.expect_find().returning(|_, id| Ok(Some(channel(id.0, ChannelType::Whatsapp))));
    repo.expect_update()
        .withf(|_, id, change, entries| {
            *id == ChannelId(3)
                && change.display_name.as_deref() == Some("Sales")
                && entries.len() == 1
                && entries[0].action == AuditAction::ChannelUpdated
                && entries[0].details == serde_json::json!({ "fields": ["display_name"] })
        })
        .times(1)
        .returning(|_, id, _, _| Ok(channel(id.0, ChannelType::Whatsapp)));
    let input = ChannelChangeInput { display_name: Some("Sales".into()), ..ChannelChangeInput::default() };
    let updated = service(repo, MockAccountProof::new()).update(WS, &AuditContext::cli(), ChannelId(3), input).await;
    assert_eq!(updated.expect("updated").id, ChannelId(3));
}
