//! The `wms` command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use domain::workspace::PlanTier;

/// wms, the Workspace Messaging Service.
#[derive(Debug, Parser)]
#[command(name = "wms", version, about = "wms: the Workspace Messaging Service (REST API, webhooks, assistant tools)")]
pub struct Cli {
    /// A TOML configuration file (default: the WMS_CONFIG variable, if set).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the production server (needs DATABASE_URL or database.url).
    Serve(ServeArgs),
    /// Run locally with an embedded PostgreSQL cluster under .wms/ (or DATABASE_URL) and demo data.
    Dev(DevArgs),
    /// Apply pending database migrations.
    Migrate(MigrateArgs),
    /// Manage workspaces.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// Fill the database with generated data.
    #[command(subcommand)]
    Seed(SeedCommand),
    /// Ingest and evaluate the product documentation that `search_product_docs` searches.
    #[command(subcommand)]
    Docs(DocsCommand),
    /// Follow the events feed of a wms server and forward each event, signed, to a local URL.
    Listen(ListenArgs),
    /// Manage the key that encrypts secrets at rest.
    #[command(subcommand)]
    Secrets(SecretsCommand),
    /// Start or stop a private PostgreSQL cluster (used by scripts/test when no server is running).
    #[command(hide = true)]
    DevCluster(DevClusterArgs),
}

/// `wms secrets …`
#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Re-encrypt every secret at rest under a new key, in batches, while the service runs (see
    /// docs/secrets.md for the whole procedure). Reads with `secrets.encryption_key` and
    /// `secrets.previous_keys`; safe to run again.
    RotateKey(RotateKeyArgs),
}

/// Where `wms secrets rotate-key` reads the new key (the flag `--new-key` shows it in `ps`).
pub const NEW_KEY_ENV: &str = "WMS_NEW_ENCRYPTION_KEY";
/// Where `wms listen` reads its API key (the flag `--key` shows it in `ps`).
pub const API_KEY_ENV: &str = "WMS_API_KEY";

/// Whether `value` came from the command line rather than from the environment variable `env`
/// (clap lets the flag win, so a value that differs from the variable's is the flag's).
pub fn from_command_line(value: &str, env: &str) -> bool {
    std::env::var(env).ok().as_deref() != Some(value)
}

/// `wms secrets rotate-key`
#[derive(Debug, Args)]
pub struct RotateKeyArgs {
    /// The new key: base64 of 32 bytes (`openssl rand -base64 32`). Give it in the environment
    /// variable WMS_NEW_ENCRYPTION_KEY: a value on the command line is visible to every user of
    /// the machine in the process list (`ps`); the flag stays for scripts that accept that.
    #[arg(long, value_name = "BASE64", env = NEW_KEY_ENV, hide_env_values = true)]
    pub new_key: String,
    /// Secrets re-encrypted per transaction.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(i64).range(1..=10_000))]
    pub batch_size: i64,
}

/// `wms dev-cluster`
#[derive(Debug, Args)]
pub struct DevClusterArgs {
    /// `start` prints the maintenance database URL; `stop` stops the cluster.
    #[arg(value_parser = ["start", "stop"])]
    pub action: String,
    /// Where the cluster lives (`<DIR>/postgres`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: std::path::PathBuf,
}

/// `wms listen`: receive a workspace's events on your machine without a public URL.
#[derive(Debug, Args)]
pub struct ListenArgs {
    /// The wms server (`https://wms.example.com`; `/v1` is added when missing).
    #[arg(long, value_name = "URL")]
    pub api_url: String,
    /// An API key of the workspace with the `events:read` scope. Give it in the environment
    /// variable WMS_API_KEY: a value on the command line is visible to every user of the machine
    /// in the process list (`ps`); the flag stays for scripts that accept that.
    #[arg(long, value_name = "KEY", env = API_KEY_ENV, hide_env_values = true)]
    pub key: String,
    /// Where to POST each event (`http://localhost:3000/webhooks`).
    #[arg(long, value_name = "URL")]
    pub forward_to: String,
    /// Only these event types, comma-separated (default: all).
    #[arg(long, value_name = "TYPES", value_delimiter = ',')]
    pub events: Vec<String>,
    /// Where the cursor and signing secret are kept between runs (default: a file per server and
    /// key under $XDG_STATE_HOME/wms or ~/.local/state/wms).
    #[arg(long, value_name = "PATH")]
    pub state_file: Option<std::path::PathBuf>,
    /// How long to wait between polls when the feed has nothing new, in milliseconds (half a
    /// second by default: the feed shows an event within a second of its commit, and so does this).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub poll_interval_ms: u64,
}

/// `wms serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Listen address HOST:PORT (default 0.0.0.0:8080; also WMS__HTTP__BIND).
    #[arg(long, value_name = "HOST:PORT")]
    pub bind: Option<String>,
}

