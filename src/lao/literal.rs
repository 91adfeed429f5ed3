//! The literal O(d)-per-example learners: §8's algorithms exactly as written (dense w, an O(d)
//! scan for the draw of j, a dense projection, a dense running sum for w̄). They are the
//! oracles the O(k log d) learners are tested against, and the baseline of the scaling bench.
//! They still read the example only through [`Attributes`].

use super::access::Attributes;
use super::estimate::{GradientEstimator, InnerProductSampler, Phi};
use super::{AttributeLearner, initial_weights};
use crate::memory::{self, AllocError};

/// Inverse-CDF draw over a dense weight vector by a linear prefix sum (O(d) to build).
pub struct DenseSampler {
    prefix: Vec<f64>,
    coefficient: Vec<f64>,
}

impl DenseSampler {
    /// p_j = w_j²/‖w‖², c_j = ‖w‖²/w_j (AERR).
    pub fn squares(w: &[f64]) -> Self {
        let prefix = prefix_sums(w.iter().map(|x| x * x));
        let total = prefix.last().copied().unwrap_or(0.0);
        let coefficient = w.iter().map(|&x| total / x).collect();
        DenseSampler {
            prefix,
            coefficient,
        }
    }

    /// p_j = |w_j|/‖w‖₁, c_j = ‖w‖₁·sign(w_j) (AELR).
    pub fn magnitudes(w: &[f64]) -> Self {
        let prefix = prefix_sums(w.iter().map(|x| x.abs()));
        let total = prefix.last().copied().unwrap_or(0.0);
        let coefficient = w.iter().map(|&x| total * x.signum()).collect();
        DenseSampler {
            prefix,
            coefficient,
        }
    }
}

fn prefix_sums(weights: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut acc = 0.0;
    weights
        .map(|x| {
            acc += x;
            acc
        })
        .collect()
}

impl InnerProductSampler for DenseSampler {
    fn draw(&self, u: f64) -> Option<(usize, f64)> {
        let total = *self.prefix.last()?;
        if total <= 0.0 {
            return None;
        }
        let r = u * total;
        let mut j = self.prefix.partition_point(|&p| p <= r);
        if j == self.prefix.len() {
            // u·total rounded up to the total: the last attribute with positive weight.
            j = self
                .prefix
                .iter()
                .rposition(|&p| p < total)
                .map_or(0, |q| q + 1);
        }
        Some((j, self.coefficient[j]))
    }
}

/// w̄ = (Σ_τ w_τ)/t from the running sum of t steps' iterates (zeros before the first step).
fn mean(sum: &[f64], steps: u64) -> Result<Vec<f64>, AllocError> {
    let t = steps.max(1) as f64;
    let mut average = memory::reserved("average", sum.len())?;
    average.extend(sum.iter().map(|s| s / t));
    Ok(average)
}

/// AERR (Algorithm 1) and AESVR (Algorithm 4), literally: v = w − ηg̃, w ← v·B/max(‖v‖, B).
pub struct LiteralAerr {
    w: Vec<f64>,
    sum: Vec<f64>,
    steps: u64,
    radius: f64,
    eta: f64,
    estimator: GradientEstimator,
}

impl LiteralAerr {
    /// d features, k attributes per example, ‖w‖₂ ≤ `radius`, step `eta`, φ̃ of `phi`; an
    /// error when the machine cannot hold d weights twice.
    pub fn new(
        d: usize,
        k: usize,
        radius: f64,
        eta: f64,
        phi: Phi,
        seed: u64,
    ) -> Result<Self, AllocError> {
        Ok(LiteralAerr {
            w: initial_weights(d, radius)?,
            sum: memory::filled("running sum", d, 0.0)?,
            steps: 0,
            radius,
            eta,
            estimator: GradientEstimator::new(phi, k, seed),
        })
    }
}

impl AttributeLearner for LiteralAerr {
    fn step(&mut self, ex: &mut Attributes<'_>) {
        for (s, w) in self.sum.iter_mut().zip(&self.w) {
            *s += w;
        }
        self.steps += 1;
        let sampler = DenseSampler::squares(&self.w);
        let g = self.estimator.estimate(&sampler, ex);
        let mut v = self.w.clone();
        for (i, gi) in g {
            v[i] -= self.eta * gi;
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let factor = self.radius / norm.max(self.radius);
        self.w = v.into_iter().map(|x| x * factor).collect();
    }

    fn average(&self) -> Result<Vec<f64>, AllocError> {
        mean(&self.sum, self.steps)
    }

    fn current(&self) -> Vec<f64> {
        self.w.clone()
    }
}

/// AELR (Algorithm 2), literally: multiplicative weights on z⁺, z⁻ with clipped gradients,
/// w = (z⁺ − z⁻)·B/(‖z⁺‖₁ + ‖z⁻‖₁).
pub struct LiteralAelr {
    z_plus: Vec<f64>,
    z_minus: Vec<f64>,
    sum: Vec<f64>,
    steps: u64,
    radius: f64,
    eta: f64,
    estimator: GradientEstimator,
}

impl LiteralAelr {
    /// d features, k attributes per example, ‖w‖₁ ≤ `radius`, step `eta`; an error when the
    /// machine cannot hold d weights three times.
    pub fn new(d: usize, k: usize, radius: f64, eta: f64, seed: u64) -> Result<Self, AllocError> {
        Ok(LiteralAelr {
            z_plus: memory::filled("weights", d, 1.0)?,
            z_minus: memory::filled("weights", d, 1.0)?,
            sum: memory::filled("running sum", d, 0.0)?,
            steps: 0,
            radius,
            eta,
            estimator: GradientEstimator::new(Phi::Squared, k, seed),
        })
    }
}

impl AttributeLearner for LiteralAelr {
    fn step(&mut self, ex: &mut Attributes<'_>) {
        let w = self.current();
        for (s, x) in self.sum.iter_mut().zip(&w) {
            *s += x;
        }
        self.steps += 1;
        let sampler = DenseSampler::magnitudes(&w);
        let g = self.estimator.estimate(&sampler, ex);
        let bound = 1.0 / self.eta;
        for (i, gi) in g {
            let clipped = gi.clamp(-bound, bound);
            self.z_plus[i] *= (-self.eta * clipped).exp();
            self.z_minus[i] *= (self.eta * clipped).exp();
        }
    }

    fn average(&self) -> Result<Vec<f64>, AllocError> {
        mean(&self.sum, self.steps)
    }

    fn current(&self) -> Vec<f64> {
        let total: f64 = self.z_plus.iter().sum::<f64>() + self.z_minus.iter().sum::<f64>();
        let scale = self.radius / total;
        self.z_plus
            .iter()
            .zip(&self.z_minus)
            .map(|(p, m)| (p - m) * scale)
            .collect()
    }
}
