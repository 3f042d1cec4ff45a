//! Member profile and changes.

use time::OffsetDateTime;

use crate::common::error::{FieldError, ValidationErrors};
use crate::users::{PersonName, Role, UserId};

/// A user as a member of one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberProfile {
    /// The user.
    pub user_id: UserId,
    /// Their e-mail.
    pub email: String,
    /// Their name.
    pub name: String,
    /// Role in this workspace.
    pub role: Role,
    /// Whether the membership is active.
    pub active: bool,
    /// Online or away.
    pub availability: Availability,
    /// When they joined the workspace.
    pub created_at: OffsetDateTime,
}

/// Whether a member takes new threads from their teams' automatic assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Availability {
    /// Takes threads.
    #[default]
    Online,
    /// Skipped by automatic assignment; keeps their threads.
    Away,
}

impl Availability {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Availability::Online => "online",
            Availability::Away => "away",
        }
    }

    /// The availability named `raw`.
    ///
    /// # Errors
    /// A [`FieldError`] on `availability`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        match raw {
            "online" => Ok(Availability::Online),
            "away" => Ok(Availability::Away),
            _ => Err(FieldError::new("availability", "must be `online` or `away`")),
        }
    }

    /// A stored value (anything unknown reads as `away`, which assigns nothing).
    pub fn stored(raw: &str) -> Self {
        Self::parse(raw).unwrap_or(Availability::Away)
    }
}

/// A validated change to a member; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberChange {
    /// New display name.
    pub name: Option<PersonName>,
    /// New role.
    pub role: Option<Role>,
    /// Activate or deactivate.
    pub active: Option<bool>,
    /// Online or away (any member for themselves; admins for others).
    pub availability: Option<Availability>,
}

impl MemberChange {
    /// Validates raw values.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming each invalid field.
    pub fn new(name: Option<&str>, role: Option<&str>, active: Option<bool>) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let name = name.and_then(|n| errors.check(PersonName::new("name", n)));
        let role = role.and_then(|r| errors.check(r.parse::<Role>()));
        errors.clone().into_result()?;
        Ok(Self { name, role, active, availability: None })
    }

    /// The change with `availability` validated too.
    ///
    /// # Errors
    /// [`ValidationErrors`] naming `availability`.
    pub fn with_availability(mut self, raw: Option<&str>) -> Result<Self, ValidationErrors> {
        self.availability = raw.map(Availability::parse).transpose().map_err(|e| ValidationErrors(vec![e]))?;
        Ok(self)
    }

    /// Whether this change takes admin rights away (demotion or deactivation).
    pub fn removes_admin_rights(&self) -> bool {
        self.role == Some(Role::Agent) || self.active == Some(false)
    }

    /// `true` when nothing would change.
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.role.is_none() && self.active.is_none() && self.availability.is_none()
    }
}

/// The error for an empty change.
pub fn empty_change() -> ValidationErrors {
    ValidationErrors(vec![FieldError::new("body", "give at least one of name, role, active, availability")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demotion_and_deactivation_remove_admin_rights() {
        assert!(MemberChange::new(None, Some("agent"), None).map(|c| c.removes_admin_rights()).unwrap_or(false));
        assert!(MemberChange::new(None, None, Some(false)).map(|c| c.removes_admin_rights()).unwrap_or(false));
        assert!(!MemberChange::new(Some("Ann"), Some("admin"), Some(true))
            .map(|c| c.removes_admin_rights())
            .unwrap_or(true));
    }

    #[test]
    fn availability_is_validated() {
        let c = MemberChange::new(None, None, None).and_then(|c| c.with_availability(Some("away"))).expect("valid");
        assert_eq!((c.availability, c.is_empty()), (Some(Availability::Away), false));
        let e = MemberChange::new(None, None, None).and_then(|c| c.with_availability(Some("busy")));
        assert_eq!(e.expect_err("invalid").0[0].field, "availability");
    }

    #[test]
    fn bad_fields_are_named() {
        let e = MemberChange::new(Some(""), Some("owner"), None).expect_err("invalid");
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["name", "role"]);
    }
}
