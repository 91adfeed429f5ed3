//! `sparselin predict MODEL DATA`: one prediction (or score, or probability) per row, on
//! stdout.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};

use sparselin::data::Examples;
use sparselin::loss::logistic;
use sparselin::metrics;
use sparselin::model::Model;

use crate::input::{TextArgs, read_examples};

/// Arguments of `sparselin predict`.
#[derive(clap::Args)]
pub struct Args {
    /// A model file written by `sparselin train`.
    model: PathBuf,
    /// Data to predict: a dataset directory or a LIBSVM file (labels are read but not used).
    data: PathBuf,
    #[command(flatten)]
    text: TextArgs,
    /// Print raw scores w·x + b instead of labels (classification) or values (regression).
    #[arg(long, conflicts_with = "probabilities")]
    scores: bool,
    /// Print P(label = +1) = 1/(1 + e^(−score)) instead of labels: for models trained with
    /// `--loss log` only, the one loss whose scores are log-odds (as liblinear's `-b 1` and
    /// scikit-learn's `predict_proba`).
    #[arg(long)]
    probabilities: bool,
}

/// What each line holds.
#[derive(Clone, Copy)]
enum Output {
    Predictions,
    Scores,
    Probabilities,
}

/// Print one line per row.
pub fn run(args: Args) -> anyhow::Result<()> {
    let model = Model::load(&args.model)?;
    let output = match (args.scores, args.probabilities) {
        (true, _) => Output::Scores,
        (_, true) => Output::Probabilities,
        _ => Output::Predictions,
    };
    if matches!(output, Output::Probabilities) && !model.loss.gives_probabilities() {
        bail!(
            "{}: --probabilities needs a model trained with --loss log, and this one was \
             trained with {} loss, whose scores are not log-odds (use --scores for the raw \
             scores)",
            args.model.display(),
            model.loss
        );
    }
    let data = read_examples(&args.data, None, args.text)?;
    let weights = model.weights_for(data.n_features(), data.feature_permutation());
    let mut out = BufWriter::new(std::io::stdout().lock());
    for score in metrics::scores(&weights, model.bias, &data) {
        let value = match output {
            Output::Predictions => model.prediction(score),
            Output::Scores => score,
            Output::Probabilities => logistic(score),
        };
        writeln!(out, "{value}").context("writing to standard output")?;
    }
    out.flush().context("writing to standard output")?;
    Ok(())
}
