//! The token format of `docs/contract.md`: prefix, at least 32 random bytes in base62, and a
//! 6-character base62 CRC32 of everything before it. The checksum lets secret scanners recognise a
//! leaked token offline and lets the server refuse a mistyped one without a database query.

use sha2::{Digest, Sha256};

use crate::common::ports::RandomSource;

/// Base62 alphabet, digits first so that the encoding sorts like the number.
const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Random bytes in a token.
const RANDOM_BYTES: usize = 32;
/// Base62 characters for 32 bytes: ceil(256 / log2(62)).
const RANDOM_CHARS: usize = 43;
/// Base62 characters of the CRC32 checksum.
const CHECKSUM_CHARS: usize = 6;

/// What a token is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A workspace API key, `wmsk_`.
    ApiKey,
    /// A user's login token, `wmsu_`.
    User,
    /// An app's access token (OAuth, `docs/oauth.md`), `wmso_`.
    AppAccess,
    /// An app's refresh token (OAuth), `wmsr_`.
    AppRefresh,
}

impl TokenKind {
    /// Whether an app holds it through an OAuth grant (`wmso_`, `wmsr_`).
    pub fn is_app(self) -> bool {
        matches!(self, TokenKind::AppAccess | TokenKind::AppRefresh)
    }

    /// The prefix, underscore included.
    pub fn prefix(self) -> &'static str {
        match self {
            TokenKind::ApiKey => "wmsk_",
            TokenKind::User => "wmsu_",
            TokenKind::AppAccess => "wmso_",
            TokenKind::AppRefresh => "wmsr_",
        }
    }
}

/// SHA-256 of a full token: the only form in which a token is stored.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenDigest(pub [u8; 32]);

impl std::fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenDigest(..)")
    }
}

/// A newly minted token, in full. Exists only until it is shown to its owner once.
pub struct NewToken {
    /// The whole token.
    pub secret: String,
    /// Its kind.
    pub kind: TokenKind,
}

impl std::fmt::Debug for NewToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NewToken({})", self.masked())
    }
}

impl NewToken {
    /// Mints a token from 32 bytes of `random`.
    pub fn generate(kind: TokenKind, random: &dyn RandomSource) -> Self {
        let mut bytes = [0u8; RANDOM_BYTES];
        random.fill(&mut bytes);
        let mut secret = String::with_capacity(5 + RANDOM_CHARS + CHECKSUM_CHARS);
        secret.push_str(kind.prefix());
        secret.push_str(&base62_fixed(&bytes, RANDOM_CHARS));
        let crc = crc32fast::hash(secret.as_bytes());
        secret.push_str(&base62_fixed(&crc.to_be_bytes(), CHECKSUM_CHARS));
        Self { secret, kind }
    }

    /// The stored digest.
    pub fn digest(&self) -> TokenDigest {
        digest(&self.secret)
    }

    /// The display form kept after creation: prefix, an ellipsis, the last 4 characters.
    pub fn masked(&self) -> String {
        mask(&self.secret)
    }
}

/// Why a presented token was refused before any lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenFormatError {
    /// Not `wmsk_`/`wmsu_`/`wmso_`/`wmsr_` followed by base62 of the right length.
    #[error("the token is malformed")]
    Malformed,
    /// Well-formed but the checksum does not match: mistyped or made up.
    #[error("the token's checksum does not match")]
    BadChecksum,
}

/// A presented token that passed the offline checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PresentedToken {
    /// Its kind, from the prefix.
    pub kind: TokenKind,
    /// Its digest, to look up.
    pub digest: TokenDigest,
}

/// Checks a presented token's shape and checksum.
///
/// # Errors
/// [`TokenFormatError`] without touching storage.
pub fn parse(token: &str) -> Result<PresentedToken, TokenFormatError> {
    let kind = [TokenKind::ApiKey, TokenKind::User, TokenKind::AppAccess, TokenKind::AppRefresh]
        .into_iter()
        .find(|k| token.starts_with(k.prefix()))
        .ok_or(TokenFormatError::Malformed)?;
    let body = &token[5..];
    if body.len() != RANDOM_CHARS + CHECKSUM_CHARS || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(TokenFormatError::Malformed);
    }
    let (payload, checksum) = token.split_at(token.len() - CHECKSUM_CHARS);
    if base62_fixed(&crc32fast::hash(payload.as_bytes()).to_be_bytes(), CHECKSUM_CHARS) != checksum {
        return Err(TokenFormatError::BadChecksum);
    }
    Ok(PresentedToken { kind, digest: digest(token) })
}

