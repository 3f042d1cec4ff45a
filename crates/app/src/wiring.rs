//! Builds the application from settings: database, adapters, state and the HTTP server.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::{from_fn, Condition};
use actix_web::{web, App, HttpServer};
use adapters_http::middleware::request_id::request_id;
use adapters_http::middleware::request_metrics;
use adapters_http::{AppState, HealthCheck};
use adapters_postgres::replica::Replica;
use adapters_postgres::{Db, Statements};

use crate::config::Settings;

/// How connections to `url` send statements: unnamed through PgBouncer (`database.pgbouncer`),
/// which may keep no prepared statements between transactions (1.18), unless it is said to keep
/// them (`database.pgbouncer_prepared_statements`); prepared on the direct `database.migrate_url`.
pub fn statements(settings: &Settings, url: &str) -> Statements {
    let direct = settings.database.migrate_url.as_deref() == Some(url);
    if settings.database.pgbouncer && !settings.database.pgbouncer_prepared_statements && !direct {
        Statements::Unnamed
    } else {
        Statements::Prepared
    }
}

/// Connects to `url`, retrying with exponential backoff (capped at 5 s) for at most `patience`.
///
/// # Errors
/// When the database is still unreachable after `patience`.
pub async fn connect(settings: &Settings, url: &str, patience: Duration) -> anyhow::Result<Db> {
    let db = Db::with_statements(
        url,
        settings.database.pool_size,
        settings.database.acquire_timeout(),
        statements(settings, url),
    )?;
    let deadline = tokio::time::Instant::now() + patience;
    let mut delay = Duration::from_millis(200);
    loop {
        match db.conn().await {
            Ok(_) => return Ok(db),
            Err(e) if tokio::time::Instant::now() + delay < deadline => {
                tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "database not reachable yet");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "cannot reach the database at {} after {} s: {e}",
                    redact_url(url),
                    patience.as_secs()
                ))
            }
        }
    }
}

/// `url` without its password, for messages and logs.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else { return url.to_owned() };
    let rest = &url[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) if rest[..at].contains(':') => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!("{}{}:***@{}", &url[..scheme_end], user, &rest[at + 1..])
        }
        Some(_) => url.to_owned(),
        None => url.to_owned(),
    }
}

/// Readiness: the database answers and has every embedded migration. The replica's state is
/// reported, never a reason to be unready (the primary serves its reads meanwhile).
struct DbHealth {
    db: Db,
    latest: String,
    replica: Option<Arc<Replica>>,
}

#[async_trait::async_trait]
impl HealthCheck for DbHealth {
    fn replica(&self) -> Option<serde_json::Value> {
        self.replica.as_ref().map(|r| {
            serde_json::json!({
                "state": r.state().as_str(),
                "lag_ms": r.lag_ms(),
                "max_lag_ms": u64::try_from(r.max_lag().as_millis()).unwrap_or(u64::MAX),
            })
        })
    }

    fn wait_bound(&self) -> Option<std::time::Duration> {
        Some(self.db.acquire_timeout())
    }

    async fn answers(&self) -> bool {
        self.db.answers().await
    }

    async fn ready(&self) -> Result<(), String> {
        if !self.db.ping().await {
            return Err("the database is unreachable".into());
        }
        if !adapters_postgres::migrate::is_current(&self.db, &self.latest).await {
            return Err("the database schema is not current: run `wms migrate`".into());
        }
        Ok(())
    }
}

/// The members use cases on `db`, for a command (a hashing pool of its own, of the configured size).
pub fn members_service(settings: &Settings, db: &Db) -> domain::members::MembersService {
    members_service_hashing(settings, db, crate::auth_state::hasher(settings))
}

/// The members use cases on `db`, hashing with `hasher`: the server passes its one pool, so
/// invitations accepted count in `auth.max_concurrent_hashes` with sign-ins and resets.
fn members_service_hashing(
    settings: &Settings,
    db: &Db,
    hasher: Arc<dyn domain::common::ports::PasswordHasher>,
) -> domain::members::MembersService {
    domain::members::MembersService::new(
        Arc::new(adapters_postgres::members::PgMemberRepository::new(db.clone())),
        hasher,
        Arc::new(crate::platform::OsRandom),
        Arc::new(crate::platform::SystemClock),
        crate::mail::site_url(settings),
        Arc::new(adapters_postgres::credentials::PgLoginThrottle::new(db.clone())),
        domain::auth::ThrottlePolicy::default(),
    )
}

/// The workspace use cases on `db` (the operator's CLI, the seeder, the tests' helpers).
pub fn workspace_service(db: &Db) -> domain::workspace::WorkspaceService {
    domain::workspace::WorkspaceService::new(
        Arc::new(adapters_postgres::PgWorkspaceRepository::new(db.clone())),
        Arc::new(crate::platform::Argon2Hasher::default()),
        Arc::new(crate::platform::OsRandom),
    )
}

