//! `GET /settings/workspace/api-keys`

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::common::page::PageRequest;
use serde::Deserialize;

use super::view::{render, KeysView};
use crate::pages::session::Signed;
use crate::pages::PageError;
use crate::state::AppState;

/// `?cursor=&confirm=`
#[derive(Debug, Deserialize)]
pub struct KeysQuery {
    /// The next page.
    cursor: Option<String>,
    /// The dialog to show open.
    confirm: Option<String>,
}

/// The workspace's keys, masked.
///
/// # Errors
/// [`PageError::Forbidden`] for agents.
pub async fn show(s: Signed, state: web::Data<AppState>, q: web::Query<KeysQuery>) -> Result<HttpResponse, PageError> {
    let mut v = KeysView { confirm: q.confirm.clone(), ..KeysView::default() };
    load(&s, &state, q.cursor.as_deref(), &mut v).await?;
    Ok(render(&s, &v, state.auth.clock.now(), StatusCode::OK))
}

/// Fills the list of `v`.
///
/// # Errors
/// Infrastructure failures; a bad cursor starts from the first page.
pub async fn load(s: &Signed, state: &AppState, cursor: Option<&str>, v: &mut KeysView) -> Result<(), PageError> {
    let page = PageRequest::new(Some(100), cursor).or_else(|_| PageRequest::new(Some(100), None));
    let page = page.map_err(|_| PageError::BadRequest("invalid page".into()))?;
    let listed = state.api_keys.list(&s.caller, page).await.map_err(|e| match e {
        domain::api_keys::ListApiKeysError::Forbidden => PageError::Forbidden(e.to_string()),
        domain::api_keys::ListApiKeysError::Unknown(e) => e.into(),
    })?;
    v.keys = listed.data;
    v.next_cursor = listed.next_cursor;
    Ok(())
}
