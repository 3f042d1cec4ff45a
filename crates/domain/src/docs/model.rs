//! Documentation pages, their chunks, and the shape of a search result (`docs/search.md`, "The
//! result").

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Ingest status of a page. Only `ready` documents are searched (`docs/search.md`, "Ingest").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DocStatus {
    /// Stored, chunks not yet written.
    Pending,
    /// Chunked and indexed: searchable.
    Ready,
    /// Could not be ingested; the reason is stored beside it.
    Failed,
}

impl DocStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DocStatus::Pending => "pending",
            DocStatus::Ready => "ready",
            DocStatus::Failed => "failed",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(DocStatus::Pending),
            "ready" => Some(DocStatus::Ready),
            "failed" => Some(DocStatus::Failed),
            _ => None,
        }
    }
}

/// The front matter of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageMeta {
    /// Stable identifier, also the file name (`api-keys-create`).
    pub slug: String,
    /// Human title.
    pub title: String,
    /// Grouping such as `webhooks`.
    pub category: String,
}

/// One section of a page: what is indexed and searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The section's heading (`Verification checklist`); the page title for the introduction.
    pub heading: String,
    /// The section's text, markdown as written.
    pub body: String,
}

/// A page parsed from its markdown source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPage {
    /// Front matter.
    pub meta: PageMeta,
    /// Sections in page order.
    pub chunks: Vec<Chunk>,
}

/// Why a page cannot be ingested; stored as the document's failure reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocPageError {
    /// The file does not start with a `---` front matter block.
    #[error("the page has no front matter (a `---` block with slug, title and category)")]
    NoFrontMatter,
    /// A front matter field is absent or empty.
    #[error("the front matter has no `{0}`")]
    MissingField(&'static str),
    /// The slug is not lowercase words joined by hyphens.
    #[error("the slug `{0}` must be lowercase letters and digits joined by hyphens")]
    BadSlug(String),
    /// Nothing but front matter.
    #[error("the page has no text")]
    Empty,
    /// Not UTF-8.
    #[error("the page is not valid UTF-8")]
    NotUtf8,
}

/// Longest chunk body in characters; longer sections are split at paragraph breaks so that each
/// chunk stays within what small embedding models read (about 256 tokens) and snippets stay local.
pub const MAX_CHUNK_CHARS: usize = 1_600;

/// SHA-256 of the page's bytes in hex: an unchanged page is skipped on re-ingest.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `s` is a valid slug (`a-z0-9` words joined by single hyphens).
pub fn is_valid_slug(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Parses a page: front matter, then sections split at `##` and `###` headings (never inside code
/// fences, where `#` starts a shell or Python comment).
///
/// # Errors
/// A [`DocPageError`] saying what is wrong with the page.
pub fn parse_page(bytes: &[u8]) -> Result<ParsedPage, DocPageError> {
    let (meta, body) = split_page(bytes)?;
    let chunks = split_sections(&body, &meta.title);
    if chunks.is_empty() {
        return Err(DocPageError::Empty);
    }
    Ok(ParsedPage { meta, chunks })
}

/// The front matter and the markdown after it: what the documentation pages render, so the pages
/// show exactly the text that [`parse_page`] indexes.
///
/// # Errors
/// A [`DocPageError`] about the front matter or the encoding.
pub fn split_page(bytes: &[u8]) -> Result<(PageMeta, String), DocPageError> {
    let text = std::str::from_utf8(bytes).map_err(|_| DocPageError::NotUtf8)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
    let rest = text.strip_prefix("---\n").ok_or(DocPageError::NoFrontMatter)?;
    let end = rest.find("\n---").ok_or(DocPageError::NoFrontMatter)?;
    let (front, body) = (&rest[..end], &rest[end + 4..]);
    let field = |name: &'static str| -> Result<String, DocPageError> {
        front
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().trim_matches(|c| c == '"' || c == '\'').trim().to_owned())
            .filter(|v| !v.is_empty())
            .ok_or(DocPageError::MissingField(name))
    };
    let meta = PageMeta { slug: field("slug")?, title: field("title")?, category: field("category")? };
    if !is_valid_slug(&meta.slug) {
        return Err(DocPageError::BadSlug(meta.slug));
    }
    Ok((meta, body.to_owned()))
}

/// The heading a section is indexed (and searched, and linked) under: a `##` section's own text,
/// a `###` subsection's prefixed with its section's (`Python: Flask`), so a subsection stays
/// findable by its section's words. `parent` is the text of the last `##` heading, if any.
pub fn indexed_heading(level: usize, text: &str, parent: &str) -> String {
    if level == 3 && !parent.is_empty() {
        format!("{parent}: {text}")
    } else {
        text.to_owned()
    }
}

