//! An alert's content and the rules over it: what a well-formed alert is, which reported tokens
//! could be wms keys, and what happens to a key found in one.

use serde::Deserialize;
use time::OffsetDateTime;

use crate::api_keys::{ApiKey, ApiKeyState};
use crate::audit::{AuditAction, AuditContext, AuditEntry, AuditTarget};
use crate::auth::{parse, TokenDigest, TokenKind};
use crate::common::error::ValidationErrors;

/// Most tokens one alert may report (GitHub batches what it found; anything larger is refused).
pub const MAX_ALERT_TOKENS: usize = 1000;

/// One token GitHub reports: `{"token", "type", "url", "source"}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ReportedToken {
    /// The token as found.
    pub token: String,
    /// The token type GitHub matched (the name the pattern was registered under).
    #[serde(rename = "type")]
    pub token_type: String,
    /// Where it was found.
    #[serde(default)]
    pub url: Option<String>,
    /// What kind of place (`content`, `commit`, `issue`, …).
    #[serde(default)]
    pub source: Option<String>,
}

/// GitHub's verdict vocabulary for one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeakLabel {
    /// A key wms issued (whatever its state now), or a live login token, app token or link.
    TruePositive,
    /// Neither: malformed, a bad checksum, another prefix, no credential has it, or a login token,
    /// app token or link that was revoked, voided, used or expired already.
    FalsePositive,
}

impl LeakLabel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LeakLabel::TruePositive => "true_positive",
            LeakLabel::FalsePositive => "false_positive",
        }
    }
}

/// Why an alert body is refused (after its signature was verified).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlertBodyError {
    /// Not a JSON array of `{"token", "type", …}` objects.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// More than [`MAX_ALERT_TOKENS`] tokens.
    #[error("an alert may report at most {MAX_ALERT_TOKENS} tokens; this one has {0}")]
    TooMany(usize),
}

/// Reads an alert's body: a JSON array of at most [`MAX_ALERT_TOKENS`] objects, each with a
/// string `token` and `type`.
///
/// # Errors
/// [`AlertBodyError`], naming the offending element (`body`, `body[3].token`).
pub fn parse_alert(body: &[u8]) -> Result<Vec<ReportedToken>, AlertBodyError> {
    let invalid = |field: String, message: &str| AlertBodyError::Invalid(ValidationErrors::one(field, message));
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| invalid("body".into(), "must be a JSON array of tokens"))?;
    let serde_json::Value::Array(items) = value else {
        return Err(invalid("body".into(), "must be a JSON array of tokens"));
    };
    if items.len() > MAX_ALERT_TOKENS {
        return Err(AlertBodyError::TooMany(items.len()));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value::<ReportedToken>(item)
                .map_err(|_| invalid(format!("body[{i}]"), "must be an object with a string `token` and `type`"))
        })
        .collect()
}

/// What to look up for a reported token, when it could be a credential wms issued — an API key, a
/// member's login token or an app's OAuth token (its prefix, shape and checksum are right): the
/// kind and the digest. `None` answers `false_positive` without a lookup.
pub fn leak_candidate(reported: &ReportedToken) -> Option<(TokenKind, TokenDigest)> {
    parse(reported.token.trim()).ok().map(|t| (t.kind, t.digest))
}

/// What a leak report changes for the key found (if any) at `now`.
#[derive(Debug, Clone, PartialEq)]
pub struct LeakDecision {
    /// The answer for this token.
    pub label: LeakLabel,
    /// Revoke the key now, with this record (only a live key: active, or rolled but still in its
    /// grace period).
    pub revoke: Option<AuditEntry>,
}

/// Decides on a reported token whose digest found `key` (or nothing): a key wms issued is a true
/// positive; a live one is revoked at once, recorded as `api_key.revoked` by `system` with
/// `details.reason` `leaked` and `details.url` where it was found.
pub fn decide_leak(key: Option<&ApiKey>, reported: &ReportedToken, now: OffsetDateTime) -> LeakDecision {
    let Some(key) = key else { return LeakDecision { label: LeakLabel::FalsePositive, revoke: None } };
    let revoke = (key.state(now) == ApiKeyState::Active).then(|| {
        AuditContext::system().entry(
            key.workspace_id,
            AuditAction::ApiKeyRevoked,
            AuditTarget::api_key(Some(key.id.0)),
            serde_json::json!({
                "reason": "leaked",
                "url": reported.url,
                "source": reported.source,
                "name": key.name,
                "masked_key": key.masked_key,
            }),
        )
    });
    LeakDecision { label: LeakLabel::TruePositive, revoke }
}

