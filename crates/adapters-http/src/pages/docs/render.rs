//! Markdown to safe HTML for the documentation pages: CommonMark with tables (`pulldown-cmark`),
//! headings given the anchors the search index names their sections by, `**Title**`
//! cross-references to other pages turned into links, and the result sanitised (`ammonia`).

use std::collections::HashSet;

use ammonia::Builder;
use domain::docs::{heading_text, indexed_heading, section_anchor, DocsLibrary, LibraryPage};
use pulldown_cmark::{html, CowStr, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

/// An entry of a page's table of contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TocEntry {
    /// 2 or 3.
    pub level: u8,
    /// The heading as written on the page.
    pub text: String,
    /// Its fragment.
    pub anchor: String,
}

/// A page ready to show.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Sanitised HTML of the page body (its `#` title included).
    pub html: String,
    /// `##` and `###` headings in page order.
    pub toc: Vec<TocEntry>,
}

/// Renders `page`; `library` resolves the cross-references.
pub fn render(page: &LibraryPage, library: &DocsLibrary) -> Rendered {
    let md = page.markdown.as_str();
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut toc = Vec::new();
    let mut parent = String::new();
    let mut seen_title = false;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(md, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, id: _, classes, attrs }) => {
                // The anchor comes from the heading's source text, exactly as the index reads it
                // (`domain::docs::parse_page`), not from the rendered text.
                let source = md[range].lines().next().unwrap_or_default();
                let text = heading_text(source).to_owned();
                let anchor = match level {
                    HeadingLevel::H1 if !seen_title => {
                        seen_title = true;
                        Some(section_anchor(&page.meta.title))
                    }
                    HeadingLevel::H2 => {
                        parent.clone_from(&text);
                        toc.push(TocEntry { level: 2, text: text.clone(), anchor: section_anchor(&text) });
                        Some(section_anchor(&text))
                    }
                    HeadingLevel::H3 => {
                        let a = section_anchor(&indexed_heading(3, &text, &parent));
                        toc.push(TocEntry { level: 3, text, anchor: a.clone() });
                        Some(a)
                    }
                    _ => None,
                };
                events.push(Event::Start(Tag::Heading { level, id: anchor.map(CowStr::from), classes, attrs }));
            }
            other => events.push(other),
        }
    }
    let events = link_cross_references(events, page, library);
    let mut raw = String::with_capacity(md.len() * 3 / 2);
    html::push_html(&mut raw, events.into_iter());
    Rendered { html: sanitize(&raw), toc }
}

/// `**Exact Title**` of another page, outside links and headings, becomes a link to it: the
/// pages refer to each other that way ("See **Connect WhatsApp**").
fn link_cross_references<'a>(events: Vec<Event<'a>>, page: &LibraryPage, library: &DocsLibrary) -> Vec<Event<'a>> {
    let mut out = Vec::with_capacity(events.len());
    let mut in_link_or_heading = 0usize;
    let mut i = 0;
    while i < events.len() {
        match &events[i] {
            Event::Start(Tag::Link { .. } | Tag::Heading { .. }) => in_link_or_heading += 1,
            Event::End(TagEnd::Link | TagEnd::Heading(_)) => in_link_or_heading = in_link_or_heading.saturating_sub(1),
            _ => {}
        }
        if in_link_or_heading == 0 {
            if let (Event::Start(Tag::Strong), Some(Event::Text(t)), Some(Event::End(TagEnd::Strong))) =
                (&events[i], events.get(i + 1), events.get(i + 2))
            {
                if let Some(target) = library.by_title(t).filter(|p| p.meta.slug != page.meta.slug) {
                    out.push(Event::Start(Tag::Link {
                        link_type: LinkType::Inline,
                        dest_url: CowStr::from(format!("/docs/{}", target.meta.slug)),
                        title: CowStr::from(""),
                        id: CowStr::from(""),
                    }));
                    out.extend(events[i..i + 3].iter().cloned());
                    out.push(Event::End(TagEnd::Link));
                    i += 3;
                    continue;
                }
            }
        }
        out.push(events[i].clone());
        i += 1;
    }
    out
}

/// The pages are ours, but a raw `<script>` or `javascript:` link in a page must still never
/// reach the browser: everything outside ammonia's safe set is dropped. Heading ids are kept for
/// the anchors; links keep only `http`, `https`, `mailto` and relative URLs.
fn sanitize(html: &str) -> String {
    let heading_ids: HashSet<&str> = ["id"].into_iter().collect();
    let mut b = Builder::default();
    for h in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        b.add_tag_attributes(h, heading_ids.iter().copied());
    }
    b.url_schemes(["http", "https", "mailto"].into_iter().collect());
    b.clean(html).to_string()
}

#[cfg(test)]
mod tests {
    use domain::docs::SourcePage;

    use super::*;

    fn library(pages: &[(&str, &str)]) -> DocsLibrary {
        let sources: Vec<SourcePage> = pages
            .iter()
            .map(|(slug, body)| SourcePage {
                path: format!("{slug}.md"),
                bytes: format!("---\nslug: {slug}\ntitle: Title {slug}\ncategory: c\n---\n{body}").into_bytes(),
            })
            .collect();
        DocsLibrary::from_sources(&sources).0
    }

    #[test]
    fn headings_get_the_anchors_of_the_indexed_sections() {
        let lib = library(&[(
            "a",
            "# Title a\n\nIntro.\n\n## Verify `wmsk_` keys\n\nx\n\n### In Python\n\ny\n\n```sh\n# not a heading\n```\n",
        )]);
        let page = lib.get("a").expect("page");
        let r = render(page, &lib);
        assert!(r.html.contains(r#"<h1 id="title-a">"#), "{}", r.html);
        assert!(r.html.contains(r#"<h2 id="verify-wmsk-keys">"#), "{}", r.html);
        assert!(r.html.contains(r#"<h3 id="verify-wmsk-keys-in-python">"#), "{}", r.html);
        let rendered: Vec<&str> = r.toc.iter().map(|t| t.anchor.as_str()).collect();
        for s in &page.sections {
            assert!(s.anchor == "title-a" || rendered.contains(&s.anchor.as_str()), "{}", s.anchor);
        }
    }

    #[test]
    fn titles_in_bold_link_to_their_page_and_unsafe_html_is_dropped() {
        let lib = library(&[
            ("a", "Intro. See **Title b**, not **Title a** or **Other**.\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))\n"),
            ("b", "Body.\n"),
        ]);
        let r = render(lib.get("a").expect("page"), &lib);
        assert!(
            r.html.contains(r#"<a href="/docs/b" rel="noopener noreferrer"><strong>Title b</strong></a>"#),
            "{}",
            r.html
        );
        assert!(r.html.contains("<strong>Title a</strong>") && !r.html.contains(r#"href="/docs/a""#), "{}", r.html);
        assert!(!r.html.contains("<script") && !r.html.contains("javascript:"), "{}", r.html);
    }
}
