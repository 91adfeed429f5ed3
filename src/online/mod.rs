//! Online learners (MATH.md §2–§5): SGD, ASGD and CASGD in O(k) per step, and their literal
//! O(Tn) baselines.
//!
//! All of them share the loss, the [`Sampler`] and the [`Schedule`], so that given the same
//! [`Config`] (seed included) they take exactly the same steps: the baselines are the oracle
//! the fast learners are tested against, iterate for iterate. [`fit`] drives any of them;
//! [`hogwild::fit`] runs SGD, ASGD and CASGD on several threads without locks (MATH.md §6).

mod asgd;
mod bias;
mod casgd;
mod driver;
pub mod hogwild;
mod lookahead;
mod naive;
pub mod sampling;
pub mod schedule;
mod sgd;

pub use asgd::Asgd;
pub use bias::BiasTerm;
pub use casgd::Casgd;
pub use driver::{Algorithm, Config, ConfigError, EpochEnd, Fit, Observer, Stop, fit};
pub use naive::{Naive, NaiveKind};
pub use sampling::{Sampler, Sampling};
pub use schedule::{RunningHarmonic, Schedule, harmonic};
pub use sgd::Sgd;

use crate::data::Row;

/// A linear predictor w·x + b.
#[derive(Clone, Debug, PartialEq)]
pub struct Iterate {
    /// w, one weight per feature.
    pub weights: Vec<f64>,
    /// b.
    pub bias: f64,
}

/// The iterates after some number of steps, recovered in O(n).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The last iterate (w_t, b_t).
    pub last: Iterate,
    /// The averaged iterate (w̄_t, b̄_t) — averaged learners, once t ≥ t_a.
    pub averaged: Option<Iterate>,
}

impl Snapshot {
    /// What the learner outputs: the averaged iterate where there is one, else the last.
    pub fn output(&self) -> &Iterate {
        self.averaged.as_ref().unwrap_or(&self.last)
    }
}

/// One online learner: a step per example, the iterates on demand.
pub trait Learner {
    /// Step t ≥ 1 on example `i` (= `x`) with target y (already mapped by
    /// [`crate::loss::Loss::target`]); returns the prediction p_t the step was taken at.
    fn step(&mut self, i: usize, x: Row<'_>, y: f64, t: u64) -> f64;
    /// The iterates after `t` steps (O(n)).
    fn snapshot(&self, t: u64) -> Snapshot;
}
