//! `wms workspace create`, `wms workspace set-plan` and `wms workspace add-member`

use domain::workspace::{ChangePlanError, CreateWorkspace, CreateWorkspaceError, WorkspaceId};

use crate::cli::{AddMemberArgs, CreateWorkspaceArgs, SetPlanArgs};
use crate::config::Settings;
use crate::CommandError;

pub(super) async fn create(settings: Settings, args: CreateWorkspaceArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let workspaces = crate::wiring::workspace_service(&db);
    let cmd = CreateWorkspace {
        name: args.name,
        plan: args.plan,
        admin_email: args.admin_email.clone(),
        admin_password: args.admin_password.clone(),
        admin_name: None,
    };
    // Bad arguments exit 2, as clap's own usage errors and `add-member`'s do.
    let created = workspaces.create(cmd).await.map_err(|e| match e {
        CreateWorkspaceError::Invalid(v) => {
            let lines: Vec<String> =
                v.0.iter().map(|f| format!("--{}: {}", f.field.replace('_', "-"), f.message)).collect();
            CommandError::Usage(format!("invalid arguments:\n  {}", lines.join("\n  ")))
        }
        CreateWorkspaceError::Unknown(e) => CommandError::Failed(e.0),
    })?;
    let ws = workspaces
        .find(created.workspace_id)
        .await
        .map_err(|e| e.0)?
        .ok_or_else(|| anyhow::anyhow!("workspace vanished"))?;
    // An account that exists without a password of its own is invited, as `add-member` does it:
    // the invitation (e-mailed, its link printed) is the members' own.
    let invitation_url = if created.admin_invited {
        let url = invite(&settings, &db, &ws, args.admin_email, args.admin_password).await?;
        eprintln!(
            "note: the admin's account already exists without a password; --admin-password sets a new account's \
             only, so they were invited to choose one"
        );
        url
    } else {
        None
    };
    if args.json {
        // The object the contract names; `invitation_url` only when the admin was invited.
        let mut out = serde_json::json!({ "workspace_id": ws.id.0, "user_id": created.user_id.0, "slug": ws.slug });
        if let Some(url) = &invitation_url {
            out["invitation_url"] = serde_json::Value::from(url.as_str());
        }
        println!("{out}");
    } else {
        println!("created workspace {} ({}, plan {}) with admin user {}", ws.id, ws.slug, ws.plan, created.user_id);
        if let Some(url) = invitation_url {
            println!("invitation e-mailed; the link (works once, for 7 days): {url}");
        }
    }
    Ok(())
}

/// Sends the invitation of a new workspace's invited admin; its link.
async fn invite(
    settings: &Settings,
    db: &adapters_postgres::Db,
    ws: &domain::workspace::Workspace,
    email: String,
    password: String,
) -> Result<Option<String>, CommandError> {
    use domain::access::Caller;
    use domain::members::AddMember;
    let members = crate::wiring::members_service(settings, db);
    let cmd = AddMember { email, name: None, role: "admin".to_owned(), password: Some(password) };
    let added =
        members.add(&Caller::operator(ws.id, ws.plan), &domain::audit::AuditContext::cli(), cmd).await.map_err(
            |e| CommandError::Failed(anyhow::anyhow!("the workspace was created, its admin's invitation not: {e}")),
        )?;
    let site = crate::mail::site_url(settings);
    Ok(added.invitation.map(|i| site.link(&format!("/invitations/{}", i.token))))
}

pub(super) async fn set_plan(settings: Settings, args: SetPlanArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let audit = domain::audit::AuditContext::cli();
    let ws = crate::wiring::workspace_service(&db)
        .change_plan(&audit, WorkspaceId(args.workspace_id), args.plan)
        .await
        .map_err(|e| match e {
            ChangePlanError::NotFound(id) => anyhow::anyhow!("no workspace with id {id}"),
            ChangePlanError::Unknown(e) => e.0,
        })?;
    println!("workspace {} is now on the {} plan", ws.id, ws.plan);
    Ok(())
}

pub(super) async fn add_member(settings: Settings, args: AddMemberArgs) -> Result<(), CommandError> {
    use domain::access::Caller;
    use domain::members::{AddMember, AddMemberFailure};
    let (db, _) = super::connect_for_command(&settings).await?;
    let ws = crate::wiring::workspace_service(&db)
        .find(WorkspaceId(args.workspace_id))
        .await
        .map_err(|e| e.0)?
        .ok_or_else(|| anyhow::anyhow!("no workspace with id {}", args.workspace_id))?;
    let members = crate::wiring::members_service(&settings, &db);
    let vouched = args.password.is_some();
    let cmd = AddMember { email: args.email, name: args.name, role: args.role, password: args.password };
    let added = members
        .add(&Caller::operator(ws.id, ws.plan), &domain::audit::AuditContext::cli(), cmd)
        .await
        .map_err(|e| match e {
            AddMemberFailure::Invalid(v) => {
                let lines: Vec<String> = v.0.iter().map(|f| format!("--{}: {}", f.field, f.message)).collect();
                CommandError::Usage(format!("invalid arguments:\n  {}", lines.join("\n  ")))
            }
            AddMemberFailure::AlreadyMember(email) => {
                CommandError::Failed(anyhow::anyhow!("{email} is already a member of workspace {}", ws.id))
            }
            AddMemberFailure::Forbidden(why) => CommandError::Usage(why.to_owned()),
            AddMemberFailure::Unknown(e) => CommandError::Failed(e.0),
        })?;
    // The operator's own command: it may print the link it also e-mailed
    // (`docs/product/invitations.md`, "Inviting someone").
    let site = crate::mail::site_url(&settings);
    let url = added.invitation.as_ref().map(|i| site.link(&format!("/invitations/{}", i.token)));
    if vouched && url.is_some() {
        eprintln!(
            "note: {} already has an account without a password; --password sets a new account's only, so they \
             were invited to choose one",
            added.profile.email
        );
    }
    if args.json {
        println!("{}", serde_json::json!({ "user_id": added.profile.user_id.0, "invitation_url": url }));
    } else {
        println!(
            "added {} to workspace {} as {} ({})",
            added.profile.email,
            ws.id,
            added.profile.role.as_str(),
            added.profile.status.as_str()
        );
        if let Some(url) = url {
            println!("invitation e-mailed; the link (works once, for 7 days): {url}");
        }
    }
    Ok(())
}
