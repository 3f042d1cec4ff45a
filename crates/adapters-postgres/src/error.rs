//! Translation of diesel errors into the domain's terms at the boundary.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::RepoError;

/// The name of the unique constraint a statement violated, if that is what failed.
pub fn unique_violation(e: &DieselError) -> Option<&str> {
    match e {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            Some(info.constraint_name().unwrap_or(""))
        }
        _ => None,
    }
}

/// Any diesel or pool failure as an infrastructure error.
pub fn repo<E: Into<anyhow::Error>>(e: E) -> RepoError {
    RepoError::new(e)
}
