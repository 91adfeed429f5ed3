//! Consecutive rows of a CSR matrix, the unit of the row-block kernels.

use std::ops::Range;

use crate::prefetch;
use crate::{BoundedIndices, Values};

/// How far past the entries being read the row-block kernels ask for the next ones, in bytes
/// of indices: about seven rows of rcv1-like (~300 bytes of indices per row). File-order ASGD
/// on rcv1-like measured 2 and 4 KiB alike, 1 KiB short of them (PERF.md `## Online
/// learners`, session 17).
pub const STREAM_AHEAD_BYTES: usize = 2048;

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
///
/// Before each row the kernels ask for the memory [`STREAM_AHEAD_BYTES`] past it (as far in
/// values as in indices), each cache line once: a block is read front to back, and without
/// the requests a pass over rcv1-like (480 MB) took 1.1–1.75× the time (PERF.md `## Kernels`,
/// "Row blocks").
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

/// The prefetch requests of a row-block kernel over one block: the cache lines up to
/// [`STREAM_AHEAD_BYTES`] past the entries read so far (as many values), each line once.
/// Requests go out a cache line of indices (16 entries) at a time, so that most rows of a few
/// entries cost one comparison; before a short row they reach eight lines further at once, so
/// that a run of short rows asks once per eight lines, not once per row or two.
pub(crate) struct StreamAhead {
    /// Entries from this position on have not been asked for.
    next: u64,
    /// The first index.
    indices: *const u32,
    /// The first value, and the size of a value (0 for binary rows: no array).
    values: (*const u8, usize),
}

/// [`STREAM_AHEAD_BYTES`] in entries (of 4-byte indices).
const AHEAD_ENTRIES: u64 = (STREAM_AHEAD_BYTES / 4) as u64;

/// Entries per cache line of indices: the step of the requests.
const LINE_ENTRIES: u64 = 16;

/// Rows of fewer entries than this (two lines of indices) are short: before one, the requests
/// reach [`SHORT_ROW_BURST_ENTRIES`] further. On rows of 13 entries a request per row made a
/// pass of `dot_rows` up to 1.6× as long as one with no requests at all, and asking eight
/// lines at a time won most of that back; on rows of 76 asking so far ahead cost 3–6%
/// (PERF.md `## Kernels`, "Short rows").
const SHORT_ROW_ENTRIES: u64 = 2 * LINE_ENTRIES;

/// How much further the requests reach before a short row: seven lines of indices.
const SHORT_ROW_BURST_ENTRIES: u64 = 7 * LINE_ENTRIES;

impl StreamAhead {
    /// Requests for `block`, none made yet.
    pub(crate) fn new(block: &RowBlock<'_>) -> Self {
        StreamAhead {
            next: 0,
            indices: block.indices.as_slice().as_ptr(),
            values: match block.values {
                Values::Ones => (core::ptr::null(), 0),
                Values::F32(v) => (v.as_ptr().cast(), 4),
                Values::F64(v) => (v.as_ptr().cast(), 8),
            },
        }
    }

    /// The kernel is about to read the entries `entries`: ask for those from
    /// [`STREAM_AHEAD_BYTES`] past their start to as far past their end (and
    /// [`SHORT_ROW_BURST_ENTRIES`] beyond that for a short row), less those asked for already
    /// (entries skipped since the last call are not asked for).
    #[inline(always)]
    pub(crate) fn before(&mut self, entries: Range<u64>) {
        let to = entries.end.saturating_add(AHEAD_ENTRIES);
        if to > self.next {
            let burst = if entries.end - entries.start < SHORT_ROW_ENTRIES {
                SHORT_ROW_BURST_ENTRIES
            } else {
                0
            };
            self.request(
                entries.start.saturating_add(AHEAD_ENTRIES),
                to.saturating_add(burst),
            );
        }
    }

    /// Asks for entries `from..to` but those before `next`, a line of indices at a time.
    fn request(&mut self, from: u64, to: u64) {
        let (values, size) = self.values;
        let mut entry = self.next.max(from);
        while entry < to {
            // The addresses are only hints: never dereferenced, and a request past an
            // array's allocation is allowed (it faults nothing, see `prefetch::address`).
            let at = entry as usize;
            prefetch::address(self.indices.wrapping_add(at).cast());
            if size != 0 {
                let value = values.wrapping_add(at * size);
                prefetch::address(value);
                if size == 8 {
                    prefetch::address(value.wrapping_add(64));
                }
            }
            entry += LINE_ENTRIES;
        }
        self.next = entry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexVec;

    #[test]
    fn requests_reach_further_before_short_rows_only() {
        let indices = IndexVec::new(vec![0; 1000]);
        let offsets = [0, 1000];
        let block = RowBlock::new(&offsets, indices.bounded(), Values::Ones);
        let mut ahead = StreamAhead::new(&block);
        // A short row: a line past STREAM_AHEAD_BYTES beyond its end, and seven more.
        ahead.before(0..13);
        assert_eq!(ahead.next, AHEAD_ENTRIES + 8 * LINE_ENTRIES);
        // Rows within what was asked for ask nothing.
        ahead.before(13..26);
        ahead.before(26..126);
        assert_eq!(ahead.next, AHEAD_ENTRIES + 8 * LINE_ENTRIES);
        // A long row asks only as far as STREAM_AHEAD_BYTES past its end, a line at a time.
        ahead.before(126..226);
        assert_eq!(
            ahead.next,
            AHEAD_ENTRIES + 8 * LINE_ENTRIES + 7 * LINE_ENTRIES
        );
        assert!(
            ahead.next >= 226 + AHEAD_ENTRIES && ahead.next < 226 + AHEAD_ENTRIES + LINE_ENTRIES
        );
    }
}
