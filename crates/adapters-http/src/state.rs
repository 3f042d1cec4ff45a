//! What handlers share.

use std::sync::Arc;

/// Readiness of the service's dependencies, implemented by the binary's wiring.
#[async_trait::async_trait]
pub trait HealthCheck: Send + Sync {
    /// `Ok` when the database is reachable and migrated, else why not.
    async fn ready(&self) -> Result<(), String>;
}

/// The application state handed to every handler.
#[derive(Clone)]
pub struct AppState {
    /// Readiness probe.
    pub health: Arc<dyn HealthCheck>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").finish_non_exhaustive()
    }
}
