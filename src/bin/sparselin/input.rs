//! Opening training and test data for the subcommands.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use sparselin::data::csr::MAX_FEATURES;
use sparselin::data::libsvm::{LibsvmError, ParseOptions};
use sparselin::data::{DataError, Dataset, ExampleSet, open_examples, sample_weights};
use sparselin::loss::Loss;
use sparselin::metrics;

/// How LIBSVM text given to `train`, `predict` and `eval` is numbered (dataset directories
/// are already converted).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct TextArgs {
    /// Indices in LIBSVM text input start at 0 (default: 1-based).
    #[arg(long)]
    pub zero_based: bool,
}

/// Open a dataset directory or a LIBSVM file (gzip recognized). For text the feature count is
/// `n_features` if given, else the `features` entry of a `meta.json` beside the file (the
/// real data sets' convention: the largest index in a file can be below the true dimension),
/// else the largest index seen. An index beyond a count from `meta.json` is reported as such.
pub fn read_examples(
    path: &Path,
    n_features: Option<usize>,
    text: TextArgs,
) -> anyhow::Result<ExampleSet> {
    let meta = match n_features {
        None if path.is_file() => meta_features(path),
        _ => None,
    };
    let options = ParseOptions {
        n_features: n_features.or(meta.as_ref().map(|m| m.1)),
        zero_based: text.zero_based,
        ..ParseOptions::default()
    };
    open_examples(path, options).map_err(|error| match (error, meta) {
        (
            DataError::Text(LibsvmError::BeyondDeclared {
                file,
                line,
                column,
                index,
                declared,
            }),
            Some((meta, _)),
        ) => anyhow!(
            "{file}:{line}:{column}: index {index} is beyond the {declared} features that {} declares",
            meta.display()
        ),
        (error, _) => error.into(),
    })
}

/// The `meta.json` in the file's directory and its `features` count, if there is one with
/// that entry. `meta.json` is a common name, so one that cannot be read, is not JSON, or whose
/// `features` is not a count from 0 to 2^32 is not taken for the data's: a warning names it
/// and the count falls back to the largest index seen (`train --features` sets it).
fn meta_features(path: &Path) -> Option<(PathBuf, usize)> {
    let meta = path.parent()?.join("meta.json");
    if !meta.is_file() {
        return None;
    }
    match declared_features(&meta) {
        Ok(count) => Some((meta, count?)),
        Err(why) => {
            errln!(
                "sparselin: warning: {}: {why}; not used for the feature count of {}",
                meta.display(),
                path.display()
            );
            None
        }
    }
}

/// The `features` entry of the JSON file `meta`, if it has one; why not, if it cannot be read,
/// is not JSON, or the entry is not a feature count.
fn declared_features(meta: &Path) -> Result<Option<usize>, String> {
    let text = std::fs::read_to_string(meta).map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let Some(features) = value.get("features") else {
        return Ok(None);
    };
    let count = features
        .as_u64()
        .filter(|&n| n <= MAX_FEATURES)
        .and_then(|n| usize::try_from(n).ok());
    match count {
        Some(n) => Ok(Some(n)),
        None => Err(format!(
            "\"features\" is {features}, not a feature count (an integer from 0 to 2^32)"
        )),
    }
}

/// An error naming `path` when a binary classifier (`loss`) would be scored on `data` whose
/// labels (`which`: "labels", "test labels") take more than two values: labels 2 and 3 would
/// both count as +1.
pub fn refuse_multiclass(
    loss: Loss,
    data: &ExampleSet,
    path: &Path,
    which: &str,
) -> anyhow::Result<()> {
    if loss.is_classification()
        && let Some([a, b, c]) = metrics::more_than_two_values(&metrics::labels(data))
    {
        anyhow::bail!(
            "{}: the {which} take more than two values ({a}, {b}, {c}, …), but {loss} loss is \
             binary classification: label one class > 0 and the other ≤ 0 (e.g. ±1)",
            path.display()
        );
    }
    Ok(())
}

/// The sample weights of a set of rows and the file they come from (for messages).
#[derive(Clone, Debug)]
pub struct RowWeights {
    /// The `--sample-weights` file, or the dataset's stored weights file.
    pub origin: PathBuf,
    /// One weight per row.
    pub weights: Vec<f64>,
}

/// The weights of the rows of `data`: those of the file `given` (`--sample-weights`) if
/// there is one, else those `data` stores when it is a dataset directory converted with
/// weights (Vowpal Wabbit importance weights, `convert --sample-weights`), else none.
pub fn row_weights(given: Option<&Path>, data: &Path) -> anyhow::Result<Option<RowWeights>> {
    if let Some(path) = given {
        return Ok(Some(RowWeights {
            origin: path.to_path_buf(),
            weights: sample_weights::read(path)?,
        }));
    }
    if !data.is_dir() {
        return Ok(None);
    }
    let dataset = Dataset::open(data)?;
    let stored = dataset.sample_weights()?.zip(dataset.sample_weights_file());
    Ok(stored.map(|(weights, origin)| RowWeights { origin, weights }))
}
