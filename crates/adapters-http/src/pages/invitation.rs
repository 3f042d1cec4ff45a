//! `/invitations/{token}`: the one-time link wms e-mailed to an invited address (`docs/product/
//! invitations.md`). A person without a wms password chooses one here (the link is their proof of
//! the address); a person with one signs in as that account and accepts. The link alone never
//! signs anyone in and never changes a password. A used, voided, expired or made-up link is 410
//! and changes nothing; a different signed-in account is 403. The form is a pre-session form: a
//! post without its [`PreSessionToken`] is refused (403) before anything is looked at.

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, HttpResponseBuilder};
use domain::members::{AcceptInvitationError, InvitationView};
use domain::sessions::SessionSecret;
use domain::users::UserId;
use maud::{html, Markup};

use super::form::FormData;
use super::layout::{bare, field_error, invalid};
use super::login::wait_text;
use super::session::{session_cookie, PreSessionToken, CSRF_FIELD};
use super::PageError;
use crate::session_cookie::SESSION_COOKIE;
use crate::state::AppState;

/// Where the form's [`PreSessionToken`] cookie is set: every invitation's path, without the
/// link's secret.
const FORM_PATH: &str = "/invitations";

fn page(status: StatusCode, body: Markup) -> HttpResponse {
    answer(status).body(bare("Your invitation", body).into_string())
}

fn answer(status: StatusCode) -> HttpResponseBuilder {
    let mut res = HttpResponse::build(status);
    // The path holds a secret: no cache keeps it, and the pages' `Referrer-Policy: same-origin`
    // lets no Referer carry it to another site. (Not `no-referrer`: browsers then send the form's
    // post with `Origin: null`, which the pages refuse as a cross-site post.)
    res.insert_header(CacheControl(vec![CacheDirective::NoStore])).content_type("text/html; charset=utf-8");
    res
}

/// The invitation's form, with a fresh anti-forgery token.
fn form_page(
    req: &HttpRequest,
    state: &AppState,
    status: StatusCode,
    token: &str,
    view: &InvitationView,
    signed_in: bool,
    error: Option<&str>,
) -> HttpResponse {
    let csrf = PreSessionToken::for_form(req, state.auth.random.as_ref());
    answer(status)
        .cookie(csrf.cookie(&state.pages, FORM_PATH))
        .body(bare("Your invitation", form(token, csrf.value(), view, signed_in, error)).into_string())
}

fn invalid_link() -> HttpResponse {
    page(
        StatusCode::GONE,
        html! {
            h1 { "This invitation link does not work" }
            p.error-text role="alert" {
                "It was used already, was replaced by a newer invitation, has expired (links work for 7 days), "
                "or was copied incompletely. Ask an admin of the workspace to send you a new invitation."
            }
            p { a href="/login" { "Sign in" } }
        },
    )
}

/// Signed in as someone else: the sign-out button carries that session's token, like every
/// signed-in page's forms.
fn other_account(req: &HttpRequest) -> HttpResponse {
    let csrf = req.cookie(SESSION_COOKIE).and_then(|c| SessionSecret::parse(c.value())).map(|s| s.csrf_token());
    page(
        StatusCode::FORBIDDEN,
        html! {
            h1 { "This invitation is for another account" }
            p.error-text role="alert" {
                "You are signed in as someone else. Sign out, then open the link from the invitation e-mail again."
            }
            form method="post" action="/logout" {
                input type="hidden" name=(CSRF_FIELD) value=(csrf.unwrap_or_default());
                button type="submit" { "Sign out" }
            }
        },
    )
}

fn form(token: &str, csrf: &str, view: &InvitationView, signed_in: bool, error: Option<&str>) -> Markup {
    let workspace = if view.workspace_name.is_empty() { "a workspace" } else { view.workspace_name.as_str() };
    html! {
        h1 { "Join " (workspace) }
        @if !view.has_password {
            p.lead { "You were invited as " strong { (view.email) } ". Choose a password to sign in with from now on." }
        } @else if signed_in {
            p.lead { "You are signed in as " strong { (view.email) } ". Accept to join the workspace." }
        } @else {
            p.lead { "You were invited as " strong { (view.email) } ", which has a wms password. Sign in with it to accept." }
        }
        form.card method="post" action={ "/invitations/" (token) } novalidate {
            input type="hidden" name=(CSRF_FIELD) value=(csrf);
            @if !view.has_password || !signed_in {
                @let (label, autocomplete) = if view.has_password { ("Password", "current-password") } else { ("New password", "new-password") };
                div.field {
                    label for="password" { (label) }
                    input #password type="password" name="password" autocomplete=(autocomplete) minlength="8" required autofocus
                        aria-invalid=[invalid(error)] aria-describedby=[error.map(|_| "password-error")];
                    (field_error("password", error))
                }
            }
            button type="submit" {
                @if !view.has_password { "Set password and join" } @else { "Sign in and join" }
            }
        }
    }
}

