//! Product documentation and `search_product_docs` (`docs/search.md`): pages split into chunks by
//! heading, full-text search, hybrid search with vectors, fusion and rerank, and its evaluation.

pub mod eval;
pub mod ingest;
pub mod library;
pub mod model;
pub mod ports;
pub mod query;
pub mod service;
pub mod vectors;
pub mod visitors;

#[cfg(test)]
mod service_tests;

pub use ingest::{embedding_text, ingest, ingest_observed, IngestReport, SourcePage};
pub use library::{DocsLibrary, LibraryPage, PageSection};
pub use model::*;
pub use ports::*;
pub use service::{DocsSearchService, HybridProviders, DEFAULT_LIMIT, MAX_LIMIT};
pub use visitors::{admit_visitor, visitor_key, VisitorPace, VisitorSearches, VisitorVerdict, SEARCHES_PER_MINUTE};
