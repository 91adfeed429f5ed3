//! A dataset: a directory of binary CSR shards plus `manifest.json` (and per-column arrays,
//! see [`columns`](super::columns)).
//!
//! [`Dataset::open`] reads the manifest and maps every shard, checking headers and bounds
//! only, and that each header is the one its manifest entry recorded (cost independent of the
//! data size; the column statistics are read only on demand).
//! [`Dataset::into_examples`] then checks the row invariants of every shard once, in
//! parallel, proving on the way the bound of each shard's index section (so that the
//! kernels check every row in O(1), see [`Shard::bounded_indices`]), and hands out a [`DatasetExamples`] that
//! learners read through the [`Examples`] trait with global row indices; hot loops read
//! through its [`DatasetRows`] view ([`Examples::rows`]), which views every shard once.
//! [`DatasetWriter`](super::DatasetWriter) builds a dataset under a temporary name and renames it into place.

use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sparselin_kernels::RowBlock;

use super::column_scales::ColumnScales;
use super::columns::{ArrayFile, ColumnArray, ColumnStatistics, ColumnTally};
use super::csr::{CsrError, Examples, MAX_FEATURES, Row, ValueVec};
use super::error::DataError;
use super::shard::{Shard, ShardRows, ValueKind};
use super::vw::{FeatureRules, Hashing};
use crate::memory::AllocError;

mod rows;

pub use rows::DatasetRows;

/// Name of the manifest inside a dataset directory.
pub const MANIFEST: &str = "manifest.json";
/// Value of [`Manifest::format`].
pub const FORMAT_NAME: &str = "sparselin-dataset";
/// Manifest version this build writes for a dataset without sample weights: 3, whose shard
/// entries record each shard's header checksum ([`ShardEntry::header_crc32`]). Versions 1
/// (column arrays inline as JSON) and 2 (no header checksums) are read too.
pub const MANIFEST_VERSION: u32 = 3;
/// Manifest version of a dataset that stores sample weights ([`Manifest::sample_weights`]):
/// version 3 plus that entry, numbered apart so that a build that cannot read the weights
/// refuses the dataset instead of training on it unweighted. Later versions are refused.
pub const WEIGHTED_MANIFEST_VERSION: u32 = 4;
/// File holding the rows' sample weights (`f64` per row), when the dataset has them.
pub const SAMPLE_WEIGHTS_FILE: &str = "sample_weights.f64";

/// One shard as listed in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardEntry {
    /// File name inside the dataset directory (no path separators).
    pub file: String,
    /// Global index of the shard's first row.
    pub first_row: u64,
    /// Rows in the shard.
    pub rows: u64,
    /// Stored entries in the shard.
    pub nnz: u64,
    /// File length in bytes.
    pub bytes: u64,
    /// The CRC-32 stored in the shard's header (bytes 152..156), which covers its counts,
    /// length and section checksums: it binds the entry to the content of the file it names,
    /// so that a damaged or swapped file name is refused on open rather than read as another
    /// shard of the same shape. Required from manifest version 3; absent in versions 1 and 2
    /// (and checked wherever present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_crc32: Option<u32>,
}

/// The content of `manifest.json`. A member this build does not know is refused, not
/// skipped: the manifest has no checksum of its own, and one flipped bit in the name of an
/// optional member (`feature_permutation`) would otherwise drop it unseen, and every model
/// trained on the dataset would come out in the wrong feature ids.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// [`MANIFEST_VERSION`] when written by this build (1 or 2 for older datasets).
    pub version: u32,
    /// Total rows.
    pub rows: u64,
    /// Column count; every index is below it.
    pub columns: u64,
    /// Total stored entries.
    pub nnz: u64,
    /// Storage of the values in every shard.
    pub value_type: ValueKind,
    /// The shards in row order; their row ranges are contiguous from 0.
    pub shards: Vec<ShardEntry>,
    /// Internal column index → original 0-based feature id, when features were renumbered
    /// (by descending frequency) at conversion. A model's weights are written back in
    /// original ids through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_permutation: Option<ColumnArray<u32>>,
    /// Rows in which each internal column is non-zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_frequencies: Option<ColumnArray<u64>>,
    /// Mean of each internal column over all rows (zeros included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_means: Option<ColumnArray<f64>>,
    /// Each row's sample weight ([`super::sample_weights`]), stored at conversion (Vowpal
    /// Wabbit's importance weights, or `convert --sample-weights`); absent when every row
    /// weighs 1. Manifest version [`WEIGHTED_MANIFEST_VERSION`] only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_weights: Option<ArrayFile>,
    /// How the columns were formed from Vowpal Wabbit text, beside its hash bits (which
    /// `columns` gives): the interactions, dropped namespaces and hash of the conversion
    /// ([`FeatureRules`]), normalized; absent for VW's defaults and for any other dataset.
    /// Models trained on the dataset record them, so that text they score is read alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vw_features: Option<FeatureRules>,
}

