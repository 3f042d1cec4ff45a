//! Property tests of the parsers that read what the internet sends (any input can arrive): bearer
//! tokens, page cursors, webhook URLs, CIDRs and docs queries never panic on any input, and round
//! trip where a round trip exists. The callback payloads and `next` have theirs beside their code
//! in `adapters-http`; the callback signature header beside `domain::connectors::callbacks`.

use std::net::IpAddr;
use std::sync::Mutex;

use domain::auth::{parse, NewToken, TokenFormatError, TokenKind};
use domain::common::page::{encode_cursor, PageRequest};
use domain::common::ports::RandomSource;
use domain::docs::query::{is_searchable, normalize_query, suggestion_for, MAX_QUERY_CHARS};
use domain::webhooks::ssrf::Cidr;
use domain::webhooks::DestinationUrl;
use proptest::prelude::*;

/// Random bytes chosen by the test.
struct Bytes(Mutex<Vec<u8>>);

impl RandomSource for Bytes {
    fn fill(&self, buf: &mut [u8]) {
        let mut src = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for b in buf.iter_mut() {
            *b = src.pop().unwrap_or(7);
        }
    }
}

fn token(kind: TokenKind, seed: Vec<u8>) -> String {
    NewToken::generate(kind, &Bytes(Mutex::new(seed))).secret
}

proptest! {
    #[test]
    fn any_bearer_token_is_parsed_without_panic(raw in any::<String>(), tail in "[A-Za-z0-9]{0,60}") {
        let _ = parse(&raw);
        let _ = parse(&format!("wmsk_{tail}"));
        let _ = parse(&format!("wmsu_{raw}"));
    }

    /// Round trip: every generated token parses to its kind and digest; changing any one
    /// character is caught offline (CRC-32 detects every single-character change).
    #[test]
    fn generated_tokens_round_trip_and_one_changed_character_is_refused(
        seed in proptest::collection::vec(any::<u8>(), 32..64),
        user in any::<bool>(),
        at in 5usize..54,
        with in "[A-Za-z0-9]",
    ) {
        let kind = if user { TokenKind::User } else { TokenKind::ApiKey };
        let secret = token(kind, seed);
        let parsed = parse(&secret);
        prop_assert_eq!(parsed.map(|t| t.kind), Ok(kind));
        let mut changed: Vec<char> = secret.chars().collect();
        prop_assume!(changed[at].to_string() != with);
        changed[at] = with.chars().next().unwrap_or('0');
        let changed: String = changed.into_iter().collect();
        prop_assert_eq!(parse(&changed).map(|t| t.kind), Err(TokenFormatError::BadChecksum));
    }

    #[test]
    fn any_cursor_is_parsed_without_panic(raw in any::<String>(), limit in any::<Option<i64>>()) {
        let _ = PageRequest::new(limit, Some(&raw));
    }

    /// Round trip: the cursor of a position decodes to it.
    #[test]
    fn cursors_round_trip(id in 1i64..) {
        let req = PageRequest::new(None, Some(&encode_cursor(id)));
        prop_assert_eq!(req.map(|r| r.after), Ok(Some(id)));
    }

    #[test]
    fn any_webhook_url_is_parsed_without_panic(raw in any::<String>(), path in "[ -~]{0,40}") {
        let _ = DestinationUrl::parse(&raw);
        let _ = DestinationUrl::parse(&format!("https://{path}"));
        let _ = DestinationUrl::parse(&format!("http://[{path}]:{}/", raw.len()));
    }

    /// Round trip: a parsed URL's normalised form parses to itself.
    #[test]
    fn webhook_urls_round_trip(
        host in "[a-z][a-z0-9-]{0,20}(\\.[a-z]{2,8}){1,3}",
        port in proptest::option::of(1u16..),
        path in "(/[a-zA-Z0-9._~%-]{0,12}){0,4}",
        https in any::<bool>(),
    ) {
        // `xn--` labels must be valid punycode, which random letters are not.
        prop_assume!(!host.contains("xn--"));
        let scheme = if https { "https" } else { "http" };
        let port = port.map(|p| format!(":{p}")).unwrap_or_default();
        let first = DestinationUrl::parse(&format!("{scheme}://{host}{port}{path}"));
        prop_assert!(first.is_ok(), "{:?}", first);
        let first = first.map_err(|e| TestCaseError::fail(e.message))?;
        let again = DestinationUrl::parse(first.as_str()).map_err(|e| TestCaseError::fail(e.message))?;
        prop_assert_eq!(again.as_str(), first.as_str());
        prop_assert_eq!(again.port(), first.port());
        prop_assert_eq!(again.is_https(), https);
    }

    #[test]
    fn any_cidr_is_parsed_without_panic(raw in any::<String>(), digits in "[0-9a-fA-F.:/]{0,45}") {
        let _ = Cidr::parse(&raw);
        let _ = Cidr::parse(&digits);
    }

    /// Round trip: a subnet prints as text that parses back to it, and contains its address.
    #[test]
    fn cidrs_round_trip(ip in any::<IpAddr>(), len in 0u8..=128) {
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let parsed = Cidr::parse(&format!("{ip}/{len}"));
        prop_assert_eq!(parsed.is_some(), len <= max);
        if let Some(c) = parsed {
            prop_assert_eq!(Cidr::parse(&c.to_string()), Some(c));
            // An IPv4-mapped IPv6 address is judged as its IPv4 address, so an IPv6 subnet does
            // not contain it (the guard refuses rather than allows).
            let mapped = matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some());
            prop_assert!(mapped || c.contains(ip));
        }
    }

    /// Normalising is bounded and idempotent, and nothing panics on any text.
    #[test]
    fn docs_queries_are_normalised_without_panic(raw in any::<String>()) {
        let q = normalize_query(&raw);
        prop_assert!(q.chars().count() <= MAX_QUERY_CHARS);
        prop_assert!(!q.chars().any(char::is_control));
        prop_assert_eq!(normalize_query(&q), q.clone());
        let _ = is_searchable(&q);
        let _ = suggestion_for(&q);
        let _ = suggestion_for(&raw);
    }
}
