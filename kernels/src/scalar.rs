//! Portable reference kernels: plain loops, one accumulator, no `unsafe`.
//!
//! These define the results every vectorized path must reproduce (up to summation order).

use crate::Values;
use crate::adagrad::{Weights, add_gradient};
// The index maximum is the generic body as it stands, compiled without target features.
use crate::generic::max_index;
use crate::kernel_set::KernelSet;
use crate::row_block::StreamAhead;
use crate::row_macros::kernel_set;

/// The scalar path: these plain loops (safe code, coerced to the raw table's `unsafe fn` type).
pub(crate) static SET: KernelSet = kernel_set!(Scalar);

#[inline]
fn check_len(idx: &[u32], val: Values<'_>) {
    if let Some(n) = val.len() {
        assert_eq!(n, idx.len(), "index and value slices differ in length");
    }
}

/// See [`crate::sparse::dot`].
pub fn dot(w: &[f64], idx: &[u32], val: Values<'_>) -> f64 {
    check_len(idx, val);
    match val {
        Values::Ones => idx.iter().map(|&i| w[i as usize]).sum(),
        Values::F32(v) => idx
            .iter()
            .zip(v)
            .map(|(&i, &x)| w[i as usize] * f64::from(x))
            .sum(),
        Values::F64(v) => idx.iter().zip(v).map(|(&i, &x)| w[i as usize] * x).sum(),
    }
}

/// See [`crate::sparse::axpy`].
pub fn axpy(a: f64, idx: &[u32], val: Values<'_>, w: &mut [f64]) {
    check_len(idx, val);
    for (k, &i) in idx.iter().enumerate() {
        w[i as usize] += a * val.get(k);
    }
}

/// See [`crate::sparse::dot_first`].
pub fn dot_first(vu: &[[f64; 2]], idx: &[u32], val: Values<'_>) -> f64 {
    check_len(idx, val);
    idx.iter()
        .enumerate()
        .map(|(k, &i)| vu[i as usize][0] * val.get(k))
        .sum()
}

/// See [`crate::sparse::axpy2`].
pub fn axpy2(a: f64, b: f64, idx: &[u32], val: Values<'_>, vu: &mut [[f64; 2]]) {
    check_len(idx, val);
    for (k, &i) in idx.iter().enumerate() {
        let x = val.get(k);
        let pair = &mut vu[i as usize];
        pair[0] += a * x;
        pair[1] += b * x;
    }
}

/// See [`crate::adagrad::dot`]: the terms in row order, each product rounded and then added.
pub fn adagrad_dot(
    weights: Weights,
    sums: &[[f64; 2]],
    centre: Option<&[f64]>,
    idx: &[u32],
    val: Values<'_>,
) -> f64 {
    check_len(idx, val);
    let centre_of = |i: usize| centre.map_or(0.0, |c| c[i]);
    let mut p = 0.0;
    for (k, &i) in idx.iter().enumerate() {
        let i = i as usize;
        p += val.get(k) * weights.weight(sums[i], centre_of(i));
    }
    p
}

/// See [`crate::adagrad::accumulate`].
pub fn adagrad_accumulate(g: f64, idx: &[u32], val: Values<'_>, sums: &mut [[f64; 2]]) {
    check_len(idx, val);
    for (k, &i) in idx.iter().enumerate() {
        add_gradient(&mut sums[i as usize], g * val.get(k));
    }
}

/// See [`crate::dense::scale`].
pub fn scale(a: f64, x: &mut [f64]) {
    x.iter_mut().for_each(|xi| *xi *= a);
}

/// See [`crate::dense::axpby`].
pub fn axpby(a: f64, x: &[f64], b: f64, y: &mut [f64]) {
    assert_eq!(x.len(), y.len(), "axpby: lengths differ");
    y.iter_mut()
        .zip(x)
        .for_each(|(yi, &xi)| *yi = a * xi + b * *yi);
}

