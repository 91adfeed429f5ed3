//! The batch objective of MATH.md §7 and its parallel, deterministic evaluation.
//!
//! J(w) = (λ/2)‖w‖² + (1/m) Σ_i s_i·c_{y_i}·ℓ(w·x_i, y_i), with the bias as an extra feature of
//! value 1 (so it sits at `w[n]` and is regularized, as in MATH.md §1 and `liblinear -B 1`),
//! c the class weights ([`WeightedLoss`]) and s the data's sample weights
//! ([`Examples::sample_weights`]), all 1 unless given.
//!
//! Every pass over the data is split into pieces fixed by the data alone, never by the thread
//! count: row products `X·v` write one output per row; sums over rows add fixed chunks of
//! [`CHUNK_ROWS`] rows and then the chunk sums in order; the transpose product `Xᵀc` gives each
//! fixed row block its own dense buffer and adds the buffers in block order. So J, ∇J and every
//! cache are bit-identical whatever the size of the rayon pool.
//!
//! The predictions p = Xw are the cache the solvers keep: a line search along d needs one
//! product X·d, after which every trial point costs O(m) ([`Ray`]), and the trial the search
//! accepts leaves behind the loss and its derivatives there, so that J and ∇J at the step need
//! only the transpose product ([`Landing`]).
//!
//! Distributed ([`Objective::distributed`]): the rows are this rank's share, m is the total
//! over all ranks, and every sum over rows (the mean loss, Xᵀc, the ray's value and slope) is
//! completed by the [`Reducer`]; products X·v stay local, one entry per local row.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Mutex;

use rayon::prelude::*;
use sparselin_kernels::{RowBlock, Values, dense, sparse};

use crate::data::Examples;
use crate::dist::{Local, Reducer};
use crate::loss::{Loss, WeightedLoss};
use crate::memory::{self, AllocError};

/// Rows per task for row-wise products and per partial sum (fixed: results do not depend on
/// the number of threads).
pub const CHUNK_ROWS: usize = 2048;

/// Most row blocks (dense buffers) a transpose product uses.
const MAX_BLOCKS: usize = 16;

/// J(w) over a data set, for one loss, one λ and, optionally, an L1 penalty λ₁‖w‖₁
/// ([`with_l1`](Self::with_l1)).
pub struct Objective<'a, E: Examples + 'a> {
    /// The rows, through the view built for hot loops ([`Examples::rows`]).
    data: E::Rows<'a>,
    loss: WeightedLoss,
    lambda: f64,
    /// λ₁ of the L1 term λ₁‖w‖₁ (0: none).
    l1: f64,
    bias: bool,
    targets: Vec<f64>,
    blocks: Vec<Range<usize>>,
    /// The row blocks' dense buffers of the last transpose product, kept for the next: a fresh
    /// buffer of n entries costs a page fault per 4 KiB (2 MiB where the kernel backs it with a
    /// huge page) on every evaluation, a fifth of OWL-QN's time on spamassassin. They live as
    /// long as the objective (blocks × n entries, what every evaluation allocates anyway; one
    /// vector more at subLBFGS's peak, `tests/allocation_failures.rs`).
    block_buffers: Mutex<Vec<Vec<f64>>>,
    reducer: &'a dyn Reducer,
    /// m: the rows of every rank.
    total_rows: usize,
}

impl<'a, E: Examples> Objective<'a, E> {
    /// The objective of `loss` (with its class weights, if any) with regularization `lambda`
    /// over `data`; with `bias` the weight vector gets one more entry, the weight of a
    /// constant feature 1.
    pub fn new(data: &'a E, loss: impl Into<WeightedLoss>, lambda: f64, bias: bool) -> Self {
        Self::distributed(data, loss, lambda, bias, &Local)
    }

    /// The objective over the rows of every rank of `reducer`, `data` being this rank's share
    /// (every rank must give the same loss, λ, bias and feature count). Sums its row count
    /// with the other ranks'.
    pub fn distributed(
        data: &'a E,
        loss: impl Into<WeightedLoss>,
        lambda: f64,
        bias: bool,
        reducer: &'a dyn Reducer,
    ) -> Self {
        let loss = loss.into();
        let data = data.rows();
        let targets = (0..data.n_rows())
            .map(|i| loss.target(data.row(i).label))
            .collect();
        let blocks = row_blocks(&data);
        let mut total = [data.n_rows() as f64];
        reducer.sum(&mut total);
        Objective {
            data,
            loss,
            lambda,
            l1: 0.0,
            bias,
            targets,
            blocks,
            block_buffers: Mutex::new(Vec::new()),
            reducer,
            total_rows: total[0] as usize,
        }
    }

    /// The same objective plus λ₁‖w‖₁ (over every entry of w, the bias included as liblinear
    /// includes it: the elastic net with λ > 0, L1 regularization alone with λ = 0). Only the
    /// value carries the term: [`gradient`](Self::gradient) stays the smooth part's, from
    /// which an L1 solver builds its pseudo-gradient.
    pub fn with_l1(mut self, l1: f64) -> Self {
        self.l1 = l1;
        self
    }

    /// λ₁ of the L1 term (0 when there is none).
    pub fn l1(&self) -> f64 {
        self.l1
    }

