//! Opening training and test data for the subcommands.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use sparselin::data::csr::MAX_FEATURES;
use sparselin::data::libsvm::{LibsvmError, ParseOptions, ValueType};
use sparselin::data::stream::{TextFormat, read_text};
use sparselin::data::vw::{self, FeatureRules, Hashing};
use sparselin::data::{DataError, Dataset, ExampleSet, open_examples, sample_weights};
use sparselin::loss::Loss;
use sparselin::metrics;
use sparselin::model::SavedModel;

/// How text input is read: its format, and how it numbers or hashes features (a dataset
/// directory is read as it was converted).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TextArgs {
    /// The text's format: `libsvm` (LIBSVM / SVMlight: `label index:value ...`) or `vw`
    /// (Vowpal Wabbit: `label [importance] ['tag]|namespace name[:value] ...`, names hashed
    /// into 2^--bits columns as VW hashes them, importance weights the rows' sample weights).
    #[arg(long, value_enum, default_value_t = Format::Libsvm)]
    pub format: Format,
    /// Vowpal Wabbit text: hash bits (VW's -b), 1 to 32, for 2^bits columns. [default: 18;
    /// for text a model scores, the bits of the model's 2^b columns]
    #[arg(long)]
    pub bits: Option<u32>,
    /// Vowpal Wabbit text: also form the features of each pair of namespaces named by their
    /// first letters (VW's -q; repeatable: `--quadratic ab --quadratic aa`; `:` stands for
    /// every namespace: `--quadratic ::`), hashed as VW hashes them. [default: for text a
    /// model scores, the model's]
    #[arg(long, value_name = "AB")]
    pub quadratic: Vec<String>,
    /// Vowpal Wabbit text: also form the features of each triple of namespaces (VW's --cubic).
    #[arg(long, value_name = "ABC")]
    pub cubic: Vec<String>,
    /// Vowpal Wabbit text: also form the features of each group of two or more namespaces
    /// (VW's --interactions).
    #[arg(long, value_name = "ABC...")]
    pub interactions: Vec<String>,
    /// Vowpal Wabbit text: drop the features of the namespaces of these letters, from the
    /// rows and the interactions (VW's --ignore).
    #[arg(long, value_name = "LETTERS")]
    pub ignore: Vec<String>,
    /// Vowpal Wabbit text: keep only the features of the namespaces of these letters (VW's
    /// --keep).
    #[arg(long, value_name = "LETTERS")]
    pub keep: Vec<String>,
    /// Vowpal Wabbit text: the features of the namespaces of these letters enter only the
    /// interactions, not the rows themselves (VW's --ignore_linear).
    #[arg(long, value_name = "LETTERS")]
    pub ignore_linear: Vec<String>,
    /// Vowpal Wabbit text: `strings` reads a name of digits as its number, as VW does by
    /// default; `all` hashes it as any other name (VW's --hash all).
    #[arg(long, value_enum, value_name = "MODE")]
    pub hash: Option<HashMode>,
    /// LIBSVM text: indices start at 0 (default: 1-based).
    #[arg(long)]
    pub zero_based: bool,
}

/// How Vowpal Wabbit text hashes names of digits (VW's --hash).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HashMode {
    /// A name of digits is its number (plus the namespace's seed).
    Strings,
    /// Every name is hashed by MurmurHash3.
    All,
}

/// A text format on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// LIBSVM / SVMlight.
    #[default]
    Libsvm,
    /// Vowpal Wabbit.
    Vw,
}

