//! Batch solvers for J(w) = (λ/2)‖w‖² + (1/m) Σ ℓ(w·x_i, y_i) (MATH.md §7, seed `002_…`).
//!
//! * [`objective`] — J, its (sub)gradients and the prediction cache, evaluated in parallel and
//!   bit-identically for any thread count.
//! * [`lbfgs`] — L-BFGS with a strong-Wolfe search for smooth losses, and the same machinery with
//!   a weak-Wolfe search as the plain-BFGS baseline on non-smooth ones.
//! * [`owlqn`] — OWL-QN: L-BFGS for a smooth loss plus an L1 term λ₁‖w‖₁
//!   ([`Objective::with_l1`]), certified by its duality gap.
//! * [`sublbfgs`] — subLBFGS for hinge, absolute and quantile loss: direction finding over the
//!   subdifferential and the exact line search.
//! * [`subgd`] — the subgradient-descent baseline.
//! * [`cd`] — coordinate descent on a Newton model (newGLMNET) for a smooth loss with an L1
//!   term, an L2 term or both, certified by its duality gap: the solver for dense features.
//! * [`dcd`] — dual coordinate descent for hinge, squared hinge, absolute, quantile and the
//!   two ε-insensitive losses, certified by its duality gap: the solver for margin-dominated
//!   data, where subLBFGS is slow.
//! * [`tron`] — trust-region Newton with conjugate gradients for the smooth losses
//!   (liblinear's former primal solver), and [`newton`] — truncated Newton with a line
//!   search (liblinear's current one): superlinear near the optimum, where L-BFGS slows at
//!   small λ.
//! * [`line_search`] — the three line searches; [`kink_bracket`] — the exact one across ranks.
//!
//! Every solver runs unchanged across processes on an [`Objective::distributed`]: its sums over
//! rows go through a [`crate::dist::Reducer`], so every rank holds the same iterate.
//!
//! Every solver reports, per iteration, J(w) and `gap` = ‖g‖²/(2λ) for the smallest subgradient
//! g ∈ ∂J(w) it knows: since J is λ-strongly convex, J(w) − J* ≤ ‖g‖²/(2λ) for every such g, so
//! `gap ≤ tol·J` certifies a relative suboptimality below `tol`. That certificate is the main
//! stopping rule; the others are no relative decrease above `ftol` in an iteration, no descent
//! direction (subLBFGS, after clearing its memory once), and `max_iter`. Dual coordinate
//! descent certifies by its duality gap instead, which bounds J(w) − J* as well.

pub mod cd;
pub mod crammer_singer;
pub mod dcd;
#[cfg(test)]
mod distributed_tests;
mod hessian;
pub mod kink_bracket;
#[cfg(test)]
mod l1_tests;
pub mod lbfgs;
pub mod line_search;
pub mod multinomial;
pub mod newton;
pub mod objective;
pub mod owlqn;
pub mod subgd;
pub mod sublbfgs;
pub mod tron;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use objective::Objective;

use crate::data::Examples;
use crate::data::column_major::ColumnMajor;
use crate::memory::{self, AllocError};

/// The batch algorithms `sparselin train --algo` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// L-BFGS, strong Wolfe: smooth losses.
    Lbfgs,
    /// subLBFGS with exact line search: hinge, absolute and quantile loss.
    SubLbfgs,
    /// Subgradient descent, η_t = 1/(λt): any loss (baseline).
    SubGd,
    /// BFGS (limited memory) with the loss's own derivative and weak Wolfe: the naive baseline.
    Bfgs,
    /// Dual coordinate descent: hinge and squared hinge, one process.
    Dcd,
    /// Coordinate descent on a Newton model (newGLMNET): smooth losses, L1 and/or L2, one
    /// process.
    Cd,
    /// Trust-region Newton with conjugate gradients (liblinear's former primal solver): smooth
    /// losses.
    Tron,
    /// Truncated Newton with conjugate gradients and a line search (liblinear's current primal
    /// solver): smooth losses.
    Newton,
}

impl Algorithm {
    /// Whether the solver iterates on w (and so can start from a given w₀ and uses the L-BFGS
    /// memory where it has one); dual coordinate descent iterates on the dual variables.
    pub fn is_primal(self) -> bool {
        self != Algorithm::Dcd
    }

