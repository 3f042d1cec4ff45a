//! A workspace's business hours (docs/contract.md, "Conversation reports, business hours and
//! SLAs"): the wire record, its validation, and the arithmetic the reports and SLA due times use.
//!
//! "None set" is [`BusinessHours::always`]: every second counts. A record whose `days` hold no
//! interval at all is the same thing (there is nothing else it could sensibly mean for a figure),
//! so a workspace goes back to "all hours count" by storing `{"days": {}}`.

mod record;
mod schedule;
pub mod service;

pub use record::{BusinessHoursRecord, WEEKDAYS};
pub use schedule::BusinessHours;
pub use service::{BusinessHoursRepo, BusinessHoursService, SetBusinessHoursError};