/// `wms dev`
#[derive(Debug, Args)]
pub struct DevArgs {
    /// Listen address HOST:PORT (default 127.0.0.1:8080; also WMS__HTTP__BIND).
    #[arg(long, value_name = "HOST:PORT")]
    pub bind: Option<String>,
}

/// `wms migrate`
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Revert the most recent migration instead of applying pending ones.
    #[arg(long)]
    pub revert: bool,
}

/// `wms workspace …`
#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Create a workspace with its admin user and membership.
    Create(CreateWorkspaceArgs),
    /// Change a workspace's plan tier.
    SetPlan(SetPlanArgs),
    /// Add a person to a workspace (a new account is invited unless --password is given).
    AddMember(AddMemberArgs),
}

/// `wms workspace add-member`
#[derive(Debug, Args)]
pub struct AddMemberArgs {
    /// The workspace's id.
    #[arg(long)]
    pub workspace_id: i64,
    /// Their e-mail; an existing account joins with its own password.
    #[arg(long)]
    pub email: String,
    /// Their role: admin or agent.
    #[arg(long)]
    pub role: String,
    /// Their name in this workspace (default: the e-mail's local part).
    #[arg(long)]
    pub name: Option<String>,
    /// A password for a new account (8 to 256 characters); without it, a one-time invitation
    /// link is printed.
    #[arg(long)]
    pub password: Option<String>,
    /// Print `{"user_id", "invitation_url"}` as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `wms workspace create`
#[derive(Debug, Args)]
pub struct CreateWorkspaceArgs {
    /// Display name.
    #[arg(long)]
    pub name: String,
    /// Plan tier: free, starter, growth or advanced.
    #[arg(long, value_parser = parse_plan)]
    pub plan: PlanTier,
    /// The admin's e-mail (an existing user is reused and keeps their password).
    #[arg(long)]
    pub admin_email: String,
    /// The admin's password (at least 8 characters).
    #[arg(long)]
    pub admin_password: String,
    /// Print one JSON object: {"workspace_id", "user_id", "slug"}.
    #[arg(long)]
    pub json: bool,
}

/// `wms workspace set-plan`
#[derive(Debug, Args)]
pub struct SetPlanArgs {
    /// The workspace's id.
    #[arg(long)]
    pub workspace_id: i64,
    /// Plan tier: free, starter, growth or advanced.
    #[arg(long, value_parser = parse_plan)]
    pub plan: PlanTier,
}

/// `wms seed …`
#[derive(Debug, Subcommand)]
pub enum SeedCommand {
    /// Realistic demo data (90 days); into a new `advanced` workspace unless --workspace-id is given.
    Demo(SeedDemoArgs),
    /// A large workspace for benchmarks (N messages; 1,000,000 gives 100k threads and 50k contacts).
    Scale(SeedScaleArgs),
}

/// `wms seed demo`
#[derive(Debug, Args)]
pub struct SeedDemoArgs {
    /// Fill this existing workspace instead of creating one.
    #[arg(long)]
    pub workspace_id: Option<i64>,
    /// Print one JSON object: {"workspace_id", "email", "password"}.
    #[arg(long)]
    pub json: bool,
}

/// `wms seed scale`
#[derive(Debug, Args)]
pub struct SeedScaleArgs {
    /// How many messages to generate.
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..=50_000_000))]
    pub messages: i64,
    /// Fill this existing workspace instead of creating one.
    #[arg(long)]
    pub workspace_id: Option<i64>,
    /// Print one JSON object with the workspace and the counts.
    #[arg(long)]
    pub json: bool,
}

/// `wms docs …`
#[derive(Debug, Subcommand)]
pub enum DocsCommand {
    /// Split the pages of DIR into chunks by heading and index them; unchanged pages are skipped,
    /// pages no longer in DIR are removed. With an embeddings provider configured, chunks get vectors.
    Ingest(DocsIngestArgs),
    /// Print Recall@5, MRR@5 and nDCG@5 of every available search mode over an evaluation set;
    /// exit 1 when full-text Recall@5 is below --min-recall.
    Eval(DocsEvalArgs),
}

/// `wms docs ingest`
#[derive(Debug, Args)]
pub struct DocsIngestArgs {
    /// The directory of `*.md` pages with front matter (slug, title, category).
    #[arg(default_value = "docs/product", value_name = "DIR")]
    pub dir: PathBuf,
}

/// `wms docs eval`
#[derive(Debug, Args)]
pub struct DocsEvalArgs {
    /// The evaluation set: {"questions": [{"q", "relevant": [slugs]}]}.
    #[arg(long, default_value = "docs/search-eval.json", value_name = "PATH")]
    pub file: PathBuf,
    /// The full-text Recall@5 below which the command fails.
    #[arg(long, default_value_t = 0.85)]
    pub min_recall: f64,
    /// Also list every question that missed a relevant page.
    #[arg(long)]
    pub verbose: bool,
}

fn parse_plan(s: &str) -> Result<PlanTier, String> {
    s.parse::<PlanTier>().map_err(|e| e.to_string())
}
