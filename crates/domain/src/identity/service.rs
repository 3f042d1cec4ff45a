//! [`IdentityService`]: an API key or a member's login token (`Authorization: Bearer`), the
//! settings session cookie, or an app's OAuth token becomes one [`Caller`] — key, member or app,
//! role or scopes, the workspace and its plan, and the surface it came through — for `/v1`, the
//! settings API, the assistant's endpoints and MCP. (The settings pages read the session's richer
//! state, names included, from [`crate::sessions::SessionService::state`], whose member is the same
//! [`Caller`].) The HTTP adapter's extractors only carry the result to the handlers.

use std::net::IpAddr;

use crate::access::{Actor, Caller, Surface};
use crate::auth::{
    admitted, bearer_token, parse, Admission, AuthenticateError, CredentialCheck, CredentialStore, InvalidToken,
    MemberAuthError, MemberCredential, PresentedToken, Requirements, SessionLookup, TokenKind,
};
use crate::oauth::{AdmitAppError, OAuthService};
use crate::rate_limit::RateLimitPolicy;
use crate::workspace::WorkspaceId;

/// Turns credentials into the one [`Caller`], over the ports that know them. Borrowed from the
/// application's state for one request: building it costs nothing.
#[derive(Clone, Copy)]
pub struct IdentityService<'a> {
    /// API keys and login tokens: verification with the rate limit, in one round trip.
    pub credentials: &'a dyn CredentialStore,
    /// The settings sessions; `None` when none are served (cookies then authenticate nobody).
    pub sessions: Option<&'a dyn SessionLookup>,
    /// Apps connected over OAuth.
    pub apps: &'a OAuthService,
    /// Requests per rolling hour per key or token.
    pub rate_limit: RateLimitPolicy,
}

impl std::fmt::Debug for IdentityService<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityService").field("rate_limit", &self.rate_limit).finish_non_exhaustive()
    }
}