    /// The local rows, for a solver that visits them one at a time.
    pub fn rows(&self) -> &E::Rows<'a> {
        &self.data
    }

    /// The reducer completing the sums over rows.
    pub fn reducer(&self) -> &'a dyn Reducer {
        self.reducer
    }

    /// m: the rows of every rank (the divisor of the mean loss).
    pub fn total_rows(&self) -> usize {
        self.total_rows
    }

    /// Length of w: the feature count, plus one with the bias.
    pub fn dim(&self) -> usize {
        self.data.n_features() + usize::from(self.bias)
    }

    /// Number of local examples (m when not distributed).
    pub fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    /// Stored non-zeros of the local rows of X (without the bias column).
    pub fn nnz(&self) -> u64 {
        self.data.nnz()
    }

    /// The loss ℓ, unweighted.
    pub fn loss(&self) -> Loss {
        self.loss.loss()
    }

    /// The loss with its class weights: the term c_{y_i}·ℓ each row adds.
    pub fn weighted_loss(&self) -> WeightedLoss {
        self.loss
    }

    /// The regularization λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// Whether `w[n]` is a bias.
    pub fn has_bias(&self) -> bool {
        self.bias
    }

    /// The labels as the loss sees them (±1 for classification).
    pub fn targets(&self) -> &[f64] {
        &self.targets
    }

    /// The local rows' sample weights s_i, if the data has them.
    pub fn sample_weights(&self) -> Option<&[f64]> {
        self.data.sample_weights()
    }

    /// X·v, one entry per local row (v has length [`dim`](Self::dim)): the predictions when v = w,
    /// the rate of change of the predictions along a direction when v = d.
    pub fn product(&self, v: &[f64]) -> Vec<f64> {
        self.product_where(v, |_| true)
    }

    /// X·v on the local rows i with `keep(i)`, 0 on the others: a Newton step's products need
    /// only the rows of non-zero curvature (for the squared hinge, those inside the margin).
    /// Each run of kept rows goes to the row-block kernel in one call.
    pub fn product_where(&self, v: &[f64], keep: impl Fn(usize) -> bool + Sync) -> Vec<f64> {
        assert_eq!(v.len(), self.dim(), "product: wrong dimension");
        let n = self.data.n_features();
        let (weights, bias) = (&v[..n], if self.bias { v[n] } else { 0.0 });
        let mut out = vec![0.0; self.n_rows()];
        out.par_chunks_mut(CHUNK_ROWS)
            .enumerate()
            .for_each(|(c, chunk)| {
                let first = c * CHUNK_ROWS;
                let rows = first..first + chunk.len();
                self.data.for_each_block(rows, &mut |row, block| {
                    let out = &mut chunk[row - first..][..block.len()];
                    let mut k = 0;
                    while k < block.len() {
                        if !keep(row + k) {
                            k += 1;
                            continue;
                        }
                        let start = k;
                        while k < block.len() && keep(row + k) {
                            k += 1;
                        }
                        let kept = &mut out[start..k];
                        sparse::dot_rows(weights, block.rows(start..k), kept);
                        kept.iter_mut().for_each(|o| *o += bias);
                    }
                });
            });
        out
    }

    /// Xᵀc (length [`dim`](Self::dim)): Σ_i c_i [x_i, 1] over the rows of every rank, c holding
    /// the local rows' c_i. Rows with c_i = 0 are skipped. Like every vector of one entry per
    /// feature the evaluation makes, the result and the blocks' buffers are allocated
    /// fallibly.
    pub fn transpose_product(&self, c: &[f64]) -> Result<Vec<f64>, AllocError> {
        self.transpose_of(Entries::Values, c)
    }

    /// Σ_i c_i [x_i², 1] (length [`dim`](Self::dim)), the squares taken entry by entry, over
    /// the rows of every rank: the diagonal of Xᵀ·diag(c)·X, which a Newton solver's diagonal
    /// preconditioner takes from the rows' curvatures c. Rows with c_i = 0 are skipped.
    pub fn transpose_squares(&self, c: &[f64]) -> Result<Vec<f64>, AllocError> {
        self.transpose_of(Entries::Squares, c)
    }

    /// Σ_i c_i [x_i, 1] or [x_i², 1] (`entries`) over the rows of every rank.
    fn transpose_of(&self, entries: Entries, c: &[f64]) -> Result<Vec<f64>, AllocError> {
        assert_eq!(c.len(), self.n_rows(), "transpose: wrong length");
        let name = match entries {
            Entries::Values => "gradient",
            Entries::Squares => "diagonal",
        };
        let zeros = memory::filled(name, self.dim(), 0.0)?;
        let mut out = self.local_transpose(zeros, entries, |i| c[i])?;
        self.reducer.sum(&mut out);
        Ok(out)
    }

    /// `start` + Σ_i coefficient(i) [x_i, 1] over the local rows (not summed over ranks), or
    /// of the rows' squares, rows with a zero coefficient skipped: each fixed row block fills
    /// its own dense buffer, and the buffers are added to `start` in block order.
    fn local_transpose(
        &self,
        mut out: Vec<f64>,
        entries: Entries,
        coefficient: impl Fn(usize) -> f64 + Sync,
    ) -> Result<Vec<f64>, AllocError> {
        let buffers = self
            .blocks
            .par_iter()
            .map(|rows| {
                let mut g = self.block_buffer()?;
                self.add_rows(&mut g, rows.clone(), entries, &coefficient);
                Ok(g)
            })
            .collect::<Result<Vec<Vec<f64>>, AllocError>>()?;
        out.par_chunks_mut(CHUNK_ROWS * 4)
            .enumerate()
            .for_each(|(c, chunk)| {
                let start = c * CHUNK_ROWS * 4;
                for b in &buffers {
                    dense::axpby(1.0, &b[start..start + chunk.len()], 1.0, chunk);
                }
            });
        if let Ok(mut kept) = self.block_buffers.lock() {
            kept.extend(buffers);
        }
        Ok(out)
    }

    /// A zeroed buffer of [`dim`](Self::dim) entries: one kept from an earlier product, or a
    /// new one.
    fn block_buffer(&self) -> Result<Vec<f64>, AllocError> {
        let kept = self
            .block_buffers
            .lock()
            .ok()
            .and_then(|mut kept| kept.pop());
        match kept {
            Some(mut g) => {
                g.fill(0.0);
                Ok(g)
            }
            None => memory::filled("partial gradients", self.dim(), 0.0),
        }
    }

    /// g += Σ_{i ∈ rows} coefficient(i) [x_i, 1] (or of the squares): the rows go to the
    /// row-block kernel a stored run at a time, in row order (rows with a zero coefficient
    /// skipped), and the bias's share is one sum over the range.
    fn add_rows(
        &self,
        g: &mut [f64],
        rows: Range<usize>,
        entries: Entries,
        coefficient: impl Fn(usize) -> f64,
    ) {
        let n = self.data.n_features();
        let coefficients: Vec<f64> = rows.clone().map(coefficient).collect();
        self.data.for_each_block(rows.clone(), &mut |first, block| {
            let coefficients = &coefficients[first - rows.start..][..block.len()];
            match entries {
                Entries::Values => sparse::axpy_rows(coefficients, block, &mut g[..n]),
                Entries::Squares => add_squares(coefficients, block, &mut g[..n]),
            }
        });
        // Summed over the whole range, not run by run: the runs follow the shards, and the
        // result must not.
        if self.bias {
            g[n] += dense::sum(&coefficients);
        }
    }

    /// λw + (1/m)Xᵀc like [`subgradient`](Self::subgradient), with Xᵀc updated from `cache`
    /// (the c of an earlier call, whose buffer is reused) as Xᵀc₀ + Xᵀ(c − c₀), an axpy per row
    /// where c_i ≠ c₀_i, or recomputed when that is no cheaper (more changed rows than non-zero
    /// c_i, or no cache); an update of fewer than m/`MAX_BLOCKS` rows runs serially, in row
    /// order. Near a hinge optimum few rows change sides between iterates, so the update
    /// touches a small fraction of X. Returns the subgradient, the cache for c, and the fraction
    /// of the local rows touched (the work in passes). The result depends on the cache only
    /// through rounding, and, like every evaluation, not on the thread count.
    pub fn cached_subgradient(
        &self,
        w: &[f64],
        c: Vec<f64>,
        cache: Option<TransposeCache>,
    ) -> Result<(Vec<f64>, TransposeCache, f64), AllocError> {
        let (local, touched) = match cache {
            Some(TransposeCache { c: c0, local }) => {
                self.local_transpose_near(&c, &c0, Cow::Owned(local))?
            }
            None => self.local_transpose_near(&c, &[], Cow::Owned(Vec::new()))?,
        };
        let g = self.subgradient_from(w, memory::copied("subgradient", &local)?);
        let work = touched as f64 / self.n_rows().max(1) as f64;
        Ok((g, TransposeCache { c, local }, work))
    }

    /// The subgradient and work of [`cached_subgradient`](Self::cached_subgradient) for `c`,
    /// leaving `cache` as it is: for trial subgradients at the same point.
    pub fn subgradient_near(
        &self,
        w: &[f64],
        c: &[f64],
        cache: &TransposeCache,
    ) -> Result<(Vec<f64>, f64), AllocError> {
        let (local, touched) =
            self.local_transpose_near(c, &cache.c, Cow::Borrowed(&cache.local))?;
        let work = touched as f64 / self.n_rows().max(1) as f64;
        Ok((self.subgradient_from(w, local), work))
    }

    /// This rank's Xᵀc and the rows touched, updated from the Xᵀc₀ that `local` holds for `c0`
    /// (empty: none), or recomputed; an owned `local` is the buffer either way, a borrowed one
    /// is copied only for an update.
    fn local_transpose_near(
        &self,
        c: &[f64],
        c0: &[f64],
        local: Cow<'_, [f64]>,
    ) -> Result<(Vec<f64>, usize), AllocError> {
        assert_eq!(c.len(), self.n_rows(), "cached_subgradient: wrong length");
        let nonzero = c.iter().filter(|&&v| v != 0.0).count();
        if c0.len() == c.len() {
            let changed = c.iter().zip(c0).filter(|(a, b)| a != b).count();
            if changed < nonzero {
                let delta = |i: usize| c[i] - c0[i];
                let mut local = match local {
                    Cow::Owned(buffer) => buffer,
                    Cow::Borrowed(buffer) => memory::copied("subgradient", buffer)?,
                };
                if changed * MAX_BLOCKS <= self.n_rows() {
                    // Less than a block's share of rows: one pass in row order into Xᵀc₀ costs
                    // less than zeroing and adding the blocks' dense buffers.
                    self.add_rows(&mut local, 0..self.n_rows(), Entries::Values, delta);
                } else {
                    local = self.local_transpose(local, Entries::Values, delta)?;
                }
                return Ok((local, changed));
            }
        }
        let zeros = match local {
            Cow::Owned(mut buffer) if buffer.len() == self.dim() => {
                buffer.fill(0.0);
                buffer
            }
            _ => memory::filled("subgradient", self.dim(), 0.0)?,
        };
        Ok((
            self.local_transpose(zeros, Entries::Values, |i| c[i])?,
            nonzero,
        ))
    }

    /// λw + (1/m) Σ over ranks of their Xᵀc, from this rank's part.
    fn subgradient_from(&self, w: &[f64], mut transposed: Vec<f64>) -> Vec<f64> {
        self.reducer.sum(&mut transposed);
        dense::axpby(
            self.lambda,
            w,
            1.0 / self.total_rows as f64,
            &mut transposed,
        );
        transposed
    }

    /// (1/m) Σ_i s_i·c_{y_i}·ℓ(p_i, y_i) over every rank, from the local rows' predictions p.
    pub fn mean_loss(&self, p: &[f64]) -> f64 {
        fn loss_sum(loss: WeightedLoss, p: &[f64], y: &[f64], s: impl RowWeights) -> f64 {
            fixed_sum(p.len(), |rows| {
                let mut values = vec![0.0; rows.len()];
                loss.values(&p[rows.clone()], &y[rows.clone()], &mut values);
                s.weighted_sum(rows, &mut values)
            })
        }
        let (loss, y) = (self.loss, &self.targets);
        let mut sum = [match self.sample_weights() {
            Some(s) => loss_sum(loss, p, y, s),
            None => loss_sum(loss, p, y, Unweighted),
        }];
        self.reducer.sum(&mut sum);
        sum[0] / self.total_rows as f64
    }

    /// J(w) from w and its predictions p = Xw.
    pub fn value(&self, w: &[f64], p: &[f64]) -> f64 {
        self.value_with(w, self.mean_loss(p))
    }

    /// J(w) from w and its predictions p, each local row's s_i·c_{y_i}·ℓ'(p_i) written to
    /// `derivatives`: [`value`](Self::value) and [`derivatives`](Self::derivatives), the same
    /// bits, from one pass over the rows' losses (for the log loss one exponential per row,
    /// [`WeightedLoss::values_and_derivatives`]), for a search that takes the gradient of the
    /// point it accepts. Panics unless `derivatives` has one entry per local row.
    pub fn value_keeping_derivatives(&self, w: &[f64], p: &[f64], derivatives: &mut [f64]) -> f64 {
        fn loss_sum(
            loss: WeightedLoss,
            p: &[f64],
            y: &[f64],
            s: impl RowWeights,
            derivatives: &mut [f64],
        ) -> f64 {
            let sums = fixed_sum2_into(derivatives, |rows, derivatives| {
                let (p_rows, y_rows) = (&p[rows.clone()], &y[rows.clone()]);
                (
                    loss_and_derivatives(loss, p_rows, y_rows, s, rows, derivatives),
                    0.0,
                )
            });
            sums.0
        }
        assert_eq!(derivatives.len(), p.len(), "one derivative per row");
        let (loss, y) = (self.loss, &self.targets);
        let mut sum = [match self.sample_weights() {
            Some(s) => loss_sum(loss, p, y, s, derivatives),
            None => loss_sum(loss, p, y, Unweighted, derivatives),
        }];
        self.reducer.sum(&mut sum);
        self.value_with(w, sum[0] / self.total_rows as f64)
    }

    /// J(w) from w and the mean loss of its predictions.
    fn value_with(&self, w: &[f64], mean_loss: f64) -> f64 {
        let smooth = 0.5 * self.lambda * dense::norm2(w) + mean_loss;
        if self.l1 > 0.0 {
            smooth + self.l1 * norm1(w)
        } else {
            smooth
        }
    }

    /// A lower bound on J* for an objective with an L1 term and a smooth loss, from an iterate
    /// w, its predictions p = Xw and its smooth part's gradient: D(α) ≤ J*, for the Fenchel
    /// dual D of J = Σ_i ℓ_i(x_i·w) + g(w), g = (λ/2)‖·‖² + λ₁‖·‖₁, at the dual point
    /// α_i = −θ·s_i·c_{y_i}·ℓ'(p_i)/m that w's own derivatives give. With λ > 0, θ = 1 and
    /// g*(z) = ‖max(|z| − λ₁, 0)‖²/(2λ); with λ = 0, g* is 0 on ‖z‖∞ ≤ λ₁ and +∞ beyond, so
    /// θ ≤ 1 shrinks α into that box. At the minimum D(α) = J(w), so J(w) − D(α), the duality
    /// gap, certifies a relative suboptimality (the role ‖g‖²/(2λ) plays without L1). −∞ for
    /// a loss without a conjugate ([`Loss::conjugate`]).
    pub fn dual_bound(&self, w: &[f64], p: &[f64], smooth_gradient: &[f64]) -> f64 {
        // z = Xᵀα at θ = 1: minus the loss part of the smooth gradient.
        let z = smooth_gradient
            .iter()
            .zip(w)
            .map(|(g, w)| self.lambda * w - g);
        let (theta, penalty_conjugate) = if self.lambda > 0.0 {
            let excess = z.map(|z| (z.abs() - self.l1).max(0.0).powi(2)).sum::<f64>();
            (1.0, excess / (2.0 * self.lambda))
        } else {
            let largest = z.fold(0.0f64, |m, z| m.max(z.abs()));
            let theta = if largest > self.l1 {
                self.l1 / largest
            } else {
                1.0
            };
            (theta, 0.0)
        };
        fn conjugate_sum(
            loss: WeightedLoss,
            theta: f64,
            p: &[f64],
            y: &[f64],
            s: impl RowWeights,
        ) -> f64 {
            let raw = loss.loss();
            fixed_sum(p.len(), |rows| {
                // ℓ*(θ·ℓ'(p_i)) for a chunk of rows at once (the log loss's vectorized).
                let (p, y_rows) = (&p[rows.clone()], &y[rows.clone()]);
                let mut v = vec![0.0; p.len()];
                raw.derivatives(p, y_rows, &mut v);
                v.iter_mut().for_each(|v| *v *= theta);
                let mut conjugates = vec![0.0; p.len()];
                raw.conjugates(&v, y_rows, &mut conjugates);
                rows.zip(&conjugates)
                    .map(|(i, &conjugate)| {
                        let weight = s.at(i) * loss.weight(y[i]);
                        if weight == 0.0 {
                            0.0
                        } else {
                            weight * conjugate
                        }
                    })
                    .sum::<f64>()
            })
        }
        let (loss, y) = (self.loss, &self.targets);
        let mut sum = [match self.sample_weights() {
            Some(s) => conjugate_sum(loss, theta, p, y, s),
            None => conjugate_sum(loss, theta, p, y, Unweighted),
        }];
        self.reducer.sum(&mut sum);
        -sum[0] / self.total_rows as f64 - penalty_conjugate
    }

    /// s_i·c_{y_i}·ℓ'(p_i, y_i) for every row (the loss's own choice at a kink).
    pub fn derivatives(&self, p: &[f64]) -> Vec<f64> {
        self.per_row(p, WeightedLoss::derivatives)
    }

    /// s_i·c_{y_i}·ℓ''(p_i, y_i) for every row: the curvatures of the loss part of J (times
    /// m) a Newton step models ([`Loss::second_derivative`](crate::loss::Loss::second_derivative)).
    pub fn curvatures(&self, p: &[f64]) -> Vec<f64> {
        self.per_row(p, WeightedLoss::second_derivatives)
    }

    /// s_i·t_i for every row, t the terms `fill(loss, p, y, t)` writes for a chunk of rows
    /// (all of a chunk's terms at once: the log loss's are vectorized), in parallel over fixed
    /// chunks.
    fn per_row<F>(&self, p: &[f64], fill: F) -> Vec<f64>
    where
        F: Fn(WeightedLoss, &[f64], &[f64], &mut [f64]) + Sync,
    {
        let (loss, y, weights) = (self.loss, &self.targets, self.sample_weights());
        let mut out = vec![0.0; p.len()];
        out.par_chunks_mut(CHUNK_ROWS)
            .enumerate()
            .for_each(|(c, chunk)| {
                let rows = c * CHUNK_ROWS..c * CHUNK_ROWS + chunk.len();
                fill(loss, &p[rows.clone()], &y[rows.clone()], chunk);
                if let Some(s) = weights {
                    s.weigh(rows, chunk);
                }
            });
        out
    }

    /// λw + (1/m) Xᵀc: the (sub)gradient whose loss part has derivative c_i at row i.
    pub fn subgradient(&self, w: &[f64], c: &[f64]) -> Result<Vec<f64>, AllocError> {
        let mut g = self.transpose_product(c)?;
        dense::axpby(self.lambda, w, 1.0 / self.total_rows as f64, &mut g);
        Ok(g)
    }

    /// ∇J(w) = λw + (1/m) Xᵀℓ'(p, y), given p = Xw.
    pub fn gradient(&self, w: &[f64], p: &[f64]) -> Result<Vec<f64>, AllocError> {
        self.subgradient(w, &self.derivatives(p))
    }

    /// A [`Landing`] for this objective's rows, for [`Ray::eval_keeping`] to fill.
    pub fn landing(&self) -> Result<Landing, AllocError> {
        Landing::new("loss derivatives", self.n_rows())
    }

    /// J(w) and ∇J(w) at w = w₀ + ηd with predictions p, which [`advance`] moved along the
    /// ray: from what the ray's last evaluation kept when it was at this η, bit for bit
    /// [`value`](Self::value) and [`gradient`](Self::gradient) without their pass over the
    /// rows' losses; computed afresh otherwise.
    pub fn landed(
        &self,
        w: &[f64],
        p: &[f64],
        eta: f64,
        landing: &Landing,
    ) -> Result<(f64, Vec<f64>), AllocError> {
        match landing.at(eta) {
            Some((loss_sum, derivatives)) => Ok((
                self.value_with(w, loss_sum / self.total_rows as f64),
                self.subgradient(w, derivatives)?,
            )),
            None => Ok((self.value(w, p), self.gradient(w, p)?)),
        }
    }

    /// J restricted to the ray w + ηd, from the predictions p = Xw and xd = X·d.
    pub fn ray<'r>(&'r self, w: &[f64], d: &[f64], p: &'r [f64], xd: &'r [f64]) -> Ray<'r> {
        Ray {
            p,
            xd,
            targets: &self.targets,
            sample_weights: self.sample_weights(),
            loss: self.loss,
            lambda: self.lambda,
            rows: self.total_rows as f64,
            reducer: self.reducer,
            ww: dense::norm2(w),
            wd: dense::dot(w, d),
            dd: dense::norm2(d),
        }
    }
}

