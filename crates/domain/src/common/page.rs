//! Cursor pagination shared by every list: `limit` 1..=100 (default 25) and an opaque cursor that
//! encodes the last id seen. Keyset pagination on the id is stable under concurrent inserts (new
//! rows have larger ids and only ever appear on the first page) and costs the same at any depth.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use super::error::FieldError;

/// Default page size.
pub const DEFAULT_LIMIT: u16 = 25;
/// Largest page size.
pub const MAX_LIMIT: u16 = 100;

/// A validated page request: at most `limit` items strictly after `after` in list order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRequest {
    /// Items per page.
    pub limit: u16,
    /// The id of the last item of the previous page.
    pub after: Option<i64>,
}

impl PageRequest {
    /// Validates the raw query values.
    ///
    /// # Errors
    /// A [`FieldError`] on `limit` or `cursor`.
    pub fn new(limit: Option<i64>, cursor: Option<&str>) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(l) if (1..=i64::from(MAX_LIMIT)).contains(&l) => l as u16,
            Some(_) => {
                errors.push(FieldError::new("limit", format!("must be between 1 and {MAX_LIMIT}")));
                DEFAULT_LIMIT
            }
        };
        let after = match cursor.filter(|c| !c.is_empty()) {
            None => None,
            Some(c) => match decode_cursor(c) {
                Some(id) => Some(id),
                None => {
                    errors.push(FieldError::new("cursor", "is not a cursor returned by this API"));
                    None
                }
            },
        };
        if errors.is_empty() {
            Ok(Self { limit, after })
        } else {
            Err(errors)
        }
    }

    /// How many rows to fetch: one more than the page, to know whether there is a next page.
    pub fn fetch(&self) -> i64 {
        i64::from(self.limit) + 1
    }
}

/// A page of items and the cursor of the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// Cursor for the next page, `None` on the last.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// Cuts `rows` (fetched with [`PageRequest::fetch`]) to the page and computes the next cursor
    /// from the id of the last item kept.
    pub fn from_rows(mut rows: Vec<T>, req: PageRequest, id: impl Fn(&T) -> i64) -> Self {
        let more = rows.len() > usize::from(req.limit);
        rows.truncate(usize::from(req.limit));
        let next_cursor = if more { rows.last().map(|r| encode_cursor(id(r))) } else { None };
        Self { data: rows, next_cursor }
    }

    /// The same page with its items converted.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page { data: self.data.into_iter().map(f).collect(), next_cursor: self.next_cursor }
    }
}

const CURSOR_PREFIX: &str = "c1.";

/// The opaque form of a position.
pub fn encode_cursor(id: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{id}"))
}

fn decode_cursor(c: &str) -> Option<i64> {
    let raw = URL_SAFE_NO_PAD.decode(c).ok()?;
    let s = std::str::from_utf8(&raw).ok()?;
    s.strip_prefix(CURSOR_PREFIX)?.parse::<i64>().ok().filter(|id| *id > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        assert_eq!(PageRequest::new(None, None), Ok(PageRequest { limit: 25, after: None }));
        assert!(PageRequest::new(Some(0), None).is_err());
        assert!(PageRequest::new(Some(101), None).is_err());
        assert_eq!(PageRequest::new(Some(100), None).map(|p| p.limit), Ok(100));
    }

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let c = encode_cursor(42);
        assert_eq!(PageRequest::new(None, Some(&c)).map(|p| p.after), Ok(Some(42)));
        for junk in ["x", "!!!", &URL_SAFE_NO_PAD.encode("c1.-5"), &URL_SAFE_NO_PAD.encode("c2.5")] {
            let errs = PageRequest::new(None, Some(junk)).expect_err("junk cursor");
            assert_eq!(errs[0].field, "cursor");
        }
    }

    #[test]
    fn next_cursor_only_when_more_rows() {
        let req = PageRequest { limit: 2, after: None };
        let p = Page::from_rows(vec![5, 4, 3], req, |x| *x);
        assert_eq!(p.data, vec![5, 4]);
        assert_eq!(p.next_cursor, Some(encode_cursor(4)));
        let p = Page::from_rows(vec![5, 4], req, |x| *x);
        assert_eq!(p.next_cursor, None);
    }
}
