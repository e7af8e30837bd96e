//! A subject's vectors held in memory for exact search, as halves in
//! shared segments.

use std::collections::HashMap;
use std::sync::Arc;

/// A subject's vectors from one embedder, held in memory for exact search,
/// as IEEE halves ([`tm_embed::to_halves`]): a turn reads every one of them, so
/// halves read half the bytes (at 100k episodes the scan of single floats was
/// a third of a block), and a subject of 10,000 holds 7.7 MB instead of 15.4.
/// Stored in segments shared between versions of the set: the vectors of new
/// episodes become a new segment, so a write costs its own vectors, not a
/// copy of the subject's (many small segments are merged now and then).
pub(super) struct VectorSet {
    pub(super) segments: Vec<Arc<Segment>>,
    /// Where each id's vector is: (segment, position).
    pub(super) index: HashMap<i64, (u32, u32)>,
    pub(super) dim: usize,
    /// The store's vector stamp when loaded: a change means vectors were
    /// stored since.
    pub(super) stamp: (u64, i64),
    /// The sum of every vector pushed, and how many: the subject's mean
    /// ([`VectorSet::centre`]).
    pub(super) sum: Arc<Vec<f64>>,
    pub(super) summed: usize,
}

#[derive(Default)]
pub(super) struct Segment {
    pub(super) ids: Vec<i64>,
    /// The vectors' halves, `dim` per id.
    pub(super) data: Vec<u16>,
}

/// More segments than this are merged into one.
const MAX_SEGMENTS: usize = 32;

impl VectorSet {
    pub(super) fn empty(dim: usize, stamp: (u64, i64)) -> VectorSet {
        VectorSet {
            segments: Vec::new(),
            index: HashMap::default(),
            dim,
            stamp,
            sum: Arc::new(vec![0.0; dim]),
            summed: 0,
        }
    }

    /// A new set: this one's segments and a new one of `rows`, less any id
    /// the set holds already (a vector stored while the set was first read
    /// can come again as "after" its newest: it would take two places in the
    /// scan and count twice in the mean).
    pub(super) fn grown(&self, mut rows: Vec<(i64, Vec<f32>)>, stamp: (u64, i64)) -> VectorSet {
        rows.retain(|(id, _)| !self.index.contains_key(id));
        let mut set = VectorSet {
            segments: self.segments.clone(),
            index: self.index.clone(),
            dim: self.dim,
            stamp,
            sum: self.sum.clone(),
            summed: self.summed,
        };
        set.push(rows);
        if set.segments.len() > MAX_SEGMENTS {
            set.merge();
        }
        set
    }

    /// A new segment of new vectors, which join the sum.
    pub(super) fn push(&mut self, rows: Vec<(i64, Vec<f32>)>) {
        let dim = self.dim;
        let rows: Vec<(i64, Vec<u16>)> = rows
            .into_iter()
            // A vector of another shape cannot be compared.
            .filter(|(_, v)| v.len() == dim)
            .map(|(id, v)| (id, tm_embed::to_halves(&v)))
            .collect();
        let sum = Arc::make_mut(&mut self.sum);
        for (_, v) in &rows {
            for (s, &h) in sum.iter_mut().zip(v) {
                *s += f64::from(half::f16::from_bits(h).to_f32());
            }
        }
        self.summed += rows.len();
        self.push_halves(rows.len(), rows.into_iter());
    }

    /// A new segment of `rows` (each `dim` halves), about `n` of them.
    pub(super) fn push_halves(&mut self, n: usize, rows: impl Iterator<Item = (i64, Vec<u16>)>) {
        let at = self.segments.len() as u32;
        let mut seg = Segment::default();
        seg.ids.reserve(n);
        seg.data.reserve(n * self.dim);
        for (id, v) in rows {
            self.index.insert(id, (at, seg.ids.len() as u32));
            seg.ids.push(id);
            seg.data.extend_from_slice(&v);
        }
        if !seg.ids.is_empty() {
            self.segments.push(Arc::new(seg));
        }
    }

