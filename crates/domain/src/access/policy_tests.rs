//! Unit tests of the access policy table and [`authorize`].

use super::*;

fn caller(plan: PlanTier, actor: Actor, surface: Surface) -> Caller {
    Caller { workspace_id: WorkspaceId(1), plan, actor, surface }
}

fn agent() -> Actor {
    Actor::Member { user_id: UserId(2), role: Role::Agent }
}

fn admin() -> Actor {
    Actor::Member { user_id: UserId(1), role: Role::Admin }
}

fn key(scopes: &[Scope]) -> Actor {
    Actor::ApiKey { key_id: 9, scopes: ScopeSet::of(scopes.iter().copied()) }
}

#[test]
fn agents_cannot_manage_members_channels_webhooks_or_keys() {
    let c = caller(PlanTier::Advanced, agent(), Surface::RestApi);
    for action in [
        Action::MembersManage,
        Action::ChannelsWrite,
        Action::WebhooksRead,
        Action::WebhooksWrite,
        Action::ApiKeysCreate,
        Action::ApiKeysRead,
        Action::AuditRead,
        Action::ContactsErase,
    ] {
        assert!(matches!(authorize(&c, action), Err(Denied::Forbidden(_))), "{action}");
    }
    for action in [Action::MessagesWrite, Action::ThreadsWrite, Action::ContactsWrite, Action::MembersUpdate] {
        assert_eq!(authorize(&c, action), Ok(()), "{action}");
    }
}

#[test]
fn keys_need_the_scope_and_never_manage_keys() {
    let c = caller(PlanTier::Advanced, key(&[Scope::MessagesWrite]), Surface::RestApi);
    assert_eq!(authorize(&c, Action::MessagesRead), Ok(()));
    assert_eq!(authorize(&c, Action::ChannelsRead), Err(Denied::InsufficientScope(Scope::ChannelsRead)));
    let full = caller(PlanTier::Advanced, Actor::ApiKey { key_id: 1, scopes: ScopeSet::full() }, Surface::Settings);
    assert!(matches!(authorize(&full, Action::ApiKeysCreate), Err(Denied::Forbidden(_))));
}

#[test]
fn the_plan_is_checked_first_and_the_surface_raises_it() {
    let c = caller(PlanTier::Growth, admin(), Surface::RestApi);
    assert_eq!(
        authorize(&c, Action::WebhooksRead),
        Err(Denied::PlanRequired { required: PlanTier::Advanced, current: PlanTier::Growth })
    );
    let settings = Caller { surface: Surface::Settings, ..c };
    assert_eq!(authorize(&settings, Action::WebhooksRead), Ok(()));
    let starter = Caller { plan: PlanTier::Starter, actor: agent(), ..settings };
    assert_eq!(
        authorize(&starter, Action::WebhooksWrite),
        Err(Denied::PlanRequired { required: PlanTier::Growth, current: PlanTier::Starter })
    );
}

#[test]
fn keys_need_the_rest_api_plan_on_the_assistant_too_and_members_do_not() {
    for plan in [PlanTier::Free, PlanTier::Starter, PlanTier::Growth] {
        let k = caller(plan, key(&[Scope::AssistantRead]), Surface::Assistant);
        assert_eq!(
            authorize(&k, Action::AssistantUse),
            Err(Denied::PlanRequired { required: PlanTier::Advanced, current: plan })
        );
        for member in [admin(), agent()] {
            assert_eq!(authorize(&caller(plan, member, Surface::Assistant), Action::AssistantUse), Ok(()));
        }
    }
    let k = caller(PlanTier::Advanced, key(&[Scope::AssistantRead]), Surface::Assistant);
    assert_eq!(authorize(&k, Action::AssistantUse), Ok(()));
}

#[test]
fn the_published_matrix_has_a_row_per_action() {
    assert_eq!(matrix().lines().count(), Action::ALL.len() + 2);
}

#[test]
fn an_app_acts_within_the_grant_and_the_members_role() {
    let scopes = ScopeSet::of([Scope::AssistantRead]);
    let agent_app =
        caller(PlanTier::Free, Actor::App { user_id: UserId(2), role: Role::Agent, scopes }, Surface::Assistant);
    assert_eq!(authorize(&agent_app, Action::AssistantUse), Ok(()));
    assert_eq!(authorize(&agent_app, Action::ChannelsRead), Err(Denied::InsufficientScope(Scope::ChannelsRead)));
    assert!(matches!(authorize(&agent_app, Action::ApiKeysRead), Err(Denied::Forbidden(_))));
    let wide = ScopeSet::of([Scope::AuditRead]);
    let agent_wide = Caller { actor: Actor::App { user_id: UserId(2), role: Role::Agent, scopes: wide }, ..agent_app };
    assert!(matches!(authorize(&agent_wide, Action::AuditRead), Err(Denied::Forbidden(_))), "never more than the role");
}

