//! Thread values and changes.

use time::OffsetDateTime;

use crate::common::error::{FieldError, ValidationErrors};

/// Who a thread is assigned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Assignee {
    /// An active member of the workspace.
    User(i64),
    /// A team of the workspace.
    Team(i64),
    /// An active AI agent of the workspace.
    AiAgent(i64),
}

impl Assignee {
    /// From the wire kind (`user`, `team`, `ai_agent`) and id.
    ///
    /// # Errors
    /// A [`FieldError`] on `assignee.type` for another kind.
    pub fn new(kind: &str, id: i64) -> Result<Self, FieldError> {
        match kind {
            "user" => Ok(Assignee::User(id)),
            "team" => Ok(Assignee::Team(id)),
            "ai_agent" => Ok(Assignee::AiAgent(id)),
            _ => Err(FieldError::new("assignee.type", "must be `user`, `team` or `ai_agent`")),
        }
    }

    /// The wire kind.
    pub fn kind(self) -> &'static str {
        match self {
            Assignee::User(_) => "user",
            Assignee::Team(_) => "team",
            Assignee::AiAgent(_) => "ai_agent",
        }
    }

    /// The id of the user, team or agent.
    pub fn id(self) -> i64 {
        match self {
            Assignee::User(id) | Assignee::Team(id) | Assignee::AiAgent(id) => id,
        }
    }
}

/// A thread as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Its id.
    pub id: i64,
    /// Channel.
    pub channel_id: i64,
    /// Contact.
    pub contact_id: i64,
    /// Status (`open`, `resolved`, or another the workspace uses).
    pub status: String,
    /// Inbound messages not read yet.
    pub unread_count: i32,
    /// Who handles it.
    pub assignee: Option<Assignee>,
    /// Who holds the conversation when an AI agent is involved.
    pub handover_status: Option<String>,
    /// Last message time.
    pub last_message_at: Option<OffsetDateTime>,
    /// Creation time.
    pub created_at: OffsetDateTime,
}

/// A validated change; `None` keeps a field, `Some(None)` for the assignee unassigns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadChange {
    /// New status.
    pub status: Option<String>,
    /// New assignee (or none).
    pub assignee: Option<Option<Assignee>>,
}

impl ThreadChange {
    /// Validates raw values.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming each bad field; an empty change names `body`.
    pub fn new(status: Option<&str>, assignee: Option<Option<(&str, i64)>>) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let status = status.and_then(|s| {
            let ok = (1..=32).contains(&s.len()) && s.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            errors.check(if ok {
                Ok(s.to_owned())
            } else {
                Err(FieldError::new("status", "must be 1 to 32 lowercase letters or `_`, such as open or resolved"))
            })
        });
        let assignee = match assignee {
            None => None,
            Some(None) => Some(None),
            Some(Some((kind, id))) => errors.check(Assignee::new(kind, id)).map(Some),
        };
        errors.clone().into_result()?;
        let change = ThreadChange { status, assignee };
        if change == ThreadChange::default() {
            return Err(ValidationErrors::one("body", "give at least one of status, assignee"));
        }
        Ok(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_validated() {
        assert_eq!(ThreadChange::new(Some("resolved"), None).map(|c| c.status), Ok(Some("resolved".into())));
        assert_eq!(ThreadChange::new(None, Some(None)).map(|c| c.assignee), Ok(Some(None)));
        assert_eq!(
            ThreadChange::new(None, Some(Some(("team", 3)))).map(|c| c.assignee),
            Ok(Some(Some(Assignee::Team(3))))
        );
        let e = ThreadChange::new(Some("Closed!"), Some(Some(("robot", 1)))).expect_err("invalid");
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["status", "assignee.type"]);
        assert_eq!(ThreadChange::new(None, None).expect_err("empty").0[0].field, "body");
    }
}
