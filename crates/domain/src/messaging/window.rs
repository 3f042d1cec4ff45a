//! The platforms' rule for free-form messages (Meta's, enforced before anything is stored): a
//! contact can be sent free text only within 24 hours of their latest message (the customer-service
//! window); after that, only an approved WhatsApp template, or on Messenger and Instagram a human
//! agent's message tagged `HUMAN_AGENT`, up to 7 days after it. The time that counts is the
//! platform's timestamp of the contact's message, never when its callback arrived.

use time::{Duration, OffsetDateTime};

use crate::channels::ChannelType;
use crate::common::error::FieldError;

/// How long after the contact's latest message free text may go out.
pub const SERVICE_WINDOW: Duration = Duration::hours(24);

/// How long after the contact's latest message a `human_agent` tagged message may go out
/// (Messenger and Instagram).
pub const HUMAN_AGENT_WINDOW: Duration = Duration::days(7);

/// A thread's customer-service window at a moment (the `service_window` of the thread record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceWindow {
    /// Free text may be sent now.
    pub open: bool,
    /// When it closes (or closed); `None` when the contact never wrote.
    pub expires_at: Option<OffsetDateTime>,
}

impl ServiceWindow {
    /// The window of a thread whose contact last wrote at `latest_inbound_at` (platform time).
    pub fn at(latest_inbound_at: Option<OffsetDateTime>, now: OffsetDateTime) -> Self {
        let expires_at = latest_inbound_at.map(|t| t + SERVICE_WINDOW);
        Self { open: expires_at.is_some_and(|e| now < e), expires_at }
    }
}

/// The latest inbound platform time of a thread once a message sent at `message_at` is stored: a
/// late callback carrying an older message moves nothing.
pub fn latest_inbound(current: Option<OffsetDateTime>, message_at: OffsetDateTime) -> OffsetDateTime {
    current.map_or(message_at, |c| c.max(message_at))
}

/// A Meta message tag a send may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageTag {
    /// A human agent answering past the 24-hour window (Messenger and Instagram, up to 7 days).
    HumanAgent,
}

impl MessageTag {
    /// The name clients send (`human_agent`).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageTag::HumanAgent => "human_agent",
        }
    }

    /// The tag as Meta's Send API spells it.
    pub fn platform_name(self) -> &'static str {
        match self {
            MessageTag::HumanAgent => "HUMAN_AGENT",
        }
    }

    /// The stored tag (`HUMAN_AGENT`) back as a value.
    pub fn from_platform_name(s: &str) -> Option<Self> {
        (s == "HUMAN_AGENT").then_some(MessageTag::HumanAgent)
    }

    /// Parses a send's `tag` for a channel: only `human_agent`, and only on Messenger and Instagram.
    ///
    /// # Errors
    /// A [`FieldError`] naming `tag`.
    pub fn parse(raw: &str, channel_type: ChannelType) -> Result<Self, FieldError> {
        match channel_type {
            ChannelType::Whatsapp => Err(FieldError::new(
                "tag",
                "WhatsApp has no message tags: outside the 24-hour window send an approved `template`",
            )),
            ChannelType::Messenger | ChannelType::Instagram if raw == "human_agent" => Ok(MessageTag::HumanAgent),
            ChannelType::Messenger | ChannelType::Instagram => {
                Err(FieldError::new("tag", "must be `human_agent` (the only tag wms sends)"))
            }
        }
    }
}

/// What kind of message a send is, as far as the window goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowNeed {
    /// An approved WhatsApp template: allowed whenever (its own checks are the catalogue's).
    Template,
    /// Free text: only within the 24-hour window.
    FreeText,
    /// A human agent's tagged message: up to 7 days after the contact's latest message.
    HumanAgent,
}

/// The window is closed for this send: refused before anything is stored or sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", closed_detail(*.need, *.expires_at))]
pub struct WindowClosed {
    /// What the send needed.
    pub need: WindowNeed,
    /// When the window it needed closed; `None` when the contact never wrote.
    pub expires_at: Option<OffsetDateTime>,
}

