//! AdaGrad's kernels ([`crate::adagrad`]), shared by the AVX2 and AVX-512 paths: four entries
//! at a time, their `[u, r]` pairs loaded as four 16-byte vectors and split into a vector of
//! u's and one of r's, so that the four divisions of the weights and the four square roots of
//! the update are one `vdivpd` and one `vsqrtpd` each.
//!
//! Each lane repeats the scalar definition's operations in its order, none fused, so that
//! weights and updated pairs are those of the scalar kernels bit for bit (a NaN's sign and
//! payload aside).

use core::arch::x86_64::*;

use super::{RowValues, four_indices, hsum};
use crate::adagrad::{Weights, add_gradient};

/// [`Weights`] broadcast to four lanes, with the constants the weight's lanes need.
struct Lanes {
    lambda_t: __m256d,
    l1_t: __m256d,
    delta: __m256d,
    inverse_eta: __m256d,
    /// −0.0: the sign bit alone.
    sign: __m256d,
    infinity: __m256d,
}

impl Lanes {
    /// Contract: AVX2 present.
    #[inline(always)]
    unsafe fn of(weights: Weights) -> Lanes {
        // SAFETY: AVX2 is present (contract); register operations only.
        unsafe {
            Lanes {
                lambda_t: _mm256_set1_pd(weights.lambda_t),
                l1_t: _mm256_set1_pd(weights.l1_t),
                delta: _mm256_set1_pd(weights.delta),
                inverse_eta: _mm256_set1_pd(weights.inverse_eta),
                sign: _mm256_set1_pd(-0.0),
                infinity: _mm256_set1_pd(f64::INFINITY),
            }
        }
    }

    /// The four weights of the states `u`, `r` and centres `centre` (`None`: 0):
    /// [`Weights::weight`] lane by lane, the shrinkage only where SHRINK (tλ₁ ≠ 0).
    ///
    /// Contract: AVX2 present.
    #[inline(always)]
    unsafe fn weights<const SHRINK: bool>(
        &self,
        u: __m256d,
        r: __m256d,
        centre: Option<__m256d>,
    ) -> __m256d {
        // SAFETY: AVX2 is present (contract); register operations only.
        unsafe {
            let h = _mm256_mul_pd(_mm256_add_pd(self.delta, r), self.inverse_eta);
            let shifted = match centre {
                None => u,
                Some(c) => {
                    let at_zero = _mm256_cmp_pd::<_CMP_EQ_OQ>(c, _mm256_setzero_pd());
                    _mm256_blendv_pd(_mm256_sub_pd(u, _mm256_mul_pd(h, c)), u, at_zero)
                }
            };
            let shrunk = if SHRINK {
                let magnitude = _mm256_andnot_pd(self.sign, shifted);
                let kept = _mm256_max_pd(_mm256_sub_pd(magnitude, self.l1_t), _mm256_setzero_pd());
                let signed = _mm256_or_pd(kept, _mm256_and_pd(self.sign, shifted));
                let finite = _mm256_cmp_pd::<_CMP_LT_OQ>(magnitude, self.infinity);
                _mm256_blendv_pd(_mm256_set1_pd(f64::NAN), signed, finite)
            } else {
                shifted
            };
            let negated = _mm256_xor_pd(shrunk, self.sign);
            _mm256_div_pd(negated, _mm256_add_pd(self.lambda_t, h))
        }
    }

    /// acc + the weights of positions k..k+4 times their values.
    ///
    /// Contract: AVX2 and FMA present; positions k..k+4 in the row `ip` and `val` read; the
    /// pairs (and centres) of their indices in bounds. (A function, not a closure in the
    /// loop: a closure would not inherit the caller's target features, and its intrinsics
    /// would be calls.)
    #[inline(always)]
    unsafe fn add_quad<R: RowValues, const SHRINK: bool>(
        &self,
        sums: *const [f64; 2],
        centre: Option<*const f64>,
        ip: *const u32,
        val: R,
        k: usize,
        acc: __m256d,
    ) -> __m256d {
        // SAFETY: the contract: the index and value loads are at positions k..k+4 of the row,
        // the pair and centre reads at its indices.
        unsafe {
            let i = four_indices(ip, k);
            let [u, r] = load_pairs(sums, i);
            let c = centres(centre, i);
            _mm256_fmadd_pd(self.weights::<SHRINK>(u, r, c), val.load4(k), acc)
        }
    }
}

