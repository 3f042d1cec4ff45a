//! Builds the assistant's tools from settings: the live data on PostgreSQL and the documentation
//! search of `search_product_docs`.

use std::sync::Arc;

use adapters_http::handlers::assistant::AssistantState;
use adapters_postgres::assistant::PgLiveData;
use adapters_postgres::Db;
use domain::assistant::{Assistant, AssistantSettings};

use crate::config::Settings;
use crate::platform::SystemClock;

/// The tools and the MCP origin check of the settings.
pub fn state(settings: &Settings, db: &Db) -> AssistantState {
    let assistant = Assistant::new(
        Arc::new(PgLiveData::new(db.clone())),
        Arc::new(SystemClock),
        AssistantSettings { compress_overview: settings.co_admin.compress_overview },
    )
    .with_docs(Arc::new(crate::docs_search::search_service(settings, db)))
    .with_library(crate::docs_search::library());
    AssistantState::new(assistant, settings.http.public_url.as_deref())
}
