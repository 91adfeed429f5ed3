//! Relaxed-atomic sparse kernels for lock-free (Hogwild) training.
//!
//! Weights are `AtomicU64` holding `f64` bits. Every access is a relaxed load or store, so
//! threads racing on one weight may lose an update but never tear a value, and the program has
//! no data race. Safe code: indexing is bounds-checked per entry (the check is a compare and a
//! predicted branch next to a possibly cache-missing load).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::Values;

#[inline]
fn check_len(idx: &[u32], val: Values<'_>) {
    if let Some(n) = val.len() {
        assert_eq!(n, idx.len(), "index and value slices differ in length");
    }
}

#[inline(always)]
fn load(a: &AtomicU64) -> f64 {
    f64::from_bits(a.load(Relaxed))
}

/// Σ_k f(idx[k])·val[k] with four independent partial sums (the loads of one row overlap
/// instead of waiting on one another's additions).
#[inline(always)]
fn sum4(idx: &[u32], val: Values<'_>, f: impl Fn(usize) -> f64) -> f64 {
    check_len(idx, val);
    let mut acc = [0.0f64; 4];
    let (chunks, tail) = idx.as_chunks::<4>();
    for (c, chunk) in chunks.iter().enumerate() {
        for (j, (&i, a)) in chunk.iter().zip(&mut acc).enumerate() {
            *a += f(i as usize) * val.get(4 * c + j);
        }
    }
    let base = 4 * chunks.len();
    for (j, &i) in tail.iter().enumerate() {
        acc[j] += f(i as usize) * val.get(base + j);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// See [`crate::sparse::dot_atomic`].
pub(crate) fn dot(w: &[AtomicU64], idx: &[u32], val: Values<'_>) -> f64 {
    sum4(idx, val, |i| load(&w[i]))
}

/// See [`crate::sparse::dot_first_atomic`].
pub(crate) fn dot_first(vu: &[[AtomicU64; 2]], idx: &[u32], val: Values<'_>) -> f64 {
    sum4(idx, val, |i| load(&vu[i][0]))
}

/// See [`crate::sparse::axpy_atomic`].
pub(crate) fn axpy(a: f64, idx: &[u32], val: Values<'_>, w: &[AtomicU64]) {
    check_len(idx, val);
    for (k, &i) in idx.iter().enumerate() {
        let cell = &w[i as usize];
        cell.store((load(cell) + a * val.get(k)).to_bits(), Relaxed);
    }
}

/// See [`crate::sparse::axpy2_atomic`].
pub(crate) fn axpy2(a: f64, b: f64, idx: &[u32], val: Values<'_>, vu: &[[AtomicU64; 2]]) {
    check_len(idx, val);
    for (k, &i) in idx.iter().enumerate() {
        let x = val.get(k);
        let [v, u] = &vu[i as usize];
        v.store((load(v) + a * x).to_bits(), Relaxed);
        u.store((load(u) + b * x).to_bits(), Relaxed);
    }
}
