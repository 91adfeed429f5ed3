//! AELR (Algorithm 2) in O(k log d) per example, in the log domain (MATH.md §8).
//!
//! z⁺_i·z⁻_i = 1 always, so with θ_i = η Σ_τ ḡ_τ(i) the iterate is
//! w_i = −B·sinh θ_i / Σ_j cosh θ_j. We store ω_i = −sinh(θ_i)·e^(−M) and c_i = cosh(θ_i)·e^(−M)
//! with a common shift M, and w = s·ω with s = B/Σc (the root of a sum tree over c). j is drawn
//! from a second sum tree over |ω_j|. When some |θ_i| exceeds M + margin (clipping bounds each
//! change of θ_i by 1), or Σc falls below e^(−margin), M is re-based to max|θ| (O(d), rare).
//! A common scale on z± instead would let the small side underflow to 0 for good.

use super::AttributeLearner;
use super::access::Attributes;
use super::estimate::{GradientEstimator, Phi};
use super::lazy_average::{FLUSH_RATIO, LazyAverage};
use super::sum_tree::{SumTree, TreeSampler};
use crate::memory::{self, AllocError};

/// Default margin above the shift M before a re-base (e^300 leaves room for 10⁸ coordinates).
pub const REBASE_MARGIN: f64 = 300.0;

/// AELR with θ in the log domain, two sum trees and a lazy average.
pub struct Aelr {
    theta: Vec<f64>,
    shift: f64,
    omega: Vec<f64>,
    magnitude_tree: SumTree,
    cosh_tree: SumTree,
    average: LazyAverage,
    radius: f64,
    eta: f64,
    estimator: GradientEstimator,
    margin: f64,
    rebases: u64,
}

/// (ω_i, c_i) = (−sinh θ·e^(−M), cosh θ·e^(−M)).
#[inline]
fn omega_and_cosh(theta: f64, shift: f64) -> (f64, f64) {
    let up = (theta - shift).exp();
    let down = (-theta - shift).exp();
    (-(up - down) / 2.0, (up + down) / 2.0)
}

impl Aelr {
    /// d features, k attributes per example, ‖w‖₁ ≤ `radius`, step `eta`; an error when the
    /// machine cannot hold the learner's d-long arrays.
    pub fn new(d: usize, k: usize, radius: f64, eta: f64, seed: u64) -> Result<Self, AllocError> {
        Self::with_thresholds(d, k, radius, eta, seed, FLUSH_RATIO, REBASE_MARGIN)
    }

    /// As [`Aelr::new`] with other flush and re-base thresholds (tests use small ones).
    pub fn with_thresholds(
        d: usize,
        k: usize,
        radius: f64,
        eta: f64,
        seed: u64,
        flush_ratio: f64,
        margin: f64,
    ) -> Result<Self, AllocError> {
        let (omega0, c0) = omega_and_cosh(0.0, 0.0);
        Ok(Aelr {
            theta: memory::filled("weights", d, 0.0)?,
            shift: 0.0,
            omega: memory::filled("weights", d, omega0)?,
            magnitude_tree: SumTree::new(std::iter::repeat_n(omega0.abs(), d))?,
            cosh_tree: SumTree::new(std::iter::repeat_n(c0, d))?,
            average: LazyAverage::new(d, flush_ratio)?,
            radius,
            eta,
            estimator: GradientEstimator::new(Phi::Squared, k, seed),
            margin,
            rebases: 0,
        })
    }

    /// Re-bases of the shift M, and flushes of the lazy average.
    pub fn counters(&self) -> (u64, u64) {
        (self.rebases, self.average.flushes())
    }

    /// s = B/Σc.
    #[inline]
    fn scale(&self) -> f64 {
        self.radius / self.cosh_tree.total()
    }

    /// Close all averaging intervals, set M = max|θ|, recompute ω, c and both trees. O(d).
    fn rebase(&mut self) {
        self.average.flush(&self.omega);
        self.shift = self.theta.iter().fold(0.0, |m, t| m.max(t.abs()));
        let (shift, omega, theta) = (self.shift, &mut self.omega, &self.theta);
        self.cosh_tree.rewrite(|cosh| {
            for ((o, c), &t) in omega.iter_mut().zip(cosh).zip(theta) {
                (*o, *c) = omega_and_cosh(t, shift);
            }
        });
        self.magnitude_tree
            .refill(self.omega.iter().map(|o| o.abs()));
        self.rebases += 1;
    }
}

impl AttributeLearner for Aelr {
    fn step(&mut self, ex: &mut Attributes<'_>) {
        let s = self.scale();
        if self.average.needs_flush(s) {
            self.average.flush(&self.omega);
        }
        self.average.begin(s);
        let sampler = TreeSampler::magnitudes(&self.magnitude_tree, &self.omega, s);
        let g = self.estimator.estimate(&sampler, ex);
        let bound = 1.0 / self.eta;
        for (i, gi) in g {
            // ḡ_i = clip(g̃_i, 1/η); z⁺_i ← z⁺_i e^(−ηḡ_i), z⁻_i ← z⁻_i e^(ηḡ_i): θ_i += ηḡ_i.
            self.average.touch(i, self.omega[i]);
            self.theta[i] += self.eta * gi.clamp(-bound, bound);
            if self.theta[i].abs() > self.shift + self.margin {
                self.rebase();
                continue;
            }
            let (oi, ci) = omega_and_cosh(self.theta[i], self.shift);
            self.omega[i] = oi;
            self.magnitude_tree.set(i, oi.abs());
            self.cosh_tree.set(i, ci);
        }
        if self.cosh_tree.total() < (-self.margin).exp() {
            self.rebase();
        }
    }

    fn average(&self) -> Result<Vec<f64>, AllocError> {
        self.average.average(&self.omega)
    }

    fn current(&self) -> Vec<f64> {
        let s = self.scale();
        self.omega.iter().map(|o| o * s).collect()
    }
}
