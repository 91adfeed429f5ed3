//! Crammer and Singer's multiclass SVM (liblinear's `-s 4`): the K classes' models fitted
//! together so that each row's own class outscores every other by a margin of 1, solved by
//! the sequential dual method of Keerthi, Sundararajan, Chang, Hsieh & Lin (KDD 2008).
//!
//! With C = 1/(λm), J(W) = λ·P(W) for
//!
//! ```text
//! P(W) = ½ Σ_k ‖w_k‖² + Σ_i C_i ξ_i(W),   ξ_i = max_k (w_k·x_i + e_ik) − w_{y_i}·x_i,
//! ```
//!
//! e_ik = 1 for k ≠ y_i and 0 for k = y_i, C_i = s_i·c_{y_i}·C with the row's sample weight s_i
//! and its class's weight c_y (all 1 unless given), and the bias a feature of value 1 in each
//! class's model (liblinear's `-B 1`) unless there is none. Its dual is
//!
//! ```text
//! min F(α) = ½ Σ_k ‖w_k(α)‖² + Σ_i Σ_k e_ik α_ik   over Σ_k α_ik = 0, α_ik ≤ C_i·[k = y_i],
//!            w_k(α) = Σ_i α_ik x_i.
//! ```
//!
//! A step minimizes F over one row's K variables at once, in closed form after a sort of K
//! numbers (the paper's subproblem): K sparse dots for the row's scores and K sparse updates,
//! with the weights stored feature by feature (class k of feature j at j·K + k) so that one
//! row's entries reach every class's weight in one cache line or two. Each epoch visits the
//! rows in a fresh seeded random order.
//!
//! The certificate is the duality gap, as dcd's: λ(P(W(α)) + F(α)) ≥ J(W(α)) − J*, measured
//! (one pass over the rows, in parallel, summed in a fixed order) every few epochs; the solver
//! keeps the best W measured and the highest lower bound on J* seen.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::objective::fixed_sum;
use super::{Options, Progress, Solution, SolveError, Stop, Tracker};
use crate::data::{Examples, Row};
use crate::memory::{self, AllocError};
use crate::online::sampling::bounded;

/// Seed of the visiting order: the same data and settings give the same model, bit for bit.
const ORDER_SEED: u64 = 0x6373_5f6f_7264_6572;

/// The fewest epochs between two measurements of the gap (each a pass over the rows, where an
/// epoch of steps over every row is about two), unless an epoch meets the spread first; later
/// a tenth of the epochs run, so that measuring costs a few per cent of a long run (every
/// three epochs, it cost 10–30% on spamassassin's folders).
const EPOCHS_PER_MEASUREMENT: usize = 3;

/// The first largest KKT violation (in margins) under which an epoch over every row and class
/// counts as converged, and the gap is measured: liblinear's first shrinking threshold
/// (max(10ε, 1) at its ε = 0.1), halved each time the gap is still above the tolerance.
const FIRST_SPREAD: f64 = 1.0;

/// Below this violation a row's step would change α by rounding only, and is not taken; a
/// spread halved below it with the gap still above the tolerance stops the solver as stalled.
const LAST_VIOLATION: f64 = 1e-12;

/// The multiclass SVM's objective over a data set.
pub struct CrammerSinger<'a, E: Examples + 'a> {
    /// The rows, through the view built for hot loops ([`Examples::rows`]).
    data: E::Rows<'a>,
    classes: usize,
    /// Each row's class, an index below `classes`.
    labels: Vec<usize>,
    /// Each row's weight s_i·c_{y_i} (`None`: all 1).
    row_weights: Option<Vec<f64>>,
    lambda: f64,
    /// Whether each class's model has a bias (a feature of value 1).
    bias: bool,
}

impl<'a, E: Examples> CrammerSinger<'a, E> {
    /// The objective over `data` whose row i is of class `labels[i]` (below `classes`, at
    /// least two), with regularization `lambda`, a bias per class if `bias`, and row weights
    /// `row_weights` (one per row, ≥ 0) if given.
    pub fn new(
        data: &'a E,
        labels: Vec<usize>,
        classes: usize,
        row_weights: Option<Vec<f64>>,
        lambda: f64,
        bias: bool,
    ) -> Self {
        super::assert_class_rows(data.n_rows(), &labels, classes, row_weights.as_deref());
        CrammerSinger {
            data: data.rows(),
            classes,
            labels,
            row_weights,
            lambda,
            bias,
        }
    }

