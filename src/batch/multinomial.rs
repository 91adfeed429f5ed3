//! Multinomial logistic regression (softmax): the K classes' models fitted together, as
//! scikit-learn's `LogisticRegression` fits more than two classes. With z_ik = w_k·x_i + b_k,
//!
//!   J(W, b) = (λ/2) Σ_k (‖w_k‖² + b_k²) + (1/m) Σ_i s_i [log Σ_k e^(z_ik) − z_(i,y_i)],
//!
//! s_i the row's weight (its sample weight times its class's weight; 1 unless given), the
//! biases regularized as every batch solver's bias is (liblinear's `-B 1`). L-BFGS with a
//! strong-Wolfe line search minimizes it ([`solve`]), certified as the binary solvers are:
//! J − J* ≤ ‖∇J‖²/(2λ), J being λ-strongly convex.
//!
//! The weights are one vector of K blocks, class k's n weights then its bias. Every sum over
//! rows adds fixed chunks in order and each class's gradient block is one task's, so J and ∇J
//! are the same bits on any number of threads. A line search along D costs one product
//! Z_D = [x_i, 1]·D, after which each trial point costs O(mK).
//!
//! Distributed ([`Multinomial::distributed`]), as the binary objective is: the rows are this
//! rank's share, m counts every rank's, and each sum over rows (the loss, the gradient's data
//! part, the ray's value and slope) is completed by the [`Reducer`].

use rayon::prelude::*;
use sparselin_kernels::math::Elementwise;
use sparselin_kernels::{dense, sparse};

use super::lbfgs::{self, Smooth, Wolfe};
use super::objective::{CHUNK_ROWS, Landing, add_in_order, along, fixed_sum, fixed_sum2};
use super::{Options, Progress, Solution, SolveError, Tracker};
use crate::data::Examples;
use crate::dist::{Local, Reducer};
use crate::memory::{self, AllocError};

/// J(W, b) of multinomial logistic regression over a data set.
pub struct Multinomial<'a, E: Examples + 'a> {
    /// The rows, through the view built for hot loops ([`Examples::rows`]).
    data: E::Rows<'a>,
    classes: usize,
    /// Each row's class, an index below `classes`.
    labels: Vec<usize>,
    /// Each row's weight s_i (`None`: all 1).
    row_weights: Option<Vec<f64>>,
    lambda: f64,
    reducer: &'a dyn Reducer,
    /// m: the rows of every rank.
    total_rows: usize,
}

impl<'a, E: Examples> Multinomial<'a, E> {
    /// The objective over `data` whose row i is of class `labels[i]` (below `classes`, at
    /// least two), with regularization `lambda` and row weights `row_weights` (one per row)
    /// if given.
    pub fn new(
        data: &'a E,
        labels: Vec<usize>,
        classes: usize,
        row_weights: Option<Vec<f64>>,
        lambda: f64,
    ) -> Self {
        Self::distributed(data, labels, classes, row_weights, lambda, &Local)
    }

    /// [`Multinomial::new`] over this rank's share `data` of rows that the ranks of
    /// `reducer` share (every rank calls it, and every evaluation, alike).
    pub fn distributed(
        data: &'a E,
        labels: Vec<usize>,
        classes: usize,
        row_weights: Option<Vec<f64>>,
        lambda: f64,
        reducer: &'a dyn Reducer,
    ) -> Self {
        super::assert_class_rows(data.n_rows(), &labels, classes, row_weights.as_deref());
        Multinomial {
            data: data.rows(),
            classes,
            labels,
            row_weights,
            lambda,
            reducer,
            total_rows: crate::dist::total_rows(reducer, data.n_rows()),
        }
    }

    /// Entries of one class's block: n weights and a bias.
    fn width(&self) -> usize {
        self.data.n_features() + 1
    }

    fn rows(&self) -> usize {
        self.data.n_rows()
    }

    /// m, the rows of every rank.
    pub fn total_rows(&self) -> usize {
        self.total_rows
    }

    /// s_i.
    fn weight(&self, i: usize) -> f64 {
        self.row_weights.as_ref().map_or(1.0, |s| s[i])
    }

