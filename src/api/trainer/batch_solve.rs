//! The batch solvers' runs ([`crate::batch`]): their settings from the trainer's, the start,
//! and what the model records of the solve.

use std::sync::Arc;

use serde_json::json;

use super::{Monitor, Run, Trainer};
use crate::api::Error;
use crate::batch::{self, Objective};
use crate::data::Examples;
use crate::data::column_major::ColumnMajor;
use crate::dist::online as dist_online;
use crate::dist::{self, Reducer};
use crate::loss::Loss;
use crate::loss::WeightedLoss;
use crate::online::{self, Sampling, Stop};

impl Trainer {
    /// A batch solver's run on `data`'s rows (across the ranks of `reducer`), from zero, an
    /// initial model or ASGD epochs (`columns`: [`batch::Options::columns`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn train_batch<M: Monitor, E: Examples>(
        &self,
        algorithm: batch::Algorithm,
        weighted: WeightedLoss,
        data: &E,
        permutation: Option<&[u32]>,
        columns: Option<&Arc<ColumnMajor>>,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<(Run, serde_json::Value), Error> {
        let started = std::time::Instant::now();
        let warm = match (self.warm_start, &self.initial_model) {
            (Some(_), Some(_)) => {
                return Err(Error::Config(
                    "start from an initial model or from ASGD epochs, not both".into(),
                ));
            }
            // Without a bias, the initial model's is left out.
            (None, Some(_)) => self
                .initial_iterate(data.n_features(), permutation)
                .map(|start| {
                    let mut w0 = start.weights;
                    w0.extend(self.fit_bias.then_some(start.bias));
                    w0
                }),
            (Some(epochs), None) => {
                let config = online::Config {
                    loss: weighted.loss(),
                    class_weights: weighted.class_weights(),
                    lambda: self.lambda,
                    l1: 0.0,
                    t0: None,
                    average_start: 1,
                    regularize_bias: true,
                    bias_rate: 1.0,
                    eta: None,
                    sampling: Sampling::default(),
                    seed: self.seed,
                    stop: Stop::Epochs(epochs),
                };
                let asgd = online::Algorithm::Asgd;
                let options = dist_online::Options::default();
                let fit = dist::online::fit(data, asgd, &config, &options, reducer, &mut ())
                    .map_err(|e| {
                        Error::Config(format!(
                            "the ASGD warm start (--warm-start-epochs {epochs}) cannot run ({e}); \
                             train without it"
                        ))
                    })?;
                let output = fit.snapshot.output();
                let mut w0 = output.weights.clone();
                w0.extend(self.fit_bias.then_some(output.bias));
                Some(w0)
            }
            (None, None) => None,
        };
        if warm
            .as_ref()
            .is_some_and(|w0| !w0.iter().all(|w| w.is_finite()))
        {
            // As the online learners refuse it (a solve from it read as diverged).
            return Err(Error::Config(
                online::ConfigError::StartNotFinite.to_string(),
            ));
        }
        let options = batch::Options {
            w0: warm,
            dual0: self.initial_dual.clone(),
            columns: columns.cloned(),
            ..self.batch_options()
        };
        let objective = Objective::distributed(data, weighted, self.lambda, self.fit_bias, reducer)
            .with_l1(self.l1);
        let (mut passes, mut gap) = (0.0, f64::NAN);
        let solution = self.on_threads(|| {
            batch::solve(algorithm, &objective, &options, &mut |p| {
                (passes, gap) = (p.passes, p.gap);
                monitor.iteration(p);
            })
        })??;
        let seconds = started.elapsed().as_secs_f64();
        let started_at = options.w0.is_some() || options.dual0.is_some();
        refuse_untrained(algorithm, weighted.loss(), &solution, started_at)?;
        let n = data.n_features();
        let mut details = self.solver_details(&solution, passes, &options);
        // The certificate of the returned w: J(w) − J* ≤ gap.
        details["gap"] = json!(gap);
        // Settings of the solvers that use them.
        if algorithm.has_memory() {
            details["memory"] = json!(options.memory);
        }
        if algorithm == batch::Algorithm::SubLbfgs {
            details["first_descent"] = json!(options.first_descent);
        }
        // Dual coordinate descent iterates on the dual variables, from 0 or a dual start.
        if self.initial_dual.is_some() {
            details["warm_start"] = json!({ "initial_dual": true });
        }
        if algorithm.is_primal() {
            // The warm start's time is part of the run's seconds, and kept out of the model,
            // which the same command writes byte for byte again.
            details["warm_start"] = match (self.warm_start, &self.initial_model) {
                (Some(epochs), _) => json!({ "asgd_epochs": epochs }),
                (None, Some(_)) => json!({ "initial_model": true }),
                (None, None) => json!(null),
            };
        }
        if !self.fit_bias {
            details["fit_bias"] = json!(false);
        }
        let run = Run {
            weights: solution.w[..n].to_vec(),
            bias: solution.w.get(n).copied().unwrap_or(0.0),
            seconds,
            examples: (passes * objective.total_rows() as f64).round() as u64,
            resume: None,
            dual: solution.dual,
        };
        Ok((run, details))
    }