fn closed_detail(need: WindowNeed, expires_at: Option<OffsetDateTime>) -> String {
    let when = match expires_at {
        None => "the contact has not written on this thread yet".to_owned(),
        Some(_) => "the contact's latest message is older than the window".to_owned(),
    };
    match need {
        WindowNeed::HumanAgent => {
            format!("{when}: a `human_agent` message may go out up to 7 days after the contact's latest message")
        }
        _ => format!(
            "{when}: free text may only be sent within 24 hours of the contact's latest message; send an approved WhatsApp template instead"
        ),
    }
}

/// Whether a send of `need` may go out now to a thread whose contact last wrote at
/// `latest_inbound_at` (`None`: never, which includes a recipient without a thread yet).
///
/// # Errors
/// [`WindowClosed`] with the end of the window the send needed.
pub fn admit(
    need: WindowNeed,
    latest_inbound_at: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> Result<(), WindowClosed> {
    let length = match need {
        WindowNeed::Template => return Ok(()),
        WindowNeed::FreeText => SERVICE_WINDOW,
        WindowNeed::HumanAgent => HUMAN_AGENT_WINDOW,
    };
    let expires_at = latest_inbound_at.map(|t| t + length);
    match expires_at {
        Some(e) if now < e => Ok(()),
        _ => Err(WindowClosed { need, expires_at }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const WROTE: OffsetDateTime = datetime!(2026-03-01 10:00:00 UTC);

    #[test]
    fn free_text_goes_out_within_24_hours_of_the_contacts_latest_message() {
        assert_eq!(admit(WindowNeed::FreeText, Some(WROTE), WROTE + Duration::hours(23)), Ok(()));
        let closed = admit(WindowNeed::FreeText, Some(WROTE), WROTE + Duration::hours(24));
        assert_eq!(closed, Err(WindowClosed { need: WindowNeed::FreeText, expires_at: Some(WROTE + SERVICE_WINDOW) }));
    }

    #[test]
    fn a_contact_who_never_wrote_has_a_closed_window_without_an_end() {
        let closed = admit(WindowNeed::FreeText, None, WROTE);
        assert_eq!(closed, Err(WindowClosed { need: WindowNeed::FreeText, expires_at: None }));
        assert_eq!(ServiceWindow::at(None, WROTE), ServiceWindow { open: false, expires_at: None });
    }

    #[test]
    fn a_human_agent_message_may_go_out_up_to_7_days_later() {
        assert_eq!(admit(WindowNeed::HumanAgent, Some(WROTE), WROTE + Duration::days(6)), Ok(()));
        let closed = admit(WindowNeed::HumanAgent, Some(WROTE), WROTE + Duration::days(7));
        assert_eq!(closed.map_err(|c| c.expires_at), Err(Some(WROTE + Duration::days(7))));
    }

    #[test]
    fn templates_are_never_held_by_the_window() {
        assert_eq!(admit(WindowNeed::Template, None, WROTE), Ok(()));
    }

    #[test]
    fn a_late_callback_with_an_older_timestamp_moves_nothing() {
        let later = WROTE + Duration::hours(3);
        assert_eq!(latest_inbound(Some(later), WROTE), later);
        assert_eq!(latest_inbound(Some(WROTE), later), later);
        assert_eq!(latest_inbound(None, WROTE), WROTE);
    }

    #[test]
    fn the_record_says_open_until_the_end() {
        let w = ServiceWindow::at(Some(WROTE), WROTE + Duration::hours(1));
        assert_eq!(w, ServiceWindow { open: true, expires_at: Some(WROTE + Duration::hours(24)) });
        assert!(!ServiceWindow::at(Some(WROTE), WROTE + Duration::hours(25)).open);
    }

    #[test]
    fn only_human_agent_on_messenger_and_instagram_is_a_tag() {
        assert_eq!(MessageTag::parse("human_agent", ChannelType::Messenger), Ok(MessageTag::HumanAgent));
        assert_eq!(MessageTag::parse("human_agent", ChannelType::Instagram), Ok(MessageTag::HumanAgent));
        assert_eq!(MessageTag::parse("human_agent", ChannelType::Whatsapp).map_err(|e| e.field), Err("tag".into()));
        assert_eq!(MessageTag::parse("ACCOUNT_UPDATE", ChannelType::Messenger).map_err(|e| e.field), Err("tag".into()));
    }
}
