//! The batch solvers of `sparselin::batch` behind `sparselin train --algo
//! lbfgs|sublbfgs|subgd|bfgs`: progress per iteration (iteration, objective, gap), the trace
//! (one row per iteration; `epochs` counts passes over the data) and the model.

use serde_json::json;
use sparselin::batch::{self, Objective, Options};
use sparselin::data::{ExampleSet, Examples};
use sparselin::model::{Model, TrainingInfo, weights_to_original};

use crate::trace::TraceRow;
use crate::train::{Args, Trained};

/// Run one batch solver on the training data.
pub fn train_batch(
    algorithm: batch::Algorithm,
    args: &Args,
    data: &ExampleSet,
) -> anyhow::Result<Trained> {
    if args.free_bias {
        anyhow::bail!(
            "{algorithm} regularizes the bias (bias as a feature of value 1): drop --free-bias"
        );
    }
    let objective = Objective::new(data, args.loss, args.lambda, true);
    let options = Options {
        max_iter: args.max_iter,
        tol: args.tol,
        memory: args.memory,
        first_descent: !args.exact_direction,
        ..Options::default()
    };
    let mut trace = Vec::new();
    let mut record = |p: &batch::Progress| {
        if !args.quiet {
            eprintln!(
                "iteration {:>5}  objective {:.12e}  gap {:.3e}  {:.3} s  {} passes",
                p.iteration, p.objective, p.gap, p.seconds, p.passes
            );
        }
        trace.push(TraceRow {
            epochs: p.passes as f64,
            steps: p.iteration as u64,
            seconds: p.seconds,
            train_objective: p.objective,
            test_objective: None,
            test_error: None,
        });
    };
    let started = std::time::Instant::now();
    let solution = batch::solve(algorithm, &objective, &options, &mut record)?;
    let seconds = started.elapsed().as_secs_f64();
    let n = data.n_features();
    let weights = match data.feature_permutation() {
        Some(permutation) => weights_to_original(&solution.w[..n], permutation),
        None => solution.w[..n].to_vec(),
    };
    let passes = trace.last().map_or(0.0, |row| row.epochs);
    let details = json!({
        "iterations": solution.iterations,
        "stop": solution.stop,
        "objective": solution.objective,
        "passes": passes,
        "memory": options.memory,
        "tol": options.tol,
        "first_descent": options.first_descent,
    });
    Ok(Trained {
        model: Model {
            weights,
            bias: solution.w[n],
            loss: args.loss,
            info: TrainingInfo {
                algorithm: algorithm.to_string(),
                lambda: args.lambda,
                regularize_bias: true,
                details: details.as_object().cloned().unwrap_or_default(),
            },
        },
        seconds,
        examples: (passes * data.n_rows() as f64) as u64,
        trace,
    })
}
