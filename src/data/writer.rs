//! Building a dataset directory shard by shard, published atomically.
//!
//! Shards are written into a hidden temporary directory next to the destination; only
//! [`DatasetWriter::finish`] renames it into place, after the manifest is written. An error
//! or a dropped writer removes the temporary directory, so a failed conversion or generation
//! never leaves a half-written dataset behind.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sparselin_kernels::Values;

use super::columns::{
    ArrayFile, ColumnArray, ColumnTally, FREQUENCIES_FILE, MEANS_FILE, PERMUTATION_FILE,
    write_array,
};
use super::dataset::{
    FORMAT_NAME, MANIFEST, MANIFEST_VERSION, Manifest, SAMPLE_WEIGHTS_FILE, ShardEntry,
    WEIGHTED_MANIFEST_VERSION,
};
use super::error::DataError;
use super::shard::{Shard, ShardParts, ValueKind, set_columns, write_shard};
use super::vw::FeatureRules;
use crate::memory::{self, AllocError};

/// What [`DatasetWriter::finish`] does before publishing.
#[derive(Clone, Copy, Debug, Default)]
pub struct FinishOptions {
    /// Declared column count; `None` takes the largest count any shard was written with.
    pub columns: Option<usize>,
    /// Renumber features by descending frequency (ties by original id) and record the
    /// permutation in the manifest.
    pub renumber_by_frequency: bool,
    /// Store the data as all-ones (drop the value sections). The caller asserts every stored
    /// value is 1.0 (it tracks that while writing).
    pub drop_values: bool,
    /// Record per-column frequencies and means (files listed in the manifest).
    pub column_statistics: bool,
}

/// Writes shards into a temporary directory and publishes them as a dataset.
#[derive(Debug)]
pub struct DatasetWriter {
    dir: PathBuf,
    tmp: PathBuf,
    value_kind: ValueKind,
    shards: Vec<ShardEntry>,
    rows: u64,
    nnz: u64,
    max_columns: usize,
    tally: ColumnTally,
    /// The rows' sample weights so far, when the caller gives them.
    sample_weights: Vec<f64>,
    /// How the columns were formed from Vowpal Wabbit text, if not by VW's defaults.
    vw_features: Option<FeatureRules>,
    published: bool,
}

impl DatasetWriter {
    /// Start a dataset that will appear at `dir` (which must not exist yet) with values
    /// stored as `value_kind`.
    pub fn create(dir: &Path, value_kind: ValueKind) -> Result<Self, DataError> {
        if dir.exists() {
            return Err(DataError::invalid(
                dir,
                "already exists (remove it or choose another output)",
            ));
        }
        dir.file_name()
            .ok_or_else(|| DataError::invalid(dir, "output must name a directory"))?;
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        // The parent is made with the temporary, under the lock an interruption takes: a
        // dataset written inside another command's temporary (`gen`'s staging directory)
        // must not make that temporary again once an interruption has removed it.
        let (tmp, ()) = crate::output::create_beside(dir, |path| {
            // Not `AlreadyExists` (a file in the way), which would ask for another name.
            std::fs::create_dir_all(parent).map_err(|e| {
                std::io::Error::other(format!("creating {}: {e}", parent.display()))
            })?;
            std::fs::create_dir(path)
        })
        .map_err(|e| DataError::io(dir, e))?;
        Ok(DatasetWriter {
            dir: dir.to_path_buf(),
            tmp,
            value_kind,
            shards: Vec::new(),
            rows: 0,
            nnz: 0,
            max_columns: 0,
            tally: ColumnTally::default(),
            sample_weights: Vec::new(),
            vw_features: None,
            published: false,
        })
    }

