//! Thread values and changes.

use time::OffsetDateTime;

use super::lifecycle::{StatusReason, StatusRequest, ThreadStatus};
use crate::common::error::{FieldError, ValidationErrors};
use crate::common::text::bounded;
use crate::teams::AssignmentReason;

/// The longest label name (as the labels table allows).
pub const MAX_LABEL_NAME: usize = 50;

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
    /// Status: `open`, `pending`, `snoozed` or `resolved` ([`ThreadStatus`]).
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
    /// The names of its labels, in alphabetical order (case-insensitive).
    pub labels: Vec<String>,
    /// The snooze's end, when snoozed with a time.
    pub snoozed_until: Option<OffsetDateTime>,
    /// Why the status last changed (none before any change).
    pub status_reason: Option<StatusReason>,
    /// The team it belongs to.
    pub team_id: Option<i64>,
    /// When it was last assigned.
    pub assigned_at: Option<OffsetDateTime>,
    /// Why it has its assignee (none when never assigned).
    pub assignment_reason: Option<AssignmentReason>,
    /// The platform time of the contact's latest inbound message (its service window).
    pub latest_inbound_at: Option<OffsetDateTime>,
    /// Its SLA in the current cycle (none when no policy applied).
    pub sla: Option<crate::sla::ThreadSla>,
}

/// A validated change; `None` keeps a field, `Some(None)` for the assignee unassigns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadChange {
    /// New status (and snooze end).
    pub status: Option<StatusRequest>,
    /// New assignee (or none).
    pub assignee: Option<Option<Assignee>>,
}

impl ThreadChange {
    /// Validates raw values at `now` (a snooze's end must be ahead of it).
    ///
    /// # Errors
    /// [`ValidationErrors`] naming each bad field; `snoozed_until` without `status` names
    /// `snoozed_until`; an empty change names `body`.
    pub fn new(
        status: Option<&str>,
        snoozed_until: Option<&str>,
        assignee: Option<Option<(&str, i64)>>,
        now: OffsetDateTime,
    ) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let status = match status {
            Some(s) => match StatusRequest::new(s, snoozed_until, now) {
                Ok(r) => Some(r),
                Err(e) => {
                    errors.0.extend(e.0);
                    None
                }
            },
            None => {
                if snoozed_until.is_some() {
                    errors.0.push(FieldError::new("snoozed_until", "is only taken with the status `snoozed`"));
                }
                None
            }
        };
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

/// The raw query of a thread listing, before validation (times already parsed by the caller).
#[derive(Debug, Clone, Default)]
pub struct ThreadFilterInput {
    /// `status`.
    pub status: Option<String>,
    /// `channel_id`.
    pub channel_id: Option<i64>,
    /// `contact_id`.
    pub contact_id: Option<i64>,
    /// `assignee_type`: `user`, `team` or `ai_agent`.
    pub assignee_type: Option<String>,
    /// `assignee_id`: only with `assignee_type`.
    pub assignee_id: Option<i64>,
    /// `label`: a label's name.
    pub label: Option<String>,
    /// `updated_since`.
    pub updated_since: Option<OffsetDateTime>,
}

/// Which kind of assignee a listing asks for: every thread assigned to a kind, or to one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssigneeFilter {
    /// Assigned to any assignee of this kind (`user`, `team` or `ai_agent`).
    AnyOf(&'static str),
    /// Assigned to exactly this one.
    Exactly(Assignee),
}

/// A validated thread listing filter; every field narrows the list (all must hold).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadFilter {
    /// Only this status.
    pub status: Option<String>,
    /// Only this channel.
    pub channel_id: Option<i64>,
    /// Only this contact.
    pub contact_id: Option<i64>,
    /// Only threads with this assignee (kind).
    pub assignee: Option<AssigneeFilter>,
    /// Only threads carrying the label of this name (case-insensitive).
    pub label: Option<String>,
    /// Only threads changed at or after this time.
    pub updated_since: Option<OffsetDateTime>,
}

fn valid_status(field: &str, s: &str) -> Result<String, FieldError> {
    ThreadStatus::parse(field, s).map(|s| s.as_str().to_owned())
}

impl ThreadFilter {
    /// The canonical filter set its list cursors are bound to (labels without case, as listed).
    pub fn cursor_key(&self) -> crate::common::page::FilterKey {
        let (kind, id) = match self.assignee {
            None => (None, None),
            Some(AssigneeFilter::AnyOf(kind)) => (Some(kind), None),
            Some(AssigneeFilter::Exactly(a)) => (Some(a.kind()), Some(a.id())),
        };
        crate::common::page::FilterKey::default()
            .with("status", self.status.as_deref())
            .with("channel_id", self.channel_id)
            .with("contact_id", self.contact_id)
            .with("assignee_type", kind)
            .with("assignee_id", id)
            .with("label", self.label.as_deref().map(str::to_lowercase))
            .with("updated_since", self.updated_since.map(OffsetDateTime::unix_timestamp_nanos))
    }

