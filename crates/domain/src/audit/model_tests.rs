//! Unit tests of audit records.

use super::*;
use crate::users::{Role, UserId};

#[test]
fn action_names_round_trip_and_are_unique() {
    for a in AuditAction::ALL {
        assert_eq!(a.as_str().parse::<AuditAction>(), Ok(*a));
    }
    let mut names: Vec<&str> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), AuditAction::ALL.len());
}

#[test]
fn filters_name_every_bad_field() {
    let e = AuditFilter::parse(Some("api_key.stolen"), Some("robot"), Some("yesterday"), Some("2026-13-01"))
        .expect_err("invalid");
    let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["action", "actor_type", "since", "until"]);
}

#[test]
fn good_filters_parse_and_empty_ones_are_absent() {
    let f =
        AuditFilter::parse(Some("member.added"), Some("cli"), Some("2026-11-24T10:00:00Z"), Some("")).expect("valid");
    assert_eq!(f.action, Some(AuditAction::MemberAdded));
    assert_eq!(f.actor_type, Some(ActorType::Cli));
    assert!(f.since.is_some() && f.until.is_none());
}

#[test]
fn actors_map_to_their_kind_and_long_user_agents_are_cut() {
    let ctx = AuditContext::new(
        Actor::Member { user_id: UserId(4), role: Role::Admin },
        Some("127.0.0.1".into()),
        Some(&"x".repeat(2000)),
        Some("r1".into()),
    );
    assert_eq!(ctx.actor, AuditActor { kind: ActorType::User, id: Some(4), label: None });
    assert_eq!(ctx.user_agent.as_deref().map(str::len), Some(512));
    assert_eq!(AuditActor::from(Actor::Operator).kind, ActorType::Cli);
    let e = ctx.entry(WorkspaceId(1), AuditAction::ApiKeyCreated, AuditTarget::api_key(None), Value::Null);
    assert_eq!(e.target_id_or(9), Some(9));
}
