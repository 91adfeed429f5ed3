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