/// The centres of the pairs `i[0..4]`, where there are centres.
///
/// Contract: AVX2 present; `centre + i[j]` in bounds.
#[inline(always)]
unsafe fn centres(centre: Option<*const f64>, i: [usize; 4]) -> Option<__m256d> {
    // SAFETY: AVX2 is present and the four reads are in bounds (contract).
    unsafe {
        // Not `Option::map`: its closure would not inherit the target features.
        #[allow(clippy::manual_map)]
        match centre {
            None => None,
            Some(c) => Some(_mm256_setr_pd(
                *c.add(i[0]),
                *c.add(i[1]),
                *c.add(i[2]),
                *c.add(i[3]),
            )),
        }
    }
}

/// The pairs at `sums + i[0..4]` as `[u, r]` vectors, lanes in row order.
///
/// Contract: AVX2 present; each pair `sums + i[j]` in bounds.
#[inline(always)]
unsafe fn load_pairs(sums: *const [f64; 2], i: [usize; 4]) -> [__m256d; 2] {
    // SAFETY: AVX2 is present and the four 16-byte loads read whole pairs in bounds
    // (contract); unaligned loads are allowed.
    unsafe {
        let pair = |j: usize| _mm_loadu_pd(sums.add(i[j]).cast::<f64>());
        // [u0, r0 | u2, r2] and [u1, r1 | u3, r3]: unpacking takes one member from each
        // 128-bit half, so the lanes come out as 0, 1 | 2, 3.
        let even = _mm256_set_m128d(pair(2), pair(0));
        let odd = _mm256_set_m128d(pair(3), pair(1));
        [_mm256_unpacklo_pd(even, odd), _mm256_unpackhi_pd(even, odd)]
    }
}

/// Stores `[u, r]` lanes as the pairs `sums + i[0..4]` ([`load_pairs`]' inverse).
///
/// Contract: AVX2 present; each pair `sums + i[j]` in bounds.
#[inline(always)]
unsafe fn store_pairs(sums: *mut [f64; 2], i: [usize; 4], [u, r]: [__m256d; 2]) {
    // SAFETY: AVX2 is present and the four 16-byte stores write whole pairs in bounds
    // (contract); unaligned stores are allowed.
    unsafe {
        let even = _mm256_unpacklo_pd(u, r);
        let odd = _mm256_unpackhi_pd(u, r);
        let store = |j: usize, v: __m128d| _mm_storeu_pd(sums.add(i[j]).cast::<f64>(), v);
        store(0, _mm256_castpd256_pd128(even));
        store(2, _mm256_extractf128_pd::<1>(even));
        store(1, _mm256_castpd256_pd128(odd));
        store(3, _mm256_extractf128_pd::<1>(odd));
    }
}

/// [`crate::adagrad::dot`]: four weights at a time into two accumulators (fused
/// multiply-adds), the last `len mod 4` entries one at a time (as one more vector, masked,
/// they measured no faster: PERF.md `### AdaGrad's SIMD kernels`).
///
/// Contract: AVX2 and FMA present; `val` has `idx.len()` values; every index is below the
/// number of pairs `sums` points to, and `centre`, where given, has as many entries.
#[inline(always)]
pub(crate) unsafe fn adagrad_dot_body<R: RowValues>(
    weights: Weights,
    sums: *const [f64; 2],
    centre: Option<*const f64>,
    idx: &[u32],
    val: R,
) -> f64 {
    // SAFETY: the contract is `dot_lanes`'.
    unsafe {
        match weights.l1_t == 0.0 {
            true => dot_lanes::<R, false>(weights, sums, centre, idx, val),
            false => dot_lanes::<R, true>(weights, sums, centre, idx, val),
        }
    }
}

