//! Every route's entry in the access policy, and the one place the HTTP adapter asks the domain's
//! policy ([`domain::access::authorize`]) before a handler runs.
//!
//! Routes are registered through [`guarded`], which needs an [`Access`]: a route cannot exist
//! without an entry. Each registration is also recorded ([`registered`]) so the access walk test
//! calls every route with every kind of caller, and `docs/access.md` lists them ([`document`]).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{from_fn, Next};
use actix_web::{HttpMessage, ResponseError, Route};
use domain::access::{authorize, Action, Denied};

use crate::authentication::admitted::Unconfirmed;
use crate::authentication::Authenticated;
use crate::error::ApiError;
use crate::pages::session::{signed, Signed};
use crate::pages::PageError;
use crate::rate_limit::{add_rate_headers, count_in_window};

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone: sign-in, sign-out, health, assets, the API document, platform callbacks (which
    /// check their own signatures).
    Public,
    /// `/v1`: an API key within its scopes or a member's token within their role.
    Rest(Action),
    /// The settings API: a member (login token or settings session) within their role.
    Settings(Action),
    /// The assistant's endpoints: a member, or an API key with `assistant:read`.
    Assistant,
    /// A settings page: the signed-in member within their role.
    Page(Action),
}

impl Access {
    /// The policy action behind the entry, if any.
    pub fn action(self) -> Option<Action> {
        match self {
            Access::Public => None,
            Access::Rest(a) | Access::Settings(a) | Access::Page(a) => Some(a),
            Access::Assistant => Some(Action::AssistantUse),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Access::Public => "public",
            Access::Rest(_) => "REST API",
            Access::Settings(_) => "settings API",
            Access::Assistant => "assistant",
            Access::Page(_) => "page",
        }
    }
}

/// A registered route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteEntry {
    /// `GET`, `POST`, …
    pub method: &'static str,
    /// The full path pattern (`/v1/channels/{channel_id}`).
    pub path: String,
    /// Its entry in the policy.
    pub access: Access,
}

type Registry = Mutex<BTreeMap<(String, &'static str), Access>>;

fn registry() -> &'static Registry {
    static ROUTES: OnceLock<Registry> = OnceLock::new();
    ROUTES.get_or_init(Mutex::default)
}

/// Every route of the service with its entry: the routes are configured once (on an app that
/// is never served) so the list is whole whether or not a server runs in this process.
pub fn registered() -> Vec<RouteEntry> {
    drop(actix_web::App::new().configure(crate::routes::configure));
    let routes = registry().lock().unwrap_or_else(PoisonError::into_inner);
    routes.iter().map(|((path, method), access)| RouteEntry { method, path: path.clone(), access: *access }).collect()
}

/// Registers `route` (answering `method` at the full `path`) under `access`: the policy is
/// asked before its handler runs.
///
/// # Panics
/// When one method and path get two different entries (a wiring bug, found at start).
pub fn guarded(route: Route, method: &'static str, path: String, access: Access) -> Route {
    {
        let mut routes = registry().lock().unwrap_or_else(PoisonError::into_inner);
        let key = (path, method);
        if let Some(previous) = routes.insert(key.clone(), access) {
            assert_eq!(previous, access, "{method} {} has two access entries", key.0);
        }
    }
    if access == Access::Public {
        return route;
    }
    route.wrap(from_fn(move |req: ServiceRequest, next: Next<BoxBody>| enforce(access, req, next)))
}

/// Asks the policy for the caller the surface's authentication left in the request.
async fn enforce(
    access: Access,
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    // A request running ahead of its credential check (`authentication::v1`) goes on only where
    // the action merely reads; anywhere else it waits, and a refused request never reaches the
    // handler (its answer is the check's refusal, whatever is returned here).
    let unconfirmed = req.extensions_mut().remove::<Unconfirmed>();
    if let Some(unconfirmed) = unconfirmed {
        let ahead = matches!(access, Access::Rest(action) if action.only_reads());
        if !ahead && !unconfirmed.admitted().await {
            return Ok(req.error_response(ApiError::InvalidToken("refused by its credential check".into())));
        }
    }
    let verdict = match access {
        Access::Public => Ok(()),
        // The scope's authentication (`/v1`, the settings API) left the caller.
        Access::Rest(action) | Access::Settings(action) => match Authenticated::of(req.request()) {
            Some(caller) => authorize(&caller, action).map_err(ApiError::from),
            None => Err(ApiError::Internal(anyhow::anyhow!("a route outside its surface's authenticated scope"))),
        },
        Access::Assistant => match crate::authentication::assistant::resolve_assistant_caller(req.request()).await {
            Ok(caller) => authorize(&caller, Action::AssistantUse).map_err(ApiError::from),
            Err(e) => Err(e),
        },
        Access::Page(action) => return enforce_page(action, req, next).await,
    };
    match verdict {
        Ok(()) => Ok(next.call(req).await?.map_into_boxed_body()),
        Err(e) => Ok(req.error_response(e)),
    }
}

