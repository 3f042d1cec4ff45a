//! wms as the OAuth 2.1 authorization server of MCP clients (`docs/oauth.md`): apps register
//! themselves (RFC 7591), a member consents for one workspace, and the app gets an access token
//! (`wmso_`, an hour) bound to that workspace's MCP endpoint (RFC 8707) and a refresh token
//! (`wmsr_`) that works once. The protocol rules are pure functions ([`model`], [`grant`]); the
//! storage applies what they decide.

pub mod grant;
pub mod model;
pub mod ports;
pub mod service;

pub use grant::*;
pub use model::*;
pub use ports::*;
pub use service::*;
