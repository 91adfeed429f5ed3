//! Online learners (MATH.md §2–§5): SGD, ASGD and CASGD in O(k) per step, AdaGrad in its dual
//! averaging form, and their literal O(Tn) baselines.
//!
//! All of them share the loss and the [`Sampler`], and all but AdaGrad the [`Schedule`], so
//! that given the same [`Config`] (seed included) a learner and its baseline take the same
//! steps, up to the rounding of the SIMD kernels' summation order: the baselines are the oracle
//! the fast learners are tested against, iterate for iterate. [`fit`] drives any of them;
//! [`hogwild::fit`] runs SGD, ASGD and CASGD on several threads without locks (MATH.md §6).

mod adagrad;
mod asgd;
mod bias;
mod casgd;
mod classes;
mod driver;
pub mod hogwild;
pub(crate) mod lookahead;
mod naive;
pub mod sampling;
pub mod schedule;
mod sgd;

pub use adagrad::{Adagrad, AdagradRule, DELTA as ADAGRAD_DELTA, NaiveAdagrad};
pub use asgd::Asgd;
pub use bias::BiasTerm;
pub use casgd::{Casgd, example_sum, mean_example};
pub use classes::{ClassesFit, fit_classes, fit_classes_mixing, trains_classes_in_one_pass};
pub use driver::{
    Algorithm, Config, ConfigError, EpochEnd, Fit, Mix, Mixing, Observer, RowNorms, Start, Stop,
    T0_SAMPLE_ROWS, default_t0, fit, fit_from, fit_mixing, t0_sample,
};
pub use naive::{Naive, NaiveKind};
pub use sampling::{Sampler, Sampling};
pub use schedule::{RunningHarmonic, Schedule, harmonic};
pub use sgd::Sgd;

use sparselin_kernels::Values;

use crate::data::Row;
use crate::memory::AllocError;

/// x moved toward 0 by `by` ≥ 0, and ±0 if that crosses it: the proximal step of by·|x|, the
/// L1 term's step of SGD and its baseline. Without branches: which side a weight lands on is
/// data, and a mispredicted branch per entry made SGD's L1 steps 5.5× as slow as its plain
/// ones.
#[inline]
fn soft_threshold(x: f64, by: f64) -> f64 {
    (x.abs() - by).max(0.0).copysign(x)
}

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

    /// The averaged iterate a restart needs when `count` iterates are averaged at its step
    /// (none before t_a, where there is nothing to restart the average from).
    fn averaged_for_restart(&self, count: u64) -> Option<&Iterate> {
        (count > 0).then(|| {
            self.averaged
                .as_ref()
                .expect("restarting an averaged learner at t >= t_a needs the averaged iterate")
        })
    }
}

/// One online learner: a step per example, the iterates on demand.
pub trait Learner {
    /// Step t ≥ 1 on example `i` (= `x`) with target y (already mapped by
    /// [`crate::loss::Loss::target`]) and sample weight s ([`crate::data::Examples::sample_weight`],
    /// the factor of its loss's gradient); returns the prediction p_t the step was taken at.
    fn step(&mut self, i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64;
    /// The iterates after `t` steps (O(n)), or an error when their n weights cannot be
    /// allocated.
    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError>;
    /// Continue from given iterates (O(n)): afterwards the learner's iterates after `t` steps
    /// are `snapshot`'s, and step t + 1 is taken from them exactly as if the learner had got
    /// there itself (same schedule, same running average). SGD ignores the averaged iterate;
    /// the averaged learners need it once t ≥ t_a. Restarting from the learner's own
    /// [`Learner::snapshot`] changes nothing but rounding; a data-parallel run restarts every
    /// rank from the ranks' average after each epoch ([`crate::dist::online`]).
    fn restart(&mut self, snapshot: &Snapshot, t: u64);
}

/// `visit(j, x_j)` for each stored entry of `x`, its value widened to f64.
#[inline]
fn for_each_entry(x: &Row<'_>, mut visit: impl FnMut(usize, f64)) {
    let indices = x.indices.iter().map(|&j| j as usize);
    match x.values {
        Values::Ones => indices.for_each(|j| visit(j, 1.0)),
        Values::F32(values) => (indices.zip(values)).for_each(|(j, &a)| visit(j, f64::from(a))),
        Values::F64(values) => (indices.zip(values)).for_each(|(j, &a)| visit(j, a)),
    }
}
