//! The session cookie, who is signed in, and the anti-forgery (CSRF) checks of the pages.
//!
//! CSRF defence, in layers:
//! 1. `SameSite=Lax` on the session cookie: other sites' forms and scripts do not send it.
//! 2. [`super::guard`] refuses any state-changing request whose `Origin` is another site, or that
//!    the browser marks `Sec-Fetch-Site: cross-site`.
//! 3. Every state-changing form carries the session's synchronizer token
//!    ([`domain::sessions::SessionSecret::csrf_token`]), checked in constant time here
//!    ([`SessionForm`]); the JSON settings API wants it in `X-CSRF-Token` when authenticated by
//!    cookie ([`crate::session_cookie::csrf_header_ok`]). The pre-session forms, posted before a
//!    session exists (sign-in, accepting an invitation, both steps of a password reset), use a
//!    double-submit cookie instead ([`PreSessionToken`]).

use std::future::Future;
use std::pin::Pin;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::http::header::LOCATION;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, HttpResponse};
use domain::access::{authorize, Action, Caller};
use domain::audit::AuditContext;
use domain::common::ports::RandomSource;
use domain::sessions::{SessionSecret, SessionState};
use domain::users::UserId;
use domain::workspace::PlanTier;
use subtle::ConstantTimeEq;

use super::form::FormData;
use super::{PageError, PagesState};
use crate::audit_context::RequestMeta;
use crate::session_cookie::SESSION_COOKIE;
use crate::state::AppState;

/// The pre-session forms' double-submit cookie ([`PreSessionToken`]).
pub const PRE_SESSION_CSRF_COOKIE: &str = "wms_presession_csrf";
/// A one-line message for the next page (never a secret).
pub const FLASH_COOKIE: &str = "wms_flash";
/// The form field and header names of the token.
pub const CSRF_FIELD: &str = "csrf_token";

/// The session cookie: `HttpOnly` (scripts cannot read it), `SameSite=Lax`, `Secure` unless
/// configured off (plain-HTTP `wms dev`), for the whole site, ending with the session.
pub fn session_cookie(pages: &PagesState, secret: &SessionSecret, max_age: time::Duration) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, secret.expose().to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(pages.secure_cookies)
        .max_age(max_age)
        .finish()
}