    /// Z = (z_ik) for the weights `v`, K per row: the scores at v, or their rate of change
    /// along a direction (the map is linear). Each chunk's rows go to the row-block kernel
    /// once per class, so that one class's weights serve the chunk before the next class's
    /// are read (on spamassassin's 5 classes 0.6× the time of K dots per row, PERF.md
    /// "Multinomial").
    pub fn scores(&self, v: &[f64]) -> Vec<f64> {
        assert_eq!(v.len(), self.dim(), "scores: wrong dimension");
        let (k, width) = (self.classes, self.width());
        let mut z = vec![0.0; self.rows() * k];
        z.par_chunks_mut(CHUNK_ROWS * k)
            .enumerate()
            .for_each(|(c, chunk)| {
                let first = c * CHUNK_ROWS;
                let rows = first..first + chunk.len() / k;
                let mut class_scores = vec![0.0; rows.len()];
                self.data.for_each_block(rows, &mut |row, block| {
                    let zs = &mut chunk[(row - first) * k..][..block.len() * k];
                    let out = &mut class_scores[..block.len()];
                    for (class, class_block) in v.chunks_exact(width).enumerate() {
                        let (weights, bias) = class_block.split_at(width - 1);
                        sparse::dot_rows(weights, block, out);
                        for (zi, s) in zs.chunks_exact_mut(k).zip(out.iter()) {
                            zi[class] = s + bias[0];
                        }
                    }
                });
            });
        z
    }

    /// J at the weights `v` whose scores (this rank's rows') are `z`.
    pub fn value(&self, v: &[f64], z: &[f64]) -> f64 {
        let k = self.classes;
        let mut loss = [fixed_sum(self.rows(), |rows| {
            let (tops, exps) = shifted_exps(&z[rows.start * k..rows.end * k], k);
            rows.zip(tops.iter().zip(exps.chunks_exact(k)))
                .map(|(i, (&top, e))| {
                    let zy = z[i * k + self.labels[i]];
                    self.weight(i) * loss_from(top, e.iter().sum(), zy)
                })
                .sum()
        })];
        self.reducer.sum(&mut loss);
        self.value_with(v, loss[0])
    }

    /// J at the weights `v` from the loss sum over every rank's rows.
    fn value_with(&self, v: &[f64], loss_sum: f64) -> f64 {
        0.5 * self.lambda * dense::norm2(v) + loss_sum / self.total_rows as f64
    }

    /// ∇J = λv + (1/m) Σ_i s_i (p_i − e_(y_i)) ⊗ [x_i, 1], p_i the softmax of z_i.
    pub fn gradient(&self, v: &[f64], z: &[f64]) -> Result<Vec<f64>, AllocError> {
        let k = self.classes;
        let mut coefficients = self.coefficients()?;
        class_major_chunks(&mut coefficients, self.rows(), k)
            .into_par_iter()
            .enumerate()
            .for_each(|(c, mut columns)| {
                let first = c * CHUNK_ROWS;
                let (_, mut exps) = shifted_exps(&z[first * k..][..columns[0].len() * k], k);
                for (r, p) in exps.chunks_exact_mut(k).enumerate() {
                    normalize(p);
                    self.write_coefficients(first + r, p, &mut columns, r);
                }
            });
        self.gradient_from(v, &coefficients)
    }

    /// Zeros for the class-major coefficients s_i (p_ik − [y_i = k]) / m of the gradient's
    /// data part: class k's of every row contiguous, the one array that class's pass over the
    /// rows reads.
    fn coefficients(&self) -> Result<Vec<f64>, AllocError> {
        memory::filled("class coefficients", self.rows() * self.classes, 0.0)
    }

    /// Row i's coefficients from its softmax `p` (left as p − e_(y_i)), into entry `r` of
    /// each class's column piece.
    fn write_coefficients(&self, i: usize, p: &mut [f64], columns: &mut [&mut [f64]], r: usize) {
        p[self.labels[i]] -= 1.0;
        let scale = self.weight(i) / self.total_rows as f64;
        for (column, p) in columns.iter_mut().zip(p.iter()) {
            column[r] = p * scale;
        }
    }

    /// λv + the data part of ∇J from its class-major coefficients, summed over the ranks.
    fn gradient_from(&self, v: &[f64], coefficients: &[f64]) -> Result<Vec<f64>, AllocError> {
        let (width, m) = (self.width(), self.rows());
        let mut g = memory::filled("gradient", v.len(), 0.0)?;
        g.par_chunks_mut(width)
            .zip(coefficients.par_chunks(m.max(1)))
            .for_each(|(block, column)| {
                let (weights, bias) = block.split_at_mut(width - 1);
                self.data.for_each_block(0..m, &mut |first, rows| {
                    sparse::axpy_rows(&column[first..][..rows.len()], rows, weights);
                });
                bias[0] += dense::sum(column);
            });
        self.reducer.sum(&mut g);
        dense::axpby(self.lambda, v, 1.0, &mut g);
        Ok(g)
    }

