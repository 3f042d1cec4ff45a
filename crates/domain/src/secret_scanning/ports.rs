//! Ports of the secret-scanning intake: GitHub's published keys, and the keys a leak revokes.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::alert::{LeakLabel, ReportedToken};
use super::signature::ScanningPublicKey;
use crate::auth::{TokenDigest, TokenKind};
use crate::common::error::RepoError;

/// GitHub's keys document could not be had (and none was kept from before).
#[derive(Debug, thiserror::Error)]
#[error("GitHub's secret-scanning keys are unavailable: {0}")]
pub struct KeysUnavailable(pub String);

/// GitHub's published secret-scanning keys (`secret_scanning.github_keys_url`), kept between
/// calls: anonymous callers must not be able to make wms fetch the document at will.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ScanningKeySource: Send + Sync {
    /// The keys as last fetched. `refresh` asks for a new fetch because a request named a key the
    /// kept document does not list; the source fetches at most once a minute however often it is
    /// asked.
    ///
    /// # Errors
    /// [`KeysUnavailable`] when no document was ever fetched and fetching fails.
    async fn keys(&self, refresh: bool) -> Result<Vec<ScanningPublicKey>, KeysUnavailable>;
}

/// A reported token that could be a wms API key, login token (or invitation or reset link) or app
/// token, to look up by digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakReport {
    /// What it could be, by its prefix.
    pub kind: TokenKind,
    /// The token's digest.
    pub digest: TokenDigest,
    /// The report.
    pub reported: ReportedToken,
}

/// The keys, login tokens, app tokens and links a leak report finds, in every workspace (a digest
/// names one).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LeakedCredentialStore: Send + Sync {
    /// In one transaction: locks the key, login token, app token's grant, invitation or reset link
    /// of each report's digest (by its kind; a `wmsu_` digest that is no login token is looked up
    /// among the links), asks [`super::decide_leak`], [`super::decide_login_token_leak`],
    /// [`super::decide_app_token_leak`], [`super::decide_invitation_leak`] or
    /// [`super::decide_password_reset_leak`] at `at`, revokes the live credentials (an app token's
    /// whole grant) and voids the live links with their audit records and mails, and returns each
    /// report's label in order.
    ///
    /// # Errors
    /// Infrastructure failures only (nothing is revoked then).
    async fn revoke_leaked(&self, reports: &[LeakReport], at: OffsetDateTime) -> Result<Vec<LeakLabel>, RepoError>;
}
