//! The teams use cases. The route's action has been allowed by the policy already.

use std::sync::Arc;

use super::assignment::AssignmentPolicy;
use super::model::{member_ids, team_name, NewTeam, Team, TeamChange};
use super::ports::{CreateTeamError, TeamLookupError, TeamRepository, UpdateTeamError};
use serde_json::json;

use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// A new team as received.
#[derive(Debug, Clone, Default)]
pub struct TeamInput {
    /// Name.
    pub name: String,
    /// Members' user ids (none without).
    pub member_ids: Vec<i64>,
    /// The assignment policy, `mode` and `capacity` (without: `manual`, no capacity).
    pub assignment: Option<(String, Option<i64>)>,
}

/// A team change as received.
#[derive(Debug, Clone, Default)]
pub struct TeamChangeInput {
    /// New name.
    pub name: Option<String>,
    /// The new members (replacing the old).
    pub member_ids: Option<Vec<i64>>,
    /// The new assignment policy: `mode` and `capacity`.
    pub assignment: Option<(String, Option<i64>)>,
}

/// The teams use cases.
#[derive(Clone)]
pub struct TeamsService {
    repo: Arc<dyn TeamRepository>,
}

impl std::fmt::Debug for TeamsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamsService").finish_non_exhaustive()
    }
}

