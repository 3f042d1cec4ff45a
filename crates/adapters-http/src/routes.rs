//! Every path of the service at a glance.

use actix_web::middleware::from_fn;
use actix_web::web::{self, ServiceConfig};
use actix_web::{FromRequest, Handler, Resource, Responder};
use domain::access::Action as A;

use crate::access::{guarded, Access};
use crate::extract::{json_config, path_config, query_config};
use crate::handlers;
use crate::handlers::{
    ai_agents, api_keys, assistant, channels, fallback, health, labels, login_tokens, messages, teams, users, webhooks,
};

/// A resource under construction: every method's route is registered with its entry in the
/// access policy ([`crate::access`]), so no route exists without one. Unregistered methods are
/// answered 405 problem+json with `Allow` naming the registered ones.
struct Res {
    path: String,
    resource: Resource,
    /// The methods registered so far, for `Allow`.
    methods: Vec<&'static str>,
    /// Whether a CORS preflight (`OPTIONS`) is answered.
    preflight: bool,
}

/// The resource at `path` inside the scope whose prefix is `scope` (`""` at the root).
fn res(scope: &str, path: &str) -> Res {
    Res { path: format!("{scope}{path}"), resource: web::resource(path), methods: Vec::new(), preflight: false }
}

macro_rules! method {
    ($name:ident, $route:path, $word:literal) => {
        fn $name<F, Args>(self, access: Access, handler: F) -> Self
        where
            F: Handler<Args>,
            Args: FromRequest + 'static,
            F::Output: Responder + 'static,
        {
            let route = guarded($route().to(handler), $word, self.path.clone(), access);
            let mut methods = self.methods;
            methods.push($word);
            Res { resource: self.resource.route(route), methods, ..self }
        }
    };
}

impl Res {
    method!(get, web::get, "GET");
    method!(post, web::post, "POST");
    method!(put, web::put, "PUT");
    method!(patch, web::patch, "PATCH");
    method!(delete, web::delete, "DELETE");

    /// Answers a CORS preflight (`OPTIONS`) from browser-based clients (public, like the
    /// protocol endpoints that offer it).
    fn preflight(self) -> Self {
        Res { preflight: true, ..self }
    }

    fn done(self) -> Resource {
        let mut methods = self.methods;
        if self.preflight {
            methods.push("OPTIONS");
        }
        let allow = methods.join(", ");
        let preflight = self.preflight;
        self.resource.default_service(web::to(move |req: actix_web::HttpRequest| {
            let answer = if preflight && req.method() == actix_web::http::Method::OPTIONS {
                handlers::oauth::reply::preflight()
            } else {
                fallback::method_not_allowed(&allow)
            };
            std::future::ready(answer)
        }))
    }
}

/// Registers every route; the binary wraps it with middleware and state.
pub fn configure(cfg: &mut ServiceConfig) {
    use Access::Public;
    cfg.app_data(json_config())
        .app_data(path_config())
        .app_data(query_config())
        .service(res("", "/healthz").get(Public, health::healthz).done())
        .service(res("", "/readyz").get(Public, health::readyz).done())
        // `/v1` before the resources with path parameters: actix tries the services in order, and
        // a pattern with a parameter is a regular-expression match on every request that reaches
        // it; no path of those starts with `/v1`, so the order changes nothing but the cost of
        // reaching the API (docs/benchmarks.md, "Authentication and the rate limit").
        .service(v1())
        .service(
            res("", "/platform-webhooks/{platform}")
                // The handler reads the body itself, at most 256 KiB (`receive::MAX_CALLBACK_BYTES`).
                // Public: each callback proves itself with the platform's signature.
                .get(Public, handlers::callbacks::verify::verify)
                .post(Public, handlers::callbacks::receive::receive)
                .done(),
        )
        .service(oauth_routes())
        .service(
            res("", "/secret-scanning/github")
                // Public: GitHub's ECDSA signature over the body is the credential.
                .post(Public, handlers::secret_scanning::github::receive)
                .done(),
        )
        .service(settings_api())
        .service(assistant_routes())
        .service(pages())
        .default_service(web::to(fallback::not_found));
}

