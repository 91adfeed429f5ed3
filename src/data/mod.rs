//! Everything that reads, writes or produces training data.
//!
//! * [`open_examples`] — the entry point for learner inputs (dataset directory or text).
//! * [`csr`] — rows, the [`Examples`] trait, the owned [`CsrMatrix`].
//! * [`libsvm`] — LIBSVM / SVMlight text: the format and the simple reference reader;
//!   [`chunk`] is the fast chunk parser (numbers by [`number`]), [`stream`] runs it over a
//!   file in parallel blocks, [`convert`] streams text into a dataset, [`export`] writes it
//!   back.
//! * [`shard`] — one binary CSR shard (memory-mapped, zero-copy).
//! * [`dataset`] — a directory of shards with a manifest (per-column arrays in raw files,
//!   [`columns`]); [`writer`] builds one atomically.
//! * [`column_scales`] — each column divided by a power of two near its largest magnitude.
//! * [`column_major`] — the rows transposed in memory, for solvers that step one feature at
//!   a time.
//! * [`sample_weights`] — per-row weights of the loss, paired with a set of rows.
//! * [`class_vs_rest`] — a multiclass set seen as one class against the others.
//! * [`row_subset`] — some of a set's rows as a set (those trained on beside a holdout).

pub mod chunk;
pub mod class_vs_rest;
pub mod column_major;
pub mod column_scales;
pub mod columns;
pub mod convert;
pub mod csr;
pub mod dataset;
pub mod error;
pub mod export;
pub mod libsvm;
pub mod number;
mod row_checks;
pub mod row_subset;
pub mod sample_weights;
pub mod shard;
pub mod source;
pub mod stats;
pub mod stream;
pub mod synth;
pub mod vw;
pub mod writer;

pub use class_vs_rest::ClassVsRest;
pub use csr::{CsrError, CsrMatrix, Examples, Row, ValueVec};
pub use dataset::{Dataset, DatasetExamples, DatasetRows, Manifest};
pub use error::DataError;
pub use row_subset::RowSubset;
pub use sample_weights::{SampleWeightError, SampleWeighted};
pub use shard::{Shard, ShardParts, ShardRows, ValueKind};
pub use source::{ExampleRows, ExampleSet, open_examples};
pub use sparselin_kernels::{BoundedIndices, Values};
pub use writer::{DatasetWriter, FinishOptions};
