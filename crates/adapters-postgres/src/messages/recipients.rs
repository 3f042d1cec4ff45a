//! The contacts and threads a send addresses: found by the recipient's address (phone or
//! platform user id) or by thread, created with their events when new, one at a time or set-wise
//! for a group of sends.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::channels::{ChannelId, ChannelType};
use domain::connectors::inbound::SenderAddress;
use domain::messaging::recipients::{
    contact_created, created_contact, created_thread, opens_conversation, recipients_to_create, thread_created,
};
use domain::messaging::window::{admit, WindowClosed};
use domain::messaging::NewOutboundMessage;
use domain::webhooks::DomainEvent;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::schema::{channels, contacts, threads};
use crate::webhooks::outbox;

/// Whether contacts on this channel are found by phone (WhatsApp) or by platform user id.
pub(super) async fn addressed_by_phone(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_id: ChannelId,
) -> QueryResult<bool> {
    let channel_type: String = channels::table
        .filter(channels::workspace_id.eq(ws.0))
        .filter(channels::id.eq(channel_id.0))
        .select(channels::channel_type)
        .first(conn)
        .await?;
    // A channel type wms does not know addresses nobody by phone.
    Ok(channel_type.parse::<ChannelType>().is_ok_and(|t| SenderAddress::of(t) == SenderAddress::Phone))
}