/// A cookie that deletes `name`.
pub fn removal(pages: &PagesState, name: &'static str) -> Cookie<'static> {
    let mut c = Cookie::build(name, "")
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(pages.secure_cookies)
        .finish();
    c.make_removal();
    c
}

/// The anti-forgery token of a pre-session form (sign-in, accepting an invitation, asking for a
/// password reset and choosing the new password): no session exists yet to hold a synchronizer
/// token, so each rendering of the form sets a fresh random value both as a cookie for the form's
/// path and in the form; a post must bring both, equal. Another site can neither read nor set the
/// cookie (and `SameSite=Strict` keeps the browser from sending it with that site's requests), so
/// it cannot put the value in its form.
#[derive(Debug)]
pub struct PreSessionToken(String);

impl PreSessionToken {
    /// A fresh token for one rendering of a form.
    pub fn issue(random: &dyn RandomSource) -> Self {
        Self(SessionSecret::generate(random).expose().to_owned())
    }

    /// The token for a rendering of the form whose request is `req`: the one its cookie already
    /// holds (so the same form open in two tabs, or shown again after a mistake, keeps working
    /// in each: a new token would void the other tab's), else a fresh one. Either way the post
    /// must carry the cookie's value, which another site can neither read nor set.
    pub fn for_form(req: &HttpRequest, random: &dyn RandomSource) -> Self {
        match req.cookie(PRE_SESSION_CSRF_COOKIE).filter(|c| SessionSecret::parse(c.value()).is_some()) {
            Some(c) => Self(c.value().to_owned()),
            None => Self::issue(random),
        }
    }

    /// The value to embed in the form's [`CSRF_FIELD`].
    pub fn value(&self) -> &str {
        &self.0
    }

    /// The cookie for the form's `path` (`SameSite=Strict`: only this site's pages send it; one
    /// path per form, so that a sign-in page open in another tab keeps its own token).
    pub fn cookie(&self, pages: &PagesState, path: &'static str) -> Cookie<'static> {
        Self::build(pages, path, self.0.clone())
    }

    /// Clears the cookie of `path` once its form did its work. A browser removes a cookie only
    /// when the removal names the path it was set on; one sent for `/` leaves it in place.
    pub fn removal(pages: &PagesState, path: &'static str) -> Cookie<'static> {
        let mut c = Self::build(pages, path, String::new());
        c.make_removal();
        c
    }

    fn build(pages: &PagesState, path: &'static str, value: String) -> Cookie<'static> {
        Cookie::build(PRE_SESSION_CSRF_COOKIE, value)
            .path(path)
            .http_only(true)
            .same_site(SameSite::Strict)
            .secure(pages.secure_cookies)
            .finish()
    }

    /// Admits a posted pre-session form whose [`CSRF_FIELD`] equals the cookie, compared in
    /// constant time.
    ///
    /// # Errors
    /// [`PageError::Csrf`] without the cookie, without the field, or when they differ.
    pub fn check(req: &HttpRequest, form: &FormData) -> Result<(), PageError> {
        let presented = form.get(CSRF_FIELD).unwrap_or("");
        let cookie = req.cookie(PRE_SESSION_CSRF_COOKIE);
        if cookie.is_some_and(|c| !presented.is_empty() && tokens_match(c.value(), presented)) {
            Ok(())
        } else {
            Err(PageError::Csrf)
        }
    }
}

/// A message for the next page.
pub fn flash_cookie(pages: &PagesState, message: &str) -> Cookie<'static> {
    let value: String = form_urlencoded::byte_serialize(message.as_bytes()).collect();
    Cookie::build(FLASH_COOKIE, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(pages.secure_cookies)
        .max_age(time::Duration::minutes(1))
        .finish()
}

/// 303 to `location`, whose page shows `message` (after a change made by a form).
pub fn see_other_with_flash(pages: &PagesState, location: &str, message: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, location.to_owned()))
        .cookie(flash_cookie(pages, message))
        .finish()
}

/// The message left by the previous request, if any.
pub fn flash(req: &HttpRequest) -> Option<String> {
    let c = req.cookie(FLASH_COOKIE)?;
    let text: String = form_urlencoded::parse(format!("m={}", c.value()).as_bytes()).next()?.1.into_owned();
    (!text.is_empty()).then_some(text)
}

/// Whether two tokens are equal, in constant time.
pub fn tokens_match(a: &str, b: &str) -> bool {
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// A settings page's request: the signed-in member as the one [`Caller`] (the settings surface),
/// and what the page shows around it. Not a caller type of its own: the caller is
/// [`Signed::caller`], which the policy judges; the rest is the page's (names, the forms'
/// anti-forgery token, the flash message, the plan to explain).
#[derive(Debug, Clone)]
pub struct Signed {
    /// The member, with the current role and plan.
    pub caller: Caller,
    /// The signed-in user (the member behind [`Signed::caller`]).
    pub user_id: UserId,
    /// The workspace's name.
    pub workspace_name: String,
    /// The user's e-mail.
    pub user_email: String,
    /// How many workspaces the user may work in.
    pub workspace_count: usize,
    /// The session's anti-forgery token, for the forms of the page.
    pub csrf: String,
    /// A message from the previous request.
    pub flash: Option<String>,
    /// Set when the page's feature needs a higher plan than the workspace's: the page explains
    /// the plan instead of showing the feature ([`crate::access`]).
    pub plan_required: Option<PlanTier>,
}

impl Signed {
    /// The workspace's plan.
    pub fn plan(&self) -> PlanTier {
        self.caller.plan
    }

    /// The audit context of the member acting through the request of `meta`.
    pub fn audit(&self, meta: &RequestMeta) -> AuditContext {
        meta.context(self.caller.actor)
    }

    /// Whether the policy lets the member do `action` (to show or hide a control; the route
    /// itself is guarded by [`crate::access`]).
    pub fn may(&self, action: Action) -> bool {
        authorize(&self.caller, action).is_ok()
    }

    /// The lower plan that the policy names when it refuses `action` for the workspace's plan
    /// (the page explains it instead of showing the feature); `None` when the plan allows it.
    /// Pages ask this rather than comparing plans themselves: the plan rules live in the policy.
    pub fn plan_required_for(&self, action: Action) -> Option<PlanTier> {
        match authorize(&self.caller, action) {
            Err(domain::access::Denied::PlanRequired { required, .. }) => Some(required),
            _ => None,
        }
    }

    /// Like [`Signed::may`], but a feature that only the plan refuses still counts: its page
    /// explains the plan.
    pub fn may_see(&self, action: Action) -> bool {
        matches!(authorize(&self.caller, action), Ok(()) | Err(domain::access::Denied::PlanRequired { .. }))
    }
}

/// The pages' state.
///
/// # Errors
/// 500 when the application was built without it.
pub fn pages_state(req: &HttpRequest) -> Result<web::Data<AppState>, PageError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| PageError::Internal(anyhow::anyhow!("AppState is not registered")))
}

/// The local path to come back to after signing in: the page asked for; for a form's post (a
/// key's revocation when the session had ended, say), the page the form was on, as its
/// same-origin `Referer` names it, else home: signing in ends with a `GET`, which a form's
/// action path does not answer.
fn next_of(req: &HttpRequest) -> String {
    if req.method() != actix_web::http::Method::GET && req.method() != actix_web::http::Method::HEAD {
        return form_page_of(req).unwrap_or_else(|| "/".to_owned());
    }
    match req.query_string() {
        "" => req.path().to_owned(),
        q => format!("{}?{q}", req.path()),
    }
}

/// The path and query of the request's `Referer` when it is a page of this host.
fn form_page_of(req: &HttpRequest) -> Option<String> {
    let referer = req.headers().get(actix_web::http::header::REFERER)?.to_str().ok()?;
    let url = url::Url::parse(referer).ok()?;
    let info = req.connection_info();
    let authority = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str()?),
        None => url.host_str()?.to_owned(),
    };
    if !authority.eq_ignore_ascii_case(info.host()) {
        return None;
    }
    Some(match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    })
}