/// An open dataset: manifest plus mapped, header-validated shards.
#[derive(Debug)]
pub struct Dataset {
    dir: PathBuf,
    /// Boxed: the manifest is large and `Dataset` travels inside other enums.
    manifest: Box<Manifest>,
    shards: Vec<Shard>,
    permutation: Option<Vec<u32>>,
    /// The row of the whole dataset that is this one's row 0 (non-zero for a rank's share).
    first_row: u64,
    /// Rows of the whole dataset (more than the manifest's for a rank's share).
    total_rows: u64,
}

impl Dataset {
    /// Open the dataset in `dir`: parse the manifest, map every shard and check that headers
    /// and manifest agree. Reads no row data.
    pub fn open(dir: &Path) -> Result<Dataset, DataError> {
        let manifest = read_manifest(dir)?;
        Self::from_manifest(dir, manifest, 0)
    }

    /// Open only rank `rank`'s share of the shards of the dataset in `dir` (of `ranks` ranks;
    /// [`crate::dist::shard_share`]), mapping no other shard. The result is a dataset of those
    /// shards alone: its manifest lists them with rows renumbered from 0 and totals of the
    /// share; columns, value type, feature permutation and column statistics stay the whole
    /// dataset's. A rank may get no shard (fewer shards than ranks): then it has no rows.
    pub fn open_share(dir: &Path, rank: usize, ranks: usize) -> Result<Dataset, DataError> {
        let mut manifest = read_manifest(dir)?;
        let total_rows = manifest.rows;
        let share = crate::dist::shard_share(&manifest.shards, rank, ranks);
        let first_entry = share.start;
        let first_row = manifest.shards[..share.start].iter().map(|s| s.rows).sum();
        manifest.shards = manifest.shards[share].to_vec();
        let (mut rows, mut nnz) = (0, 0);
        for shard in &mut manifest.shards {
            shard.first_row = rows;
            rows += shard.rows;
            nnz += shard.nnz;
        }
        (manifest.rows, manifest.nnz) = (rows, nnz);
        let mut dataset = Self::from_manifest(dir, manifest, first_entry)?;
        (dataset.first_row, dataset.total_rows) = (first_row, total_rows);
        Ok(dataset)
    }

