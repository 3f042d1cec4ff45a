//! SLA policies (`docs/contract.md`, "SLA policies"): targets for the first response, the next
//! response and the resolution of a conversation's cycle, due times on the thread, a clock that
//! stops while the thread is `snoozed` or `pending`, and `sla.breached` once per missed target.
//! Every rule is a pure decision ([`tracking`]) over facts the storage adapter reads inside the
//! transaction of the message or status change that causes it; [`replay`] runs a history written
//! at once (the demo data's) through the same decisions.

pub mod clock;
pub mod policy;
pub mod ports;
pub mod record;
pub mod replay;
pub mod service;
pub mod tracking;

pub use clock::*;
pub use policy::*;
pub use ports::*;
pub use record::*;
pub use replay::*;
pub use service::*;
pub use tracking::*;