/// See [`crate::dense::dot`].
pub fn dense_dot(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "dot: lengths differ");
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// See [`crate::dense::axpy_dot`]: bit for bit this path's `axpby(a, x, 1, y)` and then
/// `dense_dot(z, y)`.
pub fn axpy_dot(a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "axpy_dot: lengths differ");
    assert_eq!(z.len(), y.len(), "axpy_dot: lengths differ");
    y.iter_mut()
        .zip(x)
        .zip(z)
        .map(|((yi, &xi), &zi)| {
            *yi += a * xi;
            zi * *yi
        })
        .sum()
}

/// See [`crate::dense::norm2`].
pub fn norm2(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum()
}

/// See [`crate::dense::sum`].
pub fn sum(x: &[f64]) -> f64 {
    x.iter().sum()
}

/// See [`crate::dense::map`].
pub fn map(f: crate::math::Elementwise, x: &mut [f64]) {
    f.apply(x);
}

/// See [`crate::dense::softplus_and_logistic`].
pub fn softplus_and_logistic(t: &mut [f64], sigma: &mut [f64]) {
    assert_eq!(
        t.len(),
        sigma.len(),
        "softplus_and_logistic: lengths differ"
    );
    for (t, sigma) in t.iter_mut().zip(sigma) {
        (*t, *sigma) = crate::math::softplus_and_logistic(*t);
    }
}

/// See [`crate::dense::rescale_average`].
pub fn rescale_average(
    alpha: f64,
    h: f64,
    vu: &[[f64; 2]],
    beta: f64,
    xbar: Option<&[f64]>,
    out: &mut [f64],
) {
    assert_eq!(vu.len(), out.len(), "rescale_average: lengths differ");
    match xbar {
        None => out
            .iter_mut()
            .zip(vu)
            .for_each(|(o, p)| *o = alpha * (h * p[0] - p[1])),
        Some(xbar) => {
            assert_eq!(xbar.len(), out.len(), "rescale_average: lengths differ");
            out.iter_mut()
                .zip(vu)
                .zip(xbar)
                .for_each(|((o, p), &m)| *o = alpha * (h * p[0] - p[1]) + beta * m)
        }
    }
}

/// See [`crate::sparse::block_dot`].
pub fn block_dot(w: &[f64], width: usize, idx: &[u32], val: Values<'_>, acc: &mut [f64]) {
    check_len(idx, val);
    let lanes = acc.len();
    for (k, &i) in idx.iter().enumerate() {
        let x = val.get(k);
        let start = i as usize * width;
        for (a, &b) in acc.iter_mut().zip(&w[start..start + lanes]) {
            *a += b * x;
        }
    }
}

/// See [`crate::sparse::block_axpy`].
pub fn block_axpy(coef: &[f64], idx: &[u32], val: Values<'_>, w: &mut [f64]) {
    check_len(idx, val);
    let width = coef.len();
    for (k, &i) in idx.iter().enumerate() {
        let x = val.get(k);
        let start = i as usize * width;
        for (b, &c) in w[start..start + width].iter_mut().zip(coef) {
            *b += c * x;
        }
    }
}

/// See [`crate::sparse::dot_rows`]: [`dot`] of each row.
pub(crate) fn dot_rows(
    w: &[f64],
    offsets: &[u64],
    idx: &[u32],
    out: &mut [f64],
    ahead: &mut StreamAhead,
    val: Values<'_>,
) {
    check_len(idx, val);
    for (o, ends) in out.iter_mut().zip(offsets.windows(2)) {
        ahead.before(ends[0]..ends[1]);
        let row = ends[0] as usize..ends[1] as usize;
        *o = dot(w, &idx[row.clone()], val.slice(row));
    }
}

/// See [`crate::sparse::axpy_rows`]: [`axpy`] of each row with a non-zero coefficient.
pub(crate) fn axpy_rows(
    coef: &[f64],
    offsets: &[u64],
    idx: &[u32],
    w: &mut [f64],
    ahead: &mut StreamAhead,
    val: Values<'_>,
) {
    check_len(idx, val);
    for (&a, ends) in coef.iter().zip(offsets.windows(2)) {
        if a != 0.0 {
            ahead.before(ends[0]..ends[1]);
            let row = ends[0] as usize..ends[1] as usize;
            axpy(a, &idx[row.clone()], val.slice(row), w);
        }
    }
}
