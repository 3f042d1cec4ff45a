//! Cursor pagination shared by every list: `limit` 1..=100 (default 25) and an opaque cursor that
//! encodes the last id seen. Keyset pagination on the id is stable under concurrent inserts (new
//! rows have larger ids and only ever appear on the first page) and costs the same at any depth.
//!
//! A list with filters binds its cursors to them ([`PageRequest::for_filters`]): the cursor carries
//! a short digest of the filter set, and a cursor read with other filters (or tampered with) is
//! refused as a bad `cursor` instead of silently continuing another listing from its position.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

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
    /// The digest of the filters the cursors of this listing are bound to (`None`: a list without
    /// filters, whose cursors are plain positions).
    pub filters: Option<FilterDigest>,
}

/// The canonical description of a filter set that [`PageRequest::for_filters`] digests:
/// `name=value` of each filter given, in the listing's fixed order, joined by `&` (`%` and `&` in
/// a value escaped as `%25` and `%26`). Plain on purpose: `scripts/bench-rest` builds deep cursors
/// from it (`status=open&label=vip`, `channel_id=5`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterKey(String);

impl FilterKey {
    /// Adds `name=value` when the filter is given.
    #[must_use]
    pub fn with(mut self, name: &str, value: Option<impl std::fmt::Display>) -> Self {
        if let Some(v) = value {
            if !self.0.is_empty() {
                self.0.push('&');
            }
            let v = v.to_string().replace('%', "%25").replace('&', "%26");
            self.0.push_str(&format!("{name}={v}"));
        }
        self
    }

    /// The description.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A short digest of a listing's filter set, carried by its cursors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FilterDigest([u8; 8]);

impl FilterDigest {
    /// The digest of a canonical description of the filters (equal filters, equal text).
    pub fn of(canonical: &str) -> Self {
        let d = Sha256::digest(canonical.as_bytes());
        let mut out = [0u8; 8];
        out.copy_from_slice(&d[..8]);
        Self(out)
    }

    fn hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl PageRequest {
    /// Validates the raw query values.
    ///
    /// # Errors
    /// A [`FieldError`] on `limit` or `cursor`.
    pub fn new(limit: Option<i64>, cursor: Option<&str>) -> Result<Self, Vec<FieldError>> {
        Self::parse(limit, cursor, None)
    }

    /// Validates the raw query values of a list with filters: `canonical` describes the filter
    /// set (validated, normalised), and the cursor must have been issued for the same one.
    ///
    /// # Errors
    /// A [`FieldError`] on `limit` or `cursor` (also for a cursor of other filters).
    pub fn for_filters(limit: Option<i64>, cursor: Option<&str>, canonical: &str) -> Result<Self, Vec<FieldError>> {
        Self::parse(limit, cursor, Some(FilterDigest::of(canonical)))
    }

    fn parse(limit: Option<i64>, cursor: Option<&str>, filters: Option<FilterDigest>) -> Result<Self, Vec<FieldError>> {
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
            Some(c) => match decode_cursor(c, filters) {
                Some(id) => Some(id),
                None if filters.is_some() => {
                    errors.push(FieldError::new(
                        "cursor",
                        "is not a cursor returned by this API for the same filters (start again without `cursor`)",
                    ));
                    None
                }
                None => {
                    errors.push(FieldError::new("cursor", "is not a cursor returned by this API"));
                    None
                }
            },
        };
        if errors.is_empty() {
            Ok(Self { limit, after, filters })
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
        let next_cursor = if more { rows.last().map(|r| cursor_of(id(r), req.filters)) } else { None };
        Self { data: rows, next_cursor }
    }

    /// The same page with its items converted.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page { data: self.data.into_iter().map(f).collect(), next_cursor: self.next_cursor }
    }
}

const CURSOR_PREFIX: &str = "c1.";

/// The opaque form of a position in a list without filters.
pub fn encode_cursor(id: i64) -> String {
    cursor_of(id, None)
}

/// The opaque form of a position in a list read with these filters.
pub fn cursor_of(id: i64, filters: Option<FilterDigest>) -> String {
    match filters {
        None => URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{id}")),
        Some(f) => URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{id}.{}", f.hex())),
    }
}

fn decode_cursor(c: &str, filters: Option<FilterDigest>) -> Option<i64> {
    let raw = URL_SAFE_NO_PAD.decode(c).ok()?;
    let s = std::str::from_utf8(&raw).ok()?.strip_prefix(CURSOR_PREFIX)?;
    let id = match (s.split_once('.'), filters) {
        (None, None) => s,
        (Some((id, got)), Some(f)) if got == f.hex() => id,
        _ => return None,
    };
    id.parse::<i64>().ok().filter(|id| *id > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        assert_eq!(PageRequest::new(None, None), Ok(PageRequest { limit: 25, after: None, filters: None }));
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
    fn a_filtered_cursor_fits_only_its_own_filters() {
        let a = PageRequest::for_filters(Some(2), None, "status=open").expect("no cursor");
        let next = Page::from_rows(vec![9, 8, 7], a, |x| *x).next_cursor.expect("a next page");
        let same = PageRequest::for_filters(Some(2), Some(&next), "status=open").expect("same filters");
        assert_eq!(same.after, Some(8));
        for (filters, cursor) in [
            (Some("status=resolved"), next.as_str()),
            (None, next.as_str()),
            (Some("status=open"), &encode_cursor(8)),
            (Some("status=open"), &URL_SAFE_NO_PAD.encode("c1.9.0000000000000000")),
        ] {
            let got = match filters {
                Some(f) => PageRequest::for_filters(None, Some(cursor), f),
                None => PageRequest::new(None, Some(cursor)),
            };
            assert_eq!(got.expect_err("refused")[0].field, "cursor", "{filters:?} {cursor}");
        }
    }

    #[test]
    fn filter_keys_are_the_plain_text_scripts_bench_rest_digests() {
        let k = FilterKey::default()
            .with("status", Some("open"))
            .with("channel_id", None::<i64>)
            .with("label", Some("a&b"));
        assert_eq!(k.as_str(), "status=open&label=a%26b");
        // scripts/bench-rest: `printf 'status=open&label=vip' | sha256sum | cut -c1-16`.
        let hex = FilterDigest::of("status=open&label=vip").hex();
        let expected: String =
            Sha256::digest(b"status=open&label=vip")[..8].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, expected);
        let c = cursor_of(7, Some(FilterDigest::of("channel_id=5")));
        let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(&c).expect("base64")).expect("utf8");
        assert_eq!(raw, format!("c1.7.{}", FilterDigest::of("channel_id=5").hex()));
        // The keys the bench script writes out.
        let threads = crate::threads::ThreadFilter {
            status: Some("open".into()),
            label: Some("VIP".into()),
            ..crate::threads::ThreadFilter::default()
        };
        assert_eq!(threads.cursor_key().as_str(), "status=open&label=vip");
        let messages = crate::messaging::MessageFilter {
            channel_id: Some(crate::channels::ChannelId(5)),
            ..crate::messaging::MessageFilter::default()
        };
        assert_eq!(messages.cursor_key().as_str(), "channel_id=5");
    }

    #[test]
    fn next_cursor_only_when_more_rows() {
        let req = PageRequest { limit: 2, after: None, filters: None };
        let p = Page::from_rows(vec![5, 4, 3], req, |x| *x);
        assert_eq!(p.data, vec![5, 4]);
        assert_eq!(p.next_cursor, Some(encode_cursor(4)));
        let p = Page::from_rows(vec![5, 4], req, |x| *x);
        assert_eq!(p.next_cursor, None);
    }
}
