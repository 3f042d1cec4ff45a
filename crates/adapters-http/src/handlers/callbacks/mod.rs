//! `/platform-webhooks/{whatsapp,messenger,instagram}`: the platforms' callbacks (subscription
//! handshake, delivery statuses, inbound messages).

pub mod payload;
pub mod receive;
pub mod template_payload;
pub mod verify;
pub mod work;

use domain::channels::ChannelType;

use crate::error::ApiError;

/// The platform named in the path.
fn platform(name: &str) -> Result<ChannelType, ApiError> {
    name.parse::<ChannelType>().map_err(|_| ApiError::NotFound(format!("no platform `{name}`")))
}
