//! The workspace assistant's tools (`docs/assistant.md`; `docs/contract.md`, "Assistant"): one
//! registry of seven read-only tools, their argument schemas and validation, the capabilities
//! manifest, and the service that runs a tool through the live-data port (and the documentation
//! search of [`crate::docs`]).

pub mod manifest;
pub mod model;
pub mod output;
pub mod ports;
pub mod pricing;
pub mod registry;
pub mod reports;
pub mod schema;
pub mod service;

pub use manifest::{guidance_prompt, manifest, Manifest};
pub use model::*;
pub use output::output_schema;
pub use ports::*;
pub use registry::{ContactQuery, ToolCall, ToolGroup, ToolName, ToolSpec, TOOLS};
pub use reports::{channel_analytics, MAX_CONVERSATIONS, MESSENGER_INSTAGRAM_DOCS};
pub use service::{Assistant, AssistantSettings, ToolError, OVERVIEW_COMPRESS_BYTES};
