//! Every path of the service at a glance.

use actix_web::middleware::from_fn;
use actix_web::web::{self, ServiceConfig};

use crate::extract::{json_config, path_config, query_config};
use crate::handlers;
use crate::handlers::{api_keys, auth, channels, co_admin, fallback, health, messages, users, webhooks};

/// A resource that answers 405 problem+json to methods it has no route for.
fn resource(path: &str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(fallback::method_not_allowed))
}

/// Registers every route; the binary wraps it with middleware and state.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.app_data(json_config())
        .app_data(path_config())
        .app_data(query_config())
        .service(resource("/healthz").route(web::get().to(health::healthz)))
        .service(resource("/readyz").route(web::get().to(health::readyz)))
        .service(
            resource("/platform-webhooks/{platform}")
                // Callbacks batch many events; Meta's bodies stay well under 1 MiB.
                .app_data(web::PayloadConfig::new(1024 * 1024))
                .route(web::get().to(handlers::platform_webhooks::verify::verify))
                .route(web::post().to(handlers::platform_webhooks::receive::receive)),
        )
        .service(v1())
        .service(settings_api())
        .service(co_admin_routes())
        .service(pages())
        .default_service(web::to(fallback::not_found));
}

/// Every `/v1` route, in ONE scope: actix matches the first scope whose prefix fits, so a second
/// `/v1` scope would never be reached. Put new `/v1` routes here. The middleware authenticates
/// and rate-limits every request but those of `auth::v1::PUBLIC_PATHS` before its handler runs,
/// and adds the rate-limit headers to every response.
fn v1() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    web::scope("/v1")
        .wrap(from_fn(crate::auth::v1::authenticate_v1))
        .service(resource("/openapi.json").route(web::get().to(crate::openapi::openapi_json)))
        .service(resource("/auth/login").route(web::post().to(auth::login::login)))
        .service(resource("/auth/logout").route(web::post().to(auth::logout::logout)))
        .service(
            resource("/channels")
                .route(web::get().to(channels::list::list))
                .route(web::post().to(channels::create::create)),
        )
        .service(
            resource("/channels/{channel_id}")
                .route(web::get().to(channels::get::get))
                .route(web::patch().to(channels::update::update)),
        )
        .service(
            resource("/messages")
                .route(web::get().to(messages::list::list))
                .route(web::post().to(messages::create::create)),
        )
        .service(resource("/messages/{message_id}").route(web::get().to(messages::get::get)))
        .service(
            resource("/threads/{thread_id}")
                .route(web::get().to(handlers::threads::get::get))
                .route(web::patch().to(handlers::threads::update::update)),
        )
        .service(
            resource("/users/{user_id}")
                .route(web::get().to(users::get::get))
                .route(web::patch().to(users::update::update))
                .route(web::delete().to(users::delete::delete)),
        )
        .service(
            resource("/webhooks").route(web::get().to(webhooks::list::v1)).route(web::post().to(webhooks::create::v1)),
        )
        .service(
            resource("/webhooks/{webhook_id}")
                .route(web::get().to(webhooks::get::v1))
                .route(web::patch().to(webhooks::update::v1))
                .route(web::delete().to(webhooks::delete::v1)),
        )
        .service(resource("/webhooks/{webhook_id}/secret").route(web::get().to(webhooks::secret::v1)))
        .service(resource("/webhooks/{webhook_id}/secret/rotate").route(web::post().to(webhooks::rotate::v1)))
        .service(resource("/webhooks/{webhook_id}/deliveries").route(web::get().to(webhooks::deliveries::v1)))
        .service(
            resource("/webhooks/{webhook_id}/deliveries/{delivery_id}/retry")
                .route(web::post().to(webhooks::retry::v1)),
        )
        .service(resource("/webhooks/{webhook_id}/test").route(web::post().to(webhooks::test::v1)))
}