    /// The temporary directory the shards go to until [`DatasetWriter::finish`].
    pub fn temporary_dir(&self) -> &Path {
        &self.tmp
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Append one shard. Its values must be of the writer's value kind and its rows must
    /// satisfy the row invariants for `parts.n_features` columns.
    pub fn write_shard(&mut self, parts: &ShardParts<'_>) -> Result<(), DataError> {
        let file = format!("shard-{:06}.csr", self.shards.len());
        let path = self.tmp.join(&file);
        if ValueKind::of(&parts.values) != self.value_kind {
            return Err(DataError::invalid(
                &path,
                format!(
                    "{} values in a dataset of {}",
                    ValueKind::of(&parts.values),
                    self.value_kind
                ),
            ));
        }
        let bytes = write_shard(&path, parts)?;
        let (rows, nnz) = (parts.labels.len() as u64, parts.indices.len() as u64);
        self.shards.push(ShardEntry {
            file,
            first_row: self.rows,
            rows,
            nnz,
            bytes,
            // Known once `finish` has written the final header.
            header_crc32: None,
        });
        self.rows += rows;
        self.nnz += nnz;
        self.max_columns = self.max_columns.max(parts.n_features);
        self.accumulate_statistics(parts)
    }

    /// Append the sample weights of rows written (or to be written): a dataset with weights
    /// has one per row, given in row order across calls ([`DatasetWriter::finish`] checks the
    /// count). Weights that are all 1 are not stored.
    pub fn add_sample_weights(&mut self, weights: &[f64]) {
        self.sample_weights.extend_from_slice(weights);
    }

    /// Record how the columns were formed from Vowpal Wabbit text
    /// ([`Manifest::vw_features`]); VW's defaults are not recorded.
    pub fn record_vw_features(&mut self, rules: &FeatureRules) {
        self.vw_features = Some(rules.clone()).filter(|r| !r.is_default());
    }

    /// Add a shard's entries to the per-column tallies (in shard order, so the result does
    /// not depend on threads).
    fn accumulate_statistics(&mut self, parts: &ShardParts<'_>) -> Result<(), DataError> {
        let added = self.tally.add(parts.indices, parts.values);
        added.map_err(|e| self.refused(e))
    }

    /// An empty vector with room for one `T` per column, or the error naming `what`.
    fn per_column<T>(&self, what: &'static str, columns: usize) -> Result<Vec<T>, DataError> {
        memory::reserved(what, columns).map_err(|e| self.refused(e))
    }

    /// The error for an allocation the machine refused, on the dataset being written.
    fn refused(&self, error: AllocError) -> DataError {
        DataError::invalid(&self.dir, error.to_string())
    }

    /// Check the sample weights given (none, or one valid weight per row) and write them
    /// unless every one is 1.
    fn write_sample_weights(&self) -> Result<Option<ArrayFile>, DataError> {
        let weights = &self.sample_weights;
        if weights.is_empty() {
            return Ok(None);
        }
        super::sample_weights::check(weights, self.rows as usize)
            .map_err(|e| DataError::invalid(&self.dir, format!("sample weights: {e}")))?;
        if weights.iter().all(|&s| s == 1.0) {
            return Ok(None);
        }
        write_array(&self.tmp, SAMPLE_WEIGHTS_FILE, weights).map(Some)
    }

    /// Apply `options`, write the manifest and rename the directory into place.
    pub fn finish(mut self, options: FinishOptions) -> Result<Manifest, DataError> {
        let columns = options.columns.unwrap_or(self.max_columns);
        if columns < self.max_columns {
            return Err(DataError::invalid(
                &self.dir,
                format!(
                    "data has {} columns, more than the declared {columns}",
                    self.max_columns
                ),
            ));
        }
        let paths: Vec<PathBuf> = self.shards.iter().map(|s| self.tmp.join(&s.file)).collect();
        let stats = if options.column_statistics || options.renumber_by_frequency {
            let mut tally = std::mem::take(&mut self.tally);
            tally.grow(columns).map_err(|e| self.refused(e))?;
            Some(tally.finish(self.rows))
        } else {
            None
        };
        let permutation = match (&stats, options.renumber_by_frequency) {
            (Some(stats), true) => {
                let freq = &stats.frequencies;
                let mut order = self.per_column::<u32>("feature permutation", columns)?;
                order.extend((0..columns).map(|j| j as u32));
                order.sort_by_key(|&j| (std::cmp::Reverse(freq[j as usize]), j));
                Some(order)
            }
            _ => None,
        };
        let drop_values = options.drop_values && self.value_kind != ValueKind::Ones;
        if permutation.is_some() || drop_values {
            let inverse = match &permutation {
                Some(p) => {
                    let mut inv = self.per_column::<u32>("inverse feature permutation", columns)?;
                    inv.resize(columns, 0);
                    for (new, &orig) in p.iter().enumerate() {
                        inv[orig as usize] = new as u32;
                    }
                    Some(inv)
                }
                None => None,
            };
            let sizes: Vec<u64> = paths
                .par_iter()
                .map(|path| rewrite(path, inverse.as_deref(), drop_values, columns))
                .collect::<Result<_, _>>()?;
            for (entry, bytes) in self.shards.iter_mut().zip(sizes) {
                entry.bytes = bytes;
            }
            if drop_values {
                self.value_kind = ValueKind::Ones;
            }
        } else {
            // Shards were written with the column count known so far; make them agree.
            for path in &paths {
                set_columns(path, columns)?;
            }
        }
        // Bind each entry to its file's final content (manifest version 3): the header
        // checksum, read back by opening the shard, which also checks the header just written.
        for (entry, path) in self.shards.iter_mut().zip(&paths) {
            entry.header_crc32 = Some(Shard::open(path)?.header().checksum());
        }
        let (column_frequencies, column_means) = match stats {
            Some(stats) if options.column_statistics => {
                let (freq, means) = match &permutation {
                    Some(order) => {
                        let mut f = self.per_column::<u64>("column frequencies", columns)?;
                        f.extend(order.iter().map(|&j| stats.frequencies[j as usize]));
                        let mut m = self.per_column::<f64>("column means", columns)?;
                        m.extend(order.iter().map(|&j| stats.means[j as usize]));
                        (f, m)
                    }
                    None => (stats.frequencies, stats.means),
                };
                (
                    Some(ColumnArray::File(write_array(
                        &self.tmp,
                        FREQUENCIES_FILE,
                        &freq,
                    )?)),
                    Some(ColumnArray::File(write_array(
                        &self.tmp, MEANS_FILE, &means,
                    )?)),
                )
            }
            _ => (None, None),
        };
        let feature_permutation = match &permutation {
            Some(p) => Some(ColumnArray::File(write_array(
                &self.tmp,
                PERMUTATION_FILE,
                p,
            )?)),
            None => None,
        };
        let sample_weights = self.write_sample_weights()?;
        let manifest = Manifest {
            format: FORMAT_NAME.to_string(),
            version: match sample_weights {
                Some(_) => WEIGHTED_MANIFEST_VERSION,
                None => MANIFEST_VERSION,
            },
            rows: self.rows,
            columns: columns as u64,
            nnz: self.nnz,
            value_type: self.value_kind,
            shards: std::mem::take(&mut self.shards),
            feature_permutation,
            column_frequencies,
            column_means,
            sample_weights,
            vw_features: self.vw_features.take(),
        };
        let manifest_path = self.tmp.join(MANIFEST);
        let json = serde_json::to_vec(&manifest).map_err(|e| {
            DataError::invalid(&manifest_path, format!("cannot serialize manifest: {e}"))
        })?;
        std::fs::write(&manifest_path, json).map_err(|e| DataError::io(&manifest_path, e))?;
        let renamed = std::fs::rename(&self.tmp, &self.dir);
        if renamed.is_ok() {
            crate::output::settled(&self.tmp);
        }
        renamed.map_err(|e| DataError::io(&self.dir, e))?;
        self.published = true;
        Ok(manifest)
    }
}

impl Drop for DatasetWriter {
    fn drop(&mut self) {
        if !self.published {
            // Best effort: the directory is hidden and named for this process anyway.
            let _ = std::fs::remove_dir_all(&self.tmp);
            crate::output::settled(&self.tmp);
        }
    }
}

/// Rewrite one shard with indices mapped through `inverse` (original → new id, rows
/// re-sorted) and/or without its value section; returns the new file length.
fn rewrite(
    path: &Path,
    inverse: Option<&[u32]>,
    drop_values: bool,
    columns: usize,
) -> Result<u64, DataError> {
    let shard = Shard::open(path)?;
    let (labels, offsets) = (shard.labels(), shard.offsets());
    let mut indices = Vec::with_capacity(shard.indices().len());
    let mut values = Vec::with_capacity(if drop_values { 0 } else { indices.capacity() });
    let mut pairs: Vec<(u32, f64)> = Vec::new();
    for i in 0..labels.len() {
        let row = shard.row(i);
        pairs.clear();
        pairs.extend(
            row.indices
                .iter()
                .enumerate()
                .map(|(k, &j)| (inverse.map_or(j, |inv| inv[j as usize]), row.values.get(k))),
        );
        pairs.sort_unstable_by_key(|p| p.0);
        indices.extend(pairs.iter().map(|p| p.0));
        values.extend(pairs.iter().map(|p| p.1));
    }
    let (f32s, f64s): (Vec<f32>, Vec<f64>);
    let values = match (drop_values, shard.header().value_kind) {
        (true, _) | (false, ValueKind::Ones) => Values::Ones,
        (false, ValueKind::F32) => {
            f32s = values.iter().map(|&v| v as f32).collect();
            Values::F32(&f32s)
        }
        (false, ValueKind::F64) => {
            f64s = values;
            Values::F64(&f64s)
        }
    };
    let new_path = path.with_extension("rewrite");
    let bytes = write_shard(
        &new_path,
        &ShardParts {
            labels,
            offsets,
            indices: &indices,
            values,
            n_features: columns,
        },
    )?;
    drop(shard);
    std::fs::rename(&new_path, path).map_err(|e| DataError::io(path, e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two writers of one destination in one process (threads converting at once) each get
    /// their own temporary directory; the second no longer removes the first's.
    #[test]
    fn writers_of_one_destination_keep_apart() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = DatasetWriter::create(&out, ValueKind::F32).unwrap();
        std::fs::write(first.temporary_dir().join("shard"), b"rows").unwrap();
        let second = DatasetWriter::create(&out, ValueKind::F32).unwrap();
        assert_ne!(first.temporary_dir(), second.temporary_dir());
        assert!(first.temporary_dir().join("shard").exists());
        assert!(second.temporary_dir().is_dir());
    }

    /// Column statistics the machine cannot hold are an error naming the dataset, and the
    /// temporary directory goes with the writer.
    #[test]
    fn statistics_too_large_for_memory_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut writer = DatasetWriter::create(&out, ValueKind::F32).unwrap();
        let tmp = writer.temporary_dir().to_path_buf();
        let grown = writer.tally.grow(1 << 46);
        let e = grown
            .map_err(|e| writer.refused(e))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "{}: cannot allocate the column statistics of",
                out.display()
            )),
            "{e}"
        );
        assert!(e.ends_with(" GB)"), "{e}");
        drop(writer);
        assert!(!tmp.exists() && !out.exists());
    }
}
