//! Workspace members (`/v1/users/{user_id}`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditEntry;
use domain::auth::{OneTimeLink, TokenDigest};
use domain::common::page::{Page, PageRequest};
use domain::common::ports::PasswordHash;
use domain::members::{
    decide_acceptance, decide_admission, decide_change, decide_removal, AcceptedInvitation, AddMemberError,
    AddedAccount, AddedRow, Availability, ChangeMemberError, InvitationFacts, MemberChange, MemberFacts, MemberProfile,
    MemberRepository, MemberRights, MemberStatus, MemberWrite, NewMember,
};
use domain::users::{Email, Role, UserId};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::repo;
use crate::pool::Db;
use crate::schema::{member_invitations, users, workspace_members, workspaces};

/// [`MemberRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMemberRepository {
    db: Db,
}

impl PgMemberRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

type ProfileRow = (i64, String, String, String, String, OffsetDateTime, String);

fn profile(
    (user_id, email, name, role, status, created_at, availability): ProfileRow,
) -> Result<MemberProfile, RepoError> {
    Ok(MemberProfile {
        availability: Availability::stored(&availability),
        user_id: UserId(user_id),
        role: role.parse::<Role>().map_err(|e| repo(anyhow::anyhow!("{}", e.message)))?,
        email,
        name,
        status: MemberStatus::parse(&status).map_err(|e| repo(anyhow::anyhow!(e)))?,
        created_at,
    })
}

/// The member's name in this workspace, or the account's when none was given here.
fn member_name() -> diesel::expression::SqlLiteral<diesel::sql_types::Text> {
    diesel::dsl::sql::<diesel::sql_types::Text>("coalesce(workspace_members.name, users.name)")
}

async fn load(conn: &mut AsyncPgConnection, ws: WorkspaceId, user: UserId) -> diesel::QueryResult<Option<ProfileRow>> {
    workspace_members::table
        .inner_join(users::table)
        .filter(workspace_members::workspace_id.eq(ws.0))
        .filter(workspace_members::user_id.eq(user.0))
        .select((
            users::id,
            users::email,
            member_name(),
            workspace_members::role,
            workspace_members::status,
            workspace_members::created_at,
            workspace_members::availability,
        ))
        .first(conn)
        .await
        .optional()
}

/// What an account without a password has instead of a hash: no password ever verifies against
/// it (it is not a PHC string), so an invited person can only get in through their link.
pub const NO_PASSWORD: &str = "!invited";

/// The membership's facts for [`decide_change`] and [`decide_removal`], read with the membership
/// locked (so a concurrent promotion is either seen or waits), and for an active admin
/// the number of other active admins, counted with the workspace's active admin memberships locked
/// so that two concurrent demotions serialise and cannot both leave the workspace without one.
///
/// The membership and the active admins are locked in one statement, in user order: two admins
/// demoting each other at once would otherwise each hold their target and wait for the other's
/// (a deadlock, which PostgreSQL ends by failing one of them).
async fn facts(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    user: UserId,
) -> Result<(MemberFacts, Option<usize>), TxError> {
    let locked: Vec<i64> = workspace_members::table
        .filter(workspace_members::workspace_id.eq(ws.0))
        .filter(
            workspace_members::user_id
                .eq(user.0)
                .or(workspace_members::role.eq(Role::Admin.as_str()).and(workspace_members::is_active.eq(true))),
        )
        .order(workspace_members::user_id)
        .select(workspace_members::user_id)
        .for_update()
        .load(conn)
        .await?;
    let current: Option<(String, String, String, String, Option<OffsetDateTime>)> = workspace_members::table
        .inner_join(users::table)
        .filter(workspace_members::workspace_id.eq(ws.0))
        .filter(workspace_members::user_id.eq(user.0))
        .select((
            workspace_members::role,
            workspace_members::status,
            member_name(),
            users::email,
            workspace_members::joined_at,
        ))
        .first(conn)
        .await
        .optional()?;
    let (role, status, name, email, joined_at) = current.ok_or(TxError::Change(ChangeMemberError::NotFound(user)))?;
    let facts = MemberFacts {
        role: role
            .parse::<Role>()
            .map_err(|e| TxError::Change(ChangeMemberError::Unknown(repo(anyhow::anyhow!("{}", e.message)))))?,
        status: MemberStatus::parse(&status).unwrap_or(MemberStatus::Deactivated),
        joined: joined_at.is_some(),
        name,
        email,
    };
    if !facts.is_active_admin() {
        return Ok((facts, None));
    }
    // Every locked membership but the one changed is an active admin's.
    Ok((facts, Some(locked.iter().filter(|id| **id != user.0).count())))
}

