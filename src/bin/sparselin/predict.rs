//! `sparselin predict MODEL DATA`: one prediction per row, on stdout.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;

use sparselin::data::Examples;
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
    #[arg(long)]
    scores: bool,
}

/// Print one line per row.
pub fn run(args: Args) -> anyhow::Result<()> {
    let model = Model::load(&args.model)?;
    let data = read_examples(&args.data, None, args.text)?;
    let weights = model.weights_for(data.n_features(), data.feature_permutation());
    let mut out = BufWriter::new(std::io::stdout().lock());
    for score in metrics::scores(&weights, model.bias, &data) {
        let value = if args.scores {
            score
        } else {
            model.prediction(score)
        };
        writeln!(out, "{value}").context("writing to standard output")?;
    }
    out.flush().context("writing to standard output")?;
    Ok(())
}