/// Where a leaked credential was found, for the mails: "at <url>", or "in a public place" when
/// the alert does not say.
pub fn found_at(url: Option<&str>) -> String {
    url.map_or_else(|| "in a public place".to_owned(), |u| format!("at {u}"))
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::access::ScopeSet;
    use crate::api_keys::ApiKeyId;
    use crate::audit::ActorType;
    use crate::auth::NewToken;
    use crate::common::ports::MockRandomSource;
    use crate::workspace::WorkspaceId;

    const NOW: OffsetDateTime = datetime!(2026-06-01 0:00 UTC);

    fn key() -> ApiKey {
        ApiKey {
            id: ApiKeyId(4),
            workspace_id: WorkspaceId(2),
            name: "ci".into(),
            masked_key: "wmsk_…abcd".into(),
            created_by: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
            expires_at: None,
            last_used_at: None,
            last_used_ip: None,
            revoked_at: None,
            rolled_to: None,
            scopes: ScopeSet::full(),
        }
    }

    fn reported(token: &str) -> ReportedToken {
        ReportedToken {
            token: token.into(),
            token_type: "wms_api_key".into(),
            url: Some("https://github.com/o/r/blob/x/.env".into()),
            source: Some("content".into()),
        }
    }

    fn minted(kind: TokenKind) -> String {
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(|b| b.fill(7));
        NewToken::generate(kind, &random).secret
    }

    #[test]
    fn a_live_key_is_revoked_as_leaked_and_a_dead_one_only_labelled() {
        let decision = decide_leak(Some(&key()), &reported("x"), NOW);
        assert_eq!(decision.label, LeakLabel::TruePositive);
        let entry = decision.revoke.expect("revoked");
        assert_eq!(
            (entry.action, entry.context.actor.kind, entry.workspace_id),
            (AuditAction::ApiKeyRevoked, ActorType::System, WorkspaceId(2))
        );
        assert_eq!(entry.details["reason"], "leaked");
        assert_eq!(entry.details["url"], "https://github.com/o/r/blob/x/.env");
        // In a roll's grace period the key still works: it goes now.
        let rolling =
            ApiKey { revoked_at: Some(NOW + time::Duration::hours(1)), rolled_to: Some(ApiKeyId(5)), ..key() };
        assert!(decide_leak(Some(&rolling), &reported("x"), NOW).revoke.is_some());
        for dead in [ApiKey { revoked_at: Some(NOW), ..key() }, ApiKey { expires_at: Some(NOW), ..key() }] {
            assert_eq!(
                decide_leak(Some(&dead), &reported("x"), NOW),
                LeakDecision { label: LeakLabel::TruePositive, revoke: None }
            );
        }
        assert_eq!(
            decide_leak(None, &reported("x"), NOW),
            LeakDecision { label: LeakLabel::FalsePositive, revoke: None }
        );
    }

    #[test]
    fn only_well_formed_credentials_of_every_kind_are_looked_up() {
        let key = minted(TokenKind::ApiKey);
        for kind in [TokenKind::ApiKey, TokenKind::User, TokenKind::AppAccess, TokenKind::AppRefresh] {
            assert_eq!(leak_candidate(&reported(&minted(kind))).map(|(k, _)| k), Some(kind));
        }
        let mut wrong = key.clone();
        wrong.replace_range(10..11, if &key[10..11] == "A" { "B" } else { "A" });
        assert!(leak_candidate(&reported(&wrong)).is_none());
        assert!(leak_candidate(&reported("wmsk_short")).is_none());
        assert!(leak_candidate(&reported("wmsu_short")).is_none());
    }

    #[test]
    fn an_alert_is_an_array_of_at_most_a_thousand_tokens() {
        assert_eq!(parse_alert(br#"[{"token":"t","type":"x"}]"#).expect("alert")[0].url, None);
        for bad in [&br#"{"token":"t"}"#[..], b"nope", b"\"x\""] {
            let Err(AlertBodyError::Invalid(e)) = parse_alert(bad) else { panic!("refused") };
            assert_eq!(e.0[0].field, "body");
        }
        let Err(AlertBodyError::Invalid(e)) = parse_alert(br#"[{"token":"t","type":"x"},{"token":1}]"#) else {
            panic!("refused")
        };
        assert_eq!(e.0[0].field, "body[1]");
        let many = format!("[{}]", vec![r#"{"token":"t","type":"x"}"#; 1001].join(","));
        assert_eq!(parse_alert(many.as_bytes()), Err(AlertBodyError::TooMany(1001)));
    }
}
