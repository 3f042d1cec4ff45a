//! `/oauth/authorize`: an MCP client sends the member here. Signed out, they sign in on the
//! usual page and come back; then they see which app asks for what in which workspace (the one
//! the `resource` parameter names) and allow or deny. A client or redirect URI that cannot be
//! trusted gets an error page and no redirect; every other refusal goes back to the client.
//!
//! The page is served outside the settings pages' scope: its Content-Security-Policy lets the
//! consent form lead to the app's redirect URI (`form-action` governs the redirect that follows
//! the form's POST), which the pages' policy (`form-action 'self'`) would block.

use actix_web::http::header::{self, CacheControl, CacheDirective, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::audit::{ActorType, AuditActor};
use domain::oauth::{AuthorizationRequest, AuthorizeError, ConsentError, ConsentView};
use domain::sessions::SessionSecret;
use maud::{html, Markup};

use super::super::form::FormData;
use super::super::layout::bare;
use super::super::session::CSRF_FIELD;
use super::super::PageError;
use crate::audit_context::RequestMeta;
use crate::handlers::assistant::origin_of;
use crate::handlers::oauth::issuer;
use crate::session_cookie::SESSION_COOKIE;
use crate::state::AppState;

/// The parameters carried from the query to the consent form and back.
const PARAMS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "scope",
    "state",
    "resource",
];

fn request_of(get: impl Fn(&str) -> Option<String>) -> AuthorizationRequest {
    AuthorizationRequest {
        response_type: get("response_type"),
        client_id: get("client_id"),
        redirect_uri: get("redirect_uri"),
        code_challenge: get("code_challenge"),
        code_challenge_method: get("code_challenge_method"),
        scope: get("scope"),
        state: get("state"),
        resource: get("resource"),
    }
}

/// The settings pages' policy, with the app's redirect origin allowed as a form target.
fn csp(redirect_uri: Option<&str>) -> String {
    let target = redirect_uri.and_then(form_target).map(|o| format!(" {o}")).unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         form-action 'self'{target}; frame-ancestors 'none'; base-uri 'none'"
    )
}

/// The source expression that lets the consent form lead to `redirect_uri`: its origin, or for an
/// IPv6 literal (`http://[::1]:8976/cb`, a native app's loopback, RFC 8252), which CSP's source
/// grammar cannot spell (browsers drop such a source, and the redirect with the code is blocked),
/// its scheme.
fn form_target(redirect_uri: &str) -> Option<String> {
    let url = url::Url::parse(redirect_uri.trim()).ok()?;
    match url.host()? {
        url::Host::Ipv6(_) => Some(format!("{}:", url.scheme())),
        _ => origin_of(redirect_uri),
    }
}

fn html_page(status: StatusCode, title: &str, body: Markup, redirect_uri: Option<&str>) -> HttpResponse {
    let mut res = HttpResponse::build(status)
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .content_type("text/html; charset=utf-8")
        .body(bare(title, body).into_string());
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&csp(redirect_uri)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    res
}

fn refusal_page(status: StatusCode, message: &str) -> HttpResponse {
    let body = html! {
        h1 { "This app cannot connect" }
        p.error-text role="alert" { (message) }
        p { "Nothing was shared with the app. Close this window and check how the app is set up, or ask its maker." }
    };
    html_page(status, "Connect an app", body, None)
}

fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_owned()))
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .finish()
}

/// The signed-in person and their session's anti-forgery token, or where to sign in.
async fn signed_in(req: &HttpRequest, state: &AppState) -> Result<(domain::users::UserId, SessionSecret), PageError> {
    let next = match req.query_string() {
        "" => req.path().to_owned(),
        q => format!("{}?{q}", req.path()),
    };
    let Some(cookie) = req.cookie(SESSION_COOKIE) else { return Err(PageError::SignIn { next }) };
    match state.pages.sessions.session(cookie.value()).await? {
        Some((secret, session)) => Ok((session.user_id, secret)),
        None => Err(PageError::SignIn { next }),
    }
}

