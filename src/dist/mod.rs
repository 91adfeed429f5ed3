//! Data-parallel training across processes: the [`Reducer`] the batch solvers sum through,
//! the deterministic assignment of a dataset's shards to ranks, and the averaging of online
//! learners' models ([`online`]).
//!
//! Every rank holds a share of the rows and the whole weight vector. A batch solver computes
//! its sums (objective, gradient, line-search slopes) over the local rows and adds the ranks'
//! partial sums with [`Reducer::sum`], after which every rank holds the same numbers and takes
//! the same step: no rank ever needs another's rows. [`Local`] is the single-process reducer
//! (a no-op); with the `mpi` cargo feature, `mpi::World` sums over `MPI_COMM_WORLD`.
//!
//! The solvers' control flow depends only on summed quantities, so every rank makes the same
//! sequence of [`Reducer::sum`] calls; that is what keeps the collectives matched.

#[cfg(feature = "mpi")]
pub mod mpi;
pub mod online;
#[cfg(test)]
pub(crate) mod threads;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::data::dataset::ShardEntry;

/// Element-wise sums across the ranks of a job.
///
/// `Sync` so that an objective holding one can be shared by rayon workers; [`Reducer::sum`]
/// itself is only ever called from the thread that runs the solver.
pub trait Reducer: Sync {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Replace `values` on every rank by the element-wise sum of every rank's `values`. Every
    /// rank calls it with the same length, and every rank receives the same bits.
    fn sum(&self, values: &mut [f64]);
    /// Replace `values` on every rank by the element-wise maximum over every rank's `values`
    /// (same contract as [`Reducer::sum`]).
    fn max(&self, values: &mut [f64]);
}

/// The single-process reducer: one rank, sums are the values themselves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl Reducer for Local {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn sum(&self, _values: &mut [f64]) {}

    fn max(&self, _values: &mut [f64]) {}
}

/// A reducer that counts and times the sums (and maxima) it passes on: the communication part of a run
/// (time in [`Reducer::sum`] includes waiting for the slowest rank to arrive).
pub struct Timed<'r> {
    inner: &'r dyn Reducer,
    nanos: AtomicU64,
    calls: AtomicU64,
    values: AtomicU64,
}

/// What a [`Timed`] reducer saw.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Traffic {
    /// Seconds spent inside sums and maxima.
    pub seconds: f64,
    /// Number of sums and maxima.
    pub calls: u64,
    /// f64 values reduced, over all calls.
    pub values: u64,
}

impl<'r> Timed<'r> {
    /// Time the sums of `inner`.
    pub fn new(inner: &'r dyn Reducer) -> Self {
        Timed {
            inner,
            nanos: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            values: AtomicU64::new(0),
        }
    }

    /// The totals so far.
    pub fn traffic(&self) -> Traffic {
        Traffic {
            seconds: self.nanos.load(Ordering::Relaxed) as f64 * 1e-9,
            calls: self.calls.load(Ordering::Relaxed),
            values: self.values.load(Ordering::Relaxed),
        }
    }
}

impl Reducer for Timed<'_> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    fn size(&self) -> usize {
        self.inner.size()
    }

    fn sum(&self, values: &mut [f64]) {
        self.timed(values, |v| self.inner.sum(v));
    }

    fn max(&self, values: &mut [f64]) {
        self.timed(values, |v| self.inner.max(v));
    }
}

impl Timed<'_> {
    /// Run one collective on `values`, counting its time and size.
    fn timed(&self, values: &mut [f64], collective: impl FnOnce(&mut [f64])) {
        let start = Instant::now();
        collective(values);
        let nanos = start.elapsed().as_nanos() as u64;
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.values
            .fetch_add(values.len() as u64, Ordering::Relaxed);
    }
}

/// Which shards rank `rank` of `ranks` opens: a contiguous run of shards, cut where the
/// cumulative non-zeros cross multiples of nnz/ranks (shard k goes to the rank whose share
/// holds the middle of its non-zeros). Depends only on the manifest, so every rank computes
/// the same partition without talking to the others; a rank may get no shard when there are
/// fewer shards than ranks.
pub fn shard_share(shards: &[ShardEntry], rank: usize, ranks: usize) -> Range<usize> {
    assert!(rank < ranks, "rank {rank} of {ranks}");
    // Shards without entries still carry rows: weigh each by nnz + rows.
    let weight = |s: &ShardEntry| (s.nnz + s.rows) as f64;
    let total: f64 = shards.iter().map(weight).sum();
    let mut before = 0.0;
    let owners: Vec<usize> = shards
        .iter()
        .map(|s| {
            let middle = before + 0.5 * weight(s);
            before += weight(s);
            if total > 0.0 {
                ((middle / total * ranks as f64) as usize).min(ranks - 1)
            } else {
                0
            }
        })
        .collect();
    let start = owners.partition_point(|&o| o < rank);
    let end = owners.partition_point(|&o| o <= rank);
    start..end
}