/// The loss derivatives c of a subgradient and this rank's part of Xᵀc, from which
/// [`Objective::cached_subgradient`] updates Xᵀc for a nearby c.
#[derive(Clone)]
pub struct TransposeCache {
    c: Vec<f64>,
    /// Σ_i c_i [x_i, 1] over the local rows.
    local: Vec<f64>,
}

/// p + η·(Xd): a row's prediction at w + ηd, as [`Ray`] computes its trial points.
#[inline(always)]
pub(super) fn along(p: f64, xd: f64, eta: f64) -> f64 {
    p + eta * xd
}

/// p ← p + η·Xd, the predictions at the step a solver takes along a ray, bit for bit the
/// ray's own trial point there (which a [`Landing`] relies on).
pub fn advance(p: &mut [f64], xd: &[f64], eta: f64) {
    assert_eq!(p.len(), xd.len(), "advance: lengths differ");
    p.par_chunks_mut(CHUNK_ROWS)
        .zip(xd.par_chunks(CHUNK_ROWS))
        .for_each(|(p, xd)| {
            for (p, &xd) in p.iter_mut().zip(xd) {
                *p = along(*p, xd, eta);
            }
        });
}

/// What a line's evaluation keeps of the point it reached, so that J and ∇J there cost no
/// second pass over the rows' losses ([`Objective::landed`], and the multinomial objective's):
/// its η, the loss sum over every rank's rows, and the terms ∇J is made of there (the local
/// rows' s_i·c_{y_i}·ℓ'(q_i); the multinomial's class-major coefficients). A solver that
/// evaluates J and ∇J at each step it takes would otherwise compute every row's loss and
/// derivative twice, once on the line and once at the step: on rows of a few non-zeros the
/// log loss's exponentials and logarithms cost as much as a sparse pass (PERF.md `## Batch
/// solvers`).
pub struct Landing {
    /// The η of the evaluation kept; `None` before the first.
    eta: Option<f64>,
    loss_sum: f64,
    terms: Vec<f64>,
}

