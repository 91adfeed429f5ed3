//! Dual coordinate descent (Hsieh, Chang, Lin, Keerthi & Sundararajan, ICML 2008) for hinge,
//! squared-hinge, absolute, quantile, ε-insensitive and squared ε-insensitive loss: the batch
//! solver for margin-dominated problems, where many rows sit on their kink at the optimum and
//! subLBFGS must land them there one line search at a time (PERF.md "Batch solvers").
//!
//! With C = 1/(λm), J(w) = λ·P(w) for P(w) = ½‖w‖² + C Σ_i ℓ(w·x_i, y_i) (the bias a feature of
//! value 1, as in the other solvers), whose dual is
//!
//! ```text
//! min over L_i ≤ α_i ≤ U_i of F(α) = ½‖w(α)‖² + ½ Σ_i D_i α_i² − Σ_i t_i α_i,
//!                              w(α) = Σ_i α_i σ_i x_i
//! ```
//!
//! For the classification losses σ_i = y_i and t_i = 1, with [L_i, U_i] = [0, C_i], D_i = 0 for
//! hinge loss and [0, ∞), D_i = 1/(2C_i) for squared hinge; for the regression losses, whose
//! kinks sit around p = y_i, σ_i = 1 and t_i = y_i, with D_i = 0 and [−C_i, C_i] for absolute
//! loss, [−(1 − τ)C_i, τC_i] for quantile loss (ℓ is then the largest of α(y − p) over the box,
//! as hinge loss is of α(1 − yp) over [0, 1]), and [−C_i, C_i] with a term ε|α_i| added to F
//! for the ε-insensitive loss (liblinear's `-s 13`), and (−∞, ∞), D_i = 1/(2C_i) with the
//! same ε|α_i| for the squared ε-insensitive loss (`-s 12`). C_i = s_i·c_{y_i}·C with sample
//! weights s_i and class weights c_y (liblinear's `-W` and `-wi`; all 1 unless given). A row
//! of sample weight 0 has no dual variable (α_i = 0). A step minimizes F over one α_i in closed
//! form (a sparse dot and a sparse axpy: O(k); with ε|α_i|, the smooth step shrunk towards 0
//! by ε/Q̄_ii before it is clamped to the box); each epoch visits the
//! rows in a fresh seeded random order; a row whose α_i sits at a bound with the gradient
//! pushing it outward is left out of the following epochs (shrinking) until the rest has
//! converged, when every row is checked again.
//!
//! The certificate is the duality gap: by weak duality P(w(α)) + F(α) ≥ P(w(α)) − min P ≥ 0,
//! so `gap` = λ(P(w) + F(α)) = J(w) + λF(α) bounds J(w) − J*, the promise every solver's gap
//! makes (`batch` module docs), and it reaches 0 at the optimum whatever the kinks. It costs a
//! product X·w, so it is measured after every three passes' worth of steps, or when an epoch
//! over every row has met the paper's stopping rule (the spread of the projected gradients
//! below a threshold, which then shrinks tenfold while the gap is above the tolerance).

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use sparselin_kernels::{dense, sparse};

use super::objective::{Objective, RowWeights, Unweighted};
use super::{Options, Progress, Solution, SolveError, Stop, Tracker};
use crate::data::Examples;
use crate::data::Row;
use crate::loss::Loss;
use crate::memory::{self, AllocError};
use crate::online::lookahead::prefetch_rows_ahead;
use crate::online::sampling::bounded;

/// Seed of the visiting order: the same data and settings give the same model, bit for bit.
const ORDER_SEED: u64 = 0x6463_645f_6f72_6465;

/// The first spread of projected gradients (PG_max − PG_min over an epoch, in the dual
/// gradient's units, where 1 is a whole margin) at which an epoch over every row counts as
/// converged: liblinear's default tolerance for this solver.
const FIRST_SPREAD: f64 = 0.1;

/// Below this spread the coordinate steps are down to rounding: a gap still above the
/// tolerance then stops the solver as stalled.
const LAST_SPREAD: f64 = 1e-15;

