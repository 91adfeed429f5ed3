//! Relaxed-atomic sparse kernels for lock-free (Hogwild) training.
//!
//! Weights are `AtomicU64` holding `f64` bits. Every access is a relaxed load or store, so
//! threads racing on one weight may lose an update but never tear a value, and the program has
//! no data race. Each kernel is compiled once per value kind (the `Values` match is made once
//! per row, not per entry) and checks a row in O(1) from the bound its [`BoundedIndices`]
//! carry, before an unchecked loop: the same contract as the plain kernels of
//! [`crate::kernel_set`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::kernel_set::check_row;
use crate::{BoundedIndices, Values};

/// The values of one row, matched once per row so that the loops are monomorphic.
trait RowValue: Copy {
    /// Value k of the row. Contract: k is below the row's length.
    unsafe fn at(self, k: usize) -> f64;
}

/// A binary row: every value is 1.
#[derive(Clone, Copy)]
struct Ones;

impl RowValue for Ones {
    #[inline(always)]
    unsafe fn at(self, _k: usize) -> f64 {
        1.0
    }
}

impl RowValue for &[f32] {
    #[inline(always)]
    unsafe fn at(self, k: usize) -> f64 {
        // SAFETY: k is below the row's length (contract), which equals this slice's length
        // (`kernel_set::check_row`).
        f64::from(unsafe { *self.get_unchecked(k) })
    }
}

impl RowValue for &[f64] {
    #[inline(always)]
    unsafe fn at(self, k: usize) -> f64 {
        // SAFETY: as for `&[f32]`.
        unsafe { *self.get_unchecked(k) }
    }
}

/// Runs `$body` with `$v` bound to the row's values as a monomorphic [`RowValue`].
macro_rules! per_kind {
    ($val:expr, |$v:ident| $body:expr) => {
        match $val {
            Values::Ones => {
                let $v = Ones;
                $body
            }
            Values::F32(values) => {
                let $v = values;
                $body
            }
            Values::F64(values) => {
                let $v = values;
                $body
            }
        }
    };
}

#[inline(always)]
fn load(a: &AtomicU64) -> f64 {
    f64::from_bits(a.load(Relaxed))
}

/// Σ_k w[idx[k]][FIELD]·val[k] with four independent partial sums (the loads of one row
/// overlap instead of waiting on one another's additions).
///
/// Contract: `val` has `idx.len()` values and every index is below `w.len()`.
#[inline(always)]
unsafe fn sum4<const W: usize, const FIELD: usize, V: RowValue>(
    w: &[[AtomicU64; W]],
    idx: &[u32],
    val: V,
) -> f64 {
    let entry = |k: usize| {
        // SAFETY: k < idx.len() = the row's length, and idx[k] < w.len() (contract).
        unsafe { load(&w.get_unchecked(*idx.get_unchecked(k) as usize)[FIELD]) * val.at(k) }
    };
    let mut acc = [0.0f64; 4];
    let quads = idx.len() / 4;
    for c in 0..quads {
        for (j, a) in acc.iter_mut().enumerate() {
            *a += entry(4 * c + j);
        }
    }
    for (j, k) in (4 * quads..idx.len()).enumerate() {
        acc[j] += entry(k);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// w[idx[k]][f] += coef[f]·val[k] for each member f, each a relaxed load then store.
///
/// Contract: as for [`sum4`].
#[inline(always)]
unsafe fn update<const W: usize, V: RowValue>(
    coef: [f64; W],
    w: &[[AtomicU64; W]],
    idx: &[u32],
    val: V,
) {
    for (k, &i) in idx.iter().enumerate() {
        // SAFETY: k < idx.len(), i < w.len() (contract).
        let (x, cells) = unsafe { (val.at(k), w.get_unchecked(i as usize)) };
        for (cell, c) in cells.iter().zip(coef) {
            cell.store((load(cell) + c * x).to_bits(), Relaxed);
        }
    }
}

/// Views a lone weight vector as one-member entries.
fn single(w: &[AtomicU64]) -> &[[AtomicU64; 1]] {
    // `[T; 1]` has the layout of `T`; the conversion is the standard library's safe one.
    w.as_chunks::<1>().0
}

/// See [`crate::sparse::dot_atomic`].
pub(crate) fn dot(w: &[AtomicU64], idx: BoundedIndices<'_>, val: Values<'_>) -> f64 {
    let idx = check_row(idx, val, w.len());
    // SAFETY: `check_row` established the contract.
    per_kind!(val, |v| unsafe { sum4::<1, 0, _>(single(w), idx, v) })
}

/// See [`crate::sparse::dot_first_atomic`].
pub(crate) fn dot_first(vu: &[[AtomicU64; 2]], idx: BoundedIndices<'_>, val: Values<'_>) -> f64 {
    let idx = check_row(idx, val, vu.len());
    // SAFETY: `check_row` established the contract.
    per_kind!(val, |v| unsafe { sum4::<2, 0, _>(vu, idx, v) })
}

/// See [`crate::sparse::axpy_atomic`].
pub(crate) fn axpy(a: f64, idx: BoundedIndices<'_>, val: Values<'_>, w: &[AtomicU64]) {
    let idx = check_row(idx, val, w.len());
    // SAFETY: `check_row` established the contract.
    per_kind!(val, |v| unsafe { update([a], single(w), idx, v) })
}

/// See [`crate::sparse::axpy2_atomic`].
pub(crate) fn axpy2(
    a: f64,
    b: f64,
    idx: BoundedIndices<'_>,
    val: Values<'_>,
    vu: &[[AtomicU64; 2]],
) {
    let idx = check_row(idx, val, vu.len());
    // SAFETY: `check_row` established the contract.
    per_kind!(val, |v| unsafe { update([a, b], vu, idx, v) })
}
