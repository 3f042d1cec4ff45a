#![doc = include_str!("../README.md")]

pub mod assistant;
pub mod auth_state;
pub mod cli;
pub mod commands;
pub mod config;
pub mod connectors;
pub mod dev_db;
pub mod docs_search;
pub mod key_notices;
pub mod lifecycle;
pub mod mail;
pub mod pages;
pub mod platform;
pub mod progress;
pub mod prometheus;
pub mod report_backfill;
pub mod report_rollup;
pub mod retention;
pub mod secrets;
pub mod sla;
pub mod telemetry;
pub mod timer_loop;
pub mod webhooks;
pub mod wiring;

/// How a command failed, which decides the exit code.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A setting is missing or invalid: exit code 2.
    #[error(transparent)]
    Setting(#[from] config::SettingError),
    /// A command-line argument is invalid (found after parsing, like a malformed e-mail): exit
    /// code 2, as clap's own usage errors.
    #[error("{0}")]
    Usage(String),
    /// Anything else: exit code 1.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> Self {
        CommandError::Failed(e.into())
    }
}
