//! x86_64 kernel paths: AVX2 + FMA and AVX-512F, each in its own module, plus the pieces they
//! share (reading a row's values, stamping a kernel out per value kind).

use core::arch::x86_64::*;

pub(crate) mod avx2;
pub(crate) mod avx512;

/// The values of a row, read four or eight at a time or one at a time.
///
/// Contract of the methods: the CPU has AVX2 (AVX-512F for `load8`), and `k` (up to `k + 3`
/// for `load4`, `k + 7` for `load8`) is a position of the row the pointer addresses.
pub(crate) trait RowValues: Copy {
    unsafe fn load4(self, k: usize) -> __m256d;
    unsafe fn load8(self, k: usize) -> __m512d;
    unsafe fn get(self, k: usize) -> f64;
}

/// Binary row: every value is 1.0.
#[derive(Clone, Copy)]
pub(crate) struct Ones;

/// Values stored as `f32`, widened exactly to `f64`.
#[derive(Clone, Copy)]
pub(crate) struct F32(pub(crate) *const f32);

/// Values stored as `f64`.
#[derive(Clone, Copy)]
pub(crate) struct F64(pub(crate) *const f64);

impl RowValues for Ones {
    #[inline(always)]
    unsafe fn load4(self, _k: usize) -> __m256d {
        // SAFETY: the caller runs on a CPU with AVX2 (trait contract).
        unsafe { _mm256_set1_pd(1.0) }
    }
    #[inline(always)]
    unsafe fn load8(self, _k: usize) -> __m512d {
        // SAFETY: the caller runs on a CPU with AVX-512F (trait contract).
        unsafe { _mm512_set1_pd(1.0) }
    }
    #[inline(always)]
    unsafe fn get(self, _k: usize) -> f64 {
        1.0
    }
}

impl RowValues for F32 {
    #[inline(always)]
    unsafe fn load4(self, k: usize) -> __m256d {
        // SAFETY: positions k..k+4 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm256_cvtps_pd(_mm_loadu_ps(self.0.add(k))) }
    }
    #[inline(always)]
    unsafe fn load8(self, k: usize) -> __m512d {
        // SAFETY: positions k..k+8 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm512_cvtps_pd(_mm256_loadu_ps(self.0.add(k))) }
    }
    #[inline(always)]
    unsafe fn get(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract).
        f64::from(unsafe { *self.0.add(k) })
    }
}

impl RowValues for F64 {
    #[inline(always)]
    unsafe fn load4(self, k: usize) -> __m256d {
        // SAFETY: positions k..k+4 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm256_loadu_pd(self.0.add(k)) }
    }
    #[inline(always)]
    unsafe fn load8(self, k: usize) -> __m512d {
        // SAFETY: positions k..k+8 are in the row (trait contract); unaligned load is allowed.
        unsafe { _mm512_loadu_pd(self.0.add(k)) }
    }
    #[inline(always)]
    unsafe fn get(self, k: usize) -> f64 {
        // SAFETY: position k is in the row (trait contract).
        unsafe { *self.0.add(k) }
    }
}

/// Indices k..k+4 of a row from two 8-byte loads instead of four 4-byte ones, leaving the load
/// ports to the weights (x86_64 is little-endian: the low half of each load is the first).
///
/// Contract: positions k..k+4 are in the row `ip` points to.
#[inline(always)]
pub(crate) unsafe fn four_indices(ip: *const u32, k: usize) -> [usize; 4] {
    // SAFETY: the two unaligned 8-byte loads cover positions k..k+4, in the row by contract.
    let (low, high) = unsafe {
        (
            ip.add(k).cast::<u64>().read_unaligned(),
            ip.add(k + 2).cast::<u64>().read_unaligned(),
        )
    };
    [
        low as u32 as usize,
        (low >> 32) as usize,
        high as u32 as usize,
        (high >> 32) as usize,
    ]
}

/// vu[idx[k]] += [a, b]·val[k], shared by the AVX2 and AVX-512 paths (an AVX-512 scatter
/// cannot update a 16-byte pair in one access): indices are read four at a time
/// ([`four_indices`]), the values are widened four at a time, and
/// each pair is read and written as one 16-byte vector, in row order, so that the result is
/// that of fused multiply-adds on one pair at a time, bit for bit (the scalar kernel rounds
/// each product first, so it differs within the crate's error bound).
///
/// Contract: AVX2 and FMA present; `val` has `idx.len()` values; every index is below the
/// number of pairs `vu` points to.
#[inline(always)]
pub(crate) unsafe fn axpy2_body<R: RowValues>(
    a: f64,
    b: f64,
    idx: &[u32],
    val: R,
    vu: *mut [f64; 2],
) {
    let n = idx.len();
    let ip = idx.as_ptr();
    // SAFETY: AVX2 and FMA are present (contract). Index loads and `load4` cover positions
    // k..k+4 with k + 4 <= n, and the tail's positions k < n, all inside the row; every pair
    // access is pair idx[k] of `vu`, in bounds by contract, and the unaligned 16-byte access
    // covers exactly that pair.
    unsafe {
        let ab = _mm_setr_pd(a, b);
        let update = |i: usize, x: __m128d| {
            let p = vu.add(i).cast::<f64>();
            _mm_storeu_pd(p, _mm_fmadd_pd(ab, x, _mm_loadu_pd(p)));
        };
        let mut k = 0;
        while k + 4 <= n {
            let [i0, i1, i2, i3] = four_indices(ip, k);
            let x = val.load4(k);
            let (low, high) = (_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
            update(i0, _mm_unpacklo_pd(low, low));
            update(i1, _mm_unpackhi_pd(low, low));
            update(i2, _mm_unpacklo_pd(high, high));
            update(i3, _mm_unpackhi_pd(high, high));
            k += 4;
        }
        while k < n {
            update(*ip.add(k) as usize, _mm_set1_pd(val.get(k)));
            k += 1;
        }
    }
}