/// Every `/v1` route, in ONE scope: actix matches the first scope whose prefix fits, so a second
/// `/v1` scope would never be reached. Put new `/v1` routes here. The middleware authenticates
/// and rate-limits every request but those of `authentication::v1::PUBLIC_PATHS` before its handler runs,
/// and adds the rate-limit headers to every response; each route then asks the policy.
fn v1() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    use Access::{Public, Rest};
    let r = |path| res("/v1", path);
    web::scope("/v1")
        .wrap(from_fn(crate::authentication::v1::authenticate_v1))
        .service(r("/openapi.json").get(Public, crate::openapi::openapi_json).done())
        .service(r("/auth/login").post(Public, login_tokens::login::login).done())
        // Public here: sign-out checks its own token, on every plan.
        .service(r("/auth/logout").post(Public, login_tokens::logout::logout).done())
        // Public: anyone may ask; only the owner of the address gets the link.
        .service(r("/auth/password-reset").post(Public, login_tokens::password_reset::request).done())
        .service(r("/audit-events").get(Rest(A::AuditRead), handlers::audit_events::list::list).done())
        .service(
            r("/channels")
                .get(Rest(A::ChannelsRead), channels::list::list)
                .post(Rest(A::ChannelsWrite), channels::create::create)
                .done(),
        )
        .service(
            r("/channels/{channel_id}")
                .get(Rest(A::ChannelsRead), channels::get::get)
                .patch(Rest(A::ChannelsWrite), channels::update::update)
                .done(),
        )
        .service(r("/channels/{channel_id}/templates").get(Rest(A::ChannelsRead), channels::templates::list).done())
        .service(
            r("/channels/{channel_id}/templates/sync").post(Rest(A::ChannelsWrite), channels::templates::sync).done(),
        )
        .service(
            r("/messages")
                .get(Rest(A::MessagesRead), messages::list::list)
                .post(Rest(A::MessagesWrite), messages::create::create)
                .done(),
        )
        .service(r("/messages/{message_id}").get(Rest(A::MessagesRead), messages::get::get).done())
        .service(r("/threads").get(Rest(A::ThreadsRead), handlers::threads::list::list).done())
        .service(
            r("/contacts")
                .get(Rest(A::ContactsRead), handlers::contacts::list::list)
                .post(Rest(A::ContactsWrite), handlers::contacts::create::create)
                .done(),
        )
        .service(
            r("/contacts/{contact_id}")
                .get(Rest(A::ContactsRead), handlers::contacts::get::get)
                .patch(Rest(A::ContactsWrite), handlers::contacts::update::update)
                .delete(Rest(A::ContactsErase), handlers::contacts::delete::delete)
                .done(),
        )
        .service(
            r("/threads/{thread_id}")
                .get(Rest(A::ThreadsRead), handlers::threads::get::get)
                .patch(Rest(A::ThreadsWrite), handlers::threads::update::update)
                .done(),
        )
        .service(r("/threads/{thread_id}/labels").put(Rest(A::ThreadsWrite), handlers::threads::labels::set).done())
        .service(
            r("/labels")
                .get(Rest(A::LabelsRead), labels::list::list)
                .post(Rest(A::LabelsWrite), labels::create::create)
                .done(),
        )
        .service(
            r("/labels/{label_id}")
                .patch(Rest(A::LabelsWrite), labels::update::update)
                .delete(Rest(A::LabelsWrite), labels::delete::delete)
                .done(),
        )
        .service(
            r("/sla-policies")
                .get(Rest(A::SlaPoliciesManage), handlers::sla_policies::list::list)
                .post(Rest(A::SlaPoliciesManage), handlers::sla_policies::create::create)
                .done(),
        )
        .service(
            r("/sla-policies/{policy_id}")
                .patch(Rest(A::SlaPoliciesManage), handlers::sla_policies::update::update)
                .delete(Rest(A::SlaPoliciesManage), handlers::sla_policies::delete::delete)
                .done(),
        )
        .service(
            r("/teams")
                .get(Rest(A::TeamsRead), teams::list::list)
                .post(Rest(A::TeamsWrite), teams::create::create)
                .done(),
        )
        .service(
            r("/teams/{team_id}")
                .get(Rest(A::TeamsRead), teams::get::get)
                .patch(Rest(A::TeamsWrite), teams::update::update)
                .delete(Rest(A::TeamsWrite), teams::delete::delete)
                .done(),
        )
        .service(
            r("/business-hours")
                .get(Rest(A::BusinessHoursRead), handlers::business_hours::get::get)
                .put(Rest(A::BusinessHoursWrite), handlers::business_hours::put::put)
                .done(),
        )
        .service(r("/reports/conversations").get(Rest(A::ReportsRead), handlers::reports::conversations::get).done())
        .service(
            r("/reports/conversations.csv").get(Rest(A::ReportsRead), handlers::reports::conversations_csv::get).done(),
        )
        .service(r("/ai-agents").get(Rest(A::AiAgentsRead), ai_agents::list::list).done())
        .service(r("/ai-agents/{agent_id}").get(Rest(A::AiAgentsRead), ai_agents::get::get).done())
        .service(
            r("/users")
                .get(Rest(A::MembersRead), users::list::list)
                .post(Rest(A::MembersManage), users::create::create)
                .done(),
        )
        .service(
            r("/users/{user_id}")
                .get(Rest(A::MembersRead), users::get::get)
                .patch(Rest(A::MembersUpdate), users::update::update)
                .delete(Rest(A::MembersManage), users::delete::delete)
                .done(),
        )
        .service(webhook_resources("/v1", Rest))
        .service(r("/events").get(Rest(A::EventsRead), handlers::events::list::list).done())
        // The catalogue destinations subscribe to: read with the webhooks (the same schemas are in
        // the public /v1/openapi.json, so this guards nothing secret; it keeps one rule per route).
        .service(r("/event-types").get(Rest(A::WebhooksRead), handlers::events::types::list).done())
}

