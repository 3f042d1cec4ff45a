//! Errors shared by every area: validation failures and infrastructure failures.

use std::fmt;

/// One invalid input field, named as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldError {
    /// The field's name in the request (`"email"`, `"events[2]"`).
    pub field: String,
    /// A sentence a person can act on.
    pub message: String,
}

impl FieldError {
    /// An error for `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// Every invalid field of one input, so a client can fix them all at once.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|e| format!("{}: {}", e.field, e.message)).collect();
        write!(f, "invalid input ({})", parts.join("; "))
    }
}

impl ValidationErrors {
    /// A single-field failure.
    pub fn one(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self(vec![FieldError::new(field, message)])
    }

    /// Records the error of `result` under its field and keeps the value if there was none.
    pub fn check<T>(&mut self, result: Result<T, FieldError>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.0.push(e);
                None
            }
        }
    }

    /// `Err(self)` when any field failed.
    pub fn into_result(self) -> Result<(), Self> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

/// A failure of the infrastructure behind a port (database down, I/O error): never the caller's fault.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RepoError(#[from] pub anyhow::Error);

impl RepoError {
    /// Wraps any error as an infrastructure failure.
    pub fn new<E: Into<anyhow::Error>>(e: E) -> Self {
        Self(e.into())
    }

    /// The database could not be reached in time (no connection could be had, or the one in use
    /// was cut): the request may succeed if retried, so it is answered 503, not 500.
    pub fn unavailable(why: impl Into<String>) -> Self {
        Self(anyhow::Error::new(DatabaseUnavailable(why.into())))
    }

    /// Whether this failure is the database being out of reach (anywhere in the cause chain).
    pub fn is_unavailable(&self) -> bool {
        is_unavailable(&self.0)
    }
}

/// The database could not be reached within the configured bound: a passing condition, not a bug.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DatabaseUnavailable(pub String);

/// Whether `e` (or anything in its cause chain) is a [`DatabaseUnavailable`].
pub fn is_unavailable(e: &anyhow::Error) -> bool {
    e.downcast_ref::<DatabaseUnavailable>().is_some() || e.chain().any(|c| c.is::<DatabaseUnavailable>())
}
