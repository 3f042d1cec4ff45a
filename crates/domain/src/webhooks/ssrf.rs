//! Which addresses outbound webhooks may reach (server-side request forgery guard).
//!
//! Only globally routable unicast addresses are allowed, plus subnets the operator allows in
//! configuration. The rules are checked when a destination is saved and again on the address a
//! connection is actually made to, so a name that later resolves elsewhere (DNS rebinding) cannot
//! reach an internal service.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

/// An IPv4 or IPv6 subnet such as `127.0.0.0/8`.
///
/// The one parser of subnets in wms: the `webhooks.allowed_subnets` setting is validated with it
/// at start-up (`app::config`) and the policy is built with it, so both accept the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr(IpNet);

impl Cidr {
    /// Parses `ADDR/LEN` (`ipnet`'s syntax: the length at most 32 for IPv4, 128 for IPv6); a bare
    /// address means a single host. Surrounding whitespace is ignored.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if raw.contains('/') {
            raw.parse::<IpNet>().ok().map(Self)
        } else {
            raw.parse::<IpAddr>().ok().map(|a| Self(IpNet::from(a)))
        }
    }

    /// Whether `ip` is inside the subnet (an IPv4-mapped IPv6 address counts as its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(&canonical(ip))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `::ffff:a.b.c.d` as `a.b.c.d`; anything else unchanged.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether `ip` is a globally routable unicast address, i.e. not loopback, private, link-local,
/// CGNAT, multicast, documentation, benchmarking or otherwise reserved (IANA special-purpose
/// registries). IPv6 addresses that embed an IPv4 address (mapped, NAT64, 6to4) are judged by it.
pub fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let reserved = a == 0                                   // 0.0.0.0/8 "this network"
        || a == 10                                          // 10.0.0.0/8 private
        || (a == 100 && (64..128).contains(&b))             // 100.64.0.0/10 CGNAT
        || a == 127                                         // loopback
        || (a == 169 && b == 254)                           // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))              // 172.16.0.0/12 private
        || (a == 192 && b == 0 && c == 0)                   // 192.0.0.0/24 IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)                   // 192.0.2.0/24 TEST-NET-1
        || (a == 192 && b == 88 && c == 99)                 // 6to4 relay anycast (deprecated)
        || (a == 192 && b == 168)                           // 192.168.0.0/16 private
        || (a == 198 && (b == 18 || b == 19))               // 198.18.0.0/15 benchmarking
        || (a == 198 && b == 51 && c == 100)                // TEST-NET-2
        || (a == 203 && b == 0 && c == 113)                 // TEST-NET-3
        || a >= 224; // 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, broadcast
    !reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // Only 2000::/3 is allocated as global unicast; everything else (::, ::1, fc00::/7, fe80::/10,
    // ff00::/8, 64:ff9b::/96 aside) is reserved.
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // 64:ff9b::/96 NAT64: the embedded IPv4 address decides.
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return is_public_v4(v4);
    }
    if s[0] & 0xe000 != 0x2000 {
        return false;
    }
    if s[0] == 0x2002 {
        // 2002::/16 6to4: the embedded IPv4 address decides.
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return is_public_v4(v4);
    }
    // 2001::/23 IETF protocol assignments (Teredo, ORCHID…), 2001:db8::/32 and 3fff::/20
    // documentation.
    let reserved = (s[0] == 0x2001 && (s[1] < 0x0200 || s[1] == 0x0db8)) || (s[0] == 0x3fff && s[1] < 0x1000);
    !reserved
}

/// Host names that always mean this machine or a local network (RFC 6761, 6762, 8375).
pub fn is_local_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost"
        || h.ends_with(".localhost")
        || h.ends_with(".local")
        || h.ends_with(".internal")
        || h.ends_with(".home.arpa")
}

/// The address rules in force: public addresses, plus the operator's allowed subnets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    allowed: Vec<Cidr>,
}

impl AddressPolicy {
    /// Public addresses plus `allowed`.
    pub fn new(allowed: Vec<Cidr>) -> Self {
        Self { allowed }
    }

    /// From the comma-separated `webhooks.allowed_subnets` setting; `None` for a malformed entry.
    pub fn from_setting(raw: Option<&str>) -> Option<Self> {
        let mut allowed = Vec::new();
        for s in raw.unwrap_or("").split(',').map(str::trim).filter(|s| !s.is_empty()) {
            allowed.push(Cidr::parse(s)?);
        }
        Some(Self { allowed })
    }

    /// Whether `ip` is inside a subnet the operator allowed.
    pub fn is_allowed_subnet(&self, ip: IpAddr) -> bool {
        self.allowed.iter().any(|c| c.contains(ip))
    }

