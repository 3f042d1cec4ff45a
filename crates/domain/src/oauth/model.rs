//! The values of wms as an OAuth 2.1 authorization server for MCP clients: client metadata
//! (RFC 7591), redirect URIs, the one scope, the MCP resource (RFC 8707), PKCE S256 and the
//! error codes of RFC 6749 / 7591.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use time::Duration;

use crate::workspace::WorkspaceId;

/// The one scope an app can be granted: the member's use of the assistant.
pub const APP_SCOPE: &str = "assistant:read";
/// How long an authorization code can be exchanged.
pub const CODE_TTL: Duration = Duration::seconds(60);
/// How long an access token works (`expires_in` of the token response).
pub const ACCESS_TTL: Duration = Duration::seconds(3600);
/// How long a refresh token can be used (each refresh issues a new one).
pub const REFRESH_TTL: Duration = Duration::days(30);
/// Most redirect URIs one client registers.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Longest redirect URI kept.
const MAX_URI_LEN: usize = 2000;
/// Longest client name kept.
const MAX_NAME_CHARS: usize = 100;
/// The name shown for an app that registered none.
pub const UNNAMED_CLIENT: &str = "Unnamed app";

/// An error code of RFC 6749 (sections 4.1.2.1 and 5.2), RFC 7591 (section 3.2.2) or RFC 8707.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthErrorCode {
    /// A parameter is missing, repeated or malformed.
    InvalidRequest,
    /// The client is unknown (401 at the token endpoint).
    InvalidClient,
    /// The code or refresh token is invalid, expired, used, revoked or another client's.
    InvalidGrant,
    /// Not `authorization_code` or `refresh_token`.
    UnsupportedGrantType,
    /// Not `code`.
    UnsupportedResponseType,
    /// A scope other than `assistant:read`.
    InvalidScope,
    /// The `resource` is not an MCP endpoint of wms, or not the one granted (RFC 8707).
    InvalidTarget,
    /// The member declined.
    AccessDenied,
    /// A redirect URI refused at registration (RFC 7591).
    InvalidRedirectUri,
    /// Other client metadata refused at registration (RFC 7591).
    InvalidClientMetadata,
}

impl OAuthErrorCode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthErrorCode::InvalidRequest => "invalid_request",
            OAuthErrorCode::InvalidClient => "invalid_client",
            OAuthErrorCode::InvalidGrant => "invalid_grant",
            OAuthErrorCode::UnsupportedGrantType => "unsupported_grant_type",
            OAuthErrorCode::UnsupportedResponseType => "unsupported_response_type",
            OAuthErrorCode::InvalidScope => "invalid_scope",
            OAuthErrorCode::InvalidTarget => "invalid_target",
            OAuthErrorCode::AccessDenied => "access_denied",
            OAuthErrorCode::InvalidRedirectUri => "invalid_redirect_uri",
            OAuthErrorCode::InvalidClientMetadata => "invalid_client_metadata",
        }
    }
}

/// A refusal in the protocol's words: the code and a sentence for the developer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {description}", code.as_str())]
pub struct OAuthRefusal {
    /// The RFC error code.
    pub code: OAuthErrorCode,
    /// What was wrong (`error_description`; never a secret).
    pub description: String,
}

impl OAuthRefusal {
    /// A refusal with `code`.
    pub fn new(code: OAuthErrorCode, description: impl Into<String>) -> Self {
        Self { code, description: description.into() }
    }
}

