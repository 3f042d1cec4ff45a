//! The key lifecycle of spec 3.1: create, list, revoke, delete, for workspace admins.

use super::model::{ApiKey, ApiKeyId, ApiKeyName, CreatedApiKey, KeyExpiry};
use super::ports::{ApiKeyRepository, NewApiKey};
use crate::access::{authorize, Action, Actor, Caller, Denied, ScopeSet, Surface};
use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::auth::{NewToken, TokenKind, WorkspaceMember};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::{Clock, RandomSource};
use crate::workspace::PlanTier;

/// The plan that includes the REST API and its keys (the policy's, re-exported for the pages).
pub const API_PLAN: PlanTier = crate::access::REST_API_PLAN;

/// An admin's request for a new key.
#[derive(Debug, Clone, Default)]
pub struct CreateApiKey {
    /// The label.
    pub name: String,
    /// RFC 3339 expiry; `None` for a key that never expires.
    pub expires_at: Option<String>,
    /// Scope names; `None` for a full-access key.
    pub scopes: Option<Vec<String>>,
}

/// Why a key could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateApiKeyError {
    /// Only workspace admins manage keys.
    #[error("only workspace admins can manage API keys")]
    Forbidden,
    /// API keys need the `advanced` plan.
    #[error("API keys need the {required} plan; the workspace is on {current}")]
    PlanRequired {
        /// The plan needed.
        required: PlanTier,
        /// The workspace's plan.
        current: PlanTier,
    },
    /// The input is invalid.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why keys could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListApiKeysError {
    /// Only workspace admins manage keys.
    #[error("only workspace admins can manage API keys")]
    Forbidden,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a key could not be revoked or deleted.
