//! ASGD with gradient sums (MATH.md §3, Algorithm 2): averaged iterates, still O(k) per step.
//!
//! Besides v and a of Algorithm 1 it keeps the harmonic gradient sum u_t = Σ_{j≤t} h'_{j−1} g_j x_{π_j}
//! and ā_t = Σ_{j≤t} h'_{j−1} g_j, so that after T steps
//! w̄_T = −(h'_T v_T − u_T)/(λ(T − t_a + 1)) and b̄_T = −(h'_T a_T − ā_T)/(λ(T − t_a + 1)).
//! v and u are interleaved as `[v_i, u_i]` pairs: one cache line serves both in a step.

use sparselin_kernels::{HugeArray, dense, sparse};

use super::{BiasTerm, Iterate, Learner, RunningHarmonic, Schedule, Snapshot};
use crate::data::Row;
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// State of Algorithm 2.
pub struct Asgd {
    loss: WeightedLoss,
    schedule: Schedule,
    /// [v_i, u_i]: the gradient sum and the harmonic gradient sum.
    vu: HugeArray<[f64; 2]>,
    bias: BiasTerm,
    /// h'_{t−1}.
    h: RunningHarmonic,
}

impl Asgd {
    /// A fresh learner over `n_features` features; an error if the sums [v, u] (16 bytes a
    /// feature) cannot be allocated.
    pub fn new(
        n_features: usize,
        loss: impl Into<WeightedLoss>,
        schedule: Schedule,
        regularize_bias: bool,
    ) -> Result<Asgd, AllocError> {
        Ok(Asgd {
            loss: loss.into(),
            schedule,
            vu: memory::zeroed("weights", n_features)?,
            bias: BiasTerm::new(regularize_bias),
            h: RunningHarmonic::new(&schedule),
        })
    }
}

impl Asgd {
    /// The learner in a given state (see [`super::Casgd::from_sums`]).
    pub(crate) fn from_sums(
        loss: WeightedLoss,
        schedule: Schedule,
        vu: HugeArray<[f64; 2]>,
        bias: BiasTerm,
        h: RunningHarmonic,
    ) -> Asgd {
        Asgd {
            loss,
            schedule,
            vu,
            bias,
            h,
        }
    }

    /// The sums the learner holds, [v, u] and the bias's terms: what [`Asgd::from_sums`]
    /// takes besides h'.
    pub(crate) fn into_sums(self) -> (HugeArray<[f64; 2]>, BiasTerm) {
        (self.vu, self.bias)
    }
}

impl Learner for Asgd {
    #[inline]
    fn step(&mut self, _i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let divisor = self.schedule.divisor(t - 1);
        let vx = sparse::dot_first(&self.vu, x.indices, x.values);
        let p = if divisor == 0.0 { 0.0 } else { -vx / divisor } + self.bias.value(divisor);
        let g = s * self.loss.derivative(p, y);
        let h = self.h.value();
        // v += g·x; u += h'_{t−1}·g·x (one fused pass over the pairs), skipped when g = 0.
        if g != 0.0 {
            sparse::axpy2(g, h * g, x.indices, x.values, &mut self.vu);
        }
        self.bias
            .update_averaged(g, self.schedule.bias_eta(t), h, self.h.count(t));
        self.h.advance(t);
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        let divisor = self.schedule.divisor(t);
        let scale = if divisor == 0.0 { 0.0 } else { -1.0 / divisor };
        let n = self.vu.len();
        let weights = memory::collected("weights", n, self.vu.iter().map(|pair| scale * pair[0]))?;
        let last = Iterate {
            weights,
            bias: self.bias.value(divisor),
        };
        let count = self.h.count(t);
        let averaged = if count > 0 {
            let divisor = self.schedule.lambda * count as f64;
            let h = self.h.value();
            let mut weights = memory::filled("averaged weights", n, 0.0)?;
            dense::rescale_average(-1.0 / divisor, h, &self.vu, 0.0, None, &mut weights);
            Some(Iterate {
                weights,
                bias: self.bias.averaged(h, divisor),
            })
        } else {
            None
        };
        Ok(Snapshot { last, averaged })
    }

    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        let divisor = self.schedule.divisor(t);
        self.h = RunningHarmonic::at_step(&self.schedule, t);
        let h = self.h.value();
        let avg_divisor = self.schedule.lambda * self.h.count(t) as f64;
        let averaged = snapshot.averaged_for_restart(self.h.count(t));
        // The inverses of the recovery in `snapshot`: v_t = −λ(t + t₀) w_t (Lemma 1) and
        // u_t = h'_t v_t + λ(t − t_a + 1) w̄_t.
        for (i, pair) in self.vu.iter_mut().enumerate() {
            let v = -divisor * snapshot.last.weights[i];
            let w_bar = averaged.map_or(0.0, |avg| avg.weights[i]);
            *pair = [v, h * v + avg_divisor * w_bar];
        }
        let b_bar = averaged.map_or(0.0, |avg| avg.bias);
        self.bias = self
            .bias
            .restarted(snapshot.last.bias, b_bar, divisor, h, avg_divisor);
    }
}
