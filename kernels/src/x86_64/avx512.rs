//! AVX-512F kernels.
//!
//! Dot products gather eight `f64` weights at a time into two accumulators; `axpy` gathers
//! eight weights, updates them with one fused multiply-add and scatters them back, which is
//! correct because the indices of a row are distinct (with repeated indices within a group of
//! eight only one update would survive; memory safety does not depend on it). The fused
//! `axpy2` is the AVX2 path's (one 16-byte load and store per `[v, u]` pair, `super`), since a
//! pair is already one vector access.

use core::arch::x86_64::*;

use super::{F32, F64, Ones, RowValues, axpy2_body};
use crate::dispatch::Isa;
use crate::kernel_set::{KernelSet, Raw};
use crate::row_macros::{per_value_kind, table_adapters};
use crate::{Values, generic};

/// The AVX-512 path.
pub(crate) static SET: KernelSet = KernelSet::new(
    Isa::Avx512,
    Raw {
        max_index,
        dot,
        axpy,
        dot_first,
        axpy2,
        scale,
        axpby,
        dense_dot,
        axpy_dot,
        norm2,
        rescale_average,
    },
);

/// Eight indices from position k, zero-extended to 64 bits and shifted left by SHIFT.
///
/// Contract: AVX-512F present, positions k..k+8 inside `ip`'s row.
#[inline(always)]
unsafe fn lanes<const SHIFT: u32>(ip: *const u32, k: usize) -> __m512i {
    // SAFETY: the eight indices are inside the row (contract); unaligned load is allowed.
    unsafe {
        let ix = _mm512_cvtepu32_epi64(_mm256_loadu_si256(ip.add(k).cast()));
        _mm512_slli_epi64::<SHIFT>(ix)
    }
}

/// Σ_k w[idx[k] << SHIFT]·val[k] (see the AVX2 version).
///
/// Contract: AVX-512F and FMA present; `val` has `idx.len()` values; for every k,
/// `idx[k] << SHIFT` is below the length of the `f64` array `w` points to.
#[inline(always)]
unsafe fn dot_body<R: RowValues, const SHIFT: u32>(w: *const f64, idx: &[u32], val: R) -> f64 {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX-512F and FMA are present (contract). Index and value loads cover positions
    // k..k+16 with k + 16 <= n, then k..k+8 with k + 8 <= n, then the tail's k < n, all
    // inside the row; each gathered lane and tail load is w[idx[k] << SHIFT], in bounds by
    // contract.
    unsafe {
        let mut acc = [_mm512_setzero_pd(); 2];
        let mut k = 0;
        while k + 16 <= n {
            for (j, a) in acc.iter_mut().enumerate() {
                let wv = _mm512_i64gather_pd::<8>(lanes::<SHIFT>(ip, k + 8 * j), w);
                *a = _mm512_fmadd_pd(wv, val.load8(k + 8 * j), *a);
            }
            k += 16;
        }
        if k + 8 <= n {
            let wv = _mm512_i64gather_pd::<8>(lanes::<SHIFT>(ip, k), w);
            acc[0] = _mm512_fmadd_pd(wv, val.load8(k), acc[0]);
            k += 8;
        }
        let mut s = _mm512_reduce_add_pd(_mm512_add_pd(acc[0], acc[1]));
        while k < n {
            let wi = *w.add((*ip.add(k) as usize) << SHIFT);
            s = wi.mul_add(val.get(k), s);
            k += 1;
        }
        s
    }
}

/// w[idx[k]] += a·val[k]: gather, fused multiply-add, scatter, eight at a time.
///
/// Contract: AVX-512F and FMA present; `val` has `idx.len()` values; every index is below the
/// length of the array `w` points to.
#[inline(always)]
unsafe fn axpy_body<R: RowValues>(a: f64, idx: &[u32], val: R, w: *mut f64) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX-512F and FMA are present (contract). Index and value loads cover positions
    // k..k+8 with k + 8 <= n, inside the row; every gathered and scattered lane (and each
    // tail access) is w[idx[k]], in bounds by contract.
    unsafe {
        let av = _mm512_set1_pd(a);
        let mut k = 0;
        while k + 8 <= n {
            let ix = lanes::<0>(ip, k);
            let wv = _mm512_i64gather_pd::<8>(ix, w);
            _mm512_i64scatter_pd::<8>(w, ix, _mm512_fmadd_pd(av, val.load8(k), wv));
            k += 8;
        }
        while k < n {
            let p = w.add(*ip.add(k) as usize);
            *p = a.mul_add(val.get(k), *p);
            k += 1;
        }
    }
}

per_value_kind!(
    "avx512f,avx2,fma",
    /// Sparse dot against `w`.
    fn dot(w: &[f64], idx: &[u32]) -> f64,
    |v| dot_body::<_, 0>(w.as_ptr(), idx, v)
);

per_value_kind!(
    "avx512f,avx2,fma",
    /// Sparse dot against the first members of `vu`.
    fn dot_first(vu: &[[f64; 2]], idx: &[u32]) -> f64,
    |v| dot_body::<_, 1>(vu.as_ptr().cast::<f64>(), idx, v)
);

per_value_kind!(
    "avx512f,avx2,fma",
    /// Sparse axpy into `w`.
    fn axpy_kinds(a: f64, idx: &[u32], w: &mut [f64]),
    |v| axpy_body(a, idx, v, w.as_mut_ptr())
);

per_value_kind!(
    "avx512f,avx2,fma",
    /// Fused sparse update of interleaved pairs.
    fn axpy2_kinds(a: f64, b: f64, idx: &[u32], vu: &mut [[f64; 2]]),
    |v| axpy2_body(a, b, idx, v, vu)
);

table_adapters!(axpy_kinds, axpy2_kinds);

#[target_feature(enable = "avx512f,avx2,fma")]
fn max_index(idx: &[u32]) -> u32 {
    generic::max_index(idx)
}

#[target_feature(enable = "avx512f,avx2,fma")]
fn scale(a: f64, x: &mut [f64]) {
    generic::scale(a, x)
}

#[target_feature(enable = "avx512f,avx2,fma")]
fn axpby(a: f64, x: &[f64], b: f64, y: &mut [f64]) {
    generic::axpby(a, x, b, y)
}

#[target_feature(enable = "avx512f,avx2,fma")]
fn dense_dot(x: &[f64], y: &[f64]) -> f64 {
    generic::dense_dot(x, y)
}

#[target_feature(enable = "avx512f,avx2,fma")]
fn axpy_dot(a: f64, x: &[f64], y: &mut [f64], z: &[f64]) -> f64 {
    generic::axpy_dot(a, x, y, z)
}

#[target_feature(enable = "avx512f,avx2,fma")]
fn norm2(x: &[f64]) -> f64 {
    generic::norm2(x)
}

#[target_feature(enable = "avx512f,avx2,fma")]
fn rescale_average(
    alpha: f64,
    h: f64,
    vu: &[[f64; 2]],
    beta: f64,
    xbar: Option<&[f64]>,
    out: &mut [f64],
) {
    generic::rescale_average(alpha, h, vu, beta, xbar, out)
}
