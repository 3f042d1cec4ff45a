//! wms as the OAuth 2.1 authorization server of MCP clients (`docs/oauth.md`): the discovery
//! documents, dynamic client registration and the token endpoint. Their errors are RFC 6749 /
//! RFC 7591 bodies (`{"error", "error_description"}`), never problem+json ([`reply`]). The
//! authorization endpoint and its consent page are pages (`crate::pages::oauth`).

pub mod challenge;
pub mod metadata;
pub mod register;
pub mod reply;
pub mod token;

use crate::state::AppState;

/// This server's base URL as clients see it ([`crate::pages::PagesState::site`]: `http.public_url`,
/// else the address listened on, never the request's headers). It is the issuer, and the MCP
/// resources are under it.
pub fn issuer(state: &AppState) -> String {
    state.pages.site.trim_end_matches('/').to_owned()
}
