//! Streaming LIBSVM text → dataset conversion (`sparselin convert`).
//!
//! A reader thread pulls newline-aligned blocks from the input (plain, gzip, or standard
//! input), the blocks are split into pieces parsed in parallel with rayon ([`parse_chunk`]),
//! and the rows are appended in order to a shard buffer that is written out every
//! `rows_per_shard` rows. Memory is bounded by a few blocks plus one shard, never the file.
//! Output goes through [`DatasetWriter`]: an error leaves no output directory behind.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};

use flate2::read::MultiGzDecoder;
use rayon::prelude::*;
use sparselin_kernels::Values;

use super::chunk::{ChunkRows, parse_chunk_into, split_at_newlines};
use super::error::DataError;
use super::libsvm::{LibsvmError, ValueType};
use super::shard::{ShardParts, ValueKind};
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
#[derive(Clone, Copy, Debug)]
pub struct ConvertOptions {
    /// Indices in the text start at 0 instead of 1.
    pub zero_based: bool,
    /// Precision of stored values.
    pub value_type: ValueType,
    /// Binary storage: auto-detected, forced, or never.
    pub storage: Storage,
    /// Rows per shard (the last shard may hold fewer).
    pub rows_per_shard: usize,
    /// Declared column count; `None` takes the largest index seen plus one.
    pub n_features: Option<usize>,
    /// Renumber features by descending frequency (permutation kept in the manifest).
    pub renumber_by_frequency: bool,
    /// Bytes of text read per block (each block is parsed in parallel).
    pub block_bytes: usize,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            zero_based: false,
            value_type: ValueType::F32,
            storage: Storage::Auto,
            rows_per_shard: 1 << 17,
            n_features: None,
            renumber_by_frequency: false,
            block_bytes: 16 << 20,
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
    /// Bytes of (uncompressed) text read.
    pub text_bytes: u64,
}

/// Open `input` (`-` for standard input) as a byte stream, decompressing gzip (recognized by
/// its magic bytes).
pub fn open_text(input: &Path) -> Result<Box<dyn Read + Send>, DataError> {
    let mut reader: Box<dyn BufRead + Send> = if input == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let file = File::open(input).map_err(|e| DataError::io(input, e))?;
        Box::new(BufReader::with_capacity(1 << 20, file))
    };
    let gzip = reader
        .fill_buf()
        .map_err(|e| DataError::io(input, e))?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(MultiGzDecoder::new(reader))
    } else {
        reader
    })
}

/// Rows waiting to be written as a shard.
#[derive(Default)]
struct ShardBuffer {
    labels: Vec<f64>,
    offsets: Vec<u64>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl ShardBuffer {
    fn append(&mut self, rows: &ChunkRows) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let base = self.indices.len() as u64;
        self.labels.extend_from_slice(&rows.labels);
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
        let f32s: Vec<f32>;
        let values = match kind {
            ValueKind::Ones => Values::Ones,
            ValueKind::F32 => {
                f32s = self.values[..end].iter().map(|&v| v as f32).collect();
                Values::F32(&f32s)
            }
            ValueKind::F64 => Values::F64(&self.values[..end]),
        };
        writer.write_shard(&ShardParts {
            labels: &self.labels[..rows],
            offsets: &self.offsets[..=rows],
            indices: &self.indices[..end],
            values,
            n_features: columns,
        })?;
        self.labels.drain(..rows);
        self.offsets.drain(..rows);
        self.offsets.iter_mut().for_each(|o| *o -= end as u64);
        self.indices.drain(..end);
        self.values.drain(..end);
        Ok(())
    }
}

