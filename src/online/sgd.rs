//! SGD with the gradient sum (MATH.md §2, Algorithm 1): O(k) per step.
//!
//! v_t = Σ_{i≤t} g_i x_{π_i}, a_t = Σ_{i≤t} g_i and Lemma 1: [w_t, b_t] = −[v_t, a_t]/(λ(t + t₀)).
//! Each step is one sparse dot and one sparse axpy over the example's k entries; the weights
//! are recovered once, at the end, by one dense rescale.

use sparselin_kernels::{HugeArray, dense, sparse};

use super::{BiasTerm, Iterate, Learner, Schedule, Snapshot};
use crate::data::Row;
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// State of Algorithm 1.
pub struct Sgd {
    loss: WeightedLoss,
    schedule: Schedule,
    /// v: the gradient sum, dense, updated sparsely.
    v: HugeArray<f64>,
    /// a: Σ g_i, the bias's gradient sum (regularized bias) or the bias itself (see [`BiasTerm`]).
    bias: BiasTerm,
}

impl Sgd {
    /// A fresh learner over `n_features` features (w_0 = 0, b_0 = 0); an error if the sum v
    /// (8 bytes a feature) cannot be allocated.
    pub fn new(
        n_features: usize,
        loss: impl Into<WeightedLoss>,
        schedule: Schedule,
        regularize_bias: bool,
    ) -> Result<Sgd, AllocError> {
        Ok(Sgd {
            loss: loss.into(),
            schedule,
            v: memory::zeroed("weights", n_features)?,
            bias: BiasTerm::new(regularize_bias),
        })
    }
}

impl Sgd {
    /// The learner in a given state (see [`super::Casgd::from_sums`]).
    pub(crate) fn from_sums(
        loss: WeightedLoss,
        schedule: Schedule,
        v: HugeArray<f64>,
        bias: BiasTerm,
    ) -> Sgd {
        Sgd {
            loss,
            schedule,
            v,
            bias,
        }
    }

    /// The sums the learner holds, v and the bias's term: what [`Sgd::from_sums`] takes.
    pub(crate) fn into_sums(self) -> (HugeArray<f64>, BiasTerm) {
        (self.v, self.bias)
    }
}

impl Learner for Sgd {
    #[inline]
    fn step(&mut self, _i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        // p_t = −(v_{t−1}·x + a_{t−1})/(λ(t − 1 + t₀)); p_1 = 0 when t₀ = 0 (w_0 = 0).
        let divisor = self.schedule.divisor(t - 1);
        let vx = sparse::dot(&self.v, x.indices, x.values);
        let p = if divisor == 0.0 { 0.0 } else { -vx / divisor } + self.bias.value(divisor);
        let g = s * self.loss.derivative(p, y);
        if g != 0.0 {
            sparse::axpy(g, x.indices, x.values, &mut self.v);
        }
        self.bias.update(g, self.schedule.bias_eta(t));
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        let divisor = self.schedule.divisor(t);
        let mut weights = memory::copied("weights", &self.v)?;
        if divisor == 0.0 {
            weights.fill(0.0);
        } else {
            dense::scale(-1.0 / divisor, &mut weights);
        }
        Ok(Snapshot {
            last: Iterate {
                weights,
                bias: self.bias.value(divisor),
            },
            averaged: None,
        })
    }

    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        // Lemma 1 backwards: v_t = −λ(t + t₀) w_t, a_t = −λ(t + t₀) b_t.
        let divisor = self.schedule.divisor(t);
        for (v, &w) in self.v.iter_mut().zip(&snapshot.last.weights) {
            *v = -divisor * w;
        }
        self.bias = self
            .bias
            .restarted(snapshot.last.bias, 0.0, divisor, 0.0, 0.0);
    }
}
