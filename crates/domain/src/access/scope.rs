//! API key scopes (`docs/contract.md`, "Access"): what a restricted key may do, in the manner of
//! Stripe's restricted keys and GitHub's fine-grained tokens.

use std::fmt;
use std::str::FromStr;

use crate::common::error::{FieldError, ValidationErrors};

/// One permission an API key can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Read messages.
    MessagesRead,
    /// Send messages.
    MessagesWrite,
    /// Read channels.
    ChannelsRead,
    /// Create and change channels.
    ChannelsWrite,
    /// Read threads.
    ThreadsRead,
    /// Change threads (status, assignment, labels).
    ThreadsWrite,
    /// Read contacts.
    ContactsRead,
    /// Create and change contacts.
    ContactsWrite,
    /// Read labels.
    LabelsRead,
    /// Manage labels.
    LabelsWrite,
    /// Read teams.
    TeamsRead,
    /// Manage teams.
    TeamsWrite,
    /// Read members.
    UsersRead,
    /// Add, change and remove members.
    UsersWrite,
    /// Read webhook destinations and their deliveries.
    WebhooksRead,
    /// Manage webhook destinations and their secrets.
    WebhooksWrite,
    /// Read the events feed.
    EventsRead,
    /// Read the audit log.
    AuditRead,
    /// Use the assistant's tools.
    AssistantRead,
    /// Erase contacts (GDPR art. 17); not implied by `contacts:write`.
    ContactsErase,
    /// Read workspace settings (business hours).
    SettingsRead,
    /// Change workspace settings (business hours).
    SettingsWrite,
    /// Read the conversation reports.
    ReportsRead,
}

impl Scope {
    /// Every scope, in the order the documentation and the settings page list them.
    pub const ALL: &'static [Scope] = &[
        Scope::MessagesRead,
        Scope::MessagesWrite,
        Scope::ChannelsRead,
        Scope::ChannelsWrite,
        Scope::ThreadsRead,
        Scope::ThreadsWrite,
        Scope::ContactsRead,
        Scope::ContactsWrite,
        Scope::LabelsRead,
        Scope::LabelsWrite,
        Scope::TeamsRead,
        Scope::TeamsWrite,
        Scope::UsersRead,
        Scope::UsersWrite,
        Scope::WebhooksRead,
        Scope::WebhooksWrite,
        Scope::EventsRead,
        Scope::AuditRead,
        Scope::AssistantRead,
        Scope::ContactsErase,
        Scope::SettingsRead,
        Scope::SettingsWrite,
        Scope::ReportsRead,
    ];

    /// The wire name (`messages:read`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::MessagesRead => "messages:read",
            Scope::MessagesWrite => "messages:write",
            Scope::ChannelsRead => "channels:read",
            Scope::ChannelsWrite => "channels:write",
            Scope::ThreadsRead => "threads:read",
            Scope::ThreadsWrite => "threads:write",
            Scope::ContactsRead => "contacts:read",
            Scope::ContactsWrite => "contacts:write",
            Scope::LabelsRead => "labels:read",
            Scope::LabelsWrite => "labels:write",
            Scope::TeamsRead => "teams:read",
            Scope::TeamsWrite => "teams:write",
            Scope::UsersRead => "users:read",
            Scope::UsersWrite => "users:write",
            Scope::WebhooksRead => "webhooks:read",
            Scope::WebhooksWrite => "webhooks:write",
            Scope::EventsRead => "events:read",
            Scope::AuditRead => "audit:read",
            Scope::AssistantRead => "assistant:read",
            Scope::ContactsErase => "contacts:erase",
            Scope::SettingsRead => "settings:read",
            Scope::SettingsWrite => "settings:write",
            Scope::ReportsRead => "reports:read",
        }
    }

    /// The resource part of the name (`messages`), for grouping on the settings page.
    pub fn resource(self) -> &'static str {
        self.as_str().split(':').next().unwrap_or_default()
    }

    /// The write scope that implies this read scope (`X:write` implies `X:read`).
    fn implied_by(self) -> Option<Scope> {
        match self {
            Scope::MessagesRead => Some(Scope::MessagesWrite),
            Scope::ChannelsRead => Some(Scope::ChannelsWrite),
            Scope::ThreadsRead => Some(Scope::ThreadsWrite),
            Scope::ContactsRead => Some(Scope::ContactsWrite),
            Scope::LabelsRead => Some(Scope::LabelsWrite),
            Scope::TeamsRead => Some(Scope::TeamsWrite),
            Scope::UsersRead => Some(Scope::UsersWrite),
            Scope::WebhooksRead => Some(Scope::WebhooksWrite),
            Scope::SettingsRead => Some(Scope::SettingsWrite),
            _ => None,
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope `{0}`")]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL.iter().copied().find(|x| x.as_str() == s).ok_or_else(|| UnknownScope(s.to_owned()))
    }
}

