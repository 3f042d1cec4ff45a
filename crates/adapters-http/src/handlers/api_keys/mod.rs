//! The settings API for API keys (`/api/workspaces/{workspace_id}/api-keys`), for workspace
//! admins signed in with a login token or the settings session. The record is in
//! [`crate::dto::api_keys`].

pub mod create;
pub mod delete;
pub mod list;
pub mod revoke;
