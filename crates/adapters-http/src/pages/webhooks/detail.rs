//! `GET /settings/integrations/webhooks/{webhook_id}`

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use domain::webhooks::WebhookDestination;
use domain::workspace::WorkspaceId;
use serde::Deserialize;

use super::view::{detail_page, DetailView};
use super::{destination, page_error, workspace, ControlsForm, DestinationForm, PATH};
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// `?cursor=&confirm=&since=&until=`
#[derive(Debug, Deserialize)]
pub struct DetailQuery {
    /// The next page of the delivery log.
    cursor: Option<String>,
    /// The dialog to show open.
    confirm: Option<String>,
    /// The replay form's values as typed, shown again after a refusal.
    since: Option<String>,
    /// See `since`.
    until: Option<String>,
}

/// One destination: actions, secret, edit form and delivery log.
///
/// # Errors
/// [`PageError::NotFound`] for another workspace's destination.
pub async fn show(
    s: Signed,
    state: web::Data<AppState>,
    path: web::Path<(i64,)>,
    q: web::Query<DetailQuery>,
) -> Result<HttpResponse, PageError> {
    // Below the plan the list explains it.
    let Some(ws) = workspace(&s)? else {
        return Ok(HttpResponse::SeeOther().insert_header((actix_web::http::header::LOCATION, PATH)).finish());
    };
    let d = state.webhooks.get(ws, destination(path.0)).await.map_err(page_error)?.seen_by(&s.caller);
    let mut v = DetailView {
        form: form_of(&d),
        confirm: q.confirm.clone(),
        replay: (q.since.clone().unwrap_or_default(), q.until.clone().unwrap_or_default()),
        ..DetailView::default()
    };
    load_log(&state, ws, &d, q.cursor.as_deref(), &mut v).await?;
    Ok(detail_page(&s, &d, &v, StatusCode::OK))
}

/// The edit form's values of a destination.
pub fn form_of(d: &WebhookDestination) -> DestinationForm {
    DestinationForm {
        url: d.url.clone(),
        platform: d.platform.clone(),
        events: d.events.clone(),
        active: d.active,
        controls: ControlsForm::of(&d.controls),
    }
}

/// Fills the delivery log of `v`.
///
/// # Errors
/// Infrastructure failures; a bad cursor starts from the newest.
pub async fn load_log(
    state: &AppState,
    ws: WorkspaceId,
    d: &WebhookDestination,
    cursor: Option<&str>,
    v: &mut DetailView,
) -> Result<(), PageError> {
    let page = PageRequest::new(Some(25), cursor).or_else(|_| PageRequest::new(Some(25), None));
    let page = page.map_err(|_| PageError::BadRequest("bad page".into()))?;
    let log = state.webhooks.deliveries(ws, d.id, page).await.map_err(page_error)?;
    v.deliveries = log.data;
    v.next_cursor = log.next_cursor;
    // The page still shows when the figures cannot be read.
    v.stats = state.webhooks.stats(ws, d.id, None).await.ok();
    Ok(())
}
