//! The one access policy (`docs/contract.md`, "Access"): every allow or deny of the service comes from
//! [`authorize`] over the table in [`Action::rule`]. Handlers, pages, the MCP endpoint and SQL ask
//! it; none decides on its own. `docs/access.md` is generated from this table ([`matrix`]) and a
//! test keeps the two equal.

use std::fmt;

use super::scope::{Scope, ScopeSet};
use crate::assistant::{ToolName, TOOLS};
use crate::users::{Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// The plan that includes the REST API (`/v1`) and API keys.
pub const REST_API_PLAN: PlanTier = PlanTier::Advanced;
/// The plan that includes outbound webhooks.
pub const WEBHOOKS_PLAN: PlanTier = PlanTier::Growth;

/// Who is acting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// A workspace API key, within its scopes.
    ApiKey {
        /// The key.
        key_id: i64,
        /// What it was granted.
        scopes: ScopeSet,
    },
    /// A member (login token or settings session), within their role.
    Member {
        /// The user.
        user_id: UserId,
        /// Their role in the workspace.
        role: Role,
    },
    /// A member through an app they connected over OAuth (`docs/oauth.md`): within both their role
    /// and the scopes of the grant.
    App {
        /// The member.
        user_id: UserId,
        /// Their role in the workspace.
        role: Role,
        /// What the grant allows.
        scopes: ScopeSet,
    },
    /// An operator on the server's command line (`wms workspace add-member`): whoever can run the
    /// binary against the database can already do anything, so the policy allows everything.
    Operator,
}

/// Where a request came in: the REST API needs its plan whatever the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// `/v1`.
    RestApi,
    /// The settings pages and their JSON API.
    Settings,
    /// The assistant's endpoints (execute, capabilities, MCP).
    Assistant,
}

impl Surface {
    /// The lowest plan on which the surface answers at all.
    pub fn plan(self) -> PlanTier {
        match self {
            Surface::RestApi => REST_API_PLAN,
            Surface::Settings | Surface::Assistant => PlanTier::Free,
        }
    }
}

/// An authenticated caller in the one workspace its request acts in: THE caller of the service.
/// Every credential — an API key or a member's login token on `/v1`, a member's token or the
/// settings session on the settings API and pages, a key, a member or an app's OAuth token on the
/// assistant's endpoints and MCP — becomes one of these ([`crate::identity::IdentityService`],
/// and for the pages [`crate::sessions::SessionService::state`]), and the policy ([`authorize`])
/// judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The workspace every query of the request is scoped to.
    pub workspace_id: WorkspaceId,
    /// That workspace's plan now.
    pub plan: PlanTier,
    /// Key or member.
    pub actor: Actor,
    /// The surface the request came through.
    pub surface: Surface,
}

impl Actor {
    /// The lowest plan on which this kind of actor works at all: API keys are part of the REST
    /// API's plan, so a key of a workspace below it is refused on every surface it reaches (the
    /// assistant's endpoints too), while members keep the surfaces their plan includes.
    pub fn plan(self) -> PlanTier {
        match self {
            Actor::ApiKey { .. } => REST_API_PLAN,
            Actor::Member { .. } | Actor::App { .. } | Actor::Operator => PlanTier::Free,
        }
    }
}

impl Caller {
    /// The member behind the request, if it is one.
    pub fn member(&self) -> Option<(UserId, Role)> {
        match self.actor {
            Actor::Member { user_id, role } | Actor::App { user_id, role, .. } => Some((user_id, role)),
            Actor::ApiKey { .. } | Actor::Operator => None,
        }
    }

    /// The lowest plan on which this caller is served at all: its surface's and its kind's
    /// (an action may need a higher one, [`authorize`]).
    pub fn required_plan(&self) -> PlanTier {
        self.surface.plan().max(self.actor.plan())
    }

    /// The command line acting on workspace `ws`.
    pub fn operator(workspace_id: WorkspaceId, plan: PlanTier) -> Self {
        Caller { workspace_id, plan, actor: Actor::Operator, surface: Surface::Settings }
    }
}

