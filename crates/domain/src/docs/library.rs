//! The documentation as pages to read: the same sources the ingest indexes, held in memory for
//! the `/docs` pages and the MCP resources.

use std::collections::BTreeMap;

use super::ingest::SourcePage;
use super::model::{parse_page, section_anchor, split_page, DocPageError, PageMeta};

/// A section of a page as the search index knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSection {
    /// The heading as indexed (`Python: Flask`; the page title for the introduction).
    pub heading: String,
    /// Its fragment on the page ([`section_anchor`] of the heading).
    pub anchor: String,
}

/// One page: its front matter, its markdown and its sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryPage {
    /// Slug, title and category.
    pub meta: PageMeta,
    /// The markdown after the front matter, as written.
    pub markdown: String,
    /// The sections a search hit can point at, in page order, each once.
    pub sections: Vec<PageSection>,
}

/// Every readable page, by slug.
#[derive(Debug, Clone, Default)]
pub struct DocsLibrary {
    pages: BTreeMap<String, LibraryPage>,
}

impl DocsLibrary {
    /// The pages of `sources` that the ingest would accept, and why each other one was left out.
    /// A slug given twice keeps its first page, as the index would hold only one.
    pub fn from_sources(sources: &[SourcePage]) -> (Self, Vec<(String, DocPageError)>) {
        let mut pages = BTreeMap::new();
        let mut failed = Vec::new();
        for source in sources {
            let parsed = parse_page(&source.bytes).and_then(|p| Ok((p, split_page(&source.bytes)?.1)));
            match parsed {
                Ok((page, markdown)) => {
                    let mut sections: Vec<PageSection> = Vec::new();
                    for chunk in page.chunks {
                        if !sections.iter().any(|s| s.heading == chunk.heading) {
                            sections
                                .push(PageSection { anchor: section_anchor(&chunk.heading), heading: chunk.heading });
                        }
                    }
                    pages.entry(page.meta.slug.clone()).or_insert(LibraryPage { meta: page.meta, markdown, sections });
                }
                Err(e) => failed.push((source.path.clone(), e)),
            }
        }
        (Self { pages }, failed)
    }

    /// The page with this slug.
    pub fn get(&self, slug: &str) -> Option<&LibraryPage> {
        self.pages.get(slug)
    }

    /// Every page, by slug.
    pub fn pages(&self) -> impl Iterator<Item = &LibraryPage> {
        self.pages.values()
    }

    /// Number of pages.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether there is no page.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The pages grouped by category (categories and pages in alphabetical order).
    pub fn by_category(&self) -> BTreeMap<&str, Vec<&LibraryPage>> {
        let mut out: BTreeMap<&str, Vec<&LibraryPage>> = BTreeMap::new();
        for p in self.pages.values() {
            out.entry(p.meta.category.as_str()).or_default().push(p);
        }
        for pages in out.values_mut() {
            pages.sort_by(|a, b| a.meta.title.cmp(&b.meta.title));
        }
        out
    }

    /// The page whose title is exactly `title`, for cross-references written as `**Title**`.
    pub fn by_title(&self, title: &str) -> Option<&LibraryPage> {
        self.pages.values().find(|p| p.meta.title == title)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(path: &str, text: &str) -> SourcePage {
        SourcePage { path: path.into(), bytes: text.as_bytes().to_vec() }
    }

    #[test]
    fn pages_keep_their_markdown_and_indexed_sections() {
        let (lib, failed) = DocsLibrary::from_sources(&[
            source(
                "a.md",
                "---\nslug: verify\ntitle: Verify\ncategory: webhooks\n---\n# Verify\n\nIntro.\n\n## Python\n\nA\n\n### Flask\n\nB\n",
            ),
            source("b.md", "no front matter"),
        ]);
        assert_eq!(failed.len(), 1);
        let page = lib.get("verify").expect("page");
        assert!(page.markdown.starts_with("\n# Verify"));
        let anchors: Vec<&str> = page.sections.iter().map(|s| s.anchor.as_str()).collect();
        assert_eq!(anchors, ["verify", "python", "python-flask"]);
        assert_eq!(lib.by_title("Verify").map(|p| p.meta.slug.as_str()), Some("verify"));
        assert_eq!(lib.by_category().get("webhooks").map(Vec::len), Some(1));
    }
}