/// The settings API of one workspace, in ONE scope for the same reason as `/v1`. The middleware
/// makes every request a member's (login token or settings session) before its handler runs;
/// each route then asks the policy.
fn settings_api() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    use Access::Settings as S;
    let r = |path| res("/api/workspaces/{workspace_id}", path);
    web::scope("/api/workspaces/{workspace_id}")
        .wrap(from_fn(crate::authentication::member::authenticate_members))
        .service(
            r("/api-keys")
                .get(S(A::ApiKeysRead), api_keys::list::list)
                .post(S(A::ApiKeysCreate), api_keys::create::create)
                .done(),
        )
        .service(r("/api-keys/{key_id}").delete(S(A::ApiKeysWrite), api_keys::delete::delete).done())
        .service(r("/api-keys/{key_id}/revoke").post(S(A::ApiKeysWrite), api_keys::revoke::revoke).done())
        // A roll mints the successor: the creation's rule (admins, `advanced`).
        .service(r("/api-keys/{key_id}/roll").post(S(A::ApiKeysCreate), api_keys::roll::roll).done())
        .service(webhook_resources("/api/workspaces/{workspace_id}", S))
}

/// The webhook destinations' resources in the scope `scope`: the same paths, handlers and policy
/// actions on `/v1` (`Access::Rest`) and on the settings API (`Access::Settings`); the handlers
/// read the one caller either surface authenticated.
fn webhook_resources(scope: &str, access: fn(A) -> Access) -> Vec<Resource> {
    let r = |path| res(scope, path);
    let (read, write) = (access(A::WebhooksRead), access(A::WebhooksWrite));
    vec![
        r("/webhooks").get(read, webhooks::list::list).post(write, webhooks::create::create).done(),
        r("/webhooks/{webhook_id}")
            .get(read, webhooks::get::get)
            .patch(write, webhooks::update::update)
            .delete(write, webhooks::delete::delete)
            .done(),
        r("/webhooks/{webhook_id}/secret").get(write, webhooks::secret::reveal).done(),
        r("/webhooks/{webhook_id}/secret/rotate").post(write, webhooks::rotate::rotate).done(),
        r("/webhooks/{webhook_id}/deliveries").get(read, webhooks::deliveries::list).done(),
        r("/webhooks/{webhook_id}/stats").get(read, webhooks::stats::stats).done(),
        r("/webhooks/{webhook_id}/deliveries/{delivery_id}/retry").post(write, webhooks::retry::retry).done(),
        r("/webhooks/{webhook_id}/test").post(write, webhooks::test::send).done(),
        r("/webhooks/{webhook_id}/replay").post(write, webhooks::replay::replay).done(),
    ]
}