/// The conversation reports over `db` (the primary, or the replica-reading handle).
pub fn reports(db: &Db) -> Arc<domain::reports::ReportsService> {
    Arc::new(domain::reports::ReportsService::new(
        Arc::new(adapters_postgres::reports::PgReports::new(db.clone())),
        Arc::new(crate::platform::SystemClock),
    ))
}

/// The read replica of `database.replica_url`, watched from now on; `None` without one.
///
/// # Errors
/// When its pool cannot be configured.
pub fn replica(settings: &Settings, primary: &Db) -> Result<Option<Arc<Replica>>, adapters_postgres::PoolError> {
    let Some(url) = &settings.database.replica_url else { return Ok(None) };
    let max_lag = std::time::Duration::from_millis(settings.database.max_replica_lag_ms);
    let replica = Replica::new(url, settings.database.pool_size, max_lag, statements(settings, url))?;
    replica.watch(primary.clone());
    Ok(Some(replica))
}

/// The handlers' shared state. With `database.replica_url`, the read-only work of docs/contract.md
/// ("Operations at scale": the assistant's tools, analytics pages and exports, documentation
/// search) reads from the replica while it keeps up; writes and `/v1` stay on the primary.
pub fn state(settings: &Settings, db: &Db) -> AppState {
    let replica = match replica(settings, db) {
        Ok(replica) => replica,
        Err(e) => {
            tracing::error!(error = %e, "the read replica is not used");
            None
        }
    };
    let reads = replica.as_ref().map_or_else(|| db.clone(), |r| db.reading_from(r));
    let pages = crate::pages::state(settings, db, &reads);
    // One cipher: what a channel seals, the callbacks check must open.
    let cipher = crate::secrets::wired_cipher(settings);
    let channels = Arc::new(adapters_postgres::channels::PgChannelRepository::new(db.clone()));
    let auth = crate::pages::with_sessions(crate::auth_state::auth_state(settings, db), &pages);
    let templates = crate::connectors::templates(settings, db);
    // The `/v1` reports read the primary, like every `/v1` read (a client that writes then reads
    // sees its write); the page's and the assistant's read the replica (`pages.reports`).
    let reports = reports(db);
    let replica_reports = pages.reports.clone();
    AppState {
        health: Arc::new(DbHealth {
            db: db.clone(),
            latest: adapters_postgres::migrate::latest_embedded_version(),
            replica,
        }),
        channels: Arc::new(
            domain::channels::ChannelsService::new(
                channels.clone(),
                cipher.clone(),
                crate::connectors::account_proof(settings),
            )
            .with_templates(templates.clone()),
        ),
        messages: Arc::new(domain::messaging::MessagingService::new(
            channels,
            Arc::new(adapters_postgres::messages::PgMessageRepository::new(db.clone())),
            Arc::new(adapters_postgres::templates::PgTemplates::new(db.clone())),
            Arc::new(crate::platform::SystemClock),
        )),
        members: Arc::new(members_service_hashing(settings, db, auth.hasher.clone())),
        password_resets: Arc::new(domain::accounts::PasswordResetService {
            repo: Arc::new(adapters_postgres::accounts::PgPasswordResets::new(db.clone())),
            throttle: auth.login_throttle.clone(),
            policy: auth.login.throttle,
            // The server's one pool (`auth.max_concurrent_hashes`), shared with sign-ins.
            hasher: auth.hasher.clone(),
            random: Arc::new(crate::platform::OsRandom),
            clock: Arc::new(crate::platform::SystemClock),
            site: crate::mail::site_url(settings),
        }),
        contacts: Arc::new(domain::contacts::ContactsService::new(Arc::new(
            adapters_postgres::contacts::PgContactRepository::new(db.clone()),
        ))),
        threads: Arc::new(domain::threads::ThreadsService::new(
            Arc::new(adapters_postgres::threads::PgThreadRepository::new(db.clone())),
            Arc::new(crate::platform::SystemClock),
        )),
        labels: Arc::new(domain::labels::LabelsService::new(Arc::new(
            adapters_postgres::labels::PgLabelRepository::new(db.clone()),
        ))),
        sla_policies: Arc::new(domain::sla::SlaPoliciesService::new(Arc::new(
            adapters_postgres::sla::PgSlaPolicyRepository::new(db.clone()),
        ))),
        teams: Arc::new(domain::teams::TeamsService::new(Arc::new(adapters_postgres::teams::PgTeamRepository::new(
            db.clone(),
        )))),
        business_hours: Arc::new(domain::business_hours::BusinessHoursService::new(Arc::new(
            adapters_postgres::business_hours::PgBusinessHours::new(db.clone()),
        ))),
        reports,
        ai_agents: Arc::new(domain::ai_agents::AiAgentsService::new(Arc::new(
            adapters_postgres::ai_agents::PgAiAgentRepository::new(db.clone()),
        ))),
        api_keys: Arc::new(domain::api_keys::ApiKeysService::new(
            auth.api_keys.clone(),
            auth.clock.clone(),
            auth.random.clone(),
        )),
        auth,
        pages,
        webhooks: crate::webhooks::service(settings, db),
        events: Arc::new(domain::events::EventsService {
            store: Arc::new(adapters_postgres::events::PgEventStore::new(db.clone())),
            clock: Arc::new(crate::platform::SystemClock),
        }),
        assistant: crate::assistant::state(settings, &reads, replica_reports),
        oauth: Arc::new(domain::oauth::OAuthService {
            store: Arc::new(adapters_postgres::oauth::PgOAuthStore::new(db.clone())),
            clock: Arc::new(crate::platform::SystemClock),
            random: Arc::new(crate::platform::OsRandom),
        }),
        callbacks: Arc::new(
            domain::connectors::CallbackService::new(
                Arc::new(adapters_postgres::connectors::PgConnectors::new(db.clone())),
                cipher,
                Arc::new(adapters_http::handlers::callbacks::work::OffThreadCallbackWork::default()),
                Arc::new(adapters_postgres::connectors::PgCallbackThrottle::new(db.clone())),
                Arc::new(crate::platform::SystemClock),
            )
            .with_templates(templates.clone()),
        ),
        templates,
        secret_scanning: Arc::new(domain::secret_scanning::SecretScanningService::new(
            Arc::new(adapters_outbound::github_keys::GithubKeysClient::new(&settings.secret_scanning.github_keys_url)),
            Arc::new(adapters_postgres::leaked_credentials::PgLeakedCredentialStore::new(
                db.clone(),
                crate::mail::site_url(settings),
            )),
            Arc::new(crate::platform::SystemClock),
        )),
    }
}

