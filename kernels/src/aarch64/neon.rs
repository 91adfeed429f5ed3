//! NEON kernels.
//!
//! NEON has no gather: dot products load two weights into the lanes of one vector, then use
//! two-lane fused multiply-adds into four independent accumulators (the loads of a row overlap
//! instead of queuing behind one accumulator), with `f32` values widened two at a time. `axpy`
//! updates one weight at a time; the fused `axpy2` reads and writes each `[v, u]` pair as one
//! 16-byte vector, as many memory accesses as a plain `axpy` makes (not timed on hardware:
//! this path runs under qemu here).

use core::arch::aarch64::*;

use crate::adagrad::{Weights, add_gradient};
use crate::row_block::StreamAhead;
use crate::row_macros::isa_path;

isa_path!(
    /// The NEON path.
    Neon,
    "neon"
);

/// The values of a row, read two at a time or one at a time.
///
/// Contract of the methods: the CPU has NEON, and `k` (up to `k + 1` for `load2`) is a
/// position of the row the pointer addresses; for `skip`, a position or the row's end.
trait RowValues: Copy {
    unsafe fn load2(self, k: usize) -> float64x2_t;
    unsafe fn get(self, k: usize) -> f64;
    /// The values from position k on (a row block's row k starts there).
    unsafe fn skip(self, k: usize) -> Self;
}

/// Binary row: every value is 1.0.
#[derive(Clone, Copy)]
struct Ones;

/// Values stored as `f32`, widened exactly to `f64`.
#[derive(Clone, Copy)]
struct F32(*const f32);

/// Values stored as `f64`.
#[derive(Clone, Copy)]
struct F64(*const f64);

impl RowValues for Ones {
    #[inline(always)]
    unsafe fn load2(self, _k: usize) -> float64x2_t {
        // SAFETY: the caller runs on a CPU with NEON (trait contract).
        unsafe { vdupq_n_f64(1.0) }
    }
    #[inline(always)]
    unsafe fn get(self, _k: usize) -> f64 {
        1.0
    }
    #[inline(always)]
    unsafe fn skip(self, _k: usize) -> Self {
        self
    }
}

impl RowValues for F32 {
    #[inline(always)]
    unsafe fn load2(self, k: usize) -> float64x2_t {
        // SAFETY: positions k, k+1 are in the row (trait contract); no alignment needed.
        unsafe { vcvt_f64_f32(vld1_f32(self.0.add(k))) }
    }
    #[inline(always)]
    unsafe fn get(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract).
        f64::from(unsafe { *self.0.add(k) })
    }
    #[inline(always)]
    unsafe fn skip(self, k: usize) -> Self {
        // SAFETY: k is a position of the row or its end (trait contract).
        F32(unsafe { self.0.add(k) })
    }
}

impl RowValues for F64 {
    #[inline(always)]
    unsafe fn load2(self, k: usize) -> float64x2_t {
        // SAFETY: positions k, k+1 are in the row (trait contract); no alignment needed.
        unsafe { vld1q_f64(self.0.add(k)) }
    }
    #[inline(always)]
    unsafe fn get(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract).
        unsafe { *self.0.add(k) }
    }
    #[inline(always)]
    unsafe fn skip(self, k: usize) -> Self {
        // SAFETY: k is a position of the row or its end (trait contract).
        F64(unsafe { self.0.add(k) })
    }
}

/// Σ_k w[idx[k] << SHIFT]·val[k]: SHIFT = 0 reads a weight vector, SHIFT = 1 reads the first
/// member of interleaved pairs.
///
/// Contract: NEON present; `val` has `idx.len()` values; for every k, `idx[k] << SHIFT` is
/// below the length of the `f64` array `w` points to.
#[inline(always)]
unsafe fn dot_body<R: RowValues, const SHIFT: u32>(w: *const f64, idx: &[u32], val: R) -> f64 {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: index and value reads are at positions below n, inside the row; each weight
    // read is w[idx[k] << SHIFT], in bounds by contract.
    unsafe {
        let weight = |k: usize| *w.add((*ip.add(k) as usize) << SHIFT);
        let pair = |k: usize| vsetq_lane_f64::<1>(weight(k + 1), vdupq_n_f64(weight(k)));
        let mut acc = [vdupq_n_f64(0.0); 4];
        let mut k = 0;
        while k + 8 <= n {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = vfmaq_f64(*a, pair(k + 2 * j), val.load2(k + 2 * j));
            }
            k += 8;
        }
        while k + 2 <= n {
            acc[0] = vfmaq_f64(acc[0], pair(k), val.load2(k));
            k += 2;
        }
        let sum = vaddq_f64(vaddq_f64(acc[0], acc[1]), vaddq_f64(acc[2], acc[3]));
        let mut s = vaddvq_f64(sum);
        if k < n {
            s = weight(k).mul_add(val.get(k), s);
        }
        s
    }
}

