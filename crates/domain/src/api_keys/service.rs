//! The key lifecycle (`docs/auth.md`, "Settings API for keys"): create, list, revoke, delete, for
//! workspace admins.

use std::sync::Arc;

use super::model::{ApiKey, ApiKeyId, ApiKeyName, CreatedApiKey, KeyExpiry};
use super::ports::{ApiKeyRepository, KeyRoll, NewApiKey, RolledKeys, StoreRollError};
use super::roll::{GraceSeconds, RollRefusal};
use crate::access::{authorize, Action, Caller, Denied, ScopeSet};
use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::auth::{NewToken, TokenKind};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::ports::{Clock, RandomSource};
use crate::users::UserId;
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

/// Why a key could not be revoked. A deletion fails in the same ways ([`DeleteApiKeyError`]), with
/// its own enum so that a signature says which operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RevokeApiKeyError {
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

/// Why a key could not be deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteApiKeyError {
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

/// An admin's request to roll a key.
#[derive(Debug, Clone, Default)]
pub struct RollApiKey {
    /// How long the old key keeps working, in seconds (0 to 604800); `None` when not given.
    pub grace_seconds: Option<i64>,
}

/// A rolled key: both records and the successor in full, which exists only here.
#[derive(Debug)]
pub struct RolledApiKey {
    /// The key rolled, with its revocation at the end of the grace and `rolled_to`.
    pub old: ApiKey,
    /// The successor's record.
    pub new: ApiKey,
    /// The successor in full, to show once.
    pub secret: NewToken,
}

/// Why a key could not be rolled.
#[derive(Debug, thiserror::Error)]
pub enum RollApiKeyError {
    /// Only workspace admins manage keys.
    #[error("only workspace admins can manage API keys")]
    Forbidden,
    /// A roll mints a key, which needs the `advanced` plan.
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
    /// The workspace has no such key.
    #[error("API key {0} not found")]
    NotFound(ApiKeyId),
    /// The key cannot be rolled as it stands (revoked, expired, rolled already).
    #[error(transparent)]
    Refused(RollRefusal),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The member behind `caller` (keys are managed by people: the policy refuses anyone else
/// before this is asked).
fn member_of(caller: &Caller) -> Option<UserId> {
    caller.member().map(|(user, _)| user)
}

/// The API keys use cases, over the keys' storage, the clock (expiry, revocation time) and the
/// randomness keys are minted from.
#[derive(Clone)]
pub struct ApiKeysService {
    repo: Arc<dyn ApiKeyRepository>,
    clock: Arc<dyn Clock>,
    random: Arc<dyn RandomSource>,
}

impl std::fmt::Debug for ApiKeysService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeysService").finish_non_exhaustive()
    }
}

impl ApiKeysService {
    /// The service over its ports.
    pub fn new(repo: Arc<dyn ApiKeyRepository>, clock: Arc<dyn Clock>, random: Arc<dyn RandomSource>) -> Self {
        Self { repo, clock, random }
    }

    /// Mints a key from the CSPRNG and stores only its digest and masked form. Below `advanced`
    /// creation fails; listing, revoking and deleting keep working so a downgraded workspace can still
    /// clean up.
    ///
    /// # Errors
    /// [`CreateApiKeyError`]; validation names every bad field.
    pub async fn create(
        &self,
        caller: &Caller,
        audit: &AuditContext,
        cmd: CreateApiKey,
    ) -> Result<CreatedApiKey, CreateApiKeyError> {
        match authorize(caller, Action::ApiKeysCreate) {
            Ok(()) => {}
            Err(Denied::PlanRequired { required, current }) => {
                return Err(CreateApiKeyError::PlanRequired { required, current })
            }
            Err(_) => return Err(CreateApiKeyError::Forbidden),
        }
        let created_by = member_of(caller).ok_or(CreateApiKeyError::Forbidden)?;
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
            // Absent, null or blank: the key never expires.
            None => Some(None),
            Some(raw) if raw.trim().is_empty() => Some(None),
            Some(raw) => errors.check(KeyExpiry::parse(raw, self.clock.now())).map(|e| Some(e.at())),
        };
        errors.clone().into_result()?;
        let (Some(name), Some(expires_at), Some(scopes)) = (name, expires_at, scopes) else {
            return Err(CreateApiKeyError::Invalid(errors));
        };
        let secret = NewToken::generate(TokenKind::ApiKey, self.random.as_ref());
        let new = NewApiKey {
            workspace_id: caller.workspace_id,
            name,
            digest: secret.digest(),
            masked_key: secret.masked(),
            expires_at,
            created_by,
            scopes,
        };
        let entry = audit.entry(
            caller.workspace_id,
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
        let key = self.repo.insert(&new, &entry).await?;
        Ok(CreatedApiKey { key, secret })
    }