    /// Validates a listing's query.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming each bad parameter; `assignee_id` needs `assignee_type`.
    pub fn new(input: ThreadFilterInput) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let status = input.status.as_deref().and_then(|s| errors.check(valid_status("status", s)));
        let kind = input.assignee_type.as_deref().and_then(|k| {
            errors.check(
                Assignee::new(k, 0)
                    .map(Assignee::kind)
                    .map_err(|_| FieldError::new("assignee_type", "must be `user`, `team` or `ai_agent`")),
            )
        });
        let assignee = match (kind, input.assignee_id, input.assignee_type.is_some()) {
            (Some(kind), None, _) => Some(AssigneeFilter::AnyOf(kind)),
            (Some(kind), Some(id), _) => Assignee::new(kind, id).ok().map(AssigneeFilter::Exactly),
            (None, Some(_), false) => {
                errors.0.push(FieldError::new("assignee_type", "is required with assignee_id"));
                None
            }
            (None, _, _) => None,
        };
        let label = input.label.and_then(|l| errors.check(bounded("label", &l, 1, MAX_LABEL_NAME)));
        errors.into_result()?;
        Ok(ThreadFilter {
            status,
            channel_id: input.channel_id,
            contact_id: input.contact_id,
            assignee,
            label,
            updated_since: input.updated_since,
        })
    }
}

/// The label names a thread is to carry: trimmed, duplicates (ignoring case) dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelNames(Vec<String>);

/// The most labels one thread may carry.
pub const MAX_THREAD_LABELS: usize = 50;

impl LabelNames {
    /// Validates the `labels` of a request.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming `labels[i]` for a blank name, or `labels` for too many.
    pub fn new(raw: &[String]) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let mut names: Vec<String> = Vec::new();
        for (i, n) in raw.iter().enumerate() {
            match bounded(&format!("labels[{i}]"), n, 1, MAX_LABEL_NAME) {
                Err(e) => errors.0.push(e),
                Ok(n) if !names.iter().any(|m| m.to_lowercase() == n.to_lowercase()) => names.push(n),
                Ok(_) => {}
            }
        }
        if names.len() > MAX_THREAD_LABELS {
            errors.0.push(FieldError::new("labels", format!("at most {MAX_THREAD_LABELS} labels per thread")));
        }
        errors.into_result()?;
        Ok(Self(names))
    }

    /// The names, in the order given.
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_validate_the_assignee_pair_and_each_parameter() {
        let f = ThreadFilter::new(ThreadFilterInput {
            assignee_type: Some("team".into()),
            assignee_id: Some(4),
            ..Default::default()
        })
        .expect("valid");
        assert_eq!(f.assignee, Some(AssigneeFilter::Exactly(Assignee::Team(4))));
        let f = ThreadFilter::new(ThreadFilterInput { assignee_type: Some("user".into()), ..Default::default() })
            .expect("valid");
        assert_eq!(f.assignee, Some(AssigneeFilter::AnyOf("user")));
        let fields = |input| -> Vec<String> {
            ThreadFilter::new(input).expect_err("invalid").0.into_iter().map(|e| e.field).collect()
        };
        assert_eq!(fields(ThreadFilterInput { assignee_id: Some(3), ..Default::default() }), ["assignee_type"]);
        assert_eq!(
            fields(ThreadFilterInput {
                status: Some("Open".into()),
                assignee_type: Some("robot".into()),
                assignee_id: Some(1),
                label: Some("  ".into()),
                ..Default::default()
            }),
            ["status", "assignee_type", "label"]
        );
    }

    #[test]
    fn label_names_are_trimmed_and_deduplicated_ignoring_case() {
        let l = LabelNames::new(&["VIP".into(), " vip ".into(), "Billing".into()]).expect("valid");
        assert_eq!(l.names(), ["VIP", "Billing"]);
        assert_eq!(LabelNames::new(&[]).expect("empty is valid").names().len(), 0);
        let e = LabelNames::new(&["ok".into(), " ".into()]).expect_err("blank");
        assert_eq!(e.0[0].field, "labels[1]");
        // Text PostgreSQL cannot hold never reaches it.
        let e = LabelNames::new(&["a\u{0}b".into()]).expect_err("NUL");
        assert_eq!(e.0[0].field, "labels[0]");
    }

    #[test]
    fn changes_are_validated() {
        let now = time::macros::datetime!(2026-11-26 12:00 UTC);
        let status = |c: ThreadChange| c.status.map(|s| s.status);
        assert_eq!(ThreadChange::new(Some("resolved"), None, None, now).map(status), Ok(Some(ThreadStatus::Resolved)));
        assert_eq!(ThreadChange::new(None, None, Some(None), now).map(|c| c.assignee), Ok(Some(None)));
        assert_eq!(
            ThreadChange::new(None, None, Some(Some(("team", 3))), now).map(|c| c.assignee),
            Ok(Some(Some(Assignee::Team(3))))
        );
        let e = ThreadChange::new(Some("Closed!"), None, Some(Some(("robot", 1))), now).expect_err("invalid");
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["status", "assignee.type"]);
        let e = ThreadChange::new(None, Some("2026-11-27T00:00:00Z"), None, now).expect_err("no status");
        assert_eq!(e.0[0].field, "snoozed_until");
        assert_eq!(ThreadChange::new(None, None, None, now).expect_err("empty").0[0].field, "body");
    }
}
