//! The API keys this instance recently admitted, and who they belong to: what lets a `GET` start
//! its work while its credential check is still running ([`super::v1::authenticate_v1`]).
//!
//! An entry is only ever a guess about the caller; it never admits anything. The response of a
//! request prepared on a guess is released only once that request's own check (one statement that
//! starts after the request arrived, as always) admitted it as that very caller; otherwise the
//! check's 401/403/429 is the answer and the prepared response is dropped unseen. Only API keys
//! are recorded: their caller (workspace and key id) is fixed for the life of the key, so a
//! guess is never wrong about who, only about whether.
//!
//! A request refused 401, 403 or 429 must have no effect, so only routes whose action merely
//! reads ([`domain::access::Action::only_reads`]) run ahead; any other route's handler waits for
//! the verdict ([`Unconfirmed`]) and never starts for a refused request: no secret decrypted,
//! nothing audited.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use domain::access::{Actor, Caller};
use domain::auth::TokenDigest;

/// At most this many keys are remembered; when full, the memory starts over.
const CAPACITY: usize = 10_000;

/// Recently admitted API keys by digest (see the module documentation).
#[derive(Debug, Default)]
pub struct AdmittedKeys {
    callers: Mutex<HashMap<TokenDigest, Caller>>,
}

impl AdmittedKeys {
    fn callers(&self) -> MutexGuard<'_, HashMap<TokenDigest, Caller>> {
        // Every change is a single call, so the map is consistent after a panic elsewhere.
        self.callers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Who the key was the last time it was admitted here, if it was and nothing refused it
    /// since.
    pub fn guess(&self, digest: &TokenDigest) -> Option<Caller> {
        self.callers().get(digest).copied()
    }

    /// The key was admitted as `caller` (user tokens are not recorded).
    pub fn admitted(&self, digest: TokenDigest, caller: Caller) {
        if !matches!(caller.actor, Actor::ApiKey { .. }) {
            return;
        }
        let mut callers = self.callers();
        if callers.len() >= CAPACITY && !callers.contains_key(&digest) {
            callers.clear();
        }
        callers.insert(digest, caller);
    }

    /// The key was refused (revoked, deleted, expired, plan, rate limit): no more work is done
    /// ahead of its checks until it is admitted again.
    pub fn refused(&self, digest: &TokenDigest) {
        self.callers().remove(digest);
    }
}

/// Left in a request that runs ahead of its credential check: the verdict to come, for the
/// routes that must not start before it ([`crate::access`]).
#[derive(Debug)]
pub struct Unconfirmed(tokio::sync::oneshot::Receiver<bool>);

/// The check's side of [`Unconfirmed`].
#[derive(Debug)]
pub struct Verdict(tokio::sync::oneshot::Sender<bool>);

impl Unconfirmed {
    /// A request's pair: the check keeps the [`Verdict`], the request carries the other half.
    pub fn pair() -> (Verdict, Unconfirmed) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (Verdict(tx), Unconfirmed(rx))
    }

    /// Waits for the check: whether it admitted the request as the guessed caller (a check that
    /// ended without saying counts as a refusal).
    pub async fn admitted(self) -> bool {
        self.0.await.unwrap_or(false)
    }
}

impl Verdict {
    /// Tells the waiting route, if any, whether the request was admitted as guessed.
    pub fn tell(self, admitted: bool) {
        // Nobody waits when the route only reads: nothing to tell then.
        let _ = self.0.send(admitted);
    }
}

#[cfg(test)]
mod tests {
    use domain::users::{Role, UserId};
    use domain::workspace::WorkspaceId;

    use super::*;

    fn key(id: i64) -> Caller {
        Caller {
            workspace_id: WorkspaceId(1),
            plan: domain::workspace::PlanTier::Advanced,
            actor: Actor::ApiKey { key_id: id, scopes: domain::access::ScopeSet::full() },
            surface: domain::access::Surface::RestApi,
        }
    }

    #[test]
    fn remembers_admitted_keys_until_refused() {
        let keys = AdmittedKeys::default();
        let d = TokenDigest([1; 32]);
        assert_eq!(keys.guess(&d), None);
        keys.admitted(d, key(7));
        assert_eq!(keys.guess(&d), Some(key(7)));
        keys.refused(&d);
        assert_eq!(keys.guess(&d), None);
    }

    #[test]
    fn user_tokens_are_never_guessed() {
        let keys = AdmittedKeys::default();
        let d = TokenDigest([2; 32]);
        let user = Caller {
            plan: domain::workspace::PlanTier::Advanced,
            workspace_id: WorkspaceId(1),
            actor: Actor::Member { user_id: UserId(3), role: Role::Admin },
            surface: domain::access::Surface::RestApi,
        };
        keys.admitted(d, user);
        assert_eq!(keys.guess(&d), None);
    }

    #[test]
    fn memory_is_bounded() {
        let keys = AdmittedKeys::default();
        for i in 0..=CAPACITY {
            let mut bytes = [0; 32];
            bytes[..8].copy_from_slice(&(i as u64).to_le_bytes());
            keys.admitted(TokenDigest(bytes), key(i as i64));
        }
        assert_eq!(keys.callers().len(), 1, "started over when full");
    }
}