    /// Σ_i s_i·ℓ_i and Σ_i s_i·ℓ_i' over every rank's rows at the scores z + η·zd (ℓ_i the
    /// row's loss, ℓ_i' its derivative in η): the data's part of J along a ray, O(mK); with
    /// `coefficients`, the gradient's coefficients there too ([`Multinomial::gradient`]).
    fn ray_sums(
        &self,
        z: &[f64],
        zd: &[f64],
        eta: f64,
        coefficients: Option<&mut [f64]>,
    ) -> (f64, f64) {
        let k = self.classes;
        let chunk = |rows: std::ops::Range<usize>, columns: Option<&mut [&mut [f64]]>| {
            let entries = rows.start * k..rows.end * k;
            let points: Vec<f64> = (z[entries.clone()].iter().zip(&zd[entries]))
                .map(|(&a, &b)| along(a, b, eta))
                .collect();
            let (tops, mut exps) = shifted_exps(&points, k);
            let (mut loss, mut slope) = (0.0, 0.0);
            let mut columns = columns;
            for (r, i) in rows.enumerate() {
                let (point, zdi) = (&points[r * k..][..k], &zd[i * k..][..k]);
                let p = &mut exps[r * k..][..k];
                let sum = normalize(p);
                let y = self.labels[i];
                let s = self.weight(i);
                loss += s * loss_from(tops[r], sum, point[y]);
                // ⟨p_i, zd_i⟩: K products, too few for a dispatched kernel's call to pay.
                let mean_rate: f64 = p.iter().zip(zdi).map(|(p, zd)| p * zd).sum();
                slope += s * (mean_rate - zdi[y]);
                if let Some(columns) = columns.as_deref_mut() {
                    self.write_coefficients(i, p, columns, r);
                }
            }
            (loss, slope)
        };
        let (loss, slope) = match coefficients {
            Some(out) => {
                let partial: Vec<(f64, f64)> = class_major_chunks(out, self.rows(), k)
                    .into_par_iter()
                    .enumerate()
                    .map(|(c, mut columns)| {
                        let first = c * CHUNK_ROWS;
                        chunk(first..first + columns[0].len(), Some(&mut columns))
                    })
                    .collect();
                add_in_order(&partial)
            }
            None => fixed_sum2(self.rows(), |rows| chunk(rows, None)),
        };
        let mut sums = [loss, slope];
        self.reducer.sum(&mut sums);
        (sums[0], sums[1])
    }
}

/// The class-major array `coefficients` (K columns of m rows) cut for tasks of
/// [`CHUNK_ROWS`] rows: chunk c's piece of each column, in class order.
fn class_major_chunks(coefficients: &mut [f64], m: usize, k: usize) -> Vec<Vec<&mut [f64]>> {
    let mut chunks: Vec<Vec<&mut [f64]>> = (0..m.div_ceil(CHUNK_ROWS))
        .map(|_| Vec::with_capacity(k))
        .collect();
    for column in coefficients.chunks_mut(m.max(1)) {
        for (chunk, piece) in chunks.iter_mut().zip(column.chunks_mut(CHUNK_ROWS)) {
            chunk.push(piece);
        }
    }
    chunks
}

