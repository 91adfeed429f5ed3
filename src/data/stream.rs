//! The one LIBSVM text pipeline, shared by `sparselin convert` ([`convert`](super::convert))
//! and by every learner input read from text ([`read_matrix`], behind
//! [`libsvm::read_file`](super::libsvm::read_file) and [`open_examples`](super::open_examples)).
//!
//! A reader thread pulls newline-aligned blocks from the input (plain, gzip, or standard
//! input); each block is split into pieces parsed in parallel with rayon
//! ([`parse_chunk_into`]), and the parsed pieces are handed to a sink in input order. Block
//! and parse buffers are recycled, so memory is a few blocks plus whatever the sink keeps.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};

use flate2::read::MultiGzDecoder;
use rayon::prelude::*;

use super::chunk::{ChunkError, ChunkRows, parse_chunk_into, split_at_newlines};
use super::csr::{CsrError, CsrMatrix, MAX_FEATURES};
use super::error::DataError;
use super::libsvm::{LibsvmError, ParseOptions, ValueType, find_beyond};
use super::number::TextValue;
use super::vw::Hashing;

/// The text formats the pipeline reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextFormat {
    /// LIBSVM / SVMlight ([`libsvm`](super::libsvm)), indices from 0 or from 1.
    Libsvm {
        /// Indices start at 0 instead of 1.
        zero_based: bool,
    },
    /// Vowpal Wabbit text ([`vw`](super::vw)), names hashed into `2^bits` columns by the
    /// hashing's rules; rows carry importance weights.
    Vw {
        /// How names become columns.
        hashing: Hashing,
        /// Lines without a label are rows of label 0 (input to predictions, which read no
        /// labels; VW's unlabeled test examples) rather than errors.
        unlabeled: bool,
    },
}

impl TextFormat {
    /// Parse `text` in this format into `out`.
    fn parse_into<V: TextValue>(
        &self,
        text: &[u8],
        out: &mut ChunkRows<V>,
    ) -> Result<(), ChunkError> {
        match self {
            TextFormat::Libsvm { zero_based } => parse_chunk_into(text, *zero_based, out),
            TextFormat::Vw { hashing, unlabeled } => {
                super::vw::parse_chunk_into(text, hashing, *unlabeled, out)
            }
        }
    }

    /// This format, reading a Vowpal Wabbit line without a label as a row of label 0 (for
    /// predictions, which read no labels) instead of refusing it; LIBSVM text unchanged.
    pub fn reading_unlabeled(self) -> TextFormat {
        match self {
            TextFormat::Vw { hashing, .. } => TextFormat::Vw {
                hashing,
                unlabeled: true,
            },
            libsvm => libsvm,
        }
    }

    /// The column count of the text at `input` in this format, checked before any text is
    /// read, if `n_features` declares one or the format fixes it: LIBSVM's is `n_features`
    /// ([`declared_columns`]); hashed Vowpal Wabbit text has 2^bits columns, and a count
    /// declared otherwise is an error.
    pub fn declared_columns(
        &self,
        input: &Path,
        n_features: Option<usize>,
    ) -> Result<Option<usize>, DataError> {
        let TextFormat::Vw { hashing, .. } = self else {
            return declared_columns(input, n_features);
        };
        let (bits, columns) = (hashing.bits(), hashing.columns());
        match n_features {
            Some(n) if n != columns => Err(DataError::invalid(
                input,
                format!(
                    "{n} declared features, but hashed Vowpal Wabbit text has 2^{bits} = \
                     {columns} columns: set the count with the hash bits"
                ),
            )),
            _ => Ok(Some(columns)),
        }
    }
}

/// Bytes of text read per block by default (each block is parsed in parallel).
pub const BLOCK_BYTES: usize = 16 << 20;

