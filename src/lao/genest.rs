//! GenEst (the seed's Procedure 3) with the Taylor coefficients of erf, and the erf-smoothed
//! ε-insensitive loss f_ε that AESVR learns with (MATH.md §8, "AESVR").
//!
//! f_ε(z) = (ε/2)ρ((z − δ)/ε) + (ε/2)ρ((z + δ)/ε) − δ with ρ(x) = x·erf(x) + e^(−x²)/√π, so
//! f_ε'(z) = ½[erf((z − δ)/ε) + erf((z + δ)/ε)]: δ is the insensitivity, ε the smoothing.

use std::f64::consts::PI;

use super::draws::Draws;

/// Number of Taylor coefficients of erf kept: degree n ≥ 64 is drawn with probability 2⁻⁶⁵.
pub const ERF_TERMS: usize = 64;

/// N, the number of averaged draws behind each factor θ̃ once the degree n exceeds
/// [`GENEST_THRESHOLD`] (the seed's values were lost; unbiasedness holds for any choice,
/// this one bounds the variance of the rare high-degree terms).
pub const GENEST_REPEATS: usize = 8;

/// 2·log₂ N: above this degree each θ̃ is the mean of [`GENEST_REPEATS`] draws.
pub const GENEST_THRESHOLD: usize = 6;

/// Taylor coefficients a_n of erf: a_{2q+1} = (2/√π)(−1)^q/(q!(2q+1)), a_{2q} = 0.
pub fn erf_coefficients() -> [f64; ERF_TERMS] {
    let mut a = [0.0; ERF_TERMS];
    let mut factorial = 1.0;
    for q in 0..ERF_TERMS.div_ceil(2) {
        if q > 0 {
            factorial *= q as f64;
        }
        let n = 2 * q + 1;
        if n < ERF_TERMS {
            let sign = if q % 2 == 0 { 1.0 } else { -1.0 };
            a[n] = 2.0 / PI.sqrt() * sign / (factorial * n as f64);
        }
    }
    a
}

/// The error function, to about 1e-12 absolute: the Taylor series below |x| = 4 (terms stay
/// below 10⁶), the asymptotic series of erfc above (erfc(4) ≈ 1.5e-8).
pub fn erf(x: f64) -> f64 {
    let ax = x.abs();
    let value = if ax < 4.0 {
        let x2 = ax * ax;
        let (mut term, mut sum, mut n) = (ax, 0.0, 0u32);
        // term_q = (−1)^q x^(2q+1)/q!; sum of term_q/(2q+1).
        loop {
            let add = term / f64::from(2 * n + 1);
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() {
                break;
            }
            n += 1;
            term *= -x2 / f64::from(n);
        }
        2.0 / PI.sqrt() * sum
    } else {
        let x2 = ax * ax;
        let inv = 1.0 / (2.0 * x2);
        let series = 1.0 - inv + 3.0 * inv * inv - 15.0 * inv * inv * inv;
        1.0 - (-x2).exp() / (ax * PI.sqrt()) * series
    };
    value.copysign(x)
}

/// The erf-smoothed ε-insensitive loss and its derivative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmoothedInsensitive {
    /// ε > 0: the width of the erf smoothing (f_ε is within ~ε of |z|_δ).
    pub smoothing: f64,
    /// δ ≥ 0: the insensitivity of |z|_δ = max(0, |z| − δ).
    pub insensitivity: f64,
}

impl SmoothedInsensitive {
    /// f_ε(z).
    pub fn value(&self, z: f64) -> f64 {
        let rho = |x: f64| x * erf(x) + (-x * x).exp() / PI.sqrt();
        let (e, d) = (self.smoothing, self.insensitivity);
        0.5 * e * rho((z - d) / e) + 0.5 * e * rho((z + d) / e) - d
    }

    /// f_ε'(z) = ½[erf((z − δ)/ε) + erf((z + δ)/ε)].
    pub fn derivative(&self, z: f64) -> f64 {
        let (e, d) = (self.smoothing, self.insensitivity);
        0.5 * (erf((z - d) / e) + erf((z + d) / e))
    }
}

