//! `wms secrets rotate-key`: re-encrypts every secret at rest under a new key, in batches, while
//! the service runs (docs/secrets.md has the procedure).

use std::time::Instant;

use adapters_postgres::sealed::{self, SealedValue, SEALED_COLUMNS};
use domain::common::ports::SecretCipher;

use crate::cli::{from_command_line, RotateKeyArgs, NEW_KEY_ENV};
use crate::config::Settings;
use crate::platform::XChaChaCipher;
use crate::secrets::decode_key;
use crate::CommandError;

/// What a rotation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rotation {
    /// Re-encrypted under the new key.
    pub rotated: u64,
    /// Already under the new key (a second run finds everything here).
    pub already: u64,
    /// Changed by the service between the read and the write: left as the service wrote them.
    pub changed_meanwhile: u64,
    /// Could not be opened with any configured key: `table.column row id: reason`.
    pub unreadable: Vec<String>,
}

pub(super) async fn rotate_key(mut settings: Settings, args: RotateKeyArgs) -> Result<(), CommandError> {
    let new_key = decode_key(&args.new_key).ok_or_else(|| {
        CommandError::Usage(format!(
            "--new-key ({NEW_KEY_ENV}) must be the base64 of exactly 32 bytes (`openssl rand -base64 32`)"
        ))
    })?;
    if from_command_line(&args.new_key, NEW_KEY_ENV) {
        eprintln!("warning: --new-key is visible to every user of this machine in the process list; set {NEW_KEY_ENV} instead");
    }
    let (db, _) = super::connect_for_command(&settings).await?;
    // What sealed the stored secrets: the configured key (else the one kept in the database) and
    // the previous keys of an earlier rotation.
    crate::secrets::resolve_key(&mut settings, &db, false).await?;
    let mut old: Vec<[u8; 32]> = settings.secrets.encryption_key.as_deref().and_then(decode_key).into_iter().collect();
    old.extend(settings.secrets.previous_keys.iter().filter_map(|k| decode_key(k)));
    let cipher = XChaChaCipher::with_previous(&new_key, &old);
    let started = Instant::now();
    let report = rotate(&db, &cipher, args.batch_size).await?;
    let id: String = XChaChaCipher::key_id(&new_key).iter().map(|b| format!("{b:02x}")).collect();
    println!(
        "re-encrypted {} secrets under key {id} ({} already under it, {} changed meanwhile, {} unreadable) in {:.1} s",
        report.rotated,
        report.already,
        report.changed_meanwhile,
        report.unreadable.len(),
        started.elapsed().as_secs_f64()
    );
    if report.changed_meanwhile > 0 {
        println!("  {} secrets were changed by the service meanwhile: run the command again", report.changed_meanwhile);
    }
    if !report.unreadable.is_empty() {
        for u in report.unreadable.iter().take(20) {
            eprintln!("  unreadable  {u}");
        }
        return Err(CommandError::Failed(anyhow::anyhow!(
            "{} secrets could not be opened with secrets.encryption_key or secrets.previous_keys and were left as \
             they were; keep the old keys configured until they are set again",
            report.unreadable.len()
        )));
    }
    Ok(())
}

/// Re-seals every stored secret not yet under `cipher`'s sealing key, `batch` per transaction.
///
/// # Errors
/// On database failure (the batches written so far stay written; running again continues).
pub async fn rotate(db: &adapters_postgres::Db, cipher: &XChaChaCipher, batch: i64) -> anyhow::Result<Rotation> {
    // Static header values still in the clear (rows from before they were sealed) are sealed
    // under the new key first.
    let newly_sealed = sealed::seal_plain_headers(db, cipher).await?;
    let mut total = 0;
    for col in SEALED_COLUMNS {
        total += sealed::count(db, col).await?;
    }
    let bar = crate::progress::bar(total, "secrets");
    let mut report = Rotation { rotated: newly_sealed, ..Rotation::default() };
    for col in SEALED_COLUMNS {
        bar.set_message(col.table);
        let mut after = 0;
        loop {
            let values = sealed::batch(db, col, after, batch).await?;
            let Some(last) = values.last() else { break };
            after = last.id;
            let seen = u64::try_from(values.len()).unwrap_or(0);
            let mut pairs: Vec<(SealedValue, Vec<u8>)> = Vec::with_capacity(values.len());
            for v in values {
                if cipher.is_current(&v.sealed) {
                    report.already += 1;
                    continue;
                }
                let place = (col.place)(v.workspace_id, v.id);
                match cipher.open(&v.sealed, &place) {
                    Ok(plain) => {
                        let resealed = cipher.seal(&plain, &place);
                        pairs.push((v, resealed));
                    }
                    Err(e) => report.unreadable.push(format!("{}.{} row {}: {e}", col.table, col.column, v.id)),
                }
            }
            let n = u64::try_from(pairs.len()).unwrap_or(0);
            let written = sealed::replace(db, col, &pairs).await?;
            report.rotated += written;
            report.changed_meanwhile += n - written;
            bar.inc(seen);
        }
    }
    bar.finish_and_clear();
    Ok(report)
}
