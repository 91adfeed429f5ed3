//! Sparse and dense numeric kernels for `sparselin`.
//!
//! This crate is the only place in the project with SIMD intrinsics and `unsafe`. Every kernel
//! has a portable scalar version in [`scalar`] that is always compiled and serves as the oracle
//! the vectorized paths are tested against. The vectorized paths are chosen once at run time
//! (see [`dispatch`]); `SPARSELIN_ISA=scalar|avx2|avx512|neon` forces one.
//!
//! Sparse rows are a pair of slices: strictly increasing `u32` column indices and their values
//! ([`Values`]). Weights are `f64`. An index past the end of the weight slice panics, exactly
//! like slice indexing: no kernel ever reads or writes out of bounds.

pub mod dense;
pub mod dispatch;
pub mod mmap;
pub mod scalar;
pub mod sparse;

/// The values of one sparse row, parallel to its index slice.
///
/// `Ones` is binary data (every stored entry is 1.0) kept without a value array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Values<'a> {
    /// Every stored entry equals 1.0.
    Ones,
    /// Single-precision values, the default storage.
    F32(&'a [f32]),
    /// Double-precision values, for exact reproduction of f64 references.
    F64(&'a [f64]),
}

impl Values<'_> {
    /// Value at position `k` of the row.
    #[inline]
    pub fn get(&self, k: usize) -> f64 {
        match self {
            Values::Ones => 1.0,
            Values::F32(v) => f64::from(v[k]),
            Values::F64(v) => v[k],
        }
    }

    /// Length of the value array, `None` for binary rows (which have no array).
    #[inline]
    pub fn len(&self) -> Option<usize> {
        match self {
            Values::Ones => None,
            Values::F32(v) => Some(v.len()),
            Values::F64(v) => Some(v.len()),
        }
    }

    /// True when the value array exists and is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}
