//! Early stopping of the online learners: a share of the training rows held out, scored after
//! every epoch, and the run ended once that score stops falling, with the model of its best
//! epoch (Vowpal Wabbit's holdout with `--early_terminate`, which also keeps the best pass's
//! model; scikit-learn's `early_stopping` with `validation_fraction` and `n_iter_no_change`).

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Error, Monitor};
use crate::data::{Examples, RowSubset};
use crate::loss::WeightedLoss;
use crate::metrics;
use crate::online::sampling::shuffle;
use crate::online::{self, EpochEnd, Observer, Snapshot};

/// How an online run stops early ([`super::Trainer::early_stopping`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EarlyStopping {
    /// Epochs in a row without an improvement of the held-out loss after which the run ends
    /// (at least 1; Vowpal Wabbit's `--early_terminate`, default 3 there).
    pub patience: u32,
    /// The share of the rows held out, drawn by the seed (by class for a classification loss,
    /// as cross-validation's folds are), strictly between 0 and 1.
    pub holdout: f64,
    /// An epoch improves on the best held-out loss L so far only if its own is below
    /// L − tolerance·|L| (scikit-learn's `tol`, relative here so that it does not depend on
    /// the scale of the labels); at least 0.
    pub tolerance: f64,
}

impl EarlyStopping {
    /// The share held out by default, scikit-learn's `validation_fraction` (Vowpal Wabbit holds
    /// out one row in 10 too).
    pub const DEFAULT_HOLDOUT: f64 = 0.1;
    /// The relative improvement an epoch must make by default (scikit-learn's `tol`).
    pub const DEFAULT_TOLERANCE: f64 = 1e-3;
    /// The passes a run that stops early may take unless epochs or steps are set.
    pub const DEFAULT_MAX_EPOCHS: u64 = 100;

    /// Stop after `patience` epochs without improvement, the other settings their defaults.
    pub fn new(patience: u32) -> Self {
        EarlyStopping {
            patience,
            holdout: Self::DEFAULT_HOLDOUT,
            tolerance: Self::DEFAULT_TOLERANCE,
        }
    }

    /// An error naming the first setting out of range.
    pub(super) fn check(&self) -> Result<(), Error> {
        let refuse = |what: String| Err(Error::Config(format!("early stopping: {what}")));
        if self.patience == 0 {
            return refuse("the patience must be at least 1 epoch".into());
        }
        if !(self.holdout > 0.0 && self.holdout < 1.0) {
            return refuse(format!(
                "the share held out must be between 0 and 1, got {}",
                self.holdout
            ));
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return refuse(format!(
                "the tolerance must be a non-negative number, got {}",
                self.tolerance
            ));
        }
        Ok(())
    }
}

/// A set's rows dealt into those trained on and those held out, each list in row order, with
/// their sample weights where the set has them.
pub(super) struct Holdout {
    train: Vec<u32>,
    held_out: Vec<u32>,
    train_weights: Option<Vec<f64>>,
    held_out_weights: Option<Vec<f64>>,
}