    /// Load the permutation, map the shards `manifest` lists and check their headers against
    /// their entries (the recorded header checksum first, then the counts). `first_entry` is
    /// the index, in the manifest file, of the first entry listed (non-zero for a rank's
    /// share), for the errors.
    fn from_manifest(
        dir: &Path,
        manifest: Manifest,
        first_entry: usize,
    ) -> Result<Dataset, DataError> {
        let manifest_path = dir.join(MANIFEST);
        let manifest_rows = manifest.rows;
        if manifest.columns > MAX_FEATURES {
            return Err(DataError::invalid(
                &manifest_path,
                format!(
                    "{} columns: indices are 32-bit, so at most 2^32",
                    manifest.columns
                ),
            ));
        }
        let columns = manifest.columns as usize;
        let permutation = match &manifest.feature_permutation {
            Some(array) => {
                let p = array.load(dir, columns)?;
                if !is_permutation(&p) {
                    return Err(DataError::invalid(
                        &manifest_path,
                        format!("feature_permutation is not a permutation of 0..{columns}"),
                    ));
                }
                Some(p)
            }
            None => None,
        };
        let shards = manifest
            .shards
            .iter()
            .enumerate()
            .map(|(k, entry)| {
                let path = dir.join(&entry.file);
                let shard = Shard::open(&path)?;
                let h = shard.header();
                if let Some(recorded) = entry.header_crc32
                    && recorded != h.checksum()
                {
                    return Err(DataError::invalid(
                        &manifest_path,
                        format!(
                            "shard entry {} names {}, whose header checksum {:#010x} is not the \
                             {recorded:#010x} recorded for it: the manifest or the shard file \
                             was damaged or replaced",
                            first_entry + k,
                            entry.file,
                            h.checksum()
                        ),
                    ));
                }
                let agrees = h.n_rows as u64 == entry.rows
                    && h.nnz as u64 == entry.nnz
                    && h.n_features as u64 == manifest.columns
                    && h.value_kind == manifest.value_type
                    && shard.file_len() as u64 == entry.bytes;
                if !agrees {
                    return Err(DataError::invalid(
                        &path,
                        format!(
                            "shard header ({} rows, {} nnz, {} columns, {}, {} bytes) disagrees with {MANIFEST}",
                            h.n_rows,
                            h.nnz,
                            h.n_features,
                            h.value_kind,
                            shard.file_len()
                        ),
                    ));
                }
                Ok(shard)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Dataset {
            dir: dir.to_path_buf(),
            manifest: Box::new(manifest),
            shards,
            permutation,
            first_row: 0,
            total_rows: manifest_rows,
        })
    }

    /// The row of the whole dataset in `dir` that is this one's first: 0, or for a rank's
    /// share ([`Dataset::open_share`]) the rows of the shards before it. What lines up per-row
    /// data of the whole dataset (sample weights) with a share's rows.
    pub fn first_row(&self) -> u64 {
        self.first_row
    }

    /// The directory the dataset was opened from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The same whole dataset opened again from [`Dataset::dir`] (new maps of the same files,
    /// for a second view of its rows): an error if what is there now is not what this one opened
    /// (another manifest, or a shard of another header checksum), so that a dataset
    /// replaced or rewritten since is never read in its place.
    pub fn reopen(&self) -> Result<Dataset, DataError> {
        let again = Dataset::open(&self.dir)?;
        let headers =
            |d: &Dataset| -> Vec<u32> { d.shards.iter().map(|s| s.header().checksum()).collect() };
        if again.manifest != self.manifest || headers(&again) != headers(self) {
            return Err(DataError::invalid(
                &self.dir,
                "is not the dataset this one was opened from (replaced or rewritten since): \
                 open it again",
            ));
        }
        Ok(again)
    }

    /// The parsed manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The shards, in row order.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// Internal column index → original feature id, if features were renumbered.
    pub fn feature_permutation(&self) -> Option<&[u32]> {
        self.permutation.as_deref()
    }

    /// The per-column frequencies and means recorded at conversion, read from their files
    /// now (they are not loaded by [`Dataset::open`]); `None` if the dataset has none.
    pub fn column_statistics(&self) -> Result<Option<ColumnStatistics>, DataError> {
        let m = &self.manifest;
        let (Some(frequencies), Some(means)) = (&m.column_frequencies, &m.column_means) else {
            return Ok(None);
        };
        let columns = m.columns as usize;
        Ok(Some(ColumnStatistics {
            frequencies: frequencies.load(&self.dir, columns)?,
            means: means.load(&self.dir, columns)?,
        }))
    }

    /// How the dataset's columns were formed from Vowpal Wabbit text, if not by VW's
    /// defaults ([`Manifest::vw_features`]).
    pub fn vw_features(&self) -> Option<&FeatureRules> {
        self.manifest.vw_features.as_ref()
    }

    /// The file of the rows' stored sample weights, if the dataset has them.
    pub fn sample_weights_file(&self) -> Option<PathBuf> {
        let entry = self.manifest.sample_weights.as_ref()?;
        Some(self.dir.join(&entry.file))
    }

    /// The rows' stored sample weights, read from their file now (its length and checksum,
    /// one valid weight per row of the whole dataset), as many as this dataset's rows (its
    /// share's, for [`Dataset::open_share`]); `None` if it stores none (every row weighs 1).
    pub fn sample_weights(&self) -> Result<Option<Vec<f64>>, DataError> {
        let (Some(entry), Some(path)) = (&self.manifest.sample_weights, self.sample_weights_file())
        else {
            return Ok(None);
        };
        // Loaded at its own length, so that a count other than the rows' is said as such.
        let all = ColumnArray::File(entry.clone()).load(&self.dir, (entry.bytes / 8) as usize)?;
        super::sample_weights::check(&all, self.total_rows as usize)
            .map_err(|e| DataError::invalid(&path, e.to_string()))?;
        let first = self.first_row as usize;
        Ok(Some(
            all[first..first + self.manifest.rows as usize].to_vec(),
        ))
    }

    /// The full integrity pass: every section checksum and every row invariant of every
    /// shard (in parallel over shards; the first failing shard in row order is reported),
    /// then the per-column arrays the manifest lists (column frequencies and means: length,
    /// CRC-32 and entry count, as `info` reads them, and their contents recomputed from the
    /// shards), and the stored sample weights (length, CRC-32, one valid weight per row).
    pub fn verify(&self) -> Result<(), DataError> {
        let results: Vec<_> = self.shards.par_iter().map(Shard::verify).collect();
        results.into_iter().collect::<Result<(), _>>()?;
        self.verify_column_arrays()?;
        self.sample_weights().map(drop)
    }

    /// Check the per-column arrays the manifest lists (column frequencies and means; the
    /// permutation was checked on open), which the shard checksums do not cover: each file's
    /// length, CRC-32 and entry count, then every entry against the statistics recomputed
    /// from the verified shards, so that an array rewritten with a matching CRC is caught too.
    fn verify_column_arrays(&self) -> Result<(), DataError> {
        let (m, columns) = (&self.manifest, self.manifest.columns as usize);
        let frequencies = match &m.column_frequencies {
            Some(array) => Some((array, array.load(&self.dir, columns)?)),
            None => None,
        };
        let means = match &m.column_means {
            Some(array) => Some((array, array.load(&self.dir, columns)?)),
            None => None,
        };
        if frequencies.is_none() && means.is_none() {
            return Ok(());
        }
        let mut tally = ColumnTally::default();
        let refused = |e: AllocError| DataError::invalid(&self.dir, e.to_string());
        for shard in &self.shards {
            tally
                .add(shard.indices(), shard.values())
                .map_err(refused)?;
        }
        tally.grow(columns).map_err(refused)?;
        let recounted = tally.finish(m.rows);
        if let Some((array, stored)) = frequencies {
            self.compare_column_array(
                array,
                "column_frequencies",
                &stored,
                &recounted.frequencies,
            )?;
        }
        if let Some((array, stored)) = means {
            self.compare_column_array(array, "column_means", &stored, &recounted.means)?;
        }
        Ok(())
    }

    /// The error for the first column where a stored per-column array differs from the
    /// value recomputed from the shards (compared bit for bit: both sum in row order).
    fn compare_column_array<T: bytemuck::Pod + std::fmt::Display, U>(
        &self,
        array: &ColumnArray<U>,
        entry: &str,
        stored: &[T],
        recounted: &[T],
    ) -> Result<(), DataError> {
        let differs = |(a, b): &(&T, &T)| bytemuck::bytes_of(*a) != bytemuck::bytes_of(*b);
        let Some((column, (stored, recounted))) = stored
            .iter()
            .zip(recounted)
            .enumerate()
            .find(|(_, pair)| differs(pair))
        else {
            return Ok(());
        };
        let feature = self
            .permutation
            .as_ref()
            .map_or(column as u64, |p| u64::from(p[column]));
        // A version-1 manifest holds the array inline.
        let (path, place) = match array.file_name() {
            Some(file) => (self.dir.join(file), String::new()),
            None => (self.dir.join(MANIFEST), format!("{entry}: ")),
        };
        Err(DataError::invalid(
            &path,
            format!(
                "{place}column {column} (feature {}) holds {stored}, the shards give \
                 {recounted}: the array does not describe this data",
                feature + 1
            ),
        ))
    }

    /// Verify every shard in full, in parallel, once ([`Shard::verify`]: the section checksums,
    /// then the row invariants, which also prove each shard's index bound) and return the
    /// validated row view. A flipped bit in a label or value breaks no invariant, and only the
    /// checksum tells; recomputing it adds about 20 ms of one core to the 30–50 ms the row
    /// checks take on rcv1-like (488 MB of shards), 5–10% of one single-threaded ASGD epoch.
    pub fn into_examples(self) -> Result<DatasetExamples, DataError> {
        let results: Vec<_> = self.shards.par_iter().map(Shard::verify).collect();
        results.into_iter().collect::<Result<(), _>>()?;
        let starts = self
            .manifest
            .shards
            .iter()
            .map(|s| s.first_row as usize)
            .collect();
        // Fixed rows per shard (all but the last equal) allows locating a row by division, or
        // a shift when that count is a power of two. One shard: every row shifts to shard 0
        // by the width less one (a shard holds far fewer than 2^63 rows, 16 bytes each).
        let locate = match self.manifest.shards.split_last() {
            Some((_, [])) => Locate::Shift(usize::BITS - 1),
            Some((last, init)) => {
                let r = init[0].rows;
                if r > 0 && init.iter().all(|s| s.rows == r) && last.rows <= r {
                    let r = r as usize;
                    if r.is_power_of_two() {
                        Locate::Shift(r.trailing_zeros())
                    } else {
                        Locate::Divide(r)
                    }
                } else {
                    Locate::Search
                }
            }
            None => Locate::Search,
        };
        Ok(DatasetExamples {
            n_features: self.manifest.columns as usize,
            starts,
            locate,
            dataset: self,
            scaled_values: Vec::new(),
        })
    }
}

/// Parse and check `dir`'s manifest.
fn read_manifest(dir: &Path) -> Result<Manifest, DataError> {
    if dir.is_file() {
        return Err(DataError::invalid(
            dir,
            "a file, where a dataset directory is expected: convert it into one first \
             (`sparselin convert FILE DIR`)",
        ));
    }
    let manifest_path = dir.join(MANIFEST);
    let text = std::fs::read(&manifest_path).map_err(|e| DataError::io(&manifest_path, e))?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| DataError::invalid(&manifest_path, format!("bad manifest: {e}")))?;
    check_manifest(&manifest).map_err(|m| DataError::invalid(&manifest_path, m))?;
    Ok(manifest)
}