    /// One page of the workspace's keys, newest first.
    ///
    /// # Errors
    /// [`ListApiKeysError`].
    pub async fn list(&self, caller: &Caller, page: PageRequest) -> Result<Page<ApiKey>, ListApiKeysError> {
        if authorize(caller, Action::ApiKeysRead).is_err() {
            return Err(ListApiKeysError::Forbidden);
        }
        Ok(self.repo.list(caller.workspace_id, page).await?)
    }

    /// Revokes a key: it stops working on every instance at once and its record stays, showing
    /// `revoked`. Revoking a revoked key changes nothing.
    ///
    /// # Errors
    /// [`RevokeApiKeyError`].
    pub async fn revoke(
        &self,
        caller: &Caller,
        audit: &AuditContext,
        id: ApiKeyId,
    ) -> Result<ApiKey, RevokeApiKeyError> {
        if authorize(caller, Action::ApiKeysWrite).is_err() {
            return Err(RevokeApiKeyError::Forbidden);
        }
        let entry = audit.entry(
            caller.workspace_id,
            AuditAction::ApiKeyRevoked,
            AuditTarget::api_key(Some(id.0)),
            serde_json::json!({}),
        );
        self.repo
            .revoke(caller.workspace_id, id, self.clock.now(), &entry)
            .await?
            .ok_or(RevokeApiKeyError::NotFound(id))
    }

    /// Rolls a key: a successor with the same name, scopes and expiry, shown in full once; the old
    /// key works until `grace_seconds` have passed, then is revoked (`rolled_to` names the
    /// successor). Only an active key that was not rolled before may be rolled
    /// ([`super::plan_roll`]).
    ///
    /// # Errors
    /// [`RollApiKeyError`]; nothing changes then.
    pub async fn roll(
        &self,
        caller: &Caller,
        audit: &AuditContext,
        id: ApiKeyId,
        cmd: RollApiKey,
    ) -> Result<RolledApiKey, RollApiKeyError> {
        match authorize(caller, Action::ApiKeysCreate) {
            Ok(()) => {}
            Err(Denied::PlanRequired { required, current }) => {
                return Err(RollApiKeyError::PlanRequired { required, current })
            }
            Err(_) => return Err(RollApiKeyError::Forbidden),
        }
        let created_by = member_of(caller).ok_or(RollApiKeyError::Forbidden)?;
        let grace = GraceSeconds::new(cmd.grace_seconds).map_err(|e| ValidationErrors(vec![e]))?;
        let secret = NewToken::generate(TokenKind::ApiKey, self.random.as_ref());
        let roll =
            KeyRoll { digest: secret.digest(), masked_key: secret.masked(), created_by, at: self.clock.now(), grace };
        let entry = audit.entry(
            caller.workspace_id,
            AuditAction::ApiKeyRolled,
            AuditTarget::api_key(Some(id.0)),
            serde_json::json!({ "grace_seconds": grace.seconds(), "new_masked_key": roll.masked_key }),
        );
        match self.repo.roll(caller.workspace_id, id, &roll, &entry).await {
            Ok(RolledKeys { old, new }) => Ok(RolledApiKey { old, new, secret }),
            Err(StoreRollError::NotFound) => Err(RollApiKeyError::NotFound(id)),
            Err(StoreRollError::Refused(r)) => Err(RollApiKeyError::Refused(r)),
            Err(StoreRollError::Unknown(e)) => Err(e.into()),
        }
    }

    /// Deletes a key and its record, whether it is active, expired or revoked.
    ///
    /// # Errors
    /// [`DeleteApiKeyError`].
    pub async fn delete(&self, caller: &Caller, audit: &AuditContext, id: ApiKeyId) -> Result<(), DeleteApiKeyError> {
        if authorize(caller, Action::ApiKeysWrite).is_err() {
            return Err(DeleteApiKeyError::Forbidden);
        }
        let entry = audit.entry(
            caller.workspace_id,
            AuditAction::ApiKeyDeleted,
            AuditTarget::api_key(Some(id.0)),
            serde_json::json!({}),
        );
        if self.repo.delete(caller.workspace_id, id, &entry).await? {
            Ok(())
        } else {
            Err(DeleteApiKeyError::NotFound(id))
        }
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
