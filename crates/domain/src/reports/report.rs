//! The conversation report: its query, validated, and its record (docs/contract.md,
//! "Conversation reports, business hours and SLAs").

use schemars::JsonSchema;
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime};

use crate::common::error::{FieldError, ValidationErrors};

/// The longest period a report covers.
pub const MAX_PERIOD_DAYS: i64 = 366;
/// The period without `since`: the 30 days before `until`.
pub const DEFAULT_PERIOD_DAYS: i64 = 30;

/// How the report's groups are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// One group, the whole workspace.
    #[default]
    None,
    /// One group per member (`key.type` `user`).
    Agent,
    /// One group per team.
    Team,
    /// One group per label the threads carry now.
    Label,
    /// One group per channel.
    Channel,
}

impl GroupBy {
    /// Every grouping.
    pub const ALL: [GroupBy; 5] = [GroupBy::None, GroupBy::Agent, GroupBy::Team, GroupBy::Label, GroupBy::Channel];
    /// Their wire names, in [`GroupBy::ALL`]'s order (the assistant tool's `group_by` choices).
    pub const NAMES: [&'static str; 5] = ["none", "agent", "team", "label", "channel"];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::None => "none",
            GroupBy::Agent => "agent",
            GroupBy::Team => "team",
            GroupBy::Label => "label",
            GroupBy::Channel => "channel",
        }
    }
}

/// The report's query as received (query string or the assistant tool's arguments).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawReportQuery {
    /// RFC 3339 instant or `YYYY-MM-DD` (midnight UTC).
    pub since: Option<String>,
    /// RFC 3339 instant or `YYYY-MM-DD` (midnight UTC); now without it.
    pub until: Option<String>,
    /// `none`, `agent`, `team`, `label` or `channel`.
    pub group_by: Option<String>,
    /// `true` or `false`.
    pub business_hours: Option<String>,
}

/// A validated report query: `[since, until)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportQuery {
    /// Start, inclusive.
    pub since: OffsetDateTime,
    /// End, exclusive.
    pub until: OffsetDateTime,
    /// The grouping.
    pub group_by: GroupBy,
    /// Count only business time.
    pub business_hours: bool,
}

impl ReportQuery {
    /// Validates `raw` at `now`.
    ///
    /// # Errors
    /// Every bad field by name: `since`, `until` (not an instant, `since` not before `until`, a
    /// period over [`MAX_PERIOD_DAYS`]), `group_by`, `business_hours`.
    pub fn parse(raw: &RawReportQuery, now: OffsetDateTime) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let until = match raw.until.as_deref() {
            Some(u) => errors.check(instant("until", u)),
            None => Some(now),
        };
        let since = match raw.since.as_deref() {
            Some(s) => errors.check(instant("since", s)),
            None => until.map(|u| u - Duration::days(DEFAULT_PERIOD_DAYS)),
        };
        let group_by = match raw.group_by.as_deref().map(str::trim) {
            None | Some("") => Some(GroupBy::None),
            Some(g) => errors.check(
                GroupBy::ALL
                    .into_iter()
                    .find(|x| x.as_str() == g)
                    .ok_or_else(|| FieldError::new("group_by", "must be one of none, agent, team, label, channel")),
            ),
        };
        let business_hours = match raw.business_hours.as_deref().map(str::trim) {
            None | Some("") | Some("false") => Some(false),
            Some("true") => Some(true),
            Some(_) => errors.check(Err(FieldError::new("business_hours", "must be true or false"))),
        };
        if let (Some(s), Some(u)) = (since, until) {
            if s >= u {
                errors.0.push(FieldError::new("since", "must be before until"));
            } else if u - s > Duration::days(MAX_PERIOD_DAYS) {
                errors.0.push(FieldError::new("since", format!("the period may cover at most {MAX_PERIOD_DAYS} days")));
            }
        }
        errors.into_result()?;
        match (since, until, group_by, business_hours) {
            (Some(since), Some(until), Some(group_by), Some(business_hours)) => {
                Ok(Self { since, until, group_by, business_hours })
            }
            _ => Err(ValidationErrors::one("since", "invalid period")),
        }
    }
}

fn instant(field: &str, raw: &str) -> Result<OffsetDateTime, FieldError> {
    let raw = raw.trim();
    let problem = || FieldError::new(field, "must be an RFC 3339 instant or a YYYY-MM-DD date in the years 0001–9998");
    if OffsetDateTime::parse(raw, &Rfc3339).is_ok() {
        return crate::common::instant::parse_rfc3339(raw).ok_or_else(problem);
    }
    Date::parse(raw, format_description!("[year]-[month]-[day]"))
        .ok()
        .and_then(|d| crate::common::instant::in_range(d.midnight().assume_utc()))
        .ok_or_else(problem)
}

/// Count, average, median and p90 (nearest rank) of durations in seconds; `null`s without any.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DurationFigure {
    /// How many durations.
    pub count: i64,
    /// Their mean, in seconds.
    pub avg: Option<f64>,
    /// The nearest-rank median, in seconds.
    pub median: Option<i64>,
    /// The nearest-rank 90th percentile, in seconds.
    pub p90: Option<i64>,
}