/// Steps smaller than this projected gradient are not taken (they would change α_i by
/// rounding only).
const NEGLIGIBLE_GRADIENT: f64 = 1e-12;

/// Rows are fetched ahead of their steps, as the online learners fetch theirs, when the data
/// hold more non-zeros than this (8–12 MB of rows): on spamassassin (1.57 M non-zeros) that cut
/// the time to 1e-4 by 11–20%, while on reuters_grain and mnist_3v5 (0.2 M, cache-resident)
/// it cost up to 31%, 14% in the median cell (PERF.md "Batch solvers").
const PREFETCH_ABOVE_NNZ: u64 = 1 << 20;

/// Passes' worth of coordinate steps between two measurements of the gap. A measurement is a
/// product X·w, a dot per row, where a pass of steps takes a dot per row and an axpy per row
/// that moves: measured after every pass, every other pass over the data was a measurement.
const PASSES_PER_MEASUREMENT: usize = 3;

/// Whether this solver handles `loss`: hinge, squared hinge, absolute, quantile and
/// ε-insensitive.
pub fn supports(loss: Loss) -> bool {
    dual_box(loss, 1.0).is_some()
}

/// The box of α_i for a row whose C is `c`, and the diagonal of the dual of `loss` there:
/// (L, U, D). `None` for a loss this solver does not handle.
fn dual_box(loss: Loss, c: f64) -> Option<Bounds> {
    let (lower, upper, diagonal) = match loss {
        Loss::Hinge => (0.0, c, 0.0),
        Loss::SquaredHinge => (0.0, f64::INFINITY, 0.5 / c),
        Loss::Absolute => (-c, c, 0.0),
        Loss::Quantile(tau) => (-(1.0 - tau) * c, tau * c, 0.0),
        Loss::EpsilonInsensitive(_) => (-c, c, 0.0),
        Loss::SquaredEpsilonInsensitive(_) => (f64::NEG_INFINITY, f64::INFINITY, 0.5 / c),
        _ => return None,
    };
    Some(Bounds {
        lower,
        upper,
        diagonal,
    })
}

/// The bounds of one dual variable and the diagonal term of F along it.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    lower: f64,
    upper: f64,
    diagonal: f64,
}

/// The index of the class of target y in [`Dual::boxes`]: 0 for +1, 1 for −1.
fn class(y: f64) -> usize {
    usize::from(y <= 0.0)
}

/// The dual variables, the weights w(α) they define, and what each step needs.
struct Dual<'o, 'a, E: Examples + 'a, W> {
    objective: &'o Objective<'a, E>,
    /// s_i: the rows' sample weights, or [`Unweighted`].
    sample_weights: W,
    /// n: the rows' features (w has one more entry, the bias, when the objective has one).
    features: usize,
    alpha: Vec<f64>,
    w: Vec<f64>,
    /// Q̄_ii = ‖x_i‖² (+1 with the bias) + D_i: the curvature of F along α_i.
    curvature: Vec<f64>,
    /// The boxes of rows of sample weight 1 of the classes +1 and −1 (the same unless the
    /// classes are weighted).
    boxes: [Bounds; 2],
    /// The loss is a classification loss: σ_i = y_i and t_i = 1, else σ_i = 1 and t_i = y_i.
    classification: bool,
    /// ε of the ε-insensitive loss (F's term ε Σ|α_i|); 0 for the other losses.
    epsilon: f64,
}

impl<E: Examples, W: RowWeights> Dual<'_, '_, E, W> {
    /// [L_i, U_i] and D_i: its class's box, for C_i = s_i·c_{y_i}·C (s_i > 0 for a row that
    /// steps).
    #[inline]
    fn dual_box(&self, i: usize) -> Bounds {
        let unit = self.boxes[class(self.objective.targets()[i])];
        let s = self.sample_weights.at(i);
        Bounds {
            lower: unit.lower * s,
            upper: unit.upper * s,
            diagonal: unit.diagonal / s,
        }
    }

