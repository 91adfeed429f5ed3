//! k-fold cross-validation, as liblinear's `-v k` and scikit-learn's `cross_validate`: the
//! rows are dealt at random into k folds, and k models are trained, each on all folds but
//! one and evaluated on the fold it did not see. The held-out metrics estimate how a model
//! trained with these settings does on new data: what one compares to choose λ or a loss.
//! Over a path of λ, C or λ₁ ([`Trainer::cross_validate_path`]) each fold's batch solve may
//! start from the fold's solution at the value before, as liblinear's `-C` and scikit-learn's
//! `LogisticRegressionCV` start theirs.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use sparselin_kernels::Values;

use super::{Error, ExampleSet, Examples, Learner, OneVsRestTraining, Trainer, Training};
use crate::data::{CsrMatrix, Row, ValueVec, sample_weights};
use crate::dist::Local;
use crate::metrics::{self, Evaluation, MulticlassEvaluation};
use crate::online::sampling::shuffle;

/// One fold: a model trained on the other folds, evaluated on this one.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fold {
    /// Rows the model was trained on (those of the other folds).
    pub train_rows: usize,
    /// The model's metrics on the fold's own rows (`rows` of them), which it never saw.
    pub held_out: Evaluation,
    /// Under early stopping ([`Trainer::early_stopping`]), what it did in this fold's run:
    /// the model's `details["early_stopping"]` (the epoch kept, of how many run, and the
    /// held-out loss there, on a share of `train_rows` held out from training).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_stopping: Option<serde_json::Value>,
}

/// The folds of a cross-validation, in fold order, and every row's held-out score.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CrossValidation {
    /// Fold i holds the rows dealt to it (see [`Trainer::cross_validate`]).
    pub folds: Vec<Fold>,
    /// Row i's score w·x + b by the model of the fold that held it out, in row order
    /// (scikit-learn's `cross_val_predict`, liblinear's `cross_validation` target; see
    /// [`crate::model::Model::prediction`] and [`crate::loss::logistic`] for labels and
    /// probabilities).
    #[serde(skip)]
    pub held_out_scores: Vec<f64>,
}

/// One fold of a one-vs-rest cross-validation: a classifier trained on the other folds,
/// evaluated on this one.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClassesFold {
    /// Rows the classifier was trained on (those of the other folds).
    pub train_rows: usize,
    /// The classifier's metrics on the fold's own rows, which it never saw.
    pub held_out: MulticlassEvaluation,
}

/// The folds of a one-vs-rest cross-validation, in fold order, and every row's held-out class.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClassesCrossValidation {
    /// Fold i holds the rows dealt to it (see [`Trainer::cross_validate_one_vs_rest`]).
    pub folds: Vec<ClassesFold>,
    /// Row i's class as predicted by the classifier of the fold that held it out.
    #[serde(skip)]
    pub held_out_predictions: Vec<f64>,
}

impl ClassesCrossValidation {
    /// The held-out error rate averaged over the folds, unweighted (as
    /// [`CrossValidation::mean`]).
    pub fn mean_error_rate(&self) -> f64 {
        let total: f64 = self.folds.iter().map(|f| f.held_out.error_rate).sum();
        total / self.folds.len() as f64
    }

    /// The held-out macro F1 averaged over the folds; `None` if a fold has none.
    pub fn mean_macro_f1(&self) -> Option<f64> {
        let values: Option<Vec<f64>> = self.folds.iter().map(|f| f.held_out.macro_f1).collect();
        values.map(|v| v.iter().sum::<f64>() / v.len() as f64)
    }
}

impl CrossValidation {
    /// Each held-out metric averaged over the folds, unweighted (scikit-learn's mean of the
    /// fold scores; the folds differ in size by at most one row), with `rows` the total.
    /// A metric some fold lacks (AUC of a fold with one class, precision of a fold where none
    /// is predicted +1) is left out.
    pub fn mean(&self) -> Evaluation {
        let k = self.folds.len() as f64;
        let mean = |metric: fn(&Evaluation) -> f64| {
            self.folds.iter().map(|f| metric(&f.held_out)).sum::<f64>() / k
        };
        let mean_of_all = |metric: fn(&Evaluation) -> Option<f64>| {
            let values: Option<Vec<f64>> = self.folds.iter().map(|f| metric(&f.held_out)).collect();
            values.map(|v| v.iter().sum::<f64>() / k)
        };
        Evaluation {
            rows: self.folds.iter().map(|f| f.held_out.rows).sum(),
            objective: mean(|e| e.objective),
            mean_loss: mean(|e| e.mean_loss),
            error_rate: mean_of_all(|e| e.error_rate),
            auc: mean_of_all(|e| e.auc),
            precision: mean_of_all(|e| e.precision),
            recall: mean_of_all(|e| e.recall),
            f1: mean_of_all(|e| e.f1),
            log_loss: mean_of_all(|e| e.log_loss),
            rmse: mean_of_all(|e| e.rmse),
            r2: mean_of_all(|e| e.r2),
            coverage: mean_of_all(|e| e.coverage),
            poisson_deviance: mean_of_all(|e| e.poisson_deviance),
        }
    }
}