    /// The batch solvers' settings from this trainer's, starting from zero.
    pub(super) fn batch_options(&self) -> batch::Options {
        let defaults = batch::Options::default();
        batch::Options {
            max_iter: self.max_iterations.unwrap_or(defaults.max_iter),
            tol: self.tolerance.unwrap_or(if self.l1 != 0.0 {
                batch::owlqn::DEFAULT_TOL
            } else {
                defaults.tol
            }),
            memory: self.memory.unwrap_or(defaults.memory),
            first_descent: !self.exact_direction,
            ..defaults
        }
    }

    /// What a batch solve records in the model: its iterations, threads, stop, objective,
    /// passes and tolerance.
    pub(super) fn solver_details(
        &self,
        solution: &batch::Solution,
        passes: f64,
        options: &batch::Options,
    ) -> serde_json::Value {
        json!({
            "iterations": solution.iterations,
            "threads": self.threads.unwrap_or_else(rayon::current_num_threads),
            "stop": solution.stop,
            "objective": solution.objective,
            "passes": passes,
            "tol": options.tol,
        })
    }
}

/// An error for a solve that trained nothing: one that ended where J is not a finite number
/// (it overflowed: the data's values, labels or weights beyond what f64 products hold), or
/// one that took no step from zero, its gradient there unusable. Either returned a model of
/// zeros, or of whatever the overflow left, which the caller would have taken for a trained
/// one.
/// (`started`: the solve began at a given point, where no step may be the right answer.)
fn refuse_untrained(
    algorithm: batch::Algorithm,
    loss: Loss,
    solution: &batch::Solution,
    started: bool,
) -> Result<(), Error> {
    let stuck = matches!(
        solution.stop,
        batch::Stop::LineSearchFailed | batch::Stop::Stalled | batch::Stop::NoDescent
    );
    if !solution.w.iter().all(|w| w.is_finite()) {
        // The weights' own check names that ([`Error::Diverged`]).
        return Ok(());
    }
    let why = if !solution.objective.is_finite() && started && loss == Loss::Poisson {
        // The mean e^p of a score above about 709 is beyond f64, whatever the data.
        return Err(Error::Config(format!(
            "{algorithm} cannot start there: its objective is {} at the initial model, whose \
             scores reach past 709, where poisson loss's mean e^score overflows; start from \
             zero or from a model of scores in range",
            solution.objective
        )));
    } else if !solution.objective.is_finite() {
        format!("its objective is {}", solution.objective)
    } else if solution.iterations == 0 && stuck && !started {
        let stop = json!(solution.stop);
        format!(
            "it took no step from zero (it stopped: {})",
            stop.as_str().unwrap_or_default()
        )
    } else {
        return Ok(());
    };
    Err(Error::Config(format!(
        "{algorithm} trained nothing: {why}, the data's values, labels or weights beyond what \
         f64 arithmetic holds; for values, {} usually cures it",
        super::SCALE_CURE
    )))
}