/// The assistant's endpoints (`docs/contract.md`, "Assistant"): members, and API keys with `assistant:read`. The check
/// is per route ([`Access::Assistant`]), so that GET and DELETE on the MCP endpoint, which have
/// no route, answer 405 as the transport requires. Every counted request gets the rate-limit
/// headers.
fn assistant_routes() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    use Access::Assistant;
    let r = |path| res("/workspaces/{workspace_id}/co-admin", path);
    web::scope("/workspaces/{workspace_id}/co-admin")
        .wrap(from_fn(crate::authentication::assistant::rate_headers))
        .wrap(from_fn(handlers::oauth::challenge::resource_metadata_hint))
        .service(r("/tools/execute").post(Assistant, assistant::execute::execute).done())
        .service(r("/capabilities").get(Assistant, assistant::capabilities::capabilities).done())
        .service(r("/mcp").post(Assistant, assistant::mcp::post).done())
}

/// wms as the OAuth authorization server of MCP clients (`docs/oauth.md`). Public: the
/// discovery documents are public by design, registration is open (RFC 7591), the token endpoint
/// checks the code or refresh token it is given, and the authorization endpoint signs the member
/// in itself (its consent page is outside the pages' scope for its own Content-Security-Policy).
fn oauth_routes() -> Vec<Resource> {
    use crate::handlers::oauth::{metadata, register, token};
    use crate::pages::oauth::authorize;
    use Access::Public;
    // Browser-based clients preflight the discovery documents, registration and tokens (CORS).
    vec![
        res("", "/.well-known/oauth-authorization-server")
            .get(Public, metadata::authorization_server)
            .preflight()
            .done(),
        res("", "/.well-known/oauth-protected-resource/workspaces/{workspace_id}/co-admin/mcp")
            .get(Public, metadata::protected_resource)
            .preflight()
            .done(),
        res("", "/oauth/register").post(Public, register::register).preflight().done(),
        res("", "/oauth/token").post(Public, token::token).preflight().done(),
        res("", "/oauth/authorize").get(Public, authorize::show).post(Public, authorize::decide).done(),
    ]
}

