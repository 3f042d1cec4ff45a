//! Create, list, read, update and delete destinations.

use std::collections::BTreeMap;

use serde_json::json;

use super::{WebhookService, NOT_FOUND};
use crate::audit::{AuditAction, AuditContext};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::webhooks::controls::{self, DeliveryOrdering, DestinationControls, EventFilter};
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
    /// Caps, headers, filter and ordering; omitted ones take their defaults.
    pub controls: ControlsInput,
}

/// Raw controls of a destination; `None` leaves a member as it is (on creation: its default),
/// `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct ControlsInput {
    /// `rate_limit_per_second`.
    pub rate_limit_per_second: Option<Option<i64>>,
    /// `max_in_flight`.
    pub max_in_flight: Option<Option<i64>>,
    /// `headers` (null is the same as `{}`).
    pub headers: Option<BTreeMap<String, String>>,
    /// `filter`.
    pub filter: Option<Option<EventFilter>>,
    /// `ordering`.
    pub ordering: Option<String>,
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
    /// New controls.
    pub controls: ControlsInput,
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
        let checked = self.check_controls(ws, &input.controls, &mut errors).await?;
        let (Some(url), Some(platform), Some(events)) = (url, platform, events) else {
            return Err(CreateWebhookError::Invalid(errors));
        };
        errors.into_result()?;
        let controls = DestinationControls {
            rate_limit_per_second: checked.rate_limit_per_second.flatten(),
            max_in_flight: checked.max_in_flight.flatten(),
            headers: checked.headers.unwrap_or_default(),
            filter: checked.filter.flatten(),
            ordering: checked.ordering.unwrap_or_default(),
        };
        let secret = SigningSecret::generate(self.engine.random.as_ref());
        let id = self.repo.reserve_id().await?;
        let headers = crate::webhooks::headers::seal(self.engine.cipher.as_ref(), ws.0, id.0, &controls.headers);
        let controls = DestinationControls { headers: headers.names, ..controls };
        let new = NewDestination {
            id,
            url: url.as_str().to_owned(),
            platform: platform.as_str().to_owned(),
            events: events.names(),
            active: input.active.unwrap_or(true),
            secret_sealed: self.engine.cipher.seal(secret.expose().as_bytes(), &Self::secret_place(ws, id)),
            controls,
            headers_sealed: headers.sealed,
        };
        // The audit log is kept for a year and read with `audit:read` alone: origin and path only.
        let details =
            json!({ "url": crate::webhooks::public_url(&new.url), "events": new.events, "active": new.active });
        let entry = Self::entry(ws, audit, None, AuditAction::WebhookCreated, details);
        let created = self.repo.insert(ws, &new, &entry).await?;
        Ok((self.reveal(created), secret))
    }

    /// One page of destinations.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<WebhookDestination>, RepoError> {
        Ok(self.repo.list(ws, page).await?.map(|d| self.reveal(d)))
    }

    /// One destination.
    ///
    /// # Errors
    /// [`WebhookNotFound::NotFound`].
    pub async fn get(&self, ws: WorkspaceId, id: DestinationId) -> Result<WebhookDestination, WebhookNotFound> {
        self.repo.find(ws, id).await?.map(|d| self.reveal(d)).ok_or(WebhookNotFound::NotFound)
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
        let checked = self.check_controls(ws, &patch.controls, &mut errors).await?;
        let mut change = DestinationChange { active: patch.active, ..checked };
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
        if let Some(headers) = change.headers.take() {
            let sealed = crate::webhooks::headers::seal(self.engine.cipher.as_ref(), ws.0, id.0, &headers);
            change.headers = Some(sealed.names);
            change.headers_sealed = Some(sealed.sealed);
        }
        let now = self.engine.clock.now();
        let fields: Vec<&str> = [
            ("url", change.url.is_some()),
            ("platform", change.platform.is_some()),
            ("events", change.events.is_some()),
            ("active", change.active.is_some()),
            ("rate_limit_per_second", change.rate_limit_per_second.is_some()),
            ("max_in_flight", change.max_in_flight.is_some()),
            ("headers", change.headers.is_some()),
            ("filter", change.filter.is_some()),
            ("ordering", change.ordering.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect();
        let details = json!({ "fields": fields, "active": change.active });
        let entry = Self::entry(ws, audit, Some(id), AuditAction::WebhookUpdated, details);
        let updated = self.repo.update(ws, id, &change, now, &entry).await?;
        updated.map(|d| self.reveal(d)).ok_or(UpdateWebhookError::NotFound)
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

    /// Validates the controls in `input` (naming each bad one in `errors`); the valid ones as a
    /// change. A filter's channels must be the workspace's.
    ///
    /// # Errors
    /// Infrastructure failures only.
    async fn check_controls(
        &self,
        ws: WorkspaceId,
        input: &ControlsInput,
        errors: &mut ValidationErrors,
    ) -> Result<DestinationChange, RepoError> {
        let mut change = DestinationChange::default();
        if let Some(raw) = input.rate_limit_per_second {
            change.rate_limit_per_second = match raw {
                None => Some(None),
                Some(v) => errors.check(controls::rate_cap(v)).map(Some),
            };
        }
        if let Some(raw) = input.max_in_flight {
            change.max_in_flight = match raw {
                None => Some(None),
                Some(v) => errors.check(controls::in_flight_cap(v)).map(Some),
            };
        }
        if let Some(raw) = &input.headers {
            change.headers = errors.check(controls::static_headers(raw));
        }
        if let Some(raw) = &input.ordering {
            change.ordering = errors.check(DeliveryOrdering::parse(raw));
        }
        match input.filter.clone() {
            None => {}
            Some(None) => change.filter = Some(None),
            Some(Some(raw)) => match controls::event_filter(raw) {
                Err(e) => errors.0.extend(e.0),
                Ok(filter) => {
                    let ids = filter.as_ref().map(|f| f.channel_ids.clone()).unwrap_or_default();
                    let foreign =
                        if ids.is_empty() { Vec::new() } else { self.repo.foreign_channels(ws, &ids).await? };
                    if let Some(id) = foreign.first() {
                        errors.0.push(crate::common::error::FieldError::new(
                            "filter",
                            format!("channel {id} is not a channel of this workspace"),
                        ));
                    } else {
                        change.filter = Some(filter);
                    }
                }
            },
        }
        Ok(change)
    }
}
