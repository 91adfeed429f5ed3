//! Summary statistics of a dataset (`sparselin info`).

use rayon::prelude::*;
use serde::Serialize;

use super::dataset::Dataset;
use super::error::DataError;

/// Distribution of non-zeros per row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NnzDistribution {
    /// Smallest row.
    pub min: u64,
    /// Median row.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest row.
    pub max: u64,
    /// Mean non-zeros per row.
    pub mean: f64,
}

/// Labels: the count of each distinct value when there are few (classification), or their
/// range and mean (regression).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabelSummary {
    /// (label, rows) for each distinct label, when there are at most 16 of them.
    pub counts: Option<Vec<(f64, u64)>>,
    /// Smallest label.
    pub min: f64,
    /// Largest label.
    pub max: f64,
    /// Mean label.
    pub mean: f64,
}

/// The spread of a dataset's stored sample weights.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WeightSummary {
    /// Smallest weight.
    pub min: f64,
    /// Largest weight.
    pub max: f64,
    /// Mean weight (the sum over the rows, divided by their count).
    pub mean: f64,
    /// Rows of weight 0 (which count as none).
    pub zero: u64,
}

/// One shard as reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShardSummary {
    /// File name.
    pub file: String,
    /// First global row.
    pub first_row: u64,
    /// Rows.
    pub rows: u64,
    /// Stored entries.
    pub nnz: u64,
    /// File length.
    pub bytes: u64,
}

/// The column non-zero in the most rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DensestColumn {
    /// Its feature id as LIBSVM text numbers it (and `export` writes it): 1-based, and the
    /// original id of a renumbered dataset, whose internal index says nothing to the user
    /// (the densest column of a dataset renumbered by frequency is always internal column 0).
    pub feature: u64,
    /// Rows it is non-zero in.
    pub rows: u64,
}

/// Column usage, from the statistics recorded at conversion.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnUsage {
    /// Columns non-zero in at least one row.
    pub used: u64,
    /// The column non-zero in the most rows (the smallest feature id among ties); `None` when
    /// no column is used.
    pub densest: Option<DensestColumn>,
    /// Median over the used columns of the rows each is non-zero in.
    pub median_frequency: u64,
}

/// Everything `sparselin info` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DatasetSummary {
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub columns: u64,
    /// Stored entries.
    pub nnz: u64,
    /// Value storage (`ones`, `f32`, `f64`).
    pub value_type: String,
    /// Whether features were renumbered by frequency.
    pub renumbered: bool,
    /// Non-zeros per row.
    pub nnz_per_row: NnzDistribution,
    /// Labels.
    pub labels: LabelSummary,
    /// Column usage, when the dataset recorded column statistics.
    pub column_usage: Option<ColumnUsage>,
    /// The stored sample weights, when the dataset has them.
    pub sample_weights: Option<WeightSummary>,
    /// Shards.
    pub shards: Vec<ShardSummary>,
}

/// Summarize `dataset` (reads the row offsets and labels of every shard, not the indices,
/// and the column statistics files). The labels and offsets are checked first
/// ([`Shard::check_labels_and_offsets`](super::Shard::check_labels_and_offsets): checksums,
/// order, finite labels), so that a corrupted shard is an error naming it, not a summary of
/// garbage; the first failing shard in row order is reported.
pub fn summarize(dataset: &Dataset) -> Result<DatasetSummary, DataError> {
    let checked: Vec<_> = dataset
        .shards()
        .par_iter()
        .map(|s| s.check_labels_and_offsets())
        .collect();
    checked.into_iter().collect::<Result<(), _>>()?;
    let mut lengths: Vec<u64> = dataset
        .shards()
        .par_iter()
        .flat_map_iter(|s| s.offsets().windows(2).map(|w| w[1].saturating_sub(w[0])))
        .collect();
    lengths.sort_unstable();
    let quantile = |q: f64| {
        let k = ((lengths.len() as f64 - 1.0) * q).round() as usize;
        lengths.get(k).copied().unwrap_or(0)
    };
    let m = dataset.manifest();
    let nnz_per_row = NnzDistribution {
        min: quantile(0.0),
        p50: quantile(0.5),
        p90: quantile(0.9),
        p99: quantile(0.99),
        max: quantile(1.0),
        mean: m.nnz as f64 / m.rows.max(1) as f64,
    };
    let mut counts: Vec<(f64, u64)> = Vec::new();
    let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    let mut few = true;
    let labels = || dataset.shards().iter().flat_map(|s| s.labels());
    for &y in labels() {
        // −0 equals 0: counted as the label 0, not as a class printed "-0" when it comes first.
        let y = if y == 0.0 { 0.0 } else { y };
        min = min.min(y);
        max = max.max(y);
        sum += y;
        if few {
            let full = counts.len() >= 16;
            match counts.iter_mut().find(|c| c.0 == y) {
                Some(c) => c.1 += 1,
                None if !full => counts.push((y, 1)),
                None => few = false,
            }
        }
    }
    counts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let rows = m.rows.max(1) as f64;
    // Finite labels can still sum past f64::MAX (two labels of 1e308): then the mean is the
    // sum of the labels each divided by the row count first, which cannot overflow. Rounding
    // could only carry it past the extreme labels, so it is held between them (with `max` and
    // `min`, which unlike `clamp` cannot panic on the labels of a corrupted shard).
    let mean = if sum.is_finite() {
        sum / rows
    } else {
        labels().map(|&y| y / rows).sum::<f64>().max(min).min(max)
    };
    let labels = LabelSummary {
        counts: few.then_some(counts),
        min: if m.rows == 0 { 0.0 } else { min },
        max: if m.rows == 0 { 0.0 } else { max },
        mean,
    };
    let column_usage = dataset.column_statistics()?.map(|stats| {
        let mut used: Vec<u64> = stats
            .frequencies
            .iter()
            .copied()
            .filter(|&f| f > 0)
            .collect();
        used.sort_unstable();
        let permutation = dataset.feature_permutation();
        let densest = (0u64..)
            .zip(&stats.frequencies)
            .filter(|&(_, &f)| f > 0)
            .map(|(j, &f)| (permutation.map_or(j, |p| u64::from(p[j as usize])), f))
            .max_by_key(|&(id, f)| (f, std::cmp::Reverse(id)))
            .map(|(id, rows)| DensestColumn {
                feature: id + 1,
                rows,
            });
        ColumnUsage {
            used: used.len() as u64,
            densest,
            median_frequency: used.get(used.len() / 2).copied().unwrap_or(0),
        }
    });
    let sample_weights = dataset.sample_weights()?.map(|weights| WeightSummary {
        min: weights.iter().copied().fold(f64::INFINITY, f64::min),
        max: weights.iter().copied().fold(0.0, f64::max),
        mean: weights.iter().sum::<f64>() / weights.len().max(1) as f64,
        zero: weights.iter().filter(|&&s| s == 0.0).count() as u64,
    });
    Ok(DatasetSummary {
        rows: m.rows,
        columns: m.columns,
        nnz: m.nnz,
        value_type: m.value_type.to_string(),
        renumbered: m.feature_permutation.is_some(),
        nnz_per_row,
        labels,
        column_usage,
        sample_weights,
        shards: m
            .shards
            .iter()
            .map(|s| ShardSummary {
                file: s.file.clone(),
                first_row: s.first_row,
                rows: s.rows,
                nnz: s.nnz,
                bytes: s.bytes,
            })
            .collect(),
    })
}