impl TextArgs {
    /// The format these flags describe, with an error for a flag of the other format. Text
    /// that `model` will score is read as the model's training data was: hashed into the
    /// model's bits when its column count is a power of two, by the rules it records
    /// ([`VW_FEATURES`]). Those are the defaults, and other bits or rules would give columns
    /// the model never learned, so they are refused.
    pub fn format(&self, model: Option<&SavedModel>) -> anyhow::Result<TextFormat> {
        if self.format == Format::Vw {
            return Ok(TextFormat::Vw {
                hashing: self.hashing(model)?,
                unlabeled: false,
            });
        }
        let vw_flags = [
            ("--bits", self.bits.is_some()),
            ("--quadratic", !self.quadratic.is_empty()),
            ("--cubic", !self.cubic.is_empty()),
            ("--interactions", !self.interactions.is_empty()),
            ("--ignore", !self.ignore.is_empty()),
            ("--keep", !self.keep.is_empty()),
            ("--ignore-linear", !self.ignore_linear.is_empty()),
            ("--hash", self.hash.is_some()),
        ];
        if let Some((flag, _)) = vw_flags.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} is for Vowpal Wabbit text: add --format vw");
        }
        Ok(TextFormat::Libsvm {
            zero_based: self.zero_based,
        })
    }

    /// How Vowpal Wabbit text is hashed by these flags and, where they say nothing, by
    /// `model` ([`TextArgs::format`]).
    fn hashing(&self, model: Option<&SavedModel>) -> anyhow::Result<Hashing> {
        anyhow::ensure!(
            !self.zero_based,
            "--zero-based numbers LIBSVM indices; Vowpal Wabbit text has names, hashed"
        );
        for (flag, given, letters) in [
            ("--quadratic", &self.quadratic, 2),
            ("--cubic", &self.cubic, 3),
        ] {
            if let Some(wrong) = given.iter().find(|g| g.len() != letters) {
                anyhow::bail!("{flag} {wrong:?}: give {letters} namespace letters (one byte each)");
            }
        }
        let model_bits = model
            .map(SavedModel::n_features)
            .filter(|n| n.is_power_of_two() && *n > 1)
            .map(|n| n.trailing_zeros());
        let bits = match (self.bits, model_bits) {
            (Some(bits), Some(model)) if bits != model => anyhow::bail!(
                "--bits {bits}, but the model has 2^{model} columns: text must be hashed into \
                 the bits its model was trained with (leave out --bits to take the model's)"
            ),
            (bits, model) => bits.or(model).unwrap_or(vw::DEFAULT_BITS),
        };
        let rules = FeatureRules {
            interactions: (self.quadratic.iter())
                .chain(&self.cubic)
                .chain(&self.interactions)
                .cloned()
                .collect(),
            ignore: self.ignore.concat(),
            keep: self.keep.concat(),
            ignore_linear: self.ignore_linear.concat(),
            hash_all: self.hash == Some(HashMode::All),
        };
        let given = Hashing::new(bits, &rules).map_err(|e| anyhow!("{e}"))?;
        let rule_given = rules != FeatureRules::default() || self.hash.is_some();
        match model.map(recorded_features).transpose()?.flatten() {
            Some(recorded) if !rule_given => {
                Hashing::new(bits, &recorded).map_err(|e| anyhow!("the model's {VW_FEATURES}: {e}"))
            }
            Some(recorded) if *given.rules() != recorded => anyhow::bail!(
                "the Vowpal Wabbit flags given read the text by {}, but the model was trained \
                 on text read by {}: text must be read as its model's was (leave out the \
                 flags to take the model's)",
                serde_json::to_string(given.rules())?,
                serde_json::to_string(&recorded)?,
            ),
            _ => Ok(given),
        }
    }
}

/// The key under which a model's training details record how the Vowpal Wabbit text of its
/// training data was read, when not by VW's defaults ([`FeatureRules`]).
pub const VW_FEATURES: &str = "vw_features";

/// How `data` read in `format` was formed from Vowpal Wabbit text, if not by VW's defaults:
/// a dataset's rules recorded at conversion, or those `format` reads text by.
pub fn vw_features(data: &ExampleSet, format: &TextFormat) -> Option<FeatureRules> {
    match (data, format) {
        (ExampleSet::Dataset(d), _) => d.dataset().vw_features().cloned(),
        (ExampleSet::Matrix(_), TextFormat::Vw { hashing, .. }) => {
            Some(hashing.rules().clone()).filter(|r| !r.is_default())
        }
        (ExampleSet::Matrix(_), TextFormat::Libsvm { .. }) => None,
    }
}

/// An error naming `path` when `data` is a dataset converted from Vowpal Wabbit text by
/// other rules than those `model` records of its training data (interactions, dropped
/// namespaces, hash): its columns would not be the model's.
pub fn refuse_other_vw_features(
    model: &SavedModel,
    data: &ExampleSet,
    path: &Path,
) -> anyhow::Result<()> {
    let (ExampleSet::Dataset(d), Some(recorded)) = (data, recorded_features(model)?) else {
        return Ok(());
    };
    let converted = d.dataset().vw_features().cloned().unwrap_or_default();
    anyhow::ensure!(
        converted == recorded,
        "{}: converted from Vowpal Wabbit text read by {}, but the model was trained on text \
         read by {}: convert the text again with the model's flags",
        path.display(),
        serde_json::to_string(&converted)?,
        serde_json::to_string(&recorded)?,
    );
    Ok(())
}

/// How `model` records the Vowpal Wabbit text of its training data was read, if it does.
fn recorded_features(model: &SavedModel) -> anyhow::Result<Option<FeatureRules>> {
    let details = match model {
        SavedModel::Single(model) => &model.info.details,
        SavedModel::OneVsRest(classifier) => &classifier.models()[0].info.details,
    };
    let Some(record) = details.get(VW_FEATURES) else {
        return Ok(None);
    };
    let rules = serde_json::from_value(record.clone())
        .with_context(|| format!("the model's {VW_FEATURES} record {record}"))?;
    Ok(Some(rules))
}

