//! Sessions of the settings web app: signing in with e-mail and password (the login API's checks
//! and throttle), the cookie that carries a session, the workspace it works in, sign-out, and the
//! anti-forgery (CSRF) token bound to each session.

pub mod model;
pub mod ports;
pub mod service;

pub use model::*;
pub use ports::*;
pub use service::*;
