//! SGD with the gradient sum (MATH.md §2, Algorithm 1): O(k) per step.
//!
//! v_t = Σ_{i≤t} g_i x_{π_i}, a_t = Σ_{i≤t} g_i and Lemma 1: [w_t, b_t] = −[v_t, a_t]/(λ(t + t₀)).
//! Each step is one sparse dot and one sparse axpy over the example's k entries; the weights
//! are recovered once, at the end, by one dense rescale.
//!
//! With an L1 term λ₁(‖w‖₁ + |b|) each step ends with the truncated-gradient step
//! w ← soft(w, η_t·λ₁) on every weight. In the sums' units (w = −v/(λ(t + t₀)), η_t·λ(t + t₀)
//! = 1) that is v ← soft(v, λ₁), the same at every step, so a weight no example touches for k
//! steps is moved by k·λ₁ at once (clipped at 0) when one next does, or in the snapshot: O(k)
//! per step still, exact up to rounding against the literal baseline, with one step count
//! per feature.

use sparselin_kernels::{HugeArray, dense, sparse};

use super::{BiasTerm, Iterate, Learner, Schedule, Snapshot, for_each_entry, soft_threshold};
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
    /// The L1 term's λ₁ and, per feature, the step its entry of v was last truncated to
    /// (`None`: no L1 term).
    truncation: Option<Truncation>,
}

/// The lazy L1 truncation of [`Sgd`].
struct Truncation {
    l1: f64,
    /// τ_j: v_j holds the sum truncated through step τ_j (an f64, exact below 2^53 steps,
    /// so that the lag τ − τ_j needs no conversion in the step).
    through: Vec<f64>,
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
            truncation: None,
        })
    }

    /// The learner with an L1 term λ₁ (none for 0); an error if the step counts (8 bytes a
    /// feature) cannot be allocated.
    pub fn truncating(mut self, l1: f64) -> Result<Sgd, AllocError> {
        self.truncation = match l1 {
            0.0 => None,
            l1 => Some(Truncation {
                l1,
                through: memory::filled("L1 step counts", self.v.len(), 0.0)?,
            }),
        };
        Ok(self)
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
            truncation: None,
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
        if self.truncation.is_some() {
            return self.truncated_step(x, y, s, t);
        }
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
        if let Some(truncation) = &self.truncation {
            for (v, &through) in weights.iter_mut().zip(&truncation.through) {
                *v = soft_threshold(*v, (t as f64 - through) * truncation.l1);
            }
        }
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
        if let Some(truncation) = &mut self.truncation {
            truncation.through.fill(t as f64);
        }
    }
}

impl Sgd {
    /// Step t with the L1 term: the example's entries of v brought up to step t − 1 as the
    /// dot product reads them, the step, and those entries truncated for step t as the
    /// update writes them (two passes over the example, not four).
    fn truncated_step(&mut self, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let truncation = self.truncation.as_mut().expect("an L1 term");
        let (l1, v, through) = (truncation.l1, &mut self.v, &mut truncation.through);
        let (previous, now) = ((t - 1) as f64, t as f64);
        let mut vx = 0.0;
        for_each_entry(&x, |j, value| {
            let caught_up = soft_threshold(v[j], (previous - through[j]) * l1);
            v[j] = caught_up;
            vx += caught_up * value;
        });
        let divisor = self.schedule.divisor(t - 1);
        let p = if divisor == 0.0 { 0.0 } else { -vx / divisor } + self.bias.value(divisor);
        let g = s * self.loss.derivative(p, y);
        for_each_entry(&x, |j, value| {
            v[j] = soft_threshold(v[j] + g * value, l1);
            through[j] = now;
        });
        self.bias.update(g, self.schedule.bias_eta(t));
        self.bias.truncate(l1);
        p
    }
}
