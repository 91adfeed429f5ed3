//! Sparse kernels over one row `(idx, val)` against dense `f64` weights.
//!
//! Each function checks that the value slice (if any) has the same length as the index slice
//! and panics otherwise; an index `>= w.len()` panics, before any load or store. Indices are
//! anything that converts into [`BoundedIndices`]: a plain slice is scanned for its largest
//! index on every call (O(k), SIMD), while a [`BoundedIndices`] — a row cut from an index
//! array proven once, see [`crate::bounded`] — is checked in O(1) from its bound. Indices of a row are expected to be distinct, as
//! in a validated CSR row: with repeated indices the update kernels stay memory-safe, but a
//! vectorized `axpy` may keep only one of the repeated updates.
//!
//! The plain kernels run on the path chosen by [`crate::dispatch`]. The `_atomic` kernels are
//! for Hogwild-style sharing between threads (see [Atomics](#atomics)).
//!
//! # Atomics
//!
//! Shared weights are `AtomicU64` holding `f64` bits, read and written with relaxed loads and
//! stores (not read-modify-write: a lost update between racing threads is accepted, as in
//! Hogwild, but there is no data race). A relaxed load or store is one ordinary move on
//! x86_64 and aarch64; a SIMD gather, however, is not an atomic access, so these kernels are
//! portable loops (four independent partial sums for the dots) on every path.

use std::sync::atomic::AtomicU64;

use crate::dispatch::selected;
use crate::{BoundedIndices, Values, atomic};

/// `Σ_k w[idx[k]]·val[k]`.
#[inline]
pub fn dot<'a>(w: &[f64], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
    selected().dot(w, idx, val)
}

/// `w[idx[k]] += a·val[k]` for every k.
#[inline]
pub fn axpy<'a>(a: f64, idx: impl Into<BoundedIndices<'a>>, val: Values<'_>, w: &mut [f64]) {
    selected().axpy(a, idx, val, w)
}

/// Dot against the first member of interleaved pairs: `Σ_k vu[idx[k]][0]·val[k]`.
///
/// The averaged learners keep `[v_i, u_i]` together so that one cache line serves both.
#[inline]
pub fn dot_first<'a>(vu: &[[f64; 2]], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
    selected().dot_first(vu, idx, val)
}

/// Fused update of interleaved pairs: `vu[i][0] += a·x_i` and `vu[i][1] += b·x_i`.
#[inline]
pub fn axpy2<'a>(
    a: f64,
    b: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    vu: &mut [[f64; 2]],
) {
    selected().axpy2(a, b, idx, val, vu)
}

/// [`dot`] over shared weights (`f64` bits in `AtomicU64`, relaxed loads).
#[inline]
pub fn dot_atomic<'a>(w: &[AtomicU64], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
    atomic::dot(w, idx.into(), val)
}

/// [`axpy`] over shared weights: relaxed load, add, relaxed store for each entry.
#[inline]
pub fn axpy_atomic<'a>(
    a: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    w: &[AtomicU64],
) {
    atomic::axpy(a, idx.into(), val, w)
}

/// [`dot_first`] over shared interleaved pairs.
#[inline]
pub fn dot_first_atomic<'a>(
    vu: &[[AtomicU64; 2]],
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
) -> f64 {
    atomic::dot_first(vu, idx.into(), val)
}

/// [`axpy2`] over shared interleaved pairs.
#[inline]
pub fn axpy2_atomic<'a>(
    a: f64,
    b: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    vu: &[[AtomicU64; 2]],
) {
    atomic::axpy2(a, b, idx.into(), val, vu)
}

/// Hints the CPU to bring the entries `w[idx[k]]` into cache, for a row that will be used
/// soon (e.g. the next example while this one is being processed). Works for any entry type
/// (`f64`, `[f64; 2]`, `AtomicU64`, ...). Never changes a result; indices past the end are
/// skipped. A no-op on architectures without a prefetch instruction wired up here.
#[inline]
pub fn prefetch<T>(w: &[T], idx: &[u32]) {
    for &i in idx {
        if let Some(entry) = w.get(i as usize) {
            crate::prefetch::entry(entry);
        }
    }
}