/// The regularization strength a path of cross-validations varies
/// ([`Trainer::cross_validate_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strength {
    /// λ of the squared norm ([`Trainer::lambda`]).
    Lambda,
    /// liblinear's C ([`Trainer::cost`]): λ = 1/(C·m) of each fold's m training rows.
    Cost,
    /// λ₁ of the L1 term ([`Trainer::l1`]).
    L1,
}

impl Strength {
    /// `trainer` with this strength set to `value`.
    pub fn set(self, trainer: &Trainer, value: f64) -> Trainer {
        match self {
            Strength::Lambda => trainer.clone().lambda(value),
            Strength::Cost => trainer.clone().cost(value),
            Strength::L1 => trainer.clone().l1(value),
        }
    }

    /// Whether a larger value regularizes more (λ, λ₁; C the other way).
    pub fn larger_regularizes(self) -> bool {
        self != Strength::Cost
    }

    /// Of `(value, score)` pairs, the value of the lowest score; of equal scores, the value
    /// that regularizes most, the simpler model (liblinear's `-C` names the smallest C of a
    /// tie). `None` for no pairs.
    pub fn best(self, scores: impl IntoIterator<Item = (f64, f64)>) -> Option<f64> {
        let more_regularized = |a: f64, b: f64| match self.larger_regularizes() {
            true => b.total_cmp(&a),
            false => a.total_cmp(&b),
        };
        (scores.into_iter())
            .min_by(|a, b| a.1.total_cmp(&b.1).then(more_regularized(a.0, b.0)))
            .map(|(value, _)| value)
    }

    /// `values` from the one that regularizes most to the one that regularizes least.
    pub fn path_order(self, values: &[f64]) -> Vec<f64> {
        let mut order = values.to_vec();
        match self.larger_regularizes() {
            true => order.sort_by(|a, b| b.total_cmp(a)),
            false => order.sort_by(f64::total_cmp),
        }
        order
    }
}

/// Where each batch solve along a path starts ([`Trainer::cross_validate_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStarts {
    /// From the solution of the same fold at the value before: dcd from its dual variables
    /// ([`Trainer::initial_dual`]), the primal solvers from its weights
    /// ([`Trainer::initial_model`]). Each solve still stops at the trainer's tolerance.
    Warm,
    /// Each from zero (or the trainer's own start), as a separate run at that value: its folds
    /// are [`Trainer::cross_validate`]'s at the value, bit for bit.
    Cold,
}

/// One value of a one-vs-rest path and its cross-validation.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassesPathPoint {
    /// The strength's value.
    pub value: f64,
    /// The folds at that value.
    pub validation: ClassesCrossValidation,
}

/// One value of a path and its cross-validation.
#[derive(Clone, Debug, PartialEq)]
pub struct PathPoint {
    /// The strength's value.
    pub value: f64,
    /// The folds at that value.
    pub validation: CrossValidation,
}

impl Trainer {
    /// k-fold cross-validation of these settings on `data` (k = `folds`, from 2 to the number
    /// of rows). The rows are shuffled with the trainer's seed and dealt to the folds in turn,
    /// class by class for the classification losses (stratified, as scikit-learn does for
    /// classifiers), so that every fold holds each class in about its overall proportion and
    /// the folds differ in size by at most one row; the same seed deals the same folds. Each
    /// fold's training rows and held-out rows are copied out of `data` in their order (about
    /// one copy of the data at a time). An error in a fold's training is returned as
    /// [`Error::Fold`], naming the fold.
    pub fn cross_validate(
        &self,
        data: &ExampleSet,
        folds: usize,
    ) -> Result<CrossValidation, Error> {
        self.cross_validate_each(data, folds, |_, _| {})
    }

    /// [`Trainer::cross_validate`], calling `done(i, fold)` as each fold i (from 0) finishes:
    /// for a caller that reports progress on a long run.
    pub fn cross_validate_each(
        &self,
        data: &ExampleSet,
        folds: usize,
        mut done: impl FnMut(usize, &Fold),
    ) -> Result<CrossValidation, Error> {
        let each = |fold, _, result: &Fold| done(fold, result);
        let mut runs = self.fit_folds(data, folds, self.strata(), None, false, fit_binary, each)?;
        let run = runs.pop().expect("one setting, one run");
        Ok(CrossValidation {
            folds: run.results,
            held_out_scores: run.held_out,
        })
    }

    /// [`Trainer::cross_validate`] at each of `values` of `strength`, on the same folds (the
    /// trainer's seed deals them), from the value that regularizes most to the one that
    /// regularizes least: λ and λ₁ from large to small, C from small to large, the order in
    /// which each solution is a start near the next. Fold by fold: each fold's rows are copied
    /// out once and fitted at every value in turn. With [`PathStarts::Warm`] each batch solve
    /// starts from its fold's solution at the value before (online and attribute-efficient
    /// learners start each run anew either way); on reuters_grain over liblinear's grid of C,
    /// squared hinge, that took dcd 379 iterations in all against 3,594 from zero, lbfgs 785
    /// against 2,170 (PERF.md "Warm starts along a grid"). `progress(done, all)` is called
    /// after each of the folds × values fits. The points come back in the order run.
    pub fn cross_validate_path(
        &self,
        data: &ExampleSet,
        folds: usize,
        strength: Strength,
        values: &[f64],
        starts: PathStarts,
        progress: impl FnMut(usize, usize),
    ) -> Result<Vec<PathPoint>, Error> {
        let grid = (strength, values, starts);
        let point = |value, run: SettingFolds<Fold>| PathPoint {
            value,
            validation: CrossValidation {
                folds: run.results,
                held_out_scores: run.held_out,
            },
        };
        self.path(
            data,
            folds,
            self.strata(),
            grid,
            fit_binary,
            progress,
            point,
        )
    }