/// Convert the LIBSVM text at `input` (`-` for standard input; gzip recognized) into a new
/// dataset directory `output`.
pub fn convert(
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
) -> Result<ConvertSummary, DataError> {
    let rows_per_shard = options.rows_per_shard.max(1);
    let name = if input == Path::new("-") {
        "<stdin>".to_string()
    } else {
        input.display().to_string()
    };
    let kind = match (options.storage, options.value_type) {
        (Storage::Binary, _) => ValueKind::Ones,
        (_, ValueType::F32) => ValueKind::F32,
        (_, ValueType::F64) => ValueKind::F64,
    };
    let reader = open_text(input)?;
    let mut writer = DatasetWriter::create(output, kind)?;
    let mut buffer = ShardBuffer::default();
    let (mut lines, mut columns, mut text_bytes, mut all_ones) = (0u64, 0usize, 0u64, true);
    let pieces = rayon::current_num_threads() * 4;
    // Parse buffers, one per piece, reused across blocks.
    let mut parsed: Vec<ChunkRows> = Vec::new();
    std::thread::scope(|scope| -> Result<(), DataError> {
        let (send, receive) = sync_channel(2);
        let (recycle, reuse) = channel::<Vec<u8>>();
        let block_bytes = options.block_bytes.max(1);
        scope.spawn(move || {
            let fresh = || reuse.try_recv().unwrap_or_default();
            read_blocks(reader, block_bytes, fresh, |block| send.send(block).is_ok())
        });
        for block in receive {
            let block = block.map_err(|e| DataError::io(input, e))?;
            text_bytes += block.len() as u64;
            let split = split_at_newlines(&block, pieces);
            if parsed.len() < split.len() {
                parsed.resize_with(split.len(), ChunkRows::default);
            }
            let results: Vec<_> = split
                .par_iter()
                .zip(parsed.par_iter_mut())
                .map(|(piece, rows)| parse_chunk_into(piece, options.zero_based, rows))
                .collect();
            for (result, rows) in results.into_iter().zip(&parsed) {
                result.map_err(|e| LibsvmError::Syntax {
                    file: name.clone(),
                    line: lines + e.line,
                    column: e.column,
                    message: e.message,
                })?;
                lines += rows.lines;
                columns = columns.max(rows.columns);
                all_ones &= rows.all_ones;
                buffer.append(rows);
                while buffer.labels.len() >= rows_per_shard {
                    buffer.emit(rows_per_shard, &mut writer, kind, columns)?;
                }
            }
            // Hand the block back to the reader: no fresh allocation (and page faults) per block.
            let _ = recycle.send(block);
        }
        Ok(())
    })?;
    if !buffer.labels.is_empty() || writer.rows() == 0 {
        let rows = buffer.labels.len();
        if buffer.offsets.is_empty() {
            buffer.offsets.push(0);
        }
        buffer.emit(rows, &mut writer, kind, columns)?;
    }
    if let Some(n) = options.n_features.filter(|&n| n < columns) {
        return Err(DataError::invalid(
            input,
            format!(
                "index {} is beyond the declared {n} features",
                columns - usize::from(options.zero_based)
            ),
        ));
    }
    let manifest = writer.finish(FinishOptions {
        columns: Some(options.n_features.unwrap_or(columns)),
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
        text_bytes,
    })
}

/// Read `reader` in blocks of about `block_bytes` that end just after a newline (a line
/// longer than a block makes a longer block), handing each to `sink` until it returns false.
/// Block buffers come from `fresh` (recycled ones when available).
fn read_blocks(
    mut reader: Box<dyn Read + Send>,
    block_bytes: usize,
    mut fresh: impl FnMut() -> Vec<u8>,
    mut sink: impl FnMut(std::io::Result<Vec<u8>>) -> bool,
) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut block = fresh();
        block.clear();
        block.reserve(block_bytes + carry.len());
        block.extend_from_slice(&carry);
        carry.clear();
        let before = block.len();
        if let Err(e) = reader
            .by_ref()
            .take(block_bytes as u64)
            .read_to_end(&mut block)
        {
            sink(Err(e));
            return;
        }
        if block.len() == before {
            if !block.is_empty() {
                sink(Ok(block));
            }
            return;
        }
        match memchr::memrchr(b'\n', &block[before..]) {
            Some(k) => {
                carry.extend_from_slice(&block[before + k + 1..]);
                block.truncate(before + k + 1);
                if !sink(Ok(block)) {
                    return;
                }
            }
            None => carry = block,
        }
    }
}
