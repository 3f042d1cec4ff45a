//! Static header values at rest: a header value is often the receiver's credential (an API key, a
//! bearer token), so the values are sealed together, as one JSON object bound to the destination's
//! row, like its signing secret; the names stay readable (with blank values) for event data and
//! for what needs no value.

use std::collections::BTreeMap;

use crate::common::ports::{SecretCipher, SecretPlace};

/// A destination's static headers as stored: the names with blank values, and the sealed object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SealedHeaders {
    /// The names, each with an empty value.
    pub names: BTreeMap<String, String>,
    /// The `{name: value}` object sealed for the destination; `None` without headers.
    pub sealed: Option<Vec<u8>>,
}

/// The names of `headers` with their values blanked.
pub fn blanked(headers: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    headers.keys().map(|k| (k.clone(), String::new())).collect()
}

/// Seals `headers` for destination `destination_id` of workspace `workspace_id`.
pub fn seal(
    cipher: &dyn SecretCipher,
    workspace_id: i64,
    destination_id: i64,
    headers: &BTreeMap<String, String>,
) -> SealedHeaders {
    if headers.is_empty() {
        return SealedHeaders::default();
    }
    let plain = serde_json::to_vec(headers).unwrap_or_default();
    SealedHeaders {
        names: blanked(headers),
        sealed: Some(cipher.seal(&plain, &SecretPlace::webhook_headers(workspace_id, destination_id))),
    }
}

/// Opens what [`seal`] sealed for the same destination.
///
/// # Errors
/// When the value does not open here (another key, row or workspace) or is not a JSON object of
/// strings; the message never holds a value.
pub fn open(
    cipher: &dyn SecretCipher,
    workspace_id: i64,
    destination_id: i64,
    sealed: &[u8],
) -> Result<BTreeMap<String, String>, String> {
    let plain = cipher
        .open(sealed, &SecretPlace::webhook_headers(workspace_id, destination_id))
        .map_err(|e| format!("the static headers cannot be opened ({e}); set them again"))?;
    serde_json::from_slice(&plain).map_err(|_| "the static headers cannot be read; set them again".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in cipher that binds the place by prefixing it.
    struct Tagging;
    impl SecretCipher for Tagging {
        fn seal(&self, plain: &[u8], place: &SecretPlace) -> Vec<u8> {
            [place.associated_data().as_bytes(), b"|", plain].concat()
        }
        fn open(&self, sealed: &[u8], place: &SecretPlace) -> anyhow::Result<Vec<u8>> {
            let tag = format!("{}|", place.associated_data());
            sealed.strip_prefix(tag.as_bytes()).map(<[u8]>::to_vec).ok_or_else(|| anyhow::anyhow!("wrong place"))
        }
    }

    fn headers() -> BTreeMap<String, String> {
        [("authorization".to_owned(), "Bearer t".to_owned()), ("x-api-key".to_owned(), "k_1".to_owned())].into()
    }

    #[test]
    fn sealed_headers_keep_names_readable_and_open_only_for_their_destination() {
        let s = seal(&Tagging, 1, 7, &headers());
        assert_eq!(s.names, [("authorization".into(), String::new()), ("x-api-key".into(), String::new())].into());
        let sealed = s.sealed.expect("sealed");
        assert_eq!(open(&Tagging, 1, 7, &sealed), Ok(headers()));
        let moved = open(&Tagging, 1, 8, &sealed).expect_err("another row");
        assert!(!moved.contains("Bearer") && moved.contains("set them again"), "{moved}");
    }

    #[test]
    fn no_headers_seal_to_nothing() {
        assert_eq!(seal(&Tagging, 1, 7, &BTreeMap::new()), SealedHeaders::default());
    }
}