    /// k-fold cross-validation of one-vs-rest training ([`Trainer::train_one_vs_rest`]) on
    /// data of more than two classes, as [`Trainer::cross_validate`] does for one model: the
    /// rows dealt to the folds class by class (each label its own stratum), a classifier
    /// trained on all folds but one and evaluated on that one, `done(i, fold)` called as each
    /// fold i (from 0) finishes. A class whose rows all fall in one fold is unknown to that
    /// fold's classifier, and its rows count as errors.
    pub fn cross_validate_one_vs_rest(
        &self,
        data: &ExampleSet,
        folds: usize,
        mut done: impl FnMut(usize, &ClassesFold),
    ) -> Result<ClassesCrossValidation, Error> {
        self.check_class_weights(data)?;
        let each = |fold, _, result: &ClassesFold| done(fold, result);
        let mut runs =
            self.fit_folds(data, folds, Strata::Label, None, false, fit_classes, each)?;
        let run = runs.pop().expect("one setting, one run");
        Ok(ClassesCrossValidation {
            folds: run.results,
            held_out_predictions: run.held_out,
        })
    }

    /// [`Trainer::cross_validate_path`] of one-vs-rest training: each value's
    /// [`Trainer::cross_validate_one_vs_rest`], from the value that regularizes most; with
    /// [`PathStarts::Warm`] each class's batch solve in each fold starts from its solution at
    /// the value before (multinomial training from the whole classifier's; the online
    /// learners start anew).
    pub fn cross_validate_one_vs_rest_path(
        &self,
        data: &ExampleSet,
        folds: usize,
        strength: Strength,
        values: &[f64],
        starts: PathStarts,
        progress: impl FnMut(usize, usize),
    ) -> Result<Vec<ClassesPathPoint>, Error> {
        self.check_class_weights(data)?;
        let grid = (strength, values, starts);
        let point = |value, run: SettingFolds<ClassesFold>| ClassesPathPoint {
            value,
            validation: ClassesCrossValidation {
                folds: run.results,
                held_out_predictions: run.held_out,
            },
        };
        self.path(
            data,
            folds,
            Strata::Label,
            grid,
            fit_classes,
            progress,
            point,
        )
    }

    /// The strata of a cross-validation of one model: the two classes of a classification
    /// loss, none for a regression.
    fn strata(&self) -> Strata {
        match self.training_loss().is_classification() {
            true => Strata::Sign,
            false => Strata::None,
        }
    }

    /// An error unless the class weights, which name classes of `data`, fit them (a fold's
    /// training rows may then lack one).
    fn check_class_weights(&self, data: &ExampleSet) -> Result<(), Error> {
        let (classes, rows) = super::trainer::class_labels_across(data, &Local)?;
        self.one_vs_rest_weights(&classes, &rows, false).map(|_| ())
    }

    /// The points of a path over `grid` (strength, values, starts): the folds of `data`
    /// (dealt by `strata`) fitted by `fit` at each value in path order, with warm starts where
    /// asked and the learner has them, each value's folds made a point by `point`.
    #[allow(clippy::too_many_arguments)]
    fn path<R, S, P>(
        &self,
        data: &ExampleSet,
        folds: usize,
        strata: Strata,
        (strength, values, starts): (Strength, &[f64], PathStarts),
        fit: impl FnMut(&Trainer, &Split, Option<S>) -> Result<(R, Vec<f64>, S), Error>,
        progress: impl FnMut(usize, usize),
        point: impl Fn(f64, SettingFolds<R>) -> P,
    ) -> Result<Vec<P>, Error> {
        if let (Strength::Lambda, Learner::AttributeEfficient(algo)) = (strength, self.learner()) {
            // Its λ would be set and ignored at every value (a cost or λ₁ is refused as a
            // setting that does not apply).
            return Err(Error::Config(format!(
                "a path over lambda does not apply to {algo}, which has no λ (its strength is \
                 the radius)"
            )));
        }
        let order = strength.path_order(values);
        let warm = starts == PathStarts::Warm && matches!(self.learner(), Learner::Batch(_));
        let each = counter(folds * order.len(), progress);
        let path = Some((strength, &order[..]));
        let runs = self.fit_folds(data, folds, strata, path, warm, fit, each)?;
        Ok(order
            .into_iter()
            .zip(runs)
            .map(|(v, run)| point(v, run))
            .collect())
    }

