//! `/analytics`: WhatsApp delivery figures per channel or for all of them, over 7 to 90 days, as
//! totals and a combo chart drawn on the server (SVG), with CSV exports of the daily series and
//! of the top contact countries. Figures come from the assistant's `get_channel_analytics` logic
//! ([`domain::assistant::channel_analytics`]), so the page and the assistant never disagree.

pub mod chart;
pub mod export;
pub mod page;

use domain::analytics::AnalyticsRange;
use domain::assistant::{channel_analytics, ChannelAnalytics, ChannelStatsError};
use domain::channels::ChannelId;
use serde::Deserialize;

use super::session::Signed;
use super::PageError;
use crate::state::AppState;

/// The page's path.
pub const PATH: &str = "/analytics";

/// `?channel=all|ID&range=7d`
#[derive(Debug, Default, Deserialize)]
pub struct Selection {
    /// `all` (every WhatsApp channel) or a channel id.
    pub channel: Option<String>,
    /// `7d`, `14d`, `30d`, `60d` or `90d`.
    pub range: Option<String>,
}

impl Selection {
    /// The channel asked for; `None` for all WhatsApp channels.
    ///
    /// # Errors
    /// [`PageError::BadRequest`] for something that is neither `all` nor an id.
    pub fn channel(&self) -> Result<Option<ChannelId>, PageError> {
        match self.channel.as_deref().map(str::trim) {
            None | Some("" | "all") => Ok(None),
            Some(raw) => raw
                .parse::<i64>()
                .map(|id| Some(ChannelId(id)))
                .map_err(|_| PageError::BadRequest("channel must be `all` or a channel id".into())),
        }
    }

    /// The range asked for; the default (7 days) when absent.
    ///
    /// # Errors
    /// [`PageError::BadRequest`] for another range.
    pub fn range(&self) -> Result<AnalyticsRange, PageError> {
        match self.range.as_deref() {
            None | Some("") => Ok(AnalyticsRange::default()),
            Some(raw) => AnalyticsRange::parse(raw)
                .ok_or_else(|| PageError::BadRequest("range must be one of 7d, 14d, 30d, 60d, 90d".into())),
        }
    }

    /// The query string of this selection.
    pub fn query(channel: Option<ChannelId>, range: AnalyticsRange) -> String {
        format!("channel={}&range={}", channel.map_or_else(|| "all".to_owned(), |c| c.0.to_string()), range.as_str())
    }
}

/// The figures of a selection, exactly as the assistant's tool computes them.
///
/// # Errors
/// [`PageError::NotFound`] for a channel the workspace does not have.
pub async fn figures(
    s: &Signed,
    state: &AppState,
    channel: Option<ChannelId>,
    range: AnalyticsRange,
) -> Result<ChannelAnalytics, PageError> {
    let now = state.auth.clock.now();
    let stats = state.pages.live.channel_stats(s.caller.workspace_id, channel, range.days(), now).await.map_err(
        |e| match e {
            ChannelStatsError::UnknownChannel(_) => PageError::NotFound("This workspace has no such channel.".into()),
            ChannelStatsError::Unknown(e) => e.into(),
        },
    )?;
    Ok(channel_analytics(stats, range.as_str().to_owned(), range.days()))
}
