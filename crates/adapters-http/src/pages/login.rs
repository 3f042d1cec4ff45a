//! `/login`: sign in with e-mail and password, then (for a member of several workspaces) pick
//! the workspace at `/login/workspace`.

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::auth::LoginError;
use domain::sessions::{ChooseWorkspaceError, SessionSecret, SessionState};
use domain::workspace::WorkspaceId;
use maud::{html, Markup};
use serde::Deserialize;

use super::form::FormData;
use super::layout::{bare, field_error, invalid};
use super::session::{session_cookie, PreSessionToken, CSRF_FIELD};
use super::PageError;
use crate::audit_context::login_request;
use crate::session_cookie::SESSION_COOKIE;
use crate::state::AppState;

/// The sign-in form's path, where its [`PreSessionToken`] cookie is set.
const FORM_PATH: &str = "/login";

/// Where to go after signing in when nothing else was asked for: the home page, which sends each
/// member to what their role may use (an admin to the settings, an agent to the analytics).
const HOME: &str = "/";

/// `?next=`
#[derive(Debug, Deserialize)]
pub struct NextQuery {
    /// A local path to return to.
    next: Option<String>,
}

/// Only paths of this site: `next` must not send people to another site after signing in.
fn safe_next(next: Option<&str>) -> String {
    next.filter(|n| is_same_origin_path(n)).map_or_else(|| HOME.to_owned(), str::to_owned)
}

/// Longest `next` kept; a longer one is no path a page of ours links to.
const MAX_NEXT: usize = 2048;

/// Whether `next` is a path on this site as a browser reads it in `Location`: one leading `/`,
/// and no control character, whitespace or backslash anywhere, as typed or percent-decoded.
/// Browsers drop tabs and newlines from URLs and read `\` as `/`, so `/\t/evil.example` and
/// `/\\evil.example` are `//evil.example`, another site (issue: `/%09/evil.example` passed);
/// decoded forms are checked too so that a later decoding step cannot produce either.
pub fn is_same_origin_path(next: &str) -> bool {
    let plain = |s: &str| {
        s.starts_with('/')
            && !s.starts_with("//")
            && !s.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    };
    if next.len() > MAX_NEXT || !plain(next) {
        return false;
    }
    // Twice: `%252F` decodes to `%2F`, then to `/`.
    let once = percent_encoding::percent_decode_str(next).decode_utf8_lossy();
    let twice = percent_encoding::percent_decode_str(&once).decode_utf8_lossy();
    plain(&once) && plain(&twice)
}

#[derive(Default)]
struct LoginView {
    email: String,
    next: String,
    /// A message the page before left (the password was changed, say).
    notice: Option<String>,
    error: Option<String>,
    email_error: Option<String>,
    password_error: Option<String>,
}

fn login_form(v: &LoginView, token: &str) -> Markup {
    html! {
        h1 { "Sign in" }
        p.lead { "Manage your workspace's API keys, webhooks and analytics." }
        @if let Some(msg) = &v.notice {
            div.flash role="status" { (msg) }
        }
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
        p { a href="/password-reset" { "Forgot your password?" } }
    }
}

fn render(req: &HttpRequest, state: &AppState, status: actix_web::http::StatusCode, v: &LoginView) -> HttpResponse {
    let token = PreSessionToken::for_form(req, state.auth.random.as_ref());
    HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .cookie(token.cookie(&state.pages, FORM_PATH))
        .content_type("text/html; charset=utf-8")
        .body(bare("Sign in", login_form(v, token.value())).into_string())
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
    let notice = super::session::flash(&req);
    Ok(render(&req, &state, actix_web::http::StatusCode::OK, &LoginView { next, notice, ..LoginView::default() }))
}

/// `POST /login`
///
/// # Errors
/// [`PageError::Csrf`] without the form's token; infrastructure failures.
pub async fn submit(req: HttpRequest, state: web::Data<AppState>, form: FormData) -> Result<HttpResponse, PageError> {
    PreSessionToken::check(&req, &form)?;
    let next = safe_next(form.get("next"));
    let email = form.text("email");
    let auth = &state.auth;
    let attempt = login_request(&req, email.clone(), form.get("password").unwrap_or("").to_owned(), None);
    let mut view = LoginView { email, next: next.clone(), ..LoginView::default() };
    let mut retry = None;
    let status = match state.pages.sessions.sign_in(auth.login_ports(), &auth.login, attempt).await {
        Ok(done) => {
            let target = if done.workspace_id.is_some() { next } else { chooser(&next) };
            let ttl = done.expires_at - auth.clock.now();
            return Ok(HttpResponse::SeeOther()
                .insert_header((header::LOCATION, target))
                .cookie(session_cookie(&state.pages, &done.secret, ttl))
                .cookie(PreSessionToken::removal(&state.pages, FORM_PATH))
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
    let mut res = render(&req, &state, status, &view);
    if let Some(secs) = retry {
        res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    Ok(res)
}

/// "12 seconds", "3 minutes": how long a throttled visitor waits, in words.
pub(super) fn wait_text(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs} seconds"),
        _ => format!("{} minutes", secs.div_ceil(60)),
    }
}

/// The workspace chooser, keeping where to go once a workspace is chosen (an OAuth consent page,
/// say) when that is not the default.
fn chooser(next: &str) -> String {
    if next == HOME {
        "/login/workspace".to_owned()
    } else {
        format!(
            "/login/workspace?next={}",
            percent_encoding::utf8_percent_encode(next, percent_encoding::NON_ALPHANUMERIC)
        )
    }
}

fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location.to_owned())).finish()
}