impl TeamsService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn TeamRepository>) -> Self {
        Self { repo }
    }

    /// A page of the workspace's teams, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<Team>, RepoError> {
        self.repo.list(ws, page).await
    }

    /// One team.
    ///
    /// # Errors
    /// [`TeamLookupError`].
    pub async fn get(&self, ws: WorkspaceId, id: i64) -> Result<Team, TeamLookupError> {
        self.repo.find(ws, id).await?.ok_or(TeamLookupError::NotFound(id))
    }

    /// Creates a team of members of the workspace.
    ///
    /// # Errors
    /// [`CreateTeamError`].
    pub async fn create(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        input: TeamInput,
    ) -> Result<Team, CreateTeamError> {
        let mut errors = ValidationErrors::default();
        let name = errors.check(team_name(&input.name));
        let member_ids = errors.check(member_ids(&input.member_ids));
        let assignment = match &input.assignment {
            None => Some(AssignmentPolicy::default()),
            Some((mode, capacity)) => match AssignmentPolicy::new(mode, *capacity) {
                Ok(p) => Some(p),
                Err(e) => {
                    errors.0.extend(e.0);
                    None
                }
            },
        };
        let (Some(name), Some(member_ids), Some(assignment)) = (name, member_ids, assignment) else {
            return Err(errors.into());
        };
        let mut details = json!({ "name": name, "member_ids": member_ids });
        // The policy when one was asked for (the default is the one every team starts with).
        if input.assignment.is_some() {
            details["assignment"] = json!({"mode": assignment.mode.as_str(), "capacity": assignment.capacity});
        }
        let entry = audit.entry(ws, AuditAction::TeamCreated, AuditTarget::team(None), details);
        self.repo.create(ws, &NewTeam { name, member_ids, assignment }, &entry).await
    }

    /// Renames a team or replaces its members.
    ///
    /// # Errors
    /// [`UpdateTeamError`].
    pub async fn update(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: i64,
        input: TeamChangeInput,
    ) -> Result<Team, UpdateTeamError> {
        let mut errors = ValidationErrors::default();
        let name = input.name.as_deref().and_then(|n| errors.check(team_name(n)));
        let member_ids = input.member_ids.as_deref().and_then(|m| errors.check(member_ids(m)));
        let assignment = match &input.assignment {
            None => None,
            Some((mode, capacity)) => match AssignmentPolicy::new(mode, *capacity) {
                Ok(p) => Some(p),
                Err(e) => {
                    errors.0.extend(e.0);
                    None
                }
            },
        };
        errors.clone().into_result()?;
        let change = TeamChange { name, member_ids, assignment };
        if change == TeamChange::default() {
            return Err(ValidationErrors::one("body", "give at least one of name, member_ids, assignment").into());
        }
        let fields: Vec<&str> = [
            ("name", change.name.is_some()),
            ("member_ids", change.member_ids.is_some()),
            ("assignment", change.assignment.is_some()),
        ]
        .iter()
        .filter(|f| f.1)
        .map(|f| f.0)
        .collect();
        let mut details = json!({ "fields": fields });
        if let Some(p) = change.assignment {
            // The policy as set: who changed how threads are handed out is in the audit log.
            details["assignment"] = json!({ "mode": p.mode.as_str(), "capacity": p.capacity });
        }
        let entry = audit.entry(ws, AuditAction::TeamUpdated, AuditTarget::team(Some(id)), details);
        self.repo.update(ws, id, &change, &entry).await
    }

    /// Deletes a team; its threads become unassigned.
    ///
    /// # Errors
    /// [`TeamLookupError`].
    pub async fn delete(&self, ws: WorkspaceId, audit: &AuditContext, id: i64) -> Result<(), TeamLookupError> {
        let entry = audit.entry(ws, AuditAction::TeamDeleted, AuditTarget::team(Some(id)), json!({}));
        self.repo.delete(ws, id, &entry).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::teams::ports::MockTeamRepository;

    #[tokio::test]
    async fn members_are_deduplicated_before_storage() {
        let mut repo = MockTeamRepository::new();
        repo.expect_create()
            .withf(|_, n, a| {
                n.name == "Tier 2"
                    && n.member_ids == [3, 9]
                    && a.action == AuditAction::TeamCreated
                    && a.target == Some(AuditTarget::team(None))
            })
            .returning(|_, n, _| {
                Ok(Team {
                    id: 1,
                    name: n.name.clone(),
                    member_ids: n.member_ids.clone(),
                    assignment: AssignmentPolicy::default(),
                    created_at: time::OffsetDateTime::UNIX_EPOCH,
                })
            });
        let service = TeamsService::new(Arc::new(repo));
        let team = service
            .create(
                WorkspaceId(1),
                &AuditContext::cli(),
                TeamInput { name: " Tier 2 ".into(), member_ids: vec![9, 3, 9], assignment: None },
            )
            .await
            .expect("created");
        assert_eq!(team.member_ids, [3, 9]);
    }

    #[tokio::test]
    async fn a_policy_change_is_validated_and_audited_with_the_policy() {
        let service = TeamsService::new(Arc::new(MockTeamRepository::new()));
        let input = TeamChangeInput { assignment: Some(("balanced".into(), Some(0))), ..Default::default() };
        let e = service.update(WorkspaceId(1), &AuditContext::cli(), 2, input).await;
        assert!(matches!(e, Err(UpdateTeamError::Invalid(v)) if v.0[0].field == "assignment.capacity"));

        let mut repo = MockTeamRepository::new();
        repo.expect_update()
            .withf(|_, _, c, a| {
                c.assignment
                    == Some(AssignmentPolicy { mode: crate::teams::AssignmentMode::Balanced, capacity: Some(5) })
                    && a.details["assignment"] == json!({"mode": "balanced", "capacity": 5})
            })
            .returning(|_, id, _, _| Err(UpdateTeamError::NotFound(id)));
        let input = TeamChangeInput { assignment: Some(("balanced".into(), Some(5))), ..Default::default() };
        let e = TeamsService::new(Arc::new(repo)).update(WorkspaceId(1), &AuditContext::cli(), 2, input).await;
        assert!(matches!(e, Err(UpdateTeamError::NotFound(2))));
    }

    #[tokio::test]
    async fn an_empty_change_is_refused() {
        let service = TeamsService::new(Arc::new(MockTeamRepository::new()));
        let e = service.update(WorkspaceId(1), &AuditContext::cli(), 2, TeamChangeInput::default()).await;
        assert!(matches!(e, Err(UpdateTeamError::Invalid(v)) if v.0[0].field == "body"));
    }
}
