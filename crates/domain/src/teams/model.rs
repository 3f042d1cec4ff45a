//! Team values.

use time::OffsetDateTime;

use crate::common::error::FieldError;
use crate::common::text::bounded;

/// The most members one team may have.
pub const MAX_TEAM_MEMBERS: usize = 500;

/// A team as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    /// Its id.
    pub id: i64,
    /// Its name, unique in the workspace.
    pub name: String,
    /// The user ids of its members, ascending.
    pub member_ids: Vec<i64>,
    /// How it hands out its threads.
    pub assignment: super::AssignmentPolicy,
    /// Creation time.
    pub created_at: OffsetDateTime,
}

/// A team's name: 1 to 100 characters, trimmed.
///
/// # Errors
/// A [`FieldError`] on `name`.
pub fn team_name(raw: &str) -> Result<String, FieldError> {
    bounded("name", raw, 1, 100)
}

/// Member ids: sorted, without duplicates, at most [`MAX_TEAM_MEMBERS`].
///
/// # Errors
/// A [`FieldError`] on `member_ids`.
pub fn member_ids(raw: &[i64]) -> Result<Vec<i64>, FieldError> {
    let mut ids = raw.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() > MAX_TEAM_MEMBERS {
        return Err(FieldError::new("member_ids", format!("at most {MAX_TEAM_MEMBERS} members per team")));
    }
    Ok(ids)
}

/// A validated new team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTeam {
    /// Name.
    pub name: String,
    /// Members' user ids.
    pub member_ids: Vec<i64>,
    /// Its assignment policy.
    pub assignment: super::AssignmentPolicy,
}

/// A validated change; `None` keeps a field, `member_ids` replaces the whole membership.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamChange {
    /// New name.
    pub name: Option<String>,
    /// New members.
    pub member_ids: Option<Vec<i64>>,
    /// New assignment policy.
    pub assignment: Option<super::AssignmentPolicy>,
}

/// Only members of the workspace are in its teams: `Err` has the ids of `named` that are not
/// among `members`, the workspace's members among them as its storage found them.
///
/// # Errors
/// The ids that are no member of the workspace.
pub fn admit_team_members(named: &[i64], members: &[i64]) -> Result<(), Vec<i64>> {
    let unknown: Vec<i64> = named.iter().copied().filter(|i| !members.contains(i)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_may_name_only_members_of_its_workspace() {
        assert_eq!(admit_team_members(&[2, 5], &[5, 2, 9]), Ok(()));
        assert_eq!(admit_team_members(&[], &[]), Ok(()));
        assert_eq!(admit_team_members(&[2, 3, 5, 7], &[5, 2]), Err(vec![3, 7]));
    }

    #[test]
    fn member_ids_are_sorted_and_deduplicated() {
        assert_eq!(member_ids(&[5, 2, 5]), Ok(vec![2, 5]));
        assert!(member_ids(&(0..=500).collect::<Vec<_>>()).is_err());
    }
}
