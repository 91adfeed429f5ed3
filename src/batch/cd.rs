//! Coordinate descent on a Newton model of the loss (newGLMNET: Yuan, Ho & Lin, "An improved
//! GLMNET for L1-regularized logistic regression", JMLR 2012, the solver of liblinear's
//! `-s 6`) for a smooth loss with an L1 term, an L2 term or both: L1-regularized logistic
//! regression, the lasso, the elastic net. The solver for dense or correlated features, where
//! OWL-QN's quasi-Newton model within one orthant crawls (PERF.md "L1-regularized logistic
//! regression").
//!
//! Each iteration models the smooth part L(w) = (1/m) Σ_i a_i ℓ(x_i·w) + (λ/2)‖w‖² (a_i the
//! row's sample and class weights) by its second-order expansion at w, with the loss's
//! curvature h_i = a_i ℓ''(x_i·w)/m ([`Loss::second_derivative`](crate::loss::Loss)):
//!
//! ```text
//! q(d) = ∇L(w)·d + ½ dᵀ(Xᵀ diag(h) X + λI)d + λ₁‖w + d‖₁
//! ```
//!
//! It minimizes q approximately by coordinate descent over the features in a seeded random
//! order, each step a soft-thresholded Newton step along one column (a sparse dot and a sparse
//! axpy over the column's rows, [`ColumnMajor`], keeping X·d up to date), and then takes the
//! largest step 2⁻ᵏ along d that lowers J by at least σ = 0.01 of what the model predicts
//! (Tseng & Yun's sufficient decrease). Features at 0 whose gradient lies well inside
//! [−λ₁, λ₁] stay out of an iteration's model (shrinking, as in the paper), and the inner
//! descent's stopping rule tightens fourfold whenever a single sweep met it.
//!
//! Every iteration computes J from the predictions Xw (moved along by each step, and
//! recomputed exactly for the solution's J) and the gradient of the model's coordinates. The
//! whole gradient, which reconsiders every coordinate and gives a new dual point, is computed
//! once the work since the last amounts to a pass over the data, or after a step that lowered
//! J by at most tol·J; each iteration reports the Fenchel duality gap against the best dual
//! bound seen ([`Objective::dual_bound`]), the certificate OWL-QN gives too. Sums over a
//! column and over fixed chunks of rows are computed in parallel, the coordinate steps one
//! after another, so the model is the same for any thread count, bit for bit.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use sparselin_kernels::{Values, dense, sparse};

use super::objective::{CHUNK_ROWS, Objective, fixed_sum};
use super::owlqn::{STALL_PATIENCE, least_subgradient};
use super::{Options, Progress, Solution, SolveError, Stop, Tracker};
use crate::data::Examples;
use crate::data::column_major::ColumnMajor;
use crate::loss::Loss;
use crate::memory;
use crate::online::sampling::shuffle;

/// Seed of the order of the coordinate steps: the same data and settings give the same model.
const ORDER_SEED: u64 = 0x6364_5f6e_6577_746e;

/// Sweeps of the inner descent allowed per iteration (liblinear's limit).
const MAX_SWEEPS: usize = 1000;

/// Halvings of the step the line search tries before it gives up.
const MAX_HALVINGS: usize = 20;

/// σ of the sufficient-decrease condition J(w + td) − J(w) ≤ σ·t·Δ.
const SUFFICIENT_DECREASE: f64 = 0.01;

/// Added to every diagonal entry of the model's curvature, so that a feature no row curves
/// (every row on a flat or linear piece of a hinge-like loss, λ = 0) still has a finite step.
const CURVATURE_FLOOR: f64 = 1e-12;

/// The largest change of one weight in one coordinate step (where the curvature is the floor
/// alone, the Newton step is unbounded; the line search then sizes the step).
const MAX_STEP: f64 = 10.0;

/// Coordinate steps smaller than this are not taken.
const NEGLIGIBLE_STEP: f64 = 1e-12;

/// Columns per parallel task of the gradient.
const COLUMN_CHUNK: usize = 256;

