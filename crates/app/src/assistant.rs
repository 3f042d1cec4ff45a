//! Builds the assistant's tools from settings: the live data on PostgreSQL, the documentation
//! search of `search_product_docs` and the conversation reports of `get_conversation_report`.

use std::sync::Arc;

use adapters_http::handlers::assistant::AssistantState;
use adapters_postgres::assistant::PgLiveData;
use adapters_postgres::Db;
use domain::assistant::{Assistant, AssistantSettings};
use domain::reports::ReportsService;

use crate::config::Settings;
use crate::platform::SystemClock;

/// The tools and the MCP origin check of the settings; `reports` is the service of
/// `GET /v1/reports/conversations`, which `get_conversation_report` answers with.
pub fn state(settings: &Settings, db: &Db, reports: Arc<ReportsService>) -> AssistantState {
    let assistant = Assistant::new(
        Arc::new(PgLiveData::new(db.clone())),
        Arc::new(SystemClock),
        AssistantSettings { compress_overview: settings.co_admin.compress_overview },
    )
    .with_docs(Arc::new(crate::docs_search::search_service(settings, db)))
    .with_reports(reports)
    .with_library(crate::docs_search::library());
    AssistantState::new(assistant, settings.http.public_url.as_deref())
}
