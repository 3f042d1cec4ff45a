//! The grant's state machine as pure decisions over facts the storage loads inside its
//! transaction: exchanging a code, rotating a refresh token (a used one presented again revokes
//! the whole grant), and admitting an access token. The storage applies what they return.

use serde_json::json;
use time::OffsetDateTime;

use super::model::{pkce_matches, OAuthErrorCode, OAuthRefusal};
use crate::access::{Actor, Caller, Scope, ScopeSet, Surface};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::auth::Standing;
use crate::users::{Role, UserId};
use crate::workspace::{PlanTier, WorkspaceId};

/// An authorization code as stored, with its grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeFacts {
    /// The grant the code was issued under.
    pub grant_id: i64,
    /// The grant's workspace.
    pub workspace_id: WorkspaceId,
    /// The public id of the client it was issued to.
    pub client_id: String,
    /// The redirect URI of the authorization request.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The resource the grant is for.
    pub resource: String,
    /// When it stops being exchangeable.
    pub expires_at: OffsetDateTime,
    /// When it was exchanged, if it was.
    pub used_at: Option<OffsetDateTime>,
    /// Whether the grant was revoked.
    pub grant_revoked: bool,
}

/// What the client presents with a code (`grant_type=authorization_code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeExchange {
    /// `client_id`.
    pub client_id: String,
    /// `redirect_uri`.
    pub redirect_uri: String,
    /// `code_verifier`.
    pub code_verifier: String,
    /// `resource`, when sent.
    pub resource: Option<String>,
}

/// A refresh token as stored, with its grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshFacts {
    /// The grant.
    pub grant_id: i64,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// The public id of its client.
    pub client_id: String,
    /// Its client's name, for the audit record.
    pub client_name: String,
    /// The resource the grant is for.
    pub resource: String,
    /// When the token stops working.
    pub expires_at: OffsetDateTime,
    /// When it was rotated, if it was.
    pub used_at: Option<OffsetDateTime>,
    /// Whether the grant was revoked.
    pub grant_revoked: bool,
    /// The grant's membership's standing now.
    pub standing: Standing,
}

/// What the client presents with a refresh token (`grant_type=refresh_token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshExchange {
    /// `client_id`.
    pub client_id: String,
    /// `resource`, when sent.
    pub resource: Option<String>,
}

/// What to do with a presented code or refresh token.
#[derive(Debug, Clone, PartialEq)]
pub enum Exchange {
    /// Issue a new access and refresh token under the grant (and mark the code or the refresh
    /// token used).
    Issue,
    /// Refuse; nothing changes.
    Refuse(OAuthRefusal),
    /// Refuse and revoke the whole grant (a code or refresh token used twice: someone else may
    /// hold it), recording this entry.
    RevokeGrant(OAuthRefusal, Box<AuditEntry>),
}

fn invalid_grant(why: &str) -> OAuthRefusal {
    OAuthRefusal::new(OAuthErrorCode::InvalidGrant, why)
}

/// The record of a grant revoked by wms on a replay.
fn replay_revocation(ws: WorkspaceId, grant_id: i64, what: &str, ctx: &AuditContext) -> Box<AuditEntry> {
    let system = AuditContext { actor: AuditContext::system().actor, ..ctx.clone() };
    Box::new(system.entry(
        ws,
        AuditAction::OAuthRevoked,
        AuditTarget::oauth_grant(Some(grant_id)),
        json!({ "reason": format!("{what}_reused") }),
    ))
}

/// The record of a member revoking their grant for `client_name` (`ctx` is the member's request).
pub fn member_revocation(ws: WorkspaceId, grant_id: i64, client_name: &str, ctx: &AuditContext) -> AuditEntry {
    ctx.entry(
        ws,
        AuditAction::OAuthRevoked,
        AuditTarget::oauth_grant(Some(grant_id)),
        json!({ "reason": "revoked_by_member", "client_name": client_name }),
    )
}

