//! Credentials: API keys (`wmsk_`) and login tokens (`wmsu_`), how requests are authenticated
//! with them, signing in and out, and the sign-in throttle.

pub mod login;
pub mod model;
pub mod ports;
pub mod throttle;
pub mod token;
pub mod verify;

pub use login::*;
pub use model::*;
pub use ports::*;
pub use throttle::*;
pub use token::*;
pub use verify::*;