/// Minimize `objective` (a smooth loss, λ > 0 or an L1 term) from `options`' start. Stops on
/// the duality gap ≤ tol·J, on ten iterations in a row that neither lower J by more than
/// ftol·J nor the gap, on a line search that finds no decrease, or after `max_iter`.
pub fn solve<E: Examples>(
    objective: &Objective<'_, E>,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, SolveError> {
    let built;
    let columns = match &options.columns {
        Some(shared) => {
            check_shape(shared, objective.rows())?;
            shared
        }
        None => {
            built = ColumnMajor::of(objective.rows())?;
            &built
        }
    };
    let mut rows = RowTerms::new(objective);
    let mut model = Model::new(objective, columns, options.start(objective.dim())?)?;
    let mut order = Xoshiro256PlusPlus::seed_from_u64(ORDER_SEED);
    let mut p = objective.product(&model.w);
    tracker.passes += 2.0;
    // A pass: as many entries read as the data holds (the bias column's included).
    let pass = (columns.nnz() + usize::from(objective.has_bias()) * objective.n_rows()).max(1);
    let mut dual = f64::NEG_INFINITY;
    let (mut gap, mut stalls, mut iteration) = (f64::INFINITY, 0, 0);
    let mut previous = f64::INFINITY;
    // Entries read since the whole gradient was last computed.
    let mut since_whole = usize::MAX;
    let stop = loop {
        let value = objective.value(&model.w, &p);
        rows.expand_at(&p);
        // The whole gradient, and with it a new dual bound and every coordinate reconsidered,
        // once the work since the last costs a pass, or when the last step changed J by no
        // more than the tolerance (a sign of the end, to be certified); the active
        // coordinates' alone otherwise.
        let whole = since_whole >= pass || previous - value <= options.tol * value.abs();
        if whole {
            since_whole = 0;
        }
        let mut read = model.gradient(columns, &rows, whole);
        if whole {
            dual = dual.max(objective.dual_bound(&model.w, &p, &model.gradient));
        }
        let previous_gap = gap;
        gap = value - dual;
        stalls = if options.stalled(previous, value) && gap >= previous_gap {
            stalls + 1
        } else {
            0
        };
        previous = value;
        tracker.passes += read as f64 / pass as f64;
        tracker.report(Progress::new(iteration, value, gap, &model.w));
        if let Some(stop) = options.converged(iteration, value, gap) {
            break stop;
        }
        if stalls >= STALL_PATIENCE {
            break Stop::Stalled;
        }
        model.choose_active(whole);
        read = model.curvature(columns, &rows);
        read += model.descend(columns, &mut rows, &mut order);
        since_whole = since_whole.saturating_add(read);
        tracker.passes += read as f64 / pass as f64;
        let Some(step) = model.search_line(&rows, &p) else {
            break Stop::LineSearchFailed;
        };
        // Xw moves by t·X·d; the rounding this accumulates is removed by the exact product
        // the solution's J is computed from.
        p.par_iter_mut()
            .zip(&rows.xd)
            .for_each(|(p, xd)| *p += step * xd);
        iteration += 1;
    };
    let p = objective.product(&model.w);
    tracker.passes += 1.0;
    let value = objective.value(&model.w, &p);
    Ok(Solution {
        objective: value,
        w: model.w,
        iterations: iteration,
        stop,
        dual: None,
    })
}

/// An error unless `columns` has the shape of `rows`: as many rows, columns and entries.
fn check_shape(columns: &ColumnMajor, rows: &impl Examples) -> Result<(), SolveError> {
    let shape = (columns.n_rows(), columns.n_columns(), columns.nnz() as u64);
    let expected = (rows.n_rows(), rows.n_features(), rows.nnz());
    if shape == expected {
        return Ok(());
    }
    Err(SolveError::BadOption(format!(
        "the column-major copy given holds {} rows, {} columns and {} entries, the data {} \
         rows, {} columns and {} entries",
        shape.0, shape.1, shape.2, expected.0, expected.1, expected.2
    )))
}

