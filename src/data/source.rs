//! [`open_examples`]: one entry point for learner inputs, whatever their form.

use std::ops::Range;
use std::path::Path;

use sparselin_kernels::RowBlock;

use super::column_scales::ColumnScales;
use super::csr::{CsrMatrix, Examples, Row};
use super::dataset::{Dataset, DatasetExamples, DatasetRows};
use super::error::DataError;
use super::libsvm::{self, ParseOptions};

/// Validated examples from a dataset directory or a LIBSVM text file.
#[derive(Debug)]
pub enum ExampleSet {
    /// Memory-mapped binary shards (`sparselin convert` / `gen` output).
    Dataset(DatasetExamples),
    /// LIBSVM text parsed into memory.
    Matrix(CsrMatrix),
}

/// Open `path` for training, prediction or evaluation: a dataset directory (shards and a
/// manifest; its rows are validated once, in parallel) or a LIBSVM text file, optionally
/// gzip-compressed, or `-` for standard input (read into memory by the same chunk-parallel
/// parser as `sparselin convert`).
///
/// `options.n_features`, when given, declares the column count (e.g. a model's) and must not
/// be below the data's. `zero_based` and `value_type` apply to text only: a dataset keeps
/// the value type it was converted with.
pub fn open_examples(path: &Path, options: ParseOptions) -> Result<ExampleSet, DataError> {
    if path.is_dir() {
        let examples = Dataset::open(path)?.into_examples()?;
        return Ok(ExampleSet::Dataset(match options.n_features {
            Some(n) => examples.with_n_features(n)?,
            None => examples,
        }));
    }
    Ok(ExampleSet::Matrix(libsvm::read_file(path, options)?))
}

impl ExampleSet {
    /// The same rows with each column divided by its scale (`scales` in this set's column
    /// numbering; see [`ColumnScales`]): a dataset's values are copied into memory and
    /// scaled, a text set's scaled in place. An error if a scaled value overflows, naming
    /// the dataset, or `path` for text.
    pub fn scaled(self, scales: &ColumnScales, path: &Path) -> Result<ExampleSet, DataError> {
        match self {
            ExampleSet::Dataset(d) => Ok(ExampleSet::Dataset(d.scaled(scales)?)),
            ExampleSet::Matrix(m) => match scales.scale_matrix(m) {
                Ok(m) => Ok(ExampleSet::Matrix(m)),
                Err(e) => Err(DataError::invalid(
                    path,
                    format!("divided by its column's scale, {e}"),
                )),
            },
        }
    }

    /// The sample weights a dataset stores ([`Dataset::sample_weights`]), read now; `None`
    /// for a dataset without them and for text (which carries none).
    pub fn stored_sample_weights(&self) -> Result<Option<Vec<f64>>, DataError> {
        match self {
            ExampleSet::Dataset(d) => d.dataset().sample_weights(),
            ExampleSet::Matrix(_) => Ok(None),
        }
    }

    /// Internal column index → original feature id, when the dataset's features were
    /// renumbered; `None` means the identity. Model writers map weights back through it.
    pub fn feature_permutation(&self) -> Option<&[u32]> {
        match self {
            ExampleSet::Dataset(d) => d.dataset().feature_permutation(),
            ExampleSet::Matrix(_) => None,
        }
    }
}

impl Examples for ExampleSet {
    fn n_rows(&self) -> usize {
        match self {
            ExampleSet::Dataset(d) => d.n_rows(),
            ExampleSet::Matrix(m) => m.n_rows(),
        }
    }

    fn n_features(&self) -> usize {
        match self {
            ExampleSet::Dataset(d) => d.n_features(),
            ExampleSet::Matrix(m) => m.n_features(),
        }
    }

    #[inline]
    fn row(&self, i: usize) -> Row<'_> {
        match self {
            ExampleSet::Dataset(d) => d.row(i),
            ExampleSet::Matrix(m) => m.row(i),
        }
    }

    fn nnz(&self) -> u64 {
        match self {
            ExampleSet::Dataset(d) => d.nnz(),
            ExampleSet::Matrix(m) => m.nnz(),
        }
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        match self {
            ExampleSet::Dataset(d) => d.prefetch_extent(i),
            ExampleSet::Matrix(m) => m.prefetch_extent(i),
        }
    }

    #[inline]
    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        match self {
            ExampleSet::Dataset(d) => d.for_each_block(rows, visit),
            ExampleSet::Matrix(m) => m.for_each_block(rows, visit),
        }
    }

    type Rows<'a> = ExampleRows<'a>;

    fn rows(&self) -> ExampleRows<'_> {
        match self {
            ExampleSet::Dataset(d) => ExampleRows::Dataset(d.rows()),
            ExampleSet::Matrix(m) => ExampleRows::Matrix(m),
        }
    }
}

/// The view of an [`ExampleSet`] for hot loops ([`Examples::rows`]): its form's own view.
#[derive(Debug)]
pub enum ExampleRows<'a> {
    /// Of a memory-mapped dataset.
    Dataset(DatasetRows<'a>),
    /// Of a matrix in memory (the matrix).
    Matrix(&'a CsrMatrix),
}

impl<'a> Examples for ExampleRows<'a> {
    fn n_rows(&self) -> usize {
        match self {
            ExampleRows::Dataset(d) => d.n_rows(),
            ExampleRows::Matrix(m) => m.n_rows(),
        }
    }

    fn n_features(&self) -> usize {
        match self {
            ExampleRows::Dataset(d) => d.n_features(),
            ExampleRows::Matrix(m) => m.n_features(),
        }
    }

    #[inline(always)]
    fn row(&self, i: usize) -> Row<'_> {
        match self {
            ExampleRows::Dataset(d) => d.row(i),
            ExampleRows::Matrix(m) => m.row(i),
        }
    }

    fn nnz(&self) -> u64 {
        match self {
            ExampleRows::Dataset(d) => d.nnz(),
            ExampleRows::Matrix(m) => m.nnz(),
        }
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        match self {
            ExampleRows::Dataset(d) => d.prefetch_extent(i),
            ExampleRows::Matrix(m) => m.prefetch_extent(i),
        }
    }

    #[inline]
    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        match self {
            ExampleRows::Dataset(d) => d.for_each_block(rows, visit),
            ExampleRows::Matrix(m) => m.for_each_block(rows, visit),
        }
    }

    type Rows<'b>
        = &'b ExampleRows<'a>
    where
        Self: 'b;

    fn rows(&self) -> &ExampleRows<'a> {
        self
    }
}
