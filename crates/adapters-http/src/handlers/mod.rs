//! Request handlers, one file per action.

pub mod ai_agents;
pub mod api_keys;
pub mod assistant;
pub mod audit_events;
pub mod business_hours;
pub mod callbacks;
pub mod channels;
pub mod contacts;
pub mod events;
pub mod fallback;
pub mod health;
pub mod input;
pub mod labels;
pub mod login_tokens;
pub mod messages;
pub mod oauth;
pub mod query;
pub mod reports;
pub mod secret_scanning;
pub mod sla_policies;
pub mod teams;
pub mod threads;
pub mod users;
pub mod webhooks;

/// 201 Created with the new resource's `Location` and its record.
pub(crate) fn created(location: String, record: impl serde::Serialize) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Created().insert_header((actix_web::http::header::LOCATION, location)).json(record)
}

/// [`created`] for a record that holds a secret shown this once (a destination's signing secret):
/// never to be cached (`Cache-Control: no-store`, like every answer holding a secret).
pub(crate) fn created_with_secret(location: String, record: impl serde::Serialize) -> actix_web::HttpResponse {
    use actix_web::http::header::{CacheControl, CacheDirective, LOCATION};
    actix_web::HttpResponse::Created()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .insert_header((LOCATION, location))
        .json(record)
}

/// 200 with one page of records, `{"data": [...], "next_cursor": ...}`: the body that each
/// `…List` schema of [`crate::dto`] documents with its own words.
pub(crate) fn listed<R: serde::Serialize>(page: domain::common::page::Page<R>) -> actix_web::HttpResponse {
    #[derive(serde::Serialize)]
    struct Body<R> {
        data: Vec<R>,
        next_cursor: Option<String>,
    }
    actix_web::HttpResponse::Ok().json(Body { data: page.data, next_cursor: page.next_cursor })
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

impl PageQuery {
    /// The page asked for.
    ///
    /// # Errors
    /// 422 naming `limit` or `cursor`.
    pub fn request(&self) -> Result<domain::common::page::PageRequest, crate::error::ApiError> {
        let page = domain::common::page::PageRequest::new(self.limit, self.cursor.as_deref());
        page.map_err(|e| crate::error::ApiError::Validation(domain::ValidationErrors(e)))
    }
}

#[cfg(test)]
mod tests {
    /// The schemas of the pages [`super::listed`] writes have its two fields and no other.
    #[test]
    fn page_schemas_have_the_fields_listed_writes() {
        let doc = crate::openapi::document();
        let pages = [
            "AiAgentList",
            "ChannelList",
            "ContactList",
            "LabelList",
            "MessageList",
            "SlaPolicyList",
            "TeamList",
            "ThreadList",
            "UserList",
        ];
        for name in pages {
            let properties = &doc["components"]["schemas"][name]["properties"];
            let mut fields: Vec<&str> = properties.as_object().expect(name).keys().map(String::as_str).collect();
            fields.sort_unstable();
            assert_eq!(fields, ["data", "next_cursor"], "{name}");
        }
    }
}
