//! Attribute-efficient regression (MATH.md §8; seed `001_…`, Hazan & Koren, ICML 2012): AERR
//! (ridge, ‖w‖₂ ≤ B), AELR (lasso, ‖w‖₁ ≤ B) and AESVR (erf-smoothed ε-insensitive loss, ‖w‖₂ ≤
//! B), learning from only k + 1 chosen attributes of each example (k + O(1) in expectation for
//! AESVR), one pass, output the average iterate w̄.
//!
//! * [`access`] — the counting window a learner reads an example through.
//! * [`sum_tree`], [`lazy_average`], [`draws`] — the O(log d) sampler, the lazy w̄, the seeded draws.
//! * [`estimate`], [`genest`] — the gradient estimator g̃ = φ̃·x̃ and Procedure 3.
//! * [`aerr`], [`aelr`] — the O(k log d) learners; [`literal`] — the O(d) oracles.
//! * [`full_info`] — the full-information baselines (offline ridge/lasso, projected OGD).
//!
//! The models have no bias term, as in the paper; labels are used as given (not centered).

pub mod access;
pub mod aelr;
pub mod aerr;
pub mod draws;
pub mod estimate;
pub mod full_info;
pub mod genest;
pub mod lazy_average;
pub mod literal;
pub mod sum_tree;

use std::fmt;
use std::str::FromStr;

use crate::data::Examples;
use crate::memory::{self, AllocError};

pub use access::Attributes;
pub use aelr::Aelr;
pub use aerr::Aerr;
pub use estimate::Phi;
pub use genest::SmoothedInsensitive;
pub use literal::{LiteralAelr, LiteralAerr};

/// An online learner that sees each example only through [`Attributes`].
pub trait AttributeLearner {
    /// One example: draw, pay for and read the attributes, update.
    fn step(&mut self, ex: &mut Attributes<'_>);
    /// The average iterate w̄ = (1/t) Σ_{τ≤t} w_τ over the t steps so far, or an error when
    /// the machine cannot hold another d weights.
    fn average(&self) -> Result<Vec<f64>, AllocError>;
    /// The current iterate w_{t+1}.
    fn current(&self) -> Vec<f64>;
}

/// Attributes read per example when the caller does not say (or d, if the data have fewer).
pub const DEFAULT_ATTRIBUTES: usize = 4;

/// AESVR's default smoothing width ε of f_ε (MATH.md §8).
pub const DEFAULT_SMOOTHING: f64 = 0.1;

/// The largest radius B for AERR and AESVR: their weights w = s·ω reach B, and the sampling
/// tree sums ω² (with s ≥ 2⁻²⁰ between folds), which must stay finite. No data need more.
pub const MAX_L2_RADIUS: f64 = 1e100;

/// AERR's w₁: nonzero (its φ̃ samples j ∝ w_j²) and small (it predicts ≈ 0): all coordinates
/// equal, ‖w₁‖₂ = 10⁻³·B. An error when the machine cannot hold d weights.
pub fn initial_weights(d: usize, radius: f64) -> Result<Vec<f64>, AllocError> {
    memory::filled("weights", d, 1e-3 * radius / (d.max(1) as f64).sqrt())
}

/// Which limited-observation learner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Ridge: squared loss, ‖w‖₂ ≤ B.
    Aerr,
    /// Lasso: squared loss, ‖w‖₁ ≤ B.
    Aelr,
    /// Support-vector regression: erf-smoothed ε-insensitive loss, ‖w‖₂ ≤ B.
    Aesvr,
}

impl FromStr for Algo {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "aerr" => Ok(Algo::Aerr),
            "aelr" => Ok(Algo::Aelr),
            "aesvr" => Ok(Algo::Aesvr),
            _ => Err(format!("unknown algorithm {s:?} (aerr, aelr, aesvr)")),
        }
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Algo::Aerr => "aerr",
            Algo::Aelr => "aelr",
            Algo::Aesvr => "aesvr",
        })
    }
}

/// Default step sizes, MATH.md §8's readings of Theorems 3.1 and 3.4 for m examples in d
/// dimensions with k attributes: AERR η = √(k/(2dm)); AELR η = (1/(2B))√(k·log(2d)/(10md)).
/// AESVR's G is exp(O(log²(B/ε))) with no usable constant, so it takes AERR's η.
pub fn default_eta(algo: Algo, k: usize, d: usize, m: usize, radius: f64) -> f64 {
    let (k, d, m) = (k as f64, d as f64, m.max(1) as f64);
    match algo {
        Algo::Aerr | Algo::Aesvr => (k / (2.0 * d * m)).sqrt(),
        Algo::Aelr => (k * (2.0 * d).ln() / (10.0 * m * d)).sqrt() / (2.0 * radius),
    }
}

