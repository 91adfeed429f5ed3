//! AVX-512F kernels (with AVX-512VL for 8-lane masked loads).
//!
//! Dot products gather eight `f64` weights at a time into two accumulators. The updates are
//! the AVX2 path's (`super`): `axpy` one weight at a time, which measured faster than gathering
//! eight and scattering them back on every host, and the fused `axpy2` one 16-byte load and
//! store per `[v, u]` pair, a pair being already one vector access. AdaGrad's kernels are the
//! AVX2 path's too (`super::adagrad`), four lanes wide: within 6% of the AVX2 path's time (PERF.md
//! `### AdaGrad's SIMD kernels`).

use core::arch::x86_64::*;

use super::adagrad::{adagrad_accumulate_body, adagrad_dot_body};
use super::{F32, F64, Ones, RowValues, axpy_body, axpy_rows_body, axpy2_body};
use crate::row_macros::isa_path;

isa_path!(
    /// The AVX-512 path.
    Avx512,
    "avx512f,avx512vl,avx2,fma"
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

/// The indices at positions k + j for the bits j set in `mask` ([`lanes`]), 0 in the other
/// lanes, which are not read; k may lie before the row (wrapping), the load spans the eight
/// positions from k.
///
/// Contract: AVX-512F and VL present, position k + j inside `ip`'s row for each bit j of
/// `mask`.
#[inline(always)]
unsafe fn masked_lanes<const SHIFT: u32>(ip: *const u32, k: usize, mask: __mmask8) -> __m512i {
    // SAFETY: the lanes of set mask bits are inside the row (contract); masked-out lanes are
    // neither read nor faulted on, wherever the wrapping offset puts them.
    unsafe {
        let ix = _mm256_maskz_loadu_epi32(mask, ip.wrapping_add(k).cast());
        _mm512_slli_epi64::<SHIFT>(_mm512_cvtepu32_epi64(ix))
    }
}

/// Σ_k w[idx[k] << SHIFT]·val[k] (see the AVX2 version); the last len mod 8 entries in one
/// masked gather, not one at a time, so that a row's length costs no branch per entry.
///
/// The tail's loads span the row's last eight positions, its entries in the high lanes,
/// rather than the eight from its first entry: a masked load still waits for the cache lines
/// its masked-off lanes span, and past a row's end lies the next row, which a step on a
/// randomly sampled row has not fetched (PERF.md `#### The uniform slowdown, mended`). A row
/// shorter than eight reaches back before its start instead.
///
/// Contract: AVX-512F, VL and FMA present; `val` has `idx.len()` values; for every k,
/// `idx[k] << SHIFT` is below the length of the `f64` array `w` points to.
#[inline(always)]
unsafe fn dot_body<R: RowValues, const SHIFT: u32>(w: *const f64, idx: &[u32], val: R) -> f64 {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX-512F, VL and FMA are present (contract). Index and value loads cover
    // positions k..k+16 with k + 16 <= n, then k..k+8 with k + 8 <= n, then the tail's masked
    // lanes: positions n − 8 + j for the n − k < 8 high bits j set, which are k..n, all inside
    // the row; each gathered lane is w[idx[k] << SHIFT], in bounds by contract, and
    // masked-out lanes read nothing.
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
        if k < n {
            // The eight positions up to the row's end, lanes from k on.
            let base = n.wrapping_sub(8);
            let mask: __mmask8 = 0xFF << (8 - (n - k));
            let wv = _mm512_mask_i64gather_pd::<8>(
                _mm512_setzero_pd(),
                mask,
                masked_lanes::<SHIFT>(ip, base, mask),
                w,
            );
            acc[1] = _mm512_fmadd_pd(wv, val.load8_masked(base, mask), acc[1]);
        }
        _mm512_reduce_add_pd(_mm512_add_pd(acc[0], acc[1]))
    }
}