    /// Rows m.
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }

    /// The features of each class's model, its bias not counted.
    fn features(&self) -> usize {
        self.data.n_features()
    }

    /// Row i's weight s_i·c_{y_i}.
    fn row_weight(&self, i: usize) -> f64 {
        self.row_weights.as_ref().map_or(1.0, |s| s[i])
    }

    /// J(W) for feature-major weights `w` (bias row last): (λ/2)‖W‖² + (1/m) Σ_i s_i ξ_i.
    fn value(&self, w: &[f64]) -> f64 {
        let k = self.classes;
        let margins = fixed_sum(self.n_rows(), |rows| {
            let mut scores = vec![0.0; k];
            rows.map(|i| {
                let weight = self.row_weight(i);
                if weight == 0.0 {
                    return 0.0;
                }
                self.scores(w, &self.data.row(i), &mut scores);
                let y = self.labels[i];
                let own = scores[y];
                scores[y] -= 1.0;
                let most = scores.iter().fold(f64::NEG_INFINITY, |m, &s| m.max(s)) + 1.0;
                weight * (most - own)
            })
            .sum()
        });
        let squares: f64 = w.iter().map(|w| w * w).sum();
        0.5 * self.lambda * squares + margins / self.n_rows() as f64
    }

    /// scores_k = w_k·x (+ b_k) for a row x.
    fn scores(&self, w: &[f64], row: &Row<'_>, scores: &mut [f64]) {
        let k = self.classes;
        match self.bias {
            true => scores.copy_from_slice(&w[self.features() * k..][..k]),
            false => scores.fill(0.0),
        }
        let indices = row.indices.as_slice();
        for (e, &j) in indices.iter().enumerate() {
            let x = row.values.get(e);
            let block = &w[j as usize * k..][..k];
            for (s, &weight) in scores.iter_mut().zip(block) {
                *s += weight * x;
            }
        }
    }
}

