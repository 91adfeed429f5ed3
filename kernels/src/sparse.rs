//! Sparse kernels over one row `(idx, val)` against dense `f64` weights.
//!
//! Each function checks that the value slice (if any) has the same length as the index slice
//! and panics otherwise; an index `>= w.len()` panics, before any load or store. Indices are
//! anything that converts into [`BoundedIndices`]: a plain slice is scanned for its largest
//! index on every call (O(k), SIMD), while a [`BoundedIndices`] — a row cut from an index
//! array proven once, see [`crate::bounded`] — is checked in O(1) from its bound. Indices of a row are expected to be distinct, as
//! in a validated CSR row: with repeated indices the update kernels stay memory-safe, but a
//! vectorized `axpy` may keep only one of the repeated updates.
//!
//! The plain kernels run on the path chosen by [`crate::dispatch`]. The `_atomic` kernels are
//! for Hogwild-style sharing between threads (see [Atomics](#atomics)).
//!
//! # Atomics
//!
//! Shared weights are `AtomicU64` holding `f64` bits, read and written with relaxed loads and
//! stores (not read-modify-write: a lost update between racing threads is accepted, as in
//! Hogwild, but there is no data race). A relaxed load or store is one ordinary move on
//! x86_64 and aarch64; a SIMD gather, however, is not an atomic access, so these kernels are
//! portable loops (four independent partial sums for the dots) on every path.

use std::sync::atomic::AtomicU64;

use crate::dispatch::selected;
use crate::{BoundedIndices, RowBlock, Values, atomic};

/// `Σ_k w[idx[k]]·val[k]`.
#[inline]
pub fn dot<'a>(w: &[f64], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
    selected().dot(w, idx, val)
}

/// `w[idx[k]] += a·val[k]` for every k.
#[inline]
pub fn axpy<'a>(a: f64, idx: impl Into<BoundedIndices<'a>>, val: Values<'_>, w: &mut [f64]) {
    selected().axpy(a, idx, val, w)
}

/// Dot against the first member of interleaved pairs: `Σ_k vu[idx[k]][0]·val[k]`.
///
/// The averaged learners keep `[v_i, u_i]` together so that one cache line serves both.
#[inline]
pub fn dot_first<'a>(vu: &[[f64; 2]], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
    selected().dot_first(vu, idx, val)
}

/// Fused update of interleaved pairs: `vu[i][0] += a·x_i` and `vu[i][1] += b·x_i`.
#[inline]
pub fn axpy2<'a>(
    a: f64,
    b: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    vu: &mut [[f64; 2]],
) {
    selected().axpy2(a, b, idx, val, vu)
}

/// A row against blocks of weights: `acc[c] += Σ_k w[idx[k]·B + c]·val[k]` for c <
/// `acc.len()` ≤ B = `width`, where feature i owns the B entries `w[i·B..(i + 1)·B]`.
///
/// K models that step together over the same rows (one-vs-rest in one pass) keep their K
/// weights of a feature side by side: one row then reads each of its features' K weights
/// from one or two cache lines, instead of K rows each reading one weight from a line of its
/// own. Only the first `acc.len()` entries of a block are read (the weights, where the rest of
/// the block holds other sums). Each lane is summed in row order, so its result does not
/// depend on the width or on the other lanes. An index with no whole block in `w` panics, as
/// does `acc` longer than `width`; a width of 0 accepts only empty rows.
#[inline]
pub fn block_dot<'a>(
    w: &[f64],
    width: usize,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    acc: &mut [f64],
) {
    selected().block_dot(w, width, idx, val, acc)
}

/// The update of [`block_dot`]'s layout: `w[idx[k]·B + c] += coef[c]·val[k]` for c < B =
/// `coef.len()`. Each entry's update depends only on its own lane's coefficient.
#[inline]
pub fn block_axpy<'a>(
    coef: &[f64],
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    w: &mut [f64],
) {
    selected().block_axpy(coef, idx, val, w)
}

/// [`dot`] of every row of a block: `out[r] = Σ_k w[idx[k]]·val[k]` over row r's entries,
/// bit for bit what `dot` returns for that row on the same path, for one dispatch and one
/// bound check per block instead of per row (see [`RowBlock`]: on short rows, the calls
/// cost about what the arithmetic does). Panics unless `out` has one entry per row, on an
/// index past `w`, and on row offsets out of order or past the block's arrays.
#[inline]
pub fn dot_rows(w: &[f64], rows: RowBlock<'_>, out: &mut [f64]) {
    selected().dot_rows(w, rows, out)
}

/// `w += Σ_r coef[r]·x_r` over the rows of a block in order, rows whose coefficient is 0
/// skipped (they add nothing, not even a −0 or a NaN from 0·∞): bit for bit the [`axpy`] of
/// each of the other rows in turn on the same path. Panics as [`dot_rows`] does, and unless
/// `coef` has one entry per row.
#[inline]
pub fn axpy_rows(coef: &[f64], rows: RowBlock<'_>, w: &mut [f64]) {
    selected().axpy_rows(coef, rows, w)
}

