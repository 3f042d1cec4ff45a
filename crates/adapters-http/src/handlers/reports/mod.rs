//! `/v1/reports/conversations` (JSON) and `/v1/reports/conversations.csv`: the conversation
//! report of docs/contract.md, computed from the facts stored when each event happened.

pub mod conversations;
pub mod conversations_csv;

use serde::Deserialize;
use utoipa::IntoParams;

/// The report's query; each value is validated by the domain (422 naming the field).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReportParams {
    /// Start, inclusive: an RFC 3339 instant or `YYYY-MM-DD` (midnight UTC); 30 days before
    /// `until` without it.
    since: Option<String>,
    /// End, exclusive: an RFC 3339 instant or `YYYY-MM-DD`; now without it.
    until: Option<String>,
    /// `none` (default), `agent`, `team`, `label` or `channel`.
    group_by: Option<String>,
    /// `true`: only time inside the workspace's business hours counts (default `false`).
    business_hours: Option<String>,
}

impl ReportParams {
    fn into_raw(self) -> domain::reports::RawReportQuery {
        domain::reports::RawReportQuery {
            since: self.since,
            until: self.until,
            group_by: self.group_by,
            business_hours: self.business_hours,
        }
    }
}