impl DurationFigure {
    /// The figure of `values` (any order).
    pub fn of(mut values: Vec<i64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_unstable();
        let n = values.len();
        let sum: i64 = values.iter().sum();
        let rank = |p: f64| {
            let r = (p * n as f64).ceil() as usize;
            values[r.clamp(1, n) - 1]
        };
        Self { count: n as i64, avg: Some(sum as f64 / n as f64), median: Some(rank(0.5)), p90: Some(rank(0.9)) }
    }
}

/// SLA outcomes of the period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SlaCounts {
    /// SLAs met.
    pub hit: i64,
    /// SLAs missed.
    pub missed: i64,
}

/// What a group is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupKey {
    /// `user`, `team`, `label` or `channel`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its id.
    pub id: i64,
    /// Its name now.
    pub name: String,
}

/// The figures of one group.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReportGroup {
    /// `null` for `group_by=none`.
    pub key: Option<GroupKey>,
    /// Cycles started in the period.
    pub conversations: i64,
    /// Messages from contacts.
    pub incoming_messages: i64,
    /// Messages to contacts.
    pub outgoing_messages: i64,
    /// Times threads became resolved.
    pub resolutions: i64,
    /// Cycle start → first message by a user.
    pub first_response: DurationFigure,
    /// Cycle start → first message by an AI agent.
    pub first_response_ai: DurationFigure,
    /// First inbound of a run → next message by a user or AI agent.
    pub reply: DurationFigure,
    /// Cycle start → resolved.
    pub resolution: DurationFigure,
    /// SLA outcomes.
    pub sla: SlaCounts,
}

impl ReportGroup {
    /// A group without any figure.
    pub fn empty(key: Option<GroupKey>) -> Self {
        Self {
            key,
            conversations: 0,
            incoming_messages: 0,
            outgoing_messages: 0,
            resolutions: 0,
            first_response: DurationFigure::default(),
            first_response_ai: DurationFigure::default(),
            reply: DurationFigure::default(),
            resolution: DurationFigure::default(),
            sla: SlaCounts::default(),
        }
    }
}

/// `GET /v1/reports/conversations`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConversationReport {
    /// Start, inclusive.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    #[schemars(with = "String")]
    pub since: OffsetDateTime,
    /// End, exclusive.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    #[schemars(with = "String")]
    pub until: OffsetDateTime,
    /// Whether only business time counts.
    pub business_hours: bool,
    /// One per group: a single one with `key: null` for `group_by=none`; else one per member,
    /// team, label or channel with a figure in the period, by id.
    pub groups: Vec<ReportGroup>,
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-11-27 12:00:00 UTC);

    fn raw(since: Option<&str>, until: Option<&str>, group_by: Option<&str>, bh: Option<&str>) -> RawReportQuery {
        RawReportQuery {
            since: since.map(str::to_owned),
            until: until.map(str::to_owned),
            group_by: group_by.map(str::to_owned),
            business_hours: bh.map(str::to_owned),
        }
    }

    fn fields(r: RawReportQuery) -> Vec<String> {
        ReportQuery::parse(&r, NOW).expect_err("invalid").0.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn queries_default_to_the_last_30_days_ungrouped_on_the_wall_clock() {
        let q = ReportQuery::parse(&RawReportQuery::default(), NOW).expect("valid");
        assert_eq!(
            q,
            ReportQuery { since: NOW - Duration::days(30), until: NOW, group_by: GroupBy::None, business_hours: false }
        );
        let q = ReportQuery::parse(
            &raw(Some("2026-11-01"), Some("2026-11-02T06:00:00+01:00"), Some("label"), Some("true")),
            NOW,
        )
        .expect("valid");
        assert_eq!((q.since, q.until), (datetime!(2026-11-01 00:00:00 UTC), datetime!(2026-11-02 05:00:00 UTC)));
        assert_eq!((q.group_by, q.business_hours), (GroupBy::Label, true));
    }

    #[test]
    fn bad_queries_name_the_field() {
        assert_eq!(fields(raw(Some("2026-11-03"), Some("2026-11-02"), None, None)), ["since"]);
        assert_eq!(fields(raw(Some("yesterday"), None, None, None)), ["since"]);
        assert_eq!(fields(raw(None, Some("soon"), None, None)), ["until"]);
        assert_eq!(fields(raw(None, None, Some("inbox"), None)), ["group_by"]);
        assert_eq!(fields(raw(None, None, None, Some("yes"))), ["business_hours"]);
        assert_eq!(fields(raw(Some("2024-01-01"), None, None, None)), ["since"]);
    }

    #[test]
    fn group_by_names_are_the_wire_names() {
        assert_eq!(GroupBy::ALL.map(GroupBy::as_str), GroupBy::NAMES);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let f = DurationFigure::of(vec![50, 10, 40, 30, 20]);
        assert_eq!(f, DurationFigure { count: 5, avg: Some(30.0), median: Some(30), p90: Some(50) });
        let f = DurationFigure::of(vec![10, 20]);
        assert_eq!((f.median, f.p90), (Some(10), Some(20)));
        assert_eq!(DurationFigure::of(vec![]), DurationFigure { count: 0, avg: None, median: None, p90: None });
    }
}
