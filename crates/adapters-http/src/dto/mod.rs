//! The records of the REST API (`docs/contract.md`), with their OpenAPI schemas, named from here
//! (`crate::dto::LabelRecord`). The channel, message, thread and webhook records are also event
//! `data`, so they live in the domain (`record.rs` of each area) and are re-exported here; the
//! others are converted from domain entities at the boundary: users in this file, a module each
//! for the rest.
//!
//! The pages of the `/v1` listings (`LabelList`, `ChannelList`…) are OpenAPI schemas only, each
//! with its own words for the order of its records: [`crate::handlers::listed`] writes them all, and
//! its test checks that each has exactly the two fields it writes.

mod ai_agents;
mod api_keys;
mod audit;
mod events;
mod labels;
mod login;
mod secret_scanning;
mod sla_policies;
mod teams;
mod templates;
mod webhooks;

pub use ai_agents::{AiAgentList, AiAgentRecord};
pub use api_keys::{ApiKeyRecord, KeyChange, KeyWithSecret};
pub use audit::{AuditActorRecord, AuditEventList, AuditEventRecord, AuditTargetRecord};
pub use events::{EventList, EventRecord, EventTypeList, EventTypeRecord};
pub use labels::{LabelList, LabelRecord};
pub use login::{LoginResponse, LoginUserDto};
pub use secret_scanning::LeakVerdict;
pub use sla_policies::{SlaPolicyList, SlaPolicyRecord};
pub use teams::{TeamList, TeamRecord};
pub use templates::TemplateList;
pub use webhooks::{
    AttemptRecord, CreatedWebhook, DeliveryList, DeliveryRecord, ReplayAnswer, SecretRecord, WebhookList,
};

pub use domain::channels::{ChannelRecord, ChannelStatus, ChannelType};
use domain::members::MemberProfile;
pub use domain::messaging::{Direction, MessageRecord, MessageStatus};
pub use domain::threads::{AssigneeRecord, ThreadRecord};
use domain::users::Role;
pub use domain::webhooks::WebhookRecord;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A page of contacts.
#[derive(Debug, ToSchema)]
pub struct ContactList {
    /// The contacts, oldest first.
    pub data: Vec<domain::contacts::Contact>,
    /// Pass as `cursor` (with the same filters) for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// A page of channels.
#[derive(Debug, ToSchema)]
pub struct ChannelList {
    /// The channels, oldest first.
    pub data: Vec<ChannelRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// A page of messages.
#[derive(Debug, ToSchema)]
pub struct MessageList {
    /// The messages, newest first.
    pub data: Vec<MessageRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// A member's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleDto {
    /// Manages the workspace.
    Admin,
    /// Handles conversations.
    Agent,
}

impl RoleDto {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Agent => "agent",
        }
    }
}

/// A page of members.
#[derive(Debug, ToSchema)]
pub struct UserList {
    /// The members, by user id.
    pub data: Vec<UserRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

impl From<Role> for RoleDto {
    fn from(r: Role) -> Self {
        match r {
            Role::Admin => Self::Admin,
            Role::Agent => Self::Agent,
        }
    }
}

/// Where a membership stands.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemberStatusDto {
    /// Added; waits for the person to accept the e-mailed link. No access.
    Invited,
    /// Accepted.
    Active,
    /// Turned off by an admin.
    Deactivated,
}

impl From<domain::members::MemberStatus> for MemberStatusDto {
    fn from(s: domain::members::MemberStatus) -> Self {
        match s {
            domain::members::MemberStatus::Invited => Self::Invited,
            domain::members::MemberStatus::Active => Self::Active,
            domain::members::MemberStatus::Deactivated => Self::Deactivated,
        }
    }
}

/// A user as a member of the caller's workspace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserRecord {
    /// User id.
    pub id: i64,
    /// E-mail (lowercase).
    pub email: String,
    /// Display name.
    pub name: String,
    /// Role in this workspace.
    pub role: RoleDto,
    /// `invited` (until the person accepts the e-mailed link), `active` or `deactivated`.
    #[schema(example = "invited")]
    pub status: MemberStatusDto,
    /// Whether the membership gives access: `status == "active"`.
    pub active: bool,
    /// `online` (takes threads from their teams' automatic assignment) or `away`.
    #[schema(example = "online")]
    pub availability: &'static str,
    /// When the user was added to the workspace (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<MemberProfile> for UserRecord {
    fn from(m: MemberProfile) -> Self {
        let active = m.active();
        Self {
            id: m.user_id.0,
            email: m.email,
            name: m.name,
            role: m.role.into(),
            active,
            status: m.status.into(),
            availability: m.availability.as_str(),
            created_at: m.created_at,
        }
    }
}

/// Platform credentials of a channel. Write-only: stored encrypted and never returned.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialsBody {
    /// WhatsApp: the Cloud API phone number id (required for WhatsApp).
    #[schema(max_length = 64, example = "109876543210987")]
    pub phone_number_id: Option<String>,
    /// Messenger: the Facebook page id; Instagram: the Instagram account id (required for those).
    #[schema(max_length = 64)]
    pub page_id: Option<String>,
    /// System-user token (WhatsApp) or page access token (Messenger, Instagram).
    #[schema(min_length = 8, max_length = 512)]
    pub access_token: Option<String>,
    /// The Meta app secret that signs callbacks (`X-Hub-Signature-256`); needed to receive them.
    #[schema(min_length = 8, max_length = 512)]
    pub app_secret: Option<String>,
    /// The token you enter as "Verify token" in the app dashboard.
    #[schema(min_length = 8, max_length = 512)]
    pub verify_token: Option<String>,
    /// WhatsApp: the WhatsApp Business Account id; with it wms keeps the channel's message
    /// templates (`GET /v1/channels/:channel_id/templates`) and checks template sends against them.
    #[schema(max_length = 64, example = "102290129340398")]
    pub waba_id: Option<String>,
}

impl From<CredentialsBody> for domain::connectors::ChannelCredentials {
    fn from(c: CredentialsBody) -> Self {
        Self {
            phone_number_id: c.phone_number_id,
            page_id: c.page_id,
            access_token: c.access_token,
            app_secret: c.app_secret,
            verify_token: c.verify_token,
            waba_id: c.waba_id,
        }
    }
}

/// A WhatsApp template send.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TemplateBody {
    /// The approved template's name.
    #[schema(example = "order_shipped")]
    pub name: String,
    /// Its language code.
    #[schema(example = "en_US")]
    pub language: String,
    /// Body parameters in order.
    #[serde(default)]
    pub parameters: Vec<String>,
}

impl From<TemplateBody> for domain::connectors::Template {
    fn from(t: TemplateBody) -> Self {
        Self { name: t.name, language: t.language, parameters: t.parameters }
    }
}

/// A page of threads.
#[derive(Debug, ToSchema)]
pub struct ThreadList {
    /// The threads, newest first.
    pub data: Vec<ThreadRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}
