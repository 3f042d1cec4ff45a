//! Audit records: the action, who acted (actor), on what (target), from where, and details that
//! never hold a secret.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;
use time::OffsetDateTime;

use crate::access::Actor;
use crate::common::error::{FieldError, ValidationErrors};
use crate::workspace::WorkspaceId;

/// `audit.retention_days` by default: records older than this are deleted.
pub const DEFAULT_RETENTION_DAYS: u32 = 365;

/// Longest user agent kept.
const MAX_USER_AGENT: usize = 512;

/// What was done (`docs/contract.md`, "Audit log").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditAction {
    /// `api_key.created`
    ApiKeyCreated,
    /// `api_key.revoked`
    ApiKeyRevoked,
    /// `api_key.deleted`
    ApiKeyDeleted,
    /// `api_key.rolled`
    ApiKeyRolled,
    /// `member.added`
    MemberAdded,
    /// `member.role_changed`
    MemberRoleChanged,
    /// `member.updated`
    MemberUpdated,
    /// `member.deactivated`
    MemberDeactivated,
    /// `member.reactivated`
    MemberReactivated,
    /// `member.removed`
    MemberRemoved,
    /// `member.invitation_voided`
    MemberInvitationVoided,
    /// `webhook.created`
    WebhookCreated,
    /// `webhook.updated`
    WebhookUpdated,
    /// `webhook.deleted`
    WebhookDeleted,
    /// `webhook.secret_viewed`
    WebhookSecretViewed,
    /// `webhook.secret_rotated`
    WebhookSecretRotated,
    /// `webhook.disabled`
    WebhookDisabled,
    /// `webhook.delivery_retried`
    WebhookDeliveryRetried,
    /// `webhook.test_sent`
    WebhookTestSent,
    /// `webhook.replayed`
    WebhookReplayed,
    /// `channel.created`
    ChannelCreated,
    /// `channel.updated`
    ChannelUpdated,
    /// `channel.credentials_changed`
    ChannelCredentialsChanged,
    /// `label.created`
    LabelCreated,
    /// `label.updated`
    LabelUpdated,
    /// `label.deleted`
    LabelDeleted,
    /// `team.created`
    TeamCreated,
    /// `team.updated`
    TeamUpdated,
    /// `team.deleted`
    TeamDeleted,
    /// `user.signed_in`
    UserSignedIn,
    /// `user.sign_in_failed`
    UserSignInFailed,
    /// `user.token_revoked`
    UserTokenRevoked,
    /// `workspace.plan_changed`
    WorkspacePlanChanged,
    /// `oauth.granted`
    OAuthGranted,
    /// `oauth.revoked`
    OAuthRevoked,
    /// `contact.erased`
    ContactErased,
    /// `business_hours.updated`
    BusinessHoursUpdated,
    /// `sla_policy.created`
    SlaPolicyCreated,
    /// `sla_policy.updated`
    SlaPolicyUpdated,
    /// `sla_policy.deleted`
    SlaPolicyDeleted,
}