/// Per-row terms of the expansion at the current w, each scaled by the row's weight a_i/m.
struct RowTerms {
    loss: Loss,
    /// a_i/m: sample weight times class weight over the row count.
    scale: Vec<f64>,
    targets: Vec<f64>,
    /// a_i·ℓ'(p_i)/m.
    slope: Vec<f64>,
    /// a_i·ℓ''(p_i)/m.
    curvature: Vec<f64>,
    /// X·d of the model's direction d, kept up to date by the coordinate steps.
    xd: Vec<f64>,
}

impl RowTerms {
    fn new<E: Examples>(objective: &Objective<'_, E>) -> RowTerms {
        let weighted = objective.weighted_loss();
        let m = objective.total_rows() as f64;
        let targets = objective.targets().to_vec();
        let scale = targets
            .iter()
            .enumerate()
            .map(|(i, &y)| {
                let s = objective.sample_weights().map_or(1.0, |s| s[i]);
                s * weighted.weight(y) / m
            })
            .collect();
        let rows = targets.len();
        RowTerms {
            loss: weighted.loss(),
            scale,
            targets,
            slope: vec![0.0; rows],
            curvature: vec![0.0; rows],
            xd: vec![0.0; rows],
        }
    }

    /// The slopes and curvatures at predictions `p`.
    fn expand_at(&mut self, p: &[f64]) {
        let (loss, scale, y) = (self.loss, &self.scale, &self.targets);
        self.slope
            .par_chunks_mut(CHUNK_ROWS)
            .zip(self.curvature.par_chunks_mut(CHUNK_ROWS))
            .enumerate()
            .for_each(|(c, (slopes, curvatures))| {
                let rows = c * CHUNK_ROWS..c * CHUNK_ROWS + slopes.len();
                let (p, y, scale) = (&p[rows.clone()], &y[rows.clone()], &scale[rows]);
                loss.derivatives(p, y, slopes);
                loss.second_derivatives(p, y, curvatures);
                for ((g, h), &a) in slopes.iter_mut().zip(curvatures).zip(scale) {
                    *g *= a;
                    *h *= a;
                }
            });
    }

    /// J's loss part at p + t·X·d minus at p: Σ_i (a_i/m)(ℓ(p_i + t·(Xd)_i) − ℓ(p_i)), each
    /// row's difference taken before the sum, so that small changes survive the rounding of
    /// the sum.
    fn loss_change(&self, p: &[f64], t: f64) -> f64 {
        let (loss, scale, y, xd) = (self.loss, &self.scale, &self.targets, &self.xd);
        fixed_sum(p.len(), |rows| {
            // The rows the step moves, their losses after and before it a chunk at a time.
            let moved: Vec<usize> = rows.filter(|&i| scale[i] != 0.0 && xd[i] != 0.0).collect();
            let targets: Vec<f64> = moved.iter().map(|&i| y[i]).collect();
            let losses = |q: Vec<f64>| {
                let mut losses = vec![0.0; q.len()];
                loss.values(&q, &targets, &mut losses);
                losses
            };
            let after = losses(moved.iter().map(|&i| p[i] + t * xd[i]).collect());
            let before = losses(moved.iter().map(|&i| p[i]).collect());
            (moved.iter().zip(after.iter().zip(&before)))
                .map(|(&i, (after, before))| scale[i] * (after - before))
                .sum::<f64>()
        })
    }
}

/// The iterate, the expansion of J's smooth part at it, and the model's minimizer so far.
struct Model {
    lambda: f64,
    l1: f64,
    /// n: the features; w has one more entry when the objective has a bias.
    features: usize,
    /// m, the unit of the shrinking margins.
    total_rows: usize,
    w: Vec<f64>,
    /// ∇L(w): λw + (1/m)Xᵀ(a·ℓ').
    gradient: Vec<f64>,
    /// The diagonal of the model's curvature: Σ_i h_i x_ij² + λ + ν.
    diagonal: Vec<f64>,
    /// h_i·x_ij for the entries of the model's columns, parallel to the columns' entries
    /// ([`ColumnMajor::range`]).
    curved_values: Vec<f64>,
    /// w + d, d the model's direction.
    target: Vec<f64>,
    /// The coordinates of this iteration's model (those not shrunk).
    active: Vec<usize>,
    /// Σ over the active coordinates of the violation of the optimality conditions of the
    /// first iteration: the unit of the inner descent's stopping rule.
    first_violation: Option<f64>,
    /// The largest violation of the previous iteration (∞ before the first), which sets how
    /// far inside [−λ₁, λ₁] a gradient must lie for its coordinate to be shrunk.
    widest_violation: f64,
    /// The inner descent stops once its violations sum to this times `first_violation`.
    inner_tolerance: f64,
}

