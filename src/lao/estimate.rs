//! The gradient estimator g̃ = φ̃·x̃ of §8, written once and shared by the literal and the fast
//! learners: they differ only in how they draw j (a linear scan of the CDF or a sum tree),
//! which they supply through [`InnerProductSampler`].
//!
//! Per example the draws are taken in a fixed order: the k attribute indices, then the
//! uniform(s) for φ̃. Both implementations therefore consume the same stream.

use super::access::Attributes;
use super::draws::Draws;
use super::genest::{ERF_TERMS, SmoothedInsensitive, erf_coefficients, genest};

/// Draws an attribute j with probability p_j and returns (j, c_j) with Σ_j p_j c_j x_j = w·x:
/// AERR: p_j = w_j²/‖w‖², c_j = ‖w‖²/w_j; AELR: p_j = |w_j|/‖w‖₁, c_j = ‖w‖₁·sign(w_j).
/// `None` when w = 0 (then w·x = 0 and nothing is drawn).
pub trait InnerProductSampler {
    /// The attribute drawn by the uniform `u` ∈ [0, 1) and its coefficient.
    fn draw(&self, u: f64) -> Option<(usize, f64)>;
}

/// What φ̃ estimates: the derivative of the loss at the residual w·x − y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Phi {
    /// Squared loss ½(w·x − y)²: φ̃ = c_j x_j − y (AERR, AELR).
    Squared,
    /// The erf-smoothed ε-insensitive loss: φ̃ = ½[GenEst(w, x/ε, (y + δ)/ε) +
    /// GenEst(w, x/ε, (y − δ)/ε)] (AESVR).
    Smoothed(SmoothedInsensitive),
}

/// One unbiased estimate of w·x' − y' with x' = x·`scale`: one attribute (or none if w = 0).
fn residual_estimate<S: InnerProductSampler>(
    sampler: &S,
    ex: &mut Attributes<'_>,
    u: f64,
    scale: f64,
    offset: f64,
) -> f64 {
    match sampler.draw(u) {
        Some((j, c)) => c * ex.attribute(j) * scale - offset,
        None => -offset,
    }
}

/// φ̃ for the current example.
pub fn phi_estimate<S: InnerProductSampler>(
    phi: &Phi,
    coefficients: &[f64],
    sampler: &S,
    ex: &mut Attributes<'_>,
    draws: &mut Draws,
) -> f64 {
    let y = ex.label();
    match phi {
        Phi::Squared => {
            let u = draws.uniform();
            residual_estimate(sampler, ex, u, 1.0, y)
        }
        Phi::Smoothed(f) => {
            let scale = 1.0 / f.smoothing;
            let half = |offset: f64, ex: &mut Attributes<'_>, draws: &mut Draws| {
                genest(coefficients, draws, |d| {
                    let u = d.uniform();
                    residual_estimate(sampler, ex, u, scale, offset)
                })
            };
            let plus = half((y + f.insensitivity) * scale, ex, draws);
            let minus = half((y - f.insensitivity) * scale, ex, draws);
            0.5 * (plus + minus)
        }
    }
}

/// x̃ = (1/k) Σ_r d·x(i_r)·e_{i_r} from the sorted draws `picked` (repeats add up): distinct
/// indices in increasing order with their values. Reads (and pays for) one attribute per draw.
pub fn x_tilde(ex: &mut Attributes<'_>, picked: &[usize]) -> Vec<(usize, f64)> {
    let scale = ex.dimension() as f64 / picked.len() as f64;
    let mut out: Vec<(usize, f64)> = Vec::with_capacity(picked.len());
    for &i in picked {
        let v = scale * ex.attribute(i);
        match out.last_mut() {
            Some((last, acc)) if *last == i => *acc += v,
            _ => out.push((i, v)),
        }
    }
    out
}

/// g̃ = φ̃·x̃ for one example: the k attribute draws, then φ̃. Returns the non-zero pattern of
/// g̃ (at most k entries, increasing indices).
pub fn gradient_estimate<S: InnerProductSampler>(
    phi: &Phi,
    coefficients: &[f64],
    k: usize,
    sampler: &S,
    ex: &mut Attributes<'_>,
    draws: &mut Draws,
) -> Vec<(usize, f64)> {
    let picked = draws.attributes(k, ex.dimension());
    let phi_tilde = phi_estimate(phi, coefficients, sampler, ex, draws);
    let mut g = x_tilde(ex, &picked);
    for (_, v) in &mut g {
        *v *= phi_tilde;
    }
    g
}

/// A learner's g̃: φ̃'s loss, k, GenEst's erf coefficients and the learner's seeded draws. The
/// fast and the literal learners hold the same one, so each calls [`gradient_estimate`] alike
/// and, given the same seed, consumes the same stream.
pub struct GradientEstimator {
    phi: Phi,
    coefficients: [f64; ERF_TERMS],
    k: usize,
    draws: Draws,
}

impl GradientEstimator {
    /// φ̃ of `phi`, k attribute draws per example, the draws seeded by `seed`.
    pub fn new(phi: Phi, k: usize, seed: u64) -> Self {
        GradientEstimator {
            phi,
            coefficients: erf_coefficients(),
            k,
            draws: Draws::new(seed),
        }
    }

    /// g̃ for the current example, j drawn by `sampler` (see [`gradient_estimate`]).
    pub fn estimate<S: InnerProductSampler>(
        &mut self,
        sampler: &S,
        ex: &mut Attributes<'_>,
    ) -> Vec<(usize, f64)> {
        gradient_estimate(
            &self.phi,
            &self.coefficients,
            self.k,
            sampler,
            ex,
            &mut self.draws,
        )
    }
}