    /// (σ_i, t_i): the sign of row i in w(α) and its coefficient in F's linear term.
    #[inline]
    fn sign_and_target(&self, i: usize) -> (f64, f64) {
        let y = self.objective.targets()[i];
        match self.classification {
            true => (y, 1.0),
            false => (1.0, y),
        }
    }

    /// σ_i (w·x_i) − t_i + D_i α_i: the derivative of F along α_i, `row` being x_i.
    fn gradient(&self, i: usize, row: &Row<'_>) -> f64 {
        let n = self.features;
        let mut score = sparse::dot(&self.w[..n], row.indices, row.values);
        if self.objective.has_bias() {
            score += self.w[n];
        }
        let (sign, target) = self.sign_and_target(i);
        sign * score - target + self.dual_box(i).diagonal * self.alpha[i]
    }

    /// The derivative of F along α_i where `gradient` is that of its smooth part: with the
    /// term ε|α_i|, the side's slope added, and at α_i = 0 the one of least magnitude of the
    /// subdifferential [g − ε, g + ε] (0 when it holds 0).
    #[inline]
    fn slope(&self, i: usize, gradient: f64) -> f64 {
        let epsilon = self.epsilon;
        match self.alpha[i] {
            a if a > 0.0 => gradient + epsilon,
            a if a < 0.0 => gradient - epsilon,
            _ if gradient + epsilon < 0.0 => gradient + epsilon,
            _ if gradient - epsilon > 0.0 => gradient - epsilon,
            _ => 0.0,
        }
    }

    /// α_i moved to the minimizer of F along it, w kept equal to w(α); `gradient` is the
    /// derivative of F's smooth part.
    fn step(&mut self, i: usize, row: &Row<'_>, gradient: f64) {
        let old = self.alpha[i];
        let q = self.curvature[i];
        // Q̄_ii = 0 only for an empty row of a loss with D_i = 0 without a bias: F is linear
        // along α_i, so α_i goes to the bound it falls towards (the quotient is ±∞, clamped).
        let mut unbounded = old - gradient / q;
        if self.epsilon > 0.0 {
            // The minimizer of ½Q̄(a − α)² + g(a − α) + ε|a|: the smooth one shrunk by ε/Q̄.
            let shrink = self.epsilon / q;
            unbounded = unbounded.signum() * (unbounded.abs() - shrink).max(0.0);
        }
        let bounds = self.dual_box(i);
        let new = unbounded.clamp(bounds.lower, bounds.upper);
        self.alpha[i] = new;
        self.add_row(row, (new - old) * self.sign_and_target(i).0);
    }

    /// w += c·x_i for `row` x_i (its bias feature too).
    fn add_row(&mut self, row: &Row<'_>, c: f64) {
        let n = self.features;
        sparse::axpy(c, row.indices, row.values, &mut self.w[..n]);
        if self.objective.has_bias() {
            self.w[n] += c;
        }
    }

    /// α set to `start` clamped into the boxes for the rows of `active` (the others stay at
    /// 0), and w to w(α): one axpy per row that starts away from 0.
    fn start_from(&mut self, start: &[f64], active: &[usize]) {
        let rows = self.objective.rows();
        for &i in active {
            let bounds = self.dual_box(i);
            let alpha = start[i].clamp(bounds.lower, bounds.upper);
            if alpha != 0.0 {
                self.alpha[i] = alpha;
                self.add_row(&rows.row(i), alpha * self.sign_and_target(i).0);
            }
        }
    }

    /// J(w) and the duality gap J(w) + λF(α).
    fn measure(&self) -> (f64, f64) {
        let objective = self.objective;
        let ww = dense::norm2(&self.w);
        let value =
            0.5 * objective.lambda() * ww + objective.mean_loss(&objective.product(&self.w));
        let squares = if self.boxes.iter().any(|b| b.diagonal > 0.0) {
            (0..self.alpha.len())
                .filter(|&i| self.alpha[i] != 0.0)
                .map(|i| self.dual_box(i).diagonal * self.alpha[i] * self.alpha[i])
                .sum::<f64>()
        } else {
            0.0
        };
        let linear = match self.classification {
            true => self.alpha.iter().sum::<f64>(),
            false => (self.alpha.iter())
                .zip(self.objective.targets())
                .map(|(a, y)| a * y)
                .sum::<f64>(),
        };
        let absolute = match self.epsilon > 0.0 {
            true => self.epsilon * self.alpha.iter().map(|a| a.abs()).sum::<f64>(),
            false => 0.0,
        };
        let dual = 0.5 * ww + 0.5 * squares - linear + absolute;
        (value, value + objective.lambda() * dual)
    }
}

