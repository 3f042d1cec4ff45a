//! Logging with `tracing`: human-readable for people, JSON lines for `serve`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::cli::Command;
use crate::config::{LogFormat, Settings};

/// Installs the global subscriber. `RUST_LOG` overrides `log.level`.
pub fn init(settings: &Settings, command: &Command) {
    let default_format = if matches!(command, Command::Serve(_)) { LogFormat::Json } else { LogFormat::Human };
    let format = settings.log.format.unwrap_or(default_format);
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&settings.log.level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour(|| std::io::stderr().is_terminal()));
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(true).try_init(),
        LogFormat::Human => builder.with_target(false).try_init(),
    };
}

/// Colour only for a person at a terminal: a log file or a pipe gets plain text, and `NO_COLOR`
/// (<https://no-color.org>, any non-empty value) turns it off everywhere.
fn colour(is_terminal: impl FnOnce() -> bool) -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && is_terminal()
}

/// For tests: logs only when `TEST_LOG` is set, so failing tests can be rerun with output;
/// `TEST_LOG=1` logs everything from `debug` up, any other value is the filter (`TEST_LOG=warn`,
/// `TEST_LOG=app=debug`).
pub fn init_for_tests() {
    if let Some(filter) = std::env::var("TEST_LOG").ok().filter(|v| !v.is_empty()) {
        let filter = if filter == "1" { "debug".to_owned() } else { filter };
        let _ = tracing_subscriber::fmt().with_env_filter(EnvFilter::new(filter)).with_test_writer().try_init();
    }
}
