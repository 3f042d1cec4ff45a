//! `wms`: the Workspace Messaging Service.

use std::process::ExitCode;

use app::cli::Cli;
use app::config::Settings;
use app::CommandError;
use clap::Parser;

/// mimalloc rather than the system's malloc: a request allocates and frees many small blocks
/// (futures, headers, rows, JSON), and glibc's allocator was the largest single cost of an
/// authenticated `/v1` request in the profile (docs/benchmarks.md, "Authentication and the rate
/// limit").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with code 2.
    let cli = Cli::parse();
    let settings = match Settings::load(cli.config.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("wms: {e}");
            return ExitCode::from(2);
        }
    };
    app::telemetry::init(&settings, &cli.command);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("wms: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(app::commands::run(cli.command, settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CommandError::Setting(e)) => {
            eprintln!("wms: {e}");
            ExitCode::from(2)
        }
        Err(CommandError::Usage(e)) => {
            eprintln!("wms: {e}");
            ExitCode::from(2)
        }
        Err(CommandError::Failed(e)) => {
            eprintln!("wms: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