/// Settings of a limited-observation run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaoConfig {
    /// The learner.
    pub algo: Algo,
    /// Attributes drawn for x̃ per example (k ≥ 1).
    pub k: usize,
    /// The radius B of the ball.
    pub radius: f64,
    /// Step size; `None` takes [`default_eta`].
    pub eta: Option<f64>,
    /// AESVR's loss (ignored by AERR and AELR).
    pub svr: SmoothedInsensitive,
    /// Seed of the draws and of the example order.
    pub seed: u64,
}

/// What a run returns.
#[derive(Clone, Debug, PartialEq)]
pub struct LaoFit {
    /// The averaged iterate w̄.
    pub weights: Vec<f64>,
    /// Attributes read in total (labels not counted).
    pub attributes_observed: u64,
    /// Examples seen.
    pub examples: u64,
    /// The step size used.
    pub eta: f64,
}

/// A boxed O(k log d) learner for `config` over d features, m examples, or an error when the
/// machine cannot hold it.
pub fn fast_learner(
    config: &LaoConfig,
    d: usize,
    m: usize,
) -> Result<Box<dyn AttributeLearner>, AllocError> {
    let eta = config
        .eta
        .unwrap_or_else(|| default_eta(config.algo, config.k, d, m, config.radius));
    let (k, b, seed) = (config.k, config.radius, config.seed);
    Ok(match config.algo {
        Algo::Aerr => Box::new(Aerr::new(d, k, b, eta, Phi::Squared, seed)?),
        Algo::Aesvr => Box::new(Aerr::new(d, k, b, eta, Phi::Smoothed(config.svr), seed)?),
        Algo::Aelr => Box::new(Aelr::new(d, k, b, eta, seed)?),
    })
}

/// Feed the rows `order` of `data` to `learner`, each through a counting window; returns the
/// attributes read.
pub fn feed(learner: &mut dyn AttributeLearner, data: &dyn Examples, order: &[usize]) -> u64 {
    let d = data.n_features();
    let mut observed = 0;
    for &r in order {
        let mut ex = Attributes::new(data.row(r), d);
        learner.step(&mut ex);
        observed += ex.observed();
    }
    observed
}

/// One pass of the O(k log d) learner over `data` in a random order (seeded), returning w̄;
/// an error when the machine cannot hold the learner.
pub fn train(data: &dyn Examples, config: &LaoConfig) -> Result<LaoFit, AllocError> {
    let (d, m) = (data.n_features(), data.n_rows());
    let eta = config
        .eta
        .unwrap_or_else(|| default_eta(config.algo, config.k, d, m, config.radius));
    let mut learner = fast_learner(
        &LaoConfig {
            eta: Some(eta),
            ..*config
        },
        d,
        m,
    )?;
    let order = draws::Draws::new(config.seed ^ 0x5eed_0f0d_e5a1_e000).permutation(m);
    let observed = feed(learner.as_mut(), data, &order);
    Ok(LaoFit {
        weights: learner.average()?,
        attributes_observed: observed,
        examples: m as u64,
        eta,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lao::sum_tree::SumTree;

    /// 2^46 features: 512 TiB for one array of f64, more than any 47-bit address space holds.
    const IMPOSSIBLE: usize = 1 << 46;

    #[test]
    fn learners_too_large_for_the_machine_are_errors_not_aborts() {
        for algo in [Algo::Aerr, Algo::Aelr, Algo::Aesvr] {
            let config = LaoConfig {
                algo,
                k: 1,
                radius: 1.0,
                eta: Some(0.1),
                svr: SmoothedInsensitive {
                    smoothing: 1.0,
                    insensitivity: 0.1,
                },
                seed: 1,
            };
            let error = fast_learner(&config, IMPOSSIBLE, 10).err().unwrap();
            assert_eq!((error.what, error.count), ("weights", IMPOSSIBLE), "{algo}");
            assert!(fast_learner(&config, 100, 10).is_ok(), "{algo}");
        }
        assert!(LiteralAerr::new(IMPOSSIBLE, 1, 1.0, 0.1, Phi::Squared, 1).is_err());
        assert!(LiteralAelr::new(IMPOSSIBLE, 1, 1.0, 0.1, 1).is_err());
        let tree = SumTree::new(std::iter::repeat_n(1.0, IMPOSSIBLE))
            .err()
            .unwrap();
        assert_eq!((tree.what, tree.count), ("sampling tree", IMPOSSIBLE));
    }
}
