//! Standard Webhooks signatures: `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")), the
//! key being the base64-decoded part of the `whsec_` secret.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::common::ports::RandomSource;

/// The prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Random bytes in a new secret (Standard Webhooks allows 24 to 64).
const SECRET_BYTES: usize = 32;

/// A destination's signing secret, `whsec_<base64>`.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret {
    text: String,
    key: Vec<u8>,
}

impl std::fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningSecret(whsec_…)")
    }
}

/// A stored secret that is not `whsec_` + base64 of 24 to 64 bytes.
#[derive(Debug, thiserror::Error)]
#[error("not a signing secret (whsec_ + base64 of 24 to 64 bytes)")]
pub struct MalformedSecret;

impl SigningSecret {
    /// A new secret from 32 random bytes.
    pub fn generate(random: &dyn RandomSource) -> Self {
        let mut key = vec![0u8; SECRET_BYTES];
        random.fill(&mut key);
        Self { text: format!("{SECRET_PREFIX}{}", STANDARD.encode(&key)), key }
    }

    /// Parses `whsec_<base64>`.
    ///
    /// # Errors
    /// [`MalformedSecret`] for anything else.
    pub fn parse(text: &str) -> Result<Self, MalformedSecret> {
        let b64 = text.strip_prefix(SECRET_PREFIX).ok_or(MalformedSecret)?;
        let key = STANDARD.decode(b64).map_err(|_| MalformedSecret)?;
        if !(24..=64).contains(&key.len()) {
            return Err(MalformedSecret);
        }
        Ok(Self { text: text.to_owned(), key })
    }

    /// The secret as shown to its owner.
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// The HMAC key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// `v1,<base64 signature>` of one message.
    pub fn sign(&self, message_id: &str, timestamp: i64, body: &[u8]) -> String {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.key) {
            Ok(m) => m,
            Err(_) => return String::new(),
        };
        mac.update(message_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-signature` header: one `v1,` signature per secret, separated by spaces (the new
/// secret first, then the previous one while it still signs after a rotation).
pub fn signature_header(secrets: &[SigningSecret], message_id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets.iter().map(|s| s.sign(message_id, timestamp, body)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ports::MockRandomSource;

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // The test vector of the Standard Webhooks reference libraries.
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("24-byte reference key");
        let sig = secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn generated_secrets_parse_back_and_hide_in_debug() {
        let mut random = MockRandomSource::new();
        random.expect_fill().returning(|b| b.fill(7));
        let s = SigningSecret::generate(&random);
        assert!(s.expose().starts_with("whsec_"));
        assert_eq!(s.key().len(), 32);
        assert!(SigningSecret::parse(s.expose()).is_ok_and(|p| p == s));
        assert!(!format!("{s:?}").contains(&s.expose()[6..]));
    }

    #[test]
    fn malformed_secrets_are_refused() {
        assert!(SigningSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
        assert!(SigningSecret::parse("whsec_!!!").is_err());
        assert!(SigningSecret::parse("whsec_AAAA").is_err());
    }

    #[test]
    fn header_lists_one_signature_per_secret() {
        let a = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").ok();
        let b = SigningSecret::parse(&format!("whsec_{}", STANDARD.encode([1u8; 32]))).ok();
        let (Some(a), Some(b)) = (a, b) else { panic!("secrets") };
        let h = signature_header(&[a.clone(), b.clone()], "msg_1", 10, b"{}");
        let parts: Vec<&str> = h.split(' ').collect();
        assert_eq!(parts, vec![a.sign("msg_1", 10, b"{}"), b.sign("msg_1", 10, b"{}")]);
        assert_ne!(parts[0], parts[1]);
    }
}
