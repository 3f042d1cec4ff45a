//! Translation of diesel errors into the domain's terms at the boundary.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::RepoError;

use crate::pool::PoolError;

/// The name of the unique constraint a statement violated, if that is what failed.
pub fn unique_violation(e: &DieselError) -> Option<&str> {
    match e {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            Some(info.constraint_name().unwrap_or(""))
        }
        _ => None,
    }
}

/// Any diesel or pool failure as an infrastructure error; the database being out of reach (no
/// connection in time, or the connection cut under the statement) is marked as such, so it is
/// answered 503 `service_unavailable` and not 500 (`docs/architecture.md`, "Database out of reach").
pub fn repo<E: Into<anyhow::Error>>(e: E) -> RepoError {
    let e = e.into();
    if domain::is_unavailable(&e) {
        return RepoError::new(e);
    }
    let lost = match e.downcast_ref::<DieselError>() {
        Some(d) if connection_lost(d) => Some("database connection lost: "),
        Some(_) => None,
        // PoolError's message already says "database unavailable".
        None => matches!(e.downcast_ref::<PoolError>(), Some(PoolError::Unavailable(_))).then_some(""),
    };
    match lost {
        Some(prefix) => RepoError::unavailable(format!("{prefix}{e:#}")),
        None => RepoError::new(e),
    }
}

/// One failure shared by the `n` writes of a batch: a copy for each, each keeping whether the
/// database was out of reach, so that every caller answers 503 and not 500.
pub fn repo_for_each<E: Into<anyhow::Error>>(e: E, n: usize) -> Vec<RepoError> {
    let failure = repo(e);
    let why = format!("{:#}", failure.0);
    let unavailable = failure.is_unavailable();
    (0..n)
        .map(|_| {
            if unavailable {
                RepoError::unavailable(why.clone())
            } else {
                RepoError::new(anyhow::anyhow!(why.clone()))
            }
        })
        .collect()
}

/// Whether a statement failed because its connection is gone (closed, terminated by the server,
/// or refused), rather than because of the statement.
pub fn connection_lost(e: &DieselError) -> bool {
    match e {
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand, _) => {
            true
        }
        // diesel-async keeps no SQLSTATE for these; PostgreSQL's messages for 57P01..57P03
        // (terminated, shutting down, cannot connect now) and 53300 (too many connections).
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) => {
            let m = info.message();
            m.starts_with("terminating connection")
                || m.contains("too many clients")
                || m.contains("connection slots are reserved")
                || m.contains("the database system is")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_failure_keeps_being_the_database_out_of_reach_for_every_write() {
        let copies = repo_for_each(PoolError::Unavailable("no database connection within 500 ms".into()), 3);
        assert_eq!(copies.len(), 3);
        assert!(copies.iter().all(RepoError::is_unavailable));
        assert!(copies.iter().all(|c| c.to_string().contains("no database connection within 500 ms")));

        let copies = repo_for_each(anyhow::anyhow!("a bug"), 2);
        assert!(copies.iter().all(|c| !c.is_unavailable() && c.to_string() == "a bug"));
    }
}
