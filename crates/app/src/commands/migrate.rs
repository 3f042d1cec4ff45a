//! `wms migrate`

use crate::cli::MigrateArgs;
use crate::config::Settings;
use crate::CommandError;

pub(super) async fn run(settings: Settings, args: MigrateArgs) -> Result<(), CommandError> {
    let (db, url) = super::connect_for_migrations(&settings).await?;
    if args.revert {
        let v = adapters_postgres::migrate::revert_last(&url).await?;
        println!("reverted migration {v}");
        return Ok(());
    }
    let applied = adapters_postgres::migrate::run_pending_locked(&db, &url).await?;
    if applied.is_empty() {
        println!("the database is up to date");
    } else {
        for v in applied {
            println!("applied migration {v}");
        }
    }
    Ok(())
}