/// Dual coordinate descent from α = 0 (so w = 0), or from [`Options::dual0`] clamped into the
/// boxes (a row of weight 0 keeps α_i = 0). The objective must be local (one rank) and
/// its loss one that [`supports`] (`super::solve` checks both); a row whose ‖x_i‖² overflows is
/// refused, since its α_i could never move.
///
/// An iteration is a pass's worth of coordinate steps (m of them: an epoch over every row, or
/// several over the rows shrinking has kept), so that `max_iter` bounds the work whatever the
/// shrinking. The primal objective does not fall monotonically along the dual steps, so the
/// solver keeps the best w it has measured and reports that: its gap is J(w_best) minus the
/// highest lower bound J − gap any measurement gave, itself a certificate.
pub fn solve<E: Examples>(
    objective: &Objective<'_, E>,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, SolveError> {
    // Compiled once per case, so that the unweighted steps need no weight.
    match objective.sample_weights() {
        Some(s) => solve_weighted(objective, s, options, tracker),
        None => solve_weighted(objective, Unweighted, options, tracker),
    }
}

/// [`solve`] with the rows' sample weights `sample_weights`.
fn solve_weighted<E: Examples>(
    objective: &Objective<'_, E>,
    sample_weights: impl RowWeights,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, SolveError> {
    let m = objective.n_rows();
    let c = 1.0 / (objective.lambda() * objective.total_rows() as f64);
    let weighted = objective.weighted_loss();
    let boxes = [1.0, -1.0].map(|y| {
        dual_box(weighted.loss(), c * weighted.weight(y)).expect("checked by batch::solve")
    });
    if boxes.iter().any(|b| !b.diagonal.is_finite()) {
        return Err(SolveError::BadOption(format!(
            "λ = {:e} over {} rows puts the squared hinge's dual term λm/2 beyond f64's range: \
             dcd cannot step (use a smaller λ)",
            objective.lambda(),
            objective.total_rows()
        )));
    }
    let rows = objective.rows();
    let bias = f64::from(u8::from(objective.has_bias()));
    // The rows that step: those of positive sample weight.
    let mut active: Vec<usize> = (0..m).filter(|&i| sample_weights.at(i) > 0.0).collect();
    let live = active.len();
    let mut dual = Dual {
        objective,
        sample_weights,
        features: rows.n_features(),
        alpha: memory::filled("dual variables", m, 0.0)?,
        w: memory::filled("weights", objective.dim(), 0.0)?,
        curvature: memory::filled("row norms", m, 0.0)?,
        boxes,
        classification: weighted.loss().is_classification(),
        epsilon: match weighted.loss() {
            Loss::EpsilonInsensitive(epsilon) | Loss::SquaredEpsilonInsensitive(epsilon) => epsilon,
            _ => 0.0,
        },
    };
    for &i in &active {
        let (norm, diagonal) = (rows.row(i).norm2(), dual.dual_box(i).diagonal);
        if !diagonal.is_finite() {
            return Err(SolveError::BadOption(format!(
                "row {} weighs {:e}: its squared hinge's dual term is beyond f64's range, so \
                 dcd cannot step along it (give it weight 0 or a larger one)",
                i + 1,
                sample_weights.at(i)
            )));
        }
        let q = norm + bias + diagonal;
        dual.curvature[i] = q;
        if !q.is_finite() {
            return Err(SolveError::BadOption(format!(
                "row {} has a squared norm beyond f64's range: dcd cannot step along it \
                 (scale the features)",
                i + 1
            )));
        }
    }
    if let Some(start) = &options.dual0 {
        dual.start_from(start, &active);
    }
    let mut active_len = live;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(ORDER_SEED);
    // Rows at a bound whose gradient passes these thresholds of the previous epoch are left
    // out (the paper's shrinking); infinite: none is.
    let (mut shrink_above, mut shrink_below) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut spread = FIRST_SPREAD;
    let prefetch = objective.nnz() > PREFETCH_ABOVE_NNZ;
    let mut best = Best::new(&dual)?;
    tracker.passes += 1.0;
    let mut steps = 0;
    let stop = loop {
        let iteration = steps / live;
        let gap = best.gap();
        tracker.report(Progress::new(iteration, best.value, gap, &best.w));
        if let Some(stop) = options.converged(iteration, best.value, gap) {
            break stop;
        }
        if spread < LAST_SPREAD {
            break Stop::Stalled;
        }
        // Epochs until a few passes' worth of steps are done or an epoch that ends with every
        // row kept meets the spread; then the gap is measured.
        let budget = options.max_iter.saturating_mul(live);
        let until = budget.min(steps + PASSES_PER_MEASUREMENT * live);
        let mut met_spread = false;
        while steps < until {
            for k in 0..active_len.saturating_sub(1) {
                let j = k + bounded(&mut rng, active_len - k);
                active.swap(k, j);
            }
            steps += active_len;
            // The range always holds 0: every projected gradient is 0 at the optimum, and
            // equal non-zero ones (rows that push α the same way) have no spread at all.
            let (mut largest, mut smallest) = (0.0_f64, 0.0_f64);
            let mut s = 0;
            while s < active_len {
                let i = active[s];
                if prefetch {
                    // A shrink may swap another row into a slot asked for: a hint wasted.
                    prefetch_rows_ahead(rows, |ahead| {
                        active[..active_len].get(s + 1 + ahead).copied()
                    });
                }
                let row = rows.row(i);
                let gradient = dual.gradient(i, &row);
                let slope = match dual.epsilon > 0.0 {
                    true => dual.slope(i, gradient),
                    false => gradient,
                };
                let bounds = dual.dual_box(i);
                let projected = if dual.alpha[i] == bounds.lower {
                    if slope > shrink_above {
                        active_len -= 1;
                        active.swap(s, active_len);
                        continue;
                    }
                    slope.min(0.0)
                } else if dual.alpha[i] == bounds.upper {
                    if slope < shrink_below {
                        active_len -= 1;
                        active.swap(s, active_len);
                        continue;
                    }
                    slope.max(0.0)
                } else {
                    slope
                };
                // A step this small changes α_i by rounding only: none is taken, and the row
                // counts as settled, so that the spread can close once only such rows remain.
                if projected.abs() > NEGLIGIBLE_GRADIENT {
                    largest = largest.max(projected);
                    smallest = smallest.min(projected);
                    dual.step(i, &row, gradient);
                }
                s += 1;
            }
            if largest - smallest <= spread {
                if active_len == live {
                    met_spread = true;
                    break;
                }
                // Converged on the rows kept: every row is checked again.
                active_len = live;
                (shrink_above, shrink_below) = (f64::INFINITY, f64::NEG_INFINITY);
            } else {
                shrink_above = if largest <= 0.0 {
                    f64::INFINITY
                } else {
                    largest
                };
                shrink_below = if smallest >= 0.0 {
                    f64::NEG_INFINITY
                } else {
                    smallest
                };
            }
        }
        tracker.passes += (steps - best.steps) as f64 / m as f64 + 1.0;
        best.measure(&dual, steps);
        if met_spread && best.gap() > options.tol * best.value.abs() {
            // The spread asked for is met and the gap is not: ask for a tenth of it, every row
            // kept for the next epoch.
            spread *= 0.1;
            (shrink_above, shrink_below) = (f64::INFINITY, f64::NEG_INFINITY);
        }
    };
    Ok(Solution {
        objective: best.value,
        w: best.w,
        iterations: steps / live,
        stop,
        dual: Some(dual.alpha),
    })
}

/// The best iterate measured, and the highest lower bound on J* seen.
struct Best {
    w: Vec<f64>,
    value: f64,
    /// max over the measurements of J(w) − (J(w) + λF(α)).
    lower: f64,
    /// Coordinate steps taken when last measured.
    steps: usize,
}

impl Best {
    /// The first measurement, of w = 0.
    fn new<E: Examples, W: RowWeights>(dual: &Dual<'_, '_, E, W>) -> Result<Best, AllocError> {
        let mut best = Best {
            w: memory::filled("weights", dual.w.len(), 0.0)?,
            value: f64::INFINITY,
            lower: f64::NEG_INFINITY,
            steps: 0,
        };
        best.measure(dual, 0);
        Ok(best)
    }

    /// Measures w(α): keeps it if its J is the lowest yet, and its lower bound if the highest.
    fn measure<E: Examples, W: RowWeights>(&mut self, dual: &Dual<'_, '_, E, W>, steps: usize) {
        let (value, gap) = dual.measure();
        self.lower = self.lower.max(value - gap);
        // Not `<=`: a NaN J never replaces a finite one.
        if value < self.value || self.value.is_infinite() {
            self.value = value;
            self.w.copy_from_slice(&dual.w);
        }
        self.steps = steps;
    }

    /// J(w_best) − the highest lower bound: ≥ J(w_best) − J*. Rounding can take it below 0
    /// at the optimum, where it is 0; a NaN stays NaN (no certificate).
    fn gap(&self) -> f64 {
        let gap = self.value - self.lower;
        if gap < 0.0 { 0.0 } else { gap }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{self, Algorithm, SolveError};
    use crate::data::{CsrMatrix, ValueVec};

    /// One example x = (2), y = +1, no bias: J(w) = (λ/2)w² + max(0, 1 − 2w) is least at the
    /// kink w* = 1/2 (for λ ≤ 8), J* = λ/8, where α* = 1/4 lies inside the box [0, 1/λ]: one
    /// coordinate step lands on it and closes the duality gap.
    #[test]
    fn one_step_lands_on_a_kinked_optimum_and_closes_the_gap() {
        let data =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![2.0]), 1).unwrap();
        let lambda = 0.5;
        let objective = Objective::new(&data, Loss::Hinge, lambda, false);
        let mut gaps = Vec::new();
        let solution = batch::solve(Algorithm::Dcd, &objective, &Options::default(), &mut |p| {
            gaps.push(p.gap)
        })
        .unwrap();
        assert_eq!(solution.w, [0.5]);
        assert_eq!(solution.objective, lambda / 8.0);
        assert_eq!(solution.stop, Stop::Converged);
        // At α = 0 the gap is J(0) − 0 = 1; after the step, 0.
        assert_eq!(gaps, [1.0, 0.0]);
    }

    /// Two copies of x = (1), labelled +1 and −1.
    fn opposite_copies() -> CsrMatrix {
        CsrMatrix::new(
            vec![1.0, -1.0],
            vec![0, 1, 2],
            vec![0, 0],
            ValueVec::F64(vec![1.0, 1.0]),
            1,
        )
        .unwrap()
    }

    /// Two copies of x = (1) with opposite labels, no bias: J(w) = (λ/2)w² + 1 for |w| ≤ 1, so
    /// J* = 1 at w* = 0 with both α at the upper bound. The coordinate steps push both α up by
    /// alternating, growing amounts, every projected gradient of an epoch equal (−2, −4, …):
    /// a spread of 0 between them is no convergence, and the solver must not stop there.
    #[test]
    fn equal_projected_gradients_are_not_convergence() {
        let data = opposite_copies();
        let objective = Objective::new(&data, Loss::Hinge, 1e-3, false);
        let options = Options {
            tol: 1e-9,
            ..Options::default()
        };
        let solution = batch::solve(Algorithm::Dcd, &objective, &options, &mut |_| {}).unwrap();
        assert_eq!(solution.stop, Stop::Converged);
        assert!(
            (solution.objective - 1.0).abs() <= 1e-9,
            "{}",
            solution.objective
        );
    }

    /// Squared hinge on the same example: J(w) = (λ/2)w² + (1 − 2w)² for w < 1/2, least at
    /// w* = 4/(λ + 8); the dual has no upper bound and D = 1/(2C) = λ/2.
    #[test]
    fn squared_hinge_reaches_its_closed_form_optimum() {
        let data =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![2.0]), 1).unwrap();
        let lambda = 0.5;
        let objective = Objective::new(&data, Loss::SquaredHinge, lambda, false);
        let solution =
            batch::solve(Algorithm::Dcd, &objective, &Options::default(), &mut |_| {}).unwrap();
        let w = 4.0 / (lambda + 8.0);
        let optimum = 0.5 * lambda * w * w + (1.0 - 2.0 * w).powi(2);
        assert!((solution.w[0] - w).abs() <= 1e-15, "{:?}", solution.w);
        assert!((solution.objective - optimum).abs() <= 1e-15 * optimum);
        assert_eq!(solution.stop, Stop::Converged);
    }

    /// dcd on `data` at `lambda` from `dual0`.
    fn dcd(data: &CsrMatrix, loss: Loss, lambda: f64, dual0: Option<Vec<f64>>) -> Solution {
        let objective = Objective::new(data, loss, lambda, true);
        let options = Options {
            dual0,
            ..Options::default()
        };
        batch::solve(Algorithm::Dcd, &objective, &options, &mut |_| {}).unwrap()
    }

    /// A dual start, from the solution at twice the λ, from the optimum's own α, or from far
    /// outside the box (clamped into it), reaches the optimum the start from zero reaches;
    /// the optimum's own α in hardly any iterations.
    #[test]
    fn a_dual_start_reaches_the_same_optimum() {
        let data = crate::batch::objective::tests::planted(400, 20, 3);
        let lambda = 1e-3;
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            let cold = dcd(&data, loss, lambda, None);
            let near = dcd(&data, loss, 2.0 * lambda, None).dual;
            let outside = Some(vec![1e6; 400]);
            for start in [cold.dual.clone(), near, outside] {
                let warm = dcd(&data, loss, lambda, start.clone());
                assert_eq!(warm.stop, Stop::Converged, "{loss}");
                let difference = (warm.objective - cold.objective).abs();
                assert!(
                    difference <= 2e-9 * cold.objective,
                    "{loss}: {difference:e}"
                );
                if start == cold.dual {
                    assert!(10 * warm.iterations <= cold.iterations, "{loss}: {warm:?}");
                }
            }
        }
    }

    /// Along a path of λ from large to small, each solve started from the dual of the one
    /// before reaches each optimum in fewer iterations in all than solves from zero.
    #[test]
    fn a_path_of_dual_starts_takes_fewer_iterations() {
        let data = crate::batch::objective::tests::planted(400, 20, 3);
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            let (mut cold_iterations, mut warm_iterations) = (0, 0);
            let mut start = None;
            for e in 2..=9 {
                let lambda = 0.5_f64.powi(e);
                let cold = dcd(&data, loss, lambda, None);
                let warm = dcd(&data, loss, lambda, start);
                let difference = (warm.objective - cold.objective).abs();
                assert!(
                    difference <= 2e-9 * cold.objective,
                    "{loss}: {difference:e}"
                );
                cold_iterations += cold.iterations;
                warm_iterations += warm.iterations;
                start = warm.dual;
            }
            assert!(
                warm_iterations < cold_iterations,
                "{loss}: {warm_iterations} ≥ {cold_iterations}"
            );
        }
    }

    /// A dual start is dcd's, of one finite variable per row.
    #[test]
    fn bad_dual_starts_are_refused() {
        let data = opposite_copies();
        let objective = Objective::new(&data, Loss::Hinge, 0.5, false);
        let squared = Objective::new(&data, Loss::SquaredHinge, 0.5, false);
        let cases = [
            (Algorithm::Dcd, vec![0.5], "1 variables for 2 rows"),
            (Algorithm::Dcd, vec![0.5, f64::NAN], "row 2 is NaN"),
            (
                Algorithm::SubLbfgs,
                vec![0.5, 0.5],
                "sublbfgs iterates on the weights",
            ),
        ];
        for (algorithm, dual0, message) in cases {
            let options = Options {
                dual0: Some(dual0),
                ..Options::default()
            };
            let refused = batch::solve(algorithm, &objective, &options, &mut |_| {});
            assert!(
                matches!(&refused, Err(SolveError::BadOption(m)) if m.contains(message)),
                "{refused:?}"
            );
        }
        let options = Options {
            dual0: Some(vec![0.5, 0.5]),
            ..Options::default()
        };
        let refused = batch::solve(Algorithm::Lbfgs, &squared, &options, &mut |_| {});
        assert!(
            matches!(refused, Err(SolveError::BadOption(_))),
            "{refused:?}"
        );
    }

    /// A row whose ‖x‖² overflows would keep its α at 0 forever (its curvature is infinite),
    /// and J(w) is then infinite: refused, where it used to report "converged" with J = ∞.
    #[test]
    fn rows_whose_squared_norm_overflows_are_refused() {
        let data = CsrMatrix::new(
            vec![1.0, -1.0],
            vec![0, 2, 3],
            vec![0, 1, 1],
            ValueVec::F64(vec![1e160, 1.0, 3.0]),
            2,
        )
        .unwrap();
        let objective = Objective::new(&data, Loss::SquaredHinge, 1.0, true);
        let refused = batch::solve(Algorithm::Dcd, &objective, &Options::default(), &mut |_| {});
        assert!(
            matches!(&refused, Err(SolveError::BadOption(m)) if m.contains("row 1")),
            "{refused:?}"
        );
    }

    /// A sample weight so small that 1/(2C_i) overflows is named, with its row; rows of
    /// weight 0 have no dual variable and are no trouble.
    #[test]
    fn a_dual_term_beyond_range_is_blamed_on_its_rows_weight() {
        let data = opposite_copies();
        for (weights, refused) in [([1.0, 1e-320], true), ([1.0, 0.0], false)] {
            let rows = crate::data::SampleWeighted::new(&data, &weights).unwrap();
            let objective = Objective::new(&rows, Loss::SquaredHinge, 1e-3, false);
            let result = batch::solve(Algorithm::Dcd, &objective, &Options::default(), &mut |_| {});
            match result {
                Err(SolveError::BadOption(m)) if refused => {
                    assert!(m.contains("row 2 weighs 1e-320"), "{m}");
                }
                Ok(solution) if !refused => {
                    // Row 1 alone: x = 1, y = +1, J = (λ/2)w² + (1 − w)²/2 at its least.
                    assert_eq!(solution.stop, Stop::Converged);
                    assert!(solution.objective.is_finite() && solution.w[0] > 0.9);
                }
                other => panic!("{weights:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_dual_term_beyond_range_is_blamed_on_lambda() {
        // λm = 2·f64::MAX overflows; the rows' norms are 1.
        let data = opposite_copies();
        let objective = Objective::new(&data, Loss::SquaredHinge, f64::MAX, false);
        let error =
            batch::solve(Algorithm::Dcd, &objective, &Options::default(), &mut |_| {}).unwrap_err();
        assert!(
            matches!(&error, SolveError::BadOption(m) if m.contains("λ = 1.7976931348623157e308")),
            "{error}"
        );
    }

    #[test]
    fn other_losses_and_starting_points_are_refused() {
        let data =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![2.0]), 1).unwrap();
        let log = Objective::new(&data, Loss::Log, 0.5, false);
        let refused = batch::solve(Algorithm::Dcd, &log, &Options::default(), &mut |_| {});
        assert!(matches!(refused, Err(SolveError::WrongLoss { .. })));
        let hinge = Objective::new(&data, Loss::Hinge, 0.5, false);
        let warm = Options {
            w0: Some(vec![0.25]),
            ..Options::default()
        };
        let refused = batch::solve(Algorithm::Dcd, &hinge, &warm, &mut |_| {});
        assert!(
            matches!(&refused, Err(SolveError::BadOption(m)) if m.contains("not from a point w₀")),
            "{refused:?}"
        );
    }
}