/// The settings API of one workspace, in ONE scope for the same reason as `/v1`. The middleware
/// makes every request a member's (login token or settings session) before its handler runs.
fn settings_api() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    web::scope("/api/workspaces/{workspace_id}")
        .wrap(from_fn(crate::auth::member::authenticate_members))
        .service(
            resource("/api-keys")
                .route(web::get().to(api_keys::list::list))
                .route(web::post().to(api_keys::create::create)),
        )
        .service(resource("/api-keys/{key_id}").route(web::delete().to(api_keys::delete::delete)))
        .service(resource("/api-keys/{key_id}/revoke").route(web::post().to(api_keys::revoke::revoke)))
        .service(
            resource("/webhooks")
                .route(web::get().to(webhooks::list::settings))
                .route(web::post().to(webhooks::create::settings)),
        )
        .service(
            resource("/webhooks/{webhook_id}")
                .route(web::get().to(webhooks::get::settings))
                .route(web::patch().to(webhooks::update::settings))
                .route(web::delete().to(webhooks::delete::settings)),
        )
        .service(resource("/webhooks/{webhook_id}/secret").route(web::get().to(webhooks::secret::settings)))
        .service(resource("/webhooks/{webhook_id}/secret/rotate").route(web::post().to(webhooks::rotate::settings)))
        .service(resource("/webhooks/{webhook_id}/deliveries").route(web::get().to(webhooks::deliveries::settings)))
        .service(
            resource("/webhooks/{webhook_id}/deliveries/{delivery_id}/retry")
                .route(web::post().to(webhooks::retry::settings)),
        )
        .service(resource("/webhooks/{webhook_id}/test").route(web::post().to(webhooks::test::settings)))
}

/// The assistant's endpoints (spec 4.2). Each handler checks the member itself (the `Member`
/// extractor), so that GET and DELETE on the MCP endpoint answer 405 as the transport requires.
fn co_admin_routes() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    web::scope("/workspaces/{workspace_id}/co-admin")
        .wrap(from_fn(crate::auth::assistant::rate_headers))
        .service(resource("/tools/execute").route(web::post().to(co_admin::execute::execute)))
        .service(resource("/capabilities").route(web::get().to(co_admin::capabilities::capabilities)))
        .service(
            resource("/mcp")
                .route(web::post().to(co_admin::mcp::post))
                .default_service(web::to(co_admin::mcp::not_allowed)),
        )
}

/// The settings web app (`crate::pages`): HTML pages, their form actions and embedded assets. The
/// scope has no prefix, so it is registered after every other scope; its middleware adds the
/// security headers and refuses cross-site state changes.
fn pages() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    use crate::pages::{analytics, api_keys as keys, assets, login, logout, rest_api, webhooks as hooks};
    let get = web::get;
    let post = web::post;
    web::scope("")
        .wrap(from_fn(crate::pages::guard::guard))
        .service(resource("/").route(get().to(crate::pages::home)))
        .service(resource("/assets/app.css").route(get().to(assets::css)))
        .service(resource("/assets/app.js").route(get().to(assets::js)))
        .service(resource("/assets/icon.svg").route(get().to(assets::icon)))
        .service(resource("/login").route(get().to(login::show)).route(post().to(login::submit)))
        .service(resource("/login/workspace").route(get().to(login::choose)).route(post().to(login::chosen)))
        .service(resource("/logout").route(post().to(logout::logout)))
        .service(
            resource("/settings/workspace/api-keys")
                .route(get().to(keys::page::show))
                .route(post().to(keys::create::create)),
        )
        .service(resource("/settings/workspace/api-keys/{key_id}/revoke").route(post().to(keys::revoke::revoke)))
        .service(resource("/settings/workspace/api-keys/{key_id}/delete").route(post().to(keys::delete::delete)))
        .service(resource("/settings/workspace/rest-api").route(get().to(rest_api::show)))
        .service(
            resource("/settings/integrations/webhooks")
                .route(get().to(hooks::list::show))
                .route(post().to(hooks::create::create)),
        )
        .service(
            resource("/settings/integrations/webhooks/{webhook_id}")
                .route(get().to(hooks::detail::show))
                .route(post().to(hooks::update::update)),
        )
        .service(
            resource("/settings/integrations/webhooks/{webhook_id}/active").route(post().to(hooks::active::set_active)),
        )
        .service(
            resource("/settings/integrations/webhooks/{webhook_id}/delete").route(post().to(hooks::delete::delete)),
        )
        .service(
            resource("/settings/integrations/webhooks/{webhook_id}/secret").route(post().to(hooks::secret::reveal)),
        )
        .service(
            resource("/settings/integrations/webhooks/{webhook_id}/secret/rotate")
                .route(post().to(hooks::secret::rotate)),
        )
        .service(resource("/settings/integrations/webhooks/{webhook_id}/test").route(post().to(hooks::test::send)))
        .service(
            resource("/settings/integrations/webhooks/{webhook_id}/deliveries/{delivery_id}/retry")
                .route(post().to(hooks::retry::retry)),
        )
        .service(resource("/analytics").route(get().to(analytics::page::show)))
        .service(resource("/analytics/daily.csv").route(get().to(analytics::export::daily)))
        .service(resource("/analytics/top-countries.csv").route(get().to(analytics::export::countries)))
}
