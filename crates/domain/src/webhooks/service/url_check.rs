//! The URL check of create and update: syntax, and the addresses the host has (the SSRF guard at
//! creation; the transport checks again at every connection).

use std::net::IpAddr;

use super::WebhookService;
use crate::common::error::FieldError;
use crate::webhooks::model::{DestinationUrl, UrlHost};
use crate::webhooks::ssrf::is_local_name;

impl WebhookService {
    /// Validates a URL and the addresses it points at: the SSRF guard at creation (`docs/webhooks.md`).
    pub(super) async fn check_url(&self, raw: &str) -> Result<DestinationUrl, FieldError> {
        let url = DestinationUrl::parse(raw)?;
        // The message never names the address: what a name resolves to inside our network is
        // not the tenant's to learn (issue: refusals echoed internal addresses).
        let refused = || {
            FieldError::new(
                "url",
                "points at a private, loopback or otherwise reserved address that webhooks may not reach",
            )
        };
        let need_https = || FieldError::new("url", "must use https (plain http only for hosts in the allowed subnets)");
        // Addresses the name is known to have, to decide on plain http.
        let addresses: Vec<IpAddr> = match url.host() {
            UrlHost::Ip(ip) => vec![*ip],
            UrlHost::Name(name) => {
                let resolved = self.resolver.resolve(name, url.port()).await.unwrap_or_default();
                if resolved.is_empty() && is_local_name(name) && !self.addresses.permits_local_name() {
                    return Err(FieldError::new(
                        "url",
                        format!("`{name}` is a local host name that webhooks may not reach"),
                    ));
                }
                // A public name that does not resolve now is accepted: it is checked again at
                // every connection, which is what actually guards the network.
                resolved
            }
        };
        // Deliveries connect only to the addresses webhooks may reach (the transport's resolver
        // drops the others). An address they may not reach is tolerated only beside addresses
        // that are all in the allowed subnets: `localhost` answering `127.0.0.1` and `::1` where
        // only `127.0.0.0/8` is allowed. Beside a public address it is refused: a name that mixes
        // the two is how a rebinding attack starts.
        let (usable, blocked): (Vec<IpAddr>, Vec<IpAddr>) =
            addresses.iter().partition(|ip| self.addresses.permits(**ip));
        let all_allowed = !usable.is_empty() && usable.iter().all(|ip| self.addresses.is_allowed_subnet(*ip));
        if !blocked.is_empty() && !all_allowed {
            return Err(refused());
        }
        let plain_allowed = all_allowed;
        if !url.is_https() && !plain_allowed {
            return Err(need_https());
        }
        Ok(url)
    }
}