impl IdentityService<'_> {
    /// The requirements of a `/v1` request from `client`: the REST API's plan and the rate limit.
    pub fn rest_requirements(&self, client: Option<IpAddr>) -> Requirements {
        Requirements {
            surface: Surface::RestApi,
            plan: Some(Surface::RestApi.plan()),
            rate_limit: Some(self.rate_limit),
            client,
        }
    }

    /// A `/v1` request: an API key or a login token whose offline checks ([`crate::auth::presented_token`])
    /// passed, on a workspace with the REST API's plan, counted against its window, in one
    /// storage round trip. An app's OAuth token is refused here.
    ///
    /// # Errors
    /// [`AuthenticateError`].
    pub async fn rest(&self, token: &PresentedToken, client: Option<IpAddr>) -> Result<Admission, AuthenticateError> {
        if token.kind.is_app() {
            return Err(InvalidToken::AppToken.into());
        }
        let needs = self.rest_requirements(client);
        admitted(self.credentials.verify(token, &needs).await?)
    }

    /// A member of workspace `ws` on `surface`, by a login token bound to that workspace or by
    /// the settings session cookie. Not counted here: a member's requests count in the member's
    /// window, which the caller's surface counts.
    ///
    /// # Errors
    /// [`MemberAuthError`].
    pub async fn member(
        &self,
        credential: MemberCredential<'_>,
        ws: WorkspaceId,
        surface: Surface,
    ) -> Result<Caller, MemberAuthError> {
        match credential {
            MemberCredential::None => Err(MemberAuthError::Missing),
            MemberCredential::Session(cookie) => {
                let Some(sessions) = self.sessions else { return Err(MemberAuthError::Missing) };
                let session = sessions.user_for_session(cookie).await?.ok_or(MemberAuthError::Missing)?;
                // A session works in the one workspace it was opened for.
                if session.workspace_id != Some(ws) {
                    return Err(MemberAuthError::NotMember);
                }
                let member = sessions.member(ws, session.user_id).await?.ok_or(MemberAuthError::NotMember)?;
                Ok(member.caller(surface))
            }
            MemberCredential::Authorization(value) => {
                let token = parse(bearer_token(value)?).map_err(InvalidToken::from)?;
                // An API key is looked up like any token: an unknown, revoked or expired one is
                // 401 as everywhere; a valid one is refused below (403: keys are not members).
                if token.kind.is_app() {
                    return Err(InvalidToken::AppToken.into());
                }
                let needs = Requirements { surface, plan: None, rate_limit: None, client: None };
                let caller = match self.credentials.verify(&token, &needs).await? {
                    CredentialCheck::Admitted { caller, .. }
                    | CredentialCheck::Uncounted { caller, .. }
                    | CredentialCheck::Limited { caller, .. } => caller,
                    CredentialCheck::Unknown => return Err(InvalidToken::Unknown.into()),
                    CredentialCheck::Revoked => return Err(MemberAuthError::Revoked),
                    CredentialCheck::Expired => return Err(MemberAuthError::Expired),
                    CredentialCheck::MemberInactive | CredentialCheck::WorkspaceInactive => {
                        return Err(MemberAuthError::NotMember)
                    }
                };
                match caller.actor {
                    Actor::Member { .. } if caller.workspace_id == ws => Ok(caller),
                    Actor::ApiKey { .. } => Err(MemberAuthError::ApiKey),
                    _ => Err(MemberAuthError::NotMember),
                }
            }
        }
    }

    /// A caller of the assistant's endpoints in workspace `ws`: a member (as [`Self::member`]) or
    /// an API key of that workspace (the unattended credential of an assistant backend; the policy
    /// then asks for `assistant:read`). Another workspace's key is not found, as a non-member is.
    /// A key's request counts against the key's window, as on `/v1`; the window comes back for
    /// the response headers. `client`, the request's address, becomes the key's `last_used_ip`.
    /// An app's OAuth token goes to [`Self::app`].
    ///
    /// # Errors
    /// [`MemberAuthError`] (never [`MemberAuthError::ApiKey`]).
    pub async fn assistant(
        &self,
        credential: MemberCredential<'_>,
        ws: WorkspaceId,
        client: Option<IpAddr>,
    ) -> Result<Admission, MemberAuthError> {
        if let MemberCredential::Authorization(value) = credential {
            let token = parse(bearer_token(value)?).map_err(InvalidToken::from)?;
            if token.kind == TokenKind::ApiKey {
                let needs =
                    Requirements { surface: Surface::Assistant, plan: None, rate_limit: Some(self.rate_limit), client };
                let (caller, rate) = match self.credentials.verify(&token, &needs).await? {
                    CredentialCheck::Admitted { caller, rate } | CredentialCheck::Uncounted { caller, rate } => {
                        (caller, rate)
                    }
                    CredentialCheck::Limited { caller, rate } => {
                        if caller.workspace_id != ws {
                            return Err(MemberAuthError::NotMember);
                        }
                        return Err(MemberAuthError::Limited { rate });
                    }
                    CredentialCheck::Unknown => return Err(InvalidToken::Unknown.into()),
                    CredentialCheck::Revoked => return Err(MemberAuthError::Revoked),
                    CredentialCheck::Expired => return Err(MemberAuthError::Expired),
                    CredentialCheck::MemberInactive | CredentialCheck::WorkspaceInactive => {
                        return Err(MemberAuthError::NotMember)
                    }
                };
                return match caller.actor {
                    Actor::ApiKey { .. } if caller.workspace_id == ws => Ok(Admission { caller, rate }),
                    _ => Err(MemberAuthError::NotMember),
                };
            }
        }
        let caller = self.member(credential, ws, Surface::Assistant).await?;
        Ok(Admission { caller, rate: None })
    }

    /// An app's OAuth access token (`wmso_`) on the assistant's endpoints of workspace `ws`: the
    /// grant decides (`docs/oauth.md`), and the caller is the member through the app.
    ///
    /// # Errors
    /// [`AdmitAppError`].
    pub async fn app(&self, token: &PresentedToken, ws: WorkspaceId) -> Result<Caller, AdmitAppError> {
        self.apps.admit(token, ws).await
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
