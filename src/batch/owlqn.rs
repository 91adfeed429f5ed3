//! OWL-QN (Andrew & Gao, "Scalable training of L1-regularized log-linear models", ICML 2007):
//! L-BFGS for J(w) = (smooth loss and L2 part)(w) + λ₁‖w‖₁, the solver of `--l1` with a smooth
//! loss (L1-regularized logistic regression as liblinear's `-s 6`, the lasso, the elastic net).
//!
//! Within one orthant the L1 term is linear, so the quasi-Newton model of the smooth part serves
//! there: the direction is −B times the pseudo-gradient (the subgradient of least norm), with
//! the entries that would not descend set to 0; the line search backtracks along the ray
//! projected onto the orthant the step starts in (an entry that would cross 0 stays at 0), so
//! that weights reach exactly 0 and stay there while their pseudo-gradient is 0. The curvature
//! pairs are the smooth part's. Each iteration reports the duality gap J(w) − D against the
//! best dual bound D seen ([`Objective::dual_bound`]), which certifies J(w) − J* whether λ is
//! 0 or not.

use sparselin_kernels::dense;

use super::lbfgs::Memory;
use super::line_search::C1;
use super::objective::Objective;
use super::{Options, Progress, Solution, Stop, Tracker};
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// The tolerance `sparselin train --l1` certifies by default, where others certify 1e-9: the
/// duality gap stops falling short of 1e-9·J in double precision when λ = 0 (the dual point
/// scales with the largest |∇_j|/λ₁, whose excess over 1 at the weights off 0 the solver
/// cannot drive below the square root of J's rounding): 3e-9·J to 4e-8·J on reuters_grain and
/// diabetes, 6.3e-7·J on a binary split of mc10, where J itself agrees with liblinear's and
/// scikit-learn's optima to 1e-8.
pub const DEFAULT_TOL: f64 = 1e-6;

/// Consecutive iterations that neither decrease J by more than ftol·J nor lower the gap before
/// OWL-QN stops as stalled. Near the minimum J stops moving in double precision while the dual
/// points, which rest on the gradient, still improve: on a binary split of mc10 (100,000 rows,
/// λ₁ = 1e-5, J = 0.279) the gap fell from 8.5e-7 to 3.6e-7 over the 19 iterations after the
/// last that changed J's first 12 digits.
pub(super) const STALL_PATIENCE: usize = 10;

/// The direction is taken within the free coordinates when they are at most 1/this of all.
const REDUCED_BELOW: usize = 2;

/// Backtracking steps allowed per iteration (each halves the step).
const MAX_EVALS: usize = 60;

/// Minimize `objective` (which has an L1 term and a smooth loss) from `options`' start.
/// Stops on the duality gap ≤ tol·J, on ten iterations in a row without a
/// relative decrease of J above `ftol` or a lower gap, on a failed line search (after one
/// retry with the memory cleared), or after `max_iter`.
pub fn solve<E: Examples>(
    objective: &Objective<'_, E>,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, AllocError> {
    let l1 = objective.l1();
    let mut w = options.start(objective.dim())?;
    let mut p = objective.product(&w);
    let mut value = objective.value(&w, &p);
    let mut gradient = objective.gradient(&w, &p)?;
    tracker.passes += 2.0;
    let mut memory = Memory::new(objective.dim(), options.memory, options.b0_scale);
    let mut derivatives = memory::filled("loss derivatives", objective.n_rows(), 0.0)?;
    // The best dual value seen: each iterate's dual point bounds J* from below, and the
    // largest bound certifies the most (the dual points of iterates near the minimum
    // scatter, where a weight at 0 has |∇_j| just above λ₁).
    let mut dual = f64::NEG_INFINITY;
    let mut gap_at = |w: &[f64], p: &[f64], gradient: &[f64], value: f64| {
        dual = dual.max(objective.dual_bound(w, p, gradient));
        value - dual
    };
    let mut iteration = 0;
    let mut stalls = 0;
    let mut gap = f64::INFINITY;
    let stop = loop {
        let previous_gap = gap;
        gap = gap_at(&w, &p, &gradient, value);
        if gap < previous_gap {
            stalls = 0;
        }
        tracker.report(Progress::new(iteration, value, gap, &w));
        if let Some(stop) = options.converged(iteration, value, gap) {
            break stop;
        }
        if stalls >= STALL_PATIENCE {
            break Stop::Stalled;
        }
        let pseudo = pseudo_gradient(&w, &gradient, l1)?;
        let Some(step) = descend(
            objective,
            &w,
            &p,
            value,
            &pseudo,
            &mut memory,
            &mut derivatives,
            tracker,
        )?
        else {
            break Stop::LineSearchFailed;
        };
        // The derivatives the search kept at the point it accepted, its last trial.
        let new_gradient = objective.subgradient(&step.w, &derivatives)?;
        tracker.passes += 1.0;
        memory.push(|s, y| {
            s.copy_from_slice(&step.w);
            dense::axpby(-1.0, &w, 1.0, s);
            y.copy_from_slice(&new_gradient);
            dense::axpby(-1.0, &gradient, 1.0, y);
        })?;
        iteration += 1;
        let previous = value;
        (w, p, value, gradient) = (step.w, step.p, step.value, new_gradient);
        stalls = if options.stalled(previous, value) {
            stalls + 1
        } else {
            0
        };
    };
    Ok(Solution {
        objective: value,
        w,
        iterations: iteration,
        stop,
        dual: None,
    })
}

