//! The answer to GitHub's secret-scanning alerts.

use serde::Serialize;

/// The answer for one reported token of a secret-scanning alert (`POST /secret-scanning/github`).
#[derive(Serialize)]
pub struct LeakVerdict {
    /// The token as reported.
    pub token_raw: String,
    /// The alert's `type` for it.
    pub token_type: String,
    /// `true_positive` (a key wms issued, or a live login token) or `false_positive`.
    pub label: &'static str,
}