#[derive(Debug, thiserror::Error)]
pub enum ChangeApiKeyError {
    /// Only workspace admins manage keys.
    #[error("only workspace admins can manage API keys")]
    Forbidden,
    /// The workspace has no such key (another workspace's key is reported the same way).
    #[error("API key {0} not found")]
    NotFound(ApiKeyId),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The member as the access policy sees them (the settings surface: keys are managed there).
fn caller(actor: &WorkspaceMember) -> Caller {
    Caller {
        workspace_id: actor.workspace_id,
        plan: actor.plan,
        actor: Actor::Member { user_id: actor.user_id, role: actor.role },
        surface: Surface::Settings,
    }
}

/// Mints a key from the OS CSPRNG and stores only its digest and masked form. Below `advanced`
/// creation fails; listing, revoking and deleting keep working so a downgraded workspace can still
/// clean up.
///
/// # Errors
/// [`CreateApiKeyError`]; validation names every bad field.
pub async fn create_api_key(
    repo: &dyn ApiKeyRepository,
    clock: &dyn Clock,
    random: &dyn RandomSource,
    actor: &WorkspaceMember,
    audit: &AuditContext,
    cmd: CreateApiKey,
) -> Result<CreatedApiKey, CreateApiKeyError> {
    match authorize(&caller(actor), Action::ApiKeysCreate) {
        Ok(()) => {}
        Err(Denied::PlanRequired { required, current }) => {
            return Err(CreateApiKeyError::PlanRequired { required, current })
        }
        Err(_) => return Err(CreateApiKeyError::Forbidden),
    }
    let mut errors = ValidationErrors::default();
    let name = errors.check(ApiKeyName::new(&cmd.name));
    let scopes = match ScopeSet::parse_request(cmd.scopes.as_deref()) {
        Ok(s) => Some(s),
        Err(e) => {
            errors.0.extend(e.0);
            None
        }
    };
    let expires_at = match cmd.expires_at.as_deref() {
        None => Some(None),
        Some(raw) => errors.check(KeyExpiry::parse(raw, clock.now())).map(|e| Some(e.at())),
    };
    errors.clone().into_result()?;
    let (Some(name), Some(expires_at), Some(scopes)) = (name, expires_at, scopes) else {
        return Err(CreateApiKeyError::Invalid(errors));
    };
    let secret = NewToken::generate(TokenKind::ApiKey, random);
    let new = NewApiKey {
        workspace_id: actor.workspace_id,
        name,
        digest: secret.digest(),
        masked_key: secret.masked(),
        expires_at,
        created_by: actor.user_id,
        scopes,
    };
    let entry = audit.entry(
        actor.workspace_id,
        AuditAction::ApiKeyCreated,
        AuditTarget::api_key(None),
        serde_json::json!({
            "name": new.name.as_str(),
            "masked_key": new.masked_key,
            // A full-access key's scopes are all of them: not listed.
            "scopes": (!new.scopes.is_full()).then(|| new.scopes.names()),
            "full_access": new.scopes.is_full(),
        }),
    );
    let key = repo.insert(&new, &entry).await?;
    Ok(CreatedApiKey { key, secret })
}

/// One page of the workspace's keys, newest first.
///
/// # Errors
/// [`ListApiKeysError`].
pub async fn list_api_keys(
    repo: &dyn ApiKeyRepository,
    actor: &WorkspaceMember,
    page: PageRequest,
) -> Result<Page<ApiKey>, ListApiKeysError> {
    if authorize(&caller(actor), Action::ApiKeysRead).is_err() {
        return Err(ListApiKeysError::Forbidden);
    }
    Ok(repo.list(actor.workspace_id, page).await?)
}

/// Revokes a key: it stops working on every instance at once and its record stays, showing
/// `revoked` (spec 3.1). Revoking a revoked key changes nothing.
///
/// # Errors
/// [`ChangeApiKeyError`].
pub async fn revoke_api_key(
    repo: &dyn ApiKeyRepository,
    clock: &dyn Clock,
    actor: &WorkspaceMember,
    audit: &AuditContext,
    id: ApiKeyId,
) -> Result<ApiKey, ChangeApiKeyError> {
    if authorize(&caller(actor), Action::ApiKeysWrite).is_err() {
        return Err(ChangeApiKeyError::Forbidden);
    }
    let entry = audit.entry(
        actor.workspace_id,
        AuditAction::ApiKeyRevoked,
        AuditTarget::api_key(Some(id.0)),
        serde_json::json!({}),
    );
    repo.revoke(actor.workspace_id, id, clock.now(), &entry).await?.ok_or(ChangeApiKeyError::NotFound(id))
}

/// Deletes a key and its record (spec 3.1: from valid or revoked).
///
/// # Errors
/// [`ChangeApiKeyError`].
pub async fn delete_api_key(
    repo: &dyn ApiKeyRepository,
    actor: &WorkspaceMember,
    audit: &AuditContext,
    id: ApiKeyId,
) -> Result<(), ChangeApiKeyError> {
    if authorize(&caller(actor), Action::ApiKeysWrite).is_err() {
        return Err(ChangeApiKeyError::Forbidden);
    }
    let entry = audit.entry(
        actor.workspace_id,
        AuditAction::ApiKeyDeleted,
        AuditTarget::api_key(Some(id.0)),
        serde_json::json!({}),
    );
    if repo.delete(actor.workspace_id, id, &entry).await? {
        Ok(())
    } else {
        Err(ChangeApiKeyError::NotFound(id))
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use time::OffsetDateTime;

    use super::*;
    use crate::api_keys::{ApiKeyState, MockApiKeyRepository};
    use crate::auth::parse;
    use crate::common::ports::{MockClock, MockRandomSource};
    use crate::users::Role;
    use crate::users::UserId;
    use crate::workspace::WorkspaceId;

    const NOW: OffsetDateTime = datetime!(2026-11-20 12:00 UTC);

    fn admin(plan: PlanTier) -> WorkspaceMember {
        WorkspaceMember { workspace_id: WorkspaceId(7), plan, user_id: UserId(3), role: Role::Admin }
    }

    fn agent() -> WorkspaceMember {
        WorkspaceMember { role: Role::Agent, ..admin(PlanTier::Advanced) }
    }

    fn clock() -> MockClock {
        let mut c = MockClock::new();
        c.expect_now().return_const(NOW);
        c
    }

    fn random() -> MockRandomSource {
        let mut r = MockRandomSource::new();
        r.expect_fill().returning(|b| b.fill(0x5a));
        r
    }

    fn stored(new: &NewApiKey) -> ApiKey {
        ApiKey {
            id: ApiKeyId(1),
            workspace_id: new.workspace_id,
            name: new.name.as_str().to_owned(),
            masked_key: new.masked_key.clone(),
            created_by: Some(new.created_by),
            created_at: NOW,
            expires_at: new.expires_at,
            last_used_at: None,
            revoked_at: None,
            scopes: new.scopes,
        }
    }

    fn cmd(name: &str, expires_at: Option<&str>) -> CreateApiKey {
        CreateApiKey { name: name.into(), expires_at: expires_at.map(Into::into), scopes: None }
    }

    #[tokio::test]
    async fn create_stores_only_the_digest_and_mask_and_returns_the_key_once() {
        let mut repo = MockApiKeyRepository::new();
        repo.expect_insert()
            .withf(|n, e| {
                e.action == AuditAction::ApiKeyCreated
                    && !e.details.to_string().contains("wmsk_5")
                    && n.name.as_str() == "CI deploy"
                    && n.masked_key.starts_with("wmsk_…")
                    && n.expires_at == Some(datetime!(2026-12-01 0:00 UTC))
                    && n.workspace_id == WorkspaceId(7)
                    && n.created_by == UserId(3)
            })
            .times(1)
            .returning(|n, _| Ok(stored(n)));
        let created = create_api_key(
            &repo,
            &clock(),
            &random(),
            &admin(PlanTier::Advanced),
            &AuditContext::cli(),
            cmd(" CI deploy ", Some("2026-12-01T00:00:00Z")),
        )
        .await
        .expect("created");
        let presented = parse(&created.secret.secret).expect("well-formed key");
        assert_eq!(presented.kind, TokenKind::ApiKey);
        assert!(created.secret.secret.ends_with(&created.key.masked_key["wmsk_…".len()..]));
        assert_eq!(created.key.state(NOW), ApiKeyState::Active);
    }

    #[tokio::test]
    async fn create_below_advanced_is_plan_required() {
        for plan in [PlanTier::Free, PlanTier::Starter, PlanTier::Growth] {
            let result = create_api_key(
                &MockApiKeyRepository::new(),
                &clock(),
                &random(),
                &admin(plan),
                &AuditContext::cli(),
                cmd("ci", None),
            )
            .await;
            assert!(
                matches!(result, Err(CreateApiKeyError::PlanRequired { required: PlanTier::Advanced, current }) if current == plan)
            );
        }
    }

    #[tokio::test]
    async fn agents_cannot_manage_keys() {
        let repo = MockApiKeyRepository::new();
        assert!(matches!(
            create_api_key(&repo, &clock(), &random(), &agent(), &AuditContext::cli(), cmd("ci", None)).await,
            Err(CreateApiKeyError::Forbidden)
        ));
        assert!(matches!(
            list_api_keys(&repo, &agent(), PageRequest { limit: 25, after: None, filters: None }).await,
            Err(ListApiKeysError::Forbidden)
        ));
        assert!(matches!(
            revoke_api_key(&repo, &clock(), &agent(), &AuditContext::cli(), ApiKeyId(1)).await,
            Err(ChangeApiKeyError::Forbidden)
        ));
        assert!(matches!(
            delete_api_key(&repo, &agent(), &AuditContext::cli(), ApiKeyId(1)).await,
            Err(ChangeApiKeyError::Forbidden)
        ));
    }

    #[tokio::test]
    async fn every_bad_field_is_named_and_nothing_is_stored() {
        let result = create_api_key(
            &MockApiKeyRepository::new(),
            &clock(),
            &random(),
            &admin(PlanTier::Advanced),
            &AuditContext::cli(),
            cmd("  ", Some("2026-11-20T11:59:59Z")),
        )
        .await;
        let Err(CreateApiKeyError::Invalid(errors)) = result else { panic!("expected a validation failure") };
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "expires_at"]);
    }

