//! The pure core of wms: entities, validated values, business rules and the port traits that the
//! adapters implement. Nothing here knows about HTTP, SQL, an async runtime or configuration files.

pub mod auth;
pub mod channels;
pub mod common;
pub mod contacts;
pub mod users;
pub mod workspace;

pub use common::error::{FieldError, RepoError, ValidationErrors};
