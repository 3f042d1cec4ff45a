//! `wms workspace create` and `wms workspace set-plan`

use adapters_postgres::PgWorkspaceRepository;
use domain::workspace::{
    create_workspace, CreateWorkspace, CreateWorkspaceError, SetPlanError, WorkspaceId, WorkspaceRepository,
};

use crate::cli::{CreateWorkspaceArgs, SetPlanArgs};
use crate::config::Settings;
use crate::platform::{Argon2Hasher, OsRandom};
use crate::CommandError;

pub(super) async fn create(settings: Settings, args: CreateWorkspaceArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let repo = PgWorkspaceRepository::new(db);
    let cmd = CreateWorkspace {
        name: args.name,
        plan: args.plan,
        admin_email: args.admin_email,
        admin_password: args.admin_password,
        admin_name: None,
    };
    let created = create_workspace(&repo, &Argon2Hasher::default(), &OsRandom, cmd).await.map_err(|e| match e {
        CreateWorkspaceError::Invalid(v) => {
            let lines: Vec<String> =
                v.0.iter().map(|f| format!("--{}: {}", f.field.replace('_', "-"), f.message)).collect();
            anyhow::anyhow!("invalid arguments:\n  {}", lines.join("\n  "))
        }
        CreateWorkspaceError::Unknown(e) => e.0,
    })?;
    let ws =
        repo.find(created.workspace_id).await.map_err(|e| e.0)?.ok_or_else(|| anyhow::anyhow!("workspace vanished"))?;
    if args.json {
        println!("{}", serde_json::json!({ "workspace_id": ws.id.0, "user_id": created.user_id.0, "slug": ws.slug }));
    } else {
        println!("created workspace {} ({}, plan {}) with admin user {}", ws.id, ws.slug, ws.plan, created.user_id);
    }
    Ok(())
}

pub(super) async fn set_plan(settings: Settings, args: SetPlanArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let repo = PgWorkspaceRepository::new(db);
    let ws = repo.set_plan(WorkspaceId(args.workspace_id), args.plan).await.map_err(|e| match e {
        SetPlanError::NotFound(id) => anyhow::anyhow!("no workspace with id {id}"),
        SetPlanError::Unknown(e) => e.0,
    })?;
    println!("workspace {} is now on the {} plan", ws.id, ws.plan);
    Ok(())
}
