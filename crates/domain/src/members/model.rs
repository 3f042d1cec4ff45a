//! Member profile and changes.

use time::OffsetDateTime;

use crate::common::error::{FieldError, ValidationErrors};
use crate::mail::{Letter, Mail, MailLink};
use crate::users::{Email, PersonName, Role, UserId};

/// Where a membership stands. Only `Active` gives access; an `Invited` one waits for the person
/// to accept through the link e-mailed to their address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemberStatus {
    /// Added, not accepted yet: no access, no sign-in, not offered at sign-in.
    Invited,
    /// Accepted (or vouched for by an operator).
    Active,
    /// Turned off by an admin.
    Deactivated,
}

impl MemberStatus {
    /// `invited`, `active` or `deactivated`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemberStatus::Invited => "invited",
            MemberStatus::Active => "active",
            MemberStatus::Deactivated => "deactivated",
        }
    }

    /// The status stored as `s`.
    ///
    /// # Errors
    /// An unknown name.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "invited" => Ok(MemberStatus::Invited),
            "active" => Ok(MemberStatus::Active),
            "deactivated" => Ok(MemberStatus::Deactivated),
            other => Err(format!("unknown membership status `{other}`")),
        }
    }

    /// What a change of `active` leaves a membership in `self` as. Deactivating stops access;
    /// reactivating gives access back only to a person who once accepted (`joined`): one who never
    /// did is invited again, so no change by an admin makes a membership its owner did not accept.
    pub fn after(self, active: Option<bool>, joined: bool) -> Self {
        match active {
            None => self,
            Some(false) => MemberStatus::Deactivated,
            Some(true) if self == MemberStatus::Active => self,
            Some(true) if joined => MemberStatus::Active,
            Some(true) => MemberStatus::Invited,
        }
    }
}

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
    /// Invited, active or deactivated.
    pub status: MemberStatus,
    /// Online or away.
    pub availability: Availability,
    /// When they were added to the workspace.
    pub created_at: OffsetDateTime,
}

impl MemberProfile {
    /// Whether the membership gives access (`status == active`).
    pub fn active(&self) -> bool {
        self.status == MemberStatus::Active
    }
}

/// What adding a person does, given their membership in the workspace so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Not a member: the membership is created.
    New,
    /// Invited and not accepted yet: a new invitation replaces every older link.
    Reinvite,
    /// Already active or deactivated: a conflict (409).
    AlreadyMember,
}

impl Admission {
    /// The admission of a person whose membership is `existing`.
    pub fn of(existing: Option<MemberStatus>) -> Self {
        match existing {
            None => Admission::New,
            Some(MemberStatus::Invited) => Admission::Reinvite,
            Some(MemberStatus::Active | MemberStatus::Deactivated) => Admission::AlreadyMember,
        }
    }
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
    /// Every availability.
    pub const ALL: [Availability; 2] = [Availability::Online, Availability::Away];

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

    /// Whether this change touches the admin role of a member whose role is `current`: promoting
    /// to admin, or demoting, deactivating or reactivating an admin. Only admin members may.
    pub fn touches_admin_role(&self, current: Role) -> bool {
        self.role == Some(Role::Admin)
            || (current == Role::Admin && (self.role.is_some_and(|r| r != Role::Admin) || self.active.is_some()))
    }

    /// Whether making this change to another member whose role is `current` needs an admin
    /// member: any change to an admin (a key manages agent members only: not an admin's name or
    /// availability either), and any change of the admin role.
    pub fn needs_admin(&self, current: Role) -> bool {
        current == Role::Admin || self.touches_admin_role(current)
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

/// The invitation e-mail: the link is the person's proof of the address. One wording for every
/// account, so the mail says nothing about whether one exists or has a password; the page behind
/// the link asks for what is needed.
pub fn invitation_mail(to: Email, workspace_name: &str, role: Role, link: String) -> Mail {
    let workspace = if workspace_name.is_empty() { "a workspace" } else { workspace_name };
    let letter = Letter {
        paragraphs: vec![
            format!("You were invited to join {workspace} on wms as {}.", role_words(role)),
            "Open the link below to accept. If you have no wms password yet, you will choose one; \
             if you already have one, you will sign in with it."
                .to_owned(),
        ],
        link: Some(MailLink { label: "Accept the invitation".into(), url: link }),
        closing: vec!["The link works once, for 7 days. If you did not expect this invitation, ignore this \
             e-mail: nothing happens until the link is used."
            .to_owned()],
    };
    Mail::compose(to, &format!("You are invited to {workspace} on wms"), &letter)
}

fn role_words(role: Role) -> &'static str {
    match role {
        Role::Admin => "an admin",
        Role::Agent => "an agent",
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
    fn reactivating_gives_access_back_only_to_who_once_accepted() {
        use MemberStatus::{Active, Deactivated, Invited};
        assert_eq!(Deactivated.after(Some(true), true), Active);
        assert_eq!(Deactivated.after(Some(true), false), Invited);
        assert_eq!(Invited.after(Some(true), false), Invited);
        assert_eq!(Invited.after(Some(false), false), Deactivated);
        assert_eq!(Active.after(None, true), Active);
    }

    #[test]
    fn the_admin_role_is_touched_by_promotion_demotion_and_an_admins_activity() {
        let c = |role: Option<&str>, active: Option<bool>| MemberChange::new(None, role, active).expect("valid");
        assert!(c(Some("admin"), None).touches_admin_role(Role::Agent));
        assert!(c(Some("agent"), None).touches_admin_role(Role::Admin));
        assert!(c(None, Some(false)).touches_admin_role(Role::Admin));
        assert!(!c(None, Some(false)).touches_admin_role(Role::Agent));
        assert!(!c(Some("agent"), None).touches_admin_role(Role::Agent));
        assert!(!MemberChange::new(Some("New name"), None, None).expect("valid").touches_admin_role(Role::Admin));
        // Any change to another admin needs an admin; an agent's name does not.
        let rename = MemberChange::new(Some("New name"), None, None).expect("valid");
        assert!(rename.needs_admin(Role::Admin) && !rename.needs_admin(Role::Agent));
        assert!(c(Some("admin"), None).needs_admin(Role::Agent));
    }

    #[test]
    fn bad_fields_are_named() {
        let e = MemberChange::new(Some(""), Some("owner"), None).expect_err("invalid");
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["name", "role"]);
    }
}