/// Open `input` (`-` for standard input) as a byte stream, decompressing gzip (recognized by
/// its magic bytes).
pub fn open_text(input: &Path) -> Result<Box<dyn Read + Send>, DataError> {
    let mut reader: Box<dyn BufRead + Send> = if input == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let file = File::open(input).map_err(|e| DataError::io(input, e))?;
        Box::new(BufReader::with_capacity(1 << 20, file))
    };
    let start = reader.fill_buf().map_err(|e| DataError::io(input, e))?;
    // sparselin's own binary files, given where text was expected: say what they are.
    if start.starts_with(&super::shard::MAGIC) {
        return Err(DataError::invalid(
            input,
            "a shard of a sparselin dataset, not LIBSVM text: pass the dataset's directory",
        ));
    }
    if start.starts_with(crate::model::MAGIC) {
        return Err(DataError::invalid(
            input,
            "a sparselin model, not LIBSVM text (`predict` and `eval` take the model first)",
        ));
    }
    let gzip = start.starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(MultiGzDecoder::new(reader))
    } else {
        reader
    })
}

/// Length in bytes of the text at `input` when it is known before reading: a plain
/// (not gzip-compressed) regular file. `None` for standard input and gzip.
pub fn plain_text_len(input: &Path) -> Option<u64> {
    if input == Path::new("-") {
        return None;
    }
    let mut file = File::open(input).ok()?;
    let len = file.metadata().ok().filter(|m| m.is_file())?.len();
    let mut magic = [0u8; 2];
    let gzip = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    (!gzip).then_some(len)
}

/// What [`parse_text`] read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextSummary {
    /// Bytes of (uncompressed) text.
    pub bytes: u64,
    /// Lines, including blank and comment lines.
    pub lines: u64,
}

/// Parse the text at `input` (`-` for standard input; gzip recognized) in `format`, in blocks
/// of about `block_bytes`, values in precision `V`, handing every parsed piece to `sink` in input
/// order and the text bytes read so far to `progress` after each block. A malformed line
/// stops with `file:line:column: what is wrong`, and so does an index at or beyond
/// `declared` features when a count is declared ([`LibsvmError::BeyondDeclared`]; before
/// `sink` sees the piece); an error from `sink` stops it too.
pub fn parse_text<V: TextValue>(
    input: &Path,
    format: &TextFormat,
    declared: Option<usize>,
    block_bytes: usize,
    progress: &mut dyn FnMut(u64),
    mut sink: impl FnMut(&ChunkRows<V>) -> Result<(), DataError>,
) -> Result<TextSummary, DataError> {
    let name = super::error::name(input);
    let reader = open_text(input)?;
    let pieces = rayon::current_num_threads() * 4;
    let mut summary = TextSummary::default();
    // Parse buffers, one per piece, reused across blocks.
    let mut parsed: Vec<ChunkRows<V>> = Vec::new();
    std::thread::scope(|scope| -> Result<(), DataError> {
        let (send, receive) = sync_channel(2);
        let (recycle, reuse) = channel::<Vec<u8>>();
        let block_bytes = block_bytes.max(1);
        scope.spawn(move || {
            let fresh = || reuse.try_recv().unwrap_or_default();
            read_blocks(reader, block_bytes, fresh, |block| send.send(block).is_ok())
        });
        for block in receive {
            let block = block.map_err(|e| DataError::io(input, e))?;
            let split = split_at_newlines(&block, pieces);
            if parsed.len() < split.len() {
                parsed.resize_with(split.len(), ChunkRows::default);
            }
            let results: Vec<_> = split
                .par_iter()
                .zip(parsed.par_iter_mut())
                .map(|(piece, rows)| format.parse_into(piece, rows))
                .collect();
            for ((result, rows), piece) in results.into_iter().zip(&parsed).zip(&split) {
                result.map_err(|e| LibsvmError::Syntax {
                    file: name.clone(),
                    line: summary.lines + e.line,
                    column: e.column,
                    message: e.message,
                })?;
                // Hashed columns are below their declared count by construction.
                let beyond = match format {
                    TextFormat::Libsvm { zero_based } => declared
                        .filter(|&n| rows.columns > n)
                        .and_then(|n| Some((n, find_beyond(piece, *zero_based, n)?))),
                    TextFormat::Vw { .. } => None,
                };
                if let Some((declared, (line, column, index))) = beyond {
                    return Err(LibsvmError::BeyondDeclared {
                        file: name.clone(),
                        line: summary.lines + line,
                        column,
                        index,
                        declared,
                    }
                    .into());
                }
                summary.lines += rows.lines;
                sink(rows)?;
            }
            summary.bytes += block.len() as u64;
            progress(summary.bytes);
            // Hand the block back to the reader: no fresh allocation (and page faults) per block.
            let _ = recycle.send(block);
        }
        Ok(())
    })?;
    Ok(summary)
}