    /// Whether a connection to `ip` is permitted.
    pub fn permits(&self, ip: IpAddr) -> bool {
        self.is_allowed_subnet(ip) || is_public(ip)
    }

    /// Whether a local host name (`localhost`) may be used: only when loopback is allowed.
    pub fn permits_local_name(&self) -> bool {
        self.is_allowed_subnet(IpAddr::V4(Ipv4Addr::LOCALHOST))
            || self.is_allowed_subnet(IpAddr::V6(Ipv6Addr::LOCALHOST))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
    }

    #[test]
    fn reserved_ipv4_ranges_are_refused() {
        for a in [
            "0.0.0.0",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.10",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!is_public(ip(a)), "{a} must be refused");
        }
    }

    #[test]
    fn public_ipv4_is_allowed() {
        for a in ["1.1.1.1", "8.8.8.8", "93.184.215.14", "100.63.255.255", "100.128.0.1", "172.32.0.1", "192.0.3.1"] {
            assert!(is_public(ip(a)), "{a} must be allowed");
        }
    }

    #[test]
    fn reserved_ipv6_ranges_are_refused() {
        for a in [
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "2002:7f00:1::1",
            "3fff::1",
            "100::1",
        ] {
            assert!(!is_public(ip(a)), "{a} must be refused");
        }
    }

    #[test]
    fn public_ipv6_is_allowed() {
        for a in ["2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "2002:0808:0808::1"] {
            assert!(is_public(ip(a)), "{a} must be allowed");
        }
    }

    #[test]
    fn allowed_subnets_open_exactly_their_range() {
        let p = AddressPolicy::from_setting(Some("127.0.0.0/8, ::1/128,10.1.0.0/16")).unwrap_or_default();
        assert!(p.permits(ip("127.0.0.1")));
        assert!(p.permits(ip("::ffff:127.0.0.2")));
        assert!(p.permits(ip("::1")));
        assert!(p.permits(ip("10.1.200.3")));
        assert!(!p.permits(ip("10.2.0.1")));
        assert!(!p.permits(ip("192.168.0.1")));
        assert!(p.permits_local_name());
        assert!(!AddressPolicy::default().permits(ip("127.0.0.1")));
        assert!(!AddressPolicy::default().permits_local_name());
        assert!(AddressPolicy::from_setting(Some("10.0.0.0/33")).is_none());
    }

    #[test]
    fn local_names_are_recognised() {
        for h in ["localhost", "LOCALHOST.", "app.localhost", "printer.local", "metadata.google.internal"] {
            assert!(is_local_name(h), "{h}");
        }
        assert!(!is_local_name("hooks.example.com"));
    }

    #[test]
    fn cidr_prefixes_that_are_not_byte_aligned() {
        let c = Cidr::parse("172.16.0.0/12");
        assert!(c.is_some_and(|c| c.contains(ip("172.31.1.1")) && !c.contains(ip("172.32.0.0"))));
        assert_eq!(Cidr::parse("::1").map(|c| c.to_string()), Some("::1/128".into()));
    }

    #[test]
    fn malformed_subnets_are_refused() {
        for raw in [
            "",
            "/8",
            "10.0.0.0/",
            "10.0.0.0/33",
            "::1/129",
            "10.0.0.0/8/8",
            "10.0.0.0/-1",
            "10.0.0/8",
            "localhost/8",
            "localhost",
            "10.0.0.0 /8",
            "10.0.0.0/ 8",
            "fe80::1%eth0/64",
        ] {
            assert_eq!(Cidr::parse(raw), None, "{raw:?}");
        }
    }

    #[test]
    fn subnets_with_host_bits_and_mapped_addresses() {
        let c = Cidr::parse(" 10.1.2.3/8 ");
        assert_eq!(c.map(|c| c.to_string()), Some("10.1.2.3/8".into()));
        assert!(c.is_some_and(|c| c.contains(ip("10.200.0.1")) && !c.contains(ip("11.0.0.1"))));
        let v4 = Cidr::parse("192.168.0.0/16");
        assert!(v4.is_some_and(|c| c.contains(ip("::ffff:192.168.3.4"))), "mapped address judged as IPv4");
        let v6 = Cidr::parse("::ffff:0:0/96");
        assert!(v6.is_some_and(|c| !c.contains(ip("::ffff:192.168.3.4"))), "an IPv6 subnet never holds IPv4");
        assert!(Cidr::parse("0.0.0.0/0").is_some_and(|c| c.contains(ip("8.8.8.8")) && !c.contains(ip("::1"))));
    }
}
