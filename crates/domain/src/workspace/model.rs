//! Workspace entities and values.

use std::fmt;
use std::str::FromStr;

use time::OffsetDateTime;

use crate::common::error::FieldError;
use crate::common::text::bounded;

/// A workspace's database id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct WorkspaceId(pub i64);

impl fmt::Display for WorkspaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The plan tiers, low to high; the derived order is the tier order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanTier {
    /// No paid features.
    Free,
    /// The entry paid tier.
    Starter,
    /// Adds outbound webhooks.
    Growth,
    /// Adds the REST API and API keys (the Developer API).
    Advanced,
}

impl PlanTier {
    /// Every tier, low to high.
    pub const ALL: [PlanTier; 4] = [PlanTier::Free, PlanTier::Starter, PlanTier::Growth, PlanTier::Advanced];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanTier::Free => "free",
            PlanTier::Starter => "starter",
            PlanTier::Growth => "growth",
            PlanTier::Advanced => "advanced",
        }
    }

    /// Whether this tier includes what `required` includes.
    pub fn includes(self, required: PlanTier) -> bool {
        self >= required
    }
}

impl fmt::Display for PlanTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown plan name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown plan `{0}`; expected one of free, starter, growth, advanced")]
pub struct UnknownPlan(pub String);

impl FromStr for PlanTier {
    type Err = UnknownPlan;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PlanTier::ALL.into_iter().find(|p| p.as_str() == s).ok_or_else(|| UnknownPlan(s.to_owned()))
    }
}

/// A workspace's display name: 1..=100 characters, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceName(String);

impl WorkspaceName {
    /// Validates a name.
    ///
    /// # Errors
    /// When blank or longer than 100 characters.
    pub fn new(raw: &str) -> Result<Self, FieldError> {
        bounded("name", raw, 1, 100).map(Self)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A workspace's URL-safe unique handle: lowercase ASCII letters, digits and single dashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slug(String);

impl Slug {
    /// Derives a slug from a name (`"Acme Support!"` → `"acme-support"`); `"workspace"` when nothing usable is left.
    pub fn from_name(name: &WorkspaceName) -> Self {
        let mut out = String::new();
        for c in name.as_str().chars().flat_map(char::to_lowercase) {
            if c.is_ascii_alphanumeric() {
                out.push(c);
            } else if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            if out.len() >= 48 {
                break;
            }
        }
        let trimmed = out.trim_end_matches('-');
        Self(if trimmed.is_empty() { "workspace".to_owned() } else { trimmed.to_owned() })
    }

    /// The slug with a suffix, used when the plain slug is taken.
    pub fn with_suffix(&self, suffix: &str) -> Self {
        Self(format!("{}-{suffix}", self.0))
    }

    /// Wraps a slug read back from storage.
    pub fn from_stored(s: String) -> Self {
        Self(s)
    }

    /// The slug.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A workspace as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Its id.
    pub id: WorkspaceId,
    /// Display name.
    pub name: String,
    /// Unique handle.
    pub slug: String,
    /// Whether the workspace may be used at all.
    pub is_active: bool,
    /// Current plan tier.
    pub plan: PlanTier,
    /// When it was created.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_order_is_tier_order() {
        assert!(PlanTier::Advanced.includes(PlanTier::Growth));
        assert!(PlanTier::Growth.includes(PlanTier::Growth));
        assert!(!PlanTier::Starter.includes(PlanTier::Growth));
        assert!(!PlanTier::Free.includes(PlanTier::Starter));
    }

    #[test]
    fn plan_parses_only_exact_names() {
        assert_eq!("growth".parse::<PlanTier>(), Ok(PlanTier::Growth));
        assert!("Growth".parse::<PlanTier>().is_err());
        assert!("enterprise".parse::<PlanTier>().is_err());
    }

    #[test]
    fn slug_is_derived_from_name() -> Result<(), FieldError> {
        assert_eq!(Slug::from_name(&WorkspaceName::new("  Acme Support! ")?).as_str(), "acme-support");
        assert_eq!(Slug::from_name(&WorkspaceName::new("Ünïcode ✓ Shop")?).as_str(), "n-code-shop");
        assert_eq!(Slug::from_name(&WorkspaceName::new("!!!")?).as_str(), "workspace");
        Ok(())
    }
}
