//! Measured search quality (`wms docs eval`): Recall@5, MRR@5 and nDCG@5 over an evaluation set of
//! questions with the slugs that answer them.
//!
//! Questions with no relevant page (unanswerable ones) are excluded from the three metrics, whose
//! denominators would otherwise be zero, and scored separately: the share that got no hit at all.

use serde::Deserialize;

use super::model::SearchMode;
use super::ports::{DocsSearch, SearchError};

/// The cut-off of every metric.
pub const EVAL_K: u8 = 5;

/// One question of `docs/search-eval.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct EvalQuestion {
    /// As a user would ask it.
    pub q: String,
    /// Slugs of the pages that answer it; empty when the documentation has no answer.
    pub relevant: Vec<String>,
}

/// The evaluation file: `{"questions": [...]}`.
#[derive(Debug, Clone, Deserialize)]
pub struct EvalSet {
    /// The questions.
    pub questions: Vec<EvalQuestion>,
}

/// A question whose relevant pages were not all in the top 5.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalMiss {
    /// The question.
    pub q: String,
    /// What should have been found.
    pub relevant: Vec<String>,
    /// What was found, best first.
    pub found: Vec<String>,
}

/// The metrics of one search mode.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    /// The mode that was asked for.
    pub mode: SearchMode,
    /// Answerable questions scored.
    pub answerable: usize,
    /// Mean share of each question's relevant pages found in the top 5.
    pub recall_at_5: f64,
    /// Share of answerable questions with at least one relevant page in the top 5.
    pub hit_rate_at_5: f64,
    /// Mean reciprocal rank of the first relevant page (0 beyond rank 5).
    pub mrr_at_5: f64,
    /// Mean normalised discounted cumulative gain with binary relevance.
    pub ndcg_at_5: f64,
    /// Unanswerable questions.
    pub unanswerable: usize,
    /// Of those, how many got no hit at all.
    pub unanswerable_without_hits: usize,
    /// How many searches were answered in another mode than asked (provider fallbacks).
    pub fallbacks: usize,
    /// Answerable questions that missed a relevant page.
    pub misses: Vec<EvalMiss>,
}

/// Scores one ranked list against the relevant slugs: `(recall, reciprocal rank, nDCG)`.
pub fn score(found: &[String], relevant: &[String]) -> (f64, f64, f64) {
    let k = usize::from(EVAL_K);
    let top = &found[..found.len().min(k)];
    let is_relevant = |s: &String| relevant.contains(s);
    let hits = top.iter().filter(|s| is_relevant(s)).count();
    let recall = hits as f64 / relevant.len() as f64;
    let rr = top.iter().position(is_relevant).map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
    let dcg: f64 =
        top.iter().enumerate().filter(|(_, s)| is_relevant(s)).map(|(i, _)| 1.0 / (i as f64 + 2.0).log2()).sum();
    let ideal: f64 = (0..relevant.len().min(k)).map(|i| 1.0 / (i as f64 + 2.0).log2()).sum();
    (recall, rr, dcg / ideal)
}

/// Runs every question through `search` (expected to answer in `mode`) and scores the results.
///
/// # Errors
/// When a search fails.
pub async fn evaluate(search: &dyn DocsSearch, mode: SearchMode, set: &EvalSet) -> Result<EvalReport, SearchError> {
    let mut report = EvalReport {
        mode,
        answerable: 0,
        recall_at_5: 0.0,
        hit_rate_at_5: 0.0,
        mrr_at_5: 0.0,
        ndcg_at_5: 0.0,
        unanswerable: 0,
        unanswerable_without_hits: 0,
        fallbacks: 0,
        misses: Vec::new(),
    };
    for question in &set.questions {
        let result = search.search(&question.q, EVAL_K).await?;
        if result.mode != mode {
            report.fallbacks += 1;
        }
        let found: Vec<String> = result.hits.into_iter().map(|h| h.slug).collect();
        if question.relevant.is_empty() {
            report.unanswerable += 1;
            report.unanswerable_without_hits += usize::from(found.is_empty());
            continue;
        }
        report.answerable += 1;
        let (recall, rr, ndcg) = score(&found, &question.relevant);
        report.recall_at_5 += recall;
        report.hit_rate_at_5 += if rr > 0.0 { 1.0 } else { 0.0 };
        report.mrr_at_5 += rr;
        report.ndcg_at_5 += ndcg;
        if recall < 1.0 {
            report.misses.push(EvalMiss { q: question.q.clone(), relevant: question.relevant.clone(), found });
        }
    }
    if report.answerable > 0 {
        let n = report.answerable as f64;
        report.recall_at_5 /= n;
        report.hit_rate_at_5 /= n;
        report.mrr_at_5 /= n;
        report.ndcg_at_5 /= n;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn perfect_ranking_scores_one() {
        assert_eq!(score(&s(&["a", "b", "c"]), &s(&["a", "b"])), (1.0, 1.0, 1.0));
    }

    #[test]
    fn second_place_halves_the_reciprocal_rank() {
        let (recall, rr, ndcg) = score(&s(&["x", "a"]), &s(&["a"]));
        assert_eq!((recall, rr), (1.0, 0.5));
        assert!((ndcg - 1.0 / 3f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn beyond_five_counts_nothing() {
        assert_eq!(score(&s(&["1", "2", "3", "4", "5", "a"]), &s(&["a", "b"])), (0.0, 0.0, 0.0));
    }
}