/// Σ_r m_r: every rank's `rows` added up (a rank without rows counts 0).
pub fn total_rows(reducer: &dyn Reducer, rows: usize) -> usize {
    let mut total = [rows as f64];
    reducer.sum(&mut total);
    total[0] as usize
}

/// The distinct values of every rank's `local` (value, count) pairs, each with its counts
/// added up, in increasing order (every rank gets the same): the classes of a multiclass
/// problem whose rows the ranks share. `local` holds distinct values; -0 is 0. Every rank
/// gathers the others' pairs, so this is refused (with the largest count of values a rank
/// holds, on every rank alike) when some rank holds more than `most` values.
pub fn value_counts(
    reducer: &dyn Reducer,
    local: &[(f64, u64)],
    most: usize,
) -> Result<Vec<(f64, u64)>, usize> {
    let mut widest = [local.len() as f64];
    reducer.max(&mut widest);
    let width = widest[0] as usize;
    if width > most {
        return Err(width);
    }
    // Rank r's pairs in slots r·width…; a slot no rank fills stays at count 0.
    let mut slots = vec![0.0; 2 * width * reducer.size()];
    let mine = &mut slots[2 * width * reducer.rank()..][..2 * local.len()];
    for (slot, &(value, count)) in mine.chunks_exact_mut(2).zip(local) {
        slot.copy_from_slice(&[value, count as f64]);
    }
    reducer.sum(&mut slots);
    let mut pairs: Vec<(f64, u64)> = (slots.chunks_exact(2))
        .filter(|slot| slot[1] > 0.0)
        .map(|slot| (slot[0] + 0.0, slot[1] as u64))
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    Ok(pairs
        .chunk_by(|a, b| a.0 == b.0)
        .map(|run| (run[0].0, run.iter().map(|&(_, count)| count).sum()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(nnz: &[u64]) -> Vec<ShardEntry> {
        nnz.iter()
            .enumerate()
            .map(|(k, &nnz)| ShardEntry {
                file: format!("s{k}"),
                first_row: 10 * k as u64,
                rows: 10,
                nnz,
                bytes: 0,
                header_crc32: None,
            })
            .collect()
    }

    #[test]
    fn shares_partition_the_shards_in_order_and_balance_nonzeros() {
        let shards = entries(&[100, 100, 100, 100, 400, 100, 100, 100]);
        for ranks in 1..=10 {
            let shares: Vec<_> = (0..ranks).map(|r| shard_share(&shards, r, ranks)).collect();
            assert_eq!(shares[0].start, 0);
            assert_eq!(shares[ranks - 1].end, shards.len());
            for pair in shares.windows(2) {
                assert_eq!(pair[0].end, pair[1].start, "{ranks} ranks: {shares:?}");
            }
        }
        let halves: Vec<_> = (0..2).map(|r| shard_share(&shards, r, 2)).collect();
        assert_eq!(halves, [0..4, 4..8]);
        assert_eq!(shard_share(&shards[..1], 0, 3), 0..0);
        assert_eq!(shard_share(&shards[..1], 1, 3), 0..1);
    }

    #[test]
    fn timed_counts_the_sums_it_passes_on() {
        let timed = Timed::new(&Local);
        let mut v = [1.0, 2.0];
        timed.sum(&mut v);
        timed.max(&mut v[..1]);
        assert_eq!(v, [1.0, 2.0]);
        let traffic = timed.traffic();
        assert_eq!((traffic.calls, traffic.values), (2, 3));
    }

    #[test]
    fn thread_ranks_sum_and_take_maxima_alike() {
        let results = threads::run(3, |r| {
            let x = r.rank() as f64;
            let (mut sum, mut max) = ([x, -x], [x, -x]);
            r.sum(&mut sum);
            r.max(&mut max);
            (sum, max)
        });
        for result in results {
            assert_eq!(result, ([3.0, -3.0], [2.0, 0.0]));
        }
    }

    #[test]
    fn value_counts_merge_every_rank_s_values_in_order() {
        let local = |rank: usize| match rank {
            0 => vec![(3.0, 2), (7.0, 1)],
            1 => vec![],
            2 => vec![(-1.0, 4), (-0.0, 1), (3.0, 5)],
            _ => vec![(0.0, 2), (7.0, 1), (9.0, 1)],
        };
        let merged = threads::run(4, |r| value_counts(r, &local(r.rank()), 3));
        let expected = vec![(-1.0, 4), (0.0, 3), (3.0, 7), (7.0, 2), (9.0, 1)];
        for result in merged {
            let result = result.unwrap();
            assert_eq!(result, expected);
            // No -0: it is the class 0.
            assert!(
                result
                    .iter()
                    .all(|(v, _)| *v != 0.0 || v.is_sign_positive())
            );
        }
        // Too many values on one rank: refused on every rank, naming the widest.
        let refused = threads::run(4, |r| value_counts(r, &local(r.rank()), 2));
        assert!(refused.iter().all(|result| *result == Err(3)));
        assert_eq!(value_counts(&Local, &local(0), 2), Ok(local(0)));
    }
}