/// Decides a code exchange at `now`. `ctx` is the token request's (for the record of a replay).
pub fn redeem_code(facts: &CodeFacts, req: &CodeExchange, now: OffsetDateTime, ctx: &AuditContext) -> Exchange {
    // RFC 6749 section 4.1.2: a code used twice revokes what it issued.
    if facts.used_at.is_some() {
        if facts.grant_revoked {
            return Exchange::Refuse(invalid_grant("the authorization code was used already"));
        }
        let entry = replay_revocation(facts.workspace_id, facts.grant_id, "authorization_code", ctx);
        return Exchange::RevokeGrant(
            invalid_grant("the authorization code was used already; the grant is revoked"),
            entry,
        );
    }
    if facts.grant_revoked {
        return Exchange::Refuse(invalid_grant("the grant was revoked"));
    }
    if now >= facts.expires_at {
        return Exchange::Refuse(invalid_grant("the authorization code has expired"));
    }
    if facts.client_id != req.client_id {
        return Exchange::Refuse(invalid_grant("the authorization code was issued to another client"));
    }
    if facts.redirect_uri != req.redirect_uri {
        return Exchange::Refuse(invalid_grant("redirect_uri differs from the authorization request's"));
    }
    if !pkce_matches(&facts.code_challenge, &req.code_verifier) {
        return Exchange::Refuse(invalid_grant("code_verifier does not match the code_challenge"));
    }
    if req.resource.as_deref().is_some_and(|r| !same_resource(r, &facts.resource)) {
        return Exchange::Refuse(OAuthRefusal::new(
            OAuthErrorCode::InvalidTarget,
            "resource differs from the one granted",
        ));
    }
    Exchange::Issue
}

/// Decides a refresh at `now`: a refresh token works once; presented again, the grant is revoked.
pub fn rotate_refresh(
    facts: &RefreshFacts,
    req: &RefreshExchange,
    now: OffsetDateTime,
    ctx: &AuditContext,
) -> Exchange {
    if facts.grant_revoked {
        return Exchange::Refuse(invalid_grant("the grant was revoked"));
    }
    if facts.used_at.is_some() {
        let entry = replay_revocation(facts.workspace_id, facts.grant_id, "refresh_token", ctx);
        return Exchange::RevokeGrant(invalid_grant("the refresh token was used already; the grant is revoked"), entry);
    }
    if facts.client_id != req.client_id {
        return Exchange::Refuse(invalid_grant("the refresh token was issued to another client"));
    }
    if now >= facts.expires_at {
        return Exchange::Refuse(invalid_grant("the refresh token has expired"));
    }
    if !facts.standing.counts() {
        return Exchange::Refuse(invalid_grant("the member is no longer active in the workspace"));
    }
    if req.resource.as_deref().is_some_and(|r| !same_resource(r, &facts.resource)) {
        return Exchange::Refuse(OAuthRefusal::new(
            OAuthErrorCode::InvalidTarget,
            "resource differs from the one granted",
        ));
    }
    Exchange::Issue
}

fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// An access token as stored, with its grant and the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessFacts {
    /// The grant.
    pub grant_id: i64,
    /// The workspace it was granted for.
    pub workspace_id: WorkspaceId,
    /// That workspace's plan now.
    pub plan: PlanTier,
    /// The member.
    pub user_id: UserId,
    /// Their role now.
    pub role: Role,
    /// When the token stops working.
    pub expires_at: OffsetDateTime,
    /// Whether the grant was revoked.
    pub grant_revoked: bool,
    /// The grant's membership's standing now.
    pub standing: Standing,
}

/// Why an access token does not admit its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccessRefusal {
    /// No token has this digest (401 `invalid_token`).
    #[error("the token is not valid")]
    Unknown,
    /// The grant was revoked (401 `token_revoked`).
    #[error("the app's access was revoked")]
    Revoked,
    /// Past its hour (401 `token_expired`).
    #[error("the token has expired")]
    Expired,
    /// Granted for another workspace's MCP endpoint (401 `invalid_token`: the audience differs).
    #[error("this OAuth token was granted for another workspace")]
    OtherWorkspace,
    /// The member or the workspace is no longer active.
    #[error("the member is no longer active in the workspace")]
    MemberInactive,
}

/// Admits an access token on the assistant endpoints of `ws`: it acts as the member, with the
/// grant's one scope.
///
/// # Errors
/// [`AccessRefusal`].
pub fn admit_access(
    facts: Option<&AccessFacts>,
    ws: WorkspaceId,
    now: OffsetDateTime,
) -> Result<Caller, AccessRefusal> {
    let facts = facts.ok_or(AccessRefusal::Unknown)?;
    if facts.grant_revoked {
        return Err(AccessRefusal::Revoked);
    }
    if now >= facts.expires_at {
        return Err(AccessRefusal::Expired);
    }
    if facts.workspace_id != ws {
        return Err(AccessRefusal::OtherWorkspace);
    }
    if !facts.standing.counts() {
        return Err(AccessRefusal::MemberInactive);
    }
    Ok(Caller {
        workspace_id: ws,
        plan: facts.plan,
        actor: Actor::App { user_id: facts.user_id, role: facts.role, scopes: ScopeSet::of([Scope::AssistantRead]) },
        surface: Surface::Assistant,
    })
}

#[cfg(test)]
#[path = "grant_tests.rs"]
mod tests;