fn check_manifest(m: &Manifest) -> Result<(), String> {
    if m.format != FORMAT_NAME {
        return Err(format!(
            "format is '{}', expected '{FORMAT_NAME}'",
            m.format
        ));
    }
    if !(1..=WEIGHTED_MANIFEST_VERSION).contains(&m.version) {
        return Err(format!(
            "unsupported manifest version {} (this build reads versions 1 to \
             {WEIGHTED_MANIFEST_VERSION})",
            m.version
        ));
    }
    if m.sample_weights.is_some() != (m.version == WEIGHTED_MANIFEST_VERSION) {
        return Err(format!(
            "manifest version {} {} sample weights: version {WEIGHTED_MANIFEST_VERSION} \
             and only it has them",
            m.version,
            if m.sample_weights.is_some() {
                "with"
            } else {
                "without"
            }
        ));
    }
    if let Some(rules) = &m.vw_features {
        let bits = m.columns.trailing_zeros();
        let hashing = match m.columns.is_power_of_two() {
            true => Hashing::new(bits, rules),
            false => Err(format!("{} columns are no power of two", m.columns)),
        };
        match hashing {
            Ok(h) if h.rules() == rules && !rules.is_default() => {}
            Ok(_) => return Err("vw_features are not in their normal form".to_string()),
            Err(e) => return Err(format!("vw_features: {e}")),
        }
    }
    let plain =
        |name: &str| !(name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.'));
    let array_files = [
        m.feature_permutation
            .as_ref()
            .and_then(ColumnArray::file_name),
        m.column_frequencies
            .as_ref()
            .and_then(ColumnArray::file_name),
        m.column_means.as_ref().and_then(ColumnArray::file_name),
        m.sample_weights.as_ref().map(|w| w.file.as_str()),
    ];
    if let Some(name) = array_files.into_iter().flatten().find(|n| !plain(n)) {
        return Err(format!(
            "column array file name '{name}' is not a plain name"
        ));
    }
    let (mut rows, mut nnz) = (0u64, 0u64);
    let mut named = std::collections::HashMap::with_capacity(m.shards.len());
    for (k, s) in m.shards.iter().enumerate() {
        if !plain(&s.file) {
            return Err(format!("shard file name '{}' is not a plain name", s.file));
        }
        if let Some(earlier) = named.insert(s.file.as_str(), k) {
            return Err(format!(
                "shard entries {earlier} and {k} both name {}: one shard would be read twice",
                s.file
            ));
        }
        if m.version >= 3 && s.header_crc32.is_none() {
            return Err(format!(
                "shard entry {k} ({}) has no header_crc32, which manifest version {} requires",
                s.file, m.version
            ));
        }
        if s.first_row != rows {
            return Err(format!(
                "shard {} starts at row {}, expected {rows}",
                s.file, s.first_row
            ));
        }
        rows = rows.checked_add(s.rows).ok_or("row count overflows")?;
        nnz = nnz.checked_add(s.nnz).ok_or("nnz overflows")?;
    }
    if rows != m.rows || nnz != m.nnz {
        return Err(format!(
            "shards hold {rows} rows and {nnz} entries, manifest says {} and {}",
            m.rows, m.nnz
        ));
    }
    if usize::try_from(m.columns).is_err() || m.columns > u64::from(u32::MAX) + 1 {
        return Err(format!("{} columns do not fit u32 indices", m.columns));
    }
    Ok(())
}

/// Whether `p` holds every value of `0..p.len()` once.
fn is_permutation(p: &[u32]) -> bool {
    let mut seen = vec![false; p.len()];
    p.iter().all(|&id| match seen.get_mut(id as usize) {
        Some(s) if !*s => {
            *s = true;
            true
        }
        _ => false,
    })
}

/// How a global row index finds its shard.
#[derive(Clone, Copy, Debug)]
enum Locate {
    /// Shards of 2^k rows (but the last, shorter): the shard is `i >> k`.
    Shift(u32),
    /// Shards of r rows (but the last, shorter): the shard is `i / r`.
    Divide(usize),
    /// Uneven shards: binary search of the first rows.
    Search,
}

/// A dataset whose rows have all been validated: random access by global row index.
#[derive(Debug)]
pub struct DatasetExamples {
    dataset: Dataset,
    starts: Vec<usize>,
    locate: Locate,
    n_features: usize,
    /// Each shard's values divided by column scales ([`DatasetExamples::scaled`]), read in
    /// place of the mapped ones; empty when the values are the files'.
    scaled_values: Vec<ValueVec>,
}

impl DatasetExamples {
    /// The underlying dataset (manifest, shards, permutation).
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// The same rows with a larger declared column count (e.g. a model's), which keeps every
    /// index below it. Fewer columns than the dataset has is an error, and so is more than
    /// [`MAX_FEATURES`].
    pub fn with_n_features(mut self, n_features: usize) -> Result<Self, DataError> {
        if n_features as u64 > MAX_FEATURES {
            return Err(DataError::invalid(
                &self.dataset.dir,
                CsrError::TooManyFeatures { n_features }.to_string(),
            ));
        }
        if n_features < self.dataset.manifest.columns as usize {
            return Err(DataError::invalid(
                &self.dataset.dir,
                format!(
                    "dataset has {} columns, more than the {n_features} requested",
                    self.dataset.manifest.columns
                ),
            ));
        }
        self.n_features = n_features;
        Ok(self)
    }

    /// The same rows with each column divided by its scale (`scales` in this set's column
    /// numbering, [`ColumnScales`]): every shard's values are copied into memory, scaled
    /// (the indices stay mapped). An error names the dataset if a scaled value overflows
    /// (scales of other data, far larger values than theirs).
    pub fn scaled(mut self, scales: &ColumnScales) -> Result<DatasetExamples, DataError> {
        let scaled: Vec<ValueVec> = (0..self.dataset.shards.len())
            .into_par_iter()
            .map(|s| {
                let rows = self.shard_rows(s);
                scales.scaled_values(rows.indices(), rows.values())
            })
            .collect();
        let overflow = scaled.iter().any(|values| match values {
            ValueVec::F64(v) => !v.iter().all(|x| x.is_finite()),
            ValueVec::F32(_) | ValueVec::Ones => false,
        });
        if overflow {
            return Err(DataError::invalid(
                &self.dataset.dir,
                "a value divided by its column's scale is beyond f64's range",
            ));
        }
        self.scaled_values = scaled;
        Ok(self)
    }

    /// The typed views of shard `s`'s sections, its values scaled if they are.
    #[inline]
    fn shard_rows(&self, s: usize) -> ShardRows<'_> {
        let rows = self.dataset.shards[s].rows();
        match self.scaled_values.get(s) {
            Some(values) => rows.with_values(values.slice(0, rows.indices().len())),
            None => rows,
        }
    }

    /// Global row ranges of the shards, the natural unit of parallel work.
    pub fn shard_ranges(&self) -> Vec<std::ops::Range<usize>> {
        let m = &self.dataset.manifest;
        m.shards
            .iter()
            .map(|s| s.first_row as usize..(s.first_row + s.rows) as usize)
            .collect()
    }

    /// [`Examples::for_each_block`] with each shard viewed by `shard_rows`: the part of `rows`
    /// in each shard is one block.
    fn blocks_by_shard<'s>(
        &self,
        rows: Range<usize>,
        shard_rows: impl Fn(usize) -> ShardRows<'s>,
        visit: &mut dyn FnMut(usize, RowBlock<'_>),
    ) {
        assert!(
            rows.end <= self.n_rows(),
            "rows to {} of {}",
            rows.end,
            self.n_rows()
        );
        let mut first = rows.start;
        while first < rows.end {
            let (shard, local) = self.locate(first);
            let shard_end = self
                .starts
                .get(shard + 1)
                .map_or(rows.end, |&s| s.min(rows.end));
            visit(
                first,
                shard_rows(shard).block(local..local + (shard_end - first)),
            );
            first = shard_end;
        }
    }

    /// (shard, row within it) of global row `i`.
    #[inline]
    fn locate(&self, i: usize) -> (usize, usize) {
        let shard = match self.locate {
            Locate::Shift(k) => i >> k,
            Locate::Divide(r) => i / r,
            Locate::Search => self.starts.partition_point(|&s| s <= i) - 1,
        };
        (shard, i - self.starts[shard])
    }
}

impl Examples for DatasetExamples {
    fn n_rows(&self) -> usize {
        self.dataset.manifest.rows as usize
    }

    fn n_features(&self) -> usize {
        self.n_features
    }

    #[inline]
    fn row(&self, i: usize) -> Row<'_> {
        assert!(i < self.n_rows(), "row {i} of {}", self.n_rows());
        let (shard, local) = self.locate(i);
        self.shard_rows(shard).row(local)
    }

    fn nnz(&self) -> u64 {
        self.dataset.manifest.nnz
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        if i < self.n_rows() {
            let (shard, local) = self.locate(i);
            self.dataset.shards[shard].prefetch_extent(local);
        }
    }

    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        self.blocks_by_shard(rows, |s| self.shard_rows(s), visit);
    }

    type Rows<'a> = DatasetRows<'a>;

    fn rows(&self) -> DatasetRows<'_> {
        DatasetRows::new(self)
    }
}
