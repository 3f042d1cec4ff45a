//! `/password-reset`: ask for a link by e-mail (the sign-in page links here), and
//! `/password-reset/{token}`: choose the new password through the e-mailed link (1 hour, once).
//! Setting it signs the account out everywhere (`docs/product/password-reset.md`). Both forms are
//! pre-session forms: a post without its [`PreSessionToken`] is refused (403) and changes nothing.

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, HttpResponseBuilder};
use domain::accounts::{CompleteResetError, RequestResetError};
use maud::{html, Markup};

use super::form::FormData;
use super::layout::{bare, field_error, invalid};
use super::session::{flash_cookie, PreSessionToken, CSRF_FIELD};
use super::PageError;
use crate::state::AppState;

/// Where both forms' [`PreSessionToken`] cookie is set (without a link's secret).
const FORM_PATH: &str = "/password-reset";

fn page(status: StatusCode, body: Markup) -> HttpResponse {
    answer(status).body(bare("Reset your password", body).into_string())
}

fn answer(status: StatusCode) -> HttpResponseBuilder {
    let mut res = HttpResponse::build(status);
    // A token path: no cache keeps it, and the pages' `Referrer-Policy: same-origin` lets no
    // Referer carry it to another site (see `invitation.rs`).
    res.insert_header(CacheControl(vec![CacheDirective::NoStore])).content_type("text/html; charset=utf-8");
    res
}

/// A page with a form, given a fresh anti-forgery token to embed.
fn form_page(state: &AppState, status: StatusCode, form: impl FnOnce(&str) -> Markup) -> HttpResponse {
    let csrf = PreSessionToken::issue(state.auth.random.as_ref());
    answer(status)
        .cookie(csrf.cookie(&state.pages, FORM_PATH))
        .body(bare("Reset your password", form(csrf.value())).into_string())
}

fn ask_form(csrf: &str, email: &str, error: Option<&str>) -> Markup {
    html! {
        h1 { "Reset your password" }
        p.lead { "Enter the e-mail of your wms account. We will send you a link to choose a new password." }
        form.card method="post" action="/password-reset" novalidate {
            input type="hidden" name=(CSRF_FIELD) value=(csrf);
            div.field {
                label for="email" { "E-mail" }
                input #email type="email" name="email" value=(email) autocomplete="username" required autofocus
                    aria-invalid=[invalid(error)] aria-describedby=[error.map(|_| "email-error")];
                (field_error("email", error))
            }
            button type="submit" { "Send the link" }
        }
        p { a href="/login" { "Back to sign-in" } }
    }
}

/// `GET /password-reset`.
pub async fn ask(state: web::Data<AppState>) -> HttpResponse {
    form_page(&state, StatusCode::OK, |csrf| ask_form(csrf, "", None))
}

/// `POST /password-reset`: the same answer for every address.
///
/// # Errors
/// [`PageError::Csrf`] without the form's token; infrastructure failures.
pub async fn asked(req: HttpRequest, state: web::Data<AppState>, form: FormData) -> Result<HttpResponse, PageError> {
    PreSessionToken::check(&req, &form)?;
    let email = form.text("email");
    match state.password_resets.request(&email, req.peer_addr().map(|a| a.ip())).await {
        Ok(()) => Ok(page(
            StatusCode::OK,
            html! {
                h1 { "Check your e-mail" }
                p role="status" {
                    "If " strong { (email.trim()) } " belongs to a wms account with a password, we sent it a link to choose a new one. "
                    "The link works once, for 1 hour."
                }
                p { a href="/login" { "Back to sign-in" } }
            },
        )),
        Err(RequestResetError::Invalid(v)) => {
            let message = v.0.first().map(|f| format!("{}.", f.message));
            Ok(form_page(&state, StatusCode::UNPROCESSABLE_ENTITY, |csrf| ask_form(csrf, &email, message.as_deref())))
        }
        Err(RequestResetError::Throttled { retry_after_secs }) => {
            let mut res = page(
                StatusCode::TOO_MANY_REQUESTS,
                html! {
                    h1 { "Too many requests" }
                    p.error-text role="alert" { "Try again in " (retry_after_secs.div_ceil(60)) " minutes." }
                },
            );
            // As the API and the sign-in page answer it.
            res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(retry_after_secs));
            Ok(res)
        }
        Err(RequestResetError::Unknown(e)) => Err(e.into()),
    }
}

fn invalid_link() -> HttpResponse {
    page(
        StatusCode::GONE,
        html! {
            h1 { "This password reset link does not work" }
            p.error-text role="alert" {
                "It was used already, was replaced by a newer one, or has expired (links work for 1 hour). "
            }
            p { a href="/password-reset" { "Ask for a new link" } }
        },
    )
}

fn choose_form(csrf: &str, token: &str, email: &str, error: Option<&str>) -> Markup {
    html! {
        h1 { "Choose a new password" }
        p.lead { "For " strong { (email) } ". You will be signed out everywhere." }
        form.card method="post" action={ "/password-reset/" (token) } novalidate {
            input type="hidden" name=(CSRF_FIELD) value=(csrf);
            div.field {
                label for="password" { "New password" }
                input #password type="password" name="password" autocomplete="new-password" minlength="8" required autofocus
                    aria-invalid=[invalid(error)] aria-describedby=[error.map(|_| "password-error")];
                (field_error("password", error))
            }
            button type="submit" { "Set the new password" }
        }
    }
}

/// `GET /password-reset/{token}`.
///
/// # Errors
/// Infrastructure failures.
pub async fn show(state: web::Data<AppState>, token: web::Path<String>) -> Result<HttpResponse, PageError> {
    match state.password_resets.open(&token).await? {
        Some(email) => Ok(form_page(&state, StatusCode::OK, |csrf| choose_form(csrf, &token, &email, None))),
        None => Ok(invalid_link()),
    }
}

/// `POST /password-reset/{token}`: sets the password, then the sign-in page.
///
/// # Errors
/// [`PageError::Csrf`] without the form's token; infrastructure failures.
pub async fn choose(
    req: HttpRequest,
    state: web::Data<AppState>,
    token: web::Path<String>,
    form: FormData,
) -> Result<HttpResponse, PageError> {
    PreSessionToken::check(&req, &form)?;
    let password = form.get("password").unwrap_or("");
    match state.password_resets.complete(&token, password).await {
        Ok(()) => Ok(HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/login"))
            .cookie(flash_cookie(
                &state.pages,
                "Your password was changed and you were signed out everywhere. Sign in with the new one.",
            ))
            .cookie(PreSessionToken::removal(&state.pages, FORM_PATH))
            .finish()),
        Err(CompleteResetError::Invalid) => Ok(invalid_link()),
        Err(CompleteResetError::Password(v)) => {
            let Some(email) = state.password_resets.open(&token).await? else { return Ok(invalid_link()) };
            let message = v.0.first().map_or_else(String::new, |f| format!("Choose another password: {}.", f.message));
            Ok(form_page(&state, StatusCode::UNPROCESSABLE_ENTITY, |csrf| {
                choose_form(csrf, &token, &email, Some(&message))
            }))
        }
        Err(CompleteResetError::Unknown(e)) => Err(e.into()),
    }
}