/// Resolves the session of a request.
///
/// # Errors
/// [`PageError::SignIn`] when signed out, [`PageError::ChooseWorkspace`] before a workspace is picked.
pub async fn signed(req: &HttpRequest) -> Result<Signed, PageError> {
    let state = pages_state(req)?;
    let cookie = req.cookie(SESSION_COOKIE);
    let sign_in = || PageError::SignIn { next: next_of(req) };
    let Some(cookie) = cookie else { return Err(sign_in()) };
    match state.pages.sessions.state(cookie.value()).await? {
        SessionState::SignedOut => Err(sign_in()),
        SessionState::ChoosingWorkspace { .. } => Err(PageError::ChooseWorkspace),
        SessionState::InWorkspace { session, caller, workspace_name, workspace_count } => {
            let csrf = SessionSecret::parse(cookie.value()).map(|s| s.csrf_token()).unwrap_or_default();
            Ok(Signed {
                caller,
                user_id: session.user_id,
                workspace_name,
                user_email: session.user_email,
                workspace_count,
                csrf,
                flash: flash(req),
                plan_required: None,
            })
        }
    }
}

impl FromRequest for Signed {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        // Guarded pages resolved the session already ([`crate::access`]).
        if let Some(s) = req.extensions().get::<Signed>().cloned() {
            return Box::pin(async move { Ok(s) });
        }
        let req = req.clone();
        Box::pin(async move { signed(&req).await })
    }
}

/// A state-changing form of a signed-in page, admitted only with the session's anti-forgery token.
#[derive(Debug, Clone)]
pub struct SessionForm(pub FormData);

impl FromRequest for SessionForm {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let form = FormData::from_request(req, payload);
        let secret = req.cookie(SESSION_COOKIE).and_then(|c| SessionSecret::parse(c.value()));
        Box::pin(async move {
            let form = form.await?;
            let presented = form.get(CSRF_FIELD).unwrap_or("");
            match secret {
                Some(secret) if secret.csrf_matches(presented) => Ok(SessionForm(form)),
                _ => Err(PageError::Csrf),
            }
        })
    }
}
