//! The library's front door: open data, configure a learner, train, predict, save and load.
//!
//! A thin layer over [`crate::data`], [`crate::online`], [`crate::batch`], [`crate::lao`] and
//! [`crate::model`]: it picks sensible defaults, validates the combination of settings, maps
//! weights back to original feature ids, and returns one [`Error`] type. Everything it does
//! can also be done with those modules directly.
//!
//! ```
//! use sparselin::api::{self, Learner, Trainer};
//! use sparselin::data::ValueVec;
//!
//! // Four examples, two features, in CSR form: x₀ = (1, 0), x₁ = (0, 1), ...
//! let data = api::from_csr(
//!     vec![1.0, -1.0, 1.0, -1.0],     // labels
//!     vec![0, 1, 2, 4, 5],            // row offsets
//!     vec![0, 1, 0, 1, 1],            // column indices, increasing within a row
//!     ValueVec::F64(vec![1.0, 1.0, 2.0, 0.5, 3.0]),
//!     2,                              // features
//! )?;
//! let model = Trainer::new(Learner::ASGD).lambda(1e-3).epochs(20).train(&data)?;
//! assert_eq!(api::predict(&model, &data), [1.0, -1.0, 1.0, -1.0]);
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("toy.model");
//! model.save(&path, api::Precision::F64)?;
//! assert_eq!(api::Model::load(&path)?, model);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cross_validation;
#[cfg(test)]
mod distributed_tests;
mod one_vs_rest;
mod scaling;
mod trainer;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::batch;
use crate::data::libsvm::{ParseOptions, ValueType};
use crate::data::stream::{TextFormat, read_text};
use crate::data::{CsrError, DataError, open_examples};
use crate::lao;
use crate::memory::AllocError;
use crate::metrics;
use crate::model::ModelError;
use crate::online;

pub use crate::data::vw::{FeatureRules, Hashing};
pub use crate::data::{CsrMatrix, ExampleSet, Examples, ValueVec};
pub use crate::loss::{ClassWeighting, ClassWeights, Loss};
pub use crate::model::{Model, OneVsRest, Precision, SavedModel};
pub use cross_validation::{
    ClassesCrossValidation, ClassesFold, ClassesPathPoint, CrossValidation, Fold, PathPoint,
    PathStarts, Strength,
};
pub use one_vs_rest::{
    class_probabilities, class_scores, evaluate_one_vs_rest, more_than_two_labels_across,
    predict_classes,
};
pub use scaling::{max_abs_scales, scaled};
pub use trainer::{
    DEFAULT_EPOCHS, EarlyStopping, MAX_THREADS, Monitor, OneVsRestTraining, Trainer, Training,
    lambda_for_cost,
};

/// Anything the API can refuse: bad data, a bad configuration, a model that does not fit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The data could not be read or is malformed (names the file and place).
    #[error(transparent)]
    Data(#[from] DataError),
    /// In-memory CSR arrays broke an invariant.
    #[error("CSR arrays: {0}")]
    Csr(CsrError),
    /// An online learner refused its configuration.
    #[error(transparent)]
    Online(#[from] online::ConfigError),
    /// A batch solver refused its configuration.
    #[error(transparent)]
    Batch(#[from] batch::SolveError),
    /// A model file could not be read or written.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A learner's d-long arrays do not fit in this machine's memory.
    #[error(transparent)]
    Memory(#[from] AllocError),
    /// A combination of settings that no learner accepts.
    #[error("{0}")]
    Config(String),
    /// Training ended with a weight or the bias NaN or infinite: the steps blew up, and the
    /// model would predict nothing meaningful, so none is returned.
    #[error(
        "training diverged: the {algorithm} model has non-finite weights (NaN or infinity); \
         {cure} usually cures it"
    )]
    Diverged {
        /// The learner.
        algorithm: String,
        /// What to change: for the online learners "a larger λ or a smaller step size", for
        /// the attribute-efficient ones (which have no λ) "a smaller radius B or step size η",
        /// for the batch solvers (whose steps a line search picks) the features' scale.
        cure: &'static str,
    },
    /// Training failed in one fold of a cross-validation ([`Trainer::cross_validate`]).
    #[error("fold {fold} of {folds}: {error}")]
    Fold {
        /// The fold, from 1.
        fold: usize,
        /// How many folds.
        folds: usize,
        /// Why its training failed (part of the message, so not also a `source()`).
        error: Box<Error>,
    },
}

/// The CSR error is part of [`Error::Csr`]'s message (not also its `source()`, which would
/// print it twice in a chain of causes).
impl From<CsrError> for Error {
    fn from(error: CsrError) -> Self {
        Error::Csr(error)
    }
}

/// Open a dataset directory (`sparselin convert` output) or a LIBSVM text file (gzip ok).
///
/// For text, the feature count is the largest index seen plus one; use
/// [`crate::data::open_examples`] to declare it or to read 0-based indices.
pub fn open(path: impl AsRef<Path>) -> Result<ExampleSet, Error> {
    Ok(open_examples(path.as_ref(), ParseOptions::default())?)
}

/// Vowpal Wabbit text read into memory ([`open_vw`]).
#[derive(Debug)]
pub struct VwText {
    /// The rows, in `hashing.columns()` columns.
    pub examples: ExampleSet,
    /// The rows' importance weights, when the text gives one other than 1: the sample weights
    /// to train with ([`Trainer::sample_weights`]), as `sparselin train` weighs the rows.
    pub importance_weights: Option<Vec<f64>>,
}

/// Read Vowpal Wabbit text (gzip ok; `-` reads standard input), its names hashed by
/// `hashing` (the bits and [`FeatureRules`], VW's `-b`, `-q`, `--ignore`, …) as
/// `sparselin convert --format vw` hashes them, values stored as `f32`. Text a model scores
/// must be read by the hashing its training text was. With `unlabeled`, a line without a
/// label is a row of label 0 (text to predict on), not an error.
///
/// ```
/// use sparselin::api::{self, FeatureRules, Hashing, Learner, Trainer};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("train.vw");
/// std::fs::write(&path, "1 2.0 |user young |item book\n-1 |user old |item film\n")?;
/// let rules = FeatureRules { interactions: vec!["ui".into()], ..FeatureRules::default() };
/// let text = api::open_vw(&path, &Hashing::new(18, &rules)?, false)?;
/// assert_eq!(text.importance_weights, Some(vec![2.0, 1.0]));
/// let mut trainer = Trainer::new(Learner::ASGD).epochs(5);
/// if let Some(weights) = text.importance_weights {
///     trainer = trainer.sample_weights(weights);
/// }
/// let model = trainer.train(&text.examples)?;
/// assert_eq!(api::predict(&model, &text.examples), [1.0, -1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_vw(
    path: impl AsRef<Path>,
    hashing: &Hashing,
    unlabeled: bool,
) -> Result<VwText, Error> {
    let format = TextFormat::Vw {
        hashing: hashing.clone(),
        unlabeled,
    };
    let rows = read_text(
        path.as_ref(),
        &format,
        ValueType::F32,
        Some(hashing.columns()),
    )?;
    Ok(VwText {
        examples: ExampleSet::Matrix(rows.matrix),
        importance_weights: rows.sample_weights,
    })
}