/// [`dot`] over shared weights (`f64` bits in `AtomicU64`, relaxed loads).
#[inline]
pub fn dot_atomic<'a>(w: &[AtomicU64], idx: impl Into<BoundedIndices<'a>>, val: Values<'_>) -> f64 {
    atomic::dot(w, idx.into(), val)
}

/// [`axpy`] over shared weights: relaxed load, add, relaxed store for each entry.
#[inline]
pub fn axpy_atomic<'a>(
    a: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    w: &[AtomicU64],
) {
    atomic::axpy(a, idx.into(), val, w)
}

/// [`dot_first`] over shared interleaved pairs.
#[inline]
pub fn dot_first_atomic<'a>(
    vu: &[[AtomicU64; 2]],
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
) -> f64 {
    atomic::dot_first(vu, idx.into(), val)
}

/// [`axpy2`] over shared interleaved pairs.
#[inline]
pub fn axpy2_atomic<'a>(
    a: f64,
    b: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    vu: &[[AtomicU64; 2]],
) {
    atomic::axpy2(a, b, idx.into(), val, vu)
}

/// Hints the CPU to bring the entries `w[idx[k]]` into cache, for a row that will be used
/// soon (e.g. the next example while this one is being processed). Works for any entry type
/// (`f64`, `[f64; 2]`, `AtomicU64`, ...). Never changes a result; indices past the end are
/// skipped. A no-op on architectures without a prefetch instruction wired up here.
#[inline]
pub fn prefetch<T>(w: &[T], idx: &[u32]) {
    for &i in idx {
        if let Some(entry) = w.get(i as usize) {
            crate::prefetch::entry(entry);
        }
    }
}

/// Hints the CPU to bring into cache the memory `distance` bytes past `data`: every cache line
/// of the same span shifted forward. A loop that reads an array from start to end (the rows of
/// a shard in file order) calls it on the part it is about to read, so that the part it will
/// read a few rows later is on its way. The shifted span may run past the end of the array's
/// allocation: a prefetch reads nothing and never faults, so that is allowed and only wastes
/// the hint. Never changes a result.
#[inline]
pub fn prefetch_ahead<T>(data: &[T], distance: usize) {
    let start = data.as_ptr().cast::<u8>();
    let (first, lines) = lines_ahead(start as usize, core::mem::size_of_val(data), distance);
    // Pointers only, never dereferenced here; the prefetch takes any address.
    let first_line = start.with_addr(first);
    for line in 0..lines {
        crate::prefetch::address(first_line.wrapping_add(line * CACHE_LINE));
    }
}

/// Hints the CPU to bring into cache every line the kernels' loads span when they read
/// `data`, a row's indices or values: the row's own lines ([`prefetch_ahead`] at distance 0)
/// and, for a row of fewer than eight entries, the line where the eight positions ending at
/// its end begin, which the AVX-512 dot's masked tail load spans (its masked-off lanes are not
/// read, but the load waits for their line: PERF.md `#### The uniform slowdown, mended`). For
/// a row soon to be used whose memory is cold, such as a randomly sampled one. Never changes a
/// result.
#[inline]
pub fn prefetch_row<T>(data: &[T]) {
    prefetch_ahead(data, 0);
    if data.len() < TAIL_SPAN {
        // A pointer only, never dereferenced here; the prefetch takes any address.
        let tail_start = data.as_ptr().wrapping_sub(TAIL_SPAN - data.len());
        crate::prefetch::address(tail_start.cast());
    }
}

/// The positions the AVX-512 dot's tail load spans, ending at the row's end.
const TAIL_SPAN: usize = 8;

/// The cache-line size the prefetches step by (64 bytes on every x86_64 and on the aarch64
/// cores of interest; a larger line only makes some hints redundant).
const CACHE_LINE: usize = 64;

/// The cache lines covering the `bytes` bytes from `address + distance`: the first line's
/// address and how many lines.
fn lines_ahead(address: usize, bytes: usize, distance: usize) -> (usize, usize) {
    let shifted = address.wrapping_add(distance);
    let skew = shifted % CACHE_LINE;
    (shifted - skew, (skew + bytes).div_ceil(CACHE_LINE))
}

#[cfg(test)]
mod tests {
    use super::lines_ahead;

    #[test]
    fn the_shifted_span_is_covered_line_by_line() {
        // Bytes 0x104a..0x10ae: lines 0x1040 and 0x1080.
        assert_eq!(lines_ahead(0x100a, 100, 64), (0x1040, 2));
        // Exactly one aligned line, and the byte after it.
        assert_eq!(lines_ahead(0x2000, 64, 0), (0x2000, 1));
        assert_eq!(lines_ahead(0x2000, 65, 0), (0x2000, 2));
        assert_eq!(lines_ahead(0x203f, 2, 0), (0x2000, 2));
        assert_eq!(lines_ahead(0x2000, 0, 128), (0x2080, 0));
        // Past the top of the address space the span wraps; the count stays the span's.
        assert_eq!(lines_ahead(usize::MAX - 7, 16, 64), (0, 2));
    }
}