/// The text of an ATX heading line as written (`## Verify \`wmsk_\` keys` → ``Verify `wmsk_` keys``).
pub fn heading_text(line: &str) -> &str {
    line.trim_start_matches('#').trim()
}

/// The fragment that names a section on its page (`/docs/<slug>#<anchor>`): the indexed heading
/// in lowercase ASCII letters and digits, every other run of characters one hyphen
/// (`Python: Flask` → `python-flask`). Pages and search hits both derive it from the heading, so
/// a hit always lands on its section.
pub fn section_anchor(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len());
    for c in heading.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("section");
    }
    out
}

/// Where a page, or one of its sections, is read in the app.
pub fn page_url(slug: &str, heading: Option<&str>) -> String {
    match heading {
        Some(h) => format!("/docs/{slug}#{}", section_anchor(h)),
        None => format!("/docs/{slug}"),
    }
}

fn split_sections(body: &str, title: &str) -> Vec<Chunk> {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut heading = title.to_owned();
    let mut parent = String::new();
    let mut text = String::new();
    let mut in_fence = false;
    for line in body.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        let level = if in_fence { 0 } else { heading_level(line) };
        match level {
            1 => {} // the page title, already in the front matter
            2 | 3 => {
                sections.push((std::mem::take(&mut heading), std::mem::take(&mut text)));
                let h = heading_text(line).to_owned();
                heading = indexed_heading(level, &h, &parent);
                if level == 2 {
                    parent = h;
                }
            }
            _ => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    sections.push((heading, text));
    sections
        .into_iter()
        .filter(|(_, t)| !t.trim().is_empty())
        .flat_map(|(h, t)| split_long(t.trim()).into_iter().map(move |body| Chunk { heading: h.clone(), body }))
        .collect()
}

/// `#` count of an ATX heading line, 0 when the line is not one.
fn heading_level(line: &str) -> usize {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        hashes
    } else {
        0
    }
}

/// Splits a section longer than [`MAX_CHUNK_CHARS`] at blank lines outside code fences.
fn split_long(text: &str) -> Vec<String> {
    if text.chars().count() <= MAX_CHUNK_CHARS {
        return vec![text.to_owned()];
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if line.trim().is_empty() && !in_fence {
            if !current.trim().is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    if !current.trim().is_empty() {
        paragraphs.push(current);
    }
    let mut out: Vec<String> = Vec::new();
    let mut acc = String::new();
    for p in paragraphs {
        if !acc.is_empty() && acc.chars().count() + p.chars().count() > MAX_CHUNK_CHARS {
            out.push(std::mem::take(&mut acc).trim().to_owned());
        }
        if !acc.is_empty() {
            acc.push('\n');
        }
        acc.push_str(&p);
    }
    if !acc.trim().is_empty() {
        out.push(acc.trim().to_owned());
    }
    out
}

/// Which engine answered a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// PostgreSQL full-text search alone.
    FullText,
    /// Vector and full-text lists fused by Reciprocal Rank Fusion (and reranked when configured).
    Hybrid,
}

/// One matching page.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchHit {
    /// The page's slug.
    pub slug: String,
    /// The page's title.
    pub title: String,
    /// The page's category.
    pub category: String,
    /// The best-matching passage, with matched terms in `**bold**`.
    pub snippet: String,
    /// Relevance, higher is better; comparable only within one result.
    pub score: f64,
    /// The matching section in the app: `/docs/<slug>#<section anchor>`.
    pub url: String,
}

/// A settings page the assistant can point to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SettingsPage {
    /// Its name in the navigation.
    pub title: String,
    /// Its path on the wms host.
    pub path: String,
}

/// What to offer when nothing matched (`docs/search.md`, "The result": `suggestion`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Suggestion {
    /// A sentence the assistant can pass on.
    pub message: String,
    /// The settings page closest to the question, when one relates to it.
    pub settings_page: Option<SettingsPage>,
    /// A shorter query worth trying, when one can be derived.
    pub rephrased_query: Option<String>,
}

/// The result of `search_product_docs` plus how it was produced (`docs/search.md`, "The result").
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchResult {
    /// The query as searched (trimmed, control characters removed, at most 500 characters).
    pub query: String,
    /// Best first, at most one per page.
    pub hits: Vec<SearchHit>,
    /// Number of hits returned.
    pub total: usize,
    /// Which engine answered.
    pub mode: SearchMode,
    /// Whether the rerank provider ordered the hits.
    pub reranked: bool,
    /// Why hybrid search was configured but full-text answered; null otherwise.
    pub fallback_reason: Option<String>,
    /// Set when `hits` is empty.
    pub suggestion: Option<Suggestion>,
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
