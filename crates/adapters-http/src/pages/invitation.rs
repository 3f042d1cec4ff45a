//! `/invitations/{token}`: the one-time link of a person added without a password
//! (`decisions.md`, "Members"). They choose a password and land signed in. The token in the path is
//! the secret (only its digest is stored), so the page asks for nothing else; a used, expired or
//! mistyped link gets a clear page and no form.

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::members::AcceptInvitationError;
use maud::{html, Markup};

use super::form::FormData;
use super::layout::{bare, field_error, invalid};
use super::session::session_cookie;
use super::{PageError, PagesState};
use crate::state::AppState;

/// The absolute link for an invitation token (on `http.public_url`, else the request's host).
pub fn url(pages: &PagesState, req: &HttpRequest, token: &str) -> String {
    let origin = match pages.public_url.as_deref() {
        Some(u) => u.trim_end_matches('/').to_owned(),
        None => {
            let info = req.connection_info();
            format!("{}://{}", info.scheme(), info.host())
        }
    };
    format!("{origin}/invitations/{token}")
}

fn page(status: StatusCode, body: Markup) -> HttpResponse {
    HttpResponse::build(status)
        // The path holds a secret: no cache keeps it, no Referer carries it.
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .content_type("text/html; charset=utf-8")
        .body(bare("Choose your password", body).into_string())
}

fn invalid_link() -> HttpResponse {
    page(
        StatusCode::GONE,
        html! {
            h1 { "This invitation link does not work" }
            p.error-text role="alert" {
                "It was used already, has expired (links work for 7 days), or was copied incompletely. "
                "Ask an admin of the workspace to add you again for a new link."
            }
            p { a href="/login" { "Sign in" } }
        },
    )
}

fn form(token: &str, error: Option<&str>) -> Markup {
    html! {
        h1 { "Choose your password" }
        p.lead { "You were added to a workspace on wms. Choose a password to sign in with from now on." }
        form.card method="post" action={ "/invitations/" (token) } novalidate {
            div.field {
                label for="password" { "New password" }
                input #password type="password" name="password" autocomplete="new-password" minlength="8" required autofocus
                    aria-invalid=[invalid(error)] aria-describedby=[error.map(|_| "password-error")];
                (field_error("password", error))
            }
            button type="submit" { "Set password and sign in" }
        }
    }
}

/// `GET /invitations/{token}`.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(state: web::Data<AppState>, token: web::Path<String>) -> Result<HttpResponse, PageError> {
    if !state.members.invitation_open(&token).await? {
        return Ok(invalid_link());
    }
    Ok(page(StatusCode::OK, form(&token, None)))
}

/// `POST /invitations/{token}`: sets the password, uses up the link, signs in.
///
/// # Errors
/// Infrastructure failures.
pub async fn accept(
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    token: web::Path<String>,
    form_data: FormData,
) -> Result<HttpResponse, PageError> {
    let password = form_data.get("password").unwrap_or("");
    match state.members.accept_invitation(&token, password).await {
        Ok(accepted) => {
            // Signed in by the link: recorded as a sign-in `via` the invitation.
            let context = meta.anonymous();
            let done =
                state.pages.sessions.open(accepted.user_id, accepted.workspace_id, &context, "invitation").await?;
            let ttl = done.expires_at - state.auth.clock.now();
            Ok(HttpResponse::SeeOther()
                .insert_header((header::LOCATION, "/"))
                .cookie(session_cookie(&state.pages, &done.secret, ttl))
                .finish())
        }
        Err(AcceptInvitationError::Invalid) => Ok(invalid_link()),
        Err(AcceptInvitationError::Password(v)) => {
            let message = v.0.first().map_or_else(String::new, |f| format!("Choose another password: {}.", f.message));
            Ok(page(StatusCode::UNPROCESSABLE_ENTITY, form(&token, Some(&message))))
        }
        Err(AcceptInvitationError::Unknown(e)) => Err(e.into()),
    }
}
