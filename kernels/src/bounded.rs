//! Index slices that carry a proof of their bound, so that the sparse kernels check a row in
//! O(1) instead of scanning it.
//!
//! A kernel may run its unchecked loop only when every index of the row is below the length
//! of the weights. A plain `&[u32]` proves nothing, so the kernels find its largest index
//! (a SIMD scan) on every call. A [`BoundedIndices`] holds a slice together with a bound
//! that every entry is below; the bound can be established only here, by scanning
//! ([`BoundedIndices::scan`], or the `From` conversions the plain kernel API goes through),
//! and survives sub-slicing ([`BoundedIndices::slice`]). A data set's whole index array is
//! scanned once — [`IndexVec`] for owned arrays, [`crate::mmap::IndexedMap`] for memory-mapped
//! shards — and each row is an O(1) sub-slice of it; a kernel then only compares the bound
//! with the length of the weights.

use std::ops::{Deref, Range};

use crate::dispatch::selected;

/// A slice of `u32` indices, each below [`BoundedIndices::bound`].
///
/// Cheap to copy (a slice and a number). Dereferences to the slice; equality compares the
/// entries only, not the bounds.
#[derive(Clone, Copy)]
pub struct BoundedIndices<'a> {
    idx: &'a [u32],
    /// Every entry of `idx` is below it. Private, so that only the constructors here (which
    /// scan, or narrow an already proven slice) can set it.
    bound: usize,
}

impl<'a> BoundedIndices<'a> {
    /// Scans `idx` once for its largest entry (SIMD on the dispatched path): the bound is that
    /// entry plus one, or 0 for an empty slice. O(len).
    #[inline]
    pub fn scan(idx: &'a [u32]) -> Self {
        let bound = selected().max_index(idx).map_or(0, |max| max as usize + 1);
        BoundedIndices { idx, bound }
    }

    /// An empty slice (bound 0).
    pub const EMPTY: BoundedIndices<'static> = BoundedIndices { idx: &[], bound: 0 };

    /// A slice whose bound the caller has established (a cached scan of memory that cannot
    /// have changed since, see [`crate::mmap::IndexedMap`]).
    #[inline]
    pub(crate) fn proven(idx: &'a [u32], bound: usize) -> Self {
        BoundedIndices { idx, bound }
    }

    /// Every index is below this (the tightest bound known: the largest entry of the slice
    /// this one was cut from, plus one).
    #[inline]
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// The indices.
    #[inline]
    pub fn as_slice(&self) -> &'a [u32] {
        self.idx
    }

    /// Entries `range` (O(1)); they keep the bound, since they are entries of this slice.
    /// Panics when `range` is out of order or past the end, like slice indexing.
    #[inline]
    pub fn slice(&self, range: Range<usize>) -> BoundedIndices<'a> {
        BoundedIndices {
            idx: &self.idx[range],
            bound: self.bound,
        }
    }

    /// Panics unless the bound fits weights of length `len`: after it, every index is a
    /// valid position in them. O(1).
    #[inline]
    pub(crate) fn check_within(&self, len: usize) {
        assert!(
            self.bound <= len,
            "index out of bounds: the len is {len} but an index is {}",
            self.bound.saturating_sub(1)
        );
    }
}

impl<'a> From<&'a [u32]> for BoundedIndices<'a> {
    /// Scans the slice ([`BoundedIndices::scan`]): the plain kernel API's per-row check.
    #[inline]
    fn from(idx: &'a [u32]) -> Self {
        BoundedIndices::scan(idx)
    }
}

impl<'a> From<&'a Vec<u32>> for BoundedIndices<'a> {
    /// Scans the vector's entries.
    #[inline]
    fn from(idx: &'a Vec<u32>) -> Self {
        BoundedIndices::scan(idx)
    }
}

impl<'a, const N: usize> From<&'a [u32; N]> for BoundedIndices<'a> {
    /// Scans the array's entries.
    #[inline]
    fn from(idx: &'a [u32; N]) -> Self {
        BoundedIndices::scan(idx)
    }
}

impl Deref for BoundedIndices<'_> {
    type Target = [u32];

    #[inline]
    fn deref(&self) -> &[u32] {
        self.idx
    }
}

impl<'a> IntoIterator for BoundedIndices<'a> {
    type Item = &'a u32;
    type IntoIter = std::slice::Iter<'a, u32>;

    fn into_iter(self) -> Self::IntoIter {
        self.idx.iter()
    }
}

impl std::fmt::Debug for BoundedIndices<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.idx.fmt(f)
    }
}

impl PartialEq for BoundedIndices<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.idx == other.idx
    }
}

impl PartialEq<[u32]> for BoundedIndices<'_> {
    fn eq(&self, other: &[u32]) -> bool {
        self.idx == other
    }
}

impl PartialEq<&[u32]> for BoundedIndices<'_> {
    fn eq(&self, other: &&[u32]) -> bool {
        self.idx == *other
    }
}

impl<const N: usize> PartialEq<&[u32; N]> for BoundedIndices<'_> {
    fn eq(&self, other: &&[u32; N]) -> bool {
        self.idx == *other
    }
}

/// An owned index array scanned once for its bound: hands out [`BoundedIndices`] of any of
/// its ranges in O(1). Immutable, so the bound stays true.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexVec {
    idx: Vec<u32>,
    bound: usize,
}

impl IndexVec {
    /// Takes `idx` and scans it once (O(len)).
    pub fn new(idx: Vec<u32>) -> Self {
        let bound = BoundedIndices::scan(&idx).bound;
        IndexVec { idx, bound }
    }

    /// All indices, with their bound.
    #[inline]
    pub fn bounded(&self) -> BoundedIndices<'_> {
        BoundedIndices {
            idx: &self.idx,
            bound: self.bound,
        }
    }

    /// All indices.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.idx
    }

    /// The vector back.
    pub fn into_vec(self) -> Vec<u32> {
        self.idx
    }
}
