//! [`DatasetRows`]: the view of a [`DatasetExamples`] that hot loops read rows through.
//!
//! [`DatasetExamples::row`] finds the row's shard and then views that shard's sections again
//! (slices of the map, cast to their types, the index bound fetched) for every row. The view
//! does that once per shard, when built ([`Examples::rows`]), so that a row costs the shard
//! lookup and a few slice operations.

use std::ops::Range;

use sparselin_kernels::RowBlock;

use super::DatasetExamples;
use crate::data::csr::{Examples, Row};
use crate::data::shard::ShardRows;

/// The rows of a [`DatasetExamples`], with every shard's sections viewed once. Equal to the
/// dataset row for row; built by [`Examples::rows`], once per pass or training run.
#[derive(Debug)]
pub struct DatasetRows<'a> {
    examples: &'a DatasetExamples,
    /// One view per shard, in row order.
    shards: Vec<ShardRows<'a>>,
    /// The dataset's row count, kept here for the bound check of every row: reading it
    /// through `examples` cost two instructions more per row (callgrind).
    n_rows: usize,
}

impl<'a> DatasetRows<'a> {
    pub(super) fn new(examples: &'a DatasetExamples) -> Self {
        DatasetRows {
            examples,
            shards: (0..examples.dataset.shards.len())
                .map(|s| examples.shard_rows(s))
                .collect(),
            n_rows: examples.n_rows(),
        }
    }
}

impl<'a> Examples for DatasetRows<'a> {
    fn n_rows(&self) -> usize {
        self.n_rows
    }

    fn n_features(&self) -> usize {
        self.examples.n_features()
    }

    #[inline(always)]
    fn row(&self, i: usize) -> Row<'_> {
        assert!(i < self.n_rows, "row {i} of {}", self.n_rows);
        let (shard, local) = self.examples.locate(i);
        self.shards[shard].row(local)
    }

    fn nnz(&self) -> u64 {
        self.examples.nnz()
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        if i < self.n_rows {
            let (shard, local) = self.examples.locate(i);
            self.shards[shard].prefetch_extent(local);
        }
    }

    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        self.examples
            .blocks_by_shard(rows, |s| self.shards[s], visit);
    }

    type Rows<'b>
        = &'b DatasetRows<'a>
    where
        Self: 'b;

    fn rows(&self) -> &DatasetRows<'a> {
        self
    }
}
