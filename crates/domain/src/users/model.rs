//! User values: e-mail, password, name, role.

use std::fmt;
use std::str::FromStr;

use crate::common::error::FieldError;
use crate::common::text::bounded;

/// A user's database id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct UserId(pub i64);

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An e-mail address, trimmed and lowercased: e-mails are unique regardless of case.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    /// Validates an address: one `@`, a non-empty local part, a domain of dot-separated labels,
    /// no spaces, at most 254 characters.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field`.
    pub fn new(field: &str, raw: &str) -> Result<Self, FieldError> {
        let e = raw.trim().to_lowercase();
        let invalid = || FieldError::new(field, "must be an e-mail address such as name@example.com");
        if e.len() > 254 || e.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid());
        }
        let (local, domain) = e.split_once('@').ok_or_else(invalid)?;
        let domain_ok = !domain.is_empty()
            && domain
                .split('.')
                .all(|l| !l.is_empty() && l.len() <= 63 && l.chars().all(|c| c.is_alphanumeric() || c == '-'));
        if local.is_empty() || local.len() > 64 || domain.contains('@') || !domain_ok {
            return Err(invalid());
        }
        Ok(Self(e))
    }

    /// The normalised address.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part before `@`.
    pub fn local_part(&self) -> &str {
        self.0.split('@').next().unwrap_or_default()
    }
}

/// A plain-text password on its way to the hasher. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// Minimum length, per NIST SP 800-63B.
    pub const MIN: usize = 8;
    /// Maximum length, to bound hashing cost.
    pub const MAX: usize = 256;

    /// Checks the length of a new password.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field`.
    pub fn new(field: &str, raw: &str) -> Result<Self, FieldError> {
        let n = raw.chars().count();
        if n < Self::MIN {
            return Err(FieldError::new(field, format!("must have at least {} characters", Self::MIN)));
        }
        if n > Self::MAX {
            return Err(FieldError::new(field, format!("must have at most {} characters", Self::MAX)));
        }
        Ok(Self(raw.to_owned()))
    }

    /// A password typed at sign-in: never rejected for its shape, so a wrong one is just wrong.
    pub fn attempt(raw: &str) -> Self {
        Self(raw.chars().take(Self::MAX).collect())
    }

    /// The secret itself, for the hasher only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(..)")
    }
}

/// A person's display name: 1..=100 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonName(String);

impl PersonName {
    /// Validates a name.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field`.
    pub fn new(field: &str, raw: &str) -> Result<Self, FieldError> {
        bounded(field, raw, 1, 100).map(Self)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A member's role in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Manages the workspace: keys, webhooks, members.
    Admin,
    /// Handles conversations.
    Agent,
}

impl Role {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Agent => "agent",
        }
    }
}

impl FromStr for Role {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "admin" => Ok(Role::Admin),
            "agent" => Ok(Role::Agent),
            _ => Err(FieldError::new("role", "must be `admin` or `agent`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_normalised() {
        assert_eq!(Email::new("email", "  Ann.Lee@Example.COM ").map(|e| e.0), Ok("ann.lee@example.com".into()));
    }

    #[test]
    fn bad_emails_are_refused() {
        for bad in ["", "ann", "@x.io", "ann@", "ann@@x.io", "an n@x.io", "ann@x..io", "ann@-x.io@y"] {
            assert!(Email::new("email", bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn password_debug_hides_the_secret() {
        let p = Password::attempt("hunter22hunter22");
        assert!(!format!("{p:?}").contains("hunter"));
    }

    #[test]
    fn password_length_is_checked() {
        assert!(Password::new("password", "1234567").is_err());
        assert!(Password::new("password", "12345678").is_ok());
        assert!(Password::new("password", &"x".repeat(257)).is_err());
    }
}