/// The settings web app (`crate::pages`): HTML pages, their form actions and embedded assets. The
/// scope has no prefix, so it is registered after every other scope; its middleware adds the
/// security headers and refuses cross-site state changes; each route asks the policy.
fn pages() -> actix_web::Scope<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    use crate::pages::{
        analytics, api_keys as keys, assets, audit_log, invitation, login, logout, members, password_reset, rest_api,
        sla_policies as sla, webhooks as hooks,
    };
    use Access::{Page as P, Public};
    let r = |path| res("", path);
    const HOOKS: &str = "/settings/integrations/webhooks";
    let hook = |path: &str| res("", &format!("{HOOKS}{path}"));
    web::scope("")
        .wrap(from_fn(crate::pages::guard::guard))
        // The home page redirects to the settings, which ask for a session themselves.
        .service(r("/").get(Public, crate::pages::home).done())
        .service(r("/assets/app.css").get(Public, assets::css).done())
        .service(r("/assets/app.js").get(Public, assets::js).done())
        .service(r("/assets/icon.svg").get(Public, assets::icon).done())
        .service(r("/login").get(Public, login::show).post(Public, login::submit).done())
        .service(r("/login/workspace").get(Public, login::choose).post(Public, login::chosen).done())
        .service(r("/logout").post(Public, logout::logout).done())
        // Public: the one-time token in the path is the credential.
        .service(r("/invitations/{token}").get(Public, invitation::show).post(Public, invitation::accept).done())
        .service(r("/password-reset").get(Public, password_reset::ask).post(Public, password_reset::asked).done())
        .service(
            r("/password-reset/{token}").get(Public, password_reset::show).post(Public, password_reset::choose).done(),
        )
        .service(
            r("/settings/workspace/api-keys")
                .get(P(A::ApiKeysRead), keys::page::show)
                .post(P(A::ApiKeysCreate), keys::create::create)
                .done(),
        )
        .service(
            r("/settings/workspace/api-keys/{key_id}/revoke").post(P(A::ApiKeysWrite), keys::revoke::revoke).done(),
        )
        .service(
            r("/settings/workspace/api-keys/{key_id}/delete").post(P(A::ApiKeysWrite), keys::delete::delete).done(),
        )
        .service(r("/settings/workspace/api-keys/{key_id}/roll").post(P(A::ApiKeysCreate), keys::roll::roll).done())
        .service(
            r("/settings/workspace/members")
                .get(P(A::MembersRead), members::show)
                .post(P(A::MembersManage), members::add)
                .done(),
        )
        .service(r("/settings/workspace/members/{user_id}").post(P(A::MembersManage), members::change).done())
        .service(r("/settings/workspace/teams").get(P(A::TeamsRead), crate::pages::teams::show).done())
        .service(r("/settings/workspace/teams/{team_id}").post(P(A::TeamsWrite), crate::pages::teams::change).done())
        .service(r("/settings/workspace/audit-log").get(P(A::AuditRead), audit_log::show).done())
        .service(r("/settings/workspace/rest-api").get(P(A::RestReferenceRead), rest_api::show).done())
        .service(r("/settings/workspace/channels").get(P(A::ChannelsRead), crate::pages::channels::show).done())
        .service(
            r("/settings/workspace/business-hours")
                .get(P(A::BusinessHoursRead), crate::pages::business_hours::show)
                .post(P(A::BusinessHoursWrite), crate::pages::business_hours::save)
                .done(),
        )
        .service(
            r("/settings/workspace/sla-policies")
                .get(P(A::SlaPoliciesManage), sla::show)
                .post(P(A::SlaPoliciesManage), sla::create)
                .done(),
        )
        .service(r("/settings/workspace/sla-policies/{policy_id}").post(P(A::SlaPoliciesManage), sla::update).done())
        .service(
            r("/settings/workspace/sla-policies/{policy_id}/delete").post(P(A::SlaPoliciesManage), sla::delete).done(),
        )
        .service(r("/settings/workspace/reports").get(P(A::ReportsRead), crate::pages::reports::page::show).done())
        .service(
            r("/settings/workspace/reports/conversations.csv")
                .get(P(A::ReportsRead), crate::pages::reports::export::csv)
                .done(),
        )
        .service(
            hook("").get(P(A::WebhooksRead), hooks::list::show).post(P(A::WebhooksWrite), hooks::create::create).done(),
        )
        .service(
            hook("/{webhook_id}")
                .get(P(A::WebhooksRead), hooks::detail::show)
                .post(P(A::WebhooksWrite), hooks::update::update)
                .done(),
        )
        .service(hook("/{webhook_id}/active").post(P(A::WebhooksWrite), hooks::active::set_active).done())
        .service(hook("/{webhook_id}/delete").post(P(A::WebhooksWrite), hooks::delete::delete).done())
        .service(hook("/{webhook_id}/secret").post(P(A::WebhooksWrite), hooks::secret::reveal).done())
        .service(hook("/{webhook_id}/secret/rotate").post(P(A::WebhooksWrite), hooks::secret::rotate).done())
        .service(hook("/{webhook_id}/test").post(P(A::WebhooksWrite), hooks::test::send).done())
        .service(hook("/{webhook_id}/replay").post(P(A::WebhooksWrite), hooks::replay::replay).done())
        .service(
            hook("/{webhook_id}/deliveries/{delivery_id}/retry").post(P(A::WebhooksWrite), hooks::retry::retry).done(),
        )
        .service(
            r("/settings/account/connected-apps")
                .get(P(A::ConnectedApps), crate::pages::oauth::connected_apps::show)
                .done(),
        )
        .service(
            r("/settings/account/connected-apps/{grant_id}/revoke")
                .post(P(A::ConnectedApps), crate::pages::oauth::connected_apps::revoke)
                .done(),
        )
        .service(r("/analytics").get(P(A::AnalyticsRead), analytics::page::show).done())
        .service(r("/analytics/daily.csv").get(P(A::AnalyticsRead), analytics::export::daily).done())
        .service(r("/analytics/top-countries.csv").get(P(A::AnalyticsRead), analytics::export::countries).done())
        // The product documentation is public, like a help centre.
        .service(r("/docs").get(Public, crate::pages::docs::index).done())
        .service(r("/docs/{slug}").get(Public, crate::pages::docs::page).done())
}