/// The account signed in in this browser, if any.
async fn signed_in(req: &HttpRequest, state: &AppState) -> Result<Option<UserId>, PageError> {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else { return Ok(None) };
    Ok(state.pages.sessions.session(cookie.value()).await?.map(|(_, s)| s.user_id))
}

/// `GET /invitations/{token}`.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(
    req: HttpRequest,
    state: web::Data<AppState>,
    token: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let Some(view) = state.members.invitation(&token).await? else { return Ok(invalid_link()) };
    let me = signed_in(&req, &state).await?;
    // Another account signed in is refused only for an account with a password (the domain's
    // rule, `accept_invitation`): one without is proven by the link whoever is signed in here.
    if me.is_some_and(|u| u != view.user_id) && view.has_password {
        return Ok(other_account(&req));
    }
    Ok(form_page(&req, &state, StatusCode::OK, &token, &view, me == Some(view.user_id), None))
}

/// `POST /invitations/{token}`: accepts (choosing a password or signing in) and signs in.
///
/// # Errors
/// [`PageError::Csrf`] without the form's token; infrastructure failures.
pub async fn accept(
    req: HttpRequest,
    meta: crate::audit_context::RequestMeta,
    state: web::Data<AppState>,
    token: web::Path<String>,
    form_data: FormData,
) -> Result<HttpResponse, PageError> {
    // A used, expired or voided link is 410 whatever the form carries: the browser that just
    // accepted it has no form token left, and a replay must learn that the link is spent.
    if state.members.invitation(&token).await?.is_none() {
        return Ok(invalid_link());
    }
    PreSessionToken::check(&req, &form_data)?;
    let password = form_data.get("password").unwrap_or("");
    let me = signed_in(&req, &state).await?;
    let client = req.peer_addr().map(|a| a.ip());
    match state.members.accept_invitation(&token, password, me, client).await {
        Ok(accepted) => {
            let context = meta.anonymous();
            let done =
                state.pages.sessions.open(accepted.user_id, accepted.workspace_id, &context, "invitation").await?;
            let ttl = done.expires_at - state.auth.clock.now();
            Ok(HttpResponse::SeeOther()
                .insert_header((header::LOCATION, "/"))
                .cookie(session_cookie(&state.pages, &done.secret, ttl))
                .cookie(PreSessionToken::removal(&state.pages, FORM_PATH))
                .finish())
        }
        Err(AcceptInvitationError::Invalid) => Ok(invalid_link()),
        Err(AcceptInvitationError::OtherAccount) => Ok(other_account(&req)),
        Err(
            e @ (AcceptInvitationError::Password(_)
            | AcceptInvitationError::WrongPassword
            | AcceptInvitationError::Throttled { .. }),
        ) => {
            let Some(view) = state.members.invitation(&token).await? else { return Ok(invalid_link()) };
            let (status, message, retry) = match e {
                AcceptInvitationError::Password(v) => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    v.0.first().map_or_else(String::new, |f| format!("Choose another password: {}.", f.message)),
                    None,
                ),
                AcceptInvitationError::Throttled { retry_after_secs } => (
                    StatusCode::TOO_MANY_REQUESTS,
                    format!("Too many failed sign-ins. Wait {} before trying again.", wait_text(retry_after_secs)),
                    Some(retry_after_secs),
                ),
                _ => (StatusCode::UNAUTHORIZED, "That is not the password of this account.".to_owned(), None),
            };
            let mut res = form_page(&req, &state, status, &token, &view, me == Some(view.user_id), Some(&message));
            if let Some(secs) = retry {
                res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
            }
            Ok(res)
        }
        Err(AcceptInvitationError::Unknown(e)) => Err(e.into()),
    }
}