/// Something a caller may or may not do. Each route of the service maps to exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// List and read channels.
    ChannelsRead,
    /// Create channels, change them and their platform credentials.
    ChannelsWrite,
    /// List and read messages.
    MessagesRead,
    /// Send messages.
    MessagesWrite,
    /// List and read threads.
    ThreadsRead,
    /// Change a thread's status, assignment and labels.
    ThreadsWrite,
    /// List and read contacts.
    ContactsRead,
    /// Create and change contacts.
    ContactsWrite,
    /// Erase a contact (GDPR art. 17): admins, and keys with `contacts:erase`.
    ContactsErase,
    /// List labels.
    LabelsRead,
    /// Create, rename and delete labels.
    LabelsWrite,
    /// List and read teams.
    TeamsRead,
    /// Create, change and delete teams.
    TeamsWrite,
    /// List and read AI agents. `docs/contract.md` has no scope of their own: like teams, they are
    /// who threads get assigned to, so reading them takes `teams:read`.
    AiAgentsRead,
    /// List and read members.
    MembersRead,
    /// Change a member's profile: a member may rename themselves; anything more needs
    /// [`Action::MembersManage`], which the members service asks for.
    MembersUpdate,
    /// Add members, change roles, deactivate and remove members.
    MembersManage,
    /// Anything that touches the admin role: add an admin, promote to or demote from admin,
    /// deactivate, reactivate or remove an admin. Not a route of its own: the members service
    /// asks it on top of [`Action::MembersManage`]. People only: a key never touches it.
    AdminsManage,
    /// Give a person's new account its password when adding them, instead of e-mailing an
    /// invitation. Not a route of its own: the members service asks it when a password is given.
    /// The operator's alone ([`Rule::operator_only`]).
    MemberPasswordsSet,
    /// List and read webhook destinations and their deliveries.
    WebhooksRead,
    /// Create, change and delete destinations, see and rotate secrets, send tests, retry.
    WebhooksWrite,
    /// Read the events feed.
    EventsRead,
    /// Read the audit log.
    AuditRead,
    /// List API keys.
    ApiKeysRead,
    /// Create API keys, and roll them (a roll mints a key).
    ApiKeysCreate,
    /// Revoke and delete API keys.
    ApiKeysWrite,
    /// Run the assistant's tools and read its manifest.
    AssistantUse,
    /// The analytics pages and CSV exports.
    AnalyticsRead,
    /// The REST API reference page.
    RestReferenceRead,
    /// List and revoke the apps one connected over OAuth (one's own grants, in every workspace).
    ConnectedApps,
    /// Read the workspace's business hours.
    BusinessHoursRead,
    /// Set the workspace's business hours.
    BusinessHoursWrite,
    /// List, create, change and delete SLA policies.
    SlaPoliciesManage,
    /// The conversation reports (API, CSV, page).
    ReportsRead,
}

/// One row of the policy table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The scope an API key needs; `None`: API keys may not (only people may).
    pub scope: Option<Scope>,
    /// Only the operator on the server's command line may: no member (admins neither), key or
    /// app.
    pub operator_only: bool,
    /// Whether the `agent` role may (admins always may).
    pub agents: bool,
    /// The lowest plan that includes the action (the surface may need a higher one).
    pub plan: PlanTier,
}

