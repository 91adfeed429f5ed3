//! `sparselin predict MODEL DATA [-o FILE]`: one prediction (or score, or probability) per
//! row, on stdout or into a file written whole or not at all.

use std::fmt::Display;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};

use sparselin::api;
use sparselin::data::Examples;
use sparselin::loss::logistic;
use sparselin::metrics;
use sparselin::model::SavedModel;
use sparselin::output::{OutputFile, would_replace};

use crate::input::{TextArgs, read_examples, refuse_other_vw_features};

/// Arguments of `sparselin predict`.
#[derive(clap::Args)]
pub struct Args {
    /// A model file written by `sparselin train`.
    model: PathBuf,
    /// Data to predict: a dataset directory or a text file, LIBSVM or (--format vw) Vowpal
    /// Wabbit (labels are read but not used).
    data: PathBuf,
    #[command(flatten)]
    text: TextArgs,
    /// Print raw scores w·x + b instead of labels (classification) or values (regression);
    /// for a one-vs-rest classifier, each class's score on one line, in the classes' order.
    #[arg(long, conflicts_with = "probabilities")]
    scores: bool,
    /// Print P(label = +1) = 1/(1 + e^(−score)) instead of labels: for models trained with
    /// `--loss log` only, the one loss whose scores are log-odds (as liblinear's `-b 1` and
    /// scikit-learn's `predict_proba`); for a one-vs-rest classifier, each class's, in the
    /// classes' order (each class's logistic probability, normalized to sum to 1).
    #[arg(long)]
    probabilities: bool,
    /// Write the lines to this file instead of standard output (as liblinear's
    /// `predict MODEL DATA OUTPUT`): written to a temporary name and renamed into place once
    /// complete, so a failed run leaves no partial file.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
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
    let model = SavedModel::load(&args.model)?;
    let output = match (args.scores, args.probabilities) {
        (true, _) => Output::Scores,
        (_, true) => Output::Probabilities,
        _ => Output::Predictions,
    };
    let loss = match &model {
        SavedModel::Single(model) => model.loss,
        SavedModel::OneVsRest(classifier) => classifier.models()[0].loss,
    };
    if matches!(output, Output::Probabilities) && !loss.gives_probabilities() {
        bail!(
            "{}: --probabilities needs a model trained with --loss log, and this one was \
             trained with {loss} loss, whose scores are not log-odds (use --scores for the raw \
             scores)",
            args.model.display(),
        );
    }
    if let Some(path) = &args.output {
        for input in [&args.model, &args.data] {
            if would_replace(path, input) {
                bail!(
                    "-o {}: that would overwrite the input {}",
                    path.display(),
                    input.display()
                );
            }
        }
    }
    // Labels are not read: VW's unlabeled test examples are rows like any other.
    let format = args.text.format(Some(&model))?.reading_unlabeled();
    let data = read_examples(&args.data, None, &format)?.examples;
    refuse_other_vw_features(&model, &data, &args.data)?;
    match &model {
        SavedModel::Single(model) => {
            let weights = model.weights_for(data.n_features(), data.feature_permutation());
            let scores = metrics::scores(&weights, model.bias, &data);
            emit(
                &args,
                scores.into_iter().map(|score| match output {
                    Output::Predictions => model.prediction(score),
                    Output::Scores => score,
                    Output::Probabilities => logistic(score),
                }),
            )
        }
        // A line per row: its class, or each class's score or probability in the order of
        // the classes (which `sparselin show` lists).
        SavedModel::OneVsRest(classifier) => match output {
            Output::Predictions => emit(&args, api::predict_classes(classifier, &data).into_iter()),
            Output::Scores => {
                let scores = api::class_scores(classifier, &data);
                emit(
                    &args,
                    (0..data.n_rows()).map(|i| joined(scores.iter().map(|c| c[i]))),
                )
            }
            Output::Probabilities => {
                let rows = api::class_probabilities(classifier, &data)
                    .expect("a log-loss classifier gives probabilities");
                emit(&args, rows.into_iter().map(|row| joined(row.into_iter())))
            }
        },
    }
}

/// Write `lines` to standard output or, with `-o`, to the file (whole or not at all).
fn emit(args: &Args, lines: impl Iterator<Item = impl Display>) -> anyhow::Result<()> {
    match &args.output {
        None => {
            let mut out = BufWriter::new(std::io::stdout().lock());
            write_lines(&mut out, lines).context("writing to standard output")?;
            out.flush().context("writing to standard output")
        }
        Some(path) => {
            let written = |e: std::io::Error| anyhow::anyhow!("{}: {e}", path.display());
            let mut file = OutputFile::create(path).map_err(written)?;
            write_lines(&mut file, lines).map_err(written)?;
            file.commit().map_err(written)
        }
    }
}

/// Values separated by spaces.
fn joined(values: impl Iterator<Item = f64>) -> String {
    values.map(|v| v.to_string()).collect::<Vec<_>>().join(" ")
}

/// One line each.
fn write_lines(
    out: &mut impl Write,
    lines: impl Iterator<Item = impl Display>,
) -> std::io::Result<()> {
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
