//! Request handlers, one file per action.

pub mod ai_agents;
pub mod api_keys;
pub mod audit_events;
pub mod channels;
pub mod co_admin;
pub mod contacts;
pub mod events;
pub mod fallback;
pub mod health;
pub mod input;
pub mod labels;
pub mod login_tokens;
pub mod messages;
pub mod platform_webhooks;
pub mod teams;
pub mod threads;
pub mod users;
pub mod webhooks;

/// 201 Created with the new resource's `Location` and its record.
pub(crate) fn created(location: String, record: impl serde::Serialize) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Created().insert_header((actix_web::http::header::LOCATION, location)).json(record)
}

/// The query of a listing without filters.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 25)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}