    /// Whether the solver keeps curvature pairs (the L-BFGS memory M).
    pub fn has_memory(self) -> bool {
        matches!(
            self,
            Algorithm::Lbfgs | Algorithm::SubLbfgs | Algorithm::Bfgs
        )
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Algorithm::Lbfgs => "lbfgs",
            Algorithm::SubLbfgs => "sublbfgs",
            Algorithm::SubGd => "subgd",
            Algorithm::Bfgs => "bfgs",
            Algorithm::Dcd => "dcd",
            Algorithm::Cd => "cd",
            Algorithm::Tron => "tron",
            Algorithm::Newton => "newton",
        })
    }
}

impl FromStr for Algorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "lbfgs" => Ok(Algorithm::Lbfgs),
            "sublbfgs" => Ok(Algorithm::SubLbfgs),
            "subgd" => Ok(Algorithm::SubGd),
            "bfgs" => Ok(Algorithm::Bfgs),
            "dcd" => Ok(Algorithm::Dcd),
            "cd" => Ok(Algorithm::Cd),
            "tron" => Ok(Algorithm::Tron),
            "newton" => Ok(Algorithm::Newton),
            _ => Err(format!(
                "unknown batch algorithm '{s}' (lbfgs, sublbfgs, subgd, bfgs, dcd, cd, tron, \
                 newton)"
            )),
        }
    }
}

/// Default L-BFGS memory M. subLBFGS on hinge loss needs more pairs than the usual 10: on the
/// first 100,000 rows of rcv1-like (λ = 1e-4) M = 20 reached 1e-4 relative suboptimality in 16
/// iterations against 25 with M = 10 (PERF.md "Batch solvers").
pub const DEFAULT_MEMORY: usize = 20;

/// Solver settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Iteration limit.
    pub max_iter: usize,
    /// Stop when the certificate gap ≤ tol·J(w) (relative suboptimality below tol).
    pub tol: f64,
    /// Stop when an iteration decreases J by at most ftol·J.
    pub ftol: f64,
    /// L-BFGS memory M.
    pub memory: usize,
    /// B₀ = scale·I; `None`: 1/λ for subLBFGS, ⟨s, y⟩/⟨y, y⟩ for L-BFGS/BFGS.
    pub b0_scale: Option<f64>,
    /// subLBFGS direction finding: rounds allowed (k_max).
    pub max_rounds: usize,
    /// subLBFGS direction finding: stop when its duality gap ε_i ≤ dir_eps·J(w).
    pub dir_eps: f64,
    /// subLBFGS direction finding: return the first descent direction instead of continuing
    /// until ε_i ≤ ε. The default: on reuters_grain (hinge, λ = 1e-2) it reached 1e-4 relative
    /// suboptimality in 1.3 s against 7.7 s with the ε rule (same progress per iteration, a
    /// fifth of the passes; PERF.md "Batch solvers"). The slides' toy problem needs the ε rule.
    pub first_descent: bool,
    /// Starting point (zeros when `None`); not for dcd, which starts from its dual variables.
    pub w0: Option<Vec<f64>>,
    /// dcd's starting dual variables α, one per row (a [`Solution::dual`] of the same rows),
    /// each clamped into this objective's box (zeros when `None`): along a path of λ or C the
    /// solution at one value is a start near the next. Only dcd has dual variables.
    pub dual0: Option<Vec<f64>>,
    /// cd: the objective's rows by column ([`ColumnMajor::of`] them), built once and shared by
    /// the solves on the same rows, as one-vs-rest's classes are (each would otherwise build
    /// and hold a copy of its own). `None`: cd builds its own. A copy whose shape differs from
    /// the rows' is refused.
    pub columns: Option<Arc<ColumnMajor>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_iter: 1000,
            tol: 1e-9,
            ftol: 1e-15,
            memory: DEFAULT_MEMORY,
            b0_scale: None,
            max_rounds: 50,
            dir_eps: 1e-8,
            first_descent: true,
            w0: None,
            dual0: None,
            columns: None,
        }
    }
}

impl Options {
    /// The starting point: `w0`, or zeros (allocated fallibly: `dim` comes from the data).
    fn start(&self, dim: usize) -> Result<Vec<f64>, AllocError> {
        match &self.w0 {
            Some(w) => {
                debug_assert_eq!(w.len(), dim, "checked by `solve`");
                memory::copied("weights", w)
            }
            None => memory::filled("weights", dim, 0.0),
        }
    }