fn consent_page(view: &ConsentView, csrf: &str, form: &AuthorizationRequest) -> HttpResponse {
    let v = &view.request;
    let values = [
        &form.response_type,
        &form.client_id,
        &Some(v.redirect_uri.clone()),
        &form.code_challenge,
        &form.code_challenge_method,
        &form.scope,
        &form.state,
        &form.resource,
    ];
    let host = url::Url::parse(&v.redirect_uri).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
    let body = html! {
        h1 { "Connect " (v.client.client_name) " to wms" }
        div.card {
            p.lead { strong { (v.client.client_name) } " asks to use the assistant of the workspace " strong { (view.workspace_name) } " as you." }
            dl {
                dt { "App" } dd #consent-client { (v.client.client_name) }
                dt { "Workspace" } dd #consent-workspace { (view.workspace_name) }
                dt { "Access" } dd #consent-scope { code { (view.scope) } ": read the workspace's channels, analytics, webhooks and the product documentation through the assistant's tools. It cannot send messages or change anything." }
                dt { "Returns to" } dd { (host) }
            }
            p.muted { "The app's access works until you revoke it under Connected apps in the settings." }
            form method="post" action="/oauth/authorize" {
                input type="hidden" name=(CSRF_FIELD) value=(csrf);
                @for (name, value) in PARAMS.iter().zip(values) {
                    @if let Some(value) = value {
                        input type="hidden" name=(name) value=(value);
                    }
                }
                button #consent-allow type="submit" name="decision" value="allow" { "Allow" }
                " "
                button.secondary #consent-deny type="submit" name="decision" value="deny" { "Deny" }
            }
        }
    };
    html_page(StatusCode::OK, "Connect an app", body, Some(&v.redirect_uri))
}

fn consent_refusal(e: ConsentError) -> Result<HttpResponse, PageError> {
    match e {
        ConsentError::Authorize(AuthorizeError::NoRedirect(why)) => Ok(refusal_page(StatusCode::BAD_REQUEST, &why)),
        ConsentError::Authorize(AuthorizeError::Redirect { location, .. }) => Ok(see_other(&location)),
        ConsentError::Authorize(AuthorizeError::Unknown(e)) | ConsentError::Unknown(e) => Err(e.into()),
        ConsentError::NotMember => Ok(refusal_page(
            StatusCode::FORBIDDEN,
            "Your account is not an active member of the workspace this app asks for. Sign in with another account, or ask an admin of that workspace to add you.",
        )),
        ConsentError::Denied(d) => Ok(refusal_page(StatusCode::FORBIDDEN, &d.to_string())),
    }
}

/// `GET /oauth/authorize`: the consent page.
///
/// # Errors
/// Infrastructure failures (a page).
pub async fn show(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, PageError> {
    let query: Vec<(String, String)> = form_urlencoded::parse(req.query_string().as_bytes()).into_owned().collect();
    let form = request_of(|name| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
    let base = issuer(&state);
    // The client and its redirect URI are checked before anyone signs in: an untrusted request
    // never reaches the sign-in page with a return path.
    if let Err(e) = state.oauth.check(&form, &base).await {
        return consent_refusal(ConsentError::Authorize(e));
    }
    let (user, secret) = match signed_in(&req, &state).await {
        Ok(signed) => signed,
        Err(e) => return Err(e),
    };
    match state.oauth.consent(&form, &base, user).await {
        Ok(view) => Ok(consent_page(&view, &secret.csrf_token(), &form)),
        Err(e) => consent_refusal(e),
    }
}

/// `POST /oauth/authorize`: the member's answer.
///
/// # Errors
/// [`PageError::Csrf`] without the session's token; infrastructure failures.
pub async fn decide(req: HttpRequest, state: web::Data<AppState>, body: FormData) -> Result<HttpResponse, PageError> {
    let (user, secret) = signed_in(&req, &state).await?;
    if !secret.csrf_matches(body.get(CSRF_FIELD).unwrap_or("")) {
        return Err(PageError::Csrf);
    }
    let form = request_of(|name| body.get(name).map(str::to_owned));
    let base = issuer(&state);
    let result = match body.get("decision") {
        Some("allow") => {
            let actor = AuditActor { kind: ActorType::User, id: Some(user.0), label: None };
            let ctx = RequestMeta::of(&req).context(actor);
            state.oauth.approve(&form, &base, user, &ctx).await
        }
        Some("deny") => state.oauth.deny(&form, &base).await.map_err(ConsentError::Authorize),
        _ => return Err(PageError::BadRequest("choose Allow or Deny".into())),
    };
    match result {
        Ok(location) => Ok(see_other(&location)),
        Err(e) => consent_refusal(e),
    }
}

#[cfg(test)]
mod tests {
    use super::csp;

    #[test]
    fn the_form_may_lead_to_the_redirect_uri_ipv6_loopback_included() {
        assert!(csp(Some("http://127.0.0.1:8976/cb")).contains("form-action 'self' http://127.0.0.1:8976;"));
        assert!(csp(Some("https://app.example.com/cb?x=1")).contains("form-action 'self' https://app.example.com;"));
        assert!(csp(Some("http://[::1]:8976/cb")).contains("form-action 'self' http:;"));
        assert!(csp(None).contains("form-action 'self';"));
    }
}
