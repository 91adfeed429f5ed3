//! Multinomial logistic regression as a [`Trainer`] runs it ([`Trainer::multinomial`]).

use super::*;
use crate::batch::multinomial::{self, Multinomial};

impl Trainer {
    /// The models of `classes` (those of `data`'s labels, increasing) fitted together by
    /// L-BFGS on the multinomial objective, class k's rows weighing `weights[k].positive`
    /// times their sample weights: the classifier [`Trainer::train_one_vs_rest`] returns when
    /// [`Trainer::multinomial`] is set. Each class's model holds its block of the weights and
    /// records `"multinomial": true` in its details, so that its probabilities are the
    /// softmax of the scores. With `start`, a training on the same rows at another λ, each
    /// class's block starts from its model there (zeros for a class it lacks).
    pub(super) fn train_multinomial<M: Monitor>(
        &self,
        data: &ExampleSet,
        classes: &[f64],
        weights: &[ClassWeights],
        reducer: &dyn Reducer,
        monitor: &mut M,
        start: Option<&OneVsRestTraining>,
    ) -> Result<OneVsRestTraining, Error> {
        let refused = [
            (self.training_loss() != Loss::Log, "a loss other than log"),
            (self.warm_start.is_some(), "an ASGD warm start"),
        ];
        if let Some((_, what)) = refused.iter().find(|(set, _)| *set) {
            return Err(Error::Config(format!(
                "multinomial logistic regression does not take {what}"
            )));
        }
        if let Some(weights) = &self.sample_weights {
            crate::data::sample_weights::check(weights, data.n_rows())
                .map_err(|e| Error::Config(e.to_string()))?;
        }
        let started = std::time::Instant::now();
        // Every label is a class: the classes are the labels' values.
        let labels: Vec<usize> = (crate::metrics::labels(data).iter())
            .map(|&y| classes.partition_point(|&c| c < y))
            .collect();
        let weighted_classes = weights.iter().any(|w| !w.is_unit());
        let row_weights = (self.sample_weights.is_some() || weighted_classes).then(|| {
            (labels.iter().enumerate())
                .map(|(i, &k)| {
                    let sample = self.sample_weights.as_ref().map_or(1.0, |s| s[i]);
                    sample * weights[k].positive
                })
                .collect()
        });
        let objective = Multinomial::distributed(
            data,
            labels,
            classes.len(),
            row_weights,
            self.lambda,
            reducer,
        );
        let (n, permutation) = (data.n_features(), data.feature_permutation());
        let w0 = start.map(|start| {
            let mut w0 = Vec::with_capacity(classes.len() * (n + 1));
            for &class in classes {
                match start.run_of(class) {
                    Some((model, _)) => {
                        let block = iterate_in_columns(&model.weights, model.bias, n, permutation);
                        w0.extend(block.weights);
                        w0.push(block.bias);
                    }
                    None => w0.resize(w0.len() + n + 1, 0.0),
                }
            }
            w0
        });
        let options = batch::Options {
            w0,
            ..self.batch_options()
        };
        let mut passes = 0.0;
        let solution = self.on_threads(|| {
            multinomial::solve(&objective, &options, &mut |p| {
                passes = p.passes;
                monitor.iteration(p);
            })
        })??;
        let seconds = started.elapsed().as_secs_f64();
        if !(solution.objective.is_finite() && solution.w.iter().all(|w| w.is_finite())) {
            return Err(Error::Diverged {
                algorithm: self.learner.to_string(),
                cure: SCALE_CURE,
            });
        }
        let mut details = self.solver_details(&solution, passes, &options);
        details["multinomial"] = json!(true);
        details["memory"] = json!(options.memory);
        if options.w0.is_some() {
            details["warm_start"] = json!({ "initial_model": true });
        }
        let models = (solution.w.chunks_exact(n + 1).zip(weights))
            .map(|(block, &class_weights)| Model {
                weights: match permutation {
                    Some(permutation) => weights_to_original(&block[..n], permutation),
                    None => block[..n].to_vec(),
                },
                bias: block[n],
                loss: Loss::Log,
                info: TrainingInfo {
                    algorithm: self.learner.to_string(),
                    lambda: self.lambda,
                    l1: 0.0,
                    regularize_bias: true,
                    class_weights,
                    details: details.as_object().cloned().unwrap_or_default(),
                },
                resume: None,
                column_scales: None,
            })
            .collect();
        let classifier = OneVsRest::new(classes.to_vec(), models).map_err(Error::Config)?;
        Ok(OneVsRestTraining {
            classifier,
            seconds,
            examples: (passes * objective.total_rows() as f64).round() as u64,
            duals: Vec::new(),
        })
    }
}
