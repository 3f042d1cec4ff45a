//! Contacts in storage: the integrator's resource and the person's erasure.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::audit::AuditContext;
use domain::contacts::{
    admit_email, ChangeContactError, Contact, ContactChange, ContactField, ContactFilter, ContactRepository,
    EraseContactStoreError, InsertContactError, ListContactsStoreError, NewContact,
};
use domain::workspace::WorkspaceId;
use domain::RepoError;
use time::OffsetDateTime;

use crate::error::{repo, unique_violation};
use crate::pool::Db;
use crate::schema::{contacts, labels, thread_labels, threads};
use crate::webhooks::outbox;

mod erasure;

use erasure::erase;

diesel::define_sql_function!(fn lower(x: Nullable<Text>) -> Nullable<Text>);

/// [`ContactRepository`] on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgContactRepository {
    db: Db,
}

impl PgContactRepository {
    /// A repository on `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = contacts)]
struct ContactRow {
    id: i64,
    name: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    country: Option<String>,
    language: Option<String>,
    note: Option<String>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    first_contacted_at: Option<OffsetDateTime>,
    last_contacted_at: Option<OffsetDateTime>,
}

impl From<ContactRow> for Contact {
    fn from(r: ContactRow) -> Self {
        Contact {
            id: r.id,
            name: r.name,
            phone: r.phone,
            email: r.email,
            country: r.country,
            language: r.language,
            note: r.note,
            created_at: r.created_at,
            updated_at: r.updated_at,
            first_contacted_at: r.first_contacted_at,
            last_contacted_at: r.last_contacted_at,
        }
    }
}

/// A live (not erased) contact of `ws`, optionally locked for the rest of the transaction.
async fn load(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64, lock: bool) -> QueryResult<Option<Contact>> {
    let q = contacts::table
        .filter(contacts::workspace_id.eq(ws.0))
        .filter(contacts::id.eq(id))
        .filter(contacts::erased_at.is_null())
        .select(ContactRow::as_select());
    let row = if lock { q.for_update().first(conn).await.optional()? } else { q.first(conn).await.optional()? };
    Ok(row.map(Contact::from))
}

/// The contact record of `id`, as the REST API returns it: the `data` of `contact.created` and
/// `contact.updated` wherever they are recorded (the inbound message path too).
///
/// # Errors
/// `NotFound` when the contact is not a live contact of `ws`.
pub async fn record(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64) -> QueryResult<Contact> {
    load(conn, ws, id, false).await?.ok_or(diesel::result::Error::NotFound)
}

/// `%` and `_` are LIKE wildcards: a name prefix matches them literally.
fn like_prefix(prefix: &str) -> String {
    let mut p = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// Whether another live contact of the workspace has `email` (the fact [`admit_email`] decides
/// over), asked under a transaction lock on (workspace, e-mail) so that two writers of one
/// address take turns and the second sees the first (no unique index: older contacts may share
/// an address).
async fn email_taken(conn: &mut AsyncPgConnection, ws: WorkspaceId, email: &str, except: i64) -> QueryResult<bool> {
    #[derive(diesel::QueryableByName)]
    struct Taken {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        taken: bool,
    }
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended('contact-email:' || $1 || ':' || $2, 0))")
        .bind::<diesel::sql_types::BigInt, _>(ws.0)
        .bind::<diesel::sql_types::Text, _>(email)
        .execute(conn)
        .await?;
    let row: Taken = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM contacts WHERE workspace_id = $1 AND email = $2 AND id <> $3) AS taken",
    )
    .bind::<diesel::sql_types::BigInt, _>(ws.0)
    .bind::<diesel::sql_types::Text, _>(email)
    .bind::<diesel::sql_types::BigInt, _>(except)
    .get_result(conn)
    .await?;
    Ok(row.taken)
}

fn duplicate(e: &diesel::result::Error) -> Option<ContactField> {
    match unique_violation(e)? {
        "contacts_phone_key" => Some(ContactField::Phone),
        "contacts_email_key" => Some(ContactField::Email),
        _ => None,
    }
}

enum TxError {
    NotFound,
    Duplicate(ContactField),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        match duplicate(&e) {
            Some(f) => TxError::Duplicate(f),
            None => TxError::Db(e),
        }
    }
}

#[derive(AsChangeset)]
#[diesel(table_name = contacts)]
struct ContactSet<'a> {
    name: Option<&'a str>,
    phone: Option<Option<&'a str>>,
    email: Option<Option<&'a str>>,
    country: Option<Option<&'a str>>,
    language: Option<Option<&'a str>>,
    note: Option<Option<&'a str>>,
}

