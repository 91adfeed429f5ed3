//! Sparse kernels over one row `(idx, val)` against dense `f64` weights.
//!
//! Each function checks that the value slice (if any) has the same length as the index slice
//! and panics otherwise; an index `>= w.len()` panics (checked once per row from the row's
//! largest index, before any vector load). Indices of a row are expected to be distinct, as
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
use crate::{Values, atomic};

/// Σ_k w[idx[k]]·val[k].
#[inline]
pub fn dot(w: &[f64], idx: &[u32], val: Values<'_>) -> f64 {
    selected().dot(w, idx, val)
}

/// w[idx[k]] += a·val[k] for every k.
#[inline]
pub fn axpy(a: f64, idx: &[u32], val: Values<'_>, w: &mut [f64]) {
    selected().axpy(a, idx, val, w)
}

/// Dot against the first member of interleaved pairs: Σ_k vu[idx[k]][0]·val[k].
///
/// The averaged learners keep `[v_i, u_i]` together so that one cache line serves both.
#[inline]
pub fn dot_first(vu: &[[f64; 2]], idx: &[u32], val: Values<'_>) -> f64 {
    selected().dot_first(vu, idx, val)
}

/// Fused update of interleaved pairs: vu[i][0] += a·x_i and vu[i][1] += b·x_i.
#[inline]
pub fn axpy2(a: f64, b: f64, idx: &[u32], val: Values<'_>, vu: &mut [[f64; 2]]) {
    selected().axpy2(a, b, idx, val, vu)
}

/// [`dot`] over shared weights (`f64` bits in `AtomicU64`, relaxed loads).
#[inline]
pub fn dot_atomic(w: &[AtomicU64], idx: &[u32], val: Values<'_>) -> f64 {
    atomic::dot(w, idx, val)
}

/// [`axpy`] over shared weights: relaxed load, add, relaxed store for each entry.
#[inline]
pub fn axpy_atomic(a: f64, idx: &[u32], val: Values<'_>, w: &[AtomicU64]) {
    atomic::axpy(a, idx, val, w)
}

/// [`dot_first`] over shared interleaved pairs.
#[inline]
pub fn dot_first_atomic(vu: &[[AtomicU64; 2]], idx: &[u32], val: Values<'_>) -> f64 {
    atomic::dot_first(vu, idx, val)
}

/// [`axpy2`] over shared interleaved pairs.
#[inline]
pub fn axpy2_atomic(a: f64, b: f64, idx: &[u32], val: Values<'_>, vu: &[[AtomicU64; 2]]) {
    atomic::axpy2(a, b, idx, val, vu)
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
