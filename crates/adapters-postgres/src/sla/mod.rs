//! SLA policies and each thread's SLA: the policies' storage ([`policies`]), the SLA read and
//! written inside the transaction of the message or status change the domain decides on
//! ([`tracking`]), and the breach timer ([`timers`]).

pub mod policies;
pub mod timers;
pub(crate) mod tracking;

pub use policies::PgSlaPolicyRepository;
pub use timers::PgSlaTimers;