#[async_trait]
impl ContactRepository for PgContactRepository {
    async fn list(
        &self,
        ws: WorkspaceId,
        filter: &ContactFilter,
        after: Option<i64>,
        fetch: i64,
    ) -> Result<Vec<Contact>, ListContactsStoreError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let mut q = contacts::table
            .filter(contacts::workspace_id.eq(ws.0))
            .filter(contacts::erased_at.is_null())
            .filter(contacts::id.gt(after.unwrap_or(0)))
            .select(ContactRow::as_select())
            .order(contacts::id.asc())
            .limit(fetch)
            .into_boxed();
        if let Some(name) = &filter.label {
            let label: Option<i64> = labels::table
                .filter(labels::workspace_id.eq(ws.0))
                .filter(lower(labels::name.nullable()).eq(lower(Some(name.as_str()))))
                .select(labels::id)
                .first(&mut conn)
                .await
                .optional()
                .map_err(repo)?;
            let label = label.ok_or_else(|| ListContactsStoreError::UnknownLabel(name.clone()))?;
            let labelled = thread_labels::table
                .filter(thread_labels::workspace_id.eq(ws.0))
                .filter(thread_labels::label_id.eq(label))
                .select(thread_labels::thread_id);
            q = q.filter(
                contacts::id.eq_any(
                    threads::table
                        .filter(threads::workspace_id.eq(ws.0))
                        .filter(threads::id.eq_any(labelled))
                        .select(threads::contact_id),
                ),
            );
        }
        if let Some(email) = &filter.email {
            q = q.filter(contacts::email.eq(email));
        }
        if let Some(phone) = &filter.phone {
            q = q.filter(contacts::phone.eq(phone));
        }
        if let Some(prefix) = &filter.name_prefix {
            // Both sides lowered by PostgreSQL: one case folding, whatever the text.
            q = q.filter(lower(contacts::name).like(lower(Some(like_prefix(prefix)))));
        }
        if let Some(since) = filter.updated_since {
            q = q.filter(contacts::updated_at.ge(since));
        }
        let rows: Vec<ContactRow> = q.load(&mut conn).await.map_err(repo)?;
        Ok(rows.into_iter().map(Contact::from).collect())
    }

    async fn find(&self, ws: WorkspaceId, id: i64) -> Result<Option<Contact>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        load(&mut conn, ws, id, false).await.map_err(repo)
    }

    async fn insert(&self, ws: WorkspaceId, new: &NewContact) -> Result<Contact, InsertContactError> {
        let mut pooled = self.db.conn().await.map_err(|e| InsertContactError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let new = new.clone();
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    if let Some(email) = &new.email {
                        admit_email(email_taken(conn, ws, email.as_str(), 0).await?).map_err(TxError::Duplicate)?;
                    }
                    let row: ContactRow = diesel::insert_into(contacts::table)
                        .values((
                            contacts::workspace_id.eq(ws.0),
                            contacts::name.eq(&new.name),
                            contacts::phone.eq(new.phone.as_ref().map(|p| p.as_str())),
                            contacts::email.eq(new.email.as_ref().map(|e| e.as_str())),
                            contacts::country.eq(new.country.as_ref().map(|c| c.as_str())),
                            contacts::language.eq(new.language.as_ref().map(|l| l.as_str())),
                            contacts::note.eq(new.note.as_deref()),
                        ))
                        .returning(ContactRow::as_returning())
                        .get_result(conn)
                        .await?;
                    let contact = Contact::from(row);
                    let event = new.event(contact.clone());
                    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event]).await?;
                    Ok(contact)
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::Duplicate(f) => InsertContactError::Duplicate(f),
            TxError::NotFound => InsertContactError::Unknown(repo(diesel::result::Error::NotFound)),
            TxError::Db(e) => InsertContactError::Unknown(repo(e)),
        })
    }

    async fn change(&self, ws: WorkspaceId, id: i64, change: &ContactChange) -> Result<Contact, ChangeContactError> {
        let mut pooled = self.db.conn().await.map_err(|e| ChangeContactError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let change = change.clone();
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    let before = load(conn, ws, id, true).await?.ok_or(TxError::NotFound)?;
                    if !change.alters(&before) {
                        return Ok(before);
                    }
                    if let Some(Some(email)) = &change.email {
                        admit_email(email_taken(conn, ws, email.as_str(), id).await?).map_err(TxError::Duplicate)?;
                    }
                    let set = ContactSet {
                        name: change.name.as_deref(),
                        phone: change.phone.as_ref().map(|v| v.as_ref().map(|p| p.as_str())),
                        email: change.email.as_ref().map(|v| v.as_ref().map(|e| e.as_str())),
                        country: change.country.as_ref().map(|v| v.as_ref().map(|c| c.as_str())),
                        language: change.language.as_ref().map(|v| v.as_ref().map(|l| l.as_str())),
                        note: change.note.as_ref().map(|v| v.as_deref()),
                    };
                    let row: ContactRow = diesel::update(
                        contacts::table.filter(contacts::workspace_id.eq(ws.0)).filter(contacts::id.eq(id)),
                    )
                    .set((set, contacts::updated_at.eq(diesel::dsl::now)))
                    .returning(ContactRow::as_returning())
                    .get_result(conn)
                    .await?;
                    let contact = Contact::from(row);
                    let event = change.event(contact.clone());
                    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event]).await?;
                    Ok(contact)
                }
                .scope_boxed()
            })
            .await;
        result.map_err(|e| match e {
            TxError::NotFound => ChangeContactError::NotFound(id),
            TxError::Duplicate(f) => ChangeContactError::Duplicate(f),
            TxError::Db(e) => ChangeContactError::Unknown(repo(e)),
        })
    }

    async fn erase(&self, ws: WorkspaceId, id: i64, audit: &AuditContext) -> Result<(), EraseContactStoreError> {
        let mut pooled = self.db.conn().await.map_err(|e| EraseContactStoreError::Unknown(repo(e)))?;
        let conn: &mut AsyncPgConnection = &mut pooled;
        let result = conn.transaction::<_, TxError, _>(|conn| erase(conn, ws, id, audit).scope_boxed()).await;
        result.map_err(|e| match e {
            TxError::NotFound => EraseContactStoreError::NotFound(id),
            TxError::Duplicate(_) => {
                EraseContactStoreError::Unknown(repo(anyhow::anyhow!("unexpected unique violation")))
            }
            TxError::Db(e) => EraseContactStoreError::Unknown(repo(e)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_in_a_prefix_are_literal() {
        assert_eq!(like_prefix("an"), "an%");
        assert_eq!(like_prefix("50%_off\\"), "50\\%\\_off\\\\%");
    }
}
