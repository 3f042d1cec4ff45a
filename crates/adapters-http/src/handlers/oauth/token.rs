//! `POST /oauth/token`: the authorization code (with its PKCE verifier) or a refresh token for
//! an access token and a new refresh token.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::oauth::TokenRequest;
use serde_json::json;

use super::reply::{protocol_headers, OAuthReply};
use crate::audit_context::RequestMeta;
use crate::error::ApiError;
use crate::extract::RawBody;
use crate::state::AppState;

/// Reads the form: `application/x-www-form-urlencoded`, each parameter at most once (RFC 6749
/// section 3.2), unknown ones ignored.
///
/// # Errors
/// `invalid_request`.
pub fn parse(req: &HttpRequest, body: &[u8]) -> Result<TokenRequest, OAuthReply> {
    let form = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
    });
    if !form {
        return Err(OAuthReply::invalid_request("send the parameters as application/x-www-form-urlencoded"));
    }
    let mut out = TokenRequest::default();
    for (name, value) in form_urlencoded::parse(body) {
        let slot = match name.as_ref() {
            "grant_type" => &mut out.grant_type,
            "code" => &mut out.code,
            "redirect_uri" => &mut out.redirect_uri,
            "client_id" => &mut out.client_id,
            "code_verifier" => &mut out.code_verifier,
            "refresh_token" => &mut out.refresh_token,
            "resource" => &mut out.resource,
            "scope" => &mut out.scope,
            _ => continue,
        };
        if value.contains('\0') {
            return Err(OAuthReply::invalid_request(format!("{name} must not contain the NUL character")));
        }
        if slot.replace(value.into_owned()).is_some() {
            return Err(OAuthReply::invalid_request(format!("{name} is sent more than once")));
        }
    }
    Ok(out)
}

/// Answers a token request.
///
/// # Errors
/// The RFC 6749 refusals.
pub async fn token(
    req: HttpRequest,
    meta: RequestMeta,
    state: web::Data<AppState>,
    body: Result<RawBody, ApiError>,
) -> Result<HttpResponse, OAuthReply> {
    let RawBody(body) = body.map_err(OAuthReply::unreadable)?;
    let params = parse(&req, &body)?;
    let granted = state.oauth.token(&params, &meta.anonymous()).await?;
    let mut res = HttpResponse::Ok().json(json!({
        "access_token": granted.access_token,
        "token_type": "Bearer",
        "expires_in": granted.expires_in,
        "refresh_token": granted.refresh_token,
        "scope": granted.scope,
    }));
    protocol_headers(&mut res);
    Ok(res)
}
