//! Domain errors in HTTP terms. `ApiError` holds the one status/code mapping; this is where each
//! domain operation's error enum is translated into it.

use domain::channels::{CreateChannelError, GetChannelError, UpdateChannelError};
use domain::members::{RemoveMemberError, UpdateMemberError};
use domain::messaging::SendMessageError;
use domain::webhooks::{
    CreateWebhookError, DeleteWebhookError, RedeliverError, RevealSecretError, RotateSecretError, SendTestError,
    UpdateWebhookError, WebhookNotFound,
};

use crate::error::ApiError;

impl From<CreateChannelError> for ApiError {
    fn from(e: CreateChannelError) -> Self {
        match e {
            CreateChannelError::Invalid(v) => ApiError::Validation(v),
            CreateChannelError::CredentialsRefused(m) => ApiError::field("credentials", m),
            CreateChannelError::PlatformUnreachable(m) => ApiError::PlatformUnreachable(m),
            CreateChannelError::Duplicate { .. } => ApiError::Conflict(e.to_string()),
            CreateChannelError::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::connectors::template_sync::ListTemplatesError> for ApiError {
    fn from(e: domain::connectors::template_sync::ListTemplatesError) -> Self {
        use domain::connectors::template_sync::ListTemplatesError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::connectors::template_sync::SyncTemplatesError> for ApiError {
    fn from(e: domain::connectors::template_sync::SyncTemplatesError) -> Self {
        use domain::connectors::template_sync::SyncTemplatesError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::NoWaba => ApiError::field("credentials.waba_id", e.to_string()),
            E::Platform(m) => ApiError::PlatformUnreachable(m),
            E::Unknown(e) => e.into(),
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
            SendMessageError::WindowClosed(c) => {
                ApiError::ServiceWindowClosed { detail: c.to_string(), expires_at: c.expires_at }
            }
            SendMessageError::TemplateNotApproved { .. } => ApiError::TemplateNotApproved(e.to_string()),
            SendMessageError::Unknown(e) => e.into(),
        }
    }
}

impl From<UpdateMemberError> for ApiError {
    fn from(e: UpdateMemberError) -> Self {
        match e {
            UpdateMemberError::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            UpdateMemberError::NotFound(_) => ApiError::NotFound(e.to_string()),
            UpdateMemberError::LastAdmin => ApiError::Conflict(e.to_string()),
            UpdateMemberError::Unknown(e) => e.into(),
        }
    }
}

impl From<RemoveMemberError> for ApiError {
    fn from(e: RemoveMemberError) -> Self {
        match e {
            RemoveMemberError::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            RemoveMemberError::NotFound(_) => ApiError::NotFound(e.to_string()),
            RemoveMemberError::LastAdmin => ApiError::Conflict(e.to_string()),
            RemoveMemberError::Unknown(e) => e.into(),
        }
    }
}

impl From<CreateWebhookError> for ApiError {
    fn from(e: CreateWebhookError) -> Self {
        match e {
            CreateWebhookError::Invalid(v) => ApiError::Validation(v),
            CreateWebhookError::Unknown(e) => e.into(),
        }
    }
}

// The other webhooks operations' errors: a destination (or delivery) this workspace does not have
// is 404, a state that refuses the operation now 409 `conflict`, invalid fields 422. Each match
// stays exhaustive, so a new variant must be mapped here.

impl From<WebhookNotFound> for ApiError {
    fn from(e: WebhookNotFound) -> Self {
        match e {
            WebhookNotFound::NotFound => ApiError::NotFound(e.to_string()),
            WebhookNotFound::Unknown(e) => e.into(),
        }
    }
}

impl From<UpdateWebhookError> for ApiError {
    fn from(e: UpdateWebhookError) -> Self {
        match e {
            UpdateWebhookError::NotFound => ApiError::NotFound(e.to_string()),
            UpdateWebhookError::Invalid(v) => ApiError::Validation(v),
            UpdateWebhookError::Unknown(e) => e.into(),
        }
    }
}

impl From<DeleteWebhookError> for ApiError {
    fn from(e: DeleteWebhookError) -> Self {
        match e {
            DeleteWebhookError::NotFound => ApiError::NotFound(e.to_string()),
            DeleteWebhookError::Unknown(e) => e.into(),
        }
    }
}

impl From<RevealSecretError> for ApiError {
    fn from(e: RevealSecretError) -> Self {
        match e {
            RevealSecretError::NotFound => ApiError::NotFound(e.to_string()),
            RevealSecretError::SecretUnreadable => ApiError::Conflict(e.to_string()),
            RevealSecretError::Unknown(e) => e.into(),
        }
    }
}

impl From<RotateSecretError> for ApiError {
    fn from(e: RotateSecretError) -> Self {
        match e {
            RotateSecretError::NotFound => ApiError::NotFound(e.to_string()),
            RotateSecretError::Unknown(e) => e.into(),
        }
    }
}

impl From<RedeliverError> for ApiError {
    fn from(e: RedeliverError) -> Self {
        match e {
            RedeliverError::NotFound => ApiError::NotFound(e.to_string()),
            RedeliverError::InProgress => ApiError::Conflict(e.to_string()),
            RedeliverError::CapReached { retry_after_secs, .. } => {
                ApiError::CapReached { detail: e.to_string(), retry_after: retry_after_secs }
            }
            RedeliverError::Unknown(e) => e.into(),
        }
    }
}

impl From<SendTestError> for ApiError {
    fn from(e: SendTestError) -> Self {
        match e {
            SendTestError::NotFound => ApiError::NotFound(e.to_string()),
            SendTestError::CapReached { retry_after_secs, .. } => {
                ApiError::CapReached { detail: e.to_string(), retry_after: retry_after_secs }
            }
            SendTestError::Unknown(e) => e.into(),
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
            // As the REST endpoint of the same data refuses: 403 `forbidden` or `insufficient_scope`.
            ToolError::Denied(d) => d.into(),
            ToolError::Unavailable(m) => ApiError::ServiceUnavailable(m),
            ToolError::Unknown(e) => e.into(),
        }
    }
}

impl From<UpdateChannelError> for ApiError {
    fn from(e: UpdateChannelError) -> Self {
        match e {
            UpdateChannelError::NotFound(_) => ApiError::NotFound(e.to_string()),
            UpdateChannelError::Invalid(v) => ApiError::Validation(v),
            UpdateChannelError::CredentialsRefused(m) => ApiError::field("credentials", m),
            UpdateChannelError::PlatformUnreachable(m) => ApiError::PlatformUnreachable(m),
            UpdateChannelError::AccountInUse => ApiError::Conflict(e.to_string()),
            UpdateChannelError::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::threads::UpdateThreadError> for ApiError {
    fn from(e: domain::threads::UpdateThreadError) -> Self {
        use domain::threads::UpdateThreadError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::UnknownAssignee { .. } => ApiError::field("assignee.id", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::members::AddMemberFailure> for ApiError {
    fn from(e: domain::members::AddMemberFailure) -> Self {
        match e {
            domain::members::AddMemberFailure::Invalid(v) => ApiError::Validation(v),
            domain::members::AddMemberFailure::AlreadyMember(_) => ApiError::Conflict(e.to_string()),
            domain::members::AddMemberFailure::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            domain::members::AddMemberFailure::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::threads::GetThreadError> for ApiError {
    fn from(e: domain::threads::GetThreadError) -> Self {
        use domain::threads::GetThreadError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::threads::ListThreadsError> for ApiError {
    fn from(e: domain::threads::ListThreadsError) -> Self {
        use domain::threads::ListThreadsError as E;
        match e {
            E::UnknownLabel(_) => ApiError::field("label", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::threads::SetThreadLabelsError> for ApiError {
    fn from(e: domain::threads::SetThreadLabelsError) -> Self {
        use domain::threads::SetThreadLabelsError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::UnknownLabels(_) => ApiError::field("labels", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::labels::CreateLabelError> for ApiError {
    fn from(e: domain::labels::CreateLabelError) -> Self {
        use domain::labels::CreateLabelError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Duplicate(_) => ApiError::Conflict(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::labels::UpdateLabelError> for ApiError {
    fn from(e: domain::labels::UpdateLabelError) -> Self {
        use domain::labels::UpdateLabelError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Duplicate(_) => ApiError::Conflict(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::labels::DeleteLabelError> for ApiError {
    fn from(e: domain::labels::DeleteLabelError) -> Self {
        use domain::labels::DeleteLabelError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::sla::CreateSlaPolicyError> for ApiError {
    fn from(e: domain::sla::CreateSlaPolicyError) -> Self {
        use domain::sla::CreateSlaPolicyError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::UnknownChannels(_) => ApiError::field("channel_ids", e.to_string()),
            E::UnknownLabels(_) => ApiError::field("labels", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::sla::UpdateSlaPolicyError> for ApiError {
    fn from(e: domain::sla::UpdateSlaPolicyError) -> Self {
        use domain::sla::UpdateSlaPolicyError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::UnknownChannels(_) => ApiError::field("channel_ids", e.to_string()),
            E::UnknownLabels(_) => ApiError::field("labels", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::sla::DeleteSlaPolicyError> for ApiError {
    fn from(e: domain::sla::DeleteSlaPolicyError) -> Self {
        use domain::sla::DeleteSlaPolicyError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::teams::CreateTeamError> for ApiError {
    fn from(e: domain::teams::CreateTeamError) -> Self {
        use domain::teams::CreateTeamError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Duplicate(_) => ApiError::Conflict(e.to_string()),
            E::UnknownMembers(_) => ApiError::field("member_ids", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::teams::UpdateTeamError> for ApiError {
    fn from(e: domain::teams::UpdateTeamError) -> Self {
        use domain::teams::UpdateTeamError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Duplicate(_) => ApiError::Conflict(e.to_string()),
            E::UnknownMembers(_) => ApiError::field("member_ids", e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::teams::TeamLookupError> for ApiError {
    fn from(e: domain::teams::TeamLookupError) -> Self {
        use domain::teams::TeamLookupError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::ai_agents::GetAiAgentError> for ApiError {
    fn from(e: domain::ai_agents::GetAiAgentError) -> Self {
        use domain::ai_agents::GetAiAgentError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::contacts::ContactField> for ApiError {
    fn from(f: domain::contacts::ContactField) -> Self {
        let what = match f {
            domain::contacts::ContactField::Phone => "phone number",
            domain::contacts::ContactField::Email => "e-mail address",
        };
        ApiError::FieldConflict(domain::FieldError::new(
            f.as_str(),
            format!("another contact of this workspace has this {what}"),
        ))
    }
}

impl From<domain::contacts::ListContactsError> for ApiError {
    fn from(e: domain::contacts::ListContactsError) -> Self {
        use domain::contacts::ListContactsError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::contacts::GetContactError> for ApiError {
    fn from(e: domain::contacts::GetContactError) -> Self {
        use domain::contacts::GetContactError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::contacts::CreateContactError> for ApiError {
    fn from(e: domain::contacts::CreateContactError) -> Self {
        use domain::contacts::CreateContactError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Conflict(f) => f.into(),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::contacts::UpdateContactError> for ApiError {
    fn from(e: domain::contacts::UpdateContactError) -> Self {
        use domain::contacts::UpdateContactError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Conflict(f) => f.into(),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::contacts::EraseContactError> for ApiError {
    fn from(e: domain::contacts::EraseContactError) -> Self {
        use domain::contacts::EraseContactError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::events::FeedError> for ApiError {
    fn from(e: domain::events::FeedError) -> Self {
        use domain::events::FeedError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::events::ReplayError> for ApiError {
    fn from(e: domain::events::ReplayError) -> Self {
        use domain::events::ReplayError as E;
        match e {
            E::NotFound => ApiError::NotFound(e.to_string()),
            E::Invalid(v) => ApiError::Validation(v),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::messaging::GetMessageError> for ApiError {
    fn from(e: domain::messaging::GetMessageError) -> Self {
        use domain::messaging::GetMessageError as E;
        match e {
            E::NotFound(_) => ApiError::NotFound(e.to_string()),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<GetChannelError> for ApiError {
    fn from(e: GetChannelError) -> Self {
        match e {
            GetChannelError::NotFound(_) => ApiError::NotFound(e.to_string()),
            GetChannelError::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::business_hours::SetBusinessHoursError> for ApiError {
    fn from(e: domain::business_hours::SetBusinessHoursError) -> Self {
        use domain::business_hours::SetBusinessHoursError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Unknown(e) => e.into(),
        }
    }
}

impl From<domain::reports::ReportError> for ApiError {
    fn from(e: domain::reports::ReportError) -> Self {
        use domain::reports::ReportError as E;
        match e {
            E::Invalid(v) => ApiError::Validation(v),
            E::Unknown(e) => e.into(),
        }
    }
}