/// Examples from CSR arrays: `labels` (m), `offsets` (m + 1, from 0 to nnz), `indices`
/// (0-based, strictly increasing within each row, below `n_features`) and their `values`.
/// Every invariant is checked (O(nnz)).
pub fn from_csr(
    labels: Vec<f64>,
    offsets: Vec<u64>,
    indices: Vec<u32>,
    values: ValueVec,
    n_features: usize,
) -> Result<ExampleSet, Error> {
    let matrix = CsrMatrix::new(labels, offsets, indices, values, n_features)?;
    Ok(ExampleSet::Matrix(matrix))
}

/// The raw scores w·x + b of every row of `data`, in row order.
///
/// Data may have fewer features than the model (they are the model's first ones) or more
/// (features the model never saw weigh 0, as in liblinear's `predict`).
pub fn scores(model: &Model, data: &ExampleSet) -> Vec<f64> {
    let weights = model.weights_for(data.n_features(), data.feature_permutation());
    metrics::scores(&weights, model.bias, data)
}

/// What the model predicts for every row: the class ±1 for classification losses, the value
/// for regression ones (see [`Model::prediction`]).
pub fn predict(model: &Model, data: &ExampleSet) -> Vec<f64> {
    let mut out = scores(model, data);
    for s in &mut out {
        *s = model.prediction(*s);
    }
    out
}

/// P(label = +1) for every row, for a model trained with log loss (see
/// [`Model::probability`]); `None` for a model of any other loss.
pub fn probabilities(model: &Model, data: &ExampleSet) -> Option<Vec<f64>> {
    if !model.loss.gives_probabilities() {
        return None;
    }
    let mut out = scores(model, data);
    for s in &mut out {
        *s = crate::loss::logistic(*s);
    }
    Some(out)
}

/// A learner of one of the three families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learner {
    /// SGD, ASGD, CASGD (O(k) per step) or their O(n)-per-step baselines (MATH.md §2–§5).
    Online(online::Algorithm),
    /// L-BFGS, subLBFGS, subgradient descent or BFGS on the batch objective (MATH.md §7).
    Batch(batch::Algorithm),
    /// AERR, AELR or AESVR: one pass reading k attributes per example (MATH.md §8).
    AttributeEfficient(lao::Algo),
}

impl Learner {
    /// Averaged SGD, the usual first choice.
    pub const ASGD: Learner = Learner::Online(online::Algorithm::Asgd);

    /// The loss used when none is set: hinge, except log for L-BFGS, TRON and Newton (which
    /// need a smooth one), squared for AERR/AELR and ε-insensitive (ε = 0.1) for AESVR.
    pub fn default_loss(self) -> Loss {
        match self {
            Learner::Batch(
                batch::Algorithm::Lbfgs | batch::Algorithm::Tron | batch::Algorithm::Newton,
            ) => Loss::Log,
            Learner::AttributeEfficient(lao::Algo::Aesvr) => Loss::EpsilonInsensitive(0.1),
            Learner::AttributeEfficient(_) => Loss::Squared,
            _ => Loss::Hinge,
        }
    }
}

impl fmt::Display for Learner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Learner::Online(a) => a.fmt(f),
            Learner::Batch(a) => a.fmt(f),
            Learner::AttributeEfficient(a) => a.fmt(f),
        }
    }
}

impl FromStr for Learner {
    type Err = String;

