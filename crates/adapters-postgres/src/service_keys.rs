//! Keys the service generates for itself and shares between instances through the database.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::pool::Db;
use crate::schema::service_keys;

/// The key named `name`, created from `generate()` if there is none yet. Safe when several
/// instances start at once: the first insert wins and everyone reads the winner.
///
/// # Errors
/// On database failure.
pub async fn get_or_create(db: &Db, name: &str, generate: impl FnOnce() -> Vec<u8>) -> anyhow::Result<Vec<u8>> {
    let mut conn = db.conn().await?;
    diesel::insert_into(service_keys::table)
        .values((service_keys::name.eq(name), service_keys::key.eq(generate())))
        .on_conflict_do_nothing()
        .execute(&mut conn)
        .await?;
    Ok(service_keys::table.find(name).select(service_keys::key).first(&mut conn).await?)
}
