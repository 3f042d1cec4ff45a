//! `/login`: sign in with e-mail and password, then (for a member of several workspaces) pick
//! the workspace at `/login/workspace`.

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::auth::{LoginError, LoginPorts, LoginRequest};
use domain::sessions::{ChooseWorkspaceError, SessionSecret, SessionState};
use domain::workspace::WorkspaceId;
use maud::{html, Markup};
use serde::Deserialize;

use super::form::FormData;
use super::layout::{bare, field_error, invalid};
use super::session::{
    login_csrf_cookie, login_csrf_removal, session_cookie, tokens_match, CSRF_FIELD, LOGIN_CSRF_COOKIE,
};
use super::PageError;
use crate::auth::SESSION_COOKIE;
use crate::state::AppState;

/// Where to go after signing in when nothing else was asked for.
const HOME: &str = "/settings/workspace/api-keys";

/// `?next=`
#[derive(Debug, Deserialize)]
pub struct NextQuery {
    /// A local path to return to.
    next: Option<String>,
}

/// Only local paths: `next` must not send people to another site after signing in.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.starts_with("/\\") && !n.contains(['\r', '\n']) => {
            n.to_owned()
        }
        _ => HOME.to_owned(),
    }
}

#[derive(Default)]
struct LoginView {
    email: String,
    next: String,
    error: Option<String>,
    email_error: Option<String>,
    password_error: Option<String>,
}

fn login_form(v: &LoginView, token: &str) -> Markup {
    html! {
        h1 { "Sign in" }
        p.lead { "Manage your workspace's API keys, webhooks and analytics." }
        @if let Some(e) = &v.error {
            div.error-summary role="alert" { (e) }
        }
        form.card method="post" action="/login" novalidate {
            input type="hidden" name=(CSRF_FIELD) value=(token);
            input type="hidden" name="next" value=(v.next);
            div.field {
                label for="email" { "E-mail" }
                input #email type="email" name="email" value=(v.email) autocomplete="username" required autofocus
                    aria-invalid=[invalid(v.email_error.as_deref())]
                    aria-describedby=[v.email_error.as_ref().map(|_| "email-error")];
                (field_error("email", v.email_error.as_deref()))
            }
            div.field {
                label for="password" { "Password" }
                input #password type="password" name="password" autocomplete="current-password" required
                    aria-invalid=[invalid(v.password_error.as_deref())]
                    aria-describedby=[v.password_error.as_ref().map(|_| "password-error")];
                (field_error("password", v.password_error.as_deref()))
            }
            button type="submit" { "Sign in" }
        }
    }
}

fn render(state: &AppState, status: actix_web::http::StatusCode, v: &LoginView) -> HttpResponse {
    // A fresh double-submit token for every rendering of the form.
    let token = SessionSecret::generate(state.auth.random.as_ref()).expose().to_owned();
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .cookie(login_csrf_cookie(&state.pages, &token))
        .content_type("text/html; charset=utf-8")
        .body(bare("Sign in", login_form(v, &token)).into_string())
}

/// `GET /login`: the form, or straight on when already signed in.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(
    req: HttpRequest,
    state: web::Data<AppState>,
    q: web::Query<NextQuery>,
) -> Result<HttpResponse, PageError> {
    let next = safe_next(q.next.as_deref());
    if let Some(c) = req.cookie(SESSION_COOKIE) {
        match state.pages.sessions.state(c.value()).await? {
            SessionState::InWorkspace { .. } => return Ok(see_other(&next)),
            SessionState::ChoosingWorkspace { .. } => return Ok(see_other("/login/workspace")),
            SessionState::SignedOut => {}
        }
    }
    Ok(render(&state, actix_web::http::StatusCode::OK, &LoginView { next, ..LoginView::default() }))
}

