//! The gradient sums v (SGD) or the interleaved pairs [v_i, u_i] (ASGD, CASGD) as the workers
//! see them.
//!
//! Several workers share storage of `f64` bits in `AtomicU64`, read and written with relaxed
//! loads and stores by the kernels crate's `_atomic` kernels (a racing update may be lost, as
//! Hogwild accepts; there is no data race: each access is one plain move on x86_64 and aarch64). A run on one thread owns plain `f64`
//! storage instead and uses the ordinary dispatched kernels, so that it computes exactly what the
//! single-threaded learners compute (the atomic dot sums in a different order than a SIMD dot).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use sparselin_kernels::sparse;

use crate::data::Row;

/// One worker's access to the gradient sums.
pub(super) trait Sums {
    /// v·x.
    fn dot(&mut self, x: &Row<'_>) -> f64;
    /// v += g·x and, for pairs, u += gh·x (`gh` is ignored by a lone v).
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>);
}

impl Sums for &mut [f64] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, _gh: f64, x: &Row<'_>) {
        sparse::axpy(g, x.indices, x.values, self)
    }
}

impl Sums for &mut [[f64; 2]] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot_first(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>) {
        sparse::axpy2(g, gh, x.indices, x.values, self)
    }
}

impl Sums for &[AtomicU64] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot_atomic(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, _gh: f64, x: &Row<'_>) {
        sparse::axpy_atomic(g, x.indices, x.values, self)
    }
}

impl Sums for &[[AtomicU64; 2]] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot_first_atomic(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>) {
        sparse::axpy2_atomic(g, gh, x.indices, x.values, self)
    }
}

/// Storage of the sums for a run: owned by one worker, or shared by several.
pub(super) enum Storage {
    /// v, one thread.
    Single(Vec<f64>),
    /// [v, u], one thread.
    Pairs(Vec<[f64; 2]>),
    /// v, shared.
    SharedSingle(Vec<AtomicU64>),
    /// [v, u], shared.
    SharedPairs(Vec<[AtomicU64; 2]>),
}

/// The sums read back, once the workers have joined.
pub(super) enum Final {
    /// v.
    Single(Vec<f64>),
    /// [v, u].
    Pairs(Vec<[f64; 2]>),
}

impl Storage {
    /// The pairs [v_i, u_i] as plain numbers, in feature order (while no worker runs); `None`
    /// for a lone v.
    pub fn pairs(&self) -> Option<Box<dyn Iterator<Item = [f64; 2]> + '_>> {
        let read = |a: &AtomicU64| f64::from_bits(a.load(Relaxed));
        match self {
            Storage::Single(_) | Storage::SharedSingle(_) => None,
            Storage::Pairs(vu) => Some(Box::new(vu.iter().copied())),
            Storage::SharedPairs(vu) => {
                Some(Box::new(vu.iter().map(move |[v, u]| [read(v), read(u)])))
            }
        }
    }

    /// Zeroed sums over `n` features: pairs if `averaged`, shared if `threads > 1`.
    pub fn new(n: usize, averaged: bool, threads: usize) -> Storage {
        let zero = || AtomicU64::new(0f64.to_bits());
        match (averaged, threads > 1) {
            (false, false) => Storage::Single(vec![0.0; n]),
            (true, false) => Storage::Pairs(vec![[0.0; 2]; n]),
            (false, true) => Storage::SharedSingle((0..n).map(|_| zero()).collect()),
            (true, true) => Storage::SharedPairs((0..n).map(|_| [zero(), zero()]).collect()),
        }
    }

    /// A copy of the sums as plain numbers (O(n), while no worker runs).
    pub fn read(&self) -> Final {
        let read = |a: &AtomicU64| f64::from_bits(a.load(Relaxed));
        match self {
            Storage::Single(v) => Final::Single(v.clone()),
            Storage::Pairs(vu) => Final::Pairs(vu.clone()),
            Storage::SharedSingle(v) => Final::Single(v.iter().map(read).collect()),
            Storage::SharedPairs(vu) => {
                Final::Pairs(vu.iter().map(|[v, u]| [read(v), read(u)]).collect())
            }
        }
    }
}
