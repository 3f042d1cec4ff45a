//! `wms serve`: the production server.

use std::net::TcpListener;
use std::time::Duration;

use anyhow::Context;

use crate::cli::ServeArgs;
use crate::config::{parse_bind, Settings};
use crate::CommandError;

pub(super) async fn run(settings: Settings, args: ServeArgs) -> Result<(), CommandError> {
    let url = super::database_url(&settings)?;
    let bind = args.bind.as_deref().or(settings.http.bind.as_deref()).unwrap_or("0.0.0.0:8080");
    let addr = parse_bind(if args.bind.is_some() { "--bind" } else { "http.bind" }, bind)?;
    let db =
        crate::wiring::connect(&settings, &url, Duration::from_secs(settings.database.connect_timeout_secs)).await?;
    if settings.database.migrate_on_start {
        for v in adapters_postgres::migrate::run_pending_locked(&db, &url).await? {
            tracing::info!(version = %v, "applied migration");
        }
    }
    let _cipher = crate::secrets::cipher(&settings, &db, true).await?;
    let listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    tracing::info!(%addr, "wms serve listening");
    crate::wiring::server(&settings, crate::wiring::state(&db), listener)?.await.context("server failed")?;
    tracing::info!("wms serve stopped");
    Ok(())
}
