//! Consecutive rows of a CSR matrix, the unit of the row-block kernels.

use std::ops::Range;

use crate::{BoundedIndices, Values};

/// Rows `0..len()` of a CSR matrix: row r is entries `offsets[r]..offsets[r + 1]` of the
/// indices and values (positions in those arrays, which need not start at 0).
///
/// A pass over short rows pays for each kernel call (the dispatch, the argument checks, the
/// call) about as much as for the row's arithmetic: on 13-entry rows a bare loop of the
/// arithmetic takes half the time of a loop of `sparse::dot` calls (PERF.md `## Kernels`,
/// "Row blocks"). [`crate::sparse::dot_rows`] and [`crate::sparse::axpy_rows`] take a block
/// instead, and pay once per block. The value count is checked here, the indices' bound once
/// per kernel call, and each row's offsets as the kernel reads them: an offset pair out of
/// order or past the arrays panics, like slice indexing.
#[derive(Clone, Copy, Debug)]
pub struct RowBlock<'a> {
    offsets: &'a [u64],
    indices: BoundedIndices<'a>,
    values: Values<'a>,
}

impl<'a> RowBlock<'a> {
    /// The `offsets.len() − 1` rows that `offsets` cut from `indices` and `values`. Panics
    /// when `offsets` is empty or the values are not as many as the indices.
    #[inline]
    pub fn new(offsets: &'a [u64], indices: BoundedIndices<'a>, values: Values<'a>) -> Self {
        assert!(!offsets.is_empty(), "a row block needs rows + 1 offsets");
        if let Some(n) = values.len() {
            assert_eq!(n, indices.len(), "index and value slices differ in length");
        }
        RowBlock {
            offsets,
            indices,
            values,
        }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the block has no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows `range` of this block (O(1)). Panics when `range` is out of order or past the
    /// last row, like slice indexing.
    #[inline]
    pub fn rows(&self, range: Range<usize>) -> RowBlock<'a> {
        RowBlock {
            offsets: &self.offsets[range.start..range.end + 1],
            ..*self
        }
    }

    /// The row offsets, one more than the rows.
    #[inline]
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }

    /// The index array the offsets point into.
    #[inline]
    pub fn indices(&self) -> BoundedIndices<'a> {
        self.indices
    }

    /// The values, parallel to [`indices`](Self::indices).
    #[inline]
    pub fn values(&self) -> Values<'a> {
        self.values
    }
}