    fn converged(&self, iteration: usize, value: f64, gap: f64) -> Option<Stop> {
        // An infinite J (or gap) certifies nothing, even if the product says it does.
        if gap <= self.tol * value.abs() && value.is_finite() && gap.is_finite() {
            Some(Stop::Converged)
        } else if iteration >= self.max_iter {
            Some(Stop::MaxIterations)
        } else {
            None
        }
    }

    fn stalled(&self, previous: f64, value: f64) -> bool {
        previous - value <= self.ftol * value.abs()
    }
}

/// Why a solver stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// gap ≤ tol·J.
    Converged,
    /// Direction finding found no descent direction in its rounds, even with the memory
    /// cleared. At an optimum that is what it finds; elsewhere (hinge loss on separable data
    /// at tiny λ, where each step only reaches the next kink) it is the method's limit, and
    /// the gap reported with the stop says how far from optimal w may still be.
    NoDescent,
    /// No step satisfies the line search's conditions.
    LineSearchFailed,
    /// An iteration decreased J by at most ftol·J (subLBFGS: several in a row).
    Stalled,
    /// `max_iter` reached.
    MaxIterations,
}

/// One line of progress: after `iteration` iterations.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Progress<'w> {
    /// Iterations done.
    pub iteration: usize,
    /// J(w) (for subgradient descent: the best seen).
    pub objective: f64,
    /// ‖g‖²/(2λ) ≥ J(w) − J* for the smallest known g ∈ ∂J(w).
    pub gap: f64,
    /// Wall-clock seconds since the solver started.
    pub seconds: f64,
    /// Passes over the data so far (one pass = one product X·v or Xᵀc; an update of Xᵀc
    /// that touches a fraction of the rows counts as that fraction).
    pub passes: f64,
    /// The iterate whose objective this is (as [`Solution::w`]: bias last when the
    /// objective has one), for a monitor that scores it on other data.
    pub w: &'w [f64],
}

impl<'w> Progress<'w> {
    fn new(iteration: usize, objective: f64, gap: f64, w: &'w [f64]) -> Self {
        Progress {
            iteration,
            objective,
            gap,
            seconds: 0.0,
            passes: 0.0,
            w,
        }
    }
}

/// Counts passes and time, and hands each [`Progress`] to the caller's callback. The time
/// the callback takes (printing, scoring test data) is not the solver's: it is left out of
/// [`Progress::seconds`].
pub struct Tracker<'a> {
    started: Instant,
    in_callback: Duration,
    passes: f64,
    callback: &'a mut dyn FnMut(&Progress<'_>),
}

impl<'a> Tracker<'a> {
    /// Start the clock.
    pub fn new(callback: &'a mut dyn FnMut(&Progress<'_>)) -> Self {
        Tracker {
            started: Instant::now(),
            in_callback: Duration::ZERO,
            passes: 0.0,
            callback,
        }
    }

    fn report(&mut self, mut progress: Progress<'_>) {
        let called = Instant::now();
        progress.seconds = (called - self.started - self.in_callback).as_secs_f64();
        progress.passes = self.passes;
        (self.callback)(&progress);
        self.in_callback += called.elapsed();
    }

    fn gap(&self, lambda: f64, g: &[f64]) -> f64 {
        certificate(lambda, g)
    }
}

/// ‖g‖²/(2λ), without the false 0 that ‖g‖² underflowing would give (a "converged" with no
/// certificate behind it): at a tiny λ the subgradient's entries are tiny too (λ = 1e-300 on
/// digits_3v5), and their squares vanish although the quotient is of the order of J. Then
/// g is scaled by its largest entry s first: ‖g/s‖² · s · (s/(2λ)).
fn certificate(lambda: f64, g: &[f64]) -> f64 {
    let squares = sparselin_kernels::dense::norm2(g);
    if squares >= f64::MIN_POSITIVE {
        return squares / (2.0 * lambda);
    }
    let (largest, scaled) = crate::metrics::rescaled_squares(g.iter());
    if largest == 0.0 {
        return 0.0;
    }
    scaled * largest * (largest / (2.0 * lambda))
}

/// A solver's result.
#[derive(Clone, Debug)]
pub struct Solution {
    /// The weights (with the bias last when the objective has one).
    pub w: Vec<f64>,
    /// J(w).
    pub objective: f64,
    /// Iterations done.
    pub iterations: usize,
    /// Why it stopped.
    pub stop: Stop,
    /// dcd: the dual variables α where it stopped, one per row (w(α) is not always `w`,
    /// the best iterate measured); `None` for the primal solvers.
    pub dual: Option<Vec<f64>>,
}