impl Landing {
    /// An empty landing of `len` terms (`what` names them if they cannot be allocated).
    pub(super) fn new(what: &'static str, len: usize) -> Result<Landing, AllocError> {
        Ok(Landing {
            eta: None,
            loss_sum: 0.0,
            terms: memory::filled(what, len, 0.0)?,
        })
    }

    /// The terms, for an evaluation to write; [`kept`](Self::kept) then records it.
    pub(super) fn terms_mut(&mut self) -> &mut [f64] {
        &mut self.terms
    }

    /// Records that the terms are those of the evaluation at η, whose loss sum is `loss_sum`.
    pub(super) fn kept(&mut self, eta: f64, loss_sum: f64) {
        (self.eta, self.loss_sum) = (Some(eta), loss_sum);
    }

    /// The loss sum and the terms, if the last evaluation kept was at η.
    pub(super) fn at(&self, eta: f64) -> Option<(f64, &[f64])> {
        (self.eta.map(f64::to_bits) == Some(eta.to_bits())).then_some((self.loss_sum, &self.terms))
    }
}

/// Φ(η) = J(w + ηd) evaluated in O(m) per point from cached products.
pub struct Ray<'r> {
    /// Predictions at η = 0.
    pub p: &'r [f64],
    /// X·d.
    pub xd: &'r [f64],
    /// Labels as the loss sees them.
    pub targets: &'r [f64],
    /// The local rows' sample weights (`None`: all 1).
    pub sample_weights: Option<&'r [f64]>,
    /// The loss, with its class weights.
    pub loss: WeightedLoss,
    /// λ.
    pub lambda: f64,
    /// m, the rows of every rank (`p.len()` when not distributed).
    pub rows: f64,
    /// Completes the sums over rows.
    pub reducer: &'r dyn Reducer,
    /// ‖w‖².
    pub ww: f64,
    /// ⟨w, d⟩.
    pub wd: f64,
    /// ‖d‖².
    pub dd: f64,
}

