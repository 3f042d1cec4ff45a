//! The filters of a listing: every bad parameter of the query is named in one 422, and the cursor,
//! bound to the filter set, is read last so that a bad filter is not reported as a cursor.

use domain::common::page::{FilterKey, PageRequest};
use domain::{FieldError, ValidationErrors};
use time::OffsetDateTime;

use crate::error::ApiError;

/// The problems of a listing's query, gathered as its parameters are read.
#[derive(Debug, Default)]
pub struct QueryProblems(Vec<FieldError>);

impl QueryProblems {
    /// Starts with the page size's problem, if any.
    pub fn with_limit(limit: Option<i64>) -> Self {
        Self(PageRequest::new(limit, None).err().unwrap_or_default())
    }

    /// Adds `errors`.
    pub fn extend(&mut self, errors: Vec<FieldError>) {
        self.0.extend(errors);
    }

    /// The RFC 3339 time of the parameter `field`, if given and valid.
    pub fn time(&mut self, field: &str, raw: Option<&str>) -> Option<OffsetDateTime> {
        let parsed = domain::common::instant::parse_rfc3339(raw?);
        if parsed.is_none() {
            self.0.push(FieldError::new(field, domain::common::instant::EXPECTED));
        }
        parsed
    }

    /// The filter and the page, once every other parameter is valid: `filter` is `None` when it
    /// was refused (its problems are here), and `key` gives the cursor key of its filter set.
    ///
    /// # Errors
    /// 422 naming every problem, or the cursor's.
    pub fn page<F>(
        mut self,
        limit: Option<i64>,
        cursor: Option<&str>,
        filter: Option<F>,
        key: impl FnOnce(&F) -> FilterKey,
    ) -> Result<(F, PageRequest), ApiError> {
        if let (true, Some(filter)) = (self.0.is_empty(), filter) {
            match PageRequest::for_filters(limit, cursor, key(&filter).as_str()) {
                Ok(page) => return Ok((filter, page)),
                Err(e) => self.0.extend(e),
            }
        }
        Err(ApiError::Validation(ValidationErrors(self.0)))
    }
}