impl AuditAction {
    /// Every action, in catalog order.
    pub const ALL: &'static [AuditAction] = &[
        AuditAction::ApiKeyCreated,
        AuditAction::ApiKeyRevoked,
        AuditAction::ApiKeyDeleted,
        AuditAction::ApiKeyRolled,
        AuditAction::MemberAdded,
        AuditAction::MemberRoleChanged,
        AuditAction::MemberUpdated,
        AuditAction::MemberDeactivated,
        AuditAction::MemberReactivated,
        AuditAction::MemberRemoved,
        AuditAction::MemberInvitationVoided,
        AuditAction::WebhookCreated,
        AuditAction::WebhookUpdated,
        AuditAction::WebhookDeleted,
        AuditAction::WebhookSecretViewed,
        AuditAction::WebhookSecretRotated,
        AuditAction::WebhookDisabled,
        AuditAction::WebhookDeliveryRetried,
        AuditAction::WebhookTestSent,
        AuditAction::WebhookReplayed,
        AuditAction::ChannelCreated,
        AuditAction::ChannelUpdated,
        AuditAction::ChannelCredentialsChanged,
        AuditAction::LabelCreated,
        AuditAction::LabelUpdated,
        AuditAction::LabelDeleted,
        AuditAction::TeamCreated,
        AuditAction::TeamUpdated,
        AuditAction::TeamDeleted,
        AuditAction::UserSignedIn,
        AuditAction::UserSignInFailed,
        AuditAction::UserTokenRevoked,
        AuditAction::WorkspacePlanChanged,
        AuditAction::OAuthGranted,
        AuditAction::OAuthRevoked,
        AuditAction::ContactErased,
        AuditAction::BusinessHoursUpdated,
        AuditAction::SlaPolicyCreated,
        AuditAction::SlaPolicyUpdated,
        AuditAction::SlaPolicyDeleted,
    ];

    /// The stable name (`api_key.created`).
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::ApiKeyCreated => "api_key.created",
            AuditAction::ApiKeyRevoked => "api_key.revoked",
            AuditAction::ApiKeyDeleted => "api_key.deleted",
            AuditAction::ApiKeyRolled => "api_key.rolled",
            AuditAction::MemberAdded => "member.added",
            AuditAction::MemberRoleChanged => "member.role_changed",
            AuditAction::MemberUpdated => "member.updated",
            AuditAction::MemberDeactivated => "member.deactivated",
            AuditAction::MemberReactivated => "member.reactivated",
            AuditAction::MemberRemoved => "member.removed",
            AuditAction::MemberInvitationVoided => "member.invitation_voided",
            AuditAction::WebhookCreated => "webhook.created",
            AuditAction::WebhookUpdated => "webhook.updated",
            AuditAction::WebhookDeleted => "webhook.deleted",
            AuditAction::WebhookSecretViewed => "webhook.secret_viewed",
            AuditAction::WebhookSecretRotated => "webhook.secret_rotated",
            AuditAction::WebhookDisabled => "webhook.disabled",
            AuditAction::WebhookDeliveryRetried => "webhook.delivery_retried",
            AuditAction::WebhookTestSent => "webhook.test_sent",
            AuditAction::WebhookReplayed => "webhook.replayed",
            AuditAction::ChannelCreated => "channel.created",
            AuditAction::ChannelUpdated => "channel.updated",
            AuditAction::ChannelCredentialsChanged => "channel.credentials_changed",
            AuditAction::LabelCreated => "label.created",
            AuditAction::LabelUpdated => "label.updated",
            AuditAction::LabelDeleted => "label.deleted",
            AuditAction::TeamCreated => "team.created",
            AuditAction::TeamUpdated => "team.updated",
            AuditAction::TeamDeleted => "team.deleted",
            AuditAction::UserSignedIn => "user.signed_in",
            AuditAction::UserSignInFailed => "user.sign_in_failed",
            AuditAction::UserTokenRevoked => "user.token_revoked",
            AuditAction::WorkspacePlanChanged => "workspace.plan_changed",
            AuditAction::OAuthGranted => "oauth.granted",
            AuditAction::OAuthRevoked => "oauth.revoked",
            AuditAction::ContactErased => "contact.erased",
            AuditAction::BusinessHoursUpdated => "business_hours.updated",
            AuditAction::SlaPolicyCreated => "sla_policy.created",
            AuditAction::SlaPolicyUpdated => "sla_policy.updated",
            AuditAction::SlaPolicyDeleted => "sla_policy.deleted",
        }
    }
}

impl fmt::Display for AuditAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AuditAction {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.iter().copied().find(|a| a.as_str() == s).ok_or(())
    }
}

/// The kind of actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActorType {
    /// A member (login token or settings session).
    User,
    /// A workspace API key.
    ApiKey,
    /// An operator running the `wms` binary.
    Cli,
    /// wms itself (a worker).
    System,
}

impl ActorType {
    /// Every kind.
    pub const ALL: [ActorType; 4] = [ActorType::User, ActorType::ApiKey, ActorType::Cli, ActorType::System];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorType::User => "user",
            ActorType::ApiKey => "api_key",
            ActorType::Cli => "cli",
            ActorType::System => "system",
        }
    }
}