/// Read LIBSVM text into memory with [`parse_text`]: what learners get from a text input.
/// `options.n_features`, when given, is the column count and must cover every index.
pub fn read_matrix(input: &Path, options: ParseOptions) -> Result<CsrMatrix, DataError> {
    let format = TextFormat::Libsvm {
        zero_based: options.zero_based,
    };
    Ok(read_text(input, &format, options.value_type, options.n_features)?.matrix)
}

/// Text read into memory ([`read_text`]).
#[derive(Clone, Debug)]
pub struct TextRows {
    /// The rows.
    pub matrix: CsrMatrix,
    /// The rows' importance weights, when the format gives them (Vowpal Wabbit text) and they
    /// are not all 1.
    pub sample_weights: Option<Vec<f64>>,
}

/// Read the text at `input` in `format` into memory with [`parse_text`], values in
/// `value_type`. `n_features`, when given, is the column count: it must cover every LIBSVM
/// index, and be 2^bits for Vowpal Wabbit text. Importance weights are checked as sample
/// weights are (finite, non-negative, not all 0).
pub fn read_text(
    input: &Path,
    format: &TextFormat,
    value_type: ValueType,
    n_features: Option<usize>,
) -> Result<TextRows, DataError> {
    match value_type {
        ValueType::F32 => read_typed::<f32>(input, format, n_features),
        ValueType::F64 => read_typed::<f64>(input, format, n_features),
    }
}

fn read_typed<V: TextValue>(
    input: &Path,
    format: &TextFormat,
    n_features: Option<usize>,
) -> Result<TextRows, DataError> {
    let (mut labels, mut offsets) = (Vec::new(), vec![0u64]);
    let (mut indices, mut values) = (Vec::new(), Vec::<V>::new());
    let mut weights = Vec::new();
    let mut columns = 0;
    let declared = format.declared_columns(input, n_features)?;
    parse_text::<V>(input, format, declared, BLOCK_BYTES, &mut |_| {}, |rows| {
        let base = indices.len() as u64;
        labels.extend_from_slice(&rows.labels);
        offsets.extend(rows.offsets[1..].iter().map(|&o| o + base));
        indices.extend_from_slice(&rows.indices);
        values.extend_from_slice(&rows.values);
        weights.extend_from_slice(&rows.weights);
        columns = columns.max(rows.columns);
        Ok(())
    })?;
    let sample_weights = match format {
        TextFormat::Vw { .. } if !labels.is_empty() => {
            super::sample_weights::check(&weights, labels.len())
                .map_err(|e| DataError::invalid(input, format!("importance weights: {e}")))?;
            Some(weights).filter(|w| w.iter().any(|&s| s != 1.0))
        }
        _ => None,
    };
    let n_features = declared.unwrap_or(columns);
    let matrix = CsrMatrix::new(labels, offsets, indices, V::value_vec(values), n_features)
        .map_err(|e| DataError::invalid(input, format!("parser output: {e}")))?;
    Ok(TextRows {
        matrix,
        sample_weights,
    })
}

/// The declared column count `n_features` of the text at `input`, checked before any text is
/// read: more than [`MAX_FEATURES`] is an error (indices are 32-bit). An index beyond it is
/// refused as it is parsed ([`parse_text`]).
pub fn declared_columns(
    input: &Path,
    n_features: Option<usize>,
) -> Result<Option<usize>, DataError> {
    match n_features {
        Some(n) if n as u64 > MAX_FEATURES => Err(DataError::invalid(
            input,
            CsrError::TooManyFeatures { n_features: n }.to_string(),
        )),
        declared => Ok(declared),
    }
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
