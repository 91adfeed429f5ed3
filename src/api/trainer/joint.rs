//! The classes' models fitted together, as a [`Trainer`] fits them: multinomial logistic
//! regression ([`Trainer::multinomial`]) and Crammer and Singer's multiclass SVM
//! ([`Trainer::crammer_singer`]), each a classifier of one model per class.

use super::*;
use crate::batch::crammer_singer::{self, CrammerSinger};
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
        refuse_first("multinomial logistic regression", &refused)?;
        let started = std::time::Instant::now();
        let (labels, row_weights) = self.class_rows(data, classes, weights)?;
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
        let (solution, passes) = self.solve_jointly(monitor, |progress| {
            multinomial::solve(&objective, &options, progress)
        })?;
        let seconds = started.elapsed().as_secs_f64();
        let mut details = self.solver_details(&solution, passes, &options);
        details["multinomial"] = json!(true);
        details["memory"] = json!(options.memory);
        if options.w0.is_some() {
            details["warm_start"] = json!({ "initial_model": true });
        }
        let blocks = ClassBlocks {
            w: &solution.w,
            features: n,
            permutation,
        };
        let classifier = self.joint_classifier(blocks, classes, weights, Loss::Log, details)?;
        Ok(OneVsRestTraining {
            classifier,
            seconds,
            examples: (passes * objective.total_rows() as f64).round() as u64,
            duals: Vec::new(),
        })
    }

    /// The models of `classes` (those of `data`'s labels, increasing) fitted together by
    /// Crammer and Singer's multiclass SVM ([`batch::crammer_singer`]; liblinear's `-s 4`),
    /// by dual coordinate descent, class k's rows weighing `weights[k].positive` times their
    /// sample weights: the classifier [`Trainer::train_one_vs_rest`] returns when
    /// [`Trainer::crammer_singer`] is set. Each class's model holds its block of the weights
    /// and records `"crammer_singer": true` in its details. Its solves start from zero (a grid's
    /// warm start included) and run in one process.
    pub(super) fn train_crammer_singer<M: Monitor>(
        &self,
        data: &ExampleSet,
        classes: &[f64],
        weights: &[ClassWeights],
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<OneVsRestTraining, Error> {
        let refused = [
            (
                self.training_loss() != Loss::Hinge,
                "a loss other than hinge",
            ),
            (reducer.size() > 1, "several processes"),
        ];
        refuse_first("the Crammer–Singer multiclass SVM", &refused)?;
        let started = std::time::Instant::now();
        let (labels, row_weights) = self.class_rows(data, classes, weights)?;
        let problem = CrammerSinger::new(
            data,
            labels,
            classes.len(),
            row_weights,
            self.lambda,
            self.fit_bias,
        );
        let options = self.batch_options();
        let (solution, passes) = self.solve_jointly(monitor, |progress| {
            crammer_singer::solve(&problem, &options, progress)
        })?;
        let seconds = started.elapsed().as_secs_f64();
        let mut details = self.solver_details(&solution, passes, &options);
        details["crammer_singer"] = json!(true);
        let blocks = ClassBlocks {
            w: &solution.w,
            features: data.n_features(),
            permutation: data.feature_permutation(),
        };
        let classifier = self.joint_classifier(blocks, classes, weights, Loss::Hinge, details)?;
        Ok(OneVsRestTraining {
            classifier,
            seconds,
            examples: (passes * problem.n_rows() as f64).round() as u64,
            duals: Vec::new(),
        })
    }

    /// A joint solve, `solve(progress)`, on the trainer's threads, each iteration reported to
    /// `monitor`: its solution and the passes over the data it made; an error if it diverged.
    fn solve_jointly<M: Monitor>(
        &self,
        monitor: &mut M,
        solve: impl FnOnce(
            &mut dyn FnMut(&batch::Progress<'_>),
        ) -> Result<batch::Solution, batch::SolveError>
        + Send,
    ) -> Result<(batch::Solution, f64), Error> {
        let mut passes = 0.0;
        let solution = self.on_threads(|| {
            solve(&mut |p| {
                passes = p.passes;
                monitor.iteration(p);
            })
        })??;
        if !(solution.objective.is_finite() && solution.w.iter().all(|w| w.is_finite())) {
            return Err(Error::Diverged {
                algorithm: self.learner.to_string(),
                cure: SCALE_CURE,
            });
        }
        Ok((solution, passes))
    }

    /// Each row's class as an index into `classes` (every label is a class), and each row's
    /// weight, its sample weight times its class's `weights[k].positive`, unless all are 1; an
    /// error for sample weights that do not fit the rows.
    fn class_rows(
        &self,
        data: &ExampleSet,
        classes: &[f64],
        weights: &[ClassWeights],
    ) -> Result<(Vec<usize>, Option<Vec<f64>>), Error> {
        if let Some(weights) = &self.sample_weights {
            crate::data::sample_weights::check(weights, data.n_rows())
                .map_err(|e| Error::Config(e.to_string()))?;
        }
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
        Ok((labels, row_weights))
    }

    /// The classifier whose class k's model is block k of `blocks` (its weights, then its
    /// bias), trained on `loss` with `weights[k]`, each model recording `details`.
    fn joint_classifier(
        &self,
        blocks: ClassBlocks<'_>,
        classes: &[f64],
        weights: &[ClassWeights],
        loss: Loss,
        details: serde_json::Value,
    ) -> Result<OneVsRest, Error> {
        let n = blocks.features;
        let models = (blocks.w.chunks_exact(n + 1).zip(weights))
            .map(|(block, &class_weights)| Model {
                weights: match blocks.permutation {
                    Some(permutation) => weights_to_original(&block[..n], permutation),
                    None => block[..n].to_vec(),
                },
                bias: block[n],
                loss,
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
        OneVsRest::new(classes.to_vec(), models).map_err(Error::Config)
    }
}

/// An error naming the first of `refused` that is set (`(set, what)` pairs): a setting the
/// joint fit `fit` does not take.
fn refuse_first(fit: &str, refused: &[(bool, &str)]) -> Result<(), Error> {
    match refused.iter().find(|(set, _)| *set) {
        Some((_, what)) => Err(Error::Config(format!("{fit} does not take {what}"))),
        None => Ok(()),
    }
}

/// A joint solution's weights: K blocks of `features` weights and a bias, in the data's column
/// numbering (`permutation` maps it to the original feature ids, when it differs).
struct ClassBlocks<'a> {
    w: &'a [f64],
    features: usize,
    permutation: Option<&'a [u32]>,
}
