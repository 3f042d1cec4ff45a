//! Values and ports shared by every area.

pub mod error;
pub mod instant;
pub mod page;
pub mod ports;
pub mod text;