    /// The command line's names: `sgd`, `asgd`, `casgd`, `adagrad`, `naive-sgd`, …, `lbfgs`,
    /// `sublbfgs`, `subgd`, `bfgs`, `dcd`, `cd`, `tron`, `newton`, `aerr`, `aelr`, `aesvr`.
    fn from_str(s: &str) -> Result<Self, String> {
        if let Ok(a) = s.parse() {
            return Ok(Learner::Online(a));
        }
        if let Ok(a) = s.parse() {
            return Ok(Learner::Batch(a));
        }
        s.parse().map(Learner::AttributeEfficient).map_err(|_| {
            format!(
                "unknown learner '{s}' (sgd, asgd, casgd, adagrad, naive-sgd, naive-asgd, \
                 naive-casgd, naive-adagrad, lbfgs, sublbfgs, subgd, bfgs, dcd, cd, tron, newton, \
                 aerr, aelr, aesvr)"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::hogwild::ScalarSharing;
    use crate::online::{Sampling, Stop};

    /// Rows without features leave only the bias to learn: under the quantile loss, the
    /// online and batch learners all find the τ-quantile of the labels (0.001 to 1 in a
    /// scrambled order: any b in [0.8, 0.801] minimizes the mean pinball loss at τ = 0.8), the
    /// online ones within their steps' noise.
    #[test]
    fn the_quantile_loss_learns_the_quantile_of_the_labels() {
        let m = 1000u64;
        let labels: Vec<f64> = (0..m).map(|i| ((i * 337) % m + 1) as f64 / 1e3).collect();
        let data = from_csr(labels, vec![0; m as usize + 1], vec![], ValueVec::Ones, 1).unwrap();
        for (name, lambda, tolerance) in [
            ("sgd", 1e-3, 0.05),
            ("asgd", 1e-3, 0.005),
            ("casgd", 1e-3, 0.005),
            ("sublbfgs", 1e-9, 1e-9),
        ] {
            let learner: Learner = name.parse().unwrap();
            let mut trainer = Trainer::new(learner)
                .loss(Loss::Quantile(0.8))
                .lambda(lambda);
            if matches!(learner, Learner::Online(_)) {
                trainer = trainer.regularize_bias(false).epochs(30);
            }
            let bias = trainer.train(&data).unwrap().bias;
            assert!(
                (0.8 - tolerance..=0.801 + tolerance).contains(&bias),
                "{name}: {bias}"
            );
        }
    }

    /// A separable toy: label = sign of feature 0 minus feature 1, plus noise features.
    fn toy(m: usize) -> ExampleSet {
        let (mut labels, mut offsets, mut indices, mut values) =
            (vec![], vec![0u64], vec![], vec![]);
        for i in 0..m {
            let a = ((i * 37) % 11) as f64 / 11.0 - 0.5;
            let b = ((i * 53) % 13) as f64 / 13.0 - 0.5;
            labels.push(if a - b > 0.0 { 1.0 } else { -1.0 });
            indices.extend([0u32, 1, 2 + (i % 5) as u32]);
            values.extend([a, b, 0.1]);
            offsets.push(indices.len() as u64);
        }
        from_csr(labels, offsets, indices, ValueVec::F64(values), 7).unwrap()
    }

    /// A batch solve that overflows, or cannot step from zero, is an error, not a model of
    /// zeros returned as trained.
    #[test]
    fn a_batch_solve_that_trains_nothing_is_an_error() {
        let labels = vec![1.0, -1.0, 1.0, -1.0];
        let offsets = vec![0, 2, 3, 4, 5];
        let huge = ValueVec::F64(vec![1.0, 1e300, 2.0, 3.0, 1.0]);
        let data = from_csr(
            labels.clone(),
            offsets.clone(),
            vec![0, 1, 0, 1, 0],
            huge,
            2,
        );
        let data = data.unwrap();
        for algo in ["lbfgs", "bfgs"] {
            let trainer = Trainer::new(algo.parse().unwrap()).loss(Loss::Log);
            let e = trainer.train(&data).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "{algo} trained nothing: it took no step from zero"
                )),
                "{e}"
            );
        }
        let values = ValueVec::F64(vec![1.0, 1.0, 2.0, 3.0, 1.0]);
        let labels = vec![1e200, -1e200, 1.0, -1.0];
        let data = from_csr(labels, offsets, vec![0, 1, 0, 1, 0], values, 2).unwrap();
        for algo in ["lbfgs", "tron", "newton"] {
            let trainer = Trainer::new(algo.parse().unwrap()).loss(Loss::Squared);
            let e = trainer.train(&data).unwrap_err().to_string();
            assert!(
                e.contains("trained nothing: its objective is inf"),
                "{algo}: {e}"
            );
        }
    }

    #[test]
    fn online_training_is_the_driver_s_result() {
        let data = toy(200);
        let model = Trainer::new(Learner::ASGD).lambda(1e-3).seed(7).epochs(3);
        let model = model.train(&data).unwrap();
        let config = online::Config {
            loss: Loss::Hinge,
            class_weights: Default::default(),
            lambda: 1e-3,
            l1: 0.0,
            t0: None,
            average_start: 1,
            regularize_bias: true,
            bias_rate: 1.0,
            eta: None,
            sampling: Sampling::Uniform,
            seed: 7,
            stop: Stop::Epochs(3),
        };
        let fit = online::fit(&data, online::Algorithm::Asgd, &config, &mut ()).unwrap();
        assert_eq!(model.weights, fit.snapshot.output().weights);
        assert_eq!(model.bias, fit.snapshot.output().bias);
        let errors = predict(&model, &data)
            .iter()
            .zip(metrics::labels(&data))
            .filter(|(p, y)| **p != *y)
            .count();
        assert!(errors < 20, "{errors} training errors of 200");
    }

    #[test]
    fn every_family_trains_and_its_model_predicts_after_a_round_trip() {
        let data = toy(120);
        let dir = tempfile::tempdir().unwrap();
        for trainer in [
            Trainer::new("casgd".parse().unwrap()).steps(500),
            Trainer::new("sublbfgs".parse().unwrap()).max_iterations(50),
            Trainer::new("lbfgs".parse().unwrap()),
            Trainer::new("aerr".parse().unwrap())
                .attributes(2)
                .radius(2.0),
            Trainer::new("aesvr".parse().unwrap()).loss(Loss::EpsilonInsensitive(0.05)),
        ] {
            let model = trainer.train(&data).unwrap();
            assert_eq!(model.info.algorithm, trainer.learner().to_string());
            assert!(model.weights.iter().any(|w| *w != 0.0), "{trainer:?}");
            let path = dir.path().join("m");
            model.save(&path, Precision::F64).unwrap();
            let back = Model::load(&path).unwrap();
            assert_eq!(scores(&back, &data), scores(&model, &data));
        }
    }

    #[test]
    fn settings_that_do_not_apply_are_refused() {
        let data = toy(10);
        let err = |t: Trainer| t.train(&data).unwrap_err().to_string();
        assert!(err(Trainer::new(Learner::ASGD).max_iterations(3)).contains("asgd"));
        assert!(err(Trainer::new("lbfgs".parse().unwrap()).epochs(3)).contains("epochs"));
        assert!(err(Trainer::new("lbfgs".parse().unwrap()).loss(Loss::Hinge)).contains("smooth"));
        assert!(err(Trainer::new("bfgs".parse().unwrap()).regularize_bias(false)).contains("bias"));
        assert!(err(Trainer::new("aelr".parse().unwrap()).loss(Loss::Hinge)).contains("squared"));
        assert!(err(Trainer::new("aerr".parse().unwrap()).attributes(8)).contains("1..=7"));
        assert!(err(Trainer::new(Learner::ASGD).lambda(-1.0)).contains("λ (lambda) must be"));
        // A subnormal λ: 1/λ overflows (the learning rates, B₀).
        for learner in ["asgd", "sublbfgs", "subgd"] {
            let e = err(Trainer::new(learner.parse().unwrap()).lambda(1e-310));
            assert!(e.contains("at least 2.2e-308"), "{learner}: {e}");
        }
        assert!("nope".parse::<Learner>().unwrap_err().contains("aesvr"));
        assert!(err(Trainer::new("aerr".parse().unwrap()).smoothing(0.5)).contains("smoothing"));
        assert!(err(Trainer::new("naive-asgd".parse().unwrap()).threads(2)).contains("one thread"));
        assert!(err(Trainer::new("aerr".parse().unwrap()).threads(1)).contains("threads"));
        for threads in [0, MAX_THREADS + 1] {
            let e = err(Trainer::new(Learner::ASGD).threads(threads));
            assert!(e.contains("threads must be from 1 to 1024"), "{e}");
        }
        assert!(err(Trainer::new(Learner::ASGD).memory(3)).contains("memory"));
        // Finer than the family, as the CLI's flags are.
        let e = err(Trainer::new("sgd".parse().unwrap()).average_start(5));
        assert!(
            e.contains(
                "average_start does not apply to sgd (an online learner that does not average)"
            ),
            "{e}"
        );
        let e = err(Trainer::new("naive-asgd".parse().unwrap()).hot_features(3));
        assert!(
            e.contains("hot_features does not apply to naive-asgd"),
            "{e}"
        );
        let e =
            err(Trainer::new("naive-sgd".parse().unwrap()).scalar_sharing(ScalarSharing::Shared));
        assert!(
            e.contains("that neither averages nor runs in parallel"),
            "{e}"
        );
        let e = err(Trainer::new(Learner::ASGD).averages_per_epoch(0));
        assert!(e.contains("averages per epoch must be at least 1"), "{e}");
        for eps in [f64::NAN, f64::INFINITY, -1.0] {
            for learner in ["asgd", "aesvr"] {
                let trainer = Trainer::new(learner.parse().unwrap());
                let e = err(trainer.loss(Loss::EpsilonInsensitive(eps)));
                assert!(
                    e.contains("must be a non-negative number"),
                    "{learner} ε {eps}: {e}"
                );
            }
            let trainer = Trainer::new("dcd".parse().unwrap());
            let e = err(trainer.loss(Loss::SquaredEpsilonInsensitive(eps)));
            assert!(
                e.contains("ε of the squared ε-insensitive loss must be a non-negative"),
                "{e}"
            );
        }
        // Trained, such a model was saved, and no load took it back.
        for tau in [f64::NAN, 0.0, 1.0, 2.0] {
            for learner in ["asgd", "sublbfgs", "dcd"] {
                let trainer = Trainer::new(learner.parse().unwrap());
                let e = err(trainer.loss(Loss::Quantile(tau)));
                assert!(
                    e.contains("τ of the quantile loss must be a number between 0 and 1"),
                    "{learner} τ {tau}: {e}"
                );
            }
        }
        for delta in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
            for learner in ["asgd", "lbfgs"] {
                let trainer = Trainer::new(learner.parse().unwrap());
                let e = err(trainer.loss(Loss::Huber(delta)));
                assert!(
                    e.contains("δ of Huber's loss must be a positive number"),
                    "{learner} δ {delta}: {e}"
                );
            }
        }
    }

