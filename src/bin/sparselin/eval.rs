//! `sparselin eval MODEL DATA`: the metrics that fit the model's loss.

use std::path::PathBuf;

use anyhow::Context;
use sparselin::api;
use sparselin::data::{Examples, SampleWeighted};
use sparselin::metrics::{Evaluation, MulticlassEvaluation, evaluate_with_penalty};
use sparselin::model::SavedModel;

use crate::input::{
    Input, RowWeights, TextArgs, read_examples, refuse_other_vw_features, refuse_unscorable_labels,
    row_weights,
};
use crate::number::decimal;

/// Arguments of `sparselin eval`.
#[derive(clap::Args)]
pub struct Args {
    /// A model file written by `sparselin train`.
    model: PathBuf,
    /// Labeled data: a dataset directory or a text file (LIBSVM, or Vowpal Wabbit with
    /// --format vw).
    data: PathBuf,
    #[command(flatten)]
    text: TextArgs,
    /// Weigh each row's term of the objective and mean loss by the number on its line of
    /// FILE (as `train --sample-weights` does; scikit-learn's `score(…, sample_weight)`); the
    /// other metrics count every row once. Without it, data that carries weights (Vowpal
    /// Wabbit text's importance weights, a dataset's stored weights) is weighed by those, as
    /// VW's average loss weighs by importance.
    #[arg(long, value_name = "FILE")]
    sample_weights: Option<PathBuf>,
    /// Print the metrics as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Evaluate and print.
pub fn run(args: Args) -> anyhow::Result<()> {
    let model = SavedModel::load(&args.model)?;
    let format = args.text.format(Some(&model))?;
    let Input {
        examples: data,
        weights,
    } = read_examples(&args.data, None, &format)?;
    refuse_other_vw_features(&model, &data, &args.data)?;
    anyhow::ensure!(
        data.n_rows() > 0,
        "{}: no rows to evaluate (every metric would be 0 or undefined)",
        sparselin::data::error::name(&args.data)
    );
    let row_weights = match row_weights(args.sample_weights.as_deref(), &args.data, weights)? {
        Some(RowWeights { origin, weights }) => {
            SampleWeighted::new(&data, &weights).with_context(|| {
                format!(
                    "{}: the weights of the rows of {}",
                    origin.display(),
                    args.data.display()
                )
            })?;
            Some(weights)
        }
        None => None,
    };
    let model = match model {
        SavedModel::Single(model) => model,
        SavedModel::OneVsRest(classifier) => {
            let evaluation = api::evaluate_one_vs_rest(&classifier, &data, row_weights.as_deref())?;
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&evaluation)?)?;
            } else {
                outln!(
                    "{}",
                    describe_classes(&evaluation, classifier.is_joint()).trim_end_matches('\n')
                )?;
            }
            return Ok(());
        }
    };
    refuse_unscorable_labels(model.loss, &data, &args.data, "labels")?;
    let weights = model.weights_for(data.n_features(), data.feature_permutation());
    let loss = model.weighted_loss()?;
    // The regularization of the weights trained (of the scaled columns, if they were).
    let penalty = model.penalty_value();
    let evaluation = match &row_weights {
        Some(row_weights) => {
            let rows = SampleWeighted::new(&data, row_weights)?;
            evaluate_with_penalty(loss, penalty, &weights, model.bias, &rows)
        }
        None => evaluate_with_penalty(loss, penalty, &weights, model.bias, &data),
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&evaluation)?)?;
    } else {
        outln!("{}", describe(&evaluation).trim_end_matches('\n'))?;
        let class_weights = &model.info.class_weights;
        if !class_weights.is_unit() {
            // The objective and mean loss above weigh the classes as training did.
            outln!("class_weights {class_weights}")?;
        }
    }
    Ok(())
}

/// A one-vs-rest classifier's metrics as `name value` lines, then a line per class: its
/// rows, precision, recall and F1, and its model's objective on the class against the rest
/// (not for a classifier fitted jointly, whose models minimized no such objective each).
fn describe_classes(e: &MulticlassEvaluation, joint: bool) -> String {
    let mut out = format!("rows {}\nerror_rate {}\n", e.rows, decimal(e.error_rate, 6));
    if let Some(f1) = e.macro_f1 {
        out.push_str(&format!("macro_f1 {}\n", decimal(f1, 6)));
    }
    if e.unknown_labels > 0 {
        out.push_str(&format!("unknown_labels {}\n", e.unknown_labels));
    }
    for c in &e.classes {
        let metric = |name: &str, value: Option<f64>| match value {
            Some(v) => format!(" {name} {}", decimal(v, 6)),
            None => format!(" {name} -"),
        };
        let objective = match joint {
            true => String::new(),
            false => format!(" objective {}", decimal(c.one_vs_rest.objective, 10)),
        };
        out.push_str(&format!(
            "class {} rows {} predicted {}{}{}{}{objective}\n",
            c.class,
            c.rows,
            c.predicted,
            metric("precision", c.precision),
            metric("recall", c.recall),
            metric("f1", c.f1),
        ));
    }
    out
}

/// The metrics as `name value` lines.
pub fn describe(e: &Evaluation) -> String {
    let mut out = format!(
        "rows {}\nobjective {}\nmean_loss {}\n",
        e.rows,
        decimal(e.objective, 10),
        decimal(e.mean_loss, 10)
    );
    let optional = [
        ("error_rate", e.error_rate),
        ("auc", e.auc),
        ("precision", e.precision),
        ("recall", e.recall),
        ("f1", e.f1),
        ("log_loss", e.log_loss),
        ("rmse", e.rmse),
        ("r2", e.r2),
        ("coverage", e.coverage),
        ("poisson_deviance", e.poisson_deviance),
    ];
    for (name, value) in optional {
        if let Some(v) = value {
            out.push_str(&format!("{name} {}\n", decimal(v, 6)));
        }
    }
    out
}
