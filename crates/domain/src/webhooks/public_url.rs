//! The one redaction of a webhook URL for records that outlive the request or reach other readers
//! (audit records, event data, the assistant's answers to those who may not read webhooks).
//!
//! A destination URL often carries a credential: user-info (`https://user:pass@…`), a query token
//! (`?token=…`), sometimes a fragment. Only the origin and path are public; the whole URL is shown
//! only by the webhook endpoints themselves, to callers the policy lets read webhooks.

/// `raw` without user-info, query and fragment (`https://hooks.example.com/path`); something that
/// does not parse as a URL is hidden whole (`(hidden)`), as it cannot be told what is secret in it.
pub fn public_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "(hidden)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_query_and_fragment_go_origin_and_path_stay() {
        assert_eq!(
            public_url("https://user:secret@hooks.example.com/in?token=abc#frag"),
            "https://hooks.example.com/in"
        );
        assert_eq!(public_url("https://:secret@hooks.example.com:8443/a/b"), "https://hooks.example.com:8443/a/b");
        assert_eq!(public_url("http://127.0.0.1:9000/hook?"), "http://127.0.0.1:9000/hook");
        assert_eq!(public_url("https://hooks.example.com"), "https://hooks.example.com/");
        assert_eq!(public_url("not a url"), "(hidden)");
    }

    proptest::proptest! {
        /// Whatever the secret parts hold, none of it survives.
        #[test]
        fn no_secret_part_survives(user in "[a-z]{1,8}", pass in "[A-Za-z0-9]{6,12}", token in "[A-Za-z0-9]{6,12}", frag in "[a-z]{6,12}") {
            let raw = format!("https://{user}:{pass}@hooks.example.com/in?token={token}#{frag}");
            let out = public_url(&raw);
            proptest::prop_assert_eq!(out.as_str(), "https://hooks.example.com/in");
        }
    }
}