    /// Deal `data`'s rows into `folds` folds by `strata` and, fold by fold, fit the trainer's
    /// settings (`path` `None`) or those at each value of the path in turn (`Some((strength,
    /// values))`): `fit(trainer, split, start)` returns the fold's result, the held-out
    /// rows' outputs and the run, which the fold's fit at the next value starts from when
    /// `warm`. `done(fold, k, result)` sees the k-th setting's result of each fold. Returns
    /// per setting the folds' results, in fold order, and every row's held-out output.
    #[allow(clippy::too_many_arguments)]
    fn fit_folds<R, S>(
        &self,
        data: &ExampleSet,
        folds: usize,
        strata: Strata,
        path: Option<(Strength, &[f64])>,
        warm: bool,
        mut fit: impl FnMut(&Trainer, &Split, Option<S>) -> Result<(R, Vec<f64>, S), Error>,
        mut done: impl FnMut(usize, usize, &R),
    ) -> Result<Vec<SettingFolds<R>>, Error> {
        // Before the results are allocated for as many folds as asked.
        check_fold_count(folds, data.n_rows())?;
        let settings = path.map_or(1, |(_, values)| values.len());
        let mut runs: Vec<SettingFolds<R>> = (0..settings)
            .map(|_| SettingFolds {
                results: Vec::with_capacity(folds),
                held_out: vec![0.0; data.n_rows()],
            })
            .collect();
        self.for_each_fold(data, folds, strata, |fold, trainer, split| {
            let mut start = None;
            for (k, run) in runs.iter_mut().enumerate() {
                let at_value;
                let trainer = match path {
                    Some((strength, values)) => {
                        at_value = strength.set(trainer, values[k]);
                        &at_value
                    }
                    None => trainer,
                };
                let (result, held_out, fitted) = fit(trainer, split, start.take())?;
                for (&i, &output) in split.held_out_rows.iter().zip(&held_out) {
                    run.held_out[i] = output;
                }
                done(fold, k, &result);
                run.results.push(result);
                start = warm.then_some(fitted);
            }
            Ok(())
        })?;
        Ok(runs)
    }

    /// Deal `data`'s rows into `folds` folds by `strata`, then call `each(fold, trainer,
    /// split)` for each fold in order with the fold's rows copied out and a trainer whose
    /// sample weights, if any, are its training rows'. An error in a fold is returned as
    /// [`Error::Fold`], naming it.
    fn for_each_fold(
        &self,
        data: &ExampleSet,
        folds: usize,
        strata: Strata,
        mut each: impl FnMut(usize, &Trainer, &Split) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // (The fold count is checked by the caller, `fit_folds`.)
        let m = data.n_rows();
        if let Some(weights) = self.sample_weights_given() {
            sample_weights::check(weights, m).map_err(|e| Error::Config(e.to_string()))?;
        }
        let fold_of = deal(data, strata, folds, self.seed_used());
        let rows = data.rows();
        for fold in 0..folds {
            let (mut train, mut held_out) = (RowCopy::new(), RowCopy::new());
            let mut held_out_rows = Vec::with_capacity(m / folds + 1);
            let mut train_weights = Vec::new();
            for (i, &f) in fold_of.iter().enumerate() {
                if f == fold {
                    held_out.push(rows.row(i));
                    held_out_rows.push(i);
                } else {
                    train.push(rows.row(i));
                    if let Some(weights) = self.sample_weights_given() {
                        train_weights.push(weights[i]);
                    }
                }
            }
            // The fold's training rows keep their sample weights.
            let weighted_trainer;
            let trainer = match self.sample_weights_given() {
                Some(_) => {
                    weighted_trainer = self.clone().sample_weights(train_weights);
                    &weighted_trainer
                }
                None => self,
            };
            let split = Split {
                train_rows: train.labels.len(),
                train: ExampleSet::Matrix(train.finish(data.n_features())?),
                held_out_labels: held_out.labels.clone(),
                held_out: ExampleSet::Matrix(held_out.finish(data.n_features())?),
                held_out_rows,
            };
            each(fold, trainer, &split).map_err(|error| Error::Fold {
                fold: fold + 1,
                folds,
                error: Box::new(error),
            })?;
        }
        Ok(())
    }
}

/// One setting's cross-validation: the folds' results, in fold order, and every row's output
/// by the model of the fold that held it out.
struct SettingFolds<R> {
    results: Vec<R>,
    held_out: Vec<f64>,
}

/// One fold's rows, copied out of the data.
struct Split {
    /// How many rows the model is trained on.
    train_rows: usize,
    /// The other folds' rows.
    train: ExampleSet,
    /// The fold's own rows.
    held_out: ExampleSet,
    /// Their labels.
    held_out_labels: Vec<f64>,
    /// The data's index of each held-out row.
    held_out_rows: Vec<usize>,
}