impl FromStr for ActorType {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|a| a.as_str() == s).ok_or(())
    }
}

/// Who acted. The label is filled in by the storage when `None` (the user's e-mail, the key's
/// name) so that it stays readable after the user or key is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditActor {
    /// The kind.
    pub kind: ActorType,
    /// The user or key id; `None` for the CLI and the system.
    pub id: Option<i64>,
    /// A readable name.
    pub label: Option<String>,
}

impl From<Actor> for AuditActor {
    fn from(actor: Actor) -> Self {
        match actor {
            Actor::Member { user_id, .. } | Actor::App { user_id, .. } => {
                Self { kind: ActorType::User, id: Some(user_id.0), label: None }
            }
            Actor::ApiKey { key_id, .. } => Self { kind: ActorType::ApiKey, id: Some(key_id), label: None },
            Actor::Operator => Self { kind: ActorType::Cli, id: None, label: None },
        }
    }
}

/// Everything a record needs besides the action and its target: built once per request (or CLI
/// command, or worker) and passed to the service methods that perform privileged writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditContext {
    /// Who acts.
    pub actor: AuditActor,
    /// The client's address.
    pub ip: Option<String>,
    /// The client's `User-Agent` (at most 512 characters kept).
    pub user_agent: Option<String>,
    /// The request id (`X-Request-Id`).
    pub request_id: Option<String>,
}

impl AuditContext {
    /// A request's context.
    pub fn new(
        actor: impl Into<AuditActor>,
        ip: Option<String>,
        user_agent: Option<&str>,
        request_id: Option<String>,
    ) -> Self {
        let user_agent = user_agent.filter(|u| !u.is_empty()).map(|u| u.chars().take(MAX_USER_AGENT).collect());
        Self { actor: actor.into(), ip, user_agent, request_id }
    }

    /// An operator on the command line.
    pub fn cli() -> Self {
        Self {
            actor: AuditActor { kind: ActorType::Cli, id: None, label: None },
            ip: None,
            user_agent: None,
            request_id: None,
        }
    }

    /// wms itself.
    pub fn system() -> Self {
        Self { actor: AuditActor { kind: ActorType::System, id: None, label: None }, ..Self::cli() }
    }

    /// The same request with another actor (a sign-in: the person signing in).
    pub fn with_actor(&self, actor: AuditActor) -> Self {
        Self { actor, ..self.clone() }
    }

    /// The record of `action` on `target` in workspace `ws`.
    pub fn entry(&self, ws: WorkspaceId, action: AuditAction, target: AuditTarget, details: Value) -> AuditEntry {
        AuditEntry { workspace_id: ws, action, context: self.clone(), target: Some(target), details }
    }
}

/// What was acted on. A `None` id in the entry of a creation is the new row's id, filled in by
/// the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditTarget {
    /// `api_key`, `user`, `webhook`, `channel`, `label`, `team`, `contact`, `workspace`.
    pub kind: &'static str,
    /// Its id.
    pub id: Option<i64>,
}

impl AuditTarget {
    /// An API key.
    pub fn api_key(id: Option<i64>) -> Self {
        Self { kind: "api_key", id }
    }
    /// A user (member).
    pub fn user(id: Option<i64>) -> Self {
        Self { kind: "user", id }
    }
    /// A webhook destination.
    pub fn webhook(id: Option<i64>) -> Self {
        Self { kind: "webhook", id }
    }
    /// A channel.
    pub fn channel(id: Option<i64>) -> Self {
        Self { kind: "channel", id }
    }
    /// A label.
    pub fn label(id: Option<i64>) -> Self {
        Self { kind: "label", id }
    }
    /// A team.
    pub fn team(id: Option<i64>) -> Self {
        Self { kind: "team", id }
    }
    /// An SLA policy.
    pub fn sla_policy(id: Option<i64>) -> Self {
        Self { kind: "sla_policy", id }
    }
    /// An app's OAuth grant.
    pub fn oauth_grant(id: Option<i64>) -> Self {
        Self { kind: "oauth_grant", id }
    }
    /// A contact.
    pub fn contact(id: Option<i64>) -> Self {
        Self { kind: "contact", id }
    }
    /// A workspace.
    pub fn workspace(id: WorkspaceId) -> Self {
        Self { kind: "workspace", id: Some(id.0) }
    }
}

