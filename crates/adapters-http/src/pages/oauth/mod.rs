//! The member's side of OAuth (`docs/oauth.md`): the authorization endpoint with its consent
//! page, and the connected apps page where grants are listed and revoked.

pub mod authorize;
pub mod connected_apps;
