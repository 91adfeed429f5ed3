//! Dense kernels over whole weight vectors: the O(n) passes the learners make once at the end
//! ("vectorized dense final rescaling"), run on the path chosen by [`crate::dispatch`].

use crate::dispatch::selected;
use crate::math::Elementwise;

/// x ← a·x.
#[inline]
pub fn scale(a: f64, x: &mut [f64]) {
    selected().scale(a, x)
}

/// y ← a·x + b·y. Panics if lengths differ.
#[inline]
pub fn axpby(a: f64, x: &[f64], b: f64, y: &mut [f64]) {
    selected().axpby(a, x, b, y)
}

/// Σ x_i·y_i. Panics if lengths differ.
#[inline]
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    selected().dense_dot(x, y)
}

/// y ← a·x + y, then Σ z_i·y_i over the updated y, in one pass: the same results, bit for
/// bit, as [`axpby`]`(a, x, 1.0, y)` followed by [`dot`]`(z, y)` on the same path, for one
/// pass over y instead of two (the L-BFGS two-loop recursion's step: each update of q is
/// followed by a dot over it). Panics if lengths differ.
#[inline]
pub fn axpy_dot(a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64 {
    selected().axpy_dot(a, x, y, z)
}

/// Σ x_i².
#[inline]
pub fn norm2(x: &[f64]) -> f64 {
    selected().norm2(x)
}

/// Σ x_i, in the vector paths' independent partial sums: a sum over a pass's rows (a loss
/// total, a bias's share of a gradient) added one row after the other waits on each
/// addition's latency, a few cycles a row (PERF.md `## Batch solvers`).
#[inline]
pub fn sum(x: &[f64]) -> f64 {
    selected().sum(x)
}

/// `out[i] = α·(h·vu[i][0] − vu[i][1]) + β·xbar[i]` — the averaged-iterate recovery
/// (MATH.md §3–§4) from interleaved `[v_i, u_i]`. With `xbar = None` the β term is absent.
#[inline]
pub fn rescale_average(
    alpha: f64,
    h: f64,
    vu: &[[f64; 2]],
    beta: f64,
    xbar: Option<&[f64]>,
    out: &mut [f64],
) {
    selected().rescale_average(alpha, h, vu, beta, xbar, out)
}

/// x_i ← f(x_i) for every element: e^x, ln(1 + e^x) or 1/(1 + e^−x) ([`Elementwise`]),
/// vectorized, every path giving the bits of the scalar function ([`Elementwise::at`]).
#[inline]
pub fn map(f: Elementwise, x: &mut [f64]) {
    selected().map(f, x)
}

/// t_i ← ln(1 + e^t_i) and σ_i ← 1/(1 + e^−t_i) in one pass from one exponential each
/// ([`crate::math::softplus_and_logistic`]): the log loss's values and derivatives at the same
/// points for the price of its values and a division, each the bits of
/// [`Elementwise::Softplus`] and [`Elementwise::Logistic`]. Panics if lengths differ.
#[inline]
pub fn softplus_and_logistic(t: &mut [f64], sigma: &mut [f64]) {
    selected().softplus_and_logistic(t, sigma)
}
