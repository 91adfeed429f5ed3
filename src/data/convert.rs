//! Streaming text (LIBSVM, or Vowpal Wabbit's) → dataset conversion (`sparselin convert`).
//!
//! The text is parsed by the shared chunk-parallel pipeline ([`parse_text`]); the rows are
//! appended in order to a shard buffer that is written out every `rows_per_shard` rows.
//! Memory is bounded by a few blocks plus one shard, never the file. Output goes through
//! [`DatasetWriter`]: an error leaves no output directory behind.

use std::path::{Path, PathBuf};

use sparselin_kernels::Values;

use super::chunk::ChunkRows;
use super::error::DataError;
use super::libsvm::ValueType;
use super::number::TextValue;
use super::shard::{ShardParts, ValueKind};
use super::stream::{BLOCK_BYTES, TextFormat, parse_text};
use super::writer::{DatasetWriter, FinishOptions};

/// Whether to store values or only the positions of the non-zeros.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Storage {
    /// Drop the value sections when every value is 1.0 (binary data), keep them otherwise.
    #[default]
    Auto,
    /// Always drop the values: every stored entry reads as 1.0.
    Binary,
    /// Always keep the values.
    Values,
}

/// How to convert.
#[derive(Clone, Debug)]
pub struct ConvertOptions {
    /// The text's format.
    pub format: TextFormat,
    /// A file of one sample weight per row (as `train --sample-weights` reads), stored in
    /// the dataset. Vowpal Wabbit text carries its own (importance weights) instead.
    pub sample_weights: Option<PathBuf>,
    /// Precision of stored values.
    pub value_type: ValueType,
    /// Binary storage: auto-detected, forced, or never.
    pub storage: Storage,
    /// Rows per shard (the last shard may hold fewer).
    pub rows_per_shard: usize,
    /// Declared column count; `None` takes the largest index seen plus one (LIBSVM), or
    /// 2^bits (Vowpal Wabbit text, whose count is its hash's, and which refuses another).
    pub n_features: Option<usize>,
    /// Renumber features by descending frequency (permutation kept in the manifest).
    pub renumber_by_frequency: bool,
    /// Bytes of text read per block (each block is parsed in parallel).
    pub block_bytes: usize,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            format: TextFormat::Libsvm { zero_based: false },
            sample_weights: None,
            value_type: ValueType::F32,
            storage: Storage::Auto,
            rows_per_shard: 1 << 17,
            n_features: None,
            renumber_by_frequency: false,
            block_bytes: BLOCK_BYTES,
        }
    }
}

/// What a conversion produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvertSummary {
    /// Rows written.
    pub rows: u64,
    /// Columns of the dataset.
    pub columns: u64,
    /// Stored entries.
    pub nnz: u64,
    /// Shards written.
    pub shards: usize,
    /// How values are stored.
    pub value_type: ValueKind,
    /// Whether the dataset stores sample weights (not all 1).
    pub sample_weights: bool,
    /// Bytes of (uncompressed) text read.
    pub text_bytes: u64,
}

/// Rows waiting to be written as a shard.
struct ShardBuffer<V> {
    labels: Vec<f64>,
    /// The rows' importance weights, when the text has them.
    weights: Vec<f64>,
    offsets: Vec<u64>,
    indices: Vec<u32>,
    values: Vec<V>,
}

impl<V: TextValue> ShardBuffer<V> {
    fn append(&mut self, rows: &ChunkRows<V>) {
        let base = self.indices.len() as u64;
        self.labels.extend_from_slice(&rows.labels);
        self.weights.extend_from_slice(&rows.weights);
        self.offsets
            .extend(rows.offsets[1..].iter().map(|&o| o + base));
        self.indices.extend_from_slice(&rows.indices);
        self.values.extend_from_slice(&rows.values);
    }

    /// Write the first `rows` rows as a shard and keep the rest.
    fn emit(
        &mut self,
        rows: usize,
        writer: &mut DatasetWriter,
        kind: ValueKind,
        columns: usize,
    ) -> Result<(), DataError> {
        let end = self.offsets[rows] as usize;
        let values = match kind {
            ValueKind::Ones => Values::Ones,
            ValueKind::F32 | ValueKind::F64 => V::values(&self.values[..end]),
        };
        writer.write_shard(&ShardParts {
            labels: &self.labels[..rows],
            offsets: &self.offsets[..=rows],
            indices: &self.indices[..end],
            values,
            n_features: columns,
        })?;
        if !self.weights.is_empty() {
            writer.add_sample_weights(&self.weights[..rows]);
            self.weights.drain(..rows);
        }
        self.labels.drain(..rows);
        self.offsets.drain(..rows);
        self.offsets.iter_mut().for_each(|o| *o -= end as u64);
        self.indices.drain(..end);
        self.values.drain(..end);
        Ok(())
    }
}

