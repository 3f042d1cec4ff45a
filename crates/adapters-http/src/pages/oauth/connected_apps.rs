//! `/settings/account/connected-apps`: the apps the signed-in person connected over OAuth, in
//! every workspace, with when each was granted and last used; revoking one ends all its tokens.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::oauth::RevokeGrantError;
use maud::html;

use super::super::layout::{csrf, page, time, time_or};
use super::super::session::{see_other_with_flash, SessionForm, Signed};
use super::super::PageError;
use crate::audit_context::RequestMeta;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/settings/account/connected-apps";

/// `GET`: the list.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(s: Signed, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let grants = state.oauth.grants(s.user_id).await?;
    let body = html! {
        h1 { "Connected apps" }
        p.lead { "Apps such as Claude, ChatGPT or your IDE that you allowed to use the assistant as you. Revoke one to end its access at once; it can ask again later." }
        @if grants.is_empty() {
            p.empty #connected-apps-empty { "No app is connected. Add wms as an MCP server in your app to connect one (see the documentation: Connect an MCP client)." }
        } @else {
            table #connected-apps {
                thead { tr { th { "App" } th { "Workspace" } th { "Access" } th { "Connected" } th { "Last used" } th { span.visually-hidden { "Actions" } } } }
                tbody {
                    @for g in &grants {
                        tr data-grant=(g.id) {
                            td { (g.client_name) }
                            td { (g.workspace_name) }
                            td { code { (g.scope) } }
                            td { (time(g.created_at)) }
                            td { (time_or(g.last_used_at, "never")) }
                            td {
                                form method="post" action={ (PATH) "/" (g.id) "/revoke" } {
                                    (csrf(&s))
                                    button.danger type="submit" aria-label={ "Revoke " (g.client_name) } { "Revoke" }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(page("Connected apps", PATH, &s, body).into_string()))
}

/// `POST …/{grant_id}/revoke`
///
/// # Errors
/// 404 for a grant that is not the member's; infrastructure failures.
pub async fn revoke(
    req: HttpRequest,
    s: Signed,
    state: web::Data<AppState>,
    path: web::Path<(String,)>,
    _form: SessionForm,
) -> Result<HttpResponse, PageError> {
    let id = path.into_inner().0.parse::<i64>().map_err(|_| PageError::NotFound("no such connected app".into()))?;
    let ctx = s.audit(&RequestMeta::of(&req));
    match state.oauth.revoke(s.user_id, id, &ctx).await {
        Ok(()) => Ok(see_other_with_flash(&state.pages, PATH, "The app's access was revoked.")),
        Err(RevokeGrantError::NotFound) => Err(PageError::NotFound("no such connected app".into())),
        Err(RevokeGrantError::Unknown(e)) => Err(e.into()),
    }
}
