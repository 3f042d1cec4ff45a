//! GitHub's signature on an alert: ECDSA P-256 with SHA-256 over the raw body, base64 DER in
//! `Github-Public-Key-Signature`, made with the key that `Github-Public-Key-Identifier` names in
//! GitHub's published keys document.

use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey;

/// One key of GitHub's published document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanningPublicKey {
    /// `key_identifier`.
    pub identifier: String,
    /// `key`: the public key, PEM (`-----BEGIN PUBLIC KEY-----`).
    pub pem: String,
    /// `is_current`: GitHub signs with the current key, but keeps older ones valid while rotating.
    pub is_current: bool,
}

/// The signature headers of a request, as sent (either may be missing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlertSignature<'a> {
    /// `Github-Public-Key-Identifier`.
    pub key_identifier: Option<&'a str>,
    /// `Github-Public-Key-Signature`: base64 of the DER signature.
    pub signature: Option<&'a str>,
}

impl AlertSignature<'_> {
    /// Both headers are there (without them an alert is refused before its body is read).
    pub fn is_present(&self) -> bool {
        self.key_identifier.is_some() && self.signature.is_some()
    }
}

/// Longest signature header considered: a DER P-256 signature is at most 72 bytes (96 in base64).
const MAX_SIGNATURE_CHARS: usize = 256;

/// Whether `body` carries a valid signature by one of `keys`. Every listed key verifies (GitHub
/// keeps older keys valid while it rotates); the one the identifier names is tried first. A
/// missing or malformed header, or a key that does not parse, verifies nothing.
pub fn verify_alert(keys: &[ScanningPublicKey], sent: AlertSignature<'_>, body: &[u8]) -> bool {
    let (Some(identifier), Some(signature)) = (sent.key_identifier, sent.signature) else { return false };
    if signature.len() > MAX_SIGNATURE_CHARS {
        return false;
    }
    let Ok(der) = base64::engine::general_purpose::STANDARD.decode(signature.trim()) else { return false };
    let Ok(signature) = Signature::from_der(&der) else { return false };
    let (named, others): (Vec<&ScanningPublicKey>, Vec<&ScanningPublicKey>) =
        keys.iter().partition(|k| k.identifier == identifier);
    named
        .into_iter()
        .chain(others)
        .any(|k| VerifyingKey::from_public_key_pem(k.pem.trim()).is_ok_and(|key| key.verify(body, &signature).is_ok()))
}

/// Whether `keys` names `identifier`: when it does not, the document is fetched again (GitHub
/// may have published a new key).
pub fn names_key(keys: &[ScanningPublicKey], identifier: Option<&str>) -> bool {
    identifier.is_some_and(|id| keys.iter().any(|k| k.identifier == id))
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::SigningKey;
    use p256::pkcs8::{EncodePublicKey, LineEnding};

    use super::*;

    fn pair(seed: u8) -> (SigningKey, ScanningPublicKey) {
        let signing = SigningKey::from_slice(&[seed; 32]).expect("a scalar");
        let pem = signing.verifying_key().to_public_key_pem(LineEnding::LF).expect("pem");
        (signing, ScanningPublicKey { identifier: format!("key-{seed}"), pem, is_current: seed == 1 })
    }

    fn sign(key: &SigningKey, body: &[u8]) -> String {
        let signature: Signature = key.sign(body);
        base64::engine::general_purpose::STANDARD.encode(signature.to_der().as_bytes())
    }

    #[test]
    fn a_listed_key_verifies_its_signature_and_nothing_else_does() {
        let (current, current_public) = pair(1);
        let (old, old_public) = pair(2);
        let (stranger, _) = pair(3);
        let keys = [current_public, old_public];
        let body = br#"[{"token":"x","type":"wms_api_key","url":"u","source":"content"}]"#;
        fn signed<'a>(sig: &'a str, id: &'a str) -> AlertSignature<'a> {
            AlertSignature { key_identifier: Some(id), signature: Some(sig) }
        }
        assert!(verify_alert(&keys, signed(&sign(&current, body), "key-1"), body));
        // A key no longer current still verifies, whichever identifier was sent.
        assert!(verify_alert(&keys, signed(&sign(&old, body), "key-2"), body));
        assert!(verify_alert(&keys, signed(&sign(&old, body), "key-1"), body));
        assert!(!verify_alert(&keys, signed(&sign(&stranger, body), "key-1"), body));
        assert!(!verify_alert(&keys, signed(&sign(&current, body), "key-1"), b"[]"));
        assert!(!verify_alert(&keys, signed("not base64!", "key-1"), body));
        assert!(!verify_alert(&keys, signed("AAAA", "key-1"), body));
        assert!(!verify_alert(&keys, AlertSignature { key_identifier: Some("key-1"), signature: None }, body));
        assert!(!verify_alert(&keys, AlertSignature { key_identifier: None, signature: Some("x") }, body));
        assert!(!verify_alert(&[], signed(&sign(&current, body), "key-1"), body));
    }

    #[test]
    fn an_unknown_identifier_asks_for_the_document_again() {
        let keys = [pair(1).1];
        assert!(names_key(&keys, Some("key-1")));
        assert!(!names_key(&keys, Some("key-9")));
        assert!(!names_key(&keys, None));
    }
}