impl Holdout {
    /// `share` of `data`'s rows held out, drawn with `seed`: of each class (label > 0 and the
    /// rest) its share for a classification loss, else of all rows, and never a class's every
    /// row (the rows trained on keep both classes). An error if no row, or no row of positive
    /// sample weight, would be held out.
    pub(super) fn deal<E: Examples>(
        data: &E,
        classification: bool,
        share: f64,
        seed: u64,
    ) -> Result<Holdout, Error> {
        let labels = metrics::labels(data);
        let m = labels.len();
        // Row numbers as u32: half the memory a step reads them from.
        let Ok(rows) = u32::try_from(m) else {
            return Err(Error::Config(format!(
                "early stopping holds out rows of sets of fewer than 2^32 rows, not {m}"
            )));
        };
        let mut strata: Vec<Vec<u32>> = if classification {
            let (positive, negative) = (0..rows).partition(|&i| labels[i as usize] > 0.0);
            vec![positive, negative]
        } else {
            vec![(0..rows).collect()]
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut held_out = Vec::new();
        for stratum in &mut strata {
            shuffle(&mut rng, stratum);
            let most = stratum.len().saturating_sub(1);
            let count = ((share * stratum.len() as f64).round() as usize).min(most);
            held_out.extend_from_slice(&stratum[..count]);
        }
        held_out.sort_unstable();
        if held_out.is_empty() {
            return Err(Error::Config(format!(
                "early stopping: a share of {share:?} of {m} rows holds out none of them (a \
                 larger share, or more rows)"
            )));
        }
        if let Some(weights) = data.sample_weights()
            && held_out.iter().all(|&i| weights[i as usize] == 0.0)
        {
            return Err(Error::Config(format!(
                "early stopping: the {} rows held out all have sample weight 0, so their loss \
                 is 0 at every epoch (another --seed, or a larger share)",
                held_out.len()
            )));
        }
        let mut is_held_out = vec![false; m];
        held_out
            .iter()
            .for_each(|&i| is_held_out[i as usize] = true);
        let train: Vec<u32> = (0..rows).filter(|&i| !is_held_out[i as usize]).collect();
        let gather = |rows: &[u32]| {
            data.sample_weights()
                .map(|weights| rows.iter().map(|&i| weights[i as usize]).collect())
        };
        Ok(Holdout {
            train_weights: gather(&train),
            held_out_weights: gather(&held_out),
            train,
            held_out,
        })
    }

    /// The rows trained on, as a set.
    pub(super) fn train<'s, E: Examples>(&'s self, data: E) -> RowSubset<'s, E> {
        RowSubset::new(data, &self.train, self.train_weights.as_deref())
    }

    /// The rows held out, as a set.
    pub(super) fn held_out<'s, E: Examples>(&'s self, data: E) -> RowSubset<'s, E> {
        RowSubset::new(data, &self.held_out, self.held_out_weights.as_deref())
    }
}

/// The best epoch so far: its held-out loss, where the run stood, and its iterates.
pub(super) struct Best {
    pub(super) loss: f64,
    pub(super) epochs: f64,
    pub(super) steps: u64,
    pub(super) snapshot: Snapshot,
}

/// An observer of an online run that scores the held-out rows after every epoch, keeps the
/// best epoch's iterates and asks the run to stop once `settings.patience` epochs in a row
/// have not improved; everything else goes on to `inner`, each epoch end with its held-out
/// loss ([`EpochEnd::held_out_loss`]).
pub(super) struct Watch<'a, M, E> {
    inner: &'a mut M,
    held_out: E,
    /// The held-out rows' targets and weights c_y·s_i, fixed for the run.
    targets: Vec<f64>,
    weights: Vec<f64>,
    loss: WeightedLoss,
    settings: EarlyStopping,
    pub(super) best: Option<Best>,
    /// Epochs since the last improvement.
    since_improvement: u32,
    /// Epoch ends seen.
    pub(super) epochs_seen: u32,
}

impl<'a, M: Monitor, E: Examples> Watch<'a, M, E> {
    pub(super) fn new(
        inner: &'a mut M,
        held_out: E,
        loss: WeightedLoss,
        settings: EarlyStopping,
    ) -> Self {
        let (targets, weights) = {
            let rows = held_out.rows();
            let targets: Vec<f64> = (0..rows.n_rows())
                .map(|i| loss.target(rows.row(i).label))
                .collect();
            let weights = (targets.iter().enumerate())
                .map(|(i, &y)| loss.weight(y) * rows.sample_weight(i))
                .collect();
            (targets, weights)
        };
        Watch {
            inner,
            held_out,
            targets,
            weights,
            loss,
            settings,
            best: None,
            since_improvement: 0,
            epochs_seen: 0,
        }
    }

    /// The mean weighted loss (1/m_h) Σ c_y·s_i·ℓ(w·x_i + b, y_i) of the held-out rows.
    fn held_out_loss(&self, iterate: &online::Iterate) -> f64 {
        let scores = metrics::scores(&iterate.weights, iterate.bias, &self.held_out);
        let sum: f64 = (scores.iter().zip(&self.targets).zip(&self.weights))
            .map(|((&p, &y), &c)| c * self.loss.loss().value(p, y))
            .sum();
        sum / scores.len() as f64
    }
}