    /// The Poisson loss trains with the batch solvers on counts (all 0 too), and its model
    /// predicts the mean e^score; the online learners and subgd, ASGD's warm start and negative
    /// labels are refused.
    #[test]
    fn poisson_regression_is_for_batch_solvers_and_counts() {
        let signs = toy(120);
        let relabelled = |label: &dyn Fn(usize) -> f64| {
            let rows = signs.rows();
            let (mut offsets, mut indices, mut values) = (vec![0u64], vec![], vec![]);
            for i in 0..rows.n_rows() {
                let row = rows.row(i);
                indices.extend_from_slice(row.indices.as_slice());
                values.extend((0..row.nnz()).map(|k| row.values.get(k)));
                offsets.push(indices.len() as u64);
            }
            let labels = (0..rows.n_rows()).map(label).collect();
            from_csr(labels, offsets, indices, ValueVec::F64(values), 7).unwrap()
        };
        let counts = relabelled(&|i| ((i * 7) % 5) as f64);
        let poisson = |learner: &str| Trainer::new(learner.parse().unwrap()).loss(Loss::Poisson);
        let model = poisson("newton").train(&counts).unwrap();
        let score = scores(&model, &counts)[3];
        let mean = predict(&model, &counts)[3];
        assert!(
            (mean - score.exp()).abs() <= 1e-15 * mean,
            "{mean} vs e^{score}"
        );
        let err =
            |trainer: Trainer, data: &ExampleSet| trainer.train(data).unwrap_err().to_string();
        for learner in ["sgd", "asgd", "naive-casgd"] {
            let e = err(poisson(learner), &counts);
            assert!(e.contains("cannot learn poisson loss"), "{learner}: {e}");
        }
        let e = err(poisson("lbfgs").warm_start_epochs(2), &counts);
        assert!(e.contains("a warm start runs ASGD"), "{e}");
        let e = err(poisson("lbfgs"), &signs);
        assert!(e.contains("finite and ≥ 0, but the label of row"), "{e}");
        // Labels all 0: λ keeps the optimum finite, a mean near 0.
        let zeros = poisson("lbfgs").train(&relabelled(&|_| 0.0)).unwrap();
        assert!(
            zeros.bias < -3.0 && zeros.bias.is_finite(),
            "{}",
            zeros.bias
        );
        let e = err(poisson("subgd"), &counts);
        assert!(e.contains("subgd cannot learn poisson loss"), "{e}");
        let e = err(poisson("aerr"), &counts);
        assert!(
            e.contains("aerr learns with squared loss, not poisson"),
            "{e}"
        );
        let e = err(poisson("dcd"), &counts);
        assert!(e.contains("not poisson"), "{e}");
    }