/// Convert the text at `input` (`-` for standard input; gzip recognized) into a new
/// dataset directory `output`.
pub fn convert(
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
) -> Result<ConvertSummary, DataError> {
    convert_with_progress(input, output, options, &mut |_| {})
}

/// [`convert`], reporting the bytes of text read so far to `progress` after every block.
pub fn convert_with_progress(
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ConvertSummary, DataError> {
    // `-` names standard input as an input; as the output it would silently make a directory
    // of that name, where the user most likely meant standard output.
    if output == Path::new("-") {
        return Err(DataError::invalid(
            output,
            "the output is a dataset directory, which standard output cannot hold: name a \
             directory (./- for one literally named -)",
        ));
    }
    match options.value_type {
        ValueType::F32 => convert_typed::<f32>(input, output, options, progress),
        ValueType::F64 => convert_typed::<f64>(input, output, options, progress),
    }
}

fn convert_typed<V: TextValue>(
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ConvertSummary, DataError> {
    let rows_per_shard = options.rows_per_shard.max(1);
    let kind = match (options.storage, options.value_type) {
        (Storage::Binary, _) => ValueKind::Ones,
        (_, ValueType::F32) => ValueKind::F32,
        (_, ValueType::F64) => ValueKind::F64,
    };
    // A declared count beyond 2^32 is refused before anything is written.
    let declared = options.format.declared_columns(input, options.n_features)?;
    let file_weights = match (&options.sample_weights, &options.format) {
        (Some(path), TextFormat::Vw { .. }) => {
            return Err(DataError::invalid(
                path,
                "Vowpal Wabbit text gives its rows' weights itself (importance weights): \
                 a weight file would be a second set",
            ));
        }
        (Some(path), _) => Some((path, super::sample_weights::read(path)?)),
        (None, _) => None,
    };
    let mut writer = DatasetWriter::create(output, kind)?;
    let mut buffer = ShardBuffer::<V> {
        labels: Vec::new(),
        weights: Vec::new(),
        offsets: vec![0],
        indices: Vec::new(),
        values: Vec::new(),
    };
    let (mut columns, mut all_ones) = (0usize, true);
    // An index beyond the declared count stops the conversion as it is parsed, before the
    // column statistics are sized by it.
    let text = parse_text::<V>(
        input,
        &options.format,
        declared,
        options.block_bytes,
        progress,
        |rows| {
            columns = columns.max(rows.columns);
            all_ones &= rows.all_ones;
            buffer.append(rows);
            while buffer.labels.len() >= rows_per_shard {
                buffer.emit(rows_per_shard, &mut writer, kind, columns)?;
            }
            Ok(())
        },
    )?;
    if !buffer.labels.is_empty() || writer.rows() == 0 {
        let rows = buffer.labels.len();
        buffer.emit(rows, &mut writer, kind, columns)?;
    }
    if let Some((path, weights)) = file_weights {
        super::sample_weights::check(&weights, writer.rows() as usize).map_err(|e| {
            DataError::invalid(path, format!("{e}, the rows of {}", input.display()))
        })?;
        writer.add_sample_weights(&weights);
    }
    if let TextFormat::Vw { hashing, .. } = &options.format {
        writer.record_vw_features(hashing.rules());
    }
    let columns = declared.unwrap_or(columns);
    let manifest = writer.finish(FinishOptions {
        columns: Some(columns),
        renumber_by_frequency: options.renumber_by_frequency,
        drop_values: options.storage == Storage::Auto && all_ones,
        column_statistics: true,
    })?;
    Ok(ConvertSummary {
        rows: manifest.rows,
        columns: manifest.columns,
        nnz: manifest.nnz,
        shards: manifest.shards.len(),
        value_type: manifest.value_type,
        sample_weights: manifest.sample_weights.is_some(),
        text_bytes: text.bytes,
    })
}
