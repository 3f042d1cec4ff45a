//! `wms seed demo` and `wms seed scale`

use std::time::Instant;

use adapters_postgres::seed::{seed_workspace, SeedDestination, SeedSize};
use adapters_postgres::Db;
use base64::Engine;
use domain::common::ports::{RandomSource, SecretCipher, SecretPlace};
use domain::workspace::{CreateWorkspace, PlanTier, WorkspaceId};

use crate::cli::{SeedDemoArgs, SeedScaleArgs};
use crate::config::Settings;
use crate::platform::{Argon2Hasher, OsRandom};
use crate::CommandError;

/// The admin of a newly created demo workspace.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DemoCredentials {
    /// The workspace.
    pub workspace_id: i64,
    /// Admin e-mail (null when an existing workspace was filled).
    pub email: Option<String>,
    /// Admin password (null when an existing workspace was filled).
    pub password: Option<String>,
}

pub(super) async fn demo(settings: Settings, args: SeedDemoArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let cipher = crate::secrets::cipher(&settings, &db, false).await?;
    let creds = seed_demo(&db, cipher.as_ref(), args.workspace_id.map(WorkspaceId)).await?;
    if args.json {
        println!("{}", serde_json::to_string(&creds).map_err(anyhow::Error::from)?);
    } else {
        println!("demo data in workspace {}", creds.workspace_id);
        if let (Some(e), Some(p)) = (&creds.email, &creds.password) {
            println!("admin: {e} / {p}");
        }
    }
    Ok(())
}

/// Fills `workspace` (or a new `advanced` demo workspace) with the demo data.
///
/// # Errors
/// When the workspace does not exist or the database fails.
pub async fn seed_demo(
    db: &Db,
    cipher: &dyn SecretCipher,
    workspace: Option<WorkspaceId>,
) -> anyhow::Result<DemoCredentials> {
    let (ws, email, password) = match workspace {
        Some(id) => (existing(db, id).await?, None, None),
        None => {
            let suffix = random_base62(6);
            let (email, password) = (format!("admin-{}@demo.wms.test", suffix.to_lowercase()), random_base62(16));
            let created = new_workspace(db, "Acme Demo", &email, &password).await?;
            (created, Some(email), Some(password))
        }
    };
    let destinations = demo_destinations(db, ws, cipher).await?;
    let bar = crate::progress::bar(SeedSize::DEMO.messages.unsigned_abs(), "messages");
    let seeded = seed_workspace(
        db,
        ws,
        SeedSize::DEMO,
        &agent_password_hash().await?,
        &destinations,
        0.42,
        &crate::progress::seed_observer(&bar),
    )
    .await;
    bar.finish_and_clear();
    seeded?;
    Ok(DemoCredentials { workspace_id: ws.0, email, password })
}

pub(super) async fn scale(settings: Settings, args: SeedScaleArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let ws = match args.workspace_id {
        Some(id) => existing(&db, WorkspaceId(id)).await?,
        None => {
            let email = format!("admin-{}@scale.wms.test", random_base62(6).to_lowercase());
            new_workspace(&db, &format!("Scale test ({} messages)", args.messages), &email, &random_base62(16)).await?
        }
    };
    let started = Instant::now();
    let hash = agent_password_hash().await?;
    let bar = crate::progress::bar(args.messages.unsigned_abs(), "messages");
    let seeded = seed_workspace(
        &db,
        ws,
        SeedSize::scale(args.messages),
        &hash,
        &[],
        0.17,
        &crate::progress::seed_observer(&bar),
    )
    .await;
    bar.finish_and_clear();
    let report = seeded?;
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        println!("{}", serde_json::json!({ "workspace_id": ws.0, "counts": report, "seconds": secs }));
    } else {
        println!(
            "workspace {}: {} messages, {} threads, {} contacts, {} channels in {secs:.1} s",
            ws.0, report.messages, report.threads, report.contacts, report.channels
        );
    }
    Ok(())
}

async fn existing(db: &Db, id: WorkspaceId) -> anyhow::Result<WorkspaceId> {
    crate::wiring::workspace_service(db)
        .find(id)
        .await
        .map_err(|e| e.0)?
        .map(|w| w.id)
        .ok_or_else(|| anyhow::anyhow!("no workspace with id {id}"))
}

async fn new_workspace(db: &Db, name: &str, email: &str, password: &str) -> anyhow::Result<WorkspaceId> {
    let cmd = CreateWorkspace {
        name: name.into(),
        plan: PlanTier::Advanced,
        admin_email: email.into(),
        admin_password: password.into(),
        admin_name: Some("Demo Admin".into()),
    };
    let created = crate::wiring::workspace_service(db).create(cmd).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(created.workspace_id)
}

/// Generated agents share one unusable-by-guessing random password: demo data, not accounts.
async fn agent_password_hash() -> anyhow::Result<String> {
    use domain::common::ports::PasswordHasher;
    let pw = domain::users::Password::attempt(&random_base62(24));
    Ok(Argon2Hasher::default().hash(&pw).await?.0)
}

/// The demo destinations of workspace `ws`, their ids reserved and secrets sealed for their rows.
async fn demo_destinations(
    db: &Db,
    ws: WorkspaceId,
    cipher: &dyn SecretCipher,
) -> anyhow::Result<Vec<SeedDestination>> {
    let mut ids = Vec::with_capacity(3);
    for _ in 0..3 {
        ids.push(adapters_postgres::sealed::reserve_id(db, "webhook_destinations").await?);
    }
    let secret = |id: i64| {
        let mut b = [0u8; 32];
        OsRandom.fill(&mut b);
        cipher.seal(
            format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(b)).as_bytes(),
            &SecretPlace::webhook_secret(ws.0, id),
        )
    };
    let events = |e: &[&str]| e.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    Ok(vec![
        SeedDestination {
            id: ids[0],
            url: "https://hooks.example.com/wms/orders".into(),
            platform: "custom".into(),
            events: events(&["message.created", "message.status_updated"]),
            active: true,
            secret_encrypted: secret(ids[0]),
        },
        SeedDestination {
            id: ids[1],
            url: "https://hooks.zapier.com/hooks/catch/123456/abcdef/".into(),
            platform: "zapier".into(),
            events: events(&["thread.created", "thread.status_changed", "thread.assigned", "contact.created"]),
            active: true,
            secret_encrypted: secret(ids[1]),
        },
        SeedDestination {
            id: ids[2],
            url: "https://n8n.example.com/webhook/wms".into(),
            platform: "n8n".into(),
            events: events(&["channel.created", "channel.updated"]),
            active: false,
            secret_encrypted: secret(ids[2]),
        },
    ])
}

/// `n` random base62 characters.
pub(crate) fn random_base62(n: usize) -> String {
    const A: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut buf = vec![0u8; n];
    OsRandom.fill(&mut buf);
    // 256 % 62 != 0 gives a slight bias, harmless for demo credentials.
    buf.iter().map(|b| A[usize::from(*b) % A.len()] as char).collect()
}
