//! `wms docs ingest` and `wms docs eval`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use adapters_postgres::docs::PgDocsIndex;
use anyhow::Context;
use domain::docs::eval::{evaluate, EvalReport, EvalSet};
use domain::docs::{DocsSearch, DocsSearchService, HybridProviders, Reranker, SearchMode};

use crate::cli::{DocsEvalArgs, DocsIngestArgs};
use crate::config::Settings;
use crate::docs_search::{embedder, ingest_dir, reranker, summary};
use crate::CommandError;

pub(super) async fn ingest(settings: Settings, args: DocsIngestArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let report = ingest_dir(&settings, &db, &args.dir).await?;
    println!("{}", summary(&report));
    for (path, reason) in &report.failed {
        println!("  failed  {path}: {reason}");
    }
    Ok(())
}

pub(super) async fn eval(settings: Settings, args: DocsEvalArgs) -> Result<(), CommandError> {
    let (db, _) = super::connect_for_command(&settings).await?;
    let raw = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let set: EvalSet =
        serde_json::from_slice(&raw).with_context(|| format!("{} is not an eval set", args.file.display()))?;
    let index = Arc::new(PgDocsIndex::new(db.clone()));

    let mut runs: Vec<(&str, SearchMode, DocsSearchService)> =
        vec![("full-text", SearchMode::FullText, DocsSearchService::full_text(index.clone()))];
    // Every available mode, whatever CO_ADMIN_RAG_HYBRID says: this measures, it does not serve.
    if let Some(e) = embedder(&settings, Duration::from_millis(settings.embeddings.timeout_ms)) {
        let embedder = Arc::new(e);
        let plain = HybridProviders { embedder: embedder.clone(), reranker: None };
        runs.push(("hybrid", SearchMode::Hybrid, DocsSearchService::hybrid(index.clone(), plain)));
        if let Some(r) = reranker(&settings) {
            let reranked = HybridProviders { embedder, reranker: Some(Arc::new(r) as Arc<dyn Reranker>) };
            runs.push(("hybrid+rerank", SearchMode::Hybrid, DocsSearchService::hybrid(index, reranked)));
        }
    }

    let answerable = set.questions.iter().filter(|q| !q.relevant.is_empty()).count();
    println!(
        "{} questions ({answerable} answerable, {} without an answer) from {}",
        set.questions.len(),
        set.questions.len() - answerable,
        args.file.display()
    );
    println!(
        "{:<14} {:>9} {:>6} {:>6} {:>7} {:>14} {:>9} {:>8}",
        "mode", "Recall@5", "Hit@5", "MRR@5", "nDCG@5", "unanswered ok", "fallback", "ms/query"
    );
    let mut full_text_recall = 0.0;
    for (name, mode, service) in &runs {
        // One warm-up search loads the vectors, which is not what a query costs.
        let _ = service.search("warm up", 1).await;
        let started = Instant::now();
        let report = evaluate(service as &dyn DocsSearch, *mode, &set).await.context("search failed")?;
        let per_query = started.elapsed().as_secs_f64() * 1000.0 / set.questions.len().max(1) as f64;
        print_row(name, &report, per_query);
        if *mode == SearchMode::FullText {
            full_text_recall = report.recall_at_5;
        }
        if args.verbose {
            for m in &report.misses {
                println!("    miss: {:?}\n          want {:?}\n          got  {:?}", m.q, m.relevant, m.found);
            }
        }
    }
    if full_text_recall < args.min_recall {
        return Err(CommandError::Failed(anyhow::anyhow!(
            "full-text Recall@5 is {full_text_recall:.3}, below the required {:.2}",
            args.min_recall
        )));
    }
    Ok(())
}

fn print_row(name: &str, r: &EvalReport, per_query_ms: f64) {
    println!(
        "{:<14} {:>9.3} {:>6.3} {:>6.3} {:>7.3} {:>14} {:>9} {:>8.1}",
        name,
        r.recall_at_5,
        r.hit_rate_at_5,
        r.mrr_at_5,
        r.ndcg_at_5,
        format!("{}/{}", r.unanswerable_without_hits, r.unanswerable),
        r.fallbacks,
        per_query_ms
    );
}
