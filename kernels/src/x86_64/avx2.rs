//! AVX2 + FMA kernels.
//!
//! Dot products fetch four `f64` weights at a time with four scalar loads (not `vgatherqpd`,
//! which measured 1.3–1.8× slower on this AMD EPYC: PERF.md `## Kernels`), doubled indices
//! for the interleaved `[v, u]` pairs, into four independent accumulators. AVX2 has no
//! scatter, so `axpy` updates one weight at a time with a fused multiply-add, and the fused
//! `axpy2` loads and stores each `[v, u]` pair as one 16-byte vector (both shared with
//! AVX-512, in `super`).

use core::arch::x86_64::*;

use super::adagrad::{adagrad_accumulate_body, adagrad_dot_body};
use super::{F32, F64, Ones, RowValues, axpy_body, axpy_rows_body, axpy2_body, hsum};
use crate::row_macros::isa_path;

isa_path!(
    /// The AVX2 path.
    Avx2,
    "avx2,fma"
);

/// Σ_k w[idx[k] << SHIFT]·val[k]: SHIFT = 0 reads a weight vector, SHIFT = 1 reads the first
/// member of interleaved pairs. The last `len mod 4` entries go in as one vector, not one at
/// a time: a loop whose trip count changes from row to row mispredicts its exit on most rows.
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
    // k..k+16 with k + 16 <= n, then k..k+4 with k + 4 <= n, then the tail's positions
    // clamped to at most n − 1, all inside the row; each weight load is w[idx[k] << SHIFT],
    // in bounds by contract.
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
        if k < n {
            // The last n − k < 4 entries as one vector: positions past the row's end read its
            // last entry again, and their lanes are zeroed in both factors.
            let last = n - 1;
            let at = |j: usize| (k + j).min(last);
            let tail = _mm256_setr_pd(weight(at(0)), weight(at(1)), weight(at(2)), weight(at(3)));
            let x = _mm256_setr_pd(
                val.get(at(0)),
                val.get(at(1)),
                val.get(at(2)),
                val.get(at(3)),
            );
            let live = _mm256_castsi256_pd(_mm256_cmpgt_epi64(
                _mm256_set1_epi64x((n - k) as i64),
                _mm256_setr_epi64x(0, 1, 2, 3),
            ));
            let zero = _mm256_setzero_pd();
            acc[1] = _mm256_fmadd_pd(
                _mm256_blendv_pd(zero, tail, live),
                _mm256_blendv_pd(zero, x, live),
                acc[1],
            );
        }
        let sum = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
        hsum(sum)
    }
}
