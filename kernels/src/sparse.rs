//! Sparse kernels over one row `(idx, val)` against dense `f64` weights.
//!
//! Each function checks that the value slice (if any) has the same length as the index slice
//! and panics otherwise; an index `>= w.len()` panics.

use crate::{Values, scalar};

/// Σ_k w[idx[k]]·val[k].
#[inline]
pub fn dot(w: &[f64], idx: &[u32], val: Values<'_>) -> f64 {
    scalar::dot(w, idx, val)
}

/// w[idx[k]] += a·val[k] for every k.
#[inline]
pub fn axpy(a: f64, idx: &[u32], val: Values<'_>, w: &mut [f64]) {
    scalar::axpy(a, idx, val, w)
}

/// Dot against the first member of interleaved pairs: Σ_k vu[idx[k]][0]·val[k].
///
/// The averaged learners keep `[v_i, u_i]` together so that one cache line serves both.
#[inline]
pub fn dot_first(vu: &[[f64; 2]], idx: &[u32], val: Values<'_>) -> f64 {
    scalar::dot_first(vu, idx, val)
}

/// Fused update of interleaved pairs: vu[i][0] += a·x_i and vu[i][1] += b·x_i.
#[inline]
pub fn axpy2(a: f64, b: f64, idx: &[u32], val: Values<'_>, vu: &mut [[f64; 2]]) {
    scalar::axpy2(a, b, idx, val, vu)
}