impl Ray<'_> {
    /// s_i, the weight of local row `i`'s loss.
    #[inline]
    pub fn sample_weight(&self, i: usize) -> f64 {
        self.sample_weights.map_or(1.0, |s| s[i])
    }

    /// Φ(η) and Φ'(η) (with the loss's own derivative at a kink).
    pub fn eval(&self, eta: f64) -> (f64, f64) {
        self.eval_into(eta, None).0
    }

    /// [`eval`](Self::eval), keeping in `landing` what J and ∇J at w + ηd need.
    pub fn eval_keeping(&self, eta: f64, landing: &mut Landing) -> (f64, f64) {
        let (phi, loss_sum) = self.eval_into(eta, Some(landing.terms_mut()));
        landing.kept(eta, loss_sum);
        phi
    }

    /// (Φ(η), Φ'(η)) and the loss sum over every rank, the rows' weighted loss derivatives
    /// written to `derivatives` if given.
    fn eval_into(&self, eta: f64, derivatives: Option<&mut [f64]>) -> ((f64, f64), f64) {
        let pair = match self.sample_weights {
            Some(s) => self.loss_sums(eta, s, derivatives),
            None => self.loss_sums(eta, Unweighted, derivatives),
        };
        let m = self.rows;
        let mut pair = [pair.0, pair.1];
        self.reducer.sum(&mut pair);
        let norm = self.ww + 2.0 * eta * self.wd + eta * eta * self.dd;
        let phi = (
            0.5 * self.lambda * norm + pair[0] / m,
            self.lambda * (self.wd + eta * self.dd) + pair[1] / m,
        );
        (phi, pair[0])
    }
}

impl Ray<'_> {
    /// This rank's Σ_i s_i·ℓ(q_i) and Σ_i s_i·ℓ'(q_i)·(Xd)_i at q = p + η·Xd, and each
    /// s_i·ℓ'(q_i) in `derivatives` if given (one per local row).
    fn loss_sums(
        &self,
        eta: f64,
        s: impl RowWeights,
        derivatives: Option<&mut [f64]>,
    ) -> (f64, f64) {
        let (p, xd, y, loss) = (self.p, self.xd, self.targets, self.loss);
        let chunk = |rows: Range<usize>, slopes: &mut [f64]| {
            let q: Vec<f64> = rows.clone().map(|i| along(p[i], xd[i], eta)).collect();
            let y_rows = &y[rows.clone()];
            let value = loss_and_derivatives(loss, &q, y_rows, s, rows.clone(), slopes);
            (value, dense::dot(slopes, &xd[rows]))
        };
        match derivatives {
            Some(out) => {
                assert_eq!(out.len(), p.len(), "ray: one derivative per row");
                fixed_sum2_into(out, chunk)
            }
            None => fixed_sum2(p.len(), |rows| {
                chunk(rows.clone(), &mut vec![0.0; rows.len()])
            }),
        }
    }
}

/// Σ_i s_i·c_{y_i}·ℓ(q_i) over a chunk of rows (`rows`, whose predictions are `q` and labels
/// `y`), each s_i·c_{y_i}·ℓ'(q_i) written to `derivatives`: what J's value and its gradient's
/// coefficients need of the chunk, from one pass over its losses.
fn loss_and_derivatives(
    loss: WeightedLoss,
    q: &[f64],
    y: &[f64],
    s: impl RowWeights,
    rows: Range<usize>,
    derivatives: &mut [f64],
) -> f64 {
    let mut values = vec![0.0; q.len()];
    loss.values_and_derivatives(q, y, &mut values, derivatives);
    s.weigh(rows.clone(), derivatives);
    s.weighted_sum(rows, &mut values)
}

