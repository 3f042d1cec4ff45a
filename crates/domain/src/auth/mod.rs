//! Credentials: API keys (`wmsk_`) and login tokens (`wmsu_`), how requests are authenticated
//! with them, signing in and out, the sign-in throttle, and the one-time links sent by e-mail.

pub mod link;
pub mod login;
pub mod model;
pub mod ports;
pub mod throttle;
pub mod token;
pub mod verify;

pub use link::*;
pub use login::*;
pub use model::*;
pub use ports::*;
pub use throttle::*;
pub use token::*;
pub use verify::*;