/// The HTTP server on `listener`. It ignores signals: [`stop_on_signal`] decides what they do.
///
/// Each worker thread adopts a pool of its own on `db` (`adapters_postgres::pool`): `http.workers`
/// pools of `database.pool_size / http.workers` connections (at least 2 each), next to the shared
/// pool that background work uses.
///
/// # Errors
/// When the listener cannot be used.
pub fn server(settings: &Settings, db: &Db, state: AppState, listener: TcpListener) -> std::io::Result<Server> {
    let workers = match settings.http.workers {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        n => n,
    };
    let per_worker = settings.database.pool_size.div_ceil(workers).max(2);
    let data = web::Data::new(state);
    let db = db.clone();
    // Requests are measured only when the metrics are served (`metrics.bind`).
    let measured = settings.metrics.bind.is_some();
    let server = HttpServer::new(move || {
        // Called on each worker's own thread, before it serves anything.
        if let Err(e) = db.adopt_thread(per_worker) {
            tracing::error!(error = %e, "this HTTP worker uses the shared database pool");
        }
        App::new()
            .app_data(data.clone())
            .wrap(from_fn(adapters_http::middleware::database_stall::bound))
            .wrap(Condition::new(measured, from_fn(request_metrics::record)))
            .wrap(from_fn(request_id))
            .configure(adapters_http::configure)
    })
    .workers(workers)
    .shutdown_timeout(settings.http.shutdown_timeout_secs)
    .disable_signals()
    .listen(listener)?;
    Ok(server.run())
}

/// SIGINT (Ctrl-C) and SIGTERM stop `server` gracefully: it stops accepting, lets requests in
/// flight finish within `http.shutdown_timeout_secs`, and its future resolves. A second signal
/// stops it at once. actix-web's own handling treats SIGINT as a forced stop (and logs "starting
/// forced shutdown" for an ordinary Ctrl-C), which is neither what happens nor what we want.
pub fn stop_on_signal(server: &Server) {
    use tokio::signal::unix::{signal, SignalKind};
    let handle = server.handle();
    // Registered now, not in the task: a signal that arrives before the task first runs must not
    // meet the default action (which ends the process on the spot).
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        tracing::error!("cannot listen for SIGINT and SIGTERM: stop the server with SIGKILL");
        return;
    };
    tokio::spawn(async move {
        let mut graceful = true;
        loop {
            let name = tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            };
            if graceful {
                tracing::info!(signal = name, "shutting down");
                let handle = handle.clone();
                tokio::spawn(async move { handle.stop(true).await });
                graceful = false;
            } else {
                tracing::warn!(signal = name, "second signal: stopping without waiting for requests in flight");
                handle.stop(false).await;
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{redact_url, statements, Settings, Statements};

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact_url("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
    }

    #[test]
    fn statements_are_unnamed_through_pgbouncer_unless_it_keeps_them_and_prepared_on_the_direct_url() {
        let mut s = Settings::defaults().expect("defaults");
        let (pooled, direct) = ("postgres://u@bouncer:6432/db", "postgres://u@db:5432/db");
        assert_eq!(statements(&s, pooled), Statements::Prepared, "a direct connection");
        s.database.pgbouncer = true;
        s.database.migrate_url = Some(direct.to_owned());
        assert_eq!(statements(&s, pooled), Statements::Unnamed, "any PgBouncer, 1.18 too");
        assert_eq!(statements(&s, direct), Statements::Prepared, "migrations on the direct URL");
        s.database.pgbouncer_prepared_statements = true;
        assert_eq!(statements(&s, pooled), Statements::Prepared, "a PgBouncer that keeps them");
    }
}
