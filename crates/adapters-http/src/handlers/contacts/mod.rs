//! `/v1/contacts`: the people a workspace talks to, for integrators (issue 15).

pub mod create;
pub mod delete;
pub mod get;
pub mod list;
pub mod update;

use serde::{Deserialize, Deserializer};

/// `Some(None)` for an explicit null, so that null (clear) differs from absent (keep).
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}
