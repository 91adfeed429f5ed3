//! AVX2 + FMA kernels.
//!
//! Dot products fetch four `f64` weights at a time with four scalar loads (not `vgatherqpd`,
//! which measured 1.3–1.8× slower on this AMD EPYC: PERF.md `## Kernels`), doubled indices
//! for the interleaved `[v, u]` pairs, into four independent accumulators. AVX2 has no
//! scatter, so `axpy` updates one weight at a time with a fused multiply-add; the fused
//! `axpy2` (shared with AVX-512, in `super`) loads and stores each `[v, u]` pair as one
//! 16-byte vector.

use core::arch::x86_64::*;

use super::{F32, F64, Ones, RowValues, axpy2_body, four_indices};
use crate::row_macros::isa_path;

isa_path!(
    /// The AVX2 path.
    Avx2,
    "avx2,fma"
);

/// Sum of the four lanes.
#[inline(always)]
unsafe fn hsum(v: __m256d) -> f64 {
    // SAFETY: the caller runs on a CPU with AVX2; register operations only.
    unsafe {
        let s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
        _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)))
    }
}

/// Σ_k w[idx[k] << SHIFT]·val[k]: SHIFT = 0 reads a weight vector, SHIFT = 1 reads the first
/// member of interleaved pairs.
///
/// The four weights of each vector are fetched by four scalar loads, not by `vgatherqpd`:
/// on AMD Zen a gather issues as many micro-ops and is slower than the loads it replaces
/// (measured: PERF.md `## Kernels`), while separate loads issue two per cycle on every core.
///
/// Contract: AVX2 + FMA present; `val` has `idx.len()` values; for every k,
/// `idx[k] << SHIFT` is below the length of the `f64` array `w` points to.
#[inline(always)]
unsafe fn dot_body<R: RowValues, const SHIFT: i32>(w: *const f64, idx: &[u32], val: R) -> f64 {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index and value loads cover positions
    // k..k+16 with k + 16 <= n, then k..k+4 with k + 4 <= n, then the tail's k < n, all
    // inside the row; each weight load is w[idx[k] << SHIFT], in bounds by contract.
    unsafe {
        let weight = |k: usize| *w.add((*ip.add(k) as usize) << SHIFT);
        let lanes =
            |k: usize| _mm256_setr_pd(weight(k), weight(k + 1), weight(k + 2), weight(k + 3));
        let mut acc = [_mm256_setzero_pd(); 4];
        let mut k = 0;
        while k + 16 <= n {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = _mm256_fmadd_pd(lanes(k + 4 * j), val.load4(k + 4 * j), *a);
            }
            k += 16;
        }
        while k + 4 <= n {
            acc[0] = _mm256_fmadd_pd(lanes(k), val.load4(k), acc[0]);
            k += 4;
        }
        let sum = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
        let mut s = hsum(sum);
        while k < n {
            s = weight(k).mul_add(val.get(k), s);
            k += 1;
        }
        s
    }
}

/// w[idx[k]] += a·val[k], one weight at a time, one fused multiply-add per weight in row
/// order (the scalar kernel rounds the product first, so the two differ within the crate's
/// error bound). Indices ([`four_indices`]) and values
/// are read four at a time, which leaves the load ports to the weights (0.74–0.90× the time of
/// one index and one value load per weight: PERF.md `## Kernels`).
///
/// Contract: AVX2 + FMA present; `val` has `idx.len()` values; every index is below the
/// length of the array `w` points to.
#[inline(always)]
unsafe fn axpy_body<R: RowValues>(a: f64, idx: &[u32], val: R, w: *mut f64) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index loads and `load4` cover positions
    // k..k+4 with k + 4 <= quads <= n, and the tail's positions k < n, all inside the row;
    // every weight access is w[idx[k]], in bounds by contract.
    unsafe {
        let update = |i: usize, x: f64| {
            let p = w.add(i);
            *p = a.mul_add(x, *p);
        };
        let mut k = 0;
        // As in `axpy2_body`: `k < quads` keeps one loop counter live, not two.
        let quads = n & !3;
        while k < quads {
            let [i0, i1, i2, i3] = four_indices(ip, k);
            let x = val.load4(k);
            let (x01, x23) = (_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
            update(i0, _mm_cvtsd_f64(x01));
            update(i1, _mm_cvtsd_f64(_mm_unpackhi_pd(x01, x01)));
            update(i2, _mm_cvtsd_f64(x23));
            update(i3, _mm_cvtsd_f64(_mm_unpackhi_pd(x23, x23)));
            k += 4;
        }
        while k < n {
            update(*ip.add(k) as usize, val.get(k));
            k += 1;
        }
    }
}
