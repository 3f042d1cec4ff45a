//! Inbound platform messages: reads the facts [`plan_inbound`] decides on, and executes its plan
//! in the caller's transaction, recording each step's event right after the step.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::channels::ChannelType;
use domain::connectors::inbound::{
    plan_inbound, ContactStep, InboundFacts, InboundPlan, KnownContact, KnownThread, SenderAddress, ThreadStep,
};
use domain::connectors::{CallbackChannel, InboundMessage};
use domain::messaging::{Direction, Message, MessageId, MessageStatus, Sender, ThreadId};
use domain::threads::ThreadRecord;
use domain::threads::ThreadStatus;
use domain::workspace::WorkspaceId;
use time::OffsetDateTime;

use crate::schema::{contacts, messages, threads};
use crate::webhooks::outbox;

#[derive(QueryableByName)]
struct InsertedId {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// Stores an inbound message as the domain decides. Returns whether it was new.
pub(super) async fn apply_inbound(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    channel_type: ChannelType,
    m: &InboundMessage,
) -> diesel::QueryResult<bool> {
    let address = SenderAddress::of(channel_type);
    // At most twice: a first plan to create the contact may lose the race to a concurrent first
    // message of the same sender; the contact then exists, and the second plan touches it.
    for _ in 0..2 {
        let facts = read_facts(conn, ch, address, m).await?;
        let Some(plan) = plan_inbound(channel_type, m, &facts) else { return Ok(false) };
        if execute(conn, ch, &plan, facts.thread.as_ref()).await? {
            return Ok(true);
        }
    }
    Err(diesel::result::Error::NotFound)
}

/// The duplicate check, the sender's contact (locked: concurrent messages of one sender wait
/// here, so they cannot both create a thread) and its latest thread on the channel (locked too:
/// its status is the one the bump overwrites).
async fn read_facts(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    address: SenderAddress,
    m: &InboundMessage,
) -> diesel::QueryResult<InboundFacts> {
    let ws = ch.workspace_id;
    let seen: Option<i64> = messages::table
        .filter(messages::channel_id.eq(ch.channel_id.0))
        .filter(messages::platform_message_id.eq(&m.platform_message_id))
        .select(messages::id)
        .first(conn)
        .await
        .optional()?;
    if seen.is_some() {
        return Ok(InboundFacts { duplicate: true, ..InboundFacts::default() });
    }
    let received_at = Some(OffsetDateTime::now_utc());
    let q = contacts::table.filter(contacts::workspace_id.eq(ws.0)).select((contacts::id, contacts::name));
    let contact: Option<(i64, Option<String>)> = match address {
        SenderAddress::Phone => q.filter(contacts::phone.eq(&m.from)).for_update().first(conn).await.optional()?,
        SenderAddress::PlatformUserId => {
            q.filter(contacts::platform_user_id.eq(&m.from)).for_update().first(conn).await.optional()?
        }
    };
    let Some((id, name)) = contact else { return Ok(InboundFacts { received_at, ..InboundFacts::default() }) };
    let thread: Option<(i64, String, Option<OffsetDateTime>)> = threads::table
        .filter(threads::workspace_id.eq(ws.0))
        .filter(threads::contact_id.eq(id))
        .filter(threads::channel_id.eq(ch.channel_id.0))
        .order(threads::id.desc())
        .select((threads::id, threads::status, threads::latest_inbound_at))
        .for_update()
        .first(conn)
        .await
        .optional()?;
    Ok(InboundFacts {
        duplicate: false,
        contact: Some(KnownContact { id, name }),
        thread: thread.map(|(id, status, latest_inbound_at)| KnownThread {
            id,
            status: ThreadStatus::stored(&status),
            latest_inbound_at,
        }),
        received_at,
    })
}

/// Writes the plan. `false` when the contact to create was created meanwhile by a concurrent
/// transaction (nothing written then).
async fn execute(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    plan: &InboundPlan,
    known: Option<&KnownThread>,
) -> diesel::QueryResult<bool> {
    let ws = ch.workspace_id;
    let contact_id = match &plan.contact {
        ContactStep::Create { column, address, name, at } => {
            let column = column.column();
            // Concurrent first messages from one sender race to create the contact: the losers
            // wait for the winner's commit, insert nothing and plan again with its row
            // (docs/benchmarks.md, "Concurrent first contact").
            let inserted: Option<i64> = diesel::sql_query(format!(
                "INSERT INTO contacts (workspace_id, name, {column}, first_contacted_at, last_contacted_at)
                 VALUES ($1, $2, $3, $4, $4)
                 ON CONFLICT (workspace_id, {column}) WHERE {column} IS NOT NULL DO NOTHING
                 RETURNING id"
            ))
            .bind::<BigInt, _>(ws.0)
            .bind::<Nullable<Text>, _>(name.as_deref())
            .bind::<Text, _>(address)
            .bind::<Timestamptz, _>(*at)
            .load::<InsertedId>(conn)
            .await?
            .pop()
            .map(|r| r.id);
            let Some(id) = inserted else { return Ok(false) };
            id
        }
        ContactStep::Touch { id, name, at, .. } => {
            diesel::update(contacts::table.find(*id))
                .set((
                    contacts::last_contacted_at.eq(*at),
                    contacts::first_contacted_at.eq(diesel::dsl::sql::<Nullable<Timestamptz>>(
                        "coalesce(first_contacted_at, ",
                    )
                    .bind::<Timestamptz, _>(*at)
                    .sql(")")),
                    contacts::name.eq(diesel::dsl::sql::<Nullable<Text>>("coalesce(name, ")
                        .bind::<Nullable<Text>, _>(name.as_deref())
                        .sql(")")),
                    contacts::updated_at.eq(diesel::dsl::now),
                ))
                .execute(conn)
                .await?;
            *id
        }
    };
    if let Some(event) = plan.contact.event() {
        let contact = crate::contacts::record(conn, ws, contact_id).await?;
        outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event(contact)]).await?;
    }
    let thread_id = match plan.thread {
        ThreadStep::Create { at } => {
            let id = diesel::insert_into(threads::table)
                .values((
                    threads::workspace_id.eq(ws.0),
                    threads::contact_id.eq(contact_id),
                    threads::channel_id.eq(ch.channel_id.0),
                    threads::unread_count.eq(1),
                    threads::last_message_at.eq(at),
                    threads::latest_inbound_at.eq(at),
                ))
                .returning(threads::id)
                .get_result::<i64>(conn)
                .await?;
            // The channel's default team and its policy, before `thread.created` is recorded.
            crate::assignment::place_new_threads(conn, ws, ch.channel_id.0, &[id], OffsetDateTime::now_utc()).await?;
            id
        }
        ThreadStep::Bump { id, at, latest_inbound_at, reopen, .. } => {
            diesel::sql_query(
                "UPDATE threads SET unread_count = unread_count + 1, last_message_at = greatest(last_message_at, $2),
                        latest_inbound_at = $3, updated_at = now()
                 WHERE id = $1",
            )
            .bind::<BigInt, _>(id)
            .bind::<Timestamptz, _>(at)
            .bind::<Timestamptz, _>(latest_inbound_at)
            .execute(conn)
            .await?;
            if let Some(change) = &reopen {
                crate::threads::apply_status(conn, ws, id, change).await?;
            }
            id
        }
    };
    // The SLA before the thread's event, which then carries it.
    let (status_before, had_inbound) = match (&plan.thread, known) {
        (ThreadStep::Bump { .. }, Some(k)) => (Some(k.status), k.latest_inbound_at.is_some()),
        _ => (None, false),
    };
    let breaches =
        crate::sla::tracking::on_inbound(conn, ws, thread_id, status_before, had_inbound, plan.message.at).await?;
    if let Some(event) = plan.thread.event() {
        let thread = thread_record(conn, ws, thread_id).await?;
        outbox::record(conn, ws, OffsetDateTime::now_utc(), &[event(thread)]).await?;
    }
    if let ThreadStep::Bump { adds_load: true, .. } = plan.thread {
        crate::assignment::check_reopened(conn, ws, thread_id, OffsetDateTime::now_utc()).await?;
    }
    let new = &plan.message;
    let row: (i64, OffsetDateTime) = diesel::insert_into(messages::table)
        .values((
            messages::workspace_id.eq(ws.0),
            messages::thread_id.eq(thread_id),
            messages::channel_id.eq(ch.channel_id.0),
            messages::direction.eq(Direction::Inbound.as_str()),
            messages::sender_kind.eq("contact"),
            messages::sender_type.eq(Sender::Contact(contact_id).kind()),
            messages::sender_id.eq(contact_id),
            messages::content.eq(&new.content),
            messages::status.eq(MessageStatus::Delivered.as_str()),
            messages::delivered_at.eq(new.at),
            messages::platform_message_id.eq(&new.platform_message_id),
            messages::created_at.eq(new.at),
            messages::updated_at.eq(diesel::dsl::now),
        ))
        .returning((messages::id, messages::created_at))
        .get_result(conn)
        .await?;
    let message = Message {
        id: MessageId(row.0),
        channel_id: ch.channel_id,
        thread_id: ThreadId(thread_id),
        direction: Direction::Inbound,
        content: new.content.clone(),
        status: MessageStatus::Delivered,
        created_at: row.1,
        sender: Sender::Contact(contact_id),
    };
    let report = plan.report(message.created_at);
    outbox::record(conn, ws, OffsetDateTime::now_utc(), &[new.event(message.into())]).await?;
    crate::sla::tracking::announce(conn, ws, breaches).await?;
    crate::reports::record(conn, ws, thread_id, report).await?;
    Ok(true)
}

/// The Thread record of `id` as it is now in this transaction (the `data` of `thread.*`).
async fn thread_record(conn: &mut AsyncPgConnection, ws: WorkspaceId, id: i64) -> diesel::QueryResult<ThreadRecord> {
    let thread = crate::threads::load(conn, ws, id, false).await?.ok_or(diesel::result::Error::NotFound)?;
    Ok(thread.into())
}