impl Model {
    fn new<E: Examples>(
        objective: &Objective<'_, E>,
        columns: &ColumnMajor,
        w: Vec<f64>,
    ) -> Result<Model, SolveError> {
        let dim = w.len();
        Ok(Model {
            lambda: objective.lambda(),
            l1: objective.l1(),
            features: columns.n_columns(),
            total_rows: objective.total_rows(),
            gradient: memory::filled("gradient", dim, 0.0)?,
            diagonal: memory::filled("curvature diagonal", dim, 0.0)?,
            curved_values: columns.zeroed_entries()?,
            target: memory::copied("model minimizer", &w)?,
            active: memory::reserved("active coordinates", dim)?,
            w,
            first_violation: None,
            widest_violation: f64::INFINITY,
            inner_tolerance: 1.0,
        })
    }

    /// ∇L(w) from the rows' slopes, a sparse dot per column in parallel: of every coordinate
    /// (`whole`) or of the active ones. Returns the entries read.
    fn gradient(&mut self, columns: &ColumnMajor, rows: &RowTerms, whole: bool) -> usize {
        let (n, lambda, w, slope) = (self.features, self.lambda, &self.w, &rows.slope);
        let of = |j: usize| {
            let loss_part = if j < n {
                let column = columns.column(j);
                sparse::dot(slope, column.rows, column.values)
            } else {
                total(slope)
            };
            loss_part + lambda * w[j]
        };
        let entries = |j: usize| {
            if j < n {
                columns.range(j).len()
            } else {
                slope.len()
            }
        };
        if whole {
            self.gradient
                .par_chunks_mut(COLUMN_CHUNK)
                .enumerate()
                .for_each(|(c, chunk)| {
                    for (k, g) in chunk.iter_mut().enumerate() {
                        *g = of(c * COLUMN_CHUNK + k);
                    }
                });
            (0..self.gradient.len()).map(entries).sum()
        } else {
            let found: Vec<f64> = self.active.par_iter().map(|&j| of(j)).collect();
            for (&j, g) in self.active.iter().zip(found) {
                self.gradient[j] = g;
            }
            self.active.iter().map(|&j| entries(j)).sum()
        }
    }

    /// The coordinates of this iteration's model, in increasing order: of all (`whole`) or of
    /// the last iteration's, those not at 0 with a gradient inside [−λ₁ + v/m, λ₁ − v/m], v
    /// the last iteration's largest violation (none is left out in the first iteration, nor
    /// without an L1 term). Also records the violations.
    fn choose_active(&mut self, whole: bool) {
        let margin = self.widest_violation / self.total_rows as f64;
        let (w, gradient, l1) = (&self.w, &self.gradient, self.l1);
        let keep = |j: usize| !(w[j] == 0.0 && gradient[j].abs() < l1 - margin);
        if whole {
            self.active.clear();
            self.active.extend((0..w.len()).filter(|&j| keep(j)));
        } else {
            self.active.retain(|&j| keep(j));
            self.active.sort_unstable();
        }
        let violations = self
            .active
            .iter()
            .map(|&j| violation(w[j], gradient[j], l1));
        let (sum, widest) = violations.fold((0.0, 0.0f64), |(s, m), v| (s + v, m.max(v)));
        self.first_violation.get_or_insert(sum);
        self.widest_violation = widest;
    }

