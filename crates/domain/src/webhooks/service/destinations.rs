//! Create, list, read, update and delete destinations.

use serde_json::json;

use super::{WebhookService, NOT_FOUND};
use crate::audit::{AuditAction, AuditContext};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::webhooks::event_type::EventList;
use crate::webhooks::model::{DestinationId, Platform, WebhookDestination};
use crate::webhooks::ports::{DestinationChange, NewDestination};
use crate::webhooks::signing::SigningSecret;
use crate::workspace::WorkspaceId;

/// Why a destination could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateWebhookError {
    /// Invalid fields, each named (a refused URL among them).
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a destination, or its delivery log, could not be read. Shared by
/// [`WebhookService::get`] and [`WebhookService::deliveries`]: both are reads of one destination
/// whose only failure of their own is that the workspace has no such destination.
#[derive(Debug, thiserror::Error)]
pub enum WebhookNotFound {
    /// No such destination in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a destination could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateWebhookError {
    /// No such destination in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// Invalid fields, each named.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a destination could not be deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteWebhookError {
    /// No such destination in this workspace.
    #[error("{}", NOT_FOUND)]
    NotFound,
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Raw input of a new destination.
#[derive(Debug, Clone, Default)]
pub struct DestinationInput {
    /// Absolute URL.
    pub url: String,
    /// Free label; `custom` when omitted.
    pub platform: Option<String>,
    /// Event names.
    pub events: Vec<String>,
    /// Default `true`.
    pub active: Option<bool>,
}

/// Raw partial update.
#[derive(Debug, Clone, Default)]
pub struct DestinationPatch {
    /// New URL.
    pub url: Option<String>,
    /// New label.
    pub platform: Option<String>,
    /// New event names.
    pub events: Option<Vec<String>>,
    /// Activate or pause.
    pub active: Option<bool>,
}

impl WebhookService {
    /// Creates a destination and returns it with its new secret.
    ///
    /// # Errors
    /// [`CreateWebhookError::Invalid`] naming every bad field.
    pub async fn create(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        input: DestinationInput,
    ) -> Result<(WebhookDestination, SigningSecret), CreateWebhookError> {
        let mut errors = ValidationErrors::default();
        let url = errors.check(self.check_url(&input.url).await);
        let platform = errors.check(Platform::new(input.platform.as_deref().unwrap_or(Platform::DEFAULT)));
        let events = match EventList::new(&input.events) {
            Ok(e) => Some(e),
            Err(e) => {
                errors.0.extend(e.0);
                None
            }
        };
        let (Some(url), Some(platform), Some(events)) = (url, platform, events) else {
            return Err(CreateWebhookError::Invalid(errors));
        };
        let secret = SigningSecret::generate(self.engine.random.as_ref());
        let id = self.repo.reserve_id().await?;
        let new = NewDestination {
            id,
            url: url.as_str().to_owned(),
            platform: platform.as_str().to_owned(),
            events: events.names(),
            active: input.active.unwrap_or(true),
            secret_sealed: self.engine.cipher.seal(secret.expose().as_bytes(), &Self::secret_place(ws, id)),
        };
        // The audit log is kept for a year and read with `audit:read` alone: origin and path only.
        let details =
            json!({ "url": crate::webhooks::public_url(&new.url), "events": new.events, "active": new.active });
        let entry = Self::entry(ws, audit, None, AuditAction::WebhookCreated, details);
        let created = self.repo.insert(ws, &new, &entry).await?;
        Ok((created, secret))
    }

    /// One page of destinations.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<WebhookDestination>, RepoError> {
        self.repo.list(ws, page).await
    }

    /// One destination.
    ///
    /// # Errors
    /// [`WebhookNotFound::NotFound`].
    pub async fn get(&self, ws: WorkspaceId, id: DestinationId) -> Result<WebhookDestination, WebhookNotFound> {
        self.repo.find(ws, id).await?.ok_or(WebhookNotFound::NotFound)
    }

    /// Applies a partial update.
    ///
    /// # Errors
    /// [`UpdateWebhookError::NotFound`], or [`UpdateWebhookError::Invalid`] naming every bad field.
    pub async fn update(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
        patch: DestinationPatch,
    ) -> Result<WebhookDestination, UpdateWebhookError> {
        let mut errors = ValidationErrors::default();
        let mut change = DestinationChange { active: patch.active, ..DestinationChange::default() };
        if let Some(raw) = &patch.url {
            change.url = errors.check(self.check_url(raw).await).map(|u| u.as_str().to_owned());
        }
        if let Some(raw) = &patch.platform {
            change.platform = errors.check(Platform::new(raw)).map(|p| p.as_str().to_owned());
        }
        if let Some(raw) = &patch.events {
            match EventList::new(raw) {
                Ok(e) => change.events = Some(e.names()),
                Err(e) => errors.0.extend(e.0),
            }
        }
        errors.into_result()?;
        let now = self.engine.clock.now();
        let fields: Vec<&str> = [
            ("url", change.url.is_some()),
            ("platform", change.platform.is_some()),
            ("events", change.events.is_some()),
            ("active", change.active.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect();
        let details = json!({ "fields": fields, "active": change.active });
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookUpdated, details);
        self.repo.update(ws, id, &change, now, &entry).await?.ok_or(UpdateWebhookError::NotFound)
    }

    /// Deletes a destination and its delivery log.
    ///
    /// # Errors
    /// [`DeleteWebhookError::NotFound`].
    pub async fn delete(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: DestinationId,
    ) -> Result<(), DeleteWebhookError> {
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookDeleted, json!({}));
        if self.repo.delete(ws, id, &entry).await? {
            Ok(())
        } else {
            Err(DeleteWebhookError::NotFound)
        }
    }
}