/// `POST /login`
///
/// # Errors
/// [`PageError::Csrf`] without the form's token; infrastructure failures.
pub async fn submit(req: HttpRequest, state: web::Data<AppState>, form: FormData) -> Result<HttpResponse, PageError> {
    let cookie = req.cookie(LOGIN_CSRF_COOKIE);
    let presented = form.get(CSRF_FIELD).unwrap_or("");
    if !cookie.is_some_and(|c| !presented.is_empty() && tokens_match(c.value(), presented)) {
        return Err(PageError::Csrf);
    }
    let next = safe_next(form.get("next"));
    let email = form.text("email");
    let auth = &state.auth;
    let ports = LoginPorts {
        users: auth.users.as_ref(),
        credentials: auth.credentials.as_ref(),
        throttle: auth.login_throttle.as_ref(),
        hasher: auth.hasher.as_ref(),
        clock: auth.clock.as_ref(),
        random: auth.random.as_ref(),
    };
    let attempt = LoginRequest {
        email: email.clone(),
        password: form.get("password").unwrap_or("").to_owned(),
        workspace_id: None,
        // The connection's address, as the login API: forwarded-for headers are forgeable.
        client: req.peer_addr().map(|a| a.ip()),
    };
    let mut view = LoginView { email, next: next.clone(), ..LoginView::default() };
    let mut retry = None;
    let status = match state.pages.sessions.sign_in(ports, &auth.login, attempt).await {
        Ok(done) => {
            let target = if done.workspace_id.is_some() { next } else { "/login/workspace".to_owned() };
            let ttl = done.expires_at - auth.clock.now();
            return Ok(HttpResponse::SeeOther()
                .insert_header((header::LOCATION, target))
                .cookie(session_cookie(&state.pages, &done.secret, ttl))
                .cookie(login_csrf_removal(&state.pages))
                .finish());
        }
        Err(LoginError::Invalid(v)) => {
            for f in v.0 {
                match f.field.as_str() {
                    "password" => view.password_error = Some(format!("Enter your password ({}).", f.message)),
                    _ => view.email_error = Some(format!("Enter a valid e-mail address ({}).", f.message)),
                }
            }
            actix_web::http::StatusCode::UNPROCESSABLE_ENTITY
        }
        Err(LoginError::InvalidCredentials) => {
            view.error = Some("The e-mail or password is wrong.".into());
            actix_web::http::StatusCode::UNAUTHORIZED
        }
        Err(LoginError::Throttled { retry_after_secs }) => {
            retry = Some(retry_after_secs);
            view.error =
                Some(format!("Too many failed sign-ins. Wait {} before trying again.", wait_text(retry_after_secs)));
            actix_web::http::StatusCode::TOO_MANY_REQUESTS
        }
        Err(LoginError::NoWorkspace) => {
            view.error = Some("This account is not an active member of any workspace.".into());
            actix_web::http::StatusCode::FORBIDDEN
        }
        Err(LoginError::Unknown(e)) => return Err(e.into()),
    };
    let mut res = render(&state, status, &view);
    if let Some(secs) = retry {
        res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    Ok(res)
}

fn wait_text(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs} seconds"),
        _ => format!("{} minutes", secs.div_ceil(60)),
    }
}

fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location.to_owned())).finish()
}

/// `GET /login/workspace`: the workspaces of a member of several.
///
/// # Errors
/// Infrastructure failures.
pub async fn choose(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let Some(c) = req.cookie(SESSION_COOKIE) else { return Ok(see_other("/login")) };
    let choices = match state.pages.sessions.state(c.value()).await? {
        SessionState::SignedOut => return Ok(see_other("/login")),
        SessionState::InWorkspace { .. } => return Ok(see_other(HOME)),
        SessionState::ChoosingWorkspace { choices, .. } => choices,
    };
    let csrf = SessionSecret::parse(c.value()).map(|s| s.csrf_token()).unwrap_or_default();
    let body = html! {
        h1 { "Choose a workspace" }
        p.lead { "You are a member of several workspaces. A session works in one of them; sign in again to switch." }
        form.card method="post" action="/login/workspace" {
            input type="hidden" name=(CSRF_FIELD) value=(csrf);
            fieldset {
                legend { "Workspace" }
                @for (i, w) in choices.iter().enumerate() {
                    label.inline {
                        input type="radio" name="workspace_id" value=(w.id.0) required checked[i == 0];
                        span { strong { (w.name) } " · " span.muted { (w.plan.as_str()) " plan, " (w.role.as_str()) } }
                    }
                }
            }
            button type="submit" { "Continue" }
        }
        form method="post" action="/logout" {
            input type="hidden" name=(CSRF_FIELD) value=(csrf);
            button.link type="submit" { "Sign out" }
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(bare("Choose a workspace", body).into_string()))
}

/// `POST /login/workspace`
///
/// # Errors
/// [`PageError::Csrf`], infrastructure failures.
pub async fn chosen(req: HttpRequest, state: web::Data<AppState>, form: FormData) -> Result<HttpResponse, PageError> {
    let Some(c) = req.cookie(SESSION_COOKIE) else { return Ok(see_other("/login")) };
    let secret = SessionSecret::parse(c.value()).ok_or(PageError::Csrf)?;
    if !secret.csrf_matches(form.get(CSRF_FIELD).unwrap_or("")) {
        return Err(PageError::Csrf);
    }
    let ws = form.get("workspace_id").and_then(|v| v.trim().parse::<i64>().ok()).map(WorkspaceId);
    let Some(ws) = ws else { return Ok(see_other("/login/workspace")) };
    match state.pages.sessions.choose_workspace(c.value(), ws).await {
        Ok(()) => Ok(see_other(HOME)),
        Err(ChooseWorkspaceError::SignedOut) => Ok(see_other("/login")),
        Err(ChooseWorkspaceError::Invalid(v)) => {
            Err(PageError::Forbidden(v.0.first().map(|f| f.message.clone()).unwrap_or_default()))
        }
        Err(ChooseWorkspaceError::Unknown(e)) => Err(e.into()),
    }
}