impl<E: Examples> Smooth for Multinomial<'_, E> {
    fn dim(&self) -> usize {
        self.classes * self.width()
    }

    fn lambda(&self) -> f64 {
        self.lambda
    }

    fn product(&self, v: &[f64]) -> Vec<f64> {
        self.scores(v)
    }

    fn value(&self, w: &[f64], p: &[f64]) -> f64 {
        Multinomial::value(self, w, p)
    }

    fn gradient(&self, w: &[f64], p: &[f64]) -> Result<Vec<f64>, AllocError> {
        Multinomial::gradient(self, w, p)
    }

    fn landing(&self) -> Result<Landing, AllocError> {
        Landing::new("class coefficients", self.rows() * self.classes)
    }

    fn line<'r>(
        &'r self,
        w: &'r [f64],
        d: &'r [f64],
        p: &'r [f64],
        pd: &'r [f64],
        landing: &'r mut Landing,
    ) -> impl FnMut(f64) -> (f64, f64) + 'r {
        let (ww, wd, dd) = (dense::norm2(w), dense::dot(w, d), dense::norm2(d));
        let (lambda, m) = (self.lambda, self.total_rows as f64);
        move |eta| {
            let (loss, slope) = self.ray_sums(p, pd, eta, Some(landing.terms_mut()));
            landing.kept(eta, loss);
            (
                0.5 * lambda * (ww + 2.0 * eta * wd + eta * eta * dd) + loss / m,
                lambda * (wd + eta * dd) + slope / m,
            )
        }
    }

    fn landed(
        &self,
        w: &[f64],
        p: &[f64],
        eta: f64,
        landing: &Landing,
    ) -> Result<(f64, Vec<f64>), AllocError> {
        match landing.at(eta) {
            Some((loss_sum, coefficients)) => Ok((
                self.value_with(w, loss_sum),
                self.gradient_from(w, coefficients)?,
            )),
            None => Ok((self.value(w, p), self.gradient(w, p)?)),
        }
    }
}

/// Each row's largest score t_i and e^(z_ik − t_i) for each of its scores, the rows of `z` being
/// K = `k` scores each: the exponentials of a chunk of rows at once, vectorized
/// ([`dense::map`]; one call of the C library's `exp` per score took a fifth of a solve on
/// rows of 13 non-zeros, PERF.md `## Batch solvers`).
fn shifted_exps(z: &[f64], k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut tops = Vec::with_capacity(z.len() / k);
    let mut exps = Vec::with_capacity(z.len());
    for row in z.chunks_exact(k) {
        let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        tops.push(top);
        exps.extend(row.iter().map(|&zk| zk - top));
    }
    dense::map(Elementwise::Exp, &mut exps);
    (tops, exps)
}

/// A row's exponentials ([`shifted_exps`]) times the reciprocal of their sum, which it
/// returns: the softmax p of the row and the sum [`loss_from`] takes. (One division a row,
/// not K: a division's throughput is several times a multiplication's.)
fn normalize(exps: &mut [f64]) -> f64 {
    let sum: f64 = exps.iter().sum();
    let inverse = 1.0 / sum;
    exps.iter_mut().for_each(|p| *p *= inverse);
    sum
}

/// log Σ_k e^(z_k) − z_y from the largest z_k (`top`) and Σ_k e^(z_k − top) (`sum`), without
/// overflow.
fn loss_from(top: f64, sum: f64, zy: f64) -> f64 {
    top + sum.ln() - zy
}