/// Stores the decided fields of a membership.
async fn apply(conn: &mut AsyncPgConnection, ws: WorkspaceId, user: UserId, write: &MemberWrite) -> QueryResult<()> {
    let row = || workspace_members::table.find((ws.0, user.0));
    if let Some(role) = write.role {
        diesel::update(row())
            .set((workspace_members::role.eq(role.as_str()), workspace_members::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await?;
    }
    if let Some(status) = write.status {
        diesel::update(row())
            .set((workspace_members::status.eq(status.as_str()), workspace_members::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await?;
    }
    if let Some(availability) = write.availability {
        diesel::update(row())
            .set((
                workspace_members::availability.eq(availability.as_str()),
                workspace_members::updated_at.eq(diesel::dsl::now),
            ))
            .execute(conn)
            .await?;
    }
    if let Some(name) = &write.name {
        // Per membership: other workspaces keep the name they know.
        diesel::update(row())
            .set((workspace_members::name.eq(name.as_str()), workspace_members::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await?;
    }
    Ok(())
}

enum AddTxError {
    AlreadyMember,
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for AddTxError {
    fn from(e: diesel::result::Error) -> Self {
        AddTxError::Db(e)
    }
}

enum TxError {
    Change(ChangeMemberError),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

fn finish<T>(r: Result<T, TxError>) -> Result<T, ChangeMemberError> {
    r.map_err(|e| match e {
        TxError::Change(c) => c,
        TxError::Db(e) => ChangeMemberError::Unknown(repo(e)),
    })
}

/// An invitation as read: its workspace (id, name), account (id, address, password hash), link
/// (expiry, use) and membership status.
type InvitationRow = (i64, String, i64, String, String, OffsetDateTime, Option<OffsetDateTime>, String);

fn invitation_facts(
    (ws, workspace_name, user, email, hash, expires_at, used_at, status): InvitationRow,
) -> Result<InvitationFacts, anyhow::Error> {
    Ok(InvitationFacts {
        workspace_id: WorkspaceId(ws),
        workspace_name,
        user_id: UserId(user),
        email,
        password_hash: (hash != NO_PASSWORD).then_some(PasswordHash(hash)),
        link: OneTimeLink { expires_at, used_at },
        membership: MemberStatus::parse(&status).map_err(|e| anyhow::anyhow!(e))?,
    })
}

/// The invitation with `digest`, read with its account, membership and link locked in the order
/// adding a member locks them (account, membership, links), so that accepting a link and
/// inviting the person again never deadlock; `None` when there is none (voided meanwhile
/// included).
async fn lock_invitation(conn: &mut AsyncPgConnection, digest: &[u8]) -> QueryResult<Option<InvitationFacts>> {
    let found: Option<(i64, i64)> = member_invitations::table
        .filter(member_invitations::token_digest.eq(digest))
        .select((member_invitations::workspace_id, member_invitations::user_id))
        .first(conn)
        .await
        .optional()?;
    let Some((ws, user)) = found else { return Ok(None) };
    let (email, hash): (String, String) =
        users::table.find(user).select((users::email, users::password_hash)).for_no_key_update().first(conn).await?;
    let status: Option<String> = workspace_members::table
        .find((ws, user))
        .select(workspace_members::status)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let link: Option<(OffsetDateTime, Option<OffsetDateTime>)> = member_invitations::table
        .filter(member_invitations::token_digest.eq(digest))
        .select((member_invitations::expires_at, member_invitations::used_at))
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let (Some(status), Some((expires_at, used_at))) = (status, link) else { return Ok(None) };
    let workspace_name: String = workspaces::table.find(ws).select(workspaces::name).first(conn).await?;
    invitation_facts((ws, workspace_name, user, email, hash, expires_at, used_at, status))
        .map(Some)
        .map_err(|e| diesel::result::Error::DeserializationError(e.into()))
}

#[async_trait]
impl MemberRepository for PgMemberRepository {
    async fn find(&self, ws: WorkspaceId, user: UserId) -> Result<Option<MemberProfile>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        load(&mut conn, ws, user).await.map_err(repo)?.map(profile).transpose()
    }

    async fn update(
        &self,
        ws: WorkspaceId,
        user: UserId,
        change: &MemberChange,
        audit: &[AuditEntry],
        rights: MemberRights,
    ) -> Result<MemberProfile, ChangeMemberError> {
        let audit = audit.to_vec();
        let mut conn = self.db.conn().await.map_err(|e| ChangeMemberError::Unknown(repo(e)))?;
        let row = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let (facts, other_admins) = facts(conn, ws, user).await?;
                    rights.allow_change(&facts, change).map_err(TxError::Change)?;
                    let write = decide_change(&facts, other_admins, change, &audit).map_err(TxError::Change)?;
                    apply(conn, ws, user, &write).await?;
                    crate::audit::write(conn, &write.audit, None).await?;
                    load(conn, ws, user).await?.ok_or(TxError::Db(diesel::result::Error::NotFound))
                }
                .scope_boxed()
            })
            .await;
        profile(finish(row)?).map_err(ChangeMemberError::Unknown)
    }

    async fn list(&self, ws: WorkspaceId, page: PageRequest) -> Result<Page<MemberProfile>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut query = workspace_members::table
            .inner_join(users::table)
            .filter(workspace_members::workspace_id.eq(ws.0))
            .select((
                users::id,
                users::email,
                member_name(),
                workspace_members::role,
                workspace_members::status,
                workspace_members::created_at,
                workspace_members::availability,
            ))
            .order(workspace_members::user_id.asc())
            .limit(page.fetch())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(workspace_members::user_id.gt(after));
        }
        let rows: Vec<ProfileRow> = query.load(&mut conn).await.map_err(repo)?;
        let page = Page::from_rows(rows, page, |r| r.0);
        let data = page.data.into_iter().map(profile).collect::<Result<Vec<_>, _>>()?;
        Ok(Page { data, next_cursor: page.next_cursor })
    }

    async fn find_by_email(&self, ws: WorkspaceId, email: &Email) -> Result<Option<MemberProfile>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<ProfileRow> = workspace_members::table
            .inner_join(users::table)
            .filter(workspace_members::workspace_id.eq(ws.0))
            .filter(
                diesel::dsl::sql::<diesel::sql_types::Bool>("lower(users.email) = ")
                    .bind::<diesel::sql_types::Text, _>(email.as_str()),
            )
            .select((
                users::id,
                users::email,
                member_name(),
                workspace_members::role,
                workspace_members::status,
                workspace_members::created_at,
                workspace_members::availability,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        row.map(profile).transpose()
    }

    async fn workspace_name(&self, ws: WorkspaceId) -> Result<Option<String>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        workspaces::table.find(ws.0).select(workspaces::name).first(&mut conn).await.optional().map_err(repo)
    }

    async fn add(&self, new: &NewMember, audit: &AuditEntry) -> Result<AddedRow, AddMemberError> {
        let mut conn = self.db.conn().await.map_err(|e| AddMemberError::Unknown(repo(e)))?;
        let new = new.clone();
        let audit = audit.clone();
        let r = conn
            .transaction::<_, AddTxError, _>(|conn| {
                async move {
                    // An existing account joins with the password it has (never changed here); a
                    // new one gets the operator's password or none. Concurrent adds of one new
                    // e-mail meet at the unique index and the loser reads the winner's row.
                    let created = diesel::insert_into(users::table)
                        .values((
                            users::email.eq(new.email.as_str()),
                            users::name.eq(new.name.as_str()),
                            users::password_hash.eq(new.password_hash.as_ref().map_or(NO_PASSWORD, |h| h.0.as_str())),
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await?;
                    let (user_id, stored_hash): (i64, String) = users::table
                        .filter(
                            diesel::dsl::sql::<diesel::sql_types::Bool>("lower(email) = ")
                                .bind::<diesel::sql_types::Text, _>(new.email.as_str()),
                        )
                        .select((users::id, users::password_hash))
                        .for_update()
                        .first(conn)
                        .await?;
                    let account = AddedAccount::of(created > 0, &PasswordHash(stored_hash));
                    let ws = new.workspace_id.0;
                    let existing: Option<String> = workspace_members::table
                        .find((ws, user_id))
                        .select(workspace_members::status)
                        .for_update()
                        .first(conn)
                        .await
                        .optional()?;
                    let existing = existing.map(|s| MemberStatus::parse(&s).unwrap_or(MemberStatus::Deactivated));
                    let write =
                        decide_admission(existing, new.password_hash.is_some(), account, OffsetDateTime::now_utc())
                            .map_err(|_| AddTxError::AlreadyMember)?;
                    let invited = write.status == MemberStatus::Invited;
                    let (status, joined_at) = (write.status, write.joined_at);
                    if write.reinvite {
                        // Every older link of this membership stops working (410).
                        diesel::delete(
                            member_invitations::table
                                .filter(member_invitations::workspace_id.eq(ws))
                                .filter(member_invitations::user_id.eq(user_id)),
                        )
                        .execute(conn)
                        .await?;
                        diesel::update(workspace_members::table.find((ws, user_id)))
                            .set((
                                workspace_members::role.eq(new.role.as_str()),
                                workspace_members::name.eq(new.name.as_str()),
                                workspace_members::status.eq(status.as_str()),
                                workspace_members::joined_at.eq(joined_at),
                                workspace_members::updated_at.eq(diesel::dsl::now),
                            ))
                            .execute(conn)
                            .await?;
                    } else {
                        diesel::insert_into(workspace_members::table)
                            .values((
                                workspace_members::workspace_id.eq(ws),
                                workspace_members::user_id.eq(user_id),
                                workspace_members::role.eq(new.role.as_str()),
                                workspace_members::name.eq(new.name.as_str()),
                                workspace_members::status.eq(status.as_str()),
                                workspace_members::joined_at.eq(joined_at),
                            ))
                            .execute(conn)
                            .await?;
                    }
                    if invited {
                        let invitation = &new.invitation;
                        diesel::insert_into(member_invitations::table)
                            .values((
                                member_invitations::workspace_id.eq(ws),
                                member_invitations::user_id.eq(user_id),
                                member_invitations::token_digest.eq(invitation.digest.0.as_slice()),
                                member_invitations::expires_at.eq(invitation.expires_at),
                            ))
                            .execute(conn)
                            .await?;
                        crate::mail::enqueue(conn, std::slice::from_ref(&invitation.mail)).await?;
                    }
                    crate::audit::write(conn, &[audit], Some(user_id)).await?;
                    let row = load(conn, new.workspace_id, UserId(user_id))
                        .await?
                        .ok_or(AddTxError::Db(diesel::result::Error::NotFound))?;
                    Ok((row, invited))
                }
                .scope_boxed()
            })
            .await;
        match r {
            Ok((row, invited)) => Ok(AddedRow { profile: profile(row)?, invited }),
            Err(AddTxError::AlreadyMember) => Err(AddMemberError::AlreadyMember),
            Err(AddTxError::Db(e)) => Err(AddMemberError::Unknown(repo(e))),
        }
    }

    async fn invitation(&self, digest: &TokenDigest) -> Result<Option<InvitationFacts>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let row: Option<InvitationRow> = member_invitations::table
            .inner_join(
                workspace_members::table.on(workspace_members::workspace_id
                    .eq(member_invitations::workspace_id)
                    .and(workspace_members::user_id.eq(member_invitations::user_id))),
            )
            .inner_join(users::table.on(users::id.eq(member_invitations::user_id)))
            .inner_join(workspaces::table.on(workspaces::id.eq(member_invitations::workspace_id)))
            .filter(member_invitations::token_digest.eq(digest.0.as_slice()))
            .select((
                workspaces::id,
                workspaces::name,
                users::id,
                users::email,
                users::password_hash,
                member_invitations::expires_at,
                member_invitations::used_at,
                workspace_members::status,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(repo)?;
        row.map(invitation_facts).transpose().map_err(repo)
    }

    async fn accept_invitation(
        &self,
        digest: &TokenDigest,
        now: OffsetDateTime,
        password: Option<PasswordHash>,
    ) -> Result<Option<AcceptedInvitation>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let digest = digest.0.to_vec();
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let Some(facts) = lock_invitation(conn, &digest).await? else { return Ok(None) };
                let Some(acceptance) = decide_acceptance(&facts, now, password) else { return Ok(None) };
                let (ws, user) = (acceptance.accepted.workspace_id.0, acceptance.accepted.user_id.0);
                diesel::update(member_invitations::table.filter(member_invitations::token_digest.eq(&digest)))
                    .set(member_invitations::used_at.eq(acceptance.at))
                    .execute(conn)
                    .await?;
                diesel::update(workspace_members::table.find((ws, user)))
                    .set((
                        workspace_members::status.eq(MemberStatus::Active.as_str()),
                        workspace_members::joined_at.eq(acceptance.at),
                        workspace_members::updated_at.eq(diesel::dsl::now),
                    ))
                    .execute(conn)
                    .await?;
                if let Some(hash) = &acceptance.password {
                    diesel::update(users::table.find(user))
                        .set((users::password_hash.eq(&hash.0), users::updated_at.eq(diesel::dsl::now)))
                        .execute(conn)
                        .await?;
                }
                Ok(Some(acceptance.accepted))
            }
            .scope_boxed()
        })
        .await
        .map_err(repo)
    }

    async fn remove(
        &self,
        ws: WorkspaceId,
        user: UserId,
        audit: &AuditEntry,
        rights: MemberRights,
    ) -> Result<(), ChangeMemberError> {
        let audit = audit.clone();
        let mut conn = self.db.conn().await.map_err(|e| ChangeMemberError::Unknown(repo(e)))?;
        let r = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let (facts, other_admins) = facts(conn, ws, user).await?;
                    rights.allow_removal(&facts).map_err(TxError::Change)?;
                    let record = decide_removal(&facts, other_admins, &audit).map_err(TxError::Change)?;
                    diesel::delete(workspace_members::table.find((ws.0, user.0))).execute(conn).await?;
                    crate::audit::write(conn, &[record], None).await?;
                    Ok(())
                }
                .scope_boxed()
            })
            .await;
        finish(r)
    }
}
