//! `/settings/workspace/api-keys`: list, create (the full key shown once), revoke and delete.

pub mod create;
pub mod delete;
pub mod page;
pub mod revoke;
pub mod view;

/// The page's path.
pub const PATH: &str = "/settings/workspace/api-keys";

/// What a revocation or deletion of a key the workspace does not have shows.
const GONE: &str = "This API key does not exist (any more).";