/// The scopes a key was granted, as a bit set (checked on every `/v1` request, so it is `Copy`
/// and a check is one AND).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeSet(u32);

impl ScopeSet {
    /// Every scope: a full-access key.
    pub fn full() -> Self {
        Self(Scope::ALL.iter().fold(0, |acc, s| acc | s.bit()))
    }

    /// No scope at all.
    pub fn empty() -> Self {
        Self(0)
    }

    /// The set of `scopes`.
    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Self {
        Self(scopes.into_iter().fold(0, |acc, s| acc | s.bit()))
    }

    /// Whether the set grants `scope`, directly or through the write scope that implies it.
    pub fn grants(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0 || scope.implied_by().is_some_and(|w| self.0 & w.bit() != 0)
    }

    /// Whether every scope is in the set.
    pub fn is_full(self) -> bool {
        self == Self::full()
    }

    /// The scopes as granted (an implied read is not added), in [`Scope::ALL`] order.
    pub fn scopes(self) -> Vec<Scope> {
        Scope::ALL.iter().copied().filter(|s| self.0 & s.bit() != 0).collect()
    }

    /// Validates the `scopes` of a key-creation request; `None` (omitted) is every scope.
    ///
    /// # Errors
    /// [`ValidationErrors`] with `field` `scopes` naming each unknown scope, or for an empty list
    /// (a key that can do nothing is a mistake, not a request).
    pub fn parse_request(raw: Option<&[String]>) -> Result<Self, ValidationErrors> {
        let Some(raw) = raw else { return Ok(Self::full()) };
        let mut errors = ValidationErrors::default();
        let mut set = Self::empty();
        for name in raw {
            match name.parse::<Scope>() {
                Ok(s) => set.0 |= s.bit(),
                Err(e) => errors.0.push(FieldError::new("scopes", format!("{e}; see docs/access.md for the list"))),
            }
        }
        if raw.is_empty() {
            errors.0.push(FieldError::new("scopes", "give at least one scope, or omit `scopes` for full access"));
        }
        errors.into_result()?;
        Ok(set)
    }

    /// The stored names.
    pub fn names(self) -> Vec<&'static str> {
        self.scopes().into_iter().map(Scope::as_str).collect()
    }

    /// A set read back from storage; unknown names (from a newer version) are ignored, never
    /// widened into access.
    pub fn from_stored<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        Self::of(names.into_iter().filter_map(|n| n.parse().ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_implies_read_but_not_the_reverse() {
        let set = ScopeSet::of([Scope::MessagesWrite]);
        assert!(set.grants(Scope::MessagesRead));
        assert!(set.grants(Scope::MessagesWrite));
        assert!(!ScopeSet::of([Scope::MessagesRead]).grants(Scope::MessagesWrite));
        assert!(!set.grants(Scope::ChannelsRead));
    }

    #[test]
    fn names_round_trip() {
        for s in Scope::ALL.iter().copied() {
            assert_eq!(s.as_str().parse::<Scope>(), Ok(s));
        }
        assert_eq!(ScopeSet::from_stored(ScopeSet::full().names()), ScopeSet::full());
    }

    #[test]
    fn erasing_contacts_is_its_own_scope() {
        assert!(!ScopeSet::of([Scope::ContactsWrite]).grants(Scope::ContactsErase));
        assert!(!ScopeSet::of([Scope::ContactsErase]).grants(Scope::ContactsWrite));
        assert_eq!("contacts:erase".parse::<Scope>(), Ok(Scope::ContactsErase));
        assert!(ScopeSet::full().grants(Scope::ContactsErase));
    }

    #[test]
    fn implied_reads_are_not_listed() {
        assert_eq!(ScopeSet::of([Scope::UsersWrite]).names(), ["users:write"]);
    }

    #[test]
    fn omitted_means_full_access_and_unknown_names_are_refused() {
        assert!(ScopeSet::parse_request(None).map(ScopeSet::is_full).unwrap_or(false));
        let e = ScopeSet::parse_request(Some(&["messages:read".into(), "messages:delete".into()])).expect_err("bad");
        assert_eq!(e.0.len(), 1);
        assert_eq!(e.0[0].field, "scopes");
        assert!(ScopeSet::parse_request(Some(&[])).is_err());
    }
}
