//! Unit tests of the demo conversations' wording.

use super::LANGUAGES;

#[test]
fn a_customer_line_never_reads_like_a_reply() {
    for lang in &LANGUAGES {
        let customer: Vec<&str> = lang
            .topics
            .iter()
            .flat_map(|t| t.customer.iter().copied())
            .chain(lang.middle.iter().map(|m| m.0))
            .collect();
        let replies: Vec<&str> = lang
            .topics
            .iter()
            .flat_map(|t| t.reply.iter().copied())
            .chain(lang.middle.iter().map(|m| m.1))
            .chain(lang.templates.iter().copied())
            .collect();
        for c in &customer {
            assert!(!replies.contains(c), "{}: {c:?} is both a question and a reply", lang.code);
        }
    }
}
