//! Who may do what: the one policy over roles, plans and API key scopes (`docs/access.md`).

mod effects;
pub mod policy;
pub mod scope;

pub use policy::*;
pub use scope::*;
