//! What handlers share.

use std::sync::Arc;

/// Readiness of the service's dependencies, implemented by the binary's wiring.
#[async_trait::async_trait]
pub trait HealthCheck: Send + Sync {
    /// `Ok` when the database is reachable and migrated, else why not.
    async fn ready(&self) -> Result<(), String>;

    /// The read replica's state for `/readyz` (`state`, `lag_ms`, `max_lag_ms`), when there is
    /// one; never a reason to be unready.
    fn replica(&self) -> Option<serde_json::Value> {
        None
    }

    /// How long a request may run before it is asked whether the database still answers
    /// (`database.acquire_timeout_ms`, [`crate::middleware::database_stall`]); `None`: never.
    fn wait_bound(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether the database answers a trivial query now, within [`HealthCheck::wait_bound`]: one
    /// probe at a time for the instance, its answer shared by every request that asks meanwhile.
    async fn answers(&self) -> bool {
        true
    }
}

/// The application state handed to every handler: the ports, as trait objects.
#[derive(Clone)]
pub struct AppState {
    /// Readiness probe.
    pub health: Arc<dyn HealthCheck>,
    /// Channels: list, read, create (credentials proven by the platform) and change.
    pub channels: Arc<domain::channels::ChannelsService>,
    /// Messages: send (creating threads and contacts as needed), read and list.
    pub messages: Arc<domain::messaging::MessagingService>,
    /// API keys: create, list, revoke, delete (admins).
    pub api_keys: Arc<domain::api_keys::ApiKeysService>,
    /// Workspace members: list, add, change, remove, invitations.
    pub members: Arc<domain::members::MembersService>,
    /// Password resets by e-mailed link.
    pub password_resets: Arc<domain::accounts::PasswordResetService>,
    /// Contacts: list, create, change and erase.
    pub contacts: Arc<domain::contacts::ContactsService>,
    /// Threads: list, status, assignment and labels.
    pub threads: Arc<domain::threads::ThreadsService>,
    /// Labels.
    pub labels: Arc<domain::labels::LabelsService>,
    /// SLA policies.
    pub sla_policies: Arc<domain::sla::SlaPoliciesService>,
    /// Teams and their members.
    pub teams: Arc<domain::teams::TeamsService>,
    /// Business hours: read and set.
    pub business_hours: Arc<domain::business_hours::BusinessHoursService>,
    /// The conversation reports of `/v1`, read from the primary (the page's and the assistant's
    /// read the replica: [`crate::pages::PagesState::reports`]).
    pub reports: Arc<domain::reports::ReportsService>,
    /// AI agents (read-only).
    pub ai_agents: Arc<domain::ai_agents::AiAgentsService>,
    /// Webhook destinations, their secrets, the delivery log, manual and test deliveries.
    pub webhooks: Arc<domain::webhooks::WebhookService>,
    /// The events feed and replays.
    pub events: Arc<domain::events::EventsService>,
    /// Credentials, the rate limit, sign-in and API key management.
    pub auth: crate::authentication::AuthState,
    /// The assistant's tools (execute, capabilities, MCP).
    pub assistant: crate::handlers::assistant::AssistantState,
    /// The settings web app: sessions, analytics data and cookie settings.
    pub pages: crate::pages::PagesState,
    /// wms as the OAuth authorization server of MCP clients, and the members' connected apps.
    pub oauth: Arc<domain::oauth::OAuthService>,
    /// The platforms' callbacks: the subscription handshake, statuses and inbound messages.
    pub callbacks: Arc<domain::connectors::CallbackService>,
    /// WhatsApp template catalogues: list, sync, and Meta's template status callbacks.
    pub templates: Arc<domain::connectors::template_sync::TemplatesService>,
    /// GitHub's secret-scanning alerts: leaked keys revoked at once.
    pub secret_scanning: Arc<domain::secret_scanning::SecretScanningService>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").finish_non_exhaustive()
    }
}
