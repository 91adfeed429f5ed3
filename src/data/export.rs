//! Dataset → LIBSVM text (`sparselin export`), and the number formatting that makes
//! convert → export → convert lossless. LIBSVM text has no place for sample weights: a
//! dataset's stored weights go to a file of their own ([`export_sample_weights`]), one per
//! line, as `convert --sample-weights` reads them back.
//!
//! Indices are written 1-based in original feature ids (a renumbered dataset is mapped back
//! through its permutation). Labels and values use Rust's shortest round-trip decimal of their
//! own precision; the parser reads an `f32` value as `str::parse::<f32>` does, so the text
//! reads back bit for bit. Every shard is verified (checksums and row invariants) as it is
//! exported, so that corrupted data is never passed on as clean text.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;
use sparselin_kernels::Values;

use super::csr::Row;
use super::dataset::Dataset;
use super::error::DataError;
use crate::output::OutputFile;

/// Rows formatted per parallel task.
const BLOCK_ROWS: usize = 4096;

/// Append the shortest decimal of an `f32` value, which reads back exactly as `f32`.
pub fn push_f32(out: &mut Vec<u8>, value: f32) {
    write!(out, "{value}").expect("writing to a Vec cannot fail");
}

/// Append one row as a LIBSVM line (1-based indices, mapped through `permutation` when
/// given, which re-sorts them).
pub fn push_row(
    out: &mut Vec<u8>,
    row: &Row<'_>,
    permutation: Option<&[u32]>,
    scratch: &mut Vec<(u32, usize)>,
) {
    write!(out, "{}", row.label).expect("writing to a Vec cannot fail");
    scratch.clear();
    scratch.extend(row.indices.iter().enumerate().map(|(k, &j)| {
        let original = permutation.map_or(j, |p| p[j as usize]);
        (original, k)
    }));
    if permutation.is_some() {
        scratch.sort_unstable_by_key(|e| e.0);
    }
    for &(j, k) in scratch.iter() {
        write!(out, " {}:", u64::from(j) + 1).expect("writing to a Vec cannot fail");
        match row.values {
            Values::Ones => out.push(b'1'),
            Values::F32(v) => push_f32(out, v[k]),
            Values::F64(v) => write!(out, "{}", v[k]).expect("writing to a Vec cannot fail"),
        }
    }
    out.push(b'\n');
}

/// Write every row of the dataset at `dir` as LIBSVM text to `output` (`-` for standard
/// output). A file appears whole or not at all ([`OutputFile`]). Returns the bytes written.
///
/// Each shard is verified in full ([`Shard::verify`](super::Shard::verify): section checksums
/// and row invariants) just before its rows are written: export reads every byte anyway, and
/// text carries no checksum, so a corrupted shard written out would pass for clean data. The
/// first failing shard stops the export with `verify`'s error naming it (the file is then
/// not written; standard output has received the shards before it, all verified).
pub fn export(dir: &Path, output: &Path) -> Result<u64, DataError> {
    let dataset = Dataset::open(dir)?;
    let permutation = dataset.feature_permutation();
    let shards = dataset.shards();
    let to_stdout = output == Path::new("-");
    let io = |e| DataError::io(output, e);
    let mut file = if to_stdout {
        None
    } else {
        Some(OutputFile::create(output).map_err(io)?)
    };
    let mut stdout = std::io::stdout().lock();
    let sink: &mut dyn Write = match &mut file {
        Some(file) => file,
        None => &mut stdout,
    };
    let mut written = 0u64;
    for shard in shards {
        shard.verify()?;
        let n = shard.header().n_rows;
        let blocks: Vec<Vec<u8>> = (0..n.div_ceil(BLOCK_ROWS))
            .into_par_iter()
            .map(|b| {
                let (mut out, mut scratch) = (Vec::new(), Vec::new());
                for i in b * BLOCK_ROWS..n.min((b + 1) * BLOCK_ROWS) {
                    push_row(&mut out, &shard.row(i), permutation, &mut scratch);
                }
                out
            })
            .collect();
        for block in blocks {
            sink.write_all(&block).map_err(io)?;
            written += block.len() as u64;
        }
    }
    sink.flush().map_err(io)?;
    if let Some(file) = file {
        file.commit().map_err(io)?;
    }
    Ok(written)
}

/// Write the sample weights `dataset` stores to `output` (`-` for standard output), one per
/// line in row order (shortest round-trip decimals), whole or not at all. Returns the bytes
/// written; a dataset that stores none is an error.
pub fn export_sample_weights(dataset: &Dataset, output: &Path) -> Result<u64, DataError> {
    let Some(weights) = dataset.sample_weights()? else {
        return Err(DataError::invalid(
            dataset.dir(),
            "stores no sample weights (every row weighs 1)",
        ));
    };
    let mut text = Vec::with_capacity(weights.len() * 4);
    for s in &weights {
        writeln!(text, "{s}").expect("writing to a Vec cannot fail");
    }
    let io = |e| DataError::io(output, e);
    if output == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&text)
            .and_then(|()| stdout.flush())
            .map_err(io)?;
    } else {
        let mut file = OutputFile::create(output).map_err(io)?;
        file.write_all(&text).map_err(io)?;
        file.commit().map_err(io)?;
    }
    Ok(text.len() as u64)
}
