//! Per-column arrays of a dataset — the feature permutation, column frequencies and means —
//! stored as raw little-endian files beside the shards, so that the manifest (parsed on
//! every open) stays small whatever the column count. The manifest names each file with its
//! length and CRC-32; a reader loads an array only when it needs it (the permutation on open
//! when present, the statistics only for `sparselin info`).
//!
//! Manifests of format version 1 held these arrays inline as JSON; they are still read.

use std::path::Path;

use bytemuck::Pod;
use serde::{Deserialize, Serialize};
use sparselin_kernels::Values;

use super::error::DataError;
use crate::memory::AllocError;

/// File holding the feature permutation (`u32` per column).
pub const PERMUTATION_FILE: &str = "feature_permutation.u32";
/// File holding the column frequencies (`u64` per column).
pub const FREQUENCIES_FILE: &str = "column_frequencies.u64";
/// File holding the column means (`f64` per column).
pub const MEANS_FILE: &str = "column_means.f64";

/// A raw array file in the dataset directory, as listed in the manifest (a member it does
/// not know is refused, as [`super::Manifest`]'s are).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayFile {
    /// File name inside the dataset directory.
    pub file: String,
    /// Length in bytes: the column count times the element size.
    pub bytes: u64,
    /// CRC-32 (IEEE, as zlib's `crc32`) of the whole file.
    pub crc32: u32,
}

/// A per-column array in the manifest: a file (manifest version 2 and later) or, in version-1
/// manifests, the values inline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ColumnArray<T> {
    /// Stored in a raw little-endian file.
    File(ArrayFile),
    /// Inline JSON array (version 1).
    Inline(Vec<T>),
}

impl<T> ColumnArray<T> {
    /// The file name, when the array is stored in a file.
    pub fn file_name(&self) -> Option<&str> {
        match self {
            ColumnArray::File(entry) => Some(&entry.file),
            ColumnArray::Inline(_) => None,
        }
    }
}

impl<T: Pod> ColumnArray<T> {
    /// Load the array (reading its file, if it has one) and check that it has `columns`
    /// entries and, for a file, its length and checksum. `dir` is the dataset directory.
    pub fn load(&self, dir: &Path, columns: usize) -> Result<Vec<T>, DataError> {
        let values = match self {
            ColumnArray::Inline(values) => values.clone(),
            ColumnArray::File(entry) => {
                let path = dir.join(&entry.file);
                let bytes = std::fs::read(&path).map_err(|e| DataError::io(&path, e))?;
                if bytes.len() as u64 != entry.bytes {
                    return Err(DataError::invalid(
                        &path,
                        format!("{} bytes, the manifest says {}", bytes.len(), entry.bytes),
                    ));
                }
                let crc = crc32fast::hash(&bytes);
                if crc != entry.crc32 {
                    return Err(DataError::invalid(
                        &path,
                        format!(
                            "checksum mismatch (manifest {:08x}, computed {crc:08x}): corrupted file",
                            entry.crc32
                        ),
                    ));
                }
                if bytes.len() % size_of::<T>() != 0 {
                    return Err(DataError::invalid(
                        &path,
                        "length is not a whole number of entries",
                    ));
                }
                bytemuck::pod_collect_to_vec(&bytes)
            }
        };
        if values.len() != columns {
            return Err(DataError::invalid(
                dir,
                format!(
                    "a column array has {} entries for {columns} columns",
                    values.len()
                ),
            ));
        }
        Ok(values)
    }
}

/// Write `values` as the raw little-endian file `name` in `dir` and describe it.
pub fn write_array<T: Pod>(dir: &Path, name: &str, values: &[T]) -> Result<ArrayFile, DataError> {
    let path = dir.join(name);
    let bytes: &[u8] = bytemuck::cast_slice(values);
    std::fs::write(&path, bytes).map_err(|e| DataError::io(&path, e))?;
    Ok(ArrayFile {
        file: name.to_string(),
        bytes: bytes.len() as u64,
        crc32: crc32fast::hash(bytes),
    })
}

/// Per-column statistics recorded at conversion, indexed by internal column.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnStatistics {
    /// Rows in which each column is non-zero.
    pub frequencies: Vec<u64>,
    /// Mean of each column over all rows (zeros included).
    pub means: Vec<f64>,
}

/// Per-column counts and sums of the entries seen so far, in the order they were added: the
/// one definition of the statistics, used by the writer as it stores shards and by
/// [`Dataset::verify`](super::Dataset::verify) to recompute them from the stored shards
/// (summing in row order both times, so the means agree bit for bit).
#[derive(Debug, Default)]
pub struct ColumnTally {
    frequencies: Vec<u64>,
    sums: Vec<f64>,
}

impl ColumnTally {
    /// Add the entries of consecutive rows (their indices and values, in row order).
    /// Fallible: the column count comes from the data (up to 2^32 columns, 64 GB of tallies).
    pub fn add(&mut self, indices: &[u32], values: Values<'_>) -> Result<(), AllocError> {
        let needed = indices.iter().max().map_or(0, |&j| j as usize + 1);
        self.grow(needed)?;
        let (freq, sums) = (&mut self.frequencies, &mut self.sums);
        let mut add = |j: u32, v: f64| {
            freq[j as usize] += 1;
            sums[j as usize] += v;
        };
        match values {
            Values::Ones => indices.iter().for_each(|&j| add(j, 1.0)),
            Values::F32(v) => indices
                .iter()
                .zip(v)
                .for_each(|(&j, &x)| add(j, f64::from(x))),
            Values::F64(v) => indices.iter().zip(v).for_each(|(&j, &x)| add(j, x)),
        }
        Ok(())
    }

    /// Extend the tallies with zeros to at least `columns` entries.
    pub fn grow(&mut self, columns: usize) -> Result<(), AllocError> {
        let more = columns.saturating_sub(self.frequencies.len());
        if more == 0 {
            return Ok(());
        }
        let reserved =
            self.frequencies.try_reserve(more).is_ok() && self.sums.try_reserve(more).is_ok();
        if !reserved {
            return Err(AllocError::of::<(u64, f64)>("column statistics", columns));
        }
        self.frequencies.resize(columns, 0);
        self.sums.resize(columns, 0.0);
        Ok(())
    }

    /// The frequencies and the means over `rows` rows (zeros included), by column as added.
    pub fn finish(self, rows: u64) -> ColumnStatistics {
        let rows = rows.max(1) as f64;
        let mut means = self.sums;
        means.iter_mut().for_each(|s| *s /= rows);
        ColumnStatistics {
            frequencies: self.frequencies,
            means,
        }
    }
}
