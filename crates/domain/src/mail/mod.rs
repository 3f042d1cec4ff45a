//! E-mail that wms sends: the message value ([`Mail`], composed from a [`Letter`]), the outbox it
//! waits in ([`MailQueue`]), the server it goes to ([`MailTransport`]) and the rule that decides,
//! after each attempt, whether it was sent, is tried again later or has failed ([`fate`]).
//!
//! A mail is written to the outbox in the same transaction as the change that causes it (an
//! invitation, a password reset, a warning to the admins), so it is sent if and only if the change
//! commits; a worker sends it afterwards and an SMTP outage only delays it.

pub mod model;
pub mod ports;
pub mod sending;

pub use model::*;
pub use ports::*;
pub use sending::*;
