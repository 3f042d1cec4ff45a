//! One module per subcommand.

mod dev;
mod docs;
mod listen;
mod migrate;
mod secrets;
mod seed;
mod serve;
mod workspace;

use std::time::Duration;

use adapters_postgres::Db;

use crate::cli::{Command, DocsCommand, SecretsCommand, SeedCommand, WorkspaceCommand};
use crate::config::{SettingError, Settings};
use crate::CommandError;

pub use secrets::{rotate as rotate_secrets, Rotation};
pub use seed::{seed_demo, DemoCredentials};

/// Runs a subcommand.
///
/// # Errors
/// [`CommandError::Setting`] for configuration problems (exit 2), else [`CommandError::Failed`].
pub async fn run(command: Command, settings: Settings) -> Result<(), CommandError> {
    match command {
        Command::Serve(args) => serve::run(settings, args).await,
        Command::Dev(args) => dev::run(settings, args).await,
        Command::Migrate(args) => migrate::run(settings, args).await,
        Command::Workspace(WorkspaceCommand::Create(args)) => workspace::create(settings, args).await,
        Command::Workspace(WorkspaceCommand::SetPlan(args)) => workspace::set_plan(settings, args).await,
        Command::Workspace(WorkspaceCommand::AddMember(args)) => workspace::add_member(settings, args).await,
        Command::Seed(SeedCommand::Demo(args)) => seed::demo(settings, args).await,
        Command::Seed(SeedCommand::Scale(args)) => seed::scale(settings, args).await,
        Command::Docs(DocsCommand::Ingest(args)) => docs::ingest(settings, args).await,
        Command::Docs(DocsCommand::Eval(args)) => docs::eval(settings, args).await,
        Command::Listen(args) => listen::run(args).await,
        Command::Secrets(SecretsCommand::RotateKey(args)) => secrets::rotate_key(settings, args).await,
        Command::DevCluster(args) => dev::cluster(args),
    }
}

/// The configured database URL, or a setting error naming it.
fn database_url(settings: &Settings) -> Result<String, SettingError> {
    settings.database.url.clone().ok_or_else(|| SettingError {
        setting: "database.url".into(),
        message: "no database configured: set DATABASE_URL (or WMS__DATABASE__URL)".into(),
    })
}

/// Connects for migrations: to `database.migrate_url` when set (the direct URL next to a
/// PgBouncer one), else to `database.url`.
async fn connect_for_migrations(settings: &Settings) -> Result<(Db, String), CommandError> {
    let url = match &settings.database.migrate_url {
        Some(direct) => direct.clone(),
        None => database_url(settings)?,
    };
    let db = crate::wiring::connect(settings, &url, Duration::from_secs(5)).await?;
    Ok((db, url))
}

/// Connects for a one-off command: a few seconds of patience, not the server's.
async fn connect_for_command(settings: &Settings) -> Result<(Db, String), CommandError> {
    let url = database_url(settings)?;
    let db = crate::wiring::connect(settings, &url, Duration::from_secs(5)).await?;
    Ok((db, url))
}