/// One model's fit on a fold's training rows (from `start`'s solution, if any) and its
/// evaluation on the held-out rows: the fold, their scores w·x + b, and the run.
fn fit_binary(
    trainer: &Trainer,
    split: &Split,
    start: Option<Training>,
) -> Result<(Fold, Vec<f64>, Training), Error> {
    let started;
    let trainer = match start {
        Some(start) => {
            started = trainer.continued_from(start.model, start.dual);
            &started
        }
        None => trainer,
    };
    let training = trainer.train_monitored(&split.train, &mut ())?;
    let model = &training.model;
    // The copies keep the data's own column numbering, and so does the model.
    let scores = metrics::scores(&model.weights, model.bias, &split.held_out);
    let loss = (model.weighted_loss()).map_err(|e| Error::Config(e.to_string()))?;
    let labels = &split.held_out_labels;
    let held_out = metrics::evaluate_scores(loss, model.penalty_value(), &scores, labels);
    let fold = Fold {
        train_rows: split.train_rows,
        held_out,
        early_stopping: model.info.details.get("early_stopping").cloned(),
    };
    Ok((fold, scores, training))
}

/// One-vs-rest's fit on a fold's training rows (each class from its solution in `start`, if
/// any) and its evaluation on the held-out rows: the fold, their predicted classes, and the
/// training.
fn fit_classes(
    trainer: &Trainer,
    split: &Split,
    start: Option<OneVsRestTraining>,
) -> Result<(ClassesFold, Vec<f64>, OneVsRestTraining), Error> {
    let training = trainer.train_classes(&split.train, &Local, &mut (), true, start.as_ref())?;
    let (held_out, predictions) =
        super::one_vs_rest::evaluate_and_predict(&training.classifier, &split.held_out, None)?;
    let fold = ClassesFold {
        train_rows: split.train_rows,
        held_out,
    };
    Ok((fold, predictions, training))
}

/// `progress(done, all)` called once per call of the returned counter, `done` counting them.
fn counter<T>(all: usize, mut progress: impl FnMut(usize, usize)) -> impl FnMut(usize, usize, &T) {
    let mut done = 0;
    move |_, _, _| {
        done += 1;
        progress(done, all);
    }
}

/// What the folds are dealt by: every class in about its overall proportion in each fold.
#[derive(Clone, Copy)]
enum Strata {
    /// The rows as one stratum (regression).
    None,
    /// Label > 0 and the rest (binary classification).
    Sign,
    /// Each label value (one-vs-rest).
    Label,
}

/// An error unless `folds` is from 2 to `m`, one row per fold.
fn check_fold_count(folds: usize, m: usize) -> Result<(), Error> {
    if folds < 2 || folds > m {
        return Err(Error::Config(format!(
            "cross-validation needs from 2 folds to one per row ({m} rows), got {folds}"
        )));
    }
    Ok(())
}

/// The fold of every row: the rows shuffled (each stratum on its own, the strata one after
/// the other) and dealt to folds 0, 1, …, k − 1, 0, 1, … in that order.
fn deal(data: &ExampleSet, strata: Strata, folds: usize, seed: u64) -> Vec<usize> {
    let labels = metrics::labels(data);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let groups: Vec<Vec<usize>> = match strata {
        Strata::None => vec![(0..labels.len()).collect()],
        Strata::Sign => {
            let positive = |i: &usize| labels[*i] > 0.0;
            let (plus, minus) = (0..labels.len()).partition(positive);
            vec![plus, minus]
        }
        Strata::Label => {
            let mut by_label: Vec<usize> = (0..labels.len()).collect();
            // Stable: each label's rows in row order, the labels increasing.
            by_label.sort_by(|&a, &b| labels[a].total_cmp(&labels[b]));
            by_label
                .chunk_by(|&a, &b| labels[a] == labels[b])
                .map(<[usize]>::to_vec)
                .collect()
        }
    };
    let mut fold_of = vec![0; labels.len()];
    let mut dealt = 0;
    for mut group in groups {
        shuffle(&mut rng, &mut group);
        for i in group {
            fold_of[i] = dealt % folds;
            dealt += 1;
        }
    }
    fold_of
}