/// A redirect URI an app may register: absolute, without a fragment, `https`, or `http` on the
/// loopback interface (native apps, RFC 8252 section 7.3).
pub fn check_redirect_uri(raw: &str) -> Result<(), String> {
    if raw.len() > MAX_URI_LEN {
        return Err(format!("a redirect URI may have at most {MAX_URI_LEN} characters"));
    }
    // `url` would quietly drop or encode them, and the URI is kept as given.
    if raw.chars().any(char::is_control) {
        return Err("a redirect URI may not contain control characters".into());
    }
    let url = url::Url::parse(raw).map_err(|e| format!("`{raw}` is not an absolute URL ({e})"))?;
    if url.fragment().is_some() {
        return Err(format!("`{raw}` has a fragment; redirect URIs may not"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("`{raw}` carries credentials"));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        "http" => Err(format!("`{raw}` uses http on a host other than loopback; use https")),
        other => Err(format!("`{raw}` uses the scheme `{other}`; use https, or http on 127.0.0.1, [::1] or localhost")),
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// What an app registers (RFC 7591), validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientMetadata {
    /// The name the consent page shows.
    pub client_name: String,
    /// Where codes may be sent, compared exactly.
    pub redirect_uris: Vec<String>,
}

impl ClientMetadata {
    /// Reads a registration request body. Only public clients are registered
    /// (`token_endpoint_auth_method` `none`, PKCE instead of a secret); one that asks for a
    /// client secret is registered as public.
    ///
    /// # Errors
    /// `invalid_redirect_uri` or `invalid_client_metadata`, naming the field.
    pub fn from_json(body: &Value) -> Result<Self, OAuthRefusal> {
        use OAuthErrorCode::{InvalidClientMetadata as Meta, InvalidRedirectUri as Redirect};
        let Some(obj) = body.as_object() else {
            return Err(OAuthRefusal::new(Meta, "the body must be a JSON object of client metadata"));
        };
        let uris = match obj.get("redirect_uris") {
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_REDIRECT_URIS => items,
            Some(Value::Array(_)) => {
                return Err(OAuthRefusal::new(
                    Redirect,
                    format!("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"),
                ))
            }
            Some(_) => return Err(OAuthRefusal::new(Redirect, "redirect_uris must be an array of strings")),
            None => return Err(OAuthRefusal::new(Redirect, "redirect_uris is required")),
        };
        let mut redirect_uris = Vec::with_capacity(uris.len());
        for uri in uris {
            let Some(uri) = uri.as_str() else {
                return Err(OAuthRefusal::new(Redirect, "redirect_uris must be an array of strings"));
            };
            check_redirect_uri(uri).map_err(|why| OAuthRefusal::new(Redirect, why))?;
            if !redirect_uris.iter().any(|u| u == uri) {
                redirect_uris.push(uri.to_owned());
            }
        }
        let client_name = match obj.get("client_name") {
            None | Some(Value::Null) => UNNAMED_CLIENT.to_owned(),
            Some(Value::String(s)) => {
                let name = s.trim();
                if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
                    return Err(OAuthRefusal::new(
                        Meta,
                        format!("client_name must have 1 to {MAX_NAME_CHARS} printable characters"),
                    ));
                }
                name.to_owned()
            }
            Some(_) => return Err(OAuthRefusal::new(Meta, "client_name must be a string")),
        };
        match obj.get("token_endpoint_auth_method") {
            None | Some(Value::Null) => {}
            Some(Value::String(m)) if m == "none" => {}
            // A client asking for a secret gets a public registration instead (RFC 7591 §3.2.1:
            // the server may replace a requested value; the answer says `none`, and no secret
            // is issued, so the client proves itself with PKCE). Some MCP clients ask for
            // `client_secret_post` by default.
            Some(Value::String(m)) if m == "client_secret_post" || m == "client_secret_basic" => {}
            Some(_) => {
                return Err(OAuthRefusal::new(
                    Meta,
                    "token_endpoint_auth_method must be `none` (or a client secret method, registered as `none`): wms registers public clients, which prove themselves with PKCE",
                ))
            }
        }
        only_strings_from(obj.get("grant_types"), "grant_types", &["authorization_code", "refresh_token"])?;
        only_strings_from(obj.get("response_types"), "response_types", &["code"])?;
        match obj.get("scope") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.split(' ').filter(|p| !p.is_empty()).all(|p| p == APP_SCOPE) => {}
            Some(_) => return Err(OAuthRefusal::new(Meta, format!("scope must be `{APP_SCOPE}`"))),
        }
        Ok(Self { client_name, redirect_uris })
    }
}

fn only_strings_from(value: Option<&Value>, field: &str, allowed: &[&str]) -> Result<(), OAuthRefusal> {
    let refuse = || {
        OAuthRefusal::new(
            OAuthErrorCode::InvalidClientMetadata,
            format!("{field} must be an array of {}", allowed.join(", ")),
        )
    };
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) => {
            if items.iter().all(|v| v.as_str().is_some_and(|s| allowed.contains(&s))) {
                Ok(())
            } else {
                Err(refuse())
            }
        }
        Some(_) => Err(refuse()),
    }
}

/// The MCP endpoint of workspace `ws` under the issuer `base` (`https://wms.example.com`): the
/// resource a token is bound to.
pub fn mcp_resource(base: &str, ws: WorkspaceId) -> String {
    format!("{}/workspaces/{}/co-admin/mcp", base.trim_end_matches('/'), ws.0)
}

/// The workspace whose MCP endpoint `resource` names under `base`, if it names one.
pub fn resource_workspace(base: &str, resource: &str) -> Option<WorkspaceId> {
    let rest = resource.strip_prefix(base.trim_end_matches('/'))?.strip_prefix("/workspaces/")?;
    let (id, tail) = rest.split_once('/')?;
    if tail.trim_end_matches('/') != "co-admin/mcp" || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse::<i64>().ok().filter(|id| *id > 0).map(WorkspaceId)
}

/// Whether `scope` (space-separated, as sent) asks for nothing but `assistant:read`; absent
/// means that scope.
pub fn scope_is_granted(scope: Option<&str>) -> bool {
    scope.is_none_or(|s| {
        let mut parts = s.split(' ').filter(|p| !p.is_empty()).peekable();
        parts.peek().is_some() && parts.all(|p| p == APP_SCOPE)
    })
}

/// Whether `challenge` has the shape of an S256 challenge: 43 characters of base64url.
pub fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `verifier` is a PKCE code verifier (RFC 7636 section 4.1): 43 to 128 unreserved characters.
pub fn is_code_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether `verifier` answers the S256 `challenge`: `BASE64URL(SHA256(verifier)) == challenge`,
/// compared in constant time.
pub fn pkce_matches(challenge: &str, verifier: &str) -> bool {
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    is_code_verifier(verifier) && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
