//! AERR (Algorithm 1) and AESVR (Algorithm 4: AERR with GenEst's φ̃) in O(k log d) per
//! example (MATH.md §8, "Making them O(k log d) per example").
//!
//! w = s·ω with a scalar s, so the projection onto the ball ‖w‖₂ ≤ B rescales s only; j is
//! drawn from a sum tree over ω_j² whose root is ‖ω‖²; w̄ is kept lazily ([`LazyAverage`]).
//! When the lazy sum must be flushed, s is folded into ω (ω ← s·ω, s = 1) and the tree rebuilt.

use super::access::Attributes;
use super::estimate::{GradientEstimator, Phi};
use super::lazy_average::{FLUSH_RATIO, LazyAverage};
use super::sum_tree::{SumTree, TreeSampler};
use super::{AttributeLearner, initial_weights};
use crate::memory::AllocError;

/// AERR / AESVR with a scale factor, a sum tree and a lazy average.
pub struct Aerr {
    omega: Vec<f64>,
    s: f64,
    tree: SumTree,
    average: LazyAverage,
    radius: f64,
    eta: f64,
    estimator: GradientEstimator,
    projections: u64,
}

impl Aerr {
    /// d features, k attributes per example, ‖w‖₂ ≤ `radius`, step `eta`, φ̃ of `phi`
    /// (`Phi::Squared`: AERR; `Phi::Smoothed`: AESVR); an error when the machine cannot hold
    /// the learner's d-long arrays.
    pub fn new(
        d: usize,
        k: usize,
        radius: f64,
        eta: f64,
        phi: Phi,
        seed: u64,
    ) -> Result<Self, AllocError> {
        Self::with_flush_ratio(d, k, radius, eta, phi, seed, FLUSH_RATIO)
    }

    /// As [`Aerr::new`] with another flush threshold S/s (tests use a small one to exercise
    /// flushes and folds).
    pub fn with_flush_ratio(
        d: usize,
        k: usize,
        radius: f64,
        eta: f64,
        phi: Phi,
        seed: u64,
        flush_ratio: f64,
    ) -> Result<Self, AllocError> {
        let omega = initial_weights(d, radius)?;
        let tree = SumTree::new(omega.iter().map(|x| x * x))?;
        Ok(Aerr {
            omega,
            s: 1.0,
            tree,
            average: LazyAverage::new(d, flush_ratio)?,
            radius,
            eta,
            estimator: GradientEstimator::new(phi, k, seed),
            projections: 0,
        })
    }

    /// Steps whose v left the ball (projections), and flushes of the lazy average (folds).
    pub fn counters(&self) -> (u64, u64) {
        (self.projections, self.average.flushes())
    }
}

impl AttributeLearner for Aerr {
    fn step(&mut self, ex: &mut Attributes<'_>) {
        if self.average.needs_flush(self.s) {
            self.average.flush(&self.omega);
            for o in &mut self.omega {
                *o *= self.s;
            }
            self.s = 1.0;
            self.tree.refill(self.omega.iter().map(|x| x * x));
        }
        self.average.begin(self.s);
        let sampler = TreeSampler::squares(&self.tree, &self.omega, self.s);
        let g = self.estimator.estimate(&sampler, ex);
        // v = w − ηg̃ touches k coordinates of ω: ω_i −= ηg̃_i/s.
        for (i, gi) in g {
            self.average.touch(i, self.omega[i]);
            self.omega[i] -= self.eta * gi / self.s;
            self.tree.set(i, self.omega[i] * self.omega[i]);
        }
        // Projection onto ‖w‖₂ ≤ B: s ← s·min(1, B/‖v‖).
        let norm_v = self.s * self.tree.total().sqrt();
        if norm_v > self.radius {
            self.s *= self.radius / norm_v;
            self.projections += 1;
        }
    }

    fn average(&self) -> Result<Vec<f64>, AllocError> {
        self.average.average(&self.omega)
    }

    fn current(&self) -> Vec<f64> {
        self.omega.iter().map(|o| o * self.s).collect()
    }
}