    #[tokio::test]
    async fn revoke_stamps_the_clock_time_and_reports_unknown_keys() {
        let mut repo = MockApiKeyRepository::new();
        repo.expect_revoke()
            .withf(|ws, id, at, _| *ws == WorkspaceId(7) && *id == ApiKeyId(1) && *at == NOW)
            .returning(|_, _, at, _| {
                let new = NewApiKey {
                    workspace_id: WorkspaceId(7),
                    name: ApiKeyName::new("ci").expect("name"),
                    digest: crate::auth::digest("x"),
                    masked_key: "wmsk_…abcd".into(),
                    expires_at: None,
                    created_by: UserId(3),
                    scopes: ScopeSet::full(),
                };
                Ok(Some(ApiKey { revoked_at: Some(at), ..stored(&new) }))
            });
        repo.expect_revoke().withf(|_, id, _, _| *id == ApiKeyId(2)).returning(|_, _, _, _| Ok(None));
        let revoked = revoke_api_key(&repo, &clock(), &admin(PlanTier::Growth), &AuditContext::cli(), ApiKeyId(1))
            .await
            .expect("revoked");
        assert_eq!(revoked.state(NOW), ApiKeyState::Revoked);
        assert!(matches!(
            revoke_api_key(&repo, &clock(), &admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(2)).await,
            Err(ChangeApiKeyError::NotFound(ApiKeyId(2)))
        ));
    }

    #[tokio::test]
    async fn delete_reports_unknown_keys() {
        let mut repo = MockApiKeyRepository::new();
        repo.expect_delete()
            .withf(|_, id, e| *id == ApiKeyId(1) && e.action == AuditAction::ApiKeyDeleted)
            .returning(|_, _, _| Ok(true));
        repo.expect_delete().withf(|_, id, _| *id == ApiKeyId(2)).returning(|_, _, _| Ok(false));
        assert!(delete_api_key(&repo, &admin(PlanTier::Free), &AuditContext::cli(), ApiKeyId(1)).await.is_ok());
        assert!(matches!(
            delete_api_key(&repo, &admin(PlanTier::Advanced), &AuditContext::cli(), ApiKeyId(2)).await,
            Err(ChangeApiKeyError::NotFound(ApiKeyId(2)))
        ));
    }
}