/// Rows copied into CSR arrays. Values are kept as `f64`, which holds `f32` values and the
/// 1s of binary rows exactly.
struct RowCopy {
    labels: Vec<f64>,
    offsets: Vec<u64>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl RowCopy {
    fn new() -> RowCopy {
        RowCopy {
            labels: Vec::new(),
            offsets: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
        }
    }

    fn push(&mut self, row: Row<'_>) {
        match row.values {
            Values::Ones => self.values.extend(std::iter::repeat_n(1.0, row.nnz())),
            Values::F32(x) => self.values.extend(x.iter().map(|&x| f64::from(x))),
            Values::F64(x) => self.values.extend_from_slice(x),
        }
        self.labels.push(row.label);
        self.indices.extend_from_slice(row.indices.as_slice());
        self.offsets.push(self.indices.len() as u64);
    }

    fn finish(self, n_features: usize) -> Result<CsrMatrix, Error> {
        let values = ValueVec::F64(self.values);
        Ok(CsrMatrix::new(
            self.labels,
            self.offsets,
            self.indices,
            values,
            n_features,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Learner, Loss};
    use crate::batch::Algorithm;

    /// `m` rows of two non-zeros over `n` features, row i's label, indices and values `row(i)`,
    /// in f32.
    fn rows(m: usize, n: usize, row: impl Fn(usize) -> (f64, [u32; 2], [f32; 2])) -> ExampleSet {
        let mut labels = Vec::new();
        let (mut offsets, mut indices, mut values) = (vec![0u64], Vec::new(), Vec::new());
        for i in 0..m {
            let (label, columns, entries) = row(i);
            labels.push(label);
            indices.extend(columns);
            values.extend(entries);
            offsets.push(indices.len() as u64);
        }
        let matrix = CsrMatrix::new(labels, offsets, indices, ValueVec::F32(values), n).unwrap();
        ExampleSet::Matrix(matrix)
    }

    /// `m` rows over 6 features, a third of them of class +1 (imbalanced on purpose).
    fn data(m: usize) -> ExampleSet {
        rows(m, 6, |i| {
            let sign = if i % 3 == 0 { 1.0 } else { -1.0 };
            let signal = sign as f32 * (1.0 + (i % 5) as f32 / 4.0);
            let noise = 0.5 + (i % 7) as f32 / 7.0;
            (sign, [0, 1 + (i % 5) as u32], [signal, noise])
        })
    }

    #[test]
    fn folds_are_stratified_balanced_and_the_seeds() {
        let set = data(100);
        let labels = metrics::labels(&set);
        for strata in [Strata::Sign, Strata::Label, Strata::None] {
            let fold_of = deal(&set, strata, 7, 3);
            assert_eq!(fold_of, deal(&set, strata, 7, 3), "same seed, same folds");
            assert_ne!(
                fold_of,
                deal(&set, strata, 7, 4),
                "another seed, other folds"
            );
            let count = |keep: &dyn Fn(usize) -> bool| -> Vec<usize> {
                let mut per_fold = vec![0; 7];
                (0..100)
                    .filter(|&i| keep(i))
                    .for_each(|i| per_fold[fold_of[i]] += 1);
                per_fold
            };
            let spread = |c: Vec<usize>| c.iter().max().unwrap() - c.iter().min().unwrap();
            assert!(
                spread(count(&|_| true)) <= 1,
                "fold sizes differ by one at most"
            );
            if !matches!(strata, Strata::None) {
                assert!(spread(count(&|i| labels[i] > 0.0)) <= 1);
                assert!(spread(count(&|i| labels[i] <= 0.0)) <= 1);
            }
        }
        // Unstratified, the 34 positives fall where the shuffle puts them.
        let fold_of = deal(&set, Strata::None, 7, 3);
        let positives: Vec<usize> = (0..7)
            .map(|f| {
                (0..100)
                    .filter(|&i| fold_of[i] == f && labels[i] > 0.0)
                    .count()
            })
            .collect();
        assert!(positives.iter().max().unwrap() - positives.iter().min().unwrap() > 1);
    }

    /// The attribute-efficient learners have no λ: a path over it set one that every fit
    /// ignored, and named a "best" value.
    #[test]
    fn a_path_over_lambda_is_refused_for_a_learner_without_one() {
        let trainer = Trainer::new("aerr".parse().unwrap());
        let err = trainer
            .cross_validate_path(
                &data(30),
                3,
                Strength::Lambda,
                &[1e-2, 1e-3],
                PathStarts::Cold,
                |_, _| {},
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a path over lambda does not apply to aerr"),
            "{err}"
        );
    }

    /// A path runs from the strongest regularization to the weakest; cold, each value's folds
    /// are its own cross-validation's, bit for bit; warm, the first value's too (nothing
    /// before it to start from) and every later one the same held-out errors and objectives
    /// near the cold ones, from starts that made them differ (dcd from dual variables, lbfgs
    /// and cd from weights).
    #[test]
    fn a_path_runs_from_the_strongest_regularization_and_warm_reaches_the_same_optima() {
        let set = data(90);
        let cases = [
            (
                Algorithm::Dcd,
                Loss::SquaredHinge,
                Strength::Cost,
                [10.0, 0.1, 1.0],
            ),
            (
                Algorithm::Lbfgs,
                Loss::Log,
                Strength::Lambda,
                [1e-3, 1e-1, 1e-2],
            ),
            (Algorithm::Cd, Loss::Log, Strength::L1, [1e-3, 1e-1, 1e-2]),
        ];
        for (algorithm, loss, strength, grid) in cases {
            let trainer = Trainer::new(Learner::Batch(algorithm)).loss(loss);
            let trainer = match strength {
                Strength::L1 => trainer.lambda(1e-4),
                _ => trainer,
            };
            let path = |starts| {
                let mut seen = Vec::new();
                let points = trainer
                    .cross_validate_path(&set, 3, strength, &grid, starts, |done, all| {
                        seen.push((done, all))
                    })
                    .unwrap();
                assert_eq!(seen, (1..=9).map(|done| (done, 9)).collect::<Vec<_>>());
                points
            };
            let (cold, warm) = (path(PathStarts::Cold), path(PathStarts::Warm));
            let order: Vec<f64> = cold.iter().map(|p| p.value).collect();
            let expected = match strength {
                Strength::Cost => [0.1, 1.0, 10.0],
                _ => [1e-1, 1e-2, 1e-3],
            };
            assert_eq!(order, expected, "{algorithm}");
            for (k, (cold, warm)) in cold.iter().zip(&warm).enumerate() {
                let alone = strength.set(&trainer, cold.value).cross_validate(&set, 3);
                assert_eq!(cold.validation, alone.unwrap(), "{algorithm}");
                assert_eq!(warm.value, cold.value);
                assert_eq!(
                    k == 0,
                    warm.validation == cold.validation,
                    "{algorithm} {k}"
                );
                let (w, c) = (warm.validation.mean(), cold.validation.mean());
                assert_eq!(w.error_rate, c.error_rate, "{algorithm} {k}");
                // Solved to 1e-9 of J, the weights (and the held-out objective with them)
                // agree to about its square root.
                let difference = (w.objective - c.objective).abs();
                assert!(
                    difference <= 1e-4 * c.objective,
                    "{algorithm} {k}: {difference:e} of {}",
                    c.objective
                );
            }
        }
    }

    #[test]
    fn the_best_value_is_the_lowest_score_and_of_a_tie_the_most_regularizing() {
        let scores = [(1e-3, 0.2), (1e-1, 0.1), (1e-2, 0.1), (1e-4, 0.3)];
        assert_eq!(Strength::Lambda.best(scores), Some(1e-1));
        assert_eq!(Strength::L1.best(scores), Some(1e-1));
        assert_eq!(Strength::Cost.best(scores), Some(1e-2));
        assert_eq!(Strength::Cost.best([]), None);
        let values = [1e-3, 1e-1, 1e-2];
        assert_eq!(Strength::Lambda.path_order(&values), [1e-1, 1e-2, 1e-3]);
        assert_eq!(Strength::Cost.path_order(&values), [1e-3, 1e-2, 1e-1]);
    }

    /// `m` rows of 3 classes (0, 1, 2), each class's rows signalled by its own feature.
    fn three_classes(m: usize) -> ExampleSet {
        rows(m, 7, |i| {
            let class = i % 3;
            let (signal, noise) = (1.0 + (i % 5) as f32 / 5.0, 0.5 + (i % 7) as f32 / 7.0);
            (
                class as f64,
                [class as u32, 3 + (i % 4) as u32],
                [signal, noise],
            )
        })
    }

    /// A one-vs-rest path: cold, each value's folds are its own cross-validation's, bit for
    /// bit; warm, the same held-out errors, each class's solve started from its solution at
    /// the value before (dcd from its dual variables, lbfgs from its weights), in fewer
    /// iterations over the classes.
    #[test]
    fn a_one_vs_rest_path_starts_each_class_from_its_solution_at_the_value_before() {
        let set = three_classes(120);
        for (algorithm, loss, multinomial, start) in [
            (Algorithm::Dcd, Loss::SquaredHinge, false, "initial_dual"),
            (Algorithm::Lbfgs, Loss::Log, false, "initial_model"),
            (Algorithm::Lbfgs, Loss::Log, true, "initial_model"),
        ] {
            let trainer =
                (Trainer::new(Learner::Batch(algorithm)).loss(loss)).multinomial(multinomial);
            let grid = [1.0, 0.1, 10.0];
            let path = |starts| {
                trainer
                    .cross_validate_one_vs_rest_path(
                        &set,
                        3,
                        Strength::Cost,
                        &grid,
                        starts,
                        |_, _| {},
                    )
                    .unwrap()
            };
            let (cold, warm) = (path(PathStarts::Cold), path(PathStarts::Warm));
            for (cold, warm) in cold.iter().zip(&warm) {
                let alone = Strength::Cost
                    .set(&trainer, cold.value)
                    .cross_validate_one_vs_rest(&set, 3, |_, _| {});
                assert_eq!(cold.validation, alone.unwrap(), "{algorithm}");
                assert_eq!(warm.value, cold.value);
                let (w, c) = (&warm.validation, &cold.validation);
                assert_eq!(w.mean_error_rate(), c.mean_error_rate(), "{algorithm}");
            }
            // One fold's classifier at C = 1 from the one at C = 0.1.
            let train = |trainer: &Trainer, start| {
                trainer
                    .train_classes(&set, &Local, &mut (), false, start)
                    .unwrap()
            };
            let iterations = |t: &OneVsRestTraining| -> u64 {
                (t.classifier.models().iter())
                    .map(|m| m.info.details["iterations"].as_u64().unwrap())
                    .sum()
            };
            let before = train(&trainer.clone().cost(0.1), None);
            let from_zero = train(&trainer.clone().cost(1.0), None);
            let started = train(&trainer.clone().cost(1.0), Some(&before));
            for model in started.classifier.models() {
                assert_eq!(model.info.details["warm_start"][start], true, "{algorithm}");
            }
            assert!(iterations(&started) < iterations(&from_zero), "{algorithm}");
        }
    }

    #[test]
    fn a_cost_gives_each_fold_the_lambda_of_its_own_rows() {
        // 61 rows in 4 folds: 45 or 46 training rows, so the folds' λ = 1/(C·m) differ.
        let set = data(61);
        let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs)).loss(Loss::Log);
        let validation = trainer.clone().cost(2.0).cross_validate(&set, 4).unwrap();
        let fold_of = deal(&set, Strata::Sign, 4, 1);
        let rows = set.rows();
        let mut sizes = Vec::new();
        for (f, fold) in validation.folds.iter().enumerate() {
            let mut copy = RowCopy::new();
            (0..61)
                .filter(|&i| fold_of[i] != f)
                .for_each(|i| copy.push(rows.row(i)));
            let train = ExampleSet::Matrix(copy.finish(6).unwrap());
            let lambda = super::super::lambda_for_cost(2.0, fold.train_rows);
            let model = trainer.clone().lambda(lambda).train(&train).unwrap();
            let held_out: Vec<usize> = (0..61).filter(|&i| fold_of[i] == f).collect();
            for &i in &held_out {
                let score = model.score(rows.row(i));
                assert_eq!(validation.held_out_scores[i], score, "fold {f}, row {i}");
            }
            sizes.push(fold.train_rows);
        }
        assert!(sizes.contains(&45) && sizes.contains(&46), "{sizes:?}");
    }

    #[test]
    fn each_fold_is_the_model_of_the_other_rows_evaluated_on_its_own() {
        let set = data(60);
        let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs))
            .loss(Loss::Log)
            .lambda(1e-2)
            .seed(5);
        let mut seen = Vec::new();
        let validation = trainer
            .cross_validate_each(&set, 4, |i, fold| seen.push((i, fold.clone())))
            .unwrap();
        assert_eq!(seen.len(), 4);
        let fold_of = deal(&set, Strata::Sign, 4, 5);
        let rows = set.rows();
        for (f, fold) in validation.folds.iter().enumerate() {
            assert_eq!(seen[f], (f, fold.clone()));
            // The same split by hand, from the original f32 rows.
            let pick = |held_out: bool| -> ExampleSet {
                let mut copy = RowCopy::new();
                (0..60)
                    .filter(|&i| (fold_of[i] == f) == held_out)
                    .for_each(|i| copy.push(rows.row(i)));
                ExampleSet::Matrix(copy.finish(6).unwrap())
            };
            let (train, held_out) = (pick(false), pick(true));
            assert_eq!(fold.train_rows + fold.held_out.rows, 60);
            assert_eq!(fold.train_rows, train.n_rows());
            let model = trainer.train(&train).unwrap();
            let held_out_rows = (0..60).filter(|&i| fold_of[i] == f);
            for (i, score) in
                held_out_rows.zip(metrics::scores(&model.weights, model.bias, &held_out))
            {
                assert_eq!(validation.held_out_scores[i], score, "row {i}");
            }
            let expected = metrics::evaluate(
                Loss::Log,
                metrics::Penalty::l2(1e-2, true),
                &model.weights,
                model.bias,
                &held_out,
            );
            assert_eq!(fold.held_out, expected);
            assert!(
                fold.held_out.error_rate.unwrap() < 0.2,
                "{:?}",
                fold.held_out
            );
        }
        let mean = validation.mean();
        let average = |m: fn(&Evaluation) -> f64| {
            validation.folds.iter().map(|f| m(&f.held_out)).sum::<f64>() / 4.0
        };
        assert_eq!(mean.rows, 60);
        assert_eq!(mean.objective, average(|e| e.objective));
        assert_eq!(mean.error_rate, Some(average(|e| e.error_rate.unwrap())));
        assert_eq!(mean.log_loss, Some(average(|e| e.log_loss.unwrap())));
        assert_eq!(mean.f1, Some(average(|e| e.f1.unwrap())));
        assert_eq!(mean.rmse, None);
    }

    #[test]
    fn copies_hold_the_rows_values_exactly() {
        let set = data(9);
        let mut copy = RowCopy::new();
        (0..9).for_each(|i| copy.push(set.row(i)));
        let copied = copy.finish(6).unwrap();
        for i in 0..9 {
            let (a, b) = (set.row(i), copied.row(i));
            assert_eq!(a.label, b.label);
            assert_eq!(a.indices.as_slice(), b.indices.as_slice());
            let Values::F32(original) = a.values else {
                panic!("f32 rows")
            };
            let Values::F64(widened) = b.values else {
                panic!("f64 copies")
            };
            assert!(
                original
                    .iter()
                    .zip(widened)
                    .all(|(&x, &y)| f64::from(x) == y)
            );
        }
    }

    #[test]
    fn bad_fold_counts_and_a_fold_without_a_class_are_errors_that_say_so() {
        let set = data(5);
        let trainer = Trainer::new(Learner::ASGD);
        // usize::MAX: refused before anything is allocated per fold (it was a capacity
        // overflow).
        for folds in [0, 1, 6, usize::MAX] {
            let message = trainer.cross_validate(&set, folds).unwrap_err().to_string();
            assert!(
                message.contains("from 2 folds to one per row (5 rows)"),
                "{message}"
            );
        }
        // One positive row: the fold that holds it out trains on one class.
        let matrix = CsrMatrix::new(
            vec![1.0, -1.0, -1.0, -1.0],
            vec![0, 1, 2, 3, 4],
            vec![0, 1, 2, 3],
            ValueVec::Ones,
            4,
        )
        .unwrap();
        let one_positive = ExampleSet::Matrix(matrix);
        let message = trainer
            .cross_validate(&one_positive, 2)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("fold ") && message.contains("of 2: hinge loss needs both classes"),
            "{message}"
        );
    }
}
