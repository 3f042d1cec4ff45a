//! The platforms' callbacks: delivery statuses, read watermarks and inbound messages of one
//! channel, applied in one transaction.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::channels::{ChannelId, ChannelType};
use domain::connectors::{Applied, CallbackChannel, CallbackStore, PlatformEvents, StatusUpdate, WatermarkUpdate};
use domain::workspace::WorkspaceId;
use domain::RepoError;

use super::inbound::apply_inbound;
use super::{advance, in_tx, PgConnectors};
use crate::error::repo;
use crate::schema::{channels, contacts, messages, threads};

async fn apply_status(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    s: &StatusUpdate,
) -> diesel::QueryResult<bool> {
    let id: Option<i64> = messages::table
        .filter(messages::workspace_id.eq(ch.workspace_id.0))
        .filter(messages::channel_id.eq(ch.channel_id.0))
        .filter(messages::platform_message_id.eq(&s.platform_message_id))
        .select(messages::id)
        .first(conn)
        .await
        .optional()?;
    match id {
        Some(id) => advance(conn, ch.workspace_id, id, s.status, s.at, s.error.as_deref(), None).await,
        None => {
            tracing::info!(channel_id = ch.channel_id.0, platform_message_id = %s.platform_message_id, "status for an unknown message ignored");
            Ok(false)
        }
    }
}

async fn apply_watermark(
    conn: &mut AsyncPgConnection,
    ch: &CallbackChannel,
    w: &WatermarkUpdate,
) -> diesel::QueryResult<usize> {
    let ids: Vec<i64> = messages::table
        .inner_join(threads::table.on(threads::id.eq(messages::thread_id)))
        .inner_join(contacts::table.on(contacts::id.eq(threads::contact_id)))
        .filter(messages::workspace_id.eq(ch.workspace_id.0))
        .filter(messages::channel_id.eq(ch.channel_id.0))
        .filter(messages::direction.eq("outbound"))
        .filter(messages::status.eq_any(WatermarkUpdate::moved_statuses()))
        .filter(messages::created_at.le(w.watermark))
        .filter(contacts::platform_user_id.eq(&w.contact))
        .select(messages::id)
        .order(messages::id.asc())
        .load(conn)
        .await?;
    let mut changed = 0;
    for id in ids {
        if advance(conn, ch.workspace_id, id, w.status, w.watermark, None, None).await? {
            changed += 1;
        }
    }
    Ok(changed)
}

#[async_trait]
impl CallbackStore for PgConnectors {
    async fn channels_for_accounts(
        &self,
        channel_type: ChannelType,
        account_ids: &[String],
    ) -> Result<Vec<CallbackChannel>, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        // One query for all: a callback's accounts never cost a query each.
        let rows: Vec<CallbackRow> = channels::table
            .filter(channels::channel_type.eq(channel_type.as_str()))
            .filter(channels::platform_account_id.eq_any(account_ids))
            .filter(channels::credentials_encrypted.is_not_null())
            .select((
                channels::workspace_id,
                channels::id,
                channels::platform_account_id,
                channels::credentials_encrypted,
            ))
            .load(&mut conn)
            .await
            .map_err(repo)?;
        Ok(callback_channels(rows))
    }

    async fn verify_token_known(&self, channel_type: ChannelType, digest: [u8; 32]) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await.map_err(repo)?;
        let n: i64 = channels::table
            .filter(channels::channel_type.eq(channel_type.as_str()))
            .filter(channels::verify_token_digest.eq(digest.to_vec()))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(repo)?;
        Ok(n > 0)
    }

    async fn apply(&self, channel: &CallbackChannel, events: &PlatformEvents) -> Result<Applied, RepoError> {
        let channel = channel.clone();
        let events = events.clone();
        in_tx(&self.db, move |c| {
            async move {
                let channel_type: String = channels::table
                    .filter(channels::id.eq(channel.channel_id.0))
                    .select(channels::channel_type)
                    .first(c)
                    .await?;
                let channel_type = channel_type.parse::<ChannelType>().unwrap_or(ChannelType::Whatsapp);
                let mut applied = Applied::default();
                // Inbound first: a reply and the read receipt of our message may come together.
                for m in &events.inbound {
                    if apply_inbound(c, &channel, channel_type, m).await? {
                        applied.inbound += 1;
                    }
                }
                for s in &events.statuses {
                    if apply_status(c, &channel, s).await? {
                        applied.statuses += 1;
                    }
                }
                for w in &events.watermarks {
                    applied.statuses += apply_watermark(c, &channel, w).await?;
                }
                Ok(applied)
            }
            .scope_boxed()
        })
        .await
    }
}

/// `(workspace_id, id, platform_account_id, credentials_encrypted)` of a channel.
type CallbackRow = (i64, i64, Option<String>, Option<Vec<u8>>);

fn callback_channels(rows: Vec<CallbackRow>) -> Vec<CallbackChannel> {
    rows.into_iter()
        .filter_map(|(ws, id, account, creds)| {
            Some(CallbackChannel {
                workspace_id: WorkspaceId(ws),
                channel_id: ChannelId(id),
                account_id: account?,
                credentials_sealed: creds?,
            })
        })
        .collect()
}