/// w[idx[k]] += a·val[k], one weight at a time.
///
/// Contract: NEON present; `val` has `idx.len()` values; every index is below the length of
/// the array `w` points to.
#[inline(always)]
unsafe fn axpy_body<R: RowValues>(a: f64, idx: &[u32], val: R, w: *mut f64) {
    for (k, &i) in idx.iter().enumerate() {
        // SAFETY: k is a position of the row and i is in bounds of `w` (contract).
        unsafe {
            let p = w.add(i as usize);
            *p = a.mul_add(val.get(k), *p);
        }
    }
}

/// vu[idx[k]] += [a, b]·val[k], each pair read and written as one 16-byte vector.
///
/// Contract: NEON present; `val` has `idx.len()` values; every index is below `vu.len()`.
#[inline(always)]
unsafe fn axpy2_body<R: RowValues>(a: f64, b: f64, idx: &[u32], val: R, vu: &mut [[f64; 2]]) {
    let vu = vu.as_mut_ptr();
    // SAFETY: NEON is present (contract); register operations only.
    let ab = unsafe { vsetq_lane_f64::<1>(b, vdupq_n_f64(a)) };
    for (k, &i) in idx.iter().enumerate() {
        // SAFETY: k is a position of the row and pair i is in bounds of `vu` (contract); the
        // 16-byte access covers exactly that pair (f64 alignment suffices for vld1q/vst1q).
        unsafe {
            let p = vu.add(i as usize).cast::<f64>();
            let x = vdupq_n_f64(val.get(k));
            vst1q_f64(p, vfmaq_f64(vld1q_f64(p), ab, x));
        }
    }
}

/// w += Σ_r coef[r]·x_r over a block's rows in order, skipping rows whose coefficient is 0:
/// [`axpy_body`] row by row. (The x86 paths update runs of short rows as one sequence; not
/// measured on an aarch64 host, so not done here.)
///
/// Contract: NEON present; `val` reads the entries `idx` holds, `idx.len()` values from its
/// start; every index is below `w.len()`.
#[inline(always)]
unsafe fn axpy_rows_body<R: RowValues>(
    coef: &[f64],
    offsets: &[u64],
    idx: &[u32],
    val: R,
    w: &mut [f64],
    ahead: &mut StreamAhead,
) {
    crate::row_macros::rows_one_at_a_time!(coef, offsets, idx, val, w, ahead);
}

/// The weights of two `[u, r]` states and their centres (`None`: 0): [`Weights::weight`]
/// lane by lane, none of its operations fused, so that each equals the scalar weight bit for
/// bit.
///
/// Contract: NEON present.
#[inline(always)]
unsafe fn adagrad_weights(
    weights: Weights,
    u: float64x2_t,
    r: float64x2_t,
    centre: Option<float64x2_t>,
) -> float64x2_t {
    // SAFETY: NEON is present (contract); register operations only.
    unsafe {
        let h = vmulq_f64(
            vaddq_f64(vdupq_n_f64(weights.delta), r),
            vdupq_n_f64(weights.inverse_eta),
        );
        let shifted = match centre {
            None => u,
            Some(c) => vbslq_f64(vceqzq_f64(c), u, vsubq_f64(u, vmulq_f64(h, c))),
        };
        let shrunk = if weights.l1_t == 0.0 {
            shifted
        } else {
            let magnitude = vabsq_f64(shifted);
            // FMAXNM, not FMAX: like `f64::max` it returns the number where one operand is NaN
            // (a NaN tλ₁, say), where FMAX returns the NaN.
            let kept = vmaxnmq_f64(
                vsubq_f64(magnitude, vdupq_n_f64(weights.l1_t)),
                vdupq_n_f64(0.0),
            );
            let signed = vbslq_f64(vdupq_n_u64(1 << 63), shifted, kept);
            let finite = vcltq_f64(magnitude, vdupq_n_f64(f64::INFINITY));
            vbslq_f64(finite, signed, vdupq_n_f64(f64::NAN))
        };
        vdivq_f64(
            vnegq_f64(shrunk),
            vaddq_f64(vdupq_n_f64(weights.lambda_t), h),
        )
    }
}

