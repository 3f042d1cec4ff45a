//! The assistant's endpoints (`docs/contract.md`, "Assistant"): run a tool, read the capabilities
//! manifest, and the same tools over MCP. Members of the path's workspace (user token or
//! settings session) and its API keys with `assistant:read` ([`crate::authentication::assistant`]); others
//! get 403 and non-members 404.

pub mod capabilities;
pub mod execute;
pub mod mcp;

use std::sync::Arc;

use domain::assistant::Assistant;

/// What the assistant's handlers share.
#[derive(Clone)]
pub struct AssistantState {
    /// The tools.
    pub tools: Arc<Assistant>,
    /// Browser origins allowed to call the MCP endpoint besides loopback ones (the service's own
    /// public origin, `https://wms.example.com`), lowercase, without a trailing slash.
    pub allowed_origins: Vec<String>,
}

impl std::fmt::Debug for AssistantState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssistantState").field("allowed_origins", &self.allowed_origins).finish_non_exhaustive()
    }
}

impl AssistantState {
    /// The tools, with the origin of `public_url` (if configured) allowed for MCP.
    pub fn new(assistant: Assistant, public_url: Option<&str>) -> Self {
        let allowed_origins = public_url.and_then(origin_of).into_iter().collect();
        Self { tools: Arc::new(assistant), allowed_origins }
    }
}

/// `scheme://host[:port]` of a URL, lowercase; `None` when it has no scheme and host.
pub fn origin_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?;
    Some(
        match parsed.port() {
            Some(p) => format!("{}://{}:{p}", parsed.scheme(), host),
            None => format!("{}://{}", parsed.scheme(), host),
        }
        .to_ascii_lowercase(),
    )
}