    /// The curvature of the active columns: h_i·x_ij for their entries and the diagonal, a
    /// column per task. Returns the entries read.
    fn curvature(&mut self, columns: &ColumnMajor, rows: &RowTerms) -> usize {
        let h = &rows.curvature;
        let n = self.features;
        let floor = self.lambda + CURVATURE_FLOOR;
        // The active columns' parts of `curved_values` (`active` is in increasing order).
        let mut parts = Vec::with_capacity(self.active.len());
        let (mut rest, mut offset) = (&mut self.curved_values[..], 0);
        for &j in self.active.iter().take_while(|&&j| j < n) {
            let range = columns.range(j);
            let (mine, tail) = rest[range.start - offset..].split_at_mut(range.len());
            parts.push((j, mine));
            (rest, offset) = (tail, range.end);
        }
        let diagonals: Vec<f64> = parts
            .par_iter_mut()
            .map(|(j, curved)| {
                let column = columns.column(*j);
                let rows = column.rows.as_slice();
                floor
                    + match column.values {
                        Values::Ones => curve(curved, rows, h, std::iter::repeat(1.0)),
                        Values::F32(x) => curve(curved, rows, h, x.iter().map(|&x| f64::from(x))),
                        Values::F64(x) => curve(curved, rows, h, x.iter().copied()),
                    }
            })
            .collect();
        let mut read = 0;
        for ((j, curved), diagonal) in parts.iter().zip(diagonals) {
            self.diagonal[*j] = diagonal;
            read += curved.len();
        }
        if self.active.last() == Some(&n) {
            self.diagonal[n] = total(h) + floor;
            read += h.len();
        }
        read
    }

    /// Coordinate descent on the model over the active coordinates, from d = 0: sets
    /// `target` = w + d and `rows.xd` = X·d. Returns the entries read (a step along a column
    /// reads its entries twice).
    fn descend(
        &mut self,
        columns: &ColumnMajor,
        rows: &mut RowTerms,
        order: &mut Xoshiro256PlusPlus,
    ) -> usize {
        self.target.copy_from_slice(&self.w);
        rows.xd.fill(0.0);
        let first = self.first_violation.unwrap_or(0.0);
        let m = self.total_rows as f64;
        let (n, l1) = (self.features, self.l1);
        let mut considered = self.active.len();
        let mut widest_before = f64::INFINITY;
        let mut entries = 0usize;
        let mut sweeps = 0;
        while sweeps < MAX_SWEEPS {
            shuffle(order, &mut self.active[..considered]);
            let (mut sum, mut widest) = (0.0, 0.0f64);
            let mut k = 0;
            while k < considered {
                let j = self.active[k];
                let curved_dot = if j < n {
                    let column = columns.column(j);
                    entries += column.rows.len();
                    let curved = &self.curved_values[columns.range(j)];
                    sparse::dot(&rows.xd, column.rows, Values::F64(curved))
                } else {
                    entries += rows.xd.len();
                    dense::dot(&rows.xd, &rows.curvature)
                };
                let at = self.target[j];
                let g = self.gradient[j]
                    + curved_dot
                    + (self.lambda + CURVATURE_FLOOR) * (at - self.w[j]);
                if at == 0.0 && g.abs() < l1 - widest_before / m {
                    considered -= 1;
                    self.active.swap(k, considered);
                    continue;
                }
                let v = violation(at, g, l1);
                sum += v;
                widest = widest.max(v);
                k += 1;
                let step = newton_step(at, g, self.diagonal[j], l1);
                if step.abs() < NEGLIGIBLE_STEP {
                    continue;
                }
                let step = step.clamp(-MAX_STEP, MAX_STEP);
                self.target[j] += step;
                if j < n {
                    let column = columns.column(j);
                    entries += column.rows.len();
                    sparse::axpy(step, column.rows, column.values, &mut rows.xd);
                } else {
                    entries += rows.xd.len();
                    rows.xd.iter_mut().for_each(|x| *x += step);
                }
            }
            sweeps += 1;
            if sum <= self.inner_tolerance * first {
                if considered == self.active.len() {
                    break;
                }
                // Met on the shrunk set: check every active coordinate again.
                considered = self.active.len();
                widest_before = f64::INFINITY;
            } else {
                widest_before = widest;
            }
        }
        if sweeps == 1 {
            self.inner_tolerance *= 0.25;
        }
        entries
    }