impl<M: Monitor, E: Examples> Observer for Watch<'_, M, E> {
    fn progress(&mut self, steps: u64, mean_loss: f64) {
        self.inner.progress(steps, mean_loss);
    }

    fn steps(&mut self, steps: u64) {
        self.inner.steps(steps);
    }

    fn wants_epochs(&self) -> bool {
        true
    }

    fn epoch_end(&mut self, end: &EpochEnd<'_>) {
        self.epochs_seen += 1;
        let loss = self.held_out_loss(end.snapshot.output());
        let tolerance = self.settings.tolerance;
        let (improved, lowest) = match &self.best {
            None => (loss.is_finite(), loss.is_finite()),
            Some(best) => (
                loss < best.loss - tolerance * best.loss.abs(),
                loss < best.loss,
            ),
        };
        if lowest {
            self.best = Some(Best {
                loss,
                epochs: end.epochs,
                steps: end.steps,
                snapshot: end.snapshot.clone(),
            });
        }
        self.since_improvement = if improved {
            0
        } else {
            self.since_improvement + 1
        };
        if self.inner.wants_epochs() {
            self.inner.epoch_end(&EpochEnd {
                held_out_loss: Some(loss),
                ..*end
            });
        }
    }

    fn stop_requested(&self) -> bool {
        self.since_improvement >= self.settings.patience
    }
}

