//! Opening training and test data for the subcommands.

use std::path::Path;

use anyhow::Context;
use sparselin::data::libsvm::ParseOptions;
use sparselin::data::{ExampleSet, open_examples};

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
/// else the largest index seen.
pub fn read_examples(
    path: &Path,
    n_features: Option<usize>,
    text: TextArgs,
) -> anyhow::Result<ExampleSet> {
    let n_features = match n_features {
        Some(n) => Some(n),
        None if path.is_file() => meta_features(path)?,
        None => None,
    };
    let options = ParseOptions {
        n_features,
        zero_based: text.zero_based,
        ..ParseOptions::default()
    };
    Ok(open_examples(path, options)?)
}

/// The `features` count of `meta.json` in the file's directory, if there is one.
fn meta_features(path: &Path) -> anyhow::Result<Option<usize>> {
    let Some(meta) = path.parent().map(|dir| dir.join("meta.json")) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&meta).with_context(|| meta.display().to_string())?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| meta.display().to_string())?;
    Ok(value
        .get("features")
        .and_then(serde_json::Value::as_u64)
        .map(|n| n as usize))
}