/// Minimize J over the classes' weights by dual coordinate steps, one row at a time, until the
/// duality gap is at most `options.tol`·J or `options.max_iter` epochs are done. The solution's
/// weights are K blocks of n + 1, class k's n weights then its bias (0 without one).
pub fn solve<E: Examples>(
    problem: &CrammerSinger<'_, E>,
    options: &Options,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<Solution, SolveError> {
    let lambda = problem.lambda;
    if !(lambda > 0.0 && lambda.is_normal()) {
        return Err(SolveError::BadLambda(lambda));
    }
    let m = problem.n_rows();
    if m == 0 {
        return Err(SolveError::NoRows);
    }
    let mut tracker = Tracker::new(progress);
    let (k, n) = (problem.classes, problem.features());
    let c = 1.0 / (lambda * m as f64);
    let bias = f64::from(u8::from(problem.bias));
    let mut dual = Dual {
        w: memory::filled("weights", (n + 1) * k, 0.0)?,
        alpha: memory::filled("dual variables", m * k, 0.0)?,
        classes: memory::filled("class orders", m * k, 0u32)?,
        gradient: vec![0.0; k],
        sorted: vec![0.0; k],
        step: vec![0.0; k],
        moved: vec![0; k],
    };
    for order in dual.classes.chunks_exact_mut(k) {
        (0..k as u32)
            .zip(order)
            .for_each(|(class, slot)| *slot = class);
    }
    // The rows that step: of positive weight and norm.
    let mut norms = memory::filled("row norms", m, 0.0)?;
    let mut rows = Vec::with_capacity(m);
    for (i, norm) in norms.iter_mut().enumerate() {
        *norm = problem.data.row(i).norm2() + bias;
        let upper = c * problem.row_weight(i);
        if !(norm.is_finite() && upper.is_finite()) {
            // A step along it would compute ∞·0: refused, as dcd refuses such a row.
            let what = match norm.is_finite() {
                true => {
                    "has C_i = s_i·c_y/(λm) beyond f64's range (λ too small, or a class or \
                         sample weight too large)"
                }
                false => "has a squared norm beyond f64's range (scale the features)",
            };
            return Err(SolveError::BadOption(format!(
                "row {} {what}: the Crammer–Singer solver cannot step along it",
                i + 1
            )));
        }
        if upper > 0.0 && *norm > 0.0 {
            rows.push(i);
        } else if upper > 0.0 {
            // A row of no entries (and no bias) scores 0 in every class, ξ_i = 1 whatever W:
            // its variables move no weight, and F is least with α_iy = C_i against one other
            // class's −C_i, which the gap needs (with them at 0 it stays 1/m above 0).
            let y = problem.labels[i];
            dual.alpha[i * k + y] = upper;
            dual.alpha[i * k + usize::from(y == 0)] = -upper;
        }
    }
    let live = rows.len();
    // Rows left out of the epochs (shrunk: every class but one at its bound with the gradient
    // keeping it there) come after the first `active_rows`; a row's classes likewise after its
    // first `active_classes[i]` in its order.
    let (mut active_rows, mut active_classes) = (live, vec![k; m]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(ORDER_SEED);
    let mut best = Best::new(problem, &dual)?;
    tracker.passes += 1.0;
    let (mut epochs, mut steps, mut measured_steps) = (0, 0, 0);
    let mut spread = FIRST_SPREAD;
    // Whether the epoch under way visits every row and class (nothing shrunk).
    let mut everything = true;
    let stop = loop {
        tracker.report(Progress::new(epochs, best.value, best.gap(), &best.blocks));
        if let Some(stop) = options.converged(epochs, best.value, best.gap()) {
            break stop;
        }
        if spread < LAST_VIOLATION {
            break Stop::Stalled;
        }
        let interval = EPOCHS_PER_MEASUREMENT.max(epochs / 10);
        let until = options.max_iter.min(epochs + interval);
        let mut met_spread = false;
        while epochs < until {
            for s in 0..active_rows.saturating_sub(1) {
                let j = s + bounded(&mut rng, active_rows - s);
                rows.swap(s, j);
            }
            steps += active_rows;
            let mut largest = 0.0_f64;
            let mut s = 0;
            while s < active_rows {
                let i = rows[s];
                let row = problem.data.row(i);
                let upper = c * problem.row_weight(i);
                let at = RowAt {
                    i,
                    row: &row,
                    norm: norms[i],
                    upper,
                };
                let violation = dual.step(problem, at, &mut active_classes[i]);
                if active_classes[i] <= 1 {
                    active_rows -= 1;
                    rows.swap(s, active_rows);
                    continue;
                }
                largest = largest.max(violation);
                s += 1;
            }
            epochs += 1;
            if largest < spread {
                // Every row and class is checked again (liblinear's rule), at a spread halved
                // unless this epoch had checked everything already and the gap decides.
                active_rows = live;
                active_classes.fill(k);
                if everything {
                    met_spread = true;
                    break;
                }
                spread *= 0.5;
                everything = true;
            } else {
                everything = false;
            }
        }
        // An epoch of steps reads its rows and writes their weights: two passes' worth.
        tracker.passes += 2.0 * (steps - measured_steps) as f64 / m as f64 + 1.0;
        measured_steps = steps;
        best.measure(problem, &dual);
        if met_spread && best.gap() > options.tol * best.value.abs() {
            spread *= 0.5;
        }
    };
    Ok(Solution {
        objective: best.value,
        w: best.blocks,
        iterations: epochs,
        stop,
        dual: None,
    })
}

/// One row as a step sees it: its index, entries, squared norm (with the bias) and the bound
/// C_i of its own class's variable.
struct RowAt<'r, 'a> {
    i: usize,
    row: &'r Row<'a>,
    norm: f64,
    upper: f64,
}

/// The dual variables, the weights W(α) they make (feature-major, bias row last), each row's
/// order of its classes (the active ones first), and one row's working space.
struct Dual {
    w: Vec<f64>,
    /// α_ik at i·K + k.
    alpha: Vec<f64>,
    /// Row i's classes at i·K.., those still stepping first.
    classes: Vec<u32>,
    gradient: Vec<f64>,
    sorted: Vec<f64>,
    /// The changes of a step's variables that moved, and their classes.
    step: Vec<f64>,
    moved: Vec<usize>,
}

impl Dual {
    /// Minimize F over row i's variables of the `active` classes in its order (the others
    /// stay at their bounds), after leaving out of them those at a bound that the gradient
    /// keeps there (liblinear's shrinking; `active` shrinks), and return the row's KKT
    /// violation over them before the step: the largest gradient less the smallest of the
    /// classes free to grow.
    fn step<E: Examples>(
        &mut self,
        problem: &CrammerSinger<'_, E>,
        at: RowAt<'_, '_>,
        active: &mut usize,
    ) -> f64 {
        let (k, y) = (problem.classes, problem.labels[at.i] as u32);
        let alpha = &mut self.alpha[at.i * k..][..k];
        let order = &mut self.classes[at.i * k..][..k];
        let bound = |class: u32| if class == y { at.upper } else { 0.0 };
        // G_t = w_c·x_i + e_ic for the class c at position t.
        let a = *active;
        let gradient = &mut self.gradient[..a];
        for (g, &class) in gradient.iter_mut().zip(&order[..a]) {
            let bias = match problem.bias {
                true => self.w[problem.features() * k + class as usize],
                false => 0.0,
            };
            *g = bias + if class == y { 0.0 } else { 1.0 };
        }
        let indices = at.row.indices.as_slice();
        for (e, &j) in indices.iter().enumerate() {
            let x = at.row.values.get(e);
            let block = &self.w[j as usize * k..][..k];
            for (g, &class) in gradient.iter_mut().zip(&order[..a]) {
                *g += block[class as usize] * x;
            }
        }
        let (mut largest, mut smallest) = (f64::NEG_INFINITY, f64::INFINITY);
        for (&g, &class) in gradient.iter().zip(&order[..a]) {
            largest = largest.max(g);
            if alpha[class as usize] < bound(class) {
                smallest = smallest.min(g);
            }
        }
        // A class at its bound whose gradient is below every free class's stays there.
        let shrinks = |t: usize, gradient: &[f64], order: &[u32]| {
            let class = order[t];
            alpha[class as usize] == bound(class) && gradient[t] < smallest
        };
        let mut a = a;
        let mut t = 0;
        while t < a {
            if shrinks(t, &self.gradient, order) {
                a -= 1;
                order.swap(t, a);
                self.gradient.swap(t, a);
            } else {
                t += 1;
            }
        }
        *active = a;
        if a <= 1 {
            return 0.0;
        }
        let violation = largest - smallest;
        if violation <= LAST_VIOLATION {
            return violation;
        }
        // The subproblem: min Σ_t ½A α_t² + B_t α_t over Σ α = 0 (the shrunk classes fixed at
        // their bounds), α_t ≤ bound_t, with B_t = G_t − A α_t; its solution is
        // α_t = min(bound_t, (β − B_t)/A) for the β that makes the sum 0, found from the
        // B_t + A·bound_t in decreasing order (Keerthi et al., Algorithm 2).
        let norm = at.norm;
        for t in 0..a {
            self.gradient[t] -= norm * alpha[order[t] as usize];
        }
        let b = &self.gradient[..a];
        let sorted = &mut self.sorted[..a];
        sorted.copy_from_slice(b);
        if let Some(t) = order[..a].iter().position(|&class| class == y) {
            sorted[t] += norm * at.upper;
        }
        sorted.sort_unstable_by(|a, b| b.total_cmp(a));
        let mut beta = sorted[0] - norm * at.upper;
        let mut r = 1;
        while r < a && beta < r as f64 * sorted[r] {
            beta += sorted[r];
            r += 1;
        }
        beta /= r as f64;
        let mut moved = 0;
        for t in 0..a {
            let class = order[t] as usize;
            let new = ((beta - b[t]) / norm).min(bound(order[t]));
            let change = new - alpha[class];
            alpha[class] = new;
            if change != 0.0 {
                self.step[moved] = change;
                self.moved[moved] = class;
                moved += 1;
            }
        }
        debug_assert!(
            alpha.iter().sum::<f64>().abs() <= 1e-9 * at.upper.max(1.0),
            "row {}'s variables sum to 0",
            at.i
        );
        if moved > 0 {
            let (changes, classes) = (&self.step[..moved], &self.moved[..moved]);
            for (e, &j) in indices.iter().enumerate() {
                let x = at.row.values.get(e);
                let block = &mut self.w[j as usize * k..][..k];
                for (&d, &class) in changes.iter().zip(classes) {
                    block[class] += d * x;
                }
            }
            if problem.bias {
                let block = &mut self.w[problem.features() * k..][..k];
                for (&d, &class) in changes.iter().zip(classes) {
                    block[class] += d;
                }
            }
        }
        violation
    }

    /// F(α) = ½‖W(α)‖² + Σ_i Σ_{k ≠ y_i} α_ik.
    fn value<E: Examples>(&self, problem: &CrammerSinger<'_, E>) -> f64 {
        let k = problem.classes;
        let squares: f64 = self.w.iter().map(|w| w * w).sum();
        let linear: f64 = (self.alpha.chunks_exact(k).zip(&problem.labels))
            .map(|(alpha, &y)| alpha.iter().sum::<f64>() - alpha[y])
            .sum();
        0.5 * squares + linear
    }
}

/// The best iterate measured (as class blocks), and the highest lower bound on J* seen.
struct Best {
    blocks: Vec<f64>,
    value: f64,
    lower: f64,
}

impl Best {
    /// The first measurement, of W = 0.
    fn new<E: Examples>(problem: &CrammerSinger<'_, E>, dual: &Dual) -> Result<Best, AllocError> {
        let mut best = Best {
            blocks: memory::filled("weights", dual.w.len(), 0.0)?,
            value: f64::INFINITY,
            lower: f64::NEG_INFINITY,
        };
        best.measure(problem, dual);
        Ok(best)
    }

    /// J(W(α)) and the bound J − gap = −λF(α); W kept if it is the best yet.
    fn measure<E: Examples>(&mut self, problem: &CrammerSinger<'_, E>, dual: &Dual) {
        let value = problem.value(&dual.w);
        self.lower = self.lower.max(-problem.lambda * dual.value(problem));
        if value < self.value {
            self.value = value;
            let (k, n) = (problem.classes, problem.features());
            for class in 0..k {
                for j in 0..=n {
                    self.blocks[class * (n + 1) + j] = dual.w[j * k + class];
                }
            }
        }
    }

    /// The certificate J(W) − (highest lower bound) ≥ J(W) − J*.
    fn gap(&self) -> f64 {
        (self.value - self.lower).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::objective::tests::{random_matrix, uniforms};
    use crate::data::{CsrMatrix, ValueVec};

    /// Four classes over `x`'s rows, each the argmax of a planted linear score plus noise, so
    /// that the classes overlap.
    fn four_classes(x: &CsrMatrix, seed: u64) -> Vec<usize> {
        let mut next = uniforms(seed);
        (0..x.n_rows())
            .map(|i| {
                let row = x.row(i);
                let mut score = |class: usize| {
                    let planted: f64 = (0..row.nnz())
                        .map(|e| {
                            row.values.get(e) * ((row.indices[e] as usize * 4 + class) as f64).sin()
                        })
                        .sum();
                    planted + 0.8 * next()
                };
                (0..4)
                    .map(|c| (score(c), c))
                    .fold((f64::MIN, 0), |a, b| if b.0 > a.0 { b } else { a })
                    .1
            })
            .collect()
    }

    fn solve_to(problem: &CrammerSinger<'_, CsrMatrix>, tol: f64) -> Solution {
        let options = Options {
            tol,
            max_iter: 100_000,
            ..Options::default()
        };
        solve(problem, &options, &mut |_| {}).unwrap()
    }

    /// J of class blocks (n weights and a bias each), computed from its definition.
    fn primal(x: &CsrMatrix, labels: &[usize], lambda: f64, blocks: &[f64]) -> f64 {
        let (n, k) = (x.n_features(), labels.iter().max().unwrap() + 1);
        let k = k.max(blocks.len() / (n + 1));
        let mut xi = 0.0;
        for (i, &y) in labels.iter().enumerate() {
            let row = x.row(i);
            let scores: Vec<f64> = (0..k)
                .map(|c| {
                    let w = &blocks[c * (n + 1)..][..n + 1];
                    w[n] + (0..row.nnz())
                        .map(|e| w[row.indices[e] as usize] * row.values.get(e))
                        .sum::<f64>()
                })
                .collect();
            let most = (0..k)
                .map(|c| scores[c] + f64::from(u8::from(c != y)))
                .fold(f64::MIN, f64::max);
            xi += most - scores[y];
        }
        0.5 * lambda * blocks.iter().map(|w| w * w).sum::<f64>() + xi / labels.len() as f64
    }

    /// Certified to 1e-12, the solution is J's minimum: no step of 1e-4 along any of 200
    /// random directions lowers J, computed from its definition (the primal, which the solver
    /// never evaluates this way); and the objective the solver reports is that J.
    #[test]
    fn the_certified_solution_is_the_minimum_of_the_primal() {
        let x = random_matrix(240, 12, 5);
        let labels = four_classes(&x, 9);
        for (lambda, bias) in [(1e-2, true), (1e-3, true), (1e-2, false)] {
            let problem = CrammerSinger::new(&x, labels.clone(), 4, None, lambda, bias);
            let solution = solve_to(&problem, 1e-12);
            assert_eq!(solution.stop, Stop::Converged, "λ={lambda} bias={bias}");
            let value = primal(&x, &labels, lambda, &solution.w);
            assert!(
                (value - solution.objective).abs() <= 1e-13 * value,
                "λ={lambda}: {value} vs {}",
                solution.objective
            );
            if !bias {
                assert!(solution.w.chunks_exact(13).all(|block| block[12] == 0.0));
            }
            let mut next = uniforms(17);
            for _ in 0..200 {
                let moved: Vec<f64> = (solution.w.iter())
                    .enumerate()
                    .map(|(j, w)| match !bias && j % 13 == 12 {
                        true => 0.0,
                        false => w + 1e-4 * (next() - 0.5),
                    })
                    .collect();
                let there = primal(&x, &labels, lambda, &moved);
                assert!(
                    there >= value * (1.0 - 1e-12),
                    "λ={lambda}: {there} < {value}"
                );
            }
        }
    }

    /// A row whose step would compute ∞·0 is refused, not stepped along to NaN (a model of
    /// zeros): a squared norm or a C_i beyond f64.
    #[test]
    fn rows_beyond_f64_are_refused() {
        let x = random_matrix(40, 6, 2);
        let labels = four_classes(&x, 1);
        let mut weights = vec![1.0; 40];
        weights[7] = 1e308;
        let heavy = CrammerSinger::new(&x, labels.clone(), 4, Some(weights), 1e-2, true);
        let message = solve(&heavy, &Options::default(), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(message.contains("row 8 has C_i"), "{message}");
        let huge = ValueVec::F64(vec![1e160; x.indices().len()]);
        let (offsets, indices) = (x.offsets().to_vec(), x.indices().to_vec());
        let wide = CsrMatrix::new(x.labels().to_vec(), offsets, indices, huge, 6).unwrap();
        let problem = CrammerSinger::new(&wide, labels, 4, None, 1e-2, true);
        let message = solve(&problem, &Options::default(), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("squared norm beyond f64's range"),
            "{message}"
        );
    }

    /// Row weights of 2 everywhere double the loss: the minimum of J at λ is that of the
    /// unweighted J at λ/2, at twice its value; and the solve is the same bits on 1 and 2
    /// threads.
    #[test]
    fn weights_scale_the_loss_and_threads_change_nothing() {
        let x = random_matrix(200, 10, 7);
        let labels = four_classes(&x, 3);
        let doubled = CrammerSinger::new(&x, labels.clone(), 4, Some(vec![2.0; 200]), 2e-2, true);
        let halved = CrammerSinger::new(&x, labels.clone(), 4, None, 1e-2, true);
        let (a, b) = (solve_to(&doubled, 1e-12), solve_to(&halved, 1e-12));
        assert!((a.objective - 2.0 * b.objective).abs() <= 1e-10 * a.objective);
        let furthest = (a.w.iter().zip(&b.w))
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(furthest <= 1e-5, "{furthest}");
        let on = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| solve_to(&halved, 1e-12))
        };
        let (one, two) = (on(1), on(2));
        assert_eq!(one.w, two.w);
        assert_eq!(one.objective.to_bits(), two.objective.to_bits());
    }
}