/// Pages: the signed-in member, asked of the policy. A feature the plan does not include reaches
/// its handler marked ([`Signed::plan_required`]): its page explains the plan, and its actions
/// refuse with that explanation (403). Any other refusal is a 403 page here.
async fn enforce_page(
    action: Action,
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let mut s: Signed = match signed(req.request()).await {
        Ok(s) => s,
        Err(e) => return Ok(req.error_response(e)),
    };
    // A page, its form actions and its CSV exports count in the member's hourly window like
    // their `/v1` requests (`docs/rate-limit.md`), with the same headers.
    let counted = count_in_window(req.request(), s.caller.workspace_id, s.user_id).await;
    if let Err(e) = counted {
        let e = match e {
            ApiError::RateLimited { retry_after } => PageError::RateLimited { retry_after },
            other if other.status_code() == actix_web::http::StatusCode::SERVICE_UNAVAILABLE => {
                PageError::Unavailable(anyhow::anyhow!(other.to_string()))
            }
            other => PageError::Internal(anyhow::anyhow!(other.to_string())),
        };
        let mut res = req.error_response(e);
        add_rate_headers(&mut res);
        return Ok(res);
    }
    match authorize(&s.caller, action) {
        Ok(()) => {}
        Err(Denied::PlanRequired { required, .. }) => s.plan_required = Some(required),
        Err(denied) => {
            let mut res = req.error_response(PageError::from(denied));
            add_rate_headers(&mut res);
            return Ok(res);
        }
    }
    req.extensions_mut().insert(s);
    let mut res = next.call(req).await?.map_into_boxed_body();
    add_rate_headers(&mut res);
    Ok(res)
}

impl From<Denied> for ApiError {
    fn from(d: Denied) -> Self {
        match d {
            Denied::PlanRequired { required, current } => {
                ApiError::PlanRequired { required: required.to_string(), current: current.to_string() }
            }
            Denied::Forbidden(why) => ApiError::Forbidden(why.to_owned()),
            Denied::InsufficientScope(scope) => ApiError::InsufficientScope(scope),
        }
    }
}

impl From<Denied> for PageError {
    fn from(d: Denied) -> Self {
        match d {
            Denied::Forbidden(_) => {
                PageError::Forbidden("only workspace admins can do this; ask an admin of your workspace".into())
            }
            other => PageError::Forbidden(other.to_string()),
        }
    }
}

/// `docs/access.md`: the policy table, then every route with its entry. A test keeps the file
/// equal to this.
pub fn document() -> String {
    let mut out = String::from(
        "# Access: who may do what\n\n\
         <!-- Generated from the policy table (`crates/domain/src/access/policy.rs`) and the routes \
         (`crates/adapters-http/src/routes.rs`); `WMS_UPDATE_DOCS=1 cargo nextest run -p app --test api \
         access_document` rewrites it. Do not edit by hand. -->\n\n\
         Every allow or deny of wms comes from one table in the domain. A request is checked in this \
         order: the workspace's plan (403 `plan_required`; the REST API needs `advanced` whatever the \
         action, and so does an API key on every surface, the assistant's endpoints included, while \
         members keep the assistant on every plan), then an API key's scope (403 `insufficient_scope`, with `WWW-Authenticate: Bearer \
         realm=\"wms\", error=\"insufficient_scope\", scope=\"…\"`) or a member's role (403 \
         `forbidden`). Another workspace's resource is 404 `not_found`. `X:write` implies `X:read`; a \
         key created without `scopes` has every scope.\n\n\
         Rules that depend on the data, kept by the members service: nobody changes their own role or \
         deactivates themselves; a member may rename themselves; the last active admin cannot be \
         demoted, deactivated or removed (409 `conflict`).\n\n## The policy table\n\n",
    );
    out.push_str(&domain::access::matrix());
    out.push_str(
        "\n## Assistant tools\n\nEvery tool needs `assistant.use`. A tool that shows data not every assistant caller \
         may read needs that data's action too, decided the same way (an app connected over OAuth holds \
         `assistant:read`, which covers every tool: the member's role decides). A caller refused a tool gets 403 \
         from the execute endpoint and a result with `isError` over MCP.\n\n",
    );
    out.push_str(&domain::access::assistant_tools_matrix());
    out.push_str(
        "\n## Parts of a record some readers do not see\n\nA webhook destination's static `headers` \
         values (`GET /v1/webhooks`, `GET /v1/webhooks/{webhook_id}`, their settings API twins and the \
         destination's settings page) are shown only to callers allowed `webhooks.write`, who manage \
         destinations and set the values; every other reader (an API key with `webhooks:read` only) gets \
         each name with an empty value (`domain::access::sees_webhook_header_values`). The assistant's \
         `list_webhooks` shows no headers, and to callers without `webhooks.read` the URLs only as origin \
         and path.\n",
    );
    out.push_str("\n## Every route\n\n| method | path | surface | action |\n|---|---|---|---|\n");
    for e in registered() {
        let action = e.access.action().map_or_else(|| "—".to_owned(), |a| format!("`{a}`"));
        out.push_str(&format!("| {} | `{}` | {} | {action} |\n", e.method, e.path, e.access.label()));
    }
    out
}
