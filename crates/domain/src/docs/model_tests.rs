//! Unit tests of documentation pages: parsing and chunking.

use super::*;

const PAGE: &str = "---\nslug: webhooks-verify\ntitle: Verify signatures\ncategory: webhooks\n---\n\n# Verify \
                    signatures\n\nIntro text.\n\n## Python\n\n```python\n# not a heading\nprint(1)\n```\n\n### \
                    Flask\n\nUse the raw body.\n\n## Empty\n\n## Node\n\nnode text\n";

#[test]
fn splits_by_heading_outside_code_fences() {
    let page = parse_page(PAGE.as_bytes()).expect("parses");
    assert_eq!(page.meta.slug, "webhooks-verify");
    let headings: Vec<&str> = page.chunks.iter().map(|c| c.heading.as_str()).collect();
    assert_eq!(headings, ["Verify signatures", "Python", "Python: Flask", "Node"]);
    assert!(page.chunks[1].body.contains("# not a heading"));
}

#[test]
fn missing_front_matter_fields_are_named() {
    assert_eq!(parse_page(b"# hi\n\ntext"), Err(DocPageError::NoFrontMatter));
    assert_eq!(parse_page(b"---\nslug: a\ntitle: b\n---\ntext"), Err(DocPageError::MissingField("category")));
    assert_eq!(parse_page(b"---\nslug: A b\ntitle: b\ncategory: c\n---\nx"), Err(DocPageError::BadSlug("A b".into())));
    assert_eq!(parse_page(b"---\nslug: a\ntitle: b\ncategory: c\n---\n# Title\n\n"), Err(DocPageError::Empty));
}

#[test]
fn long_sections_are_split_at_paragraphs() {
    let para = "word ".repeat(100);
    let body = format!("---\nslug: a\ntitle: T\ncategory: c\n---\n## Long\n\n{para}\n\n{para}\n\n{para}\n\n{para}\n");
    let page = parse_page(body.as_bytes()).expect("parses");
    assert!(page.chunks.len() >= 2);
    assert!(page.chunks.iter().all(|c| c.heading == "Long" && c.body.chars().count() <= MAX_CHUNK_CHARS));
}

#[test]
fn anchors_are_stable_slugs_of_the_indexed_heading() {
    assert_eq!(section_anchor("Python: Flask"), "python-flask");
    assert_eq!(section_anchor("The `wmsk_` prefix"), "the-wmsk-prefix");
    assert_eq!(section_anchor("  401, 403 & 429  "), "401-403-429");
    assert_eq!(section_anchor("¿?"), "section");
    assert_eq!(page_url("a-b", Some("Verify (Node.js)")), "/docs/a-b#verify-node-js");
    assert_eq!(page_url("a-b", None), "/docs/a-b");
    assert_eq!(indexed_heading(3, "Flask", "Python"), "Python: Flask");
    assert_eq!(indexed_heading(3, "Flask", ""), "Flask");
    assert_eq!(heading_text("### Flask  "), "Flask");
}

#[test]
fn hash_changes_with_content() {
    assert_eq!(content_hash(b"a"), content_hash(b"a"));
    assert_ne!(content_hash(b"a"), content_hash(b"b"));
    assert_eq!(content_hash(b"").len(), 64);
}
