//! Every secret sealed at rest, found by column, for `wms secrets rotate-key`: read in batches by
//! id, written back only where the value is still the one read (a credential changed meanwhile by
//! a request is left as the request wrote it).

use diesel::sql_types::{BigInt, Bytea, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use domain::common::ports::{SecretCipher, SecretPlace};

use crate::pool::Db;

/// A column holding sealed values, and the place each row's value is sealed for.
#[derive(Debug, Clone, Copy)]
pub struct SealedColumn {
    /// Table.
    pub table: &'static str,
    /// Column.
    pub column: &'static str,
    /// The place of the value of row `(workspace_id, id)`.
    pub place: fn(i64, i64) -> SecretPlace,
}

/// Every column that holds sealed values. A new one must be added here, or a key rotation leaves
/// it sealed with the old key.
pub const SEALED_COLUMNS: &[SealedColumn] = &[
    SealedColumn { table: "channels", column: "credentials_encrypted", place: SecretPlace::channel_credentials },
    SealedColumn { table: "webhook_destinations", column: "secret_encrypted", place: SecretPlace::webhook_secret },
    SealedColumn {
        table: "webhook_destinations",
        column: "previous_secret_encrypted",
        place: SecretPlace::webhook_secret,
    },
    SealedColumn { table: "webhook_destinations", column: "headers_encrypted", place: SecretPlace::webhook_headers },
];

/// One stored sealed value.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct SealedValue {
    /// Owning workspace.
    #[diesel(sql_type = BigInt)]
    pub workspace_id: i64,
    /// Row id.
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// The ciphertext.
    #[diesel(sql_type = Bytea)]
    pub sealed: Vec<u8>,
}

#[derive(QueryableByName)]
struct PlainHeaders {
    #[diesel(sql_type = BigInt)]
    workspace_id: i64,
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    headers: String,
}

/// Seals the static header values still stored in the clear (`webhook_destinations.headers` of
/// rows written before the values were sealed) and blanks them there; returns how many
/// destinations it sealed. Run by `wms serve` at start and by `wms secrets rotate-key`: SQL does
/// not know the key, so the migration that added `headers_encrypted` cannot. A row changed
/// meanwhile is left as written (its headers were then sealed by the change).
///
/// # Errors
/// On database failure (the rows written so far stay written; running again continues).
pub async fn seal_plain_headers(db: &Db, cipher: &dyn SecretCipher) -> anyhow::Result<u64> {
    let mut conn = db.conn().await?;
    let rows: Vec<PlainHeaders> = diesel::sql_query(
        "SELECT workspace_id, id, headers::text AS headers FROM webhook_destinations
         WHERE EXISTS (SELECT 1 FROM jsonb_each_text(headers) h WHERE h.value <> '') ORDER BY id",
    )
    .load(&mut conn)
    .await?;
    let mut sealed = 0;
    for row in rows {
        let Ok(plain) = serde_json::from_str::<std::collections::BTreeMap<String, String>>(&row.headers) else {
            continue;
        };
        let s = domain::webhooks::headers::seal(cipher, row.workspace_id, row.id, &plain);
        sealed += diesel::sql_query(
            "UPDATE webhook_destinations SET headers = $1::jsonb, headers_encrypted = $2
             WHERE id = $3 AND headers = $4::jsonb",
        )
        .bind::<Text, _>(serde_json::to_string(&s.names)?)
        .bind::<Nullable<Bytea>, _>(s.sealed)
        .bind::<BigInt, _>(row.id)
        .bind::<Text, _>(&row.headers)
        .execute(&mut conn)
        .await? as u64;
    }
    Ok(sealed)
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// A new row id of `table` (`channels`, `webhook_destinations`), reserved so that a secret can be
/// sealed for the row before the row is written.
///
/// # Errors
/// On database failure.
pub async fn reserve_id(db: &Db, table: &'static str) -> anyhow::Result<i64> {
    let mut conn = db.conn().await?;
    let n: Count = diesel::sql_query("SELECT nextval(pg_get_serial_sequence($1, 'id')) AS n")
        .bind::<Text, _>(table)
        .get_result(&mut conn)
        .await?;
    Ok(n.n)
}

/// How many values `col` holds.
///
/// # Errors
/// On database failure.
pub async fn count(db: &Db, col: &SealedColumn) -> anyhow::Result<u64> {
    let mut conn = db.conn().await?;
    let n: Count =
        diesel::sql_query(format!("SELECT count(*) AS n FROM {} WHERE {} IS NOT NULL", col.table, col.column))
            .get_result(&mut conn)
            .await?;
    Ok(u64::try_from(n.n).unwrap_or(0))
}

/// Up to `limit` values of `col` in rows with an id above `after`, by id.
///
/// # Errors
/// On database failure.
pub async fn batch(db: &Db, col: &SealedColumn, after: i64, limit: i64) -> anyhow::Result<Vec<SealedValue>> {
    let mut conn = db.conn().await?;
    Ok(diesel::sql_query(format!(
        "SELECT workspace_id, id, {c} AS sealed FROM {t} WHERE id > $1 AND {c} IS NOT NULL ORDER BY id LIMIT $2",
        t = col.table,
        c = col.column
    ))
    .bind::<BigInt, _>(after)
    .bind::<BigInt, _>(limit)
    .load(&mut conn)
    .await?)
}

/// Writes each `(read, resealed)` pair back in one transaction where the row still holds the value
/// read; returns how many were written.
///
/// # Errors
/// On database failure (nothing is written then).
pub async fn replace(db: &Db, col: &SealedColumn, pairs: &[(SealedValue, Vec<u8>)]) -> anyhow::Result<u64> {
    if pairs.is_empty() {
        return Ok(0);
    }
    let sql = format!(
        "UPDATE {t} SET {c} = $1 WHERE workspace_id = $2 AND id = $3 AND {c} = $4",
        t = col.table,
        c = col.column
    );
    let mut conn = db.conn().await?;
    let written = conn
        .transaction::<u64, diesel::result::Error, _>(|conn| {
            async move {
                let mut n = 0u64;
                for (old, new) in pairs {
                    n += diesel::sql_query(&sql)
                        .bind::<Nullable<Bytea>, _>(Some(new))
                        .bind::<BigInt, _>(old.workspace_id)
                        .bind::<BigInt, _>(old.id)
                        .bind::<Bytea, _>(&old.sealed)
                        .execute(conn)
                        .await? as u64;
                }
                Ok(n)
            }
            .scope_boxed()
        })
        .await?;
    Ok(written)
}