/// SHA-256 of `token`.
pub fn digest(token: &str) -> TokenDigest {
    TokenDigest(Sha256::digest(token.as_bytes()).into())
}

/// `wmsk_…abcd`: the prefix and the last four characters.
pub fn mask(token: &str) -> String {
    let prefix = token.get(..5).unwrap_or("");
    let tail = token.get(token.len().saturating_sub(4)..).unwrap_or("");
    format!("{prefix}…{tail}")
}

/// Big-endian bytes as a base62 number, left-padded with `0` to `width` characters.
fn base62_fixed(bytes: &[u8], width: usize) -> String {
    let mut num: Vec<u8> = bytes.to_vec();
    let mut digits = Vec::with_capacity(width);
    while num.iter().any(|&b| b != 0) {
        let mut rem: u32 = 0;
        for b in &mut num {
            let acc = (rem << 8) | u32::from(*b);
            *b = (acc / 62) as u8;
            rem = acc % 62;
        }
        digits.push(ALPHABET[rem as usize]);
    }
    while digits.len() < width {
        digits.push(b'0');
    }
    digits.iter().rev().map(|&d| d as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::MockRandomSource;

    fn random(byte: u8) -> MockRandomSource {
        let mut r = MockRandomSource::new();
        r.expect_fill().returning(move |b| b.fill(byte));
        r
    }

    #[test]
    fn generated_tokens_match_the_documented_regex_and_parse() {
        for (kind, byte) in [
            (TokenKind::ApiKey, 0xff),
            (TokenKind::User, 0x00),
            (TokenKind::ApiKey, 0x5a),
            (TokenKind::AppAccess, 0x11),
            (TokenKind::AppRefresh, 0xee),
        ] {
            let t = NewToken::generate(kind, &random(byte));
            assert!(t.secret.starts_with(kind.prefix()));
            assert_eq!(t.secret.len(), 5 + 43 + 6);
            assert!(t.secret[5..].bytes().all(|b| b.is_ascii_alphanumeric()));
            assert_eq!(parse(&t.secret), Ok(PresentedToken { kind, digest: t.digest() }));
        }
    }

    #[test]
    fn max_value_fits_the_width() {
        assert_eq!(base62_fixed(&[0xff; 32], 43).len(), 43);
        assert_eq!(base62_fixed(&[0xff; 4], 6).len(), 6);
        assert_eq!(base62_fixed(&[0, 0, 0, 61], 6), "00000z");
        assert_eq!(base62_fixed(&[0, 0, 0, 62], 6), "000010");
    }

    #[test]
    fn a_changed_character_fails_the_checksum() {
        let t = NewToken::generate(TokenKind::ApiKey, &random(0x42)).secret;
        let mut chars: Vec<char> = t.chars().collect();
        chars[10] = if chars[10] == 'a' { 'b' } else { 'a' };
        let typo: String = chars.into_iter().collect();
        assert_eq!(parse(&typo), Err(TokenFormatError::BadChecksum));
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for bad in [
            "",
            "wmsk_",
            "wmsx_abc",
            "sk_live_123",
            &format!("wmsk_{}", "a".repeat(48)),
            &format!("wmsk_{}!", "a".repeat(48)),
        ] {
            assert_eq!(parse(bad), Err(TokenFormatError::Malformed), "{bad}");
        }
    }

    #[test]
    fn mask_keeps_prefix_and_last_four() {
        let t = NewToken::generate(TokenKind::ApiKey, &random(1));
        let m = t.masked();
        assert!(m.starts_with("wmsk_…"));
        assert!(t.secret.ends_with(&m["wmsk_…".len()..]));
        assert!(!format!("{t:?}").contains(&t.secret));
    }
}
