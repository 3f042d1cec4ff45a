//! `GET /settings/integrations/webhooks`

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::webhooks::WebhookDestination;
use domain::workspace::WorkspaceId;

use super::view::list_page;
use super::{page_error, workspace, DestinationForm, FormErrors};
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// The workspace's destinations and the form for a new one; below `growth`, the plan needed.
///
/// # Errors
/// [`PageError::Forbidden`] for agents.
pub async fn show(s: Signed, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let all = match workspace(&s)? {
        Some(ws) => Some(all(&state, ws).await?),
        None => None,
    };
    let form = DestinationForm { active: true, ..DestinationForm::default() };
    Ok(list_page(&s, all.as_deref(), &form, &FormErrors::default(), StatusCode::OK))
}

/// Every destination of the workspace, oldest first.
///
/// # Errors
/// Infrastructure failures.
pub async fn all(state: &AppState, ws: WorkspaceId) -> Result<Vec<WebhookDestination>, PageError> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page =
            PageRequest::new(Some(100), cursor.as_deref()).map_err(|_| PageError::BadRequest("bad page".into()))?;
        let listed = state.webhooks.list(ws, page).await.map_err(page_error)?;
        out.extend(listed.data);
        match listed.next_cursor {
            // A workspace has a handful of destinations; the bound only stops a runaway loop.
            Some(c) if out.len() < 1000 => cursor = Some(c),
            _ => return Ok(out),
        }
    }
}
