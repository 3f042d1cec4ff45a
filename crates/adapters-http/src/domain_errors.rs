//! Domain errors in HTTP terms. `ApiError` holds the one status/code mapping; this is where each
//! domain operation's error enum is translated into it.

use domain::channels::{CreateChannelError, UpdateChannelError};
use domain::members::ChangeMemberError;
use domain::messaging::SendMessageError;
use domain::webhooks::WebhookError;

use crate::error::ApiError;

impl From<CreateChannelError> for ApiError {
    fn from(e: CreateChannelError) -> Self {
        match e {
            CreateChannelError::Duplicate { .. } => ApiError::Conflict(e.to_string()),
            CreateChannelError::Unknown(e) => e.into(),
        }
    }
}

impl From<SendMessageError> for ApiError {
    fn from(e: SendMessageError) -> Self {
        match e {
            SendMessageError::Invalid(v) => ApiError::Validation(v),
            SendMessageError::ChannelNotFound(_) | SendMessageError::ThreadNotFound(_) => {
                ApiError::NotFound(e.to_string())
            }
            SendMessageError::ChannelNotActive { .. } | SendMessageError::IdempotencyMismatch => {
                ApiError::Conflict(e.to_string())
            }
            SendMessageError::Unknown(e) => e.into(),
        }
    }
}

impl From<ChangeMemberError> for ApiError {
    fn from(e: ChangeMemberError) -> Self {
        match e {
            ChangeMemberError::NotFound(_) => ApiError::NotFound(e.to_string()),
            ChangeMemberError::LastAdmin => ApiError::Conflict(e.to_string()),
            ChangeMemberError::Unknown(e) => e.into(),
        }
    }
}

impl From<WebhookError> for ApiError {
    fn from(e: WebhookError) -> Self {
        match e {
            WebhookError::NotFound => ApiError::NotFound(e.to_string()),
            WebhookError::Invalid(v) => ApiError::Validation(v),
            WebhookError::InProgress | WebhookError::SecretUnreadable => ApiError::Conflict(e.to_string()),
            WebhookError::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::assistant::ToolError> for ApiError {
    fn from(e: domain::assistant::ToolError) -> Self {
        use domain::assistant::ToolError;
        match e {
            // The execute body is {"tool", "arguments"}: an argument is named by its path in it.
            ToolError::Invalid(mut v) => {
                for f in &mut v.0 {
                    if f.field != "tool" && f.field != "arguments" {
                        f.field = format!("arguments.{}", f.field);
                    }
                }
                ApiError::Validation(v)
            }
            ToolError::Unavailable(m) => ApiError::ServiceUnavailable(m),
            ToolError::Unknown(e) => e.into(),
        }
    }
}

impl From<UpdateChannelError> for ApiError {
    fn from(e: UpdateChannelError) -> Self {
        match e {
            UpdateChannelError::NotFound(_) => ApiError::NotFound(e.to_string()),
            UpdateChannelError::AccountInUse => ApiError::Conflict(e.to_string()),
            UpdateChannelError::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::threads::UpdateThreadError> for ApiError {
    fn from(e: domain::threads::UpdateThreadError) -> Self {
        use domain::threads::UpdateThreadError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::UnknownAssignee { .. } => ApiError::field("assignee.id", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::members::ManageMemberError> for ApiError {
    fn from(e: domain::members::ManageMemberError) -> Self {
        match e {
            domain::members::ManageMemberError::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            domain::members::ManageMemberError::Change(e) => e.into(),
        }
    }
}

impl From<domain::members::AddMemberFailure> for ApiError {
    fn from(e: domain::members::AddMemberFailure) -> Self {
        match e {
            domain::members::AddMemberFailure::Invalid(v) => ApiError::Validation(v),
            domain::members::AddMemberFailure::AlreadyMember(_) => ApiError::Conflict(e.to_string()),
            domain::members::AddMemberFailure::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::connectors::ProofError> for ApiError {
    fn from(e: domain::connectors::ProofError) -> Self {
        match e {
            domain::connectors::ProofError::Refused(m) => ApiError::field("credentials", m),
            domain::connectors::ProofError::Unreachable(m) => ApiError::PlatformUnreachable(m),
        }
    }
}