#[test]
fn the_conversation_report_tool_needs_what_the_rest_report_needs() {
    let on = |actor| caller(PlanTier::Advanced, actor, Surface::Assistant);
    let tool = ToolName::GetConversationReport;
    assert_eq!(authorize_tool(&on(admin()), tool), Ok(()));
    assert!(matches!(authorize_tool(&on(agent()), tool), Err(Denied::Forbidden(_))));
    assert_eq!(
        authorize_tool(&on(key(&[Scope::AssistantRead])), tool),
        Err(Denied::InsufficientScope(Scope::ReportsRead))
    );
    assert_eq!(authorize_tool(&on(key(&[Scope::AssistantRead, Scope::ReportsRead])), tool), Ok(()));
    // An OAuth grant is `assistant:read` only: the member's role decides.
    let app = |role| Actor::App { user_id: UserId(3), role, scopes: ScopeSet::of([Scope::AssistantRead]) };
    assert_eq!(authorize_tool(&on(app(Role::Admin)), tool), Ok(()));
    assert!(matches!(authorize_tool(&on(app(Role::Agent)), tool), Err(Denied::Forbidden(_))));
    // The other tools need nothing more than the assistant itself.
    for t in &TOOLS {
        if t.tool != tool {
            assert_eq!(authorize_tool(&on(agent()), t.tool), Ok(()), "{}", t.name);
            assert_eq!(authorize_tool(&on(key(&[Scope::AssistantRead])), t.tool), Ok(()), "{}", t.name);
        }
    }
    assert!(assistant_tools_matrix().contains("| `get_conversation_report` | `reports.read` |"));
}

#[test]
fn only_callers_who_may_manage_webhooks_see_header_values() {
    let on = |actor: Actor, surface: Surface| caller(PlanTier::Advanced, actor, surface);
    let app = |role: Role| Actor::App { user_id: UserId(3), role, scopes: ScopeSet::of([Scope::AssistantRead]) };
    for (who, sees) in [
        (on(key(&[Scope::WebhooksRead]), Surface::RestApi), false),
        (on(key(&[Scope::WebhooksWrite]), Surface::RestApi), true),
        (on(Actor::ApiKey { key_id: 1, scopes: ScopeSet::full() }, Surface::RestApi), true),
        (on(admin(), Surface::RestApi), true),
        (on(admin(), Surface::Settings), true),
        (on(agent(), Surface::Settings), false),
        (on(app(Role::Admin), Surface::Assistant), false),
        (on(app(Role::Agent), Surface::Assistant), false),
        (Caller::operator(WorkspaceId(1), PlanTier::Growth), true),
    ] {
        assert_eq!(sees_webhook_header_values(&who), sees, "{who:?}");
    }
    // Below the webhooks' plan nobody reads destinations, and nobody sees values.
    assert!(!sees_webhook_header_values(&caller(PlanTier::Starter, admin(), Surface::Settings)));
}

#[test]
fn only_the_operator_sets_a_password_for_someone() {
    let action = Action::MemberPasswordsSet;
    let on = |actor: Actor, surface: Surface| caller(PlanTier::Advanced, actor, surface);
    let app = |role: Role| Actor::App { user_id: UserId(3), role, scopes: ScopeSet::full() };
    let full_key = Actor::ApiKey { key_id: 1, scopes: ScopeSet::full() };
    for who in [
        on(admin(), Surface::Settings),
        on(admin(), Surface::RestApi),
        on(agent(), Surface::Settings),
        on(full_key, Surface::RestApi),
        on(full_key, Surface::Settings),
        on(app(Role::Admin), Surface::Assistant),
        on(app(Role::Agent), Surface::Assistant),
    ] {
        assert!(matches!(authorize(&who, action), Err(Denied::Forbidden(_))), "{who:?}");
    }
    for plan in PlanTier::ALL {
        assert_eq!(authorize(&Caller::operator(WorkspaceId(1), plan), action), Ok(()), "{plan}");
    }
    assert!(matrix().contains("| `members.set_password` |"));
    assert!(matrix().contains("| — (operator only) | no | no | free |"));
}

#[test]
fn admins_may_do_every_action_but_the_operators_and_the_operator_every_one() {
    for &action in Action::ALL {
        let admin = authorize(&caller(PlanTier::Advanced, admin(), Surface::Settings), action);
        assert_eq!(admin.is_ok(), !action.rule().operator_only, "{action}");
        assert_eq!(authorize(&Caller::operator(WorkspaceId(1), PlanTier::Advanced), action), Ok(()), "{action}");
    }
}