/// Why a solver cannot run on an objective.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SolveError {
    /// The algorithm needs another kind of loss.
    #[error("{algorithm} needs {needs} loss, not {loss}")]
    WrongLoss {
        /// The solver asked for.
        algorithm: Algorithm,
        /// The kind of loss it needs.
        needs: &'static str,
        /// The loss it was given.
        loss: crate::loss::Loss,
    },
    /// λ must be positive (the line searches and the certificate need strong convexity),
    /// finite and normal (≥ 2.2·10⁻³⁰⁸), so that B₀ = I/λ is finite; with an L1 term it may
    /// be 0.
    #[error("λ (lambda) must be a positive finite number of at least 2.2e-308, not {0:e}")]
    BadLambda(f64),
    /// No rank has a row: J would be 0/0.
    #[error("the training data has no rows")]
    NoRows,
    /// A setting outside its range (the message says which).
    #[error("{0}")]
    BadOption(String),
    /// The solver's per-feature vectors do not fit in this machine's memory.
    #[error(transparent)]
    Memory(#[from] AllocError),
    /// The column-major copy of the data coordinate descent reads cannot be built.
    #[error(transparent)]
    Columns(#[from] crate::data::column_major::TransposeError),
}

/// An error unless every setting of `options` that `algorithm` reads is in range for data of
/// `dim` features (bias included) and `rows` rows on this rank.
fn check(
    algorithm: Algorithm,
    options: &Options,
    dim: usize,
    rows: usize,
) -> Result<(), SolveError> {
    let bad = |message: String| Err(SolveError::BadOption(message));
    if !(options.tol >= 0.0 && options.tol.is_finite()) {
        return bad(format!(
            "the tolerance must be a finite number ≥ 0, not {}",
            options.tol
        ));
    }
    if algorithm.has_memory() && options.memory == 0 {
        return bad("the L-BFGS memory must hold at least one pair".into());
    }
    if let Some(w) = options.w0.as_ref().filter(|w| w.len() != dim) {
        return bad(format!(
            "the starting point has {} weights for {dim} features",
            w.len()
        ));
    }
    match &options.dual0 {
        Some(_) if algorithm != Algorithm::Dcd => bad(format!(
            "{algorithm} iterates on the weights: a start of dual variables is dcd's"
        )),
        Some(alpha) if alpha.len() != rows => bad(format!(
            "the dual start has {} variables for {rows} rows",
            alpha.len()
        )),
        Some(alpha) => match alpha.iter().position(|a| !a.is_finite()) {
            Some(i) => bad(format!(
                "the dual start's variable of row {} is {}, not a finite number",
                i + 1,
                alpha[i]
            )),
            None => Ok(()),
        },
        None => Ok(()),
    }
}

/// Run `algorithm` on `objective`; `progress` sees every iteration.
pub fn solve<E: Examples>(
    algorithm: Algorithm,
    objective: &Objective<'_, E>,
    options: &Options,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<Solution, SolveError> {
    let (loss, lambda, l1) = (objective.loss(), objective.lambda(), objective.l1());
    if !(l1 >= 0.0 && l1.is_finite()) {
        return Err(SolveError::BadOption(format!(
            "λ₁ must be a non-negative finite number, not {l1:e}"
        )));
    }
    // With an L1 term λ may be 0 (L1 alone): the duality gap certifies without strong
    // convexity.
    let strongly_convex = lambda > 0.0 && lambda.is_normal();
    if !(strongly_convex || (l1 > 0.0 && lambda == 0.0)) {
        return Err(SolveError::BadLambda(lambda));
    }
    if objective.total_rows() == 0 {
        return Err(SolveError::NoRows);
    }
    check(algorithm, options, objective.dim(), objective.n_rows())?;
    let mut tracker = Tracker::new(progress);
    if l1 > 0.0 && algorithm != Algorithm::Cd {
        // Of the others, OWL-QN alone solves an objective with an L1 term, run by lbfgs.
        return match algorithm {
            Algorithm::Lbfgs if loss.is_smooth() => {
                Ok(owlqn::solve(objective, options, &mut tracker)?)
            }
            Algorithm::Lbfgs => Err(SolveError::WrongLoss {
                algorithm,
                needs: "a smooth",
                loss,
            }),
            _ => Err(SolveError::BadOption(format!(
                "{algorithm} has no L1 term: an L1 penalty needs lbfgs (OWL-QN) or cd and a \
                 smooth loss"
            ))),
        };
    }
    match algorithm {
        Algorithm::Lbfgs if loss.is_smooth() => Ok(lbfgs::solve(
            objective,
            options,
            lbfgs::Wolfe::Strong,
            &mut tracker,
        )?),
        Algorithm::Lbfgs => Err(SolveError::WrongLoss {
            algorithm,
            needs: "a smooth",
            loss,
        }),
        Algorithm::SubLbfgs if line_search::kink_slopes(loss.into(), 1.0, 1.0).is_some() => {
            Ok(sublbfgs::solve(objective, options, &mut tracker)?)
        }
        Algorithm::SubLbfgs => Err(SolveError::WrongLoss {
            algorithm,
            needs: "hinge, absolute or quantile",
            loss,
        }),
        Algorithm::SubGd => Ok(subgd::solve(objective, options, &mut tracker)?),
        Algorithm::Bfgs => Ok(lbfgs::solve(
            objective,
            options,
            lbfgs::Wolfe::Weak,
            &mut tracker,
        )?),
        Algorithm::Dcd if !dcd::supports(loss) => Err(SolveError::WrongLoss {
            algorithm,
            needs: "hinge, squared-hinge, absolute, quantile, epsilon-insensitive or \
                    squared-epsilon-insensitive",
            loss,
        }),
        Algorithm::Dcd if objective.reducer().size() > 1 => Err(SolveError::BadOption(
            "dcd runs in one process: its coordinate steps follow one another".into(),
        )),
        Algorithm::Dcd if options.w0.is_some() => Err(SolveError::BadOption(
            "dcd starts from dual variables (zeros, or a dual start), not from a point w₀".into(),
        )),
        Algorithm::Dcd => dcd::solve(objective, options, &mut tracker),
        Algorithm::Cd if !loss.is_smooth() => Err(SolveError::WrongLoss {
            algorithm,
            needs: "a smooth",
            loss,
        }),
        Algorithm::Cd if objective.reducer().size() > 1 => Err(SolveError::BadOption(
            "cd runs in one process: its coordinate steps follow one another".into(),
        )),
        Algorithm::Cd => cd::solve(objective, options, &mut tracker),
        Algorithm::Tron if loss.is_smooth() => Ok(tron::solve(objective, options, &mut tracker)?),
        Algorithm::Tron => Err(SolveError::WrongLoss {
            algorithm,
            needs: "a smooth",
            loss,
        }),
        Algorithm::Newton if loss.is_smooth() => {
            Ok(newton::solve(objective, options, &mut tracker)?)
        }
        Algorithm::Newton => Err(SolveError::WrongLoss {
            algorithm,
            needs: "a smooth",
            loss,
        }),
    }
}

/// Panics unless `rows` rows have a class each in `labels`, below `classes` (at least two),
/// and `row_weights`, if given, a weight each: what a joint fit of the classes
/// ([`multinomial`], [`crammer_singer`]) is built from.
fn assert_class_rows(rows: usize, labels: &[usize], classes: usize, row_weights: Option<&[f64]>) {
    assert!(classes >= 2, "at least two classes");
    assert_eq!(labels.len(), rows, "one label per row");
    assert!(
        labels.iter().all(|&y| y < classes),
        "labels below the classes"
    );
    if let Some(weights) = row_weights {
        assert_eq!(weights.len(), rows, "one weight per row");
    }
}

#[cfg(test)]
mod tests {
    use super::{Options, Stop, certificate};

    #[test]
    fn an_infinite_objective_or_gap_certifies_nothing() {
        let options = Options::default();
        assert_eq!(options.converged(0, f64::INFINITY, f64::INFINITY), None);
        assert_eq!(options.converged(0, 1.0, f64::NAN), None);
        assert_eq!(options.converged(0, 1.0, 0.0), Some(Stop::Converged));
    }

    #[test]
    fn the_certificate_survives_squares_that_underflow() {
        let g = [3e-300, -4e-300];
        let expected = 25e-300 * (1e-300 / 2e-300);
        let gap = certificate(1e-300, &g);
        assert!((gap - expected).abs() <= 1e-12 * expected, "{gap:e}");
        assert_eq!(certificate(0.5, &[3.0, 4.0]), 25.0);
        assert_eq!(certificate(1e-300, &[0.0, 0.0]), 0.0);
    }
}