#[derive(QueryableByName)]
pub(super) struct InsertedContact {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The contact with this address (a phone for WhatsApp, a platform user id otherwise), created
/// with `contact.created` when new.
///
/// Concurrent first sends to one address race to create it. The insert is `ON CONFLICT DO
/// NOTHING` on the address's unique index: a loser waits for the winner to commit, inserts
/// nothing and then reads the winner's row (a new statement, so a new snapshot that has it). So
/// exactly one contact and one `contact.created` exist, and no caller sees a unique violation.
pub(super) async fn contact_for_address(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    address: &str,
) -> QueryResult<i64> {
    let (column, target) = if by_phone {
        ("phone", "(workspace_id, phone) WHERE phone IS NOT NULL")
    } else {
        ("platform_user_id", "(workspace_id, platform_user_id) WHERE platform_user_id IS NOT NULL")
    };
    // The row can vanish between the conflict and the read (a contact erased meanwhile): then
    // the insert is simply tried again.
    for _ in 0..3 {
        if let Some(id) = find_contact(conn, ws, by_phone, address).await? {
            return Ok(id);
        }
        let inserted: Option<InsertedContact> = diesel::sql_query(format!(
            "INSERT INTO contacts (workspace_id, {column}, first_contacted_at) VALUES ($1, $2, now())
             ON CONFLICT {target} DO NOTHING
             RETURNING id"
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<Text, _>(address)
        .get_result(conn)
        .await
        .optional()?;
        if let Some(c) = inserted {
            let event = contact_created(crate::contacts::record(conn, ws, c.id).await?);
            outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &[event]).await?;
            return Ok(c.id);
        }
    }
    Err(diesel::result::Error::NotFound)
}

pub(super) async fn find_contact(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    address: &str,
) -> QueryResult<Option<i64>> {
    // Locked (`FOR KEY SHARE`) until the send commits, so that an erasure of the contact either
    // waits for the send (and then clears its message) or commits first, and the row no longer
    // matches the address it had.
    let q = contacts::table.filter(contacts::workspace_id.eq(ws.0)).select(contacts::id).for_key_share();
    if by_phone {
        q.filter(contacts::phone.eq(address)).first(conn).await.optional()
    } else {
        q.filter(contacts::platform_user_id.eq(address)).first(conn).await.optional()
    }
}

/// Whether the contacts of these threads are erased, each row locked (`FOR KEY SHARE`, in contact
/// order) until the send's transaction ends: the fact
/// [`ThreadRef::addressable`](domain::messaging::ThreadRef::addressable) decides on again inside
/// the transaction. An erasure locks its contact `FOR UPDATE` first, so it either
/// waits for the send to commit (and then clears the new message too) or commits before the
/// send reads the contact, which is then erased.
pub(super) async fn threads_erased(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    thread_ids: &[i64],
) -> QueryResult<std::collections::HashMap<i64, bool>> {
    #[derive(QueryableByName)]
    struct ThreadContact {
        #[diesel(sql_type = BigInt)]
        id: i64,
        #[diesel(sql_type = diesel::sql_types::Nullable<Timestamptz>)]
        erased_at: Option<OffsetDateTime>,
    }
    let rows: Vec<ThreadContact> = diesel::sql_query(
        "SELECT t.id, c.erased_at FROM threads t JOIN contacts c ON c.id = t.contact_id
         WHERE t.workspace_id = $1 AND t.id = ANY ($2) AND c.workspace_id = $1
         ORDER BY c.id FOR KEY SHARE OF c",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<diesel::sql_types::Array<BigInt>, _>(thread_ids)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.erased_at.is_some())).collect())
}

pub(super) async fn latest_thread(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    contact_id: i64,
    channel_id: ChannelId,
) -> QueryResult<Option<(i64, Option<OffsetDateTime>)>> {
    threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(contact_id))
        .filter(threads::channel_id.eq(channel_id.0))
        .order(threads::id.desc())
        .select((threads::id, threads::latest_inbound_at))
        .first(conn)
        .await
        .optional()
}

/// A send's thread, and whether this transaction created it: a new thread is inserted with the
/// activity (`last_message_at`) its first message gives it, so it needs no update afterwards.
#[derive(Clone, Copy)]
pub(super) struct SendThread {
    pub(super) id: i64,
    pub(super) created: bool,
    /// Its latest inbound platform time (the service window); `None` for a new thread.
    pub(super) latest_inbound_at: Option<OffsetDateTime>,
}

/// The contact's most recent thread on the channel, or a new one (with `thread.created`).
///
/// Threads have no unique key (a contact may have several on a channel), so concurrent first
/// sends are serialised on the contact's row instead: only when no thread exists, the row is
/// locked (`FOR NO KEY UPDATE`, which does not block the foreign-key checks of other inserts)
/// and the lookup repeated, so the second of two racing senders finds the first one's thread.
/// Inbound messages update the same row before they look for a thread, so they take part too.
pub(super) async fn thread_for_contact(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    contact_id: i64,
    channel_id: ChannelId,
) -> QueryResult<SendThread> {
    if let Some((id, latest_inbound_at)) = latest_thread(conn, ws, contact_id, channel_id).await? {
        return Ok(SendThread { id, created: false, latest_inbound_at });
    }
    contacts::table
        .filter(contacts::workspace_id.eq(ws.0))
        .filter(contacts::id.eq(contact_id))
        .select(contacts::id)
        .for_no_key_update()
        .first::<i64>(conn)
        .await?;
    if let Some((id, latest_inbound_at)) = latest_thread(conn, ws, contact_id, channel_id).await? {
        return Ok(SendThread { id, created: false, latest_inbound_at });
    }
    let id: i64 = diesel::insert_into(threads::table)
        .values((
            threads::workspace_id.eq(ws.0),
            threads::contact_id.eq(contact_id),
            threads::channel_id.eq(channel_id.0),
            // The message that needs the thread is inserted next in this transaction, with
            // `created_at = now()`, which sets this again: the same value, so `thread.created`
            // carries the record as it is once the transaction commits.
            threads::last_message_at.eq(diesel::dsl::now),
        ))
        .returning(threads::id)
        .get_result(conn)
        .await?;
    crate::assignment::place_new_threads(conn, ws, channel_id.0, &[id], time::OffsetDateTime::now_utc()).await?;
    let thread = crate::threads::load(conn, ws, id, false).await?.ok_or(diesel::result::Error::NotFound)?;
    outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &[thread_created(thread.into())]).await?;
    Ok(SendThread { id, created: true, latest_inbound_at: None })
}

/// The thread for an address on a channel: its contact found or created, then the contact's most
/// recent thread on the channel, or a new one. A send that needs an open service window (free
/// text) creates nothing: it takes the contact's latest thread if there is one, and the domain's
/// [`admit`] decides on its window before anything is written (a new recipient's is closed).
pub(super) async fn thread_for_address(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    new: &NewOutboundMessage,
    address: &str,
) -> Result<SendThread, SendRefused> {
    let by_phone = addressed_by_phone(conn, ws, new.channel_id).await?;
    if !opens_conversation(new.need) {
        let thread = match find_contact(conn, ws, by_phone, address).await? {
            Some(contact_id) => latest_thread(conn, ws, contact_id, new.channel_id).await?,
            None => None,
        };
        admit(new.need, thread.and_then(|(_, latest)| latest), new.at)?;
        let (id, latest_inbound_at) = thread.ok_or(diesel::result::Error::NotFound)?;
        return Ok(SendThread { id, created: false, latest_inbound_at });
    }
    let contact_id = contact_for_address(conn, ws, by_phone, address).await?;
    Ok(thread_for_contact(conn, ws, contact_id, new.channel_id).await?)
}

/// Why a send's recipient resolution stopped.
pub(super) enum SendRefused {
    /// The domain refused the send: its window is closed (nothing was written).
    Window(WindowClosed),
    /// A database failure.
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for SendRefused {
    fn from(e: diesel::result::Error) -> Self {
        SendRefused::Db(e)
    }
}

impl From<WindowClosed> for SendRefused {
    fn from(e: WindowClosed) -> Self {
        SendRefused::Window(e)
    }
}

#[derive(QueryableByName)]
pub(super) struct AddressedContact {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    address: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

/// [`contact_for_address`] for several addresses (sorted, distinct) at once: the contacts by
/// address, the new ones created with one `contact.created` each. The same race rules: the
/// insert is `ON CONFLICT DO NOTHING` (in address order, so concurrent groups take the unique
/// index's locks in the same order), and the contacts a concurrent transaction created are read
/// after it committed.
pub(super) async fn contacts_for_addresses(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    by_phone: bool,
    addresses: &[&str],
    creatable: &std::collections::HashSet<&str>,
) -> QueryResult<std::collections::HashMap<String, i64>> {
    let (column, target) = if by_phone {
        ("phone", "(workspace_id, phone) WHERE phone IS NOT NULL")
    } else {
        ("platform_user_id", "(workspace_id, platform_user_id) WHERE platform_user_id IS NOT NULL")
    };
    let find = |wanted: Vec<&str>| {
        diesel::sql_query(format!(
            "SELECT id, {column} AS address, created_at FROM contacts WHERE workspace_id = $1 AND {column} = ANY ($2)
             ORDER BY id FOR KEY SHARE"
        ))
        .bind::<BigInt, _>(ws.0)
        .bind::<diesel::sql_types::Array<Text>, _>(wanted.into_iter().map(str::to_owned).collect::<Vec<_>>())
    };
    let mut found: std::collections::HashMap<String, i64> =
        find(addresses.to_vec()).load::<AddressedContact>(conn).await?.into_iter().map(|c| (c.address, c.id)).collect();
    let missing = recipients_to_create(addresses, |a| found.contains_key(a), creatable);
    if missing.is_empty() {
        return Ok(found);
    }
    let mut inserted: Vec<AddressedContact> = diesel::sql_query(format!(
        "INSERT INTO contacts (workspace_id, {column}, first_contacted_at)
         SELECT $1, u.address, now() FROM unnest($2::text[]) WITH ORDINALITY AS u (address, n) ORDER BY u.n
         ON CONFLICT {target} DO NOTHING
         RETURNING id, {column} AS address, created_at"
    ))
    .bind::<BigInt, _>(ws.0)
    .bind::<diesel::sql_types::Array<Text>, _>(missing.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    .load(conn)
    .await?;
    inserted.sort_unstable_by_key(|c| c.id);
    // The contacts as the insert wrote them (the same record `contact_for_address` reads back).
    let events: Vec<DomainEvent> =
        inserted.iter().map(|c| contact_created(created_contact(c.id, &c.address, by_phone, c.created_at))).collect();
    outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &events).await?;
    found.extend(inserted.into_iter().map(|c| (c.address, c.id)));
    // Those another transaction created first: its commit was waited for, a new statement sees it.
    let raced: Vec<&str> = missing.into_iter().filter(|a| !found.contains_key(*a)).collect();
    if !raced.is_empty() {
        let more = find(raced.clone()).load::<AddressedContact>(conn).await?;
        if more.len() != raced.len() {
            // Erased meanwhile: the group fails and each send is made alone (which tries again).
            return Err(diesel::result::Error::NotFound);
        }
        found.extend(more.into_iter().map(|c| (c.address, c.id)));
    }
    Ok(found)
}

#[derive(QueryableByName)]
pub(super) struct ContactThread {
    #[diesel(sql_type = BigInt)]
    contact_id: i64,
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<Timestamptz>)]
    latest_inbound_at: Option<OffsetDateTime>,
}

#[derive(QueryableByName)]
pub(super) struct NewThread {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    contact_id: i64,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

/// [`thread_for_contact`] for several contacts (sorted, distinct) on one channel: each one's most
/// recent thread by contact, the missing ones created (with `thread.created`) under the contacts'
/// row locks, taken in id order, with the lookup repeated under them.
pub(super) async fn threads_for_contacts(
    conn: &mut AsyncPgConnection,
    ws: WorkspaceId,
    channel_id: ChannelId,
    contact_ids: &[i64],
    creatable: &std::collections::HashSet<i64>,
) -> QueryResult<std::collections::HashMap<i64, SendThread>> {
    async fn latest(
        conn: &mut AsyncPgConnection,
        ws: WorkspaceId,
        channel_id: ChannelId,
        contact_ids: &[i64],
    ) -> QueryResult<Vec<ContactThread>> {
        diesel::sql_query(
            "SELECT DISTINCT ON (contact_id) contact_id, id, latest_inbound_at FROM threads
             WHERE workspace_id = $1 AND channel_id = $2 AND contact_id = ANY ($3)
             ORDER BY contact_id, id DESC",
        )
        .bind::<BigInt, _>(ws.0)
        .bind::<BigInt, _>(channel_id.0)
        .bind::<diesel::sql_types::Array<BigInt>, _>(contact_ids)
        .load(conn)
        .await
    }
    let known = |t: ContactThread| {
        (t.contact_id, SendThread { id: t.id, created: false, latest_inbound_at: t.latest_inbound_at })
    };
    let mut found: std::collections::HashMap<i64, SendThread> =
        latest(conn, ws, channel_id, contact_ids).await?.into_iter().map(known).collect();
    let missing = recipients_to_create(contact_ids, |c| found.contains_key(&c), creatable);
    if missing.is_empty() {
        return Ok(found);
    }
    let locked = diesel::sql_query(
        "SELECT id FROM contacts WHERE workspace_id = $1 AND id = ANY ($2) ORDER BY id FOR NO KEY UPDATE",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<diesel::sql_types::Array<BigInt>, _>(&missing)
    .execute(conn)
    .await?;
    if locked != missing.len() {
        return Err(diesel::result::Error::NotFound);
    }
    found.extend(latest(conn, ws, channel_id, &missing).await?.into_iter().map(known));
    let create: Vec<i64> = missing.into_iter().filter(|c| !found.contains_key(c)).collect();
    if create.is_empty() {
        return Ok(found);
    }
    // `last_message_at = now()`: the time of the messages this transaction inserts next (their
    // `created_at` is `now()` too), as `thread_for_contact` does, so these threads are not updated
    // again for them (`updated_at` is indexed: each update of a thread is a new row version in each of its indexes).
    let mut created: Vec<NewThread> = diesel::sql_query(
        "INSERT INTO threads (workspace_id, contact_id, channel_id, last_message_at)
         SELECT $1, u.contact_id, $2, now() FROM unnest($3::bigint[]) WITH ORDINALITY AS u (contact_id, n) ORDER BY u.n
         RETURNING id, contact_id, status, created_at",
    )
    .bind::<BigInt, _>(ws.0)
    .bind::<BigInt, _>(channel_id.0)
    .bind::<diesel::sql_types::Array<BigInt>, _>(&create)
    .load(conn)
    .await?;
    created.sort_unstable_by_key(|t| t.id);
    let ids: Vec<i64> = created.iter().map(|t| t.id).collect();
    let placed =
        crate::assignment::place_new_threads(conn, ws, channel_id.0, &ids, time::OffsetDateTime::now_utc()).await?;
    let records: Vec<domain::threads::ThreadRecord> = if placed {
        // Placed with the channel's team: the records as they are now.
        crate::threads::load_many(conn, ws, &ids).await?.into_iter().map(Into::into).collect()
    } else {
        created_records(channel_id, &created)
    };
    let events: Vec<DomainEvent> = records.into_iter().map(thread_created).collect();
    outbox::record(conn, ws, time::OffsetDateTime::now_utc(), &events).await?;
    found.extend(
        created.into_iter().map(|t| (t.contact_id, SendThread { id: t.id, created: true, latest_inbound_at: None })),
    );
    Ok(found)
}

/// The records of threads just created unassigned, without reading them back: the columns as
/// `thread_for_contact` reads them back (`last_message_at` and `created_at` are both the
/// transaction's `now()`).
fn created_records(channel_id: ChannelId, created: &[NewThread]) -> Vec<domain::threads::ThreadRecord> {
    created.iter().map(|t| created_thread(t.id, channel_id.0, t.contact_id, &t.status, t.created_at)).collect()
}