/// A record to store.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    /// Whose log it goes into.
    pub workspace_id: WorkspaceId,
    /// What was done.
    pub action: AuditAction,
    /// Who, from where.
    pub context: AuditContext,
    /// On what.
    pub target: Option<AuditTarget>,
    /// Changed field names, old and new role, key prefix: never a secret.
    pub details: Value,
}

impl AuditEntry {
    /// The target id, or `created` when the entry's is left to the repository.
    pub fn target_id_or(&self, created: i64) -> Option<i64> {
        self.target.map(|t| t.id.unwrap_or(created))
    }

    /// The entry with `key` set to `value` in its details (what the storage read inside the
    /// change's transaction, such as the role before).
    pub fn with_detail(&self, key: &str, value: impl Into<Value>) -> AuditEntry {
        let mut e = self.clone();
        if let Value::Object(map) = &mut e.details {
            map.insert(key.to_owned(), value.into());
        } else {
            e.details = serde_json::json!({ key: value.into() });
        }
        e
    }
}

/// A stored record.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// Its id (newest is largest).
    pub id: i64,
    /// When.
    pub occurred_at: OffsetDateTime,
    /// The action's name.
    pub action: String,
    /// `user`, `api_key`, `cli` or `system`.
    pub actor_type: String,
    /// The user or key id.
    pub actor_id: Option<i64>,
    /// Its readable name.
    pub actor_label: Option<String>,
    /// What was acted on.
    pub target_type: Option<String>,
    /// Its id.
    pub target_id: Option<i64>,
    /// The client's address.
    pub ip: Option<String>,
    /// The client's user agent.
    pub user_agent: Option<String>,
    /// The request id.
    pub request_id: Option<String>,
    /// The details.
    pub details: Value,
}

/// The list's filters, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only this action.
    pub action: Option<AuditAction>,
    /// Only this kind of actor.
    pub actor_type: Option<ActorType>,
    /// At or after.
    pub since: Option<OffsetDateTime>,
    /// Before.
    pub until: Option<OffsetDateTime>,
}

impl AuditFilter {
    /// Validates the raw query values (empty means absent).
    ///
    /// # Errors
    /// [`ValidationErrors`] naming each bad field.
    pub fn parse(
        action: Option<&str>,
        actor_type: Option<&str>,
        since: Option<&str>,
        until: Option<&str>,
    ) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let present = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        let action = present(action).and_then(|a| {
            errors.check(a.parse::<AuditAction>().map_err(|()| {
                FieldError::new("action", "is not an audit action (for example api_key.created, member.added)")
            }))
        });
        let actor_type = present(actor_type).and_then(|a| {
            errors.check(
                a.parse::<ActorType>()
                    .map_err(|()| FieldError::new("actor_type", "must be one of user, api_key, cli, system")),
            )
        });
        let time = |field: &'static str, v: Option<String>, errors: &mut ValidationErrors| {
            v.and_then(|v| {
                errors.check(
                    crate::common::instant::parse_rfc3339(&v)
                        .ok_or_else(|| FieldError::new(field, crate::common::instant::EXPECTED)),
                )
            })
        };
        let since = time("since", present(since), &mut errors);
        let until = time("until", present(until), &mut errors);
        errors.into_result()?;
        Ok(Self { action, actor_type, since, until })
    }

    /// The canonical text of these filters that the listing's cursors are bound to.
    pub fn cursor_key(&self) -> crate::common::page::FilterKey {
        crate::common::page::FilterKey::default()
            .with("action", self.action)
            .with("actor_type", self.actor_type.map(ActorType::as_str))
            .with("since", self.since.map(OffsetDateTime::unix_timestamp_nanos))
            .with("until", self.until.map(OffsetDateTime::unix_timestamp_nanos))
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
