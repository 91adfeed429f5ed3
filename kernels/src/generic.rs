//! Kernel bodies written once in safe Rust and compiled per instruction set.
//!
//! Each body is `#[inline(always)]`: an ISA module wraps it in a `#[target_feature]` function,
//! and LLVM vectorizes the inlined loop for that ISA's registers (the streaming dense kernels
//! and the index maximum need no gathers, so plain loops over fixed-size chunks are enough).
//! Reductions keep [`LANES`] independent partial sums combined pairwise, so that they are
//! vectorized (floating-point sums are not reassociated by the compiler) and more accurate.

use crate::Values;

/// Fused multiply-add a·b + c. Only FMA paths use these bodies (elsewhere `mul_add` would
/// be a library call).
#[inline(always)]
fn fma(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

/// Independent partial sums in the dense reductions (4 AVX2 or 2 AVX-512 registers).
pub(crate) const LANES: usize = 16;

/// Largest index, 0 when empty (integer max reductions vectorize as they stand).
#[inline(always)]
pub(crate) fn max_index(idx: &[u32]) -> u32 {
    idx.iter().copied().fold(0, u32::max)
}

/// Pairwise sum of the partial sums.
#[inline(always)]
fn reduce(mut acc: [f64; LANES]) -> f64 {
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for l in 0..width {
            acc[l] += acc[l + width];
        }
    }
    acc[0]
}

/// x ← a·x.
#[inline(always)]
pub(crate) fn scale(a: f64, x: &mut [f64]) {
    x.iter_mut().for_each(|xi| *xi *= a);
}

/// y ← a·x + b·y (lengths equal).
#[inline(always)]
pub(crate) fn axpby(a: f64, x: &[f64], b: f64, y: &mut [f64]) {
    y.iter_mut()
        .zip(x)
        .for_each(|(yi, &xi)| *yi = fma(a, xi, b * *yi));
}

/// Σ x_i·y_i (lengths equal).
#[inline(always)]
pub(crate) fn dense_dot(x: &[f64], y: &[f64]) -> f64 {
    let (xc, xt) = x.as_chunks::<LANES>();
    let (yc, yt) = y.as_chunks::<LANES>();
    let mut acc = [0.0; LANES];
    for (a, b) in xc.iter().zip(yc) {
        for l in 0..LANES {
            acc[l] = fma(a[l], b[l], acc[l]);
        }
    }
    for (l, (a, b)) in xt.iter().zip(yt).enumerate() {
        acc[l] = fma(*a, *b, acc[l]);
    }
    reduce(acc)
}

