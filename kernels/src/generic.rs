//! Kernel bodies written once in safe Rust and compiled per instruction set.
//!
//! Each body is `#[inline(always)]`: an ISA module wraps it in a `#[target_feature]` function,
//! and LLVM vectorizes the inlined loop for that ISA's registers (the streaming dense kernels
//! and the index maximum need no gathers, so plain loops over fixed-size chunks are enough).
//! Reductions keep [`LANES`] independent partial sums combined pairwise, so that they are
//! vectorized (floating-point sums are not reassociated by the compiler) and more accurate.

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
