//! Progress on long commands. A bar on stderr when it is a terminal; when it is not (a log file,
//! CI), indicatif draws nothing and the command's summary line is the whole story.

use std::time::Duration;

use adapters_postgres::seed::SeedProgress;
use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting `total` `unit`s (`messages`, `pages`).
pub fn bar(total: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let template = format!("  {{spinner}} {{msg:<10}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} ({{elapsed}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    // Ticks on its own while a long SQL statement runs, so the spinner shows the command is alive.
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Feeds the seed generator's progress into `bar` (whose length is the messages to write).
pub fn seed_observer(bar: &ProgressBar) -> impl Fn(SeedProgress) + Send + Sync {
    let bar = bar.clone();
    move |p| match p {
        SeedProgress::Step(step) => bar.set_message(step),
        SeedProgress::Messages(n) => bar.set_position(n.min(bar.length().unwrap_or(n))),
    }
}
