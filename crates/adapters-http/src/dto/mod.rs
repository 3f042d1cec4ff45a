//! The records of the REST API (`decisions.md`), with their OpenAPI schemas. Converted from domain
//! entities at the boundary, so the wire format is defined once, here: one place per resource,
//! this file for channels, messages, users and threads, a module each for the others. Every record
//! is named from here (`crate::dto::LabelRecord`).

mod ai_agents;
mod api_keys;
mod events;
mod labels;
mod teams;
mod webhooks;

pub use ai_agents::{AiAgentList, AiAgentRecord};
pub use api_keys::ApiKeyRecord;
pub use events::{EventList, EventRecord, EventTypeList, EventTypeRecord};
pub use labels::{LabelList, LabelRecord};
pub use teams::{TeamList, TeamRecord};
pub use webhooks::{AttemptRecord, DeliveryList, DeliveryRecord, SecretRecord, WebhookList, WebhookRecord};

use domain::channels::{Channel, ChannelStatus, ChannelType};
use domain::members::MemberProfile;
use domain::messaging::{Direction, Message, MessageStatus};
use domain::users::Role;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// Channel platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChannelTypeDto {
    /// WhatsApp Business.
    Whatsapp,
    /// Facebook Messenger.
    Messenger,
    /// Instagram messaging.
    Instagram,
}

impl From<ChannelType> for ChannelTypeDto {
    fn from(t: ChannelType) -> Self {
        match t {
            ChannelType::Whatsapp => Self::Whatsapp,
            ChannelType::Messenger => Self::Messenger,
            ChannelType::Instagram => Self::Instagram,
        }
    }
}

impl From<ChannelTypeDto> for ChannelType {
    fn from(t: ChannelTypeDto) -> Self {
        match t {
            ChannelTypeDto::Whatsapp => Self::Whatsapp,
            ChannelTypeDto::Messenger => Self::Messenger,
            ChannelTypeDto::Instagram => Self::Instagram,
        }
    }
}

/// Channel status; `active` means connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChannelStatusDto {
    /// Connected.
    Active,
    /// Waiting for the platform.
    Pending,
    /// Disconnected.
    Disconnected,
}

impl From<ChannelStatus> for ChannelStatusDto {
    fn from(s: ChannelStatus) -> Self {
        match s {
            ChannelStatus::Active => Self::Active,
            ChannelStatus::Pending => Self::Pending,
            ChannelStatus::Disconnected => Self::Disconnected,
        }
    }
}

impl From<ChannelStatusDto> for ChannelStatus {
    fn from(s: ChannelStatusDto) -> Self {
        match s {
            ChannelStatusDto::Active => Self::Active,
            ChannelStatusDto::Pending => Self::Pending,
            ChannelStatusDto::Disconnected => Self::Disconnected,
        }
    }
}

/// A channel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChannelRecord {
    /// Id, used as `channel_id` elsewhere.
    pub id: i64,
    /// Platform.
    pub channel_type: ChannelTypeDto,
    /// Name shown to the team.
    pub display_name: String,
    /// E.164 phone number (WhatsApp) or the platform's page/account id.
    pub identifier: String,
    /// Connection status.
    pub status: ChannelStatusDto,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<Channel> for ChannelRecord {
    fn from(c: Channel) -> Self {
        Self {
            id: c.id.0,
            channel_type: c.channel_type.into(),
            display_name: c.display_name,
            identifier: c.identifier,
            status: c.status.into(),
            created_at: c.created_at,
        }
    }
}

/// A page of channels.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChannelList {
    /// The channels, oldest first.
    pub data: Vec<ChannelRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DirectionDto {
    /// From the contact.
    Inbound,
    /// To the contact.
    Outbound,
}

impl From<Direction> for DirectionDto {
    fn from(d: Direction) -> Self {
        match d {
            Direction::Inbound => Self::Inbound,
            Direction::Outbound => Self::Outbound,
        }
    }
}

impl From<DirectionDto> for Direction {
    fn from(d: DirectionDto) -> Self {
        match d {
            DirectionDto::Inbound => Self::Inbound,
            DirectionDto::Outbound => Self::Outbound,
        }
    }
}

