//! The wire record of business hours, as `GET|PUT /v1/business-hours` carry it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The weekday keys of `days`, Monday first.
pub const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// `{"timezone", "days": {"mon": [["09:00", "17:00"]], ...}, "holidays": ["YYYY-MM-DD"]}`.
///
/// Each interval is `[start, end)` in the zone's local time, `HH:MM`, `end` up to `24:00`; an
/// interval never runs past midnight (an overnight shift is two intervals on two days). A day
/// left out, or given `[]`, is closed. Holidays are local dates on which every day's hours are
/// off. A record without any interval means no business hours: every hour counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BusinessHoursRecord {
    /// An IANA time zone (`Europe/Berlin`).
    pub timezone: String,
    /// Open intervals per weekday (`mon` … `sun`), each `["HH:MM", "HH:MM"]`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object, example = json!({"mon": [["09:00", "17:00"]]})))]
    pub days: BTreeMap<String, Vec<Vec<String>>>,
    /// Local dates (`YYYY-MM-DD`) without business hours.
    #[serde(default)]
    pub holidays: Vec<String>,
}

impl BusinessHoursRecord {
    /// The record of a workspace that has set none: UTC, no interval, no holiday.
    pub fn none_set() -> Self {
        Self { timezone: "UTC".to_owned(), days: BTreeMap::new(), holidays: Vec::new() }
    }
}