/// The sample weights a loop over rows multiplies by: a slice, or [`Unweighted`], whose
/// constant 1 the compiled loop multiplies away, so that without weights the loops over rows
/// cost what they did before there were any, and give the same bits.
pub(super) trait RowWeights: Copy + Sync {
    /// s_i.
    fn at(self, i: usize) -> f64;

    /// v_k ← s_i·v_k for the rows i = `rows.start` + k.
    fn weigh(self, rows: Range<usize>, v: &mut [f64]);

    /// Σ_k s_i·v_k over the rows i = `rows.start` + k, `v` left weighed ([`dense::sum`]).
    fn weighted_sum(self, rows: Range<usize>, v: &mut [f64]) -> f64 {
        self.weigh(rows, v);
        dense::sum(v)
    }
}

/// Every row weighs 1.
#[derive(Clone, Copy)]
pub(super) struct Unweighted;

impl RowWeights for Unweighted {
    #[inline(always)]
    fn at(self, _: usize) -> f64 {
        1.0
    }

    #[inline(always)]
    fn weigh(self, _: Range<usize>, _: &mut [f64]) {}
}

impl RowWeights for &[f64] {
    #[inline(always)]
    fn at(self, i: usize) -> f64 {
        self[i]
    }

    fn weigh(self, rows: Range<usize>, v: &mut [f64]) {
        for (v, &s) in v.iter_mut().zip(&self[rows]) {
            *v *= s;
        }
    }
}

/// Which of a row's entries a transpose product adds.
#[derive(Clone, Copy)]
enum Entries {
    /// x_i itself: Xᵀc.
    Values,
    /// The squares x_ij²: the diagonal of Xᵀ·diag(c)·X.
    Squares,
}

/// g_j += c_r·x_rj² over the entries of each row r of `block` whose c_r is not 0 (once per
/// Newton iteration, so no kernel of its own).
fn add_squares(c: &[f64], block: RowBlock<'_>, g: &mut [f64]) {
    let (indices, values) = (block.indices().as_slice(), block.values());
    for (&c, ends) in c.iter().zip(block.offsets().windows(2)) {
        if c == 0.0 {
            continue;
        }
        let row = ends[0] as usize..ends[1] as usize;
        let indices = &indices[row.clone()];
        match values.slice(row) {
            Values::Ones => indices.iter().for_each(|&j| g[j as usize] += c),
            Values::F32(v) => {
                for (&j, &x) in indices.iter().zip(v) {
                    g[j as usize] += c * f64::from(x) * f64::from(x);
                }
            }
            Values::F64(v) => {
                for (&j, &x) in indices.iter().zip(v) {
                    g[j as usize] += c * x * x;
                }
            }
        }
    }
}

/// ‖w‖₁.
fn norm1(w: &[f64]) -> f64 {
    w.iter().map(|w| w.abs()).sum()
}

/// Σ over fixed chunks of `0..len`, the chunk sums added in order (deterministic).
pub fn fixed_sum(len: usize, part: impl Fn(Range<usize>) -> f64 + Sync) -> f64 {
    fixed_sum2(len, |rows| (part(rows), 0.0)).0
}

/// Two sums at once, as [`fixed_sum`].
pub fn fixed_sum2(len: usize, part: impl Fn(Range<usize>) -> (f64, f64) + Sync) -> (f64, f64) {
    let chunks = len.div_ceil(CHUNK_ROWS);
    let partial: Vec<(f64, f64)> = (0..chunks)
        .into_par_iter()
        .map(|c| part(c * CHUNK_ROWS..((c + 1) * CHUNK_ROWS).min(len)))
        .collect();
    add_in_order(&partial)
}

/// [`fixed_sum2`] whose parts also write one entry per row of `out`, each part its chunk's.
fn fixed_sum2_into(
    out: &mut [f64],
    part: impl Fn(Range<usize>, &mut [f64]) -> (f64, f64) + Sync,
) -> (f64, f64) {
    let partial: Vec<(f64, f64)> = out
        .par_chunks_mut(CHUNK_ROWS)
        .enumerate()
        .map(|(c, chunk)| part(c * CHUNK_ROWS..c * CHUNK_ROWS + chunk.len(), chunk))
        .collect();
    add_in_order(&partial)
}

/// The chunk sums added in order.
pub(super) fn add_in_order(partial: &[(f64, f64)]) -> (f64, f64) {
    partial
        .iter()
        .fold((0.0, 0.0), |acc, x| (acc.0 + x.0, acc.1 + x.1))
}