/// `GET /login/workspace`: the workspaces of a member of several.
///
/// # Errors
/// Infrastructure failures.
pub async fn choose(
    req: HttpRequest,
    state: web::Data<AppState>,
    q: web::Query<NextQuery>,
) -> Result<HttpResponse, PageError> {
    let next = safe_next(q.next.as_deref());
    let Some(c) = req.cookie(SESSION_COOKIE) else { return Ok(see_other("/login")) };
    let choices = match state.pages.sessions.state(c.value()).await? {
        SessionState::SignedOut => return Ok(see_other("/login")),
        SessionState::InWorkspace { .. } => return Ok(see_other(&next)),
        SessionState::ChoosingWorkspace { choices, .. } => choices,
    };
    let csrf = SessionSecret::parse(c.value()).map(|s| s.csrf_token()).unwrap_or_default();
    let body = html! {
        h1 { "Choose a workspace" }
        p.lead { "You are a member of several workspaces. A session works in one of them; sign in again to switch." }
        form.card method="post" action="/login/workspace" {
            input type="hidden" name=(CSRF_FIELD) value=(csrf);
            input type="hidden" name="next" value=(next);
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
    let next = safe_next(form.get("next"));
    let Some(ws) = ws else { return Ok(see_other(&chooser(&next))) };
    match state.pages.sessions.choose_workspace(c.value(), ws).await {
        Ok(()) => Ok(see_other(&next)),
        Err(ChooseWorkspaceError::SignedOut) => Ok(see_other("/login")),
        Err(ChooseWorkspaceError::Invalid(v)) => {
            Err(PageError::Forbidden(v.0.first().map(|f| f.message.clone()).unwrap_or_default()))
        }
        Err(ChooseWorkspaceError::Unknown(e)) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn local_paths_are_kept() {
        for ok in ["/", "/settings/workspace/webhooks", "/a?b=c&d=%2Fx#frag", "/caf%C3%A9"] {
            assert_eq!(safe_next(Some(ok)), ok, "{ok}");
        }
    }

    #[test]
    fn other_sites_and_tricks_go_home() {
        for bad in [
            "https://evil.example/",
            "//evil.example",
            "/%09/evil.example",
            "/\t/evil.example",
            "/\\evil.example",
            "/x\\y",
            "/%5Cevil.example",
            "/%2F/evil.example",
            "/%252F/evil.example",
            "/a\r\nSet-Cookie: x",
            "/%0d%0aSet-Cookie:x",
            "/ /evil",
            "/%00",
            "evil.example",
            "",
        ] {
            assert_eq!(safe_next(Some(bad)), HOME, "{bad:?}");
        }
        assert_eq!(safe_next(None), HOME);
        assert_eq!(safe_next(Some(&format!("/{}", "a".repeat(MAX_NEXT)))), HOME);
    }

    proptest! {
        /// Whatever comes in, what goes out is a path that a browser keeps on this site.
        #[test]
        fn next_is_always_a_path_of_this_site(raw in prop_oneof![
            any::<String>(),
            any::<String>().prop_map(|s| format!("/{s}")),
            // Mostly the characters the tricks are made of.
            "/[/\\\\%0-9a-fA-F\t\n .:@]{0,16}",
        ]) {
            let out = safe_next(Some(&raw));
            prop_assert!(out == raw || out == HOME);
            prop_assert!(out.starts_with('/') && !out.starts_with("//"));
            prop_assert!(!out.chars().any(|c| c.is_control() || c == '\\'));
            let decoded = percent_encoding::percent_decode_str(&out).decode_utf8_lossy().into_owned();
            prop_assert!(!decoded.starts_with("//") && !decoded.contains('\\'));
        }

        /// Plain local paths survive unchanged (round trip).
        #[test]
        fn plain_paths_round_trip(path in "(/[a-zA-Z0-9._~-]{1,20}){1,5}(\\?[a-z]{1,5}=[a-z0-9]{0,5})?") {
            prop_assert_eq!(safe_next(Some(&path)), path);
        }
    }
}