    /// The largest step t = 2⁻ᵏ along d = target − w with J(w + td) − J(w) ≤ σ·t·Δ, Δ the
    /// model's predicted decrease ∇L·d + λ₁(‖w + d‖₁ − ‖w‖₁); moves w there and returns t.
    /// `None` if none of [`MAX_HALVINGS`] halvings decreases J enough.
    fn search_line(&mut self, rows: &RowTerms, p: &[f64]) -> Option<f64> {
        let (lambda, l1) = (self.lambda, self.l1);
        let predicted = self
            .active
            .iter()
            .map(|&j| {
                let (w, to) = (self.w[j], self.target[j]);
                self.gradient[j] * (to - w) + l1 * (to.abs() - w.abs())
            })
            .sum::<f64>();
        let mut t = 1.0;
        for _ in 0..=MAX_HALVINGS {
            let penalty_change = self
                .active
                .iter()
                .map(|&j| {
                    let w = self.w[j];
                    let moved = w + t * (self.target[j] - w);
                    0.5 * lambda * (moved * moved - w * w) + l1 * (moved.abs() - w.abs())
                })
                .sum::<f64>();
            let change = rows.loss_change(p, t) + penalty_change;
            if change <= SUFFICIENT_DECREASE * t * predicted {
                for &j in &self.active {
                    let w = self.w[j];
                    self.w[j] = if t == 1.0 {
                        self.target[j]
                    } else {
                        w + t * (self.target[j] - w)
                    };
                }
                return Some(t);
            }
            t *= 0.5;
        }
        None
    }
}

/// h_i·x_ij into `curved` for a column's rows i and values x (one loop per storage of the
/// values); returns Σ h_i·x_ij², the column's diagonal entry of the curvature.
fn curve(curved: &mut [f64], rows: &[u32], h: &[f64], values: impl Iterator<Item = f64>) -> f64 {
    let mut diagonal = 0.0;
    for ((c, &i), x) in curved.iter_mut().zip(rows).zip(values) {
        *c = h[i as usize] * x;
        diagonal += *c * x;
    }
    diagonal
}

/// Σ v_i over fixed chunks of rows: the bias column's sums, the same for any thread count.
fn total(v: &[f64]) -> f64 {
    fixed_sum(v.len(), |rows| v[rows].iter().sum())
}

/// How far a weight w, where the smooth part's derivative is g, violates the optimality
/// conditions of J = smooth + λ₁|w|: the magnitude of its least subgradient.
fn violation(w: f64, g: f64, l1: f64) -> f64 {
    least_subgradient(w, g, l1).abs()
}

/// The step z minimizing g·z + ½h·z² + λ₁|w + z|: the Newton step of the side of 0 that
/// w + z lands on, or −w where neither side's step stays on its side.
fn newton_step(w: f64, g: f64, h: f64, l1: f64) -> f64 {
    if g + l1 < h * w {
        -(g + l1) / h
    } else if g - l1 > h * w {
        -(g - l1) / h
    } else {
        -w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-dimensional model's minimizer, checked against a fine grid.
    #[test]
    fn the_newton_step_minimizes_the_one_dimensional_model() {
        for (w, g, h, l1) in [
            (0.0, 0.3, 2.0, 0.5),
            (0.0, -1.7, 0.5, 0.5),
            (0.4, 2.0, 1.0, 0.1),
            (-0.4, -0.05, 3.0, 0.2),
            (1.0, 0.0, 1.0, 0.0),
            (-2.0, 5.0, 0.25, 1.0),
        ] {
            let model = |z: f64| g * z + 0.5 * h * z * z + l1 * (w + z).abs();
            let z = newton_step(w, g, h, l1);
            let best = (-40_000..=40_000)
                .map(|k| k as f64 * 1e-3)
                .map(model)
                .fold(f64::INFINITY, f64::min);
            assert!(
                model(z) <= best + 1e-12,
                "w={w} g={g} h={h} λ₁={l1}: z = {z}"
            );
        }
    }

    #[test]
    fn violations_are_the_least_subgradient() {
        assert_eq!(violation(0.0, 0.3, 0.5), 0.0);
        assert_eq!(violation(0.0, -0.75, 0.5), 0.25);
        assert_eq!(violation(1.0, -0.5, 0.5), 0.0);
        assert_eq!(violation(-1.0, 0.25, 0.5), 0.25);
    }
}
