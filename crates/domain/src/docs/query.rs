//! What the search does with the user's text before and after the engines: normalisation and the
//! suggestion offered when nothing matched (`docs/search.md`, "The result").

use super::model::{SettingsPage, Suggestion};

/// Longest query searched, in characters; the rest of a pasted wall of text adds nothing.
pub const MAX_QUERY_CHARS: usize = 500;

/// Removes control characters, collapses whitespace and keeps at most [`MAX_QUERY_CHARS`].
pub fn normalize_query(raw: &str) -> String {
    let cleaned: String = raw.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    words.join(" ").chars().take(MAX_QUERY_CHARS).collect::<String>().trim_end().to_owned()
}

/// Whether the query has anything a search engine can match (a letter or a digit).
pub fn is_searchable(query: &str) -> bool {
    query.chars().any(char::is_alphanumeric)
}

/// The settings pages (docs/product/settings-pages.md) with words that point to them.
const SETTINGS_PAGES: &[(&str, &str, &[&str])] = &[
    (
        "API Keys",
        "/settings/workspace/api-keys",
        &["key", "keys", "token", "revoke", "revoked", "expiry", "expire", "expired", "wmsk", "credential"],
    ),
    (
        "Webhooks (Integrations)",
        "/settings/integrations/webhooks",
        &["webhook", "webhooks", "event", "events", "delivery", "deliveries", "signature", "integration", "callback"],
    ),
    ("Analytics", "/analytics", &["analytics", "stats", "statistics", "chart", "export", "csv", "report", "metrics"]),
    (
        "REST API reference",
        "/settings/workspace/rest-api",
        &["api", "rest", "endpoint", "endpoints", "openapi", "curl", "reference", "request", "http"],
    ),
    ("Sign in", "/login", &["login", "log", "sign", "signin", "password", "session", "account"]),
];

/// Words that carry no topic, dropped when proposing a shorter query.
const FILLER: &[&str] = &[
    "a", "an", "the", "i", "we", "you", "my", "our", "your", "me", "is", "are", "was", "be", "do", "does", "did",
    "can", "could", "should", "would", "will", "how", "what", "why", "when", "where", "which", "who", "to", "of", "in",
    "on", "for", "with", "and", "or", "it", "this", "that", "there", "please", "about", "from", "at", "by", "as", "if",
    "any", "some", "get", "use",
];

/// What to offer when nothing matched: the closest settings page, if any word points to one, and
/// a shorter query made of the question's topic words.
pub fn suggestion_for(query: &str) -> Suggestion {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let page = SETTINGS_PAGES
        .iter()
        .map(|(title, path, keys)| (words.iter().filter(|w| keys.contains(&w.as_str())).count(), title, path))
        .filter(|(n, _, _)| *n > 0)
        .max_by_key(|(n, _, _)| *n)
        .map(|(_, title, path)| SettingsPage { title: (*title).to_owned(), path: (*path).to_owned() });
    let topic: Vec<&str> =
        words.iter().map(String::as_str).filter(|w| !FILLER.contains(w) && w.len() > 1).take(4).collect();
    let rephrased = Some(topic.join(" ")).filter(|r| !r.is_empty() && *r != query.to_lowercase());
    let mut message = if query.is_empty() {
        "The query is empty; ask about a feature, such as \"create an API key\" or \"verify webhook signatures\"."
            .to_owned()
    } else {
        format!("No documentation page matches \"{query}\".")
    };
    if let Some(r) = &rephrased {
        message.push_str(&format!(" Try a shorter query such as \"{r}\"."));
    }
    if let Some(p) = &page {
        message.push_str(&format!(" The closest settings page is {} at {}.", p.title, p.path));
    }
    Suggestion { message, settings_page: page, rephrased_query: rephrased }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_strips_controls_and_bounds_length() {
        assert_eq!(normalize_query("  create\u{0}  an\n\tkey  "), "create an key");
        assert_eq!(normalize_query(&"x".repeat(10_000)).chars().count(), MAX_QUERY_CHARS);
        assert_eq!(normalize_query("🦀 émoji"), "🦀 émoji");
    }

    #[test]
    fn only_text_with_letters_or_digits_is_searchable() {
        assert!(!is_searchable("&|!():* \"\""));
        assert!(!is_searchable("🦀🦀"));
        assert!(is_searchable("401"));
    }

    #[test]
    fn suggestion_points_to_the_settings_page_the_words_name() {
        let s = suggestion_for("How do I rotate the flux capacitor of my webhook?");
        assert_eq!(s.settings_page.map(|p| p.path).as_deref(), Some("/settings/integrations/webhooks"));
        assert_eq!(s.rephrased_query.as_deref(), Some("rotate flux capacitor webhook"));
    }

    #[test]
    fn unrelated_question_gets_a_rephrasing_and_no_page() {
        let s = suggestion_for("bake sourdough bread");
        assert!(s.settings_page.is_none());
        assert!(s.rephrased_query.is_none());
        assert!(s.message.contains("bake sourdough bread"));
    }
}