/// y ← a·x + y, then Σ z_i·y_i over the updated y, in one pass (lengths equal). Bit for bit
/// `axpby(a, x, 1, y)` followed by `dense_dot(z, y)`: each y_i is the same fused multiply-add
/// and the partial sums are the same, so fusing saves a pass over y and changes no result.
#[inline(always)]
pub(crate) fn axpy_dot(a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64 {
    let (xc, xt) = x.as_chunks::<LANES>();
    let (yc, yt) = y.as_chunks_mut::<LANES>();
    let (zc, zt) = z.as_chunks::<LANES>();
    let mut acc = [0.0; LANES];
    for ((xa, ya), za) in xc.iter().zip(yc).zip(zc) {
        for l in 0..LANES {
            ya[l] = fma(a, xa[l], ya[l]);
            acc[l] = fma(za[l], ya[l], acc[l]);
        }
    }
    for (l, ((xi, yi), zi)) in xt.iter().zip(yt).zip(zt).enumerate() {
        *yi = fma(a, *xi, *yi);
        acc[l] = fma(*zi, *yi, acc[l]);
    }
    reduce(acc)
}

/// Σ x_i².
#[inline(always)]
pub(crate) fn norm2(x: &[f64]) -> f64 {
    let (xc, xt) = x.as_chunks::<LANES>();
    let mut acc = [0.0; LANES];
    for a in xc {
        for l in 0..LANES {
            acc[l] = fma(a[l], a[l], acc[l]);
        }
    }
    for (l, a) in xt.iter().enumerate() {
        acc[l] = fma(*a, *a, acc[l]);
    }
    reduce(acc)
}

/// Σ x_i.
#[inline(always)]
pub(crate) fn sum(x: &[f64]) -> f64 {
    let (xc, xt) = x.as_chunks::<LANES>();
    let mut acc = [0.0; LANES];
    for a in xc {
        for l in 0..LANES {
            acc[l] += a[l];
        }
    }
    for (l, a) in xt.iter().enumerate() {
        acc[l] += *a;
    }
    reduce(acc)
}

/// out_i = α·(h·v_i − u_i) + β·x̄_i, or without the β term when `xbar` is `None`
/// (lengths equal).
#[inline(always)]
pub(crate) fn rescale_average(
    alpha: f64,
    h: f64,
    vu: &[[f64; 2]],
    beta: f64,
    xbar: Option<&[f64]>,
    out: &mut [f64],
) {
    match xbar {
        None => out
            .iter_mut()
            .zip(vu)
            .for_each(|(o, p)| *o = alpha * fma(h, p[0], -p[1])),
        Some(xbar) => out
            .iter_mut()
            .zip(vu)
            .zip(xbar)
            .for_each(|((o, p), &m)| *o = fma(alpha, fma(h, p[0], -p[1]), beta * m)),
    }
}

/// `$body` with `$values` bound to the row's values as an iterator of `f64`s (ones for a
/// binary row), compiled once per value kind so that no step of the loop asks which it is.
macro_rules! with_row_values {
    ($val:expr, $len:expr, |$values:ident| $body:expr) => {
        match $val {
            Values::Ones => {
                let $values = core::iter::repeat_n(1.0, $len);
                $body
            }
            Values::F32(v) => {
                let $values = v.iter().map(|&x| f64::from(x));
                $body
            }
            Values::F64(v) => {
                let $values = v.iter().copied();
                $body
            }
        }
    };
}

/// Runs `$kernel::<L>(first, args…)` — which handles lanes first..first + L of a block and
/// returns first + L — for L = 16, 8, 4, 2 and 1 in turn, largest first, until the `$width`
/// lanes are covered once. Each call is a loop over the row whose L lanes stay in registers,
/// where a loop over a block's lanes for each entry kept a runtime number of accumulators in
/// memory, stored and reloaded from one entry to the next (PERF.md `## One-vs-rest`).
macro_rules! in_lane_chunks {
    ($width:expr, $kernel:ident($($arg:expr),*)) => {{
        let width = $width;
        let mut first = 0;
        while width - first >= 16 {
            first = $kernel::<16>(first, $($arg),*);
        }
        for lanes in [8, 4, 2, 1] {
            if width - first >= lanes {
                first = match lanes {
                    8 => $kernel::<8>(first, $($arg),*),
                    4 => $kernel::<4>(first, $($arg),*),
                    2 => $kernel::<2>(first, $($arg),*),
                    _ => $kernel::<1>(first, $($arg),*),
                };
            }
        }
    }};
}

/// acc[c] += Σ_k w[idx[k]·B + c]·val[k] for c < acc.len() ≤ B = `width`: one fused
/// multiply-add per entry, each lane summed in row order whatever chunk it falls in (so a
/// lane's result does not depend on the width).
#[inline(always)]
pub(crate) fn block_dot(w: &[f64], width: usize, idx: &[u32], val: Values<'_>, acc: &mut [f64]) {
    with_row_values!(val, idx.len(), |values| {
        in_lane_chunks!(acc.len(), dot_lanes(w, width, idx, values.clone(), acc))
    });
}

/// [`block_dot`] of lanes first..first + L; returns first + L.
#[inline(always)]
fn dot_lanes<const L: usize>(
    first: usize,
    w: &[f64],
    width: usize,
    idx: &[u32],
    values: impl Iterator<Item = f64>,
    acc: &mut [f64],
) -> usize {
    let sums: &mut [f64; L] = (&mut acc[first..first + L]).try_into().expect("L lanes");
    let mut local = *sums;
    for (&i, x) in idx.iter().zip(values) {
        let start = i as usize * width + first;
        let block: &[f64; L] = w[start..start + L].try_into().expect("a whole block");
        for l in 0..L {
            local[l] = fma(block[l], x, local[l]);
        }
    }
    *sums = local;
    first + L
}

/// w[idx[k]·B + c] += coef[c]·val[k] for c < B = coef.len(), one fused multiply-add each.
#[inline(always)]
pub(crate) fn block_axpy(coef: &[f64], idx: &[u32], val: Values<'_>, w: &mut [f64]) {
    with_row_values!(val, idx.len(), |values| {
        in_lane_chunks!(coef.len(), axpy_lanes(coef, idx, values.clone(), w))
    });
}

/// [`block_axpy`] of lanes first..first + L; returns first + L.
#[inline(always)]
fn axpy_lanes<const L: usize>(
    first: usize,
    coef: &[f64],
    idx: &[u32],
    values: impl Iterator<Item = f64>,
    w: &mut [f64],
) -> usize {
    let width = coef.len();
    let c: [f64; L] = coef[first..first + L].try_into().expect("L lanes");
    for (&i, x) in idx.iter().zip(values) {
        let start = i as usize * width + first;
        let block: &mut [f64; L] = (&mut w[start..start + L])
            .try_into()
            .expect("a whole block");
        for l in 0..L {
            block[l] = fma(c[l], x, block[l]);
        }
    }
    first + L
}

/// x_i ← f(x_i): the functions of [`crate::math`] are branch-free, so that LLVM vectorizes
/// this loop for the path's registers, each lane computing the scalar function's bits.
#[inline(always)]
pub(crate) fn map(f: crate::math::Elementwise, x: &mut [f64]) {
    f.apply(x);
}

/// t_i ← softplus(t_i), σ_i ← logistic(t_i) (lengths equal), vectorized as [`map`] is.
#[inline(always)]
pub(crate) fn softplus_and_logistic(t: &mut [f64], sigma: &mut [f64]) {
    for (t, sigma) in t.iter_mut().zip(sigma) {
        (*t, *sigma) = crate::math::softplus_and_logistic(*t);
    }
}