/// [`crate::adagrad::dot`]: two weights at a time ([`adagrad_weights`]) into two
/// accumulators, a last odd entry alone.
///
/// Contract: NEON present; `val` has `idx.len()` values; every index is below the number of
/// pairs `sums` points to, and `centre`, where given, has as many entries.
#[inline(always)]
unsafe fn adagrad_dot_body<R: RowValues>(
    weights: Weights,
    sums: *const [f64; 2],
    centre: Option<*const f64>,
    idx: &[u32],
    val: R,
) -> f64 {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: NEON is present (contract); index and value reads are at positions below n,
    // inside the row; each pair (one 16-byte load) and centre read is at an index of the row,
    // in bounds by contract.
    unsafe {
        let index = |k: usize| *ip.add(k) as usize;
        let add_two = |k: usize, acc: float64x2_t| {
            let (i0, i1) = (index(k), index(k + 1));
            let p0 = vld1q_f64(sums.add(i0).cast::<f64>());
            let p1 = vld1q_f64(sums.add(i1).cast::<f64>());
            let c = centre.map(|c| vsetq_lane_f64::<1>(*c.add(i1), vdupq_n_f64(*c.add(i0))));
            let w = adagrad_weights(weights, vzip1q_f64(p0, p1), vzip2q_f64(p0, p1), c);
            vfmaq_f64(acc, w, val.load2(k))
        };
        let mut acc = [vdupq_n_f64(0.0); 2];
        let mut k = 0;
        while k + 4 <= n {
            acc[0] = add_two(k, acc[0]);
            acc[1] = add_two(k + 2, acc[1]);
            k += 4;
        }
        if k + 2 <= n {
            acc[0] = add_two(k, acc[0]);
            k += 2;
        }
        let mut p = vaddvq_f64(vaddq_f64(acc[0], acc[1]));
        if k < n {
            let i = index(k);
            let c = centre.map_or(0.0, |c| *c.add(i));
            p = weights.weight(*sums.add(i), c).mul_add(val.get(k), p);
        }
        p
    }
}

/// [`crate::adagrad::accumulate`]: two pairs at a time, each updated as [`add_gradient`]
/// updates it; two in which a live component's r² + c² leaves the normal range (its `hypot`
/// case), and a last odd entry, by `add_gradient` itself.
///
/// Contract: NEON present; `val` has `idx.len()` values; every index is below the number of
/// pairs `sums` points to.
#[inline(always)]
unsafe fn adagrad_accumulate_body<R: RowValues>(g: f64, idx: &[u32], val: R, sums: *mut [f64; 2]) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: NEON is present (contract); index and value reads are at positions below n,
    // inside the row; each pair accessed (one 16-byte load or store, or `add_gradient`'s
    // reference) is at an index of the row, in bounds by contract; `add_gradient`'s
    // references are made one at a time and dropped before the next access, so none aliases
    // another (repeated indices included).
    unsafe {
        let by_entry = |k: usize| {
            add_gradient(&mut *sums.add(*ip.add(k) as usize), g * val.get(k));
        };
        let mut k = 0;
        while k + 2 <= n {
            let (p0, p1) = (
                sums.add(*ip.add(k) as usize).cast::<f64>(),
                sums.add(*ip.add(k + 1) as usize).cast::<f64>(),
            );
            let (a, b) = (vld1q_f64(p0), vld1q_f64(p1));
            let (u, r) = (vzip1q_f64(a, b), vzip2q_f64(a, b));
            let c = vmulq_f64(vdupq_n_f64(g), val.load2(k));
            let squares = vaddq_f64(vmulq_f64(r, r), vmulq_f64(c, c));
            // All ones where c = 0 (not NaN): such a pair is left as it is.
            let still = vceqzq_f64(c);
            let normal = vandq_u64(
                vcgeq_f64(squares, vdupq_n_f64(f64::MIN_POSITIVE)),
                vcltq_f64(squares, vdupq_n_f64(f64::INFINITY)),
            );
            let fine = vorrq_u64(still, normal);
            if vgetq_lane_u64::<0>(fine) & vgetq_lane_u64::<1>(fine) != u64::MAX {
                by_entry(k);
                by_entry(k + 1);
            } else {
                let u = vbslq_f64(still, u, vaddq_f64(u, c));
                let r = vbslq_f64(still, r, vsqrtq_f64(squares));
                vst1q_f64(p0, vzip1q_f64(u, r));
                vst1q_f64(p1, vzip2q_f64(u, r));
            }
            k += 2;
        }
        if k < n {
            by_entry(k);
        }
    }
}
