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
//! assert_eq!(api::predict(&model, &data)?, [1.0, -1.0, 1.0, -1.0]);
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("toy.model");
//! model.save(&path, api::Precision::F64)?;
//! assert_eq!(api::Model::load(&path)?, model);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde_json::json;

use crate::batch::{self, Objective};
use crate::data::libsvm::ParseOptions;
use crate::data::{CsrError, DataError, open_examples};
use crate::lao::{self, LaoConfig, SmoothedInsensitive};
use crate::metrics;
use crate::model::{ModelError, TrainingInfo, weights_to_original};
use crate::online::{self, Sampling, Stop};

pub use crate::data::{CsrMatrix, ExampleSet, Examples, ValueVec};
pub use crate::loss::Loss;
pub use crate::model::{Model, Precision};

/// Anything the API can refuse: bad data, a bad configuration, a model that does not fit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The data could not be read or is malformed (names the file and place).
    #[error(transparent)]
    Data(#[from] DataError),
    /// In-memory CSR arrays broke an invariant.
    #[error("CSR arrays: {0}")]
    Csr(#[from] CsrError),
    /// An online learner refused its configuration.
    #[error(transparent)]
    Online(#[from] online::ConfigError),
    /// A batch solver refused its configuration.
    #[error(transparent)]
    Batch(#[from] batch::SolveError),
    /// A model file could not be read or written, or does not fit the data.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A combination of settings that no learner accepts.
    #[error("{0}")]
    Config(String),
}

/// Open a dataset directory (`sparselin convert` output) or a LIBSVM text file (gzip ok).
///
/// For text, the feature count is the largest index seen plus one; use
/// [`crate::data::open_examples`] to declare it or to read 0-based indices.
pub fn open(path: impl AsRef<Path>) -> Result<ExampleSet, Error> {
    Ok(open_examples(path.as_ref(), ParseOptions::default())?)
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
/// Data may have fewer features than the model (they are the model's first ones), not more.
pub fn scores(model: &Model, data: &ExampleSet) -> Result<Vec<f64>, Error> {
    let weights = model.weights_for(data.n_features(), data.feature_permutation())?;
    Ok(metrics::scores(&weights, model.bias, data))
}

/// What the model predicts for every row: the class ±1 for classification losses, the value
/// for regression ones (see [`Model::prediction`]).
pub fn predict(model: &Model, data: &ExampleSet) -> Result<Vec<f64>, Error> {
    let mut out = scores(model, data)?;
    for s in &mut out {
        *s = model.prediction(*s);
    }
    Ok(out)
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

    /// The loss used when none is set: hinge, except log for L-BFGS (which needs a smooth
    /// one), squared for AERR/AELR and ε-insensitive (ε = 0.1) for AESVR.
    pub fn default_loss(self) -> Loss {
        match self {
            Learner::Batch(batch::Algorithm::Lbfgs) => Loss::Log,
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

    /// The command line's names: `sgd`, `asgd`, `casgd`, `naive-sgd`, …, `lbfgs`, `sublbfgs`,
    /// `subgd`, `bfgs`, `aerr`, `aelr`, `aesvr`.
    fn from_str(s: &str) -> Result<Self, String> {
        if let Ok(a) = s.parse() {
            return Ok(Learner::Online(a));
        }
        if let Ok(a) = s.parse() {
            return Ok(Learner::Batch(a));
        }
        s.parse().map(Learner::AttributeEfficient).map_err(|_| {
            format!(
                "unknown learner '{s}' (sgd, asgd, casgd, naive-sgd, naive-asgd, naive-casgd, \
                 lbfgs, sublbfgs, subgd, bfgs, aerr, aelr, aesvr)"
            )
        })
    }
}

/// A learner with its settings; [`Trainer::train`] runs it. Setters that do not apply to
/// the chosen learner make `train` fail rather than be silently ignored.
///
/// ```
/// use sparselin::api::{Learner, Loss, Trainer};
/// use sparselin::batch::Algorithm;
///
/// let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs))
///     .loss(Loss::Log)
///     .lambda(1e-4)
///     .max_iterations(200)
///     .tolerance(1e-8);
/// # let _ = trainer;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Trainer {
    learner: Learner,
    loss: Option<Loss>,
    lambda: f64,
    stop: Option<Stop>,
    seed: u64,
    regularize_bias: bool,
    t0: Option<f64>,
    sampling: Sampling,
    max_iterations: Option<usize>,
    tolerance: Option<f64>,
    attributes: Option<usize>,
    radius: Option<f64>,
}

/// Online learners without `epochs` or `steps`: this many passes.
pub const DEFAULT_EPOCHS: u64 = 5;

impl Trainer {
    /// `learner` with the defaults: its [`Learner::default_loss`], λ = 10⁻⁴, seed 1, a
    /// regularized bias, [`DEFAULT_EPOCHS`] passes (online), the batch solvers' own limits.
    pub fn new(learner: Learner) -> Self {
        Trainer {
            learner,
            loss: None,
            lambda: 1e-4,
            stop: None,
            seed: 1,
            regularize_bias: true,
            t0: None,
            sampling: Sampling::default(),
            max_iterations: None,
            tolerance: None,
            attributes: None,
            radius: None,
        }
    }

    /// The loss ℓ (online and batch learners; AESVR takes ε from `EpsilonInsensitive(ε)`).
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = Some(loss);
        self
    }

    /// λ > 0 of the objective (online and batch learners).
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self
    }

    /// Online learners: E passes' worth of steps (E·m).
    pub fn epochs(mut self, epochs: u64) -> Self {
        self.stop = Some(Stop::Epochs(epochs));
        self
    }

    /// Online learners: exactly T steps.
    pub fn steps(mut self, steps: u64) -> Self {
        self.stop = Some(Stop::Steps(steps));
        self
    }

    /// Seed of the sampler (online) or of the draws and order (attribute-efficient): same
    /// seed, same data, same model, bit for bit.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Whether (λ/2)b² is in the objective (default yes). Batch solvers always regularize it.
    pub fn regularize_bias(mut self, yes: bool) -> Self {
        self.regularize_bias = yes;
        self
    }

    /// Online learners: the step-size offset t₀ (default: [`online::driver::default_t0`]).
    pub fn t0(mut self, t0: f64) -> Self {
        self.t0 = Some(t0);
        self
    }

    /// Online learners: the order examples are visited in.
    pub fn sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// Batch learners: the iteration limit.
    pub fn max_iterations(mut self, iterations: usize) -> Self {
        self.max_iterations = Some(iterations);
        self
    }

    /// Batch learners: stop once the relative suboptimality certificate is below `tol`.
    pub fn tolerance(mut self, tol: f64) -> Self {
        self.tolerance = Some(tol);
        self
    }

    /// Attribute-efficient learners: k ≥ 1 attributes read per example (default 1).
    pub fn attributes(mut self, k: usize) -> Self {
        self.attributes = Some(k);
        self
    }

    /// Attribute-efficient learners: the radius B > 0 of the weight ball (default 1).
    pub fn radius(mut self, radius: f64) -> Self {
        self.radius = Some(radius);
        self
    }

    /// The learner this trainer runs.
    pub fn learner(&self) -> Learner {
        self.learner
    }

    /// Train on `data`. The model's weights are in original feature ids (a renumbered
    /// dataset's permutation is undone), ready for [`Model::save`] and [`predict`].
    pub fn train(&self, data: &ExampleSet) -> Result<Model, Error> {
        let loss = self.loss.unwrap_or(self.learner.default_loss());
        let unused = |what: &str| {
            Err(Error::Config(format!(
                "{what} does not apply to {} (a{} learner)",
                self.learner,
                match self.learner {
                    Learner::Online(_) => "n online",
                    Learner::Batch(_) => " batch",
                    Learner::AttributeEfficient(_) => "n attribute-efficient",
                }
            )))
        };
        let online_only = self.stop.is_some() || self.t0.is_some();
        let batch_only = self.max_iterations.is_some() || self.tolerance.is_some();
        let lao_only = self.attributes.is_some() || self.radius.is_some();
        let (weights, bias, details) = match self.learner {
            Learner::Online(_) if batch_only => return unused("max_iterations/tolerance"),
            Learner::Online(_) if lao_only => return unused("attributes/radius"),
            Learner::Online(algorithm) => self.train_online(algorithm, loss, data)?,
            Learner::Batch(_) if online_only => return unused("epochs/steps/t0"),
            Learner::Batch(_) if lao_only => return unused("attributes/radius"),
            Learner::Batch(_) if !self.regularize_bias => return unused("a free bias"),
            Learner::Batch(algorithm) => self.train_batch(algorithm, loss, data)?,
            Learner::AttributeEfficient(_) if online_only => return unused("epochs/steps/t0"),
            Learner::AttributeEfficient(_) if batch_only => {
                return unused("max_iterations/tolerance");
            }
            Learner::AttributeEfficient(algo) => self.train_lao(algo, loss, data)?,
        };
        let weights = match data.feature_permutation() {
            Some(permutation) => weights_to_original(&weights, permutation),
            None => weights,
        };
        Ok(Model {
            weights,
            bias,
            loss,
            info: TrainingInfo {
                algorithm: self.learner.to_string(),
                lambda: self.lambda,
                regularize_bias: self.regularize_bias,
                details: details.as_object().cloned().unwrap_or_default(),
            },
        })
    }

    fn train_online(
        &self,
        algorithm: online::Algorithm,
        loss: Loss,
        data: &ExampleSet,
    ) -> Result<(Vec<f64>, f64, serde_json::Value), Error> {
        let config = online::Config {
            loss,
            lambda: self.lambda,
            t0: self.t0,
            average_start: 1,
            regularize_bias: self.regularize_bias,
            sampling: self.sampling,
            seed: self.seed,
            stop: self.stop.unwrap_or(Stop::Epochs(DEFAULT_EPOCHS)),
        };
        let fit = online::fit(data, algorithm, &config, &mut ())?;
        let details = json!({
            "t0": fit.schedule.t0,
            "average_start": fit.schedule.average_start,
            "sampling": self.sampling.to_string(),
            "seed": self.seed,
            "steps": fit.steps,
        });
        let output = fit.snapshot.output();
        Ok((output.weights.clone(), output.bias, details))
    }

    fn train_batch(
        &self,
        algorithm: batch::Algorithm,
        loss: Loss,
        data: &ExampleSet,
    ) -> Result<(Vec<f64>, f64, serde_json::Value), Error> {
        let defaults = batch::Options::default();
        let options = batch::Options {
            max_iter: self.max_iterations.unwrap_or(defaults.max_iter),
            tol: self.tolerance.unwrap_or(defaults.tol),
            ..defaults
        };
        let objective = Objective::new(data, loss, self.lambda, true);
        let solution = batch::solve(algorithm, &objective, &options, &mut |_| {})?;
        let n = data.n_features();
        let details = json!({
            "iterations": solution.iterations,
            "stop": solution.stop,
            "objective": solution.objective,
            "tol": options.tol,
        });
        Ok((solution.w[..n].to_vec(), solution.w[n], details))
    }

    fn train_lao(
        &self,
        algo: lao::Algo,
        loss: Loss,
        data: &ExampleSet,
    ) -> Result<(Vec<f64>, f64, serde_json::Value), Error> {
        let insensitivity = match (algo, loss) {
            (lao::Algo::Aesvr, Loss::EpsilonInsensitive(eps)) => eps,
            (lao::Algo::Aerr | lao::Algo::Aelr, Loss::Squared) => 0.0,
            _ => {
                return Err(Error::Config(format!(
                    "{algo} learns with {} loss, not {loss}",
                    Learner::AttributeEfficient(algo).default_loss()
                )));
            }
        };
        let (k, radius) = (self.attributes.unwrap_or(1), self.radius.unwrap_or(1.0));
        if k == 0 || k > data.n_features() {
            return Err(Error::Config(format!(
                "{algo} reads k attributes per example: k = {k} is not within 1..={}",
                data.n_features()
            )));
        }
        if !(radius > 0.0 && radius.is_finite()) {
            return Err(Error::Config(format!(
                "the radius B must be positive, got {radius}"
            )));
        }
        if data.n_rows() == 0 {
            return Err(online::ConfigError::NoRows.into());
        }
        let config = LaoConfig {
            algo,
            k,
            radius,
            eta: None,
            svr: SmoothedInsensitive {
                smoothing: 1.0,
                insensitivity,
            },
            seed: self.seed,
        };
        let fit = lao::train(data, &config);
        let details = json!({
            "k": k,
            "radius": radius,
            "eta": fit.eta,
            "seed": self.seed,
            "attributes_observed": fit.attributes_observed,
        });
        Ok((fit.weights, 0.0, details))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Examples;

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

    #[test]
    fn online_training_is_the_driver_s_result() {
        let data = toy(200);
        let model = Trainer::new(Learner::ASGD).lambda(1e-3).seed(7).epochs(3);
        let model = model.train(&data).unwrap();
        let config = online::Config {
            loss: Loss::Hinge,
            lambda: 1e-3,
            t0: None,
            average_start: 1,
            regularize_bias: true,
            sampling: Sampling::Uniform,
            seed: 7,
            stop: Stop::Epochs(3),
        };
        let fit = online::fit(&data, online::Algorithm::Asgd, &config, &mut ()).unwrap();
        assert_eq!(model.weights, fit.snapshot.output().weights);
        assert_eq!(model.bias, fit.snapshot.output().bias);
        let errors = predict(&model, &data)
            .unwrap()
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
            assert_eq!(
                scores(&back, &data).unwrap(),
                scores(&model, &data).unwrap()
            );
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
        assert!(err(Trainer::new(Learner::ASGD).lambda(-1.0)).contains("lambda"));
        assert!("nope".parse::<Learner>().unwrap_err().contains("aesvr"));
    }

    #[test]
    fn bad_arrays_and_too_wide_data_are_errors() {
        let bad = from_csr(vec![1.0], vec![0, 2], vec![1, 0], ValueVec::Ones, 3);
        assert!(matches!(bad, Err(Error::Csr(CsrError::BadIndex { .. }))));
        let model = Trainer::new(Learner::ASGD).train(&toy(20)).unwrap();
        let wide = from_csr(vec![1.0], vec![0, 1], vec![9], ValueVec::Ones, 10).unwrap();
        assert_eq!(wide.n_features(), 10);
        assert!(matches!(scores(&model, &wide), Err(Error::Model(_))));
    }
}
