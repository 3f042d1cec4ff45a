//! Unit tests of the layered configuration and its validation.

use domain::webhooks::ssrf::{AddressPolicy, Cidr};

use super::*;

#[test]
fn cidrs_parse() {
    assert!(Cidr::parse("127.0.0.0/8").is_some());
    assert!(Cidr::parse("::1/128").is_some());
    assert!(Cidr::parse("10.0.0.0/33").is_none());
    assert!(Cidr::parse("localhost/8").is_none());
}

fn with_allowed_subnets(raw: &str) -> Result<(), SettingError> {
    let mut settings = Settings::defaults().expect("defaults");
    settings.webhooks.allowed_subnets = Some(raw.to_owned());
    settings.validate()
}

#[test]
fn a_malformed_allowed_subnet_is_refused_naming_the_setting_and_the_entry() {
    for bad in ["10.0.0.0/33", "::1/129", "localhost/8", "10.0.0.0/", "10.0.0/8"] {
        let err = with_allowed_subnets(&format!("127.0.0.0/8, {bad}")).expect_err(bad);
        assert_eq!(err.setting, "webhooks.allowed_subnets", "{bad}");
        assert!(err.message.contains(&format!("`{bad}`")), "{bad}: {}", err.message);
    }
}

#[test]
fn allowed_subnets_accept_what_the_address_policy_accepts() {
    let raw = "127.0.0.0/8, ::1/128,10.1.2.3, 192.168.0.0/16";
    assert!(with_allowed_subnets(raw).is_ok());
    assert!(AddressPolicy::from_setting(Some(raw)).is_some());
}

#[test]
fn co_admin_rag_hybrid_zero_turns_hybrid_search_off() {
    // The only test that touches this variable, and no other test loads settings from the
    // environment, so setting it here cannot race.
    std::env::set_var("CO_ADMIN_RAG_HYBRID", "0");
    let off = Settings::load(None).map(|s| s.co_admin.rag_hybrid);
    std::env::set_var("CO_ADMIN_RAG_HYBRID", "1");
    let on = Settings::load(None).map(|s| s.co_admin.rag_hybrid);
    std::env::remove_var("CO_ADMIN_RAG_HYBRID");
    let default = Settings::load(None).map(|s| s.co_admin.rag_hybrid);
    assert_eq!((off.ok(), on.ok(), default.ok()), (Some(false), Some(true), Some(true)));
}

#[test]
fn retry_schedule_parses() {
    assert_eq!(parse_retry_schedule("5, 300,1800"), Some(vec![5, 300, 1800]));
    assert_eq!(parse_retry_schedule("5,soon"), None);
    assert_eq!(parse_retry_schedule(""), None);
}