    #[test]
    fn sample_weights_weigh_the_rows_of_every_family_and_of_each_fold() {
        let data = toy(120);
        let weights: Vec<f64> = (0..120).map(|i| (i % 4) as f64 * 0.5).collect();
        let err = |t: Trainer| t.train(&data).unwrap_err().to_string();
        let e = err(Trainer::new(Learner::ASGD).sample_weights(vec![1.0; 7]));
        assert!(e.contains("7 sample weights for 120 rows"), "{e}");
        let e = err(Trainer::new("aerr".parse().unwrap()).sample_weights(weights.clone()));
        assert!(e.contains("sample_weights does not apply to aerr"), "{e}");
        let e = err(Trainer::new(Learner::ASGD).sample_weights(vec![0.0; 120]));
        assert!(e.contains("every sample weight is 0"), "{e}");
        for learner in [
            "sgd",
            "asgd",
            "casgd",
            "naive-asgd",
            "lbfgs",
            "sublbfgs",
            "dcd",
            "cd",
        ] {
            let trainer = Trainer::new(learner.parse().unwrap()).lambda(1e-2);
            let trainer = match learner {
                "lbfgs" | "cd" => trainer.loss(Loss::Log),
                _ => trainer,
            };
            let plain = trainer.train(&data).unwrap();
            // Weights of 1 change no bit; these weights change the model and are recorded.
            let unit = trainer.clone().sample_weights(vec![1.0; 120]);
            let unit = unit.train(&data).unwrap();
            assert_eq!(unit.weights, plain.weights, "{learner}");
            let weighted = trainer
                .sample_weights(weights.clone())
                .train(&data)
                .unwrap();
            assert_ne!(weighted.weights, plain.weights, "{learner}");
            let recorded = &weighted.info.details["sample_weights"];
            assert_eq!(recorded["sum"], 90.0, "{learner}");
            assert_eq!(recorded["zero"], 30, "{learner}");
            assert!(plain.info.details.get("sample_weights").is_none());
        }
        // Weights of 2 everywhere at λ are the unweighted problem at λ/2: if each fold's rows
        // keep their weights, cross-validation lands on the same held-out scores.
        let lbfgs = Trainer::new("lbfgs".parse().unwrap())
            .loss(Loss::Log)
            .tolerance(1e-14);
        let doubled = lbfgs.clone().lambda(1e-2).sample_weights(vec![2.0; 120]);
        let halved = lbfgs.lambda(5e-3);
        let a = doubled.cross_validate(&data, 4).unwrap().held_out_scores;
        let b = halved.cross_validate(&data, 4).unwrap().held_out_scores;
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-6 * y.abs().max(1.0), "{x} vs {y}");
        }
        let e = doubled
            .sample_weights(vec![1.0; 3])
            .cross_validate(&data, 4);
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("3 sample weights for 120 rows")
        );
    }

    /// The objective of every batch iteration it is shown, the first one the starting point's.
    struct Objectives(Vec<f64>);

    impl online::Observer for Objectives {}

    impl Monitor for Objectives {
        fn iteration(&mut self, progress: &batch::Progress) {
            self.0.push(progress.objective);
        }
    }

    #[test]
    fn a_batch_solver_goes_on_from_an_initial_model() {
        let data = toy(200);
        let lbfgs = Trainer::new("lbfgs".parse().unwrap())
            .loss(Loss::Log)
            .lambda(1e-3);
        let iterations = |m: &Model| m.info.details["iterations"].as_u64().unwrap();
        let full = lbfgs.clone().train(&data).unwrap();
        let stopped = lbfgs.clone().max_iterations(4).train(&data).unwrap();
        // Going on from a stopped run: the same optimum, in the iterations left.
        let resumed = lbfgs
            .clone()
            .initial_model(stopped.clone())
            .train(&data)
            .unwrap();
        let penalty = metrics::Penalty::l2(1e-3, true);
        let j = |m: &Model| metrics::objective(Loss::Log, penalty, &m.weights, m.bias, &data);
        let (j_resumed, j_full) = (j(&resumed), j(&full));
        assert!(
            (j_resumed - j_full).abs() <= 1e-9 * j_full,
            "{j_resumed} vs {j_full}"
        );
        assert!(iterations(&resumed) < iterations(&full));
        assert_eq!(resumed.info.details["warm_start"]["initial_model"], true);
        // From the optimum there is nothing left to do.
        let again = lbfgs
            .clone()
            .initial_model(full.clone())
            .train(&data)
            .unwrap();
        assert_eq!(iterations(&again), 0);
        assert_eq!((&again.weights, again.bias), (&full.weights, full.bias));
        // A model of fewer features: the others start at 0, and the first iterate is its own.
        let mut narrow = stopped.clone();
        narrow.weights.truncate(2);
        let mut seen = Objectives(Vec::new());
        let sub = Trainer::new("sublbfgs".parse().unwrap())
            .lambda(1e-3)
            .max_iterations(3);
        sub.clone()
            .initial_model(narrow.clone())
            .train_monitored(&data, &mut seen)
            .unwrap();
        let start = metrics::objective(Loss::Hinge, penalty, &narrow.weights, narrow.bias, &data);
        assert!(
            (seen.0[0] - start).abs() <= 1e-12 * start,
            "{:?} vs {start}",
            seen.0
        );
        // Only the solvers that iterate on w start from one, and not from two starts at once.
        let err = |t: Trainer| t.train(&data).unwrap_err().to_string();
        let dcd = Trainer::new("dcd".parse().unwrap()).initial_model(full.clone());
        assert!(err(dcd).contains("initial_model does not apply to dcd"));
        let aerr = Trainer::new("aerr".parse().unwrap()).initial_model(full.clone());
        assert!(err(aerr).contains("initial_model does not apply to aerr"));
        // A start that is not finite is refused as such (it read as a diverged solve).
        let mut broken = full.clone();
        broken.weights[1] = f64::NAN;
        let e = err(lbfgs.clone().initial_model(broken));
        assert!(
            e.contains("the starting point's weights and bias must be finite"),
            "{e}"
        );
        // The online learners start from one too, their steps and average anew: an epoch from
        // the optimum ends nearer to it than an epoch from zero, on one thread and on two.
        for threads in [1, 2] {
            let asgd = Trainer::new(Learner::ASGD)
                .loss(Loss::Log)
                .lambda(1e-3)
                .epochs(1)
                .threads(threads);
            let warm = asgd
                .clone()
                .initial_model(full.clone())
                .train(&data)
                .unwrap();
            let cold = asgd.train(&data).unwrap();
            let (warm_gap, cold_gap) = (j(&warm) - j_full, j(&cold) - j_full);
            // Seen: 9.4e-3 against 0.114 on one thread; on two, over 8 runs, 1.0e-3 to 9.4e-3
            // against 0.083 to 0.114 (ratios 0.012 to 0.094).
            assert!(
                warm_gap < 0.25 * cold_gap,
                "{threads}: {warm_gap:e} vs {cold_gap:e}"
            );
            assert_eq!(warm.info.details["initial_model"], true);
            assert!(cold.info.details.get("initial_model").is_none());
        }
        let both = sub.initial_model(full).warm_start_epochs(1);
        assert!(err(both).contains("not both"));
    }

    #[test]
    fn dcd_goes_on_from_the_dual_variables_of_a_run_at_another_lambda() {
        let data = toy(200);
        let dcd = Trainer::new("dcd".parse().unwrap()).loss(Loss::SquaredHinge);
        let iterations = |t: &Training| t.model.info.details["iterations"].as_u64().unwrap();
        let (cold, before) = (
            dcd.clone()
                .lambda(1e-3)
                .train_monitored(&data, &mut ())
                .unwrap(),
            dcd.clone()
                .lambda(2e-3)
                .train_monitored(&data, &mut ())
                .unwrap(),
        );
        let alpha = before.dual.clone().unwrap();
        assert_eq!(alpha.len(), 200);
        let warm = (dcd.clone().lambda(1e-3).initial_dual(alpha))
            .train_monitored(&data, &mut ())
            .unwrap();
        let penalty = metrics::Penalty::l2(1e-3, true);
        let j =
            |m: &Model| metrics::objective(Loss::SquaredHinge, penalty, &m.weights, m.bias, &data);
        let (j_warm, j_cold) = (j(&warm.model), j(&cold.model));
        assert!(
            (j_warm - j_cold).abs() <= 1e-9 * j_cold,
            "{j_warm} vs {j_cold}"
        );
        assert!(
            iterations(&warm) < iterations(&cold),
            "{} vs {}",
            iterations(&warm),
            iterations(&cold)
        );
        assert_eq!(warm.model.info.details["warm_start"]["initial_dual"], true);
        assert_eq!(cold.model.info.details.get("warm_start"), None);
        // The primal solvers have no dual variables, and one-vs-rest takes none.
        assert_eq!(
            Trainer::new("lbfgs".parse().unwrap())
                .train_monitored(&data, &mut ())
                .unwrap()
                .dual,
            None
        );
        let err = |t: Trainer| t.train(&data).unwrap_err().to_string();
        let lbfgs = Trainer::new("lbfgs".parse().unwrap()).initial_dual(vec![0.0; 200]);
        assert!(err(lbfgs).contains("initial_dual does not apply to lbfgs"));
        let short = err(dcd.clone().initial_dual(vec![0.0; 3]));
        assert!(short.contains("3 variables for 200 rows"), "{short}");
    }

    /// An online run saved with its resume state and resumed ends where the whole run ends,
    /// on one thread (Hogwild's single worker) and through the baseline; the resumed model
    /// is resumable too; what cannot be resumed is refused with its reason.
    #[test]
    fn an_online_run_resumes_where_it_stopped() {
        let data = toy(150);
        let asgd = Trainer::new(Learner::ASGD)
            .loss(Loss::Log)
            .lambda(1e-3)
            .sampling(Sampling::Permutation);
        let whole = asgd.clone().epochs(3).train(&data).unwrap();
        assert!(whole.resume.is_none());
        let stopped = asgd
            .clone()
            .epochs(2)
            .save_resume(true)
            .train(&data)
            .unwrap();
        let state = stopped.resume.as_ref().unwrap();
        assert_eq!((state.steps, state.average_start), (300, 1));
        assert_eq!(
            state.last.as_ref().unwrap().weights.len(),
            whole.weights.len()
        );
        // Through the file, as `train --resume` reads it.
        let path = std::path::Path::new("stopped.model");
        let stopped = Model::from_bytes(&stopped.to_bytes(Precision::F64), path).unwrap();
        for (learner, threads) in [(Learner::ASGD, None), (Learner::ASGD, Some(1))] {
            let mut trainer = Trainer::new(learner)
                .loss(Loss::Log)
                .lambda(1e-3)
                .sampling(Sampling::Permutation)
                .epochs(1)
                .resume(stopped.clone());
            if let Some(threads) = threads {
                trainer = trainer.threads(threads);
            }
            let resumed = trainer.train(&data).unwrap();
            let apart = resumed.weights.iter().zip(&whole.weights);
            let apart = apart.fold((resumed.bias - whole.bias).abs(), |d, (a, b)| {
                d.max((a - b).abs())
            });
            assert!(apart <= 1e-12, "{threads:?}: {apart:e}");
            assert_eq!(resumed.info.details["resumed_at"], 300);
            assert_eq!(resumed.info.details["steps"], 150);
            assert_eq!(resumed.resume.as_ref().unwrap().steps, 450);
        }
        let baseline = Trainer::new("naive-asgd".parse().unwrap())
            .loss(Loss::Log)
            .lambda(1e-3)
            .sampling(Sampling::Permutation)
            .epochs(1)
            .resume(stopped.clone());
        let resumed = baseline.clone().train(&data).unwrap();
        for (a, b) in resumed.weights.iter().zip(&whole.weights) {
            assert!((a - b).abs() <= 1e-12, "naive-asgd: {a} vs {b}");
        }
        // New data (140 rows) in file order: the order begins anew at the first row, where the
        // stopped run's 300 draws would have put it at row 20.
        let file_order = |epochs| {
            Trainer::new(Learner::ASGD)
                .loss(Loss::Log)
                .lambda(1e-3)
                .sampling(Sampling::FileOrder)
                .epochs(epochs)
        };
        let stopped = file_order(2).save_resume(true).train(&data).unwrap();
        let state = stopped.resume.as_ref().unwrap();
        assert_eq!(state.rows, 150);
        let new_data = toy(140);
        let resumed = file_order(1)
            .resume(stopped.clone())
            .train(&new_data)
            .unwrap();
        let config = online::Config {
            loss: Loss::Log,
            class_weights: Default::default(),
            lambda: 1e-3,
            l1: 0.0,
            t0: Some(state.t0),
            average_start: 1,
            regularize_bias: true,
            bias_rate: 1.0,
            eta: None,
            sampling: Sampling::FileOrder,
            seed: 1,
            stop: Stop::Epochs(1),
        };
        let snapshot = online::Snapshot {
            last: state.last.clone().unwrap(),
            averaged: Some(online::Iterate {
                weights: stopped.weights.clone(),
                bias: stopped.bias,
            }),
        };
        let from = |drawn| {
            let start = online::Start {
                snapshot: snapshot.clone(),
                steps: 300,
                drawn,
            };
            let fit = online::fit_from(
                &new_data,
                online::Algorithm::Asgd,
                &config,
                Some(&start),
                &mut (),
            );
            fit.unwrap().snapshot.averaged.unwrap().weights
        };
        assert_eq!(resumed.weights, from(0));
        assert_ne!(resumed.weights, from(300));
        assert_eq!(resumed.resume.as_ref().unwrap().rows, 140);
        // Refusals, each with its reason.
        let err = |t: Trainer| t.train(&data).unwrap_err().to_string();
        let mut wide = stopped.clone();
        wide.weights.push(0.5);
        let last = &mut wide.resume.as_mut().unwrap().last.as_mut().unwrap().weights;
        last.push(0.25);
        let features = stopped.weights.len();
        let e = err(file_order(1).resume(wide));
        assert!(
            e.contains(&format!(
                "has {} features, the data {features}",
                features + 1
            )),
            "{e}"
        );
        let e = err(baseline.clone().resume(whole.clone()));
        assert!(e.contains("holds no resume state"), "{e}");
        let e = err(baseline.clone().lambda(1e-2));
        assert!(e.contains("lambda 0.001, this run has 0.01"), "{e}");
        let e = err(baseline.clone().loss(Loss::Hinge));
        assert!(e.contains("loss log, this run has hinge"), "{e}");
        let e = err(baseline.clone().regularize_bias(false));
        assert!(e.contains("a bias regularized, this run has free"), "{e}");
        let e = err(baseline.clone().t0(5.0));
        assert!(e.contains("which a resumed run keeps"), "{e}");
        let e = err(baseline.clone().initial_model(whole.clone()));
        assert!(e.contains("not both"), "{e}");
        let sgd = Trainer::new(Learner::Online(online::Algorithm::Sgd)).resume(stopped.clone());
        let e = err(sgd.loss(Loss::Log).lambda(1e-3));
        assert!(e.contains("trained by asgd, this run is sgd"), "{e}");
        let e = err(Trainer::new("lbfgs".parse().unwrap()).resume(stopped));
        assert!(e.contains("resume does not apply to lbfgs"), "{e}");
        let e = err(Trainer::new("dcd".parse().unwrap()).save_resume(true));
        assert!(e.contains("save_resume does not apply to dcd"), "{e}");
        // The ranks of a distributed run count their steps apart: neither is offered there.
        let refusals = crate::dist::threads::run(2, |r| {
            let err = |t: Trainer| t.train_across(&data, r, &mut ()).unwrap_err().to_string();
            let save = err(asgd.clone().threads(1).save_resume(true));
            (save, err(baseline.clone()))
        });
        for (save, resume) in refusals {
            assert!(
                save.contains("save_resume needs a single-process run"),
                "{save}"
            );
            assert!(resume.contains("ranks count their steps apart"), "{resume}");
        }
    }

    /// Counts the batch iterations it is shown.
    struct Iterations(u64);

    impl online::Observer for Iterations {}

    impl Monitor for Iterations {
        fn iteration(&mut self, _: &batch::Progress) {
            self.0 += 1;
        }
    }

    #[test]
    fn monitors_see_every_batch_iteration_and_one_hogwild_thread_is_the_plain_learner() {
        let data = toy(150);
        let mut seen = Iterations(0);
        let trainer = Trainer::new("sublbfgs".parse().unwrap()).max_iterations(7);
        let run = trainer.train_monitored(&data, &mut seen).unwrap();
        let iterations = run.model.info.details["iterations"].as_u64().unwrap();
        assert!(
            iterations >= 1 && seen.0 >= iterations,
            "{} of {iterations}",
            seen.0
        );
        assert!(run.examples >= 150 && run.seconds >= 0.0);
        assert_eq!(run.model, trainer.train(&data).unwrap());

        let plain = Trainer::new(Learner::ASGD).seed(3).epochs(2);
        let one_thread = plain.clone().threads(1).train(&data).unwrap();
        assert_eq!(plain.train(&data).unwrap(), one_thread);
    }

    /// The size of the rayon pool each batch iteration ran in.
    struct PoolSizes(Vec<usize>);

    impl online::Observer for PoolSizes {}

    impl Monitor for PoolSizes {
        fn iteration(&mut self, _: &batch::Progress) {
            self.0.push(rayon::current_num_threads());
        }
    }

    #[test]
    fn batch_solvers_run_on_the_threads_asked_for_with_the_same_result() {
        let data = toy(150);
        let trainer = Trainer::new("sublbfgs".parse().unwrap()).max_iterations(7);
        let default = trainer.train(&data).unwrap();
        for threads in [1, 3] {
            let mut sizes = PoolSizes(vec![]);
            let run = trainer
                .clone()
                .threads(threads)
                .train_monitored(&data, &mut sizes)
                .unwrap();
            assert!(!sizes.0.is_empty());
            assert!(sizes.0.iter().all(|&n| n == threads), "{:?}", sizes.0);
            assert_eq!(run.model.weights, default.weights, "{threads} threads");
            assert_eq!(run.model.bias, default.bias);
        }
    }

    #[test]
    fn bad_arrays_are_errors_and_unseen_features_weigh_zero() {
        let bad = from_csr(vec![1.0], vec![0, 2], vec![1, 0], ValueVec::Ones, 3);
        assert!(matches!(bad, Err(Error::Csr(CsrError::BadIndex { .. }))));
        let model = Trainer::new(Learner::ASGD).train(&toy(20)).unwrap();
        let wide = from_csr(vec![1.0], vec![0, 1], vec![9], ValueVec::Ones, 10).unwrap();
        assert_eq!(wide.n_features(), 10);
        assert_eq!(scores(&model, &wide), [model.bias]);
    }
}