/// The subgradient of least norm of the smooth part plus λ₁‖w‖₁, entry by entry
/// ([`least_subgradient`]).
fn pseudo_gradient(w: &[f64], g: &[f64], l1: f64) -> Result<Vec<f64>, AllocError> {
    let mut pseudo = memory::copied("pseudo-gradient", g)?;
    for (pg, &w) in pseudo.iter_mut().zip(w) {
        *pg = least_subgradient(w, *pg, l1);
    }
    Ok(pseudo)
}

/// The entry of least magnitude of the subdifferential of (smooth part) + λ₁|w| at a weight
/// w where the smooth part's derivative is g: g + λ₁·sign(w) off 0; at w = 0, the one-sided
/// derivative that descends (g + λ₁ if that is negative, g − λ₁ if that is positive), else 0.
/// Its magnitude is how far w violates the optimality conditions.
pub(super) fn least_subgradient(w: f64, g: f64, l1: f64) -> f64 {
    if w > 0.0 {
        g + l1
    } else if w < 0.0 {
        g - l1
    } else if g + l1 < 0.0 {
        g + l1
    } else if g - l1 > 0.0 {
        g - l1
    } else {
        0.0
    }
}

/// A projected search's direction d, from w, along the pseudo-gradient's orthants, from η₀.
#[derive(Clone, Copy)]
struct Search<'a> {
    pseudo: &'a [f64],
    d: &'a [f64],
    eta0: f64,
}

/// An accepted point: w, its predictions Xw and J(w).
struct Point {
    w: Vec<f64>,
    p: Vec<f64>,
    value: f64,
}

/// One projected quasi-Newton step; on failure, clears a non-empty memory and retries along
/// the steepest pseudo-descent direction. `None` when that fails too (or when the
/// pseudo-gradient is 0, where no direction descends). The accepted point's weighted loss
/// derivatives are left in `derivatives` (one per row).
#[allow(clippy::too_many_arguments)]
fn descend<E: Examples>(
    objective: &Objective<'_, E>,
    w: &[f64],
    p: &[f64],
    value: f64,
    pseudo: &[f64],
    memory: &mut Memory,
    derivatives: &mut [f64],
    tracker: &mut Tracker<'_>,
) -> Result<Option<Point>, AllocError> {
    // The coordinates a step may move: off 0, or at 0 with a descending side. Where they are
    // few, the quasi-Newton direction is taken within them (no other entry of d survives
    // the sign constraint anyway).
    let free: Vec<usize> = (0..w.len())
        .filter(|&j| w[j] != 0.0 || pseudo[j] != 0.0)
        .collect();
    let reduced = free.len() <= w.len() / REDUCED_BELOW;
    loop {
        let mut d = if reduced {
            memory.apply_within(pseudo, &free)?
        } else {
            memory.apply(pseudo)?
        };
        // d = −B·pseudo, keeping only the entries that descend (of the sign of −pseudo_j).
        for (d, &pg) in d.iter_mut().zip(pseudo) {
            *d = if *d * pg > 0.0 { -*d } else { 0.0 };
        }
        let slope = dense::dot(pseudo, &d);
        let found = if slope < 0.0 {
            let eta0 = if memory.is_empty() {
                (1.0 / dense::norm2(&d).sqrt()).min(1.0)
            } else {
                1.0
            };
            let search = Search {
                pseudo,
                d: &d,
                eta0,
            };
            backtrack(objective, w, p, value, search, derivatives, tracker)?
        } else {
            None
        };
        match found {
            Some(point) => return Ok(Some(point)),
            None if !memory.is_empty() => memory.clear(),
            None => return Ok(None),
        }
    }
}

/// Backtracking from η₀, halving, along w + ηd projected onto the orthant of w (of −pseudo
/// where w_j = 0), until J decreases by at least c₁⟨pseudo, w' − w⟩ (Armijo on the projected
/// step). A trial that projects no entry has predictions p + η·Xd, X·d computed at the first
/// such trial; one that does needs its own product (so a first trial that projects and is
/// accepted costs one pass, not two). Each trial's weighted loss derivatives are left in
/// `derivatives`, so that they are the accepted point's on success.
fn backtrack<E: Examples>(
    objective: &Objective<'_, E>,
    w: &[f64],
    p: &[f64],
    value: f64,
    search: Search<'_>,
    derivatives: &mut [f64],
    tracker: &mut Tracker<'_>,
) -> Result<Option<Point>, AllocError> {
    let Search { pseudo, d, eta0 } = search;
    let mut xd: Option<Vec<f64>> = None;
    let mut trial = memory::copied("weights", w)?;
    let mut eta = eta0;
    for _ in 0..MAX_EVALS {
        let mut projected = false;
        let mut decrease = 0.0;
        for (j, t) in trial.iter_mut().enumerate() {
            let orthant = if w[j] != 0.0 { w[j] } else { -pseudo[j] };
            let moved = w[j] + eta * d[j];
            *t = if moved * orthant > 0.0 {
                moved
            } else {
                projected |= moved != 0.0;
                0.0
            };
            decrease += pseudo[j] * (*t - w[j]);
        }
        let trial_p = if projected {
            tracker.passes += 1.0;
            objective.product(&trial)
        } else {
            let xd = xd.get_or_insert_with(|| {
                tracker.passes += 1.0;
                objective.product(d)
            });
            let mut trial_p = p.to_vec();
            dense::axpby(eta, xd, 1.0, &mut trial_p);
            trial_p
        };
        let trial_value = objective.value_keeping_derivatives(&trial, &trial_p, derivatives);
        if trial_value <= value + C1 * decrease {
            return Ok(Some(Point {
                w: trial,
                p: trial_p,
                value: trial_value,
            }));
        }
        eta *= 0.5;
    }
    Ok(None)
}