/// Procedure 3: an unbiased estimate of f'(z) = Σ a_n zⁿ from independent unbiased estimates
/// of z. Draws n with P(n) = 2^−(n+1) and returns 2^(n+1)·a_n·Π_{r≤n} θ̃_r, where each θ̃_r is
/// one call of `theta` (the mean of [`GENEST_REPEATS`] calls when n > [`GENEST_THRESHOLD`]).
/// A zero coefficient returns 0 without drawing anything (no attribute is paid for).
pub fn genest(
    coefficients: &[f64],
    draws: &mut Draws,
    mut theta: impl FnMut(&mut Draws) -> f64,
) -> f64 {
    let n = draws.geometric_half();
    if n >= coefficients.len() || coefficients[n] == 0.0 {
        return 0.0;
    }
    let repeats = if n > GENEST_THRESHOLD {
        GENEST_REPEATS
    } else {
        1
    };
    let mut product = 1.0;
    for _ in 0..n {
        let sum: f64 = (0..repeats).map(|_| theta(draws)).sum();
        product *= sum / repeats as f64;
    }
    2f64.powi(n as i32 + 1) * coefficients[n] * product
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // Values from Abramowitz & Stegun table 7.1 / high-precision references.
        let known = [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.5, 0.999_999_256_901_627_7),
            (4.5, 0.999_999_999_803_383_5),
        ];
        for (x, e) in known {
            assert!((erf(x) - e).abs() < 1e-12, "erf({x}) = {}", erf(x));
            assert!((erf(-x) + e).abs() < 1e-12);
        }
    }

    #[test]
    fn erf_series_sums_to_erf() {
        let a = erf_coefficients();
        for z in [-1.5, -0.3, 0.7, 2.0] {
            let series: f64 = a.iter().rev().fold(0.0, |acc, &an| acc * z + an);
            assert!((series - erf(z)).abs() < 1e-12, "z = {z}");
        }
    }

    #[test]
    fn smoothed_loss_is_close_to_insensitive_loss_and_derivative_matches() {
        let f = SmoothedInsensitive {
            smoothing: 0.05,
            insensitivity: 0.3,
        };
        for z in [-2.0f64, -0.31, 0.0, 0.2, 0.5, 1.7] {
            let exact = (z.abs() - 0.3f64).max(0.0);
            assert!((f.value(z) - exact).abs() <= 0.05, "z = {z}");
            let h = 1e-5;
            let numeric = (f.value(z + h) - f.value(z - h)) / (2.0 * h);
            assert!((numeric - f.derivative(z)).abs() < 1e-6, "z = {z}");
        }
    }

    /// Monte Carlo with a tolerance from the empirical variance: |mean − erf(z)| ≤ 4σ/√N.
    fn genest_mean_error(z: f64, seed: u64, coefficients: &[f64]) -> (f64, f64) {
        let mut draws = Draws::new(seed);
        let n = 200_000;
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..n {
            // θ̃ = z + uniform noise in [−½, ½): unbiased for z.
            let v = genest(coefficients, &mut draws, |d| z + d.uniform() - 0.5);
            sum += v;
            sum2 += v * v;
        }
        let mean = sum / n as f64;
        let sd = (sum2 / n as f64 - mean * mean).sqrt();
        ((mean - erf(z)).abs(), 4.0 * sd / (n as f64).sqrt())
    }

    #[test]
    fn genest_is_unbiased_for_erf() {
        let a = erf_coefficients();
        for (q, z) in [-1.2, 0.4, 1.0].into_iter().enumerate() {
            let (err, tol) = genest_mean_error(z, 11 + q as u64, &a);
            assert!(err <= tol, "z = {z}: error {err} > {tol}");
        }
    }

    #[test]
    fn the_unbiasedness_check_detects_a_wrong_coefficient() {
        let mut a = erf_coefficients();
        a[1] *= 1.1;
        let (err, tol) = genest_mean_error(0.4, 11, &a);
        assert!(err > tol, "a 10% wrong a₁ went unnoticed: {err} <= {tol}");
    }
}
