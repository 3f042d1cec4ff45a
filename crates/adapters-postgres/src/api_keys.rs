//! API keys in storage.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::auth::NewToken;
use domain::workspace::WorkspaceId;

use crate::pool::Db;
use crate::schema::api_keys;

/// Stores a new key's digest and masked form (never the key) and returns its id.
///
/// # Errors
/// On database failure.
pub async fn insert(db: &Db, ws: WorkspaceId, name: &str, token: &NewToken) -> anyhow::Result<i64> {
    let mut conn = db.conn().await?;
    Ok(diesel::insert_into(api_keys::table)
        .values((
            api_keys::workspace_id.eq(ws.0),
            api_keys::name.eq(name),
            api_keys::key_digest.eq(token.digest().0.to_vec()),
            api_keys::masked_key.eq(token.masked()),
        ))
        .returning(api_keys::id)
        .get_result(&mut conn)
        .await?)
}
