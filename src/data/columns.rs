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

use super::error::DataError;

/// File holding the feature permutation (`u32` per column).
pub const PERMUTATION_FILE: &str = "feature_permutation.u32";
/// File holding the column frequencies (`u64` per column).
pub const FREQUENCIES_FILE: &str = "column_frequencies.u64";
/// File holding the column means (`f64` per column).
pub const MEANS_FILE: &str = "column_means.f64";

/// A raw array file in the dataset directory, as listed in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayFile {
    /// File name inside the dataset directory.
    pub file: String,
    /// Length in bytes: the column count times the element size.
    pub bytes: u64,
    /// CRC-32 (IEEE, as zlib's `crc32`) of the whole file.
    pub crc32: u32,
}

/// A per-column array in the manifest: a file (format version 2) or, in version-1
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