/// The loop of [`adagrad_dot_body`], the shrinkage compiled in only where SHRINK.
///
/// Contract: [`adagrad_dot_body`]'s.
#[inline(always)]
unsafe fn dot_lanes<R: RowValues, const SHRINK: bool>(
    weights: Weights,
    sums: *const [f64; 2],
    centre: Option<*const f64>,
    idx: &[u32],
    val: R,
) -> f64 {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index and value loads cover positions
    // k..k+4 with k + 4 <= n, then the tail's k < n, all inside the row; each pair and
    // centre read is at an index of the row, in bounds by contract.
    unsafe {
        let lanes = Lanes::of(weights);
        let mut acc = [_mm256_setzero_pd(); 2];
        let mut k = 0;
        while k + 8 <= n {
            acc[0] = lanes.add_quad::<R, SHRINK>(sums, centre, ip, val, k, acc[0]);
            acc[1] = lanes.add_quad::<R, SHRINK>(sums, centre, ip, val, k + 4, acc[1]);
            k += 8;
        }
        if k + 4 <= n {
            acc[0] = lanes.add_quad::<R, SHRINK>(sums, centre, ip, val, k, acc[0]);
            k += 4;
        }
        let mut p = hsum(_mm256_add_pd(acc[0], acc[1]));
        while k < n {
            let i = *ip.add(k) as usize;
            let c = centre.map_or(0.0, |c| *c.add(i));
            p = weights.weight(*sums.add(i), c).mul_add(val.get(k), p);
            k += 1;
        }
        p
    }
}

/// [`crate::adagrad::accumulate`]: four pairs at a time, each updated as [`add_gradient`]
/// updates it. A quad in which some live component's r² + c² leaves the normal range (the
/// `hypot` case) is updated entry by entry by `add_gradient` itself; so is the tail.
///
/// Contract: AVX2 and FMA present; `val` has `idx.len()` values; every index is below the
/// number of pairs `sums` points to.
#[inline(always)]
pub(crate) unsafe fn adagrad_accumulate_body<R: RowValues>(
    g: f64,
    idx: &[u32],
    val: R,
    sums: *mut [f64; 2],
) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index and value loads cover positions
    // k..k+4 with k + 4 <= quads <= n, then single positions below n, all inside the row;
    // every pair accessed is at an index of the row, in bounds by contract.
    unsafe {
        let by_entry = |from: usize, to: usize| {
            for k in from..to {
                add_gradient(&mut *sums.add(*ip.add(k) as usize), g * val.get(k));
            }
        };
        let gs = _mm256_set1_pd(g);
        let smallest = _mm256_set1_pd(f64::MIN_POSITIVE);
        let infinity = _mm256_set1_pd(f64::INFINITY);
        let mut k = 0;
        let quads = n & !3;
        while k < quads {
            let i = four_indices(ip, k);
            let c = _mm256_mul_pd(gs, val.load4(k));
            let [u, r] = load_pairs(sums, i);
            let squares = _mm256_add_pd(_mm256_mul_pd(r, r), _mm256_mul_pd(c, c));
            // c ≠ 0 (or NaN), and squares in the normal range (not NaN).
            let live = _mm256_cmp_pd::<_CMP_NEQ_UQ>(c, _mm256_setzero_pd());
            let normal = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(squares, smallest),
                _mm256_cmp_pd::<_CMP_LT_OQ>(squares, infinity),
            );
            if _mm256_movemask_pd(_mm256_andnot_pd(normal, live)) != 0 {
                by_entry(k, k + 4);
            } else {
                let u = _mm256_blendv_pd(u, _mm256_add_pd(u, c), live);
                let r = _mm256_blendv_pd(r, _mm256_sqrt_pd(squares), live);
                store_pairs(sums, i, [u, r]);
            }
            k += 4;
        }
        by_entry(k, n);
    }
}