/// Minimize `objective` by L-BFGS with a strong-Wolfe step from `options.w0` or zero, as
/// [`lbfgs::solve`] minimizes the binary objective; `progress` sees every iteration.
pub fn solve<E: Examples>(
    objective: &Multinomial<'_, E>,
    options: &Options,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<Solution, SolveError> {
    let lambda = objective.lambda();
    if !(lambda > 0.0 && lambda.is_normal()) {
        return Err(SolveError::BadLambda(lambda));
    }
    if objective.total_rows == 0 {
        return Err(SolveError::NoRows);
    }
    super::check(
        super::Algorithm::Lbfgs,
        options,
        objective.dim(),
        objective.labels.len(),
    )?;
    let mut tracker = Tracker::new(progress);
    Ok(lbfgs::solve(
        objective,
        options,
        Wolfe::Strong,
        &mut tracker,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Stop;
    use crate::batch::objective::tests::{random_matrix, uniforms};
    use crate::batch::objective::{Objective, advance};
    use crate::data::CsrMatrix;
    use crate::loss::Loss;
    use sparselin_kernels::math;

    /// Three classes drawn for `x`'s rows, reproducible from `seed`.
    fn three_classes(x: &CsrMatrix, seed: u64) -> Vec<usize> {
        let mut next = uniforms(seed);
        (0..x.n_rows()).map(|_| (next() * 3.0) as usize).collect()
    }

    #[test]
    fn the_gradient_is_the_objective_s_derivative() {
        let x = random_matrix(60, 5, 3);
        let labels = three_classes(&x, 4);
        let mut next = uniforms(5);
        let weights: Vec<f64> = (0..60).map(|_| 2.0 * next()).collect();
        let objective = Multinomial::new(&x, labels, 3, Some(weights), 0.1);
        let w: Vec<f64> = (0..objective.dim()).map(|_| next() - 0.5).collect();
        let g = objective.gradient(&w, &objective.scores(&w)).unwrap();
        let h = 1e-6;
        for j in 0..objective.dim() {
            let (mut up, mut down) = (w.clone(), w.clone());
            up[j] += h;
            down[j] -= h;
            let difference = (objective.value(&up, &objective.scores(&up))
                - objective.value(&down, &objective.scores(&down)))
                / (2.0 * h);
            assert!(
                (difference - g[j]).abs() < 1e-7,
                "entry {j}: {difference} vs {}",
                g[j]
            );
        }
        // The ray is J along a direction, and its slope J's derivative there.
        let d: Vec<f64> = (0..objective.dim()).map(|_| next() - 0.5).collect();
        let (z, zd) = (objective.scores(&w), objective.scores(&d));
        let mut landing = objective.landing().unwrap();
        for eta in [0.0, 0.3, 2.0] {
            let point: Vec<f64> = w.iter().zip(&d).map(|(a, b)| a + eta * b).collect();
            let (value, slope) = objective.line(&w, &d, &z, &zd, &mut landing)(eta);
            let direct = objective.value(&point, &objective.scores(&point));
            assert!((value - direct).abs() < 1e-12, "{value} vs {direct}");
            let g = objective
                .gradient(&point, &objective.scores(&point))
                .unwrap();
            assert!((slope - dense::dot(&g, &d)).abs() < 1e-12);
        }
    }

    /// J and ∇J where the line's last evaluation landed are what a fresh evaluation at the
    /// advanced scores gives, bit for bit; at another step they are computed afresh.
    #[test]
    fn a_landing_gives_the_value_and_gradient_of_its_point() {
        let x = random_matrix(5000, 7, 11);
        let labels = three_classes(&x, 12);
        let mut next = uniforms(13);
        let weights: Vec<f64> = (0..5000).map(|i| (i % 4) as f64 * 0.5).collect();
        let objective = Multinomial::new(&x, labels, 3, Some(weights), 0.05);
        let w: Vec<f64> = (0..objective.dim()).map(|_| next() - 0.5).collect();
        let d: Vec<f64> = (0..objective.dim()).map(|_| 3.0 * next() - 1.5).collect();
        let (z, zd) = (objective.scores(&w), objective.scores(&d));
        let mut landing = objective.landing().unwrap();
        let bits = |(value, g): (f64, Vec<f64>)| {
            let mut bits: Vec<u64> = g.iter().map(|g| g.to_bits()).collect();
            bits.push(value.to_bits());
            bits
        };
        for (landed_at, asked_at) in [(0.7, 0.7), (1.9, 1.9), (0.7, 0.35)] {
            objective.line(&w, &d, &z, &zd, &mut landing)(landed_at);
            let point: Vec<f64> = w.iter().zip(&d).map(|(a, b)| a + asked_at * b).collect();
            let mut moved = z.clone();
            advance(&mut moved, &zd, asked_at);
            let fresh = (
                objective.value(&point, &moved),
                objective.gradient(&point, &moved).unwrap(),
            );
            let landed = objective
                .landed(&point, &moved, asked_at, &landing)
                .unwrap();
            assert_eq!(bits(landed), bits(fresh), "landed at {landed_at}");
        }
    }

    /// With two classes the optimum has w₀ = −w₁, so that u = w₁ − w₀ is binary logistic
    /// regression's optimum at λ/2 (its penalty λ/2·(‖w₀‖² + ‖w₁‖²) = (λ/2)/2·‖u‖²).
    #[test]
    fn two_classes_are_binary_logistic_regression_at_half_the_lambda() {
        let x = random_matrix(200, 8, 7);
        let labels: Vec<usize> = x.labels().iter().map(|&y| usize::from(y > 0.0)).collect();
        let options = Options {
            tol: 1e-14,
            ..Options::default()
        };
        let multinomial = Multinomial::new(&x, labels, 2, None, 0.02);
        let joint = solve(&multinomial, &options, &mut |_| {}).unwrap();
        let binary = Objective::new(&x, Loss::Log, 0.01, true);
        let single = super::super::solve(
            super::super::Algorithm::Lbfgs,
            &binary,
            &options,
            &mut |_| {},
        );
        let single = single.unwrap();
        let relative = (joint.objective - single.objective).abs() / single.objective;
        assert!(
            relative < 1e-10,
            "{} vs {}",
            joint.objective,
            single.objective
        );
        let (w0, w1) = joint.w.split_at(9);
        for j in 0..9 {
            assert!((w1[j] - w0[j] - single.w[j]).abs() < 1e-6, "weight {j}");
            assert!((w1[j] + w0[j]).abs() < 1e-6, "weight {j}: w₀ = −w₁");
        }
    }

    #[test]
    fn the_solution_is_the_same_on_any_number_of_threads() {
        let x = random_matrix(5000, 12, 11);
        let labels = three_classes(&x, 12);
        let objective = Multinomial::new(&x, labels, 3, None, 1e-3);
        let options = Options {
            max_iter: 30,
            ..Options::default()
        };
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| solve(&objective, &options, &mut |_| {}).unwrap())
        };
        let one = on(1);
        for threads in [2, 3] {
            let many = on(threads);
            assert_eq!(many.w, one.w, "{threads} threads");
            assert_eq!(many.objective.to_bits(), one.objective.to_bits());
        }
        // And it converges, certified.
        let converged = solve(&objective, &Options::default(), &mut |_| {}).unwrap();
        assert_eq!(converged.stop, Stop::Converged);
    }

    /// Scores and gradient through the row blocks, a class at a time, are each row's kernels'
    /// results, bit for bit: over rows that cross chunks, with weighted rows.
    #[test]
    fn scores_and_gradient_are_the_rows_sums_bit_for_bit() {
        let x = random_matrix(2 * CHUNK_ROWS + 7, 9, 21);
        let (m, k, width) = (x.n_rows(), 3, 10);
        let labels = three_classes(&x, 22);
        let mut next = uniforms(23);
        let weights: Vec<f64> = (0..m).map(|_| 2.0 * next()).collect();
        let objective = Multinomial::new(&x, labels.clone(), k, Some(weights.clone()), 0.1);
        let w: Vec<f64> = (0..objective.dim()).map(|_| next() - 0.5).collect();
        let z = objective.scores(&w);
        let mut expected_g = vec![0.0; objective.dim()];
        let mut columns = vec![vec![0.0; m]; k];
        let mut p = vec![0.0; k];
        for i in 0..m {
            let row = x.row(i);
            let zi: Vec<f64> = w
                .chunks_exact(width)
                .map(|b| sparse::dot(&b[..9], row.indices, row.values) + b[9])
                .collect();
            for class in 0..k {
                assert_eq!(z[i * k + class].to_bits(), zi[class].to_bits(), "row {i}");
            }
            // The softmax row by row, each exponential the scalar function's.
            let top = zi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            p.iter_mut()
                .zip(&zi)
                .for_each(|(p, &zk)| *p = math::exp(zk - top));
            let sum: f64 = p.iter().sum();
            let inverse = 1.0 / sum;
            p.iter_mut().for_each(|p| *p *= inverse);
            p[labels[i]] -= 1.0;
            for (class, block) in expected_g.chunks_exact_mut(width).enumerate() {
                let c = p[class] * (weights[i] / m as f64);
                if c != 0.0 {
                    sparse::axpy(c, row.indices, row.values, &mut block[..9]);
                }
                columns[class][i] = c;
            }
        }
        // Each bias the sum of its class's coefficients over the rows.
        for (block, column) in expected_g.chunks_exact_mut(width).zip(&columns) {
            block[9] = dense::sum(column);
        }
        dense::axpby(0.1, &w, 1.0, &mut expected_g);
        let g = objective.gradient(&w, &z).unwrap();
        assert_eq!(g, expected_g);
    }

    #[test]
    fn bad_settings_and_no_rows_are_errors() {
        let x = random_matrix(10, 3, 1);
        let labels = three_classes(&x, 2);
        let zero = Multinomial::new(&x, labels.clone(), 3, None, 0.0);
        assert!(matches!(
            solve(&zero, &Options::default(), &mut |_| {}),
            Err(SolveError::BadLambda(_))
        ));
        let empty = random_matrix(0, 3, 1);
        let none = Multinomial::new(&empty, vec![], 3, None, 0.1);
        assert!(matches!(
            solve(&none, &Options::default(), &mut |_| {}),
            Err(SolveError::NoRows)
        ));
        let start = Options {
            w0: Some(vec![0.0; 5]),
            ..Options::default()
        };
        let objective = Multinomial::new(&x, labels, 3, None, 0.1);
        assert!(matches!(
            solve(&objective, &start, &mut |_| {}),
            Err(SolveError::BadOption(_))
        ));
    }
}
