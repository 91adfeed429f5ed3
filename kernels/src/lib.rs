//! Sparse and dense numeric kernels for `sparselin`.
//!
//! This crate is the only place in the project with SIMD intrinsics and `unsafe`. Every kernel
//! has a portable scalar version in [`scalar`] that is always compiled and serves as the oracle
//! the vectorized paths are tested against. The vectorized paths are chosen once at run time
//! (see [`dispatch`]); `SPARSELIN_ISA=scalar|avx2|avx512|neon` forces one. [`KernelSet`] gives
//! direct access to one path (tests and benchmarks compare every path against scalar).
//!
//! Layout: [`sparse`] and [`dense`] are the safe API, [`bounded`] the proven index slices,
//! [`RowBlock`] the runs of rows the row-block kernels take, [`math`] the log loss's `exp` and
//! `softplus`, [`adagrad`] AdaGrad's weights and its two sparse kernels (their x86 bodies in
//! `x86_64/adagrad.rs`); `kernel_set.rs` checks arguments and
//! calls a path's raw kernels; `scalar.rs`, `x86_64/{avx2,avx512}.rs`, `aarch64/neon.rs` are
//! the paths; `generic.rs` holds the bodies written once and compiled per path;
//! `row_macros.rs` stamps out the rest of each vector path around its row-kernel bodies (one
//! macro, given the path's target features); `atomic.rs` holds the relaxed-atomic Hogwild
//! kernels.
//!
//! # Error bound
//!
//! Paths differ only in summation order and in fusing multiply-adds. For a sparse dot of `k`
//! terms `p_i = w_i·x_i` every path returns some ordering of the sum, each with error at most
//! γ_k·Σ|p_i| (γ_k = kε/(1 − kε), ε = 2⁻⁵³), so two paths differ by at most
//! `|Δ| ≤ 2·γ_k·Σ|w_i·x_i|`; the same holds for the dense dot and squared norm with `k = n`.
//! `axpy`-type updates touch each weight once per row: a fused path rounds w + a·x once,
//! scalar rounds the product and then the sum, so the two differ by at most
//! `|Δ_i| ≤ 2ε·|w_i + a·x_i| + ε(1 + ε)·|a·x_i| ≤ 3.01ε·(|w_i| + |a·x_i|)` (values widened from
//! `f32` exactly). The property tests check these bounds (the update's with 4ε). AdaGrad's
//! kernels ([`adagrad`]) compute each weight and each updated `[u, r]` pair with the scalar
//! definition's own operations, unfused: those agree bit for bit on every path (NaN for NaN),
//! and only the prediction's sum carries the dot's bound.
//!
//! The bounds assume no intermediate result overflows or falls below the normal range. Where
//! a partial sum overflows, orderings may disagree outright (one path's `+∞` can be another's
//! finite cancellation: 1e308 + 1e308 − 1e308 − 1e308), and subnormal products carry an
//! absolute error of up to one subnormal step each (2⁻¹⁰⁷⁴) beyond the bound. A NaN among the
//! inputs gives NaN on every path, as does an infinity in `w` met by a non-zero value; the
//! property tests check both. Fused (the vector paths) and unfused (scalar, and the atomic
//! Hogwild kernels) updates differ by the one rounding the bound allows, so their bits differ.
//!
//! Sparse rows are a pair of slices: strictly increasing `u32` column indices and their values
//! ([`Values`]). Weights are `f64`. An index past the end of the weight slice panics, exactly
//! like slice indexing: no kernel ever reads or writes out of bounds, provided that memory the
//! crate has checked does not change behind it (a file written in place while mapped, see
//! [`mmap::map_read_only`], is the one way it can). A plain index slice is
//! scanned for its largest index on each call; a [`BoundedIndices`] carries a bound proven
//! once for a whole index array (see [`bounded`]), so that a row is checked in O(1).

#![deny(clippy::undocumented_unsafe_blocks)]

// Index bounds are computed as `u32 + 1` in `usize`, and maps and huge arrays assume a 64-bit
// address space: on a narrower target the unchecked loops' proofs would not hold.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("sparselin-kernels needs a 64-bit target");

pub mod adagrad;
mod atomic;
pub mod bounded;
pub mod dense;
pub mod dispatch;
mod generic;
pub mod huge;
mod kernel_set;
pub mod math;
pub mod mmap;
mod prefetch;
#[cfg(all(test, target_os = "linux"))]
mod proc_maps;
mod row_block;
mod row_macros;
pub mod scalar;
pub mod sparse;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub use bounded::{BoundedIndices, IndexVec};
pub use huge::HugeArray;
pub use kernel_set::KernelSet;
pub use row_block::{RowBlock, STREAM_AHEAD_BYTES};

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

impl<'a> Values<'a> {
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

    /// Entries `range` of the row (binary rows: still binary). Panics when `range` is out of
    /// order or past the end of the value array, like slice indexing.
    #[inline]
    pub fn slice(&self, range: std::ops::Range<usize>) -> Values<'a> {
        match *self {
            Values::Ones => Values::Ones,
            Values::F32(v) => Values::F32(&v[range]),
            Values::F64(v) => Values::F64(&v[range]),
        }
    }

    /// True when the value array exists and is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}