/// Row blocks for the transpose product, balanced by non-zeros. Their number depends only on
/// the data: enough blocks to keep two or more workers busy, few enough that zeroing and adding
/// the dense buffers (blocks × n) stays below half the sparse work (nnz).
fn row_blocks<E: Examples>(data: &E) -> Vec<Range<usize>> {
    let (m, nnz) = (data.n_rows(), data.nnz().max(1) as usize);
    let n = data.n_features().max(1);
    let count = (nnz / (2 * n))
        .clamp(2, MAX_BLOCKS)
        .min(m.div_ceil(CHUNK_ROWS))
        .max(1);
    let per_block = nnz.div_ceil(count);
    let mut blocks = Vec::with_capacity(count);
    let (mut start, mut filled) = (0, 0);
    for i in 0..m {
        filled += data.row(i).nnz();
        if filled >= per_block && blocks.len() + 1 < count {
            blocks.push(start..i + 1);
            start = i + 1;
            filled = 0;
        }
    }
    blocks.push(start..m);
    blocks
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::data::{CsrMatrix, SampleWeighted, ValueVec};
    use crate::loss::ClassWeights;

    /// The reproducible uniforms in [0, 1) that the batch tests draw their cases from: a 64-bit
    /// LCG started at `state`, each value its top 53 bits.
    pub(crate) fn uniforms(mut state: u64) -> impl FnMut() -> f64 {
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A small random sparse matrix, reproducible from `seed`.
    pub(crate) fn random_matrix(m: usize, n: usize, seed: u64) -> CsrMatrix {
        let mut next = uniforms(seed.wrapping_mul(6364136223846793005).wrapping_add(1));
        let (mut labels, mut offsets, mut indices, mut values) =
            (vec![], vec![0u64], vec![], vec![]);
        for _ in 0..m {
            for j in 0..n {
                if next() < 0.3 {
                    indices.push(j as u32);
                    values.push(next() * 2.0 - 1.0);
                }
            }
            offsets.push(indices.len() as u64);
            labels.push(if next() < 0.5 { 1.0 } else { -1.0 });
        }
        CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), n).unwrap()
    }

    /// [`random_matrix`] relabelled by a planted separator with a few flipped labels. With λ =
    /// 0.1 subLBFGS converges in ~40 iterations; with small λ it stalls slowly near the optimum
    /// (many rows on the margin), where runs that differ only by rounding drift apart by ~1e-9.
    pub(crate) fn planted(m: usize, n: usize, seed: u64) -> CsrMatrix {
        let x = random_matrix(m, n, seed);
        let labels = (0..m)
            .map(|i| {
                let row = x.row(i);
                let score: f64 = (0..row.nnz())
                    .map(|k| row.values.get(k) * (row.indices[k] as f64 * 0.7).sin())
                    .sum();
                let flip = i % 50 == 7;
                if (score > 0.1) != flip { 1.0 } else { -1.0 }
            })
            .collect();
        CsrMatrix::new(
            labels,
            x.offsets().to_vec(),
            x.indices().to_vec(),
            x.values().clone(),
            n,
        )
        .unwrap()
    }

    /// J and ∇J by a dense loop over the rows, each row's loss times c₊ or c₋ by its label
    /// and by its sample weight, if given.
    fn dense_reference(
        x: &CsrMatrix,
        w: &[f64],
        (loss, [c_plus, c_minus]): (Loss, [f64; 2]),
        sample_weights: Option<&[f64]>,
        lambda: f64,
    ) -> (f64, Vec<f64>) {
        let (m, n) = (x.n_rows(), x.n_features());
        let mut g: Vec<f64> = w.iter().map(|v| lambda * v).collect();
        let mut j = 0.5 * lambda * w.iter().map(|v| v * v).sum::<f64>();
        for i in 0..m {
            let row = x.row(i);
            let mut dense_row = vec![0.0; n + 1];
            for (k, &c) in row.indices.iter().enumerate() {
                dense_row[c as usize] = row.values.get(k);
            }
            dense_row[n] = 1.0;
            let p: f64 = dense_row.iter().zip(w).map(|(a, b)| a * b).sum();
            let y = loss.target(row.label);
            let s = sample_weights.map_or(1.0, |s| s[i]);
            let c = s * if row.label > 0.0 { c_plus } else { c_minus };
            j += c * loss.value(p, y) / m as f64;
            for (gk, xk) in g.iter_mut().zip(&dense_row) {
                *gk += c * loss.derivative(p, y) * xk / m as f64;
            }
        }
        (j, g)
    }

    #[test]
    fn value_and_gradient_match_a_dense_loop() {
        let x = random_matrix(5000, 30, 1);
        let w: Vec<f64> = (0..31).map(|j| (j as f64 * 0.37).sin()).collect();
        let weighted = [2.5, 0.4];
        for (loss, c) in [
            (Loss::Log, [1.0, 1.0]),
            (Loss::Log, weighted),
            (Loss::Hinge, [1.0, 1.0]),
            (Loss::Hinge, weighted),
            (Loss::Squared, [1.0, 1.0]),
            (Loss::SmoothHinge, weighted),
        ] {
            let weights = ClassWeights::new(c[0], c[1]).unwrap();
            let weighted = WeightedLoss::new(loss, weights).unwrap();
            let f = Objective::new(&x, weighted, 0.01, true);
            let p = f.product(&w);
            let (j, g) = dense_reference(&x, &w, (loss, c), None, 0.01);
            assert!(
                (f.value(&w, &p) - j).abs() <= 1e-12 * j.abs().max(1.0),
                "{loss}"
            );
            for (a, b) in f.gradient(&w, &p).unwrap().iter().zip(&g) {
                assert!((a - b).abs() <= 1e-12, "{loss}: {a} vs {b}");
            }
            // With sample weights from 0 to 3 too.
            let s: Vec<f64> = (0..x.n_rows()).map(|i| (i % 7) as f64 * 0.5).collect();
            let rows = SampleWeighted::new(&x, &s).unwrap();
            let f = Objective::new(&rows, weighted, 0.01, true);
            let (j, g) = dense_reference(&x, &w, (loss, c), Some(&s), 0.01);
            assert!(
                (f.value(&w, &p) - j).abs() <= 1e-12 * j.abs().max(1.0),
                "{loss} with sample weights"
            );
            for (a, b) in f.gradient(&w, &p).unwrap().iter().zip(&g) {
                assert!((a - b).abs() <= 1e-12, "{loss} with sample weights");
            }
            let metric = crate::metrics::objective(
                weighted,
                crate::metrics::Penalty::l2(0.01, true),
                &w[..30],
                w[30],
                &rows,
            );
            assert!((metric - j).abs() <= 1e-12 * j.abs().max(1.0), "{loss}");
        }
    }

    #[test]
    fn ray_matches_full_evaluation() {
        let x = random_matrix(300, 12, 2);
        let weights = ClassWeights::new(0.3, 6.0).unwrap();
        let sample_weights: Vec<f64> = (0..300).map(|i| (i % 5) as f64 * 0.75).collect();
        let rows = SampleWeighted::new(&x, &sample_weights).unwrap();
        let f = Objective::new(
            &rows,
            WeightedLoss::new(Loss::Log, weights).unwrap(),
            0.1,
            true,
        );
        let w: Vec<f64> = (0..13).map(|j| (j as f64).cos()).collect();
        let d: Vec<f64> = (0..13).map(|j| (j as f64 * 1.3).sin()).collect();
        let (p, xd) = (f.product(&w), f.product(&d));
        let ray = f.ray(&w, &d, &p, &xd);
        for eta in [0.0, 0.3, 1.7] {
            let moved: Vec<f64> = w.iter().zip(&d).map(|(a, b)| a + eta * b).collect();
            let pm = f.product(&moved);
            let (v, s) = ray.eval(eta);
            assert!((v - f.value(&moved, &pm)).abs() < 1e-12);
            let slope = dense::dot(&f.gradient(&moved, &pm).unwrap(), &d);
            assert!((s - slope).abs() < 1e-12, "{s} vs {slope}");
        }
    }

    /// J and ∇J where the ray's last evaluation landed are what a fresh evaluation at the
    /// advanced predictions gives, bit for bit, for every loss with class and sample weights
    /// (over more rows than a chunk); at another step they are computed afresh.
    #[test]
    fn a_landing_gives_the_value_and_gradient_of_its_point() {
        let x = random_matrix(CHUNK_ROWS * 2 + 77, 9, 5);
        let weights = ClassWeights::new(0.3, 6.0).unwrap();
        let sample_weights: Vec<f64> = (0..x.n_rows()).map(|i| (i % 5) as f64 * 0.75).collect();
        let rows = SampleWeighted::new(&x, &sample_weights).unwrap();
        let w: Vec<f64> = (0..10).map(|j| (j as f64).cos()).collect();
        let d: Vec<f64> = (0..10).map(|j| (j as f64 * 1.3).sin()).collect();
        let bits = |(value, g): (f64, Vec<f64>)| {
            let mut bits: Vec<u64> = g.iter().map(|g| g.to_bits()).collect();
            bits.push(value.to_bits());
            bits
        };
        let unit = ClassWeights::UNIT;
        for (loss, weights) in [
            (Loss::Log, weights),
            (Loss::SquaredHinge, weights),
            (Loss::Hinge, weights),
            (Loss::Squared, unit),
            (Loss::Quantile(0.2), unit),
        ] {
            let f = Objective::new(&rows, WeightedLoss::new(loss, weights).unwrap(), 0.1, true);
            let (p, xd) = (f.product(&w), f.product(&d));
            let ray = f.ray(&w, &d, &p, &xd);
            let mut landing = f.landing().unwrap();
            for (landed_at, asked_at) in [(0.3, 0.3), (1.7, 1.7), (0.3, 0.15)] {
                assert_eq!(
                    ray.eval_keeping(landed_at, &mut landing),
                    ray.eval(landed_at),
                    "{loss}"
                );
                let moved: Vec<f64> = w.iter().zip(&d).map(|(a, b)| a + asked_at * b).collect();
                let mut pm = p.clone();
                advance(&mut pm, &xd, asked_at);
                let fresh = (f.value(&moved, &pm), f.gradient(&moved, &pm).unwrap());
                let landed = f.landed(&moved, &pm, asked_at, &landing).unwrap();
                assert_eq!(
                    bits(landed),
                    bits(fresh.clone()),
                    "{loss}, landed at {landed_at}"
                );
                // The value with the derivatives kept: the same J and, through them, ∇J.
                let mut kept = vec![f64::NAN; pm.len()];
                let value = f.value_keeping_derivatives(&moved, &pm, &mut kept);
                let gradient = f.subgradient(&moved, &kept).unwrap();
                assert_eq!(bits((value, gradient)), bits(fresh), "{loss}, kept");
            }
        }
    }

    /// `work` run in a pool of `threads` threads: the tests that results do not depend on the
    /// thread count run the same work in pools of 1 and 2.
    fn on_threads<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(work)
    }

    #[test]
    fn cached_subgradient_matches_a_full_evaluation() {
        let x = random_matrix(9000, 40, 4);
        let f = Objective::new(&x, Loss::Hinge, 1e-3, true);
        let w: Vec<f64> = (0..41).map(|j| (j as f64 * 0.7).cos()).collect();
        let c0: Vec<f64> = (0..9000).map(|i| [-1.0, 0.0, 1.0][i % 3]).collect();
        let (g0, cache, work) = f.cached_subgradient(&w, c0.clone(), None).unwrap();
        assert_eq!(g0, f.subgradient(&w, &c0).unwrap());
        assert_eq!(work, 6000.0 / 9000.0);
        // Few changed rows (the serial update), a block's share or more (the blocked update),
        // more changed rows than non-zeros (recomputed in full).
        for (changed, touched) in [(40, 40), (3000, 3000), (9000, 3000)] {
            let mut c = c0.clone();
            for v in c.iter_mut().take(changed) {
                *v = if *v == 0.0 { 1.0 } else { 0.0 };
            }
            let full = f.subgradient(&w, &c).unwrap();
            let run = |threads| {
                on_threads(threads, || {
                    f.cached_subgradient(&w, c.clone(), Some(cache.clone()))
                        .unwrap()
                })
            };
            let (g1, _, work) = run(1);
            let (g2, next, _) = run(2);
            assert_eq!(work, touched as f64 / 9000.0, "{changed}");
            assert!(g1.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()));
            // The trial form gives the same subgradient and work, the cache left as it was.
            let (trial, trial_work) = f.subgradient_near(&w, &c, &cache).unwrap();
            assert_eq!((trial, trial_work), (g1.clone(), work));
            for (a, b) in g1.iter().zip(&full) {
                assert!((a - b).abs() <= 1e-13, "{changed}: {a} vs {b}");
            }
            // The cache handed back is that of c: nothing changed, nothing touched.
            let (again, _, none) = f.cached_subgradient(&w, c.clone(), Some(next)).unwrap();
            assert_eq!((again, none), (g1, 0.0));
        }
    }

    #[test]
    fn product_where_is_the_product_on_the_rows_kept() {
        let x = random_matrix(5000, 30, 6);
        let f = Objective::new(&x, Loss::SquaredHinge, 1e-3, true);
        let v: Vec<f64> = (0..31).map(|j| (j as f64 * 0.9).sin()).collect();
        let all = f.product(&v);
        let some = f.product_where(&v, |i| i % 3 != 1);
        for (i, (a, b)) in all.iter().zip(&some).enumerate() {
            let expected = if i % 3 != 1 { *a } else { 0.0 };
            assert_eq!(b.to_bits(), expected.to_bits(), "row {i}");
        }
    }

    /// Σ_i c_i [x_i², 1] against a dense loop, for each kind of stored values, with the same
    /// bits in pools of 1 and 2 threads.
    #[test]
    fn transpose_squares_match_a_dense_loop() {
        let x = random_matrix(9000, 40, 5);
        let c: Vec<f64> = (0..9000).map(|i| [0.0, 0.5, 2.0][i % 3]).collect();
        let f32_values = match x.values() {
            ValueVec::F64(v) => v.iter().map(|&v| v as f32).collect(),
            _ => unreachable!("random_matrix stores f64"),
        };
        let rebuilt = |values| {
            let labels = (0..9000).map(|i| x.row(i).label).collect();
            let (offsets, indices) = (x.offsets().to_vec(), x.indices().to_vec());
            CsrMatrix::new(labels, offsets, indices, values, 40).unwrap()
        };
        for x in [
            x.clone(),
            rebuilt(ValueVec::F32(f32_values)),
            rebuilt(ValueVec::Ones),
        ] {
            let mut expected = vec![0.0; 41];
            for (i, &ci) in c.iter().enumerate() {
                let row = x.row(i);
                for (k, &j) in row.indices.iter().enumerate() {
                    expected[j as usize] += ci * row.values.get(k).powi(2);
                }
                expected[40] += ci;
            }
            let f = Objective::new(&x, Loss::Log, 1e-3, true);
            assert!(f.blocks.len() >= 2);
            let one = on_threads(1, || f.transpose_squares(&c).unwrap());
            let two = on_threads(2, || f.transpose_squares(&c).unwrap());
            assert!(
                one.iter()
                    .zip(&two)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
            for (a, b) in one.iter().zip(&expected) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn same_bits_with_one_and_two_threads() {
        let x = random_matrix(9000, 40, 3);
        let f = Objective::new(&x, Loss::Log, 1e-3, true);
        let w: Vec<f64> = (0..41).map(|j| (j as f64 * 0.1).sin()).collect();
        let run = |threads| {
            on_threads(threads, || {
                let p = f.product(&w);
                (f.value(&w, &p).to_bits(), f.gradient(&w, &p).unwrap())
            })
        };
        let (v1, g1) = run(1);
        let (v2, g2) = run(2);
        assert!(f.blocks.len() >= 2);
        assert_eq!(v1, v2);
        assert!(g1.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}
