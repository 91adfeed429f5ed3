//! `sparselin train DATA --cv K`: k-fold cross-validation of the training settings, as
//! liblinear's `-v K`. Trains K models and writes none; prints each fold's held-out metrics
//! and their mean.

use anyhow::Context;
use serde_json::json;

use sparselin::api::{Examples, Learner};
use sparselin::metrics::Evaluation;

use crate::input::read_examples;
use crate::number::decimal;
use crate::train::{Args, eval_tail, trainer};

/// Cross-validate the settings of `args` over `folds` folds.
pub fn run(args: &Args, folds: usize) -> anyhow::Result<()> {
    let data = read_examples(&args.data, args.features, args.text)?;
    let trainer = trainer(args)?;
    let loss = trainer.training_loss();
    let learner = args.algo.learner();
    // The attribute-efficient learners have no λ.
    let lambda = match learner {
        Learner::AttributeEfficient(_) => String::new(),
        _ => format!(", λ = {:e}", args.lambda),
    };
    let mut printed = Ok(());
    let validation = trainer
        .cross_validate_each(&data, folds, |i, fold| {
            if args.json || printed.is_err() {
                return;
            }
            // After the first fold, so that settings the library refuses print no header.
            if i == 0 {
                printed = outln!(
                    "{learner} ({loss}{lambda}): {folds}-fold cross-validation of {} rows{}",
                    data.n_rows(),
                    if loss.is_classification() {
                        ", folds stratified by class"
                    } else {
                        ""
                    }
                );
            }
            if printed.is_ok() {
                printed = outln!(
                    "fold {}: trained on {} rows, held out {}: {}",
                    i + 1,
                    fold.train_rows,
                    fold.held_out.rows,
                    summary(&fold.held_out)
                );
            }
        })
        .with_context(|| format!("cross-validating on {}", args.data.display()))?;
    printed?;
    let mean = validation.mean();
    if args.json {
        let report = json!({
            "algorithm": learner.to_string(),
            "loss": loss.to_string(),
            "lambda": args.lambda,
            "rows": data.n_rows(),
            "folds": validation.folds,
            "mean": mean,
        });
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        outln!("mean over the folds: {}", summary(&mean))?;
    }
    Ok(())
}

/// "objective 0.52, error 0.123, auc 0.91" (the metrics the loss has).
fn summary(e: &Evaluation) -> String {
    let mut s = format!("objective {}{}", decimal(e.objective, 10), eval_tail(e));
    if let Some(auc) = e.auc {
        s.push_str(&format!(", auc {auc:.5}"));
    }
    if let Some(log_loss) = e.log_loss {
        s.push_str(&format!(", log loss {}", decimal(log_loss, 6)));
    }
    s
}