impl Action {
    /// Every action, in the order `docs/access.md` lists them.
    pub const ALL: &'static [Action] = &[
        Action::ChannelsRead,
        Action::ChannelsWrite,
        Action::MessagesRead,
        Action::MessagesWrite,
        Action::ThreadsRead,
        Action::ThreadsWrite,
        Action::ContactsRead,
        Action::ContactsWrite,
        Action::ContactsErase,
        Action::LabelsRead,
        Action::LabelsWrite,
        Action::TeamsRead,
        Action::TeamsWrite,
        Action::AiAgentsRead,
        Action::MembersRead,
        Action::MembersUpdate,
        Action::MembersManage,
        Action::AdminsManage,
        Action::MemberPasswordsSet,
        Action::WebhooksRead,
        Action::WebhooksWrite,
        Action::EventsRead,
        Action::AuditRead,
        Action::ApiKeysRead,
        Action::ApiKeysCreate,
        Action::ApiKeysWrite,
        Action::AssistantUse,
        Action::AnalyticsRead,
        Action::RestReferenceRead,
        Action::ConnectedApps,
        Action::BusinessHoursRead,
        Action::BusinessHoursWrite,
        Action::SlaPoliciesManage,
        Action::ReportsRead,
    ];

    /// THE policy table. `docs/contract.md`: agents read everything but webhooks, keys and the audit
    /// log, and write messages, threads and contacts; everything else is for admins. Keys act
    /// within their scopes and never manage keys, the pages-only actions are for people, and what
    /// vouches for a person (their password) is the operator's alone.
    pub fn rule(self) -> Rule {
        use PlanTier::{Advanced, Free};
        let (scope, agents, plan) = match self {
            Action::ChannelsRead => (Some(Scope::ChannelsRead), true, Free),
            Action::ChannelsWrite => (Some(Scope::ChannelsWrite), false, Free),
            Action::MessagesRead => (Some(Scope::MessagesRead), true, Free),
            Action::MessagesWrite => (Some(Scope::MessagesWrite), true, Free),
            Action::ThreadsRead => (Some(Scope::ThreadsRead), true, Free),
            Action::ThreadsWrite => (Some(Scope::ThreadsWrite), true, Free),
            Action::ContactsRead => (Some(Scope::ContactsRead), true, Free),
            Action::ContactsWrite => (Some(Scope::ContactsWrite), true, Free),
            // Erasure destroys a person's whole history: not for agents, and its own scope.
            Action::ContactsErase => (Some(Scope::ContactsErase), false, Free),
            Action::LabelsRead => (Some(Scope::LabelsRead), true, Free),
            Action::LabelsWrite => (Some(Scope::LabelsWrite), false, Free),
            Action::TeamsRead => (Some(Scope::TeamsRead), true, Free),
            Action::TeamsWrite => (Some(Scope::TeamsWrite), false, Free),
            Action::AiAgentsRead => (Some(Scope::TeamsRead), true, Free),
            Action::MembersRead => (Some(Scope::UsersRead), true, Free),
            Action::MembersUpdate => (Some(Scope::UsersWrite), true, Free),
            Action::MembersManage => (Some(Scope::UsersWrite), false, Free),
            Action::AdminsManage => (None, false, Free),
            // A password vouches for the person, so nobody in the workspace sets one for someone
            // else (`docs/contract.md`, "Members"); the operator, who runs the server, may when
            // adding an account (`docs/product/invitations.md`, "Inviting someone").
            Action::MemberPasswordsSet => return Rule { scope: None, operator_only: true, agents: false, plan: Free },
            Action::WebhooksRead => (Some(Scope::WebhooksRead), false, WEBHOOKS_PLAN),
            Action::WebhooksWrite => (Some(Scope::WebhooksWrite), false, WEBHOOKS_PLAN),
            Action::EventsRead => (Some(Scope::EventsRead), false, Free),
            Action::AuditRead => (Some(Scope::AuditRead), false, Free),
            Action::ApiKeysRead | Action::ApiKeysWrite => (None, false, Free),
            Action::ApiKeysCreate => (None, false, Advanced),
            Action::AssistantUse => (Some(Scope::AssistantRead), true, Free),
            Action::AnalyticsRead | Action::RestReferenceRead | Action::ConnectedApps => (None, true, Free),
            Action::BusinessHoursRead => (Some(Scope::SettingsRead), true, Free),
            Action::BusinessHoursWrite => (Some(Scope::SettingsWrite), false, Free),
            // docs/contract.md, "SLA policies": reading them too is for admins or `settings:write`.
            Action::SlaPoliciesManage => (Some(Scope::SettingsWrite), false, Free),
            Action::ReportsRead => (Some(Scope::ReportsRead), false, Free),
        };
        Rule { scope, operator_only: false, agents, plan }
    }

    /// A short name for messages and the published table (`members.manage`).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::ChannelsRead => "channels.read",
            Action::ChannelsWrite => "channels.write",
            Action::MessagesRead => "messages.read",
            Action::MessagesWrite => "messages.write",
            Action::ThreadsRead => "threads.read",
            Action::ThreadsWrite => "threads.write",
            Action::ContactsRead => "contacts.read",
            Action::ContactsWrite => "contacts.write",
            Action::ContactsErase => "contacts.erase",
            Action::LabelsRead => "labels.read",
            Action::LabelsWrite => "labels.write",
            Action::TeamsRead => "teams.read",
            Action::TeamsWrite => "teams.write",
            Action::AiAgentsRead => "ai_agents.read",
            Action::MembersRead => "members.read",
            Action::MembersUpdate => "members.update",
            Action::MembersManage => "members.manage",
            Action::AdminsManage => "members.manage_admins",
            Action::MemberPasswordsSet => "members.set_password",
            Action::WebhooksRead => "webhooks.read",
            Action::WebhooksWrite => "webhooks.write",
            Action::EventsRead => "events.read",
            Action::AuditRead => "audit.read",
            Action::ApiKeysRead => "api_keys.read",
            Action::ApiKeysCreate => "api_keys.create",
            Action::ApiKeysWrite => "api_keys.write",
            Action::AssistantUse => "assistant.use",
            Action::AnalyticsRead => "analytics.read",
            Action::RestReferenceRead => "rest_reference.read",
            Action::ConnectedApps => "connected_apps.manage",
            Action::BusinessHoursRead => "business_hours.read",
            Action::BusinessHoursWrite => "business_hours.write",
            Action::SlaPoliciesManage => "sla_policies.manage",
            Action::ReportsRead => "reports.read",
        }
    }

    /// What the action covers, in a sentence for the published table.
    pub fn description(self) -> &'static str {
        match self {
            Action::ChannelsRead => "list and read channels",
            Action::ChannelsWrite => "create channels, change them and their platform credentials",
            Action::MessagesRead => "list and read messages",
            Action::MessagesWrite => "send messages",
            Action::ThreadsRead => "list and read threads",
            Action::ThreadsWrite => "change a thread's status, assignment and labels",
            Action::ContactsRead => "list and read contacts",
            Action::ContactsWrite => "create and change contacts",
            Action::ContactsErase => "erase a contact and their conversation history (GDPR art. 17)",
            Action::LabelsRead => "list labels",
            Action::LabelsWrite => "create, rename and delete labels",
            Action::TeamsRead => "list and read teams",
            Action::TeamsWrite => "create, change and delete teams",
            Action::AiAgentsRead => "list and read AI agents (with `teams:read`: both are assignees)",
            Action::MembersRead => "list and read members",
            Action::MembersUpdate => "rename oneself (anything more needs members.manage)",
            Action::MembersManage => "add members, change roles and names, deactivate and remove members",
            Action::AdminsManage => "add, promote, demote, deactivate or remove an admin (with members.manage)",
            Action::MemberPasswordsSet => {
                "give a new account its password when adding it (`wms workspace add-member --password`)"
            }
            Action::WebhooksRead => "list and read webhook destinations and deliveries",
            Action::WebhooksWrite => "manage webhook destinations, see and rotate secrets, test, retry",
            Action::EventsRead => "read the events feed",
            Action::AuditRead => "read the audit log",
            Action::ApiKeysRead => "list API keys",
            Action::ApiKeysCreate => "create API keys and roll them (a roll mints the successor)",
            Action::ApiKeysWrite => "revoke and delete API keys",
            Action::AssistantUse => "run the assistant's tools, read its manifest, MCP",
            Action::AnalyticsRead => "analytics pages and CSV exports",
            Action::RestReferenceRead => "the REST API reference page",
            Action::ConnectedApps => "list and revoke one's own apps connected over OAuth",
            Action::BusinessHoursRead => "read the workspace's business hours",
            Action::BusinessHoursWrite => "set the workspace's business hours",
            Action::SlaPoliciesManage => "list, create, change and delete SLA policies",
            Action::ReportsRead => "conversation reports: JSON, CSV and the reports page",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the policy refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// The workspace's plan does not include the action (403 `plan_required`).
    #[error("this needs the {required} plan; the workspace is on {current}")]
    PlanRequired {
        /// The lowest plan that includes it.
        required: PlanTier,
        /// The workspace's plan.
        current: PlanTier,
    },
    /// The caller's role (or kind) may not do this (403 `forbidden`).
    #[error("{0}")]
    Forbidden(&'static str),
    /// The API key lacks the scope (403 `insufficient_scope`).
    #[error("this API key lacks the scope `{0}`")]
    InsufficientScope(Scope),
}

/// Decides whether `caller` may do `action` in its workspace. The plan comes first (a workspace
/// that cannot have the feature hears so whoever asks; the action, the surface and the kind of
/// actor each name the lowest plan they need), then the key's scope or the member's role.
///
/// # Errors
/// [`Denied`].
pub fn authorize(caller: &Caller, action: Action) -> Result<(), Denied> {
    let rule = action.rule();
    let required = rule.plan.max(caller.required_plan());
    if !caller.plan.includes(required) {
        return Err(Denied::PlanRequired { required, current: caller.plan });
    }
    if rule.operator_only && caller.actor != Actor::Operator {
        return Err(Denied::Forbidden("only an operator on the server's command line can do this"));
    }
    match caller.actor {
        Actor::ApiKey { scopes, .. } => match rule.scope {
            None => Err(Denied::Forbidden("API keys cannot do this; sign in as a workspace admin")),
            Some(scope) if scopes.grants(scope) => Ok(()),
            Some(scope) => Err(Denied::InsufficientScope(scope)),
        },
        Actor::Member { role, .. } => role_allows(role, rule),
        Actor::App { role, scopes, .. } => match rule.scope {
            None => Err(Denied::Forbidden("apps connected over OAuth cannot do this; sign in to wms")),
            Some(scope) if !scopes.grants(scope) => Err(Denied::InsufficientScope(scope)),
            Some(_) => role_allows(role, rule),
        },
        Actor::Operator => Ok(()),
    }
}

/// What running the assistant tool `tool` needs besides [`Action::AssistantUse`]: the action of
/// the data it shows, when not every assistant caller may read that data. The match has no
/// catch-all, so a new tool cannot be added without deciding here who may run it.
pub fn assistant_tool_action(tool: ToolName) -> Option<Action> {
    match tool {
        // Every assistant caller reads these. `list_webhooks` shows destination URLs whole only to
        // callers allowed `webhooks.read` and without credentials to the others
        // (`Assistant::execute_as`).
        ToolName::GetWorkspaceOverview
        | ToolName::ListChannels
        | ToolName::ListWebhooks
        | ToolName::GetChannelAnalytics
        | ToolName::GetContactAnalytics
        | ToolName::SearchProductDocs => None,
        // The same figures as `GET /v1/reports/conversations`, so the same rule.
        ToolName::GetConversationReport => Some(Action::ReportsRead),
    }
}

/// Decides whether `caller`, already allowed [`Action::AssistantUse`], may run the assistant tool
/// `tool`. An API key needs the tool's scope too, and a member the role. An app connected over
/// OAuth holds `assistant:read`, the one scope such a grant can have, which covers every tool:
/// within it the member's role decides, as when the member calls the tool themselves.
///
/// # Errors
/// [`Denied`].
pub fn authorize_tool(caller: &Caller, tool: ToolName) -> Result<(), Denied> {
    let Some(action) = assistant_tool_action(tool) else { return Ok(()) };
    let as_member = match caller.actor {
        Actor::App { user_id, role, .. } => Caller { actor: Actor::Member { user_id, role }, ..*caller },
        _ => *caller,
    };
    authorize(&as_member, action)
}

/// Whether `caller` sees the values of webhook destinations' static `headers` where it may read
/// the destinations (`webhooks.read`). A value is often the receiver's credential (`Authorization:
/// Bearer …`), so only callers allowed `webhooks.write` — who manage destinations and set the
/// values — see them; every other reader gets each name with an empty value
/// ([`crate::webhooks::WebhookDestination::seen_by`], `docs/webhooks.md`).
pub fn sees_webhook_header_values(caller: &Caller) -> bool {
    authorize(caller, Action::WebhooksWrite).is_ok()
}

/// Whether a member with `role` may do what `rule` covers.
fn role_allows(role: Role, rule: Rule) -> Result<(), Denied> {
    match role {
        Role::Admin => Ok(()),
        Role::Agent if rule.agents => Ok(()),
        Role::Agent => Err(Denied::Forbidden("only workspace admins can do this")),
    }
}

/// The plans that include `required`, low to high (for storage queries that filter by plan).
pub fn plans_including(required: PlanTier) -> Vec<PlanTier> {
    PlanTier::ALL.into_iter().filter(|p| p.includes(required)).collect()
}

/// The policy table as Markdown: one row per action with the key scope, who among members may,
/// and the plan. `docs/access.md` embeds it.
pub fn matrix() -> String {
    let mut out = String::from(
        "| action | what it covers | API key scope | admin | agent | lowest plan |\n|---|---|---|---|---|---|\n",
    );
    for action in Action::ALL.iter().copied() {
        let rule = action.rule();
        let scope = match rule.scope {
            Some(s) => format!("`{s}`"),
            None if rule.operator_only => "— (operator only)".to_owned(),
            None => "— (people only)".to_owned(),
        };
        let admin = if rule.operator_only { "no" } else { "yes" };
        let agent = if rule.agents { "yes" } else { "no" };
        out.push_str(&format!(
            "| `{action}` | {} | {scope} | {admin} | {agent} | {} |\n",
            action.description(),
            rule.plan
        ));
    }
    out
}

/// The assistant's tools and what each needs besides `assistant.use`, as Markdown: `docs/access.md`
/// embeds it.
pub fn assistant_tools_matrix() -> String {
    let mut out = String::from("| tool | also needs |\n|---|---|\n");
    for t in &TOOLS {
        let needs = assistant_tool_action(t.tool).map_or_else(|| "—".to_owned(), |a| format!("`{a}`"));
        out.push_str(&format!("| `{}` | {needs} |\n", t.name));
    }
    out
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
