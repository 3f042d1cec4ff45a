//! The labels use cases. The route's action has been allowed by the policy already.

use std::sync::Arc;

use serde_json::json;

use super::model::{label_color, label_name, Label, LabelChange, NewLabel, DEFAULT_LABEL_COLOR};
use super::ports::{CreateLabelError, DeleteLabelError, LabelRepository, UpdateLabelError};
use crate::audit::{AuditAction, AuditContext, AuditTarget};
use crate::common::error::{RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::workspace::WorkspaceId;

/// A new label as received.
#[derive(Debug, Clone, Default)]
pub struct LabelInput {
    /// Name.
    pub name: String,
    /// `#rrggbb`; a neutral grey without one.
    pub color: Option<String>,
}

/// A label change as received.
#[derive(Debug, Clone, Default)]
pub struct LabelChangeInput {
    /// New name.
    pub name: Option<String>,
    /// New colour.
    pub color: Option<String>,
}

/// The labels use cases.
#[derive(Clone)]
pub struct LabelsService {
    repo: Arc<dyn LabelRepository>,
}

impl std::fmt::Debug for LabelsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LabelsService").finish_non_exhaustive()
    }
}

impl LabelsService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn LabelRepository>) -> Self {
        Self { repo }
    }

    /// A page of the workspace's labels, oldest first.
    ///
    /// # Errors
    /// Infrastructure failures only.
    pub async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<Label>, RepoError> {
        self.repo.list(ws, page).await
    }

    /// Creates a label.
    ///
    /// # Errors
    /// [`CreateLabelError`]: invalid fields, or a name in use.
    pub async fn create(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        input: LabelInput,
    ) -> Result<Label, CreateLabelError> {
        let mut errors = ValidationErrors::default();
        let name = errors.check(label_name(&input.name));
        let color = match input.color.as_deref() {
            Some(c) => errors.check(label_color(c)),
            None => Some(DEFAULT_LABEL_COLOR.to_owned()),
        };
        let (Some(name), Some(color)) = (name, color) else {
            return Err(errors.into());
        };
        let entry = audit.entry(ws, AuditAction::LabelCreated, AuditTarget::label(None), json!({ "name": name }));
        self.repo.create(ws, &NewLabel { name, color }, &entry).await
    }

    /// Renames or recolours a label.
    ///
    /// # Errors
    /// [`UpdateLabelError`].
    pub async fn update(
        &self,
        ws: WorkspaceId,
        audit: &AuditContext,
        id: i64,
        input: LabelChangeInput,
    ) -> Result<Label, UpdateLabelError> {
        let mut errors = ValidationErrors::default();
        let name = input.name.as_deref().and_then(|n| errors.check(label_name(n)));
        let color = input.color.as_deref().and_then(|c| errors.check(label_color(c)));
        errors.clone().into_result()?;
        let change = LabelChange { name, color };
        if change == LabelChange::default() {
            return Err(ValidationErrors::one("body", "give at least one of name, color").into());
        }
        let fields: Vec<&str> = [("name", change.name.is_some()), ("color", change.color.is_some())]
            .iter()
            .filter(|f| f.1)
            .map(|f| f.0)
            .collect();
        let entry =
            audit.entry(ws, AuditAction::LabelUpdated, AuditTarget::label(Some(id)), json!({ "fields": fields }));
        self.repo.update(ws, id, &change, &entry).await
    }

    /// Deletes a label, taking it off every thread.
    ///
    /// # Errors
    /// [`DeleteLabelError`].
    pub async fn delete(&self, ws: WorkspaceId, audit: &AuditContext, id: i64) -> Result<(), DeleteLabelError> {
        let entry = audit.entry(ws, AuditAction::LabelDeleted, AuditTarget::label(Some(id)), json!({}));
        self.repo.delete(ws, id, &entry).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::ports::MockLabelRepository;

    #[tokio::test]
    async fn invalid_input_never_reaches_the_storage() {
        let service = LabelsService::new(Arc::new(MockLabelRepository::new()));
        let ws = WorkspaceId(1);
        let e =
            service.create(ws, &AuditContext::cli(), LabelInput { name: " ".into(), color: Some("red".into()) }).await;
        let Err(CreateLabelError::Invalid(v)) = e else { panic!("expected invalid") };
        let fields: Vec<&str> = v.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["name", "color"]);
        let e = service.update(ws, &AuditContext::cli(), 3, LabelChangeInput::default()).await;
        assert!(matches!(e, Err(UpdateLabelError::Invalid(v)) if v.0[0].field == "body"));
    }

    #[tokio::test]
    async fn a_label_without_colour_is_grey() {
        let mut repo = MockLabelRepository::new();
        repo.expect_create()
            .withf(|_, n, a| n.name == "VIP" && n.color == DEFAULT_LABEL_COLOR && a.action == AuditAction::LabelCreated)
            .returning(|_, n, _| {
                Ok(Label {
                    id: 1,
                    name: n.name.clone(),
                    color: n.color.clone(),
                    created_at: time::OffsetDateTime::UNIX_EPOCH,
                })
            });
        let service = LabelsService::new(Arc::new(repo));
        let label = service
            .create(WorkspaceId(1), &AuditContext::cli(), LabelInput { name: "VIP".into(), color: None })
            .await
            .expect("ok");
        assert_eq!(label.color, "#6b7280");
    }
}
