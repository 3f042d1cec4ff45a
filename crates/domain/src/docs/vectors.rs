//! Exact nearest-neighbour search over chunk vectors held in memory, and Reciprocal Rank Fusion.
//!
//! PostgreSQL here has no pgvector, and the documentation is small (thousands of chunks), so a
//! brute-force scan of unit vectors is exact and takes well under a millisecond per query.

use std::collections::HashMap;

use super::ports::StoredVector;

/// The RRF constant from Cormack et al. (2009); large enough that one list's top rank cannot
/// outvote agreement between lists.
pub const RRF_K: f64 = 60.0;

/// A chunk found by vector similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorMatch {
    /// The chunk.
    pub chunk_id: i64,
    /// Its document.
    pub document_id: i64,
    /// Cosine similarity with the query.
    pub similarity: f32,
}

/// The query vector has another dimension than the stored ones (the model changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the query vector has {query} dimensions, the stored vectors {stored}")]
pub struct DimensionMismatch {
    /// Stored vectors' dimension.
    pub stored: usize,
    /// Query vector's dimension.
    pub query: usize,
}

/// Every chunk vector of one model, normalised to unit length, in one contiguous buffer.
#[derive(Debug, Default)]
pub struct VectorIndex {
    generation: i64,
    dimension: usize,
    ids: Vec<(i64, i64)>,
    texts: HashMap<i64, String>,
    data: Vec<f32>,
}

impl VectorIndex {
    /// Builds the index for ingest `generation`. Vectors whose dimension differs from the first
    /// one, or that are all zeros, are left out.
    pub fn build(generation: i64, stored: Vec<StoredVector>) -> Self {
        let dimension = stored.first().map_or(0, |v| v.vector.len());
        let mut index = VectorIndex { generation, dimension, ..Default::default() };
        for v in stored {
            let norm = v.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if v.vector.len() != dimension || norm == 0.0 || !norm.is_finite() {
                continue;
            }
            index.data.extend(v.vector.iter().map(|x| x / norm));
            index.ids.push((v.chunk_id, v.document_id));
            index.texts.insert(v.chunk_id, v.text);
        }
        index
    }

    /// The ingest generation it was built from.
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// How many chunks it holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The text of a chunk, for the rerank provider.
    pub fn text(&self, chunk_id: i64) -> Option<&str> {
        self.texts.get(&chunk_id).map(String::as_str)
    }

    /// The best chunk of each of the `n` documents most similar to `query`.
    ///
    /// # Errors
    /// [`DimensionMismatch`] when `query` has another dimension.
    pub fn nearest_documents(&self, query: &[f32], n: usize) -> Result<Vec<VectorMatch>, DimensionMismatch> {
        if query.len() != self.dimension {
            return Err(DimensionMismatch { stored: self.dimension, query: query.len() });
        }
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return Ok(Vec::new());
        }
        let mut scored: Vec<(f32, usize)> = self
            .data
            .chunks_exact(self.dimension)
            .enumerate()
            .map(|(i, v)| (v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>() / norm, i))
            .collect();
        scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        let mut seen = std::collections::HashSet::new();
        Ok(scored
            .into_iter()
            .filter_map(|(similarity, i)| {
                let (chunk_id, document_id) = self.ids[i];
                seen.insert(document_id).then_some(VectorMatch { chunk_id, document_id, similarity })
            })
            .take(n)
            .collect())
    }
}

/// Reciprocal Rank Fusion: each list contributes `1 / (k + rank)` (rank from 1) to every
/// document in it. Returns `(document, score)` best first; ties keep first-list order.
pub fn reciprocal_rank_fusion(lists: &[Vec<i64>], k: f64) -> Vec<(i64, f64)> {
    let mut scores: Vec<(i64, f64)> = Vec::new();
    let mut position: HashMap<i64, usize> = HashMap::new();
    for list in lists {
        for (rank, doc) in list.iter().enumerate() {
            let add = 1.0 / (k + rank as f64 + 1.0);
            match position.get(doc) {
                Some(&i) => scores[i].1 += add,
                None => {
                    position.insert(*doc, scores.len());
                    scores.push((*doc, add));
                }
            }
        }
    }
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(chunk_id: i64, document_id: i64, vector: Vec<f32>) -> StoredVector {
        StoredVector { chunk_id, document_id, text: format!("chunk {chunk_id}"), vector }
    }

    #[test]
    fn nearest_is_by_cosine_and_one_chunk_per_document() {
        let index = VectorIndex::build(
            1,
            vec![
                stored(1, 10, vec![1.0, 0.0]),
                stored(2, 10, vec![0.9, 0.1]),
                stored(3, 20, vec![0.0, 5.0]),
                stored(4, 30, vec![0.7, 0.7]),
            ],
        );
        let hits = index.nearest_documents(&[2.0, 0.0], 5).expect("same dimension");
        let ids: Vec<(i64, i64)> = hits.iter().map(|m| (m.chunk_id, m.document_id)).collect();
        assert_eq!(ids, [(1, 10), (4, 30), (3, 20)]);
        assert!((hits[0].similarity - 1.0).abs() < 1e-6);
    }

    #[test]
    fn wrong_dimension_is_reported_and_odd_vectors_are_skipped() {
        let index = VectorIndex::build(
            1,
            vec![stored(1, 1, vec![1.0, 0.0]), stored(2, 2, vec![1.0]), stored(3, 3, vec![0.0, 0.0])],
        );
        assert_eq!(index.len(), 1);
        assert_eq!(index.nearest_documents(&[1.0, 0.0, 0.0], 3), Err(DimensionMismatch { stored: 2, query: 3 }));
    }

    #[test]
    fn fusion_rewards_agreement() {
        let fused = reciprocal_rank_fusion(&[vec![1, 2, 3], vec![2, 4, 1]], RRF_K);
        let order: Vec<i64> = fused.iter().map(|(d, _)| *d).collect();
        assert_eq!(order, [2, 1, 4, 3]);
        assert!((fused[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
    }
}