/// Delivery status of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatusDto {
    /// Accepted, waiting to be sent.
    Queued,
    /// Handed to the platform.
    Sent,
    /// Reached the contact's device.
    Delivered,
    /// Read by the contact.
    Read,
    /// Not delivered.
    Failed,
}

impl From<MessageStatus> for MessageStatusDto {
    fn from(s: MessageStatus) -> Self {
        match s {
            MessageStatus::Queued => Self::Queued,
            MessageStatus::Sent => Self::Sent,
            MessageStatus::Delivered => Self::Delivered,
            MessageStatus::Read => Self::Read,
            MessageStatus::Failed => Self::Failed,
        }
    }
}

impl From<MessageStatusDto> for MessageStatus {
    fn from(s: MessageStatusDto) -> Self {
        match s {
            MessageStatusDto::Queued => Self::Queued,
            MessageStatusDto::Sent => Self::Sent,
            MessageStatusDto::Delivered => Self::Delivered,
            MessageStatusDto::Read => Self::Read,
            MessageStatusDto::Failed => Self::Failed,
        }
    }
}

/// A message.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MessageRecord {
    /// Id.
    pub id: i64,
    /// The channel it went through.
    pub channel_id: i64,
    /// Its thread (conversation).
    pub thread_id: i64,
    /// Which way.
    pub direction: DirectionDto,
    /// The text; `""` once the person it was exchanged with has been erased
    /// (`DELETE /v1/contacts/{contact_id}`).
    pub content: String,
    /// Delivery status.
    pub status: MessageStatusDto,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<Message> for MessageRecord {
    fn from(m: Message) -> Self {
        Self {
            id: m.id.0,
            channel_id: m.channel_id.0,
            thread_id: m.thread_id.0,
            direction: m.direction.into(),
            content: m.content,
            status: m.status.into(),
            created_at: m.created_at,
        }
    }
}

/// A page of messages.
#[derive(Debug, Serialize, ToSchema)]
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
#[derive(Debug, Serialize, ToSchema)]
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
    /// Whether the membership is active.
    pub active: bool,
    /// When the user joined the workspace (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<MemberProfile> for UserRecord {
    fn from(m: MemberProfile) -> Self {
        Self {
            id: m.user_id.0,
            email: m.email,
            name: m.name,
            role: m.role.into(),
            active: m.active,
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
}

impl From<CredentialsBody> for domain::connectors::ChannelCredentials {
    fn from(c: CredentialsBody) -> Self {
        Self {
            phone_number_id: c.phone_number_id,
            page_id: c.page_id,
            access_token: c.access_token,
            app_secret: c.app_secret,
            verify_token: c.verify_token,
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

/// Who handles a thread.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AssigneeRecord {
    /// `user` (a member), `team` or `ai_agent`.
    #[serde(rename = "type")]
    #[schema(example = "team")]
    pub kind: String,
    /// The user's, team's or agent's id.
    pub id: i64,
}

/// A thread (conversation).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ThreadRecord {
    /// Id.
    pub id: i64,
    /// Channel.
    pub channel_id: i64,
    /// Contact.
    pub contact_id: i64,
    /// Status (`open`, `resolved`, or another status the workspace uses).
    pub status: String,
    /// Inbound messages not read yet.
    pub unread_count: i32,
    /// Who handles it; null when unassigned.
    pub assignee: Option<AssigneeRecord>,
    /// `ai`, `requested` or `human` when an AI agent is involved.
    pub handover_status: Option<String>,
    /// Time of the last message (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_message_at: Option<OffsetDateTime>,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// The names of its labels, alphabetical (ignoring case).
    #[schema(example = json!(["billing", "vip"]))]
    pub labels: Vec<String>,
}

/// A page of threads.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadList {
    /// The threads, newest first.
    pub data: Vec<ThreadRecord>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

impl From<domain::threads::Thread> for ThreadRecord {
    fn from(t: domain::threads::Thread) -> Self {
        Self {
            id: t.id,
            channel_id: t.channel_id,
            contact_id: t.contact_id,
            status: t.status,
            unread_count: t.unread_count,
            assignee: t.assignee.map(|a| AssigneeRecord { kind: a.kind().to_owned(), id: a.id() }),
            handover_status: t.handover_status,
            last_message_at: t.last_message_at,
            created_at: t.created_at,
            labels: t.labels,
        }
    }
}