/// Data as read, with the weights its rows carry: Vowpal Wabbit text's importance weights
/// (a dataset's stored weights are read by [`row_weights`] when wanted).
pub struct Input {
    /// The rows.
    pub examples: ExampleSet,
    /// The text's importance weights, when not all 1.
    pub weights: Option<RowWeights>,
}

/// Open a dataset directory or a text file in `format` (gzip recognized). For text the
/// feature count is `n_features` if given, else (LIBSVM) the `features` entry of a
/// `meta.json` beside the file (the real data sets' convention: the largest index in a file
/// can be below the true dimension), else the largest index seen; hashed text has 2^bits.
/// An index beyond a count from `meta.json` is reported as such.
pub fn read_examples(
    path: &Path,
    n_features: Option<usize>,
    format: &TextFormat,
) -> anyhow::Result<Input> {
    if let TextFormat::Vw { .. } = format
        && !path.is_dir()
    {
        let text = read_text(path, format, ValueType::F32, n_features)?;
        return Ok(Input {
            examples: ExampleSet::Matrix(text.matrix),
            weights: text.sample_weights.map(|weights| RowWeights {
                origin: path.to_path_buf(),
                weights,
            }),
        });
    }
    let meta = match n_features {
        None if path.is_file() => meta_features(path),
        _ => None,
    };
    let options = ParseOptions {
        n_features: n_features.or(meta.as_ref().map(|m| m.1)),
        zero_based: matches!(format, TextFormat::Libsvm { zero_based: true }),
        ..ParseOptions::default()
    };
    let examples = open_examples(path, options).map_err(|error| naming_meta(error, meta))?;
    Ok(Input {
        examples,
        weights: None,
    })
}

/// `error`, with an index beyond the feature count that `meta` (a meta.json and its count)
/// declared named as that file's.
pub(crate) fn naming_meta(error: DataError, meta: Option<(PathBuf, usize)>) -> anyhow::Error {
    match (error, meta) {
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
        (error, _) => anyhow::Error::from(error),
    }
}

/// The `meta.json` in the file's directory and its `features` count, if there is one with
/// that entry. `meta.json` is a common name, so one that cannot be read, is not JSON, or whose
/// `features` is not a count from 0 to 2^32 is not taken for the data's: a warning names it
/// and the count falls back to the largest index seen (`train --features` sets it).
pub(crate) fn meta_features(path: &Path) -> Option<(PathBuf, usize)> {
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

/// An error naming `path` when a model of `loss` would be scored on `data` whose labels
/// (`which`: "labels", "test labels") it cannot score: a binary classifier's taking more than
/// two values (labels 2 and 3 would both count as +1), a Poisson model's below 0 or not finite
/// (its deviance is undefined there).
pub fn refuse_unscorable_labels(
    loss: Loss,
    data: &ExampleSet,
    path: &Path,
    which: &str,
) -> anyhow::Result<()> {
    let labels = metrics::labels(data);
    if loss.is_classification()
        && let Some([a, b, c]) = metrics::more_than_two_values(&labels)
    {
        anyhow::bail!(
            "{}: the {which} take more than two values ({a}, {b}, {c}, …), but {loss} loss is \
             binary classification: label one class > 0 and the other ≤ 0 (e.g. ±1)",
            path.display()
        );
    }
    if loss == Loss::Poisson
        && let Some(i) = labels.iter().position(|y| !(*y >= 0.0 && y.is_finite()))
    {
        anyhow::bail!(
            "{}: row {} of the {which} is {}, but a Poisson model scores counts or rates, \
             finite and ≥ 0",
            path.display(),
            i + 1,
            labels[i]
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
/// there is one, else those the data carries: `carried` (the importance weights of Vowpal
/// Wabbit text, [`Input::weights`]) or those `data` stores when it is a dataset directory
/// converted with weights (from VW text, or with `convert --sample-weights`); else none.
pub fn row_weights(
    given: Option<&Path>,
    data: &Path,
    carried: Option<RowWeights>,
) -> anyhow::Result<Option<RowWeights>> {
    if let Some(path) = given {
        return Ok(Some(RowWeights {
            origin: path.to_path_buf(),
            weights: sample_weights::read(path)?,
        }));
    }
    if carried.is_some() || !data.is_dir() {
        return Ok(carried);
    }
    let dataset = Dataset::open(data)?;
    let stored = dataset.sample_weights()?.zip(dataset.sample_weights_file());
    Ok(stored.map(|(weights, origin)| RowWeights { origin, weights }))
}