/// An online run calls none of a monitor's batch or one-vs-rest methods: their defaults.
impl<M: Monitor, E: Examples + Send> Monitor for Watch<'_, M, E> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Learner, Loss, Trainer};
    use crate::data::{CsrMatrix, ExampleSet, SampleWeighted, ValueVec};
    use crate::online::{Algorithm, Stop};

    /// `m` rows of one feature, row i labelled +1 if i % 4 == 0 (a quarter), else −1, with
    /// value (i % 7) − 3 and, in two rows of three, a second feature of noise.
    fn data(m: usize) -> ExampleSet {
        let (mut labels, mut offsets, mut indices, mut values) =
            (vec![], vec![0u64], vec![], vec![]);
        for i in 0..m {
            labels.push(if i % 4 == 0 { 1.0 } else { -1.0 });
            indices.push(0);
            values.push((i % 7) as f64 - 3.0 + labels[i]);
            if i % 3 != 0 {
                indices.push(1);
                values.push(((i * 13) % 5) as f64 - 2.0);
            }
            offsets.push(indices.len() as u64);
        }
        ExampleSet::Matrix(
            CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), 2).unwrap(),
        )
    }

    #[test]
    fn the_holdout_is_each_class_s_share_disjoint_from_the_rest_and_the_seed_s() {
        let set = data(1000);
        let split = Holdout::deal(&set, true, 0.1, 5).unwrap();
        assert_eq!(split.held_out.len(), 100);
        let positives = split.held_out.iter().filter(|&&i| i % 4 == 0).count();
        assert_eq!(positives, 25, "a tenth of the 250 rows of +1");
        let mut all: Vec<u32> = split.train.iter().chain(&split.held_out).copied().collect();
        assert!(split.train.is_sorted() && split.held_out.is_sorted());
        all.sort_unstable();
        assert_eq!(all, (0..1000).collect::<Vec<_>>(), "every row once");
        let again = Holdout::deal(&set, true, 0.1, 5).unwrap();
        assert_eq!(again.held_out, split.held_out, "same seed, same rows");
        let other = Holdout::deal(&set, true, 0.1, 6).unwrap();
        assert_ne!(other.held_out, split.held_out, "another seed, other rows");
        let regression = Holdout::deal(&set, false, 0.25, 5).unwrap();
        assert_eq!(regression.held_out.len(), 250);

        let weights: Vec<f64> = (0..1000).map(|i| i as f64).collect();
        let weighted = SampleWeighted::new(&set, &weights).unwrap();
        let split = Holdout::deal(&weighted, true, 0.1, 5).unwrap();
        let held_out = split.held_out(&weighted);
        assert_eq!(held_out.sample_weight(3), split.held_out[3] as f64);

        let error = Holdout::deal(&data(10), true, 0.0001, 5).err().unwrap();
        assert!(error.to_string().contains("holds out none"), "{error}");
        // A class is never held out whole: of 10 rows, 3 of +1, at most 2 and 6.
        let most = Holdout::deal(&data(10), true, 0.9999, 5).unwrap();
        assert_eq!(most.held_out.len(), 8);
        assert_eq!(most.train.iter().filter(|&&i| i % 4 == 0).count(), 1);
        // The split does not depend on the weights: weigh 0 exactly the rows it holds out.
        let held_out_weightless: Vec<f64> = (0..1000)
            .map(|i| f64::from(!split.held_out.contains(&i)))
            .collect();
        let weightless = SampleWeighted::new(&set, &held_out_weightless).unwrap();
        let error = Holdout::deal(&weightless, true, 0.1, 5).err().unwrap();
        assert!(error.to_string().contains("sample weight 0"), "{error}");
    }

    /// Under early stopping the run ends after `patience` epochs without an improvement, and
    /// its model is the one a run on the rows trained on takes to the best epoch, bit for bit,
    /// with the held-out loss it reports.
    #[test]
    fn the_model_is_the_best_epoch_s_of_a_run_on_the_rows_not_held_out() {
        let set = data(2000);
        let settings = EarlyStopping {
            patience: 2,
            holdout: 0.2,
            tolerance: 0.05,
        };
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let trainer = Trainer::new(Learner::Online(algorithm))
                .loss(Loss::Log)
                .lambda(1e-3)
                .threads(1)
                .early_stopping(settings);
            let model = trainer.train(&set).unwrap();
            let report = &model.info.details["early_stopping"];
            let (best, run) = (
                report["best_epoch"].as_f64().unwrap(),
                report["epochs_run"].as_u64().unwrap(),
            );
            assert!(
                report["stopped"].as_bool().unwrap(),
                "{algorithm}: {report}"
            );
            assert!(
                run < EarlyStopping::DEFAULT_MAX_EPOCHS,
                "{algorithm}: {report}"
            );
            assert!(best >= 1.0 && best <= run as f64, "{algorithm}: {report}");

            let split = Holdout::deal(&set, true, 0.2, 1).unwrap();
            let config = online::Config {
                stop: Stop::Epochs(best as u64),
                ..trainer.online_config(Loss::Log)
            };
            let train = split.train(&set);
            let direct = online::fit(&train, algorithm, &config, &mut ()).unwrap();
            let output = direct.snapshot.output();
            assert_eq!(output.weights, model.weights, "{algorithm}");
            assert_eq!(output.bias, model.bias, "{algorithm}");

            let held_out = split.held_out(&set);
            let scores = metrics::scores(&model.weights, model.bias, &held_out);
            let mean = (0..held_out.n_rows())
                .map(|i| Loss::Log.value(scores[i], held_out.row(i).label))
                .sum::<f64>()
                / held_out.n_rows() as f64;
            let reported = report["best_held_out_loss"].as_f64().unwrap();
            assert!(
                (mean - reported).abs() <= 1e-12 * mean,
                "{mean} vs {reported}"
            );
        }
    }

    #[test]
    fn settings_out_of_range_and_batch_solvers_are_refused() {
        let set = data(100);
        let asgd = Trainer::new(Learner::Online(Algorithm::Asgd));
        for (settings, what) in [
            (EarlyStopping::new(0), "patience"),
            (
                EarlyStopping {
                    holdout: 1.0,
                    ..EarlyStopping::new(3)
                },
                "share held out",
            ),
            (
                EarlyStopping {
                    tolerance: -1.0,
                    ..EarlyStopping::new(3)
                },
                "tolerance",
            ),
        ] {
            let error = asgd
                .clone()
                .early_stopping(settings)
                .train(&set)
                .unwrap_err();
            assert!(error.to_string().contains(what), "{error}");
        }
        let lbfgs = Trainer::new("lbfgs".parse().unwrap()).loss(Loss::Log);
        let error = lbfgs
            .early_stopping(EarlyStopping::new(3))
            .train(&set)
            .unwrap_err();
        assert!(
            error.to_string().contains("early_stopping does not apply"),
            "{error}"
        );
    }
}