    pub(super) fn merge(&mut self) {
        let rows: Vec<(i64, Vec<u16>)> = self.iter().map(|(id, v)| (id, v.to_vec())).collect();
        self.segments.clear();
        self.index.clear();
        // The same vectors: their sum stands.
        self.push_halves(rows.len(), rows.into_iter());
    }

    /// `share` of the subject's mean vector, which the question's and each
    /// episode's vector leave out before their centred cosine
    /// ([`centred_cosine`]); `None` for an empty set, no share, or fewer
    /// than `from` vectors.
    pub(super) fn centre(&self, share: f32, from: usize) -> Option<Vec<f32>> {
        (self.summed > 0 && self.summed >= from && share > 0.0).then(|| {
            let share = f64::from(share) / self.summed as f64;
            self.sum.iter().map(|s| (s * share) as f32).collect()
        })
    }

    /// Every (id, vector as halves).
    pub(super) fn iter(&self) -> impl Iterator<Item = (i64, &[u16])> {
        self.segments
            .iter()
            .flat_map(|s| s.ids.iter().copied().zip(s.data.chunks_exact(self.dim)))
    }

    /// The vector of `id` as halves, if the set has one.
    #[cfg(test)]
    pub(super) fn get(&self, id: i64) -> Option<&[u16]> {
        self.at(*self.index.get(&id)?)
    }

    /// The vector at a place of [`VectorSet::index`], as halves.
    pub(super) fn at(&self, (s, p): (u32, u32)) -> Option<&[u16]> {
        let (s, p) = (s as usize, p as usize);
        self.segments
            .get(s)?
            .data
            .get(p * self.dim..(p + 1) * self.dim)
    }
}

#[cfg(test)]
mod tests {
    use super::VectorSet;

    /// Grown a vector at a time past the merge point, the set holds exactly
    /// what one load of every vector holds, in the same order.
    #[test]
    pub(super) fn a_set_grown_by_segments_equals_one_loaded_whole() {
        let row = |id: i64| (id, vec![id as f32, -(id as f32), 0.5]);
        let mut whole = VectorSet::empty(3, (100, 100));
        whole.push((1..=100).map(row).collect());
        let mut grown = VectorSet::empty(3, (10, 10));
        grown.push((1..=10).map(row).collect());
        for id in 11..=100 {
            grown = grown.grown(vec![row(id), (id + 1000, vec![1.0])], (id as u64, id));
            assert!(grown.segments.len() <= super::MAX_SEGMENTS);
        }
        let all = |s: &VectorSet| s.iter().map(|(id, v)| (id, v.to_vec())).collect::<Vec<_>>();
        assert_eq!(all(&grown), all(&whole));
        for id in 1..=100 {
            let halves = tm_embed::to_halves(&row(id).1);
            assert_eq!(grown.get(id), Some(halves.as_slice()));
        }
        assert_eq!(
            grown.get(1011),
            None,
            "a vector of another shape is left out"
        );
        // The centre is the share of the mean of the halves held, however
        // the set was built (merges included), and none for an empty set.
        let mean: Vec<f32> = (0..3)
            .map(|i| {
                let sum: f64 = (1..=100)
                    .map(|id| f64::from(half::f16::from_f32(row(id).1[i]).to_f32()))
                    .sum();
                (sum / 100.0 * f64::from(tm_model::recall::CENTRED_SHARE)) as f32
            })
            .collect();
        let share = tm_model::recall::CENTRED_SHARE;
        assert_eq!(grown.centre(share, 0), Some(mean.clone()));
        assert_eq!(whole.centre(share, 0), Some(mean));
        assert_eq!(whole.centre(0.0, 0), None, "no share, no centre");
        assert_eq!(
            whole.centre(share, whole.summed),
            Some(whole.centre(share, 0).unwrap())
        );
        assert_eq!(
            whole.centre(share, whole.summed + 1),
            None,
            "too few to centre"
        );
        // An id the set holds already is not taken twice.
        let again = grown.grown(vec![row(5)], (999, 999));
        assert_eq!(all(&again), all(&grown));
        assert_eq!(again.centre(share, 0), grown.centre(share, 0));
        assert_eq!(VectorSet::empty(3, (0, 0)).centre(share, 0), None);
    }
}
