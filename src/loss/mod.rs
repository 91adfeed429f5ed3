//! Loss functions ℓ(p, y) and their derivatives in the prediction p (MATH.md §1).
//!
//! Classification losses expect y ∈ {−1, +1}; [`Loss::target`] maps a stored label to the y
//! a loss works with (labels > 0 become +1, the rest −1, so 0/1 files work as expected).

use std::fmt;
use std::str::FromStr;

use sparselin_kernels::dense;
use sparselin_kernels::math::{self, Elementwise};

mod class_weights;

pub use class_weights::{ClassWeightError, ClassWeighting, ClassWeights, WeightedLoss};

/// A convex loss in the prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loss {
    /// ½(p − y)².
    Squared,
    /// |p − y|.
    Absolute,
    /// max(0, 1 − yp).
    Hinge,
    /// log(1 + e^(−yp)), computed without overflow for any margin.
    Log,
    /// max(0, 1 − yp)².
    SquaredHinge,
    /// Hinge smoothed quadratically on [0, 1] (Huberized): 1/2 − z for z ≤ 0,
    /// ½(1 − z)² for 0 < z < 1, 0 for z ≥ 1, with z = yp.
    SmoothHinge,
    /// max(0, |p − y| − ε), the support-vector regression loss.
    EpsilonInsensitive(f64),
    /// max(0, |p − y| − ε)², the L2-loss support-vector regression loss (liblinear's `-s 11`,
    /// `-p ε`): smooth, with ε = 0 twice the squared loss.
    SquaredEpsilonInsensitive(f64),
    /// τ·(y − p) for p below y, (1 − τ)·(p − y) above it (the pinball loss, VW's `quantile`):
    /// its minimizer predicts the τ-quantile of y, for τ in (0, 1); τ = ½ is half the
    /// absolute loss.
    Quantile(f64),
    /// Huber's loss of the residual r = p − y: ½r² for |r| ≤ δ, δ(|r| − ½δ) beyond (robust
    /// regression: squared near the label, absolute far from it; scikit-learn's
    /// `SGDRegressor(loss='huber', epsilon=δ)`), for δ > 0.
    Huber(f64),
    /// max(0, 1 − z)² for z = yp ≥ −1, −4z below (scikit-learn's `modified_huber`): the
    /// squared hinge continued linearly, so that a badly misclassified row pulls with a bounded
    /// force.
    ModifiedHuber,
    /// e^p − y·p + y·ln y − y for a count or rate y ≥ 0: half the Poisson deviance of the
    /// mean e^p (Poisson regression with the log link; scikit-learn's `PoissonRegressor`
    /// minimizes its mean, glmnet's `family = "poisson"` and Vowpal Wabbit's
    /// `--loss_function poisson` fit the same model). The terms in y alone make it 0 at the
    /// best score ln y, so that the objective reads as a deviance. Smooth, but of unbounded
    /// curvature e^p: batch solvers and AdaGrad only.
    Poisson,
}

impl Loss {
    /// True for losses whose labels are classes ±1.
    pub fn is_classification(self) -> bool {
        matches!(
            self,
            Loss::Hinge | Loss::Log | Loss::SquaredHinge | Loss::SmoothHinge | Loss::ModifiedHuber
        )
    }

    /// True for the one loss whose scores are log-odds, so that [`logistic`] of a score is
    /// the probability of the class +1: log loss. The others' scores are margins or values.
    pub fn gives_probabilities(self) -> bool {
        self == Loss::Log
    }

    /// The y this loss works with for a stored label.
    #[inline]
    pub fn target(self, label: f64) -> f64 {
        if self.is_classification() {
            if label > 0.0 { 1.0 } else { -1.0 }
        } else {
            label
        }
    }

    /// ℓ(p, y).
    #[inline]
    pub fn value(self, p: f64, y: f64) -> f64 {
        match self {
            Loss::Squared => 0.5 * (p - y) * (p - y),
            Loss::Absolute => (p - y).abs(),
            Loss::Hinge => (1.0 - y * p).max(0.0),
            Loss::Log => softplus(-y * p),
            Loss::SquaredHinge => {
                let slack = (1.0 - y * p).max(0.0);
                slack * slack
            }
            Loss::SmoothHinge => {
                let z = y * p;
                if z >= 1.0 {
                    0.0
                } else if z <= 0.0 {
                    0.5 - z
                } else {
                    0.5 * (1.0 - z) * (1.0 - z)
                }
            }
            Loss::EpsilonInsensitive(eps) => ((p - y).abs() - eps).max(0.0),
            Loss::SquaredEpsilonInsensitive(eps) => {
                let slack = ((p - y).abs() - eps).max(0.0);
                slack * slack
            }
            Loss::Quantile(tau) => {
                let r = p - y;
                if r < 0.0 { -tau * r } else { (1.0 - tau) * r }
            }
            Loss::Huber(delta) => {
                let r = (p - y).abs();
                if r <= delta {
                    0.5 * r * r
                } else {
                    delta * (r - 0.5 * delta)
                }
            }
            Loss::ModifiedHuber => {
                let z = y * p;
                if z >= 1.0 {
                    0.0
                } else if z >= -1.0 {
                    (1.0 - z) * (1.0 - z)
                } else {
                    -4.0 * z
                }
            }
            Loss::Poisson => math::exp(p) - y * p + (x_ln_x(y) - y),
        }
    }

    /// ℓ'(p, y), the derivative in p (a subgradient where ℓ has a kink: the one-sided value
    /// the seed uses, 0 at ties).
    #[inline]
    pub fn derivative(self, p: f64, y: f64) -> f64 {
        match self {
            Loss::Squared => p - y,
            Loss::Absolute => sign(p - y),
            Loss::Hinge => {
                if y * p < 1.0 {
                    -y
                } else {
                    0.0
                }
            }
            Loss::Log => -y * logistic(-y * p),
            Loss::SquaredHinge => {
                let slack = 1.0 - y * p;
                if slack > 0.0 { -2.0 * y * slack } else { 0.0 }
            }
            Loss::SmoothHinge => {
                let z = y * p;
                if z >= 1.0 {
                    0.0
                } else if z <= 0.0 {
                    -y
                } else {
                    -y * (1.0 - z)
                }
            }
            Loss::EpsilonInsensitive(eps) => {
                let r = p - y;
                if r.abs() > eps { sign(r) } else { 0.0 }
            }
            Loss::SquaredEpsilonInsensitive(eps) => {
                let r = p - y;
                let slack = r.abs() - eps;
                if slack > 0.0 {
                    2.0 * sign(r) * slack
                } else {
                    0.0
                }
            }
            Loss::Quantile(tau) => {
                let r = p - y;
                if r < 0.0 {
                    -tau
                } else if r > 0.0 {
                    1.0 - tau
                } else {
                    0.0
                }
            }
            Loss::Huber(delta) => (p - y).clamp(-delta, delta),
            Loss::ModifiedHuber => {
                let z = y * p;
                if z >= 1.0 {
                    0.0
                } else if z >= -1.0 {
                    -2.0 * y * (1.0 - z)
                } else {
                    -4.0 * y
                }
            }
            Loss::Poisson => math::exp(p) - y,
        }
    }

    /// out_i = ℓ(p_i, y_i) for every i: [`value`](Self::value) row by row, bit for bit, the log
    /// loss's softplus computed for all rows at once by the vectorized kernel (a batch pass
    /// over rows of a few non-zeros spent more time in the C library's `log1p` and `exp` than
    /// in the sparse kernels: PERF.md `## Batch solvers`). Panics if the lengths differ.
    pub fn values(self, p: &[f64], y: &[f64], out: &mut [f64]) {
        self.per_entry(p, y, out, Loss::value, |p, y, out| {
            negated_margins(p, y, out);
            dense::map(Elementwise::Softplus, out);
        });
    }

    /// out_i = ℓ'(p_i, y_i) for every i: [`derivative`](Self::derivative) row by row, bit for
    /// bit, as [`values`](Self::values). Panics if the lengths differ.
    pub fn derivatives(self, p: &[f64], y: &[f64], out: &mut [f64]) {
        self.per_entry(p, y, out, Loss::derivative, |p, y, out| {
            negated_margins(p, y, out);
            dense::map(Elementwise::Logistic, out);
            for (o, &y) in out.iter_mut().zip(y) {
                *o *= -y;
            }
        });
    }

    /// [`values`](Self::values) and [`derivatives`](Self::derivatives) at once, the same bits:
    /// for the log loss from one exponential per row
    /// ([`dense::softplus_and_logistic`]), where the two take one each. Panics if the lengths
    /// differ.
    pub fn values_and_derivatives(
        self,
        p: &[f64],
        y: &[f64],
        values: &mut [f64],
        derivatives: &mut [f64],
    ) {
        assert_eq!(
            values.len(),
            derivatives.len(),
            "loss slices: lengths differ"
        );
        if self == Loss::Log {
            self.per_entry(p, y, values, Loss::value, |p, y, values| {
                negated_margins(p, y, values);
                dense::softplus_and_logistic(values, derivatives);
                for (d, &y) in derivatives.iter_mut().zip(y) {
                    *d *= -y;
                }
            });
        } else {
            self.values(p, y, values);
            self.derivatives(p, y, derivatives);
        }
    }

    /// out_i = ℓ''(p_i, y_i) for every i: [`second_derivative`](Self::second_derivative) row
    /// by row, bit for bit, as [`values`](Self::values). Panics if the lengths differ.
    pub fn second_derivatives(self, p: &[f64], y: &[f64], out: &mut [f64]) {
        self.per_entry(p, y, out, Loss::second_derivative, |p, y, out| {
            let mut up: Vec<f64> = p.iter().zip(y).map(|(&p, &y)| y * p).collect();
            dense::map(Elementwise::Logistic, &mut up);
            negated_margins(p, y, out);
            dense::map(Elementwise::Logistic, out);
            for ((o, &up), &y) in out.iter_mut().zip(&up).zip(y) {
                *o *= y * y * up;
            }
        });
    }

    /// The frame of the slice forms: out_i = row(self, x_i, y_i) for every i, or for the log
    /// loss `log(x, y, out)`, which computes the same bits for all rows at once. Panics if the
    /// lengths differ.
    fn per_entry(
        self,
        x: &[f64],
        y: &[f64],
        out: &mut [f64],
        row: impl Fn(Loss, f64, f64) -> f64,
        log: impl FnOnce(&[f64], &[f64], &mut [f64]),
    ) {
        assert!(
            x.len() == y.len() && y.len() == out.len(),
            "loss slices: lengths differ"
        );
        if self == Loss::Log {
            log(x, y, out);
        } else {
            for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
                *o = row(self, x, y);
            }
        }
    }

    /// ℓ''(p, y), the second derivative in p: the curvature a Newton-type solver models the
    /// loss with ([`crate::batch::cd`]). Where it jumps (squared hinge at yp = 1, smooth hinge
    /// at yp = 0 and 1, squared ε-insensitive at |p − y| = ε) it takes the value of the side
    /// the derivative's formula takes, the generalized Hessian of Mangasarian; the
    /// piecewise-linear losses have 0 off their kinks.
    #[inline]
    pub fn second_derivative(self, p: f64, y: f64) -> f64 {
        match self {
            Loss::Squared => 1.0,
            // σ(z)·(1 − σ(z)) as σ(z)·σ(−z): both factors exact in the tails.
            Loss::Log => y * y * logistic(y * p) * logistic(-y * p),
            Loss::SquaredHinge if y * p < 1.0 => 2.0 * y * y,
            Loss::SmoothHinge if y * p > 0.0 && y * p < 1.0 => y * y,
            Loss::SquaredEpsilonInsensitive(eps) if (p - y).abs() > eps => 2.0,
            Loss::Huber(delta) if (p - y).abs() <= delta => 1.0,
            Loss::ModifiedHuber if (-1.0..1.0).contains(&(y * p)) => 2.0 * y * y,
            Loss::Poisson => math::exp(p),
            _ => 0.0,
        }
    }

    /// ℓ*(v) = sup_p (v·p − ℓ(p, y)), the convex conjugate in the prediction, for the smooth
    /// losses (`None` for the others); +∞ outside its domain. At v = ℓ'(p, y) it attains
    /// Fenchel–Young's equality ℓ(p) + ℓ*(v) = p·v, and it is what the dual of an
    /// L1-regularized objective is made of ([`crate::batch::Objective::dual_bound`]).
    pub fn conjugate(self, v: f64, y: f64) -> Option<f64> {
        // The margin losses are f(y·p): ℓ*(v) = f*(y·v).
        let t = v * y;
        let value = match self {
            Loss::Squared => 0.5 * v * v + v * y,
            // f*(−a) = a·ln a + (1 − a)·ln(1 − a), with 0·ln 0 = 0.
            Loss::Log if (-1.0..=0.0).contains(&t) => math::entropy(-t),
            Loss::SquaredHinge if t <= 0.0 => t + 0.25 * t * t,
            Loss::SmoothHinge if (-1.0..=0.0).contains(&t) => t + 0.5 * t * t,
            // ℓ(p) = f(p − y), f(r) = max(0, |r| − ε)²: f*(v) = ε|v| + v²/4.
            Loss::SquaredEpsilonInsensitive(eps) => v * y + eps * v.abs() + 0.25 * v * v,
            // f Huber's: f*(v) = v²/2 on [−δ, δ], the range of its derivative.
            Loss::Huber(delta) if v.abs() <= delta => v * y + 0.5 * v * v,
            // The squared hinge's conjugate, on the range [−4, 0] of this loss's derivative.
            Loss::ModifiedHuber if (-4.0..=0.0).contains(&t) => t + 0.25 * t * t,
            // sup_p (v + y)·p − e^p = s·ln s − s at s = v + y ≥ 0, less the loss's terms in y.
            Loss::Poisson if v + y >= 0.0 => {
                let s = v + y;
                (x_ln_x(s) - s) - (x_ln_x(y) - y)
            }
            Loss::Log
            | Loss::SquaredHinge
            | Loss::SmoothHinge
            | Loss::Huber(_)
            | Loss::ModifiedHuber
            | Loss::Poisson => f64::INFINITY,
            _ => return None,
        };
        Some(value)
    }

    /// out_i = ℓ*(v_i) for every i, +∞ where [`conjugate`](Self::conjugate) is `None` (a loss
    /// without one, for which the dual bound is −∞): `conjugate` row by row, bit for bit, the
    /// log loss's entropies vectorized as in [`values`](Self::values). Panics if the lengths
    /// differ.
    pub fn conjugates(self, v: &[f64], y: &[f64], out: &mut [f64]) {
        let row = |loss: Loss, v, y| loss.conjugate(v, y).unwrap_or(f64::INFINITY);
        self.per_entry(v, y, out, row, |v, y, out| {
            for ((o, &v), &y) in out.iter_mut().zip(v).zip(y) {
                *o = -(v * y);
            }
            dense::map(Elementwise::Entropy, out);
            for ((o, &v), &y) in out.iter_mut().zip(v).zip(y) {
                if !(-1.0..=0.0).contains(&(v * y)) {
                    *o = f64::INFINITY;
                }
            }
        });
    }

    /// Whether ℓ'(p, y) grows without bound with the residual (squared, squared hinge and
    /// squared ε-insensitive loss), so that one stochastic step with η‖x‖² above about 2
    /// diverges: their steps start from the largest row norm, not the typical one.
    pub fn grows_with_residual(self) -> bool {
        matches!(
            self,
            Loss::Squared | Loss::SquaredHinge | Loss::SquaredEpsilonInsensitive(_)
        )
    }

    /// Whether the online learners' step sizes η_t = 1/(λ(t + t₀)) can be set for this loss
    /// from the rows alone: all but the Poisson loss, whose curvature e^p is bounded by nothing
    /// the rows say (a first step from w = 0 toward a label of 300 overshoots to e^300).
    /// AdaGrad, whose steps the gradients met size, needs no such bound.
    pub fn has_stochastic_steps(self) -> bool {
        self != Loss::Poisson
    }

    /// What a model of this loss predicts from a score p = w·x + b, where it predicts a value:
    /// the mean e^p under the Poisson loss, the score itself for every other regression loss.
    /// (A classification loss predicts a class: [`crate::model::Model::prediction`].)
    pub fn predicted_value(self, p: f64) -> f64 {
        match self {
            Loss::Poisson => math::exp(p),
            _ => p,
        }
    }

    /// Whether ℓ is differentiable everywhere (L-BFGS applies) or piecewise linear.
    pub fn is_smooth(self) -> bool {
        matches!(
            self,
            Loss::Squared
                | Loss::Log
                | Loss::SquaredHinge
                | Loss::SmoothHinge
                | Loss::SquaredEpsilonInsensitive(_)
                | Loss::Huber(_)
                | Loss::ModifiedHuber
                | Loss::Poisson
        )
    }
}

/// σ(s) = 1/(1 + e^(−s)): under the log loss's model, the probability that the label is +1
/// given the score s. Computed from e^(−|s|), which cannot overflow, so it is exact to
/// rounding at both ends (σ(−720) is e^(−720), not 1/(1 + e^720) = 1/∞ = 0); NaN gives NaN.
/// Out of line, as is the log loss's softplus: inlined, their polynomials made the row
/// functions too long to inline into the other losses' loops over rows (subLBFGS on hinge loss
/// took 1.01–1.08× the time; PERF.md `## Batch solvers`).
#[inline(never)]
pub fn logistic(s: f64) -> f64 {
    math::logistic(s)
}

/// ln(1 + e^t), the log loss at t = −y·p ([`math::softplus`]), out of line like [`logistic`].
#[inline(never)]
fn softplus(t: f64) -> f64 {
    math::softplus(t)
}

/// x·ln x for x ≥ 0, with 0·ln 0 = 0 (NaN below 0, where no count lies): the Poisson loss's
/// terms in the label.
fn x_ln_x(x: f64) -> f64 {
    if x > 0.0 {
        x * x.ln()
    } else if x == 0.0 {
        0.0
    } else {
        f64::NAN
    }
}

/// out_i = −y_i·p_i, the log loss's argument (as [`Loss::value`] forms it).
fn negated_margins(p: &[f64], y: &[f64], out: &mut [f64]) {
    for ((o, &p), &y) in out.iter_mut().zip(p).zip(y) {
        *o = -y * p;
    }
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loss::Squared => f.write_str("squared"),
            Loss::Absolute => f.write_str("absolute"),
            Loss::Hinge => f.write_str("hinge"),
            Loss::Log => f.write_str("log"),
            Loss::SquaredHinge => f.write_str("squared-hinge"),
            Loss::SmoothHinge => f.write_str("smooth-hinge"),
            Loss::EpsilonInsensitive(eps) => write!(f, "epsilon-insensitive:{eps}"),
            Loss::SquaredEpsilonInsensitive(eps) => {
                write!(f, "squared-epsilon-insensitive:{eps}")
            }
            Loss::Quantile(tau) => write!(f, "quantile:{tau}"),
            Loss::Huber(delta) => write!(f, "huber:{delta}"),
            Loss::ModifiedHuber => f.write_str("modified-huber"),
            Loss::Poisson => f.write_str("poisson"),
        }
    }
}

impl FromStr for Loss {
    type Err = String;

    /// Names as printed by `Display`; `epsilon-insensitive` and `squared-epsilon-insensitive`
    /// take ε after a colon (default 0.1, liblinear's `-p`), `quantile` τ in (0, 1) (default
    /// ½, as VW's `--quantile_tau`), `huber` δ > 0 (default 1, as PyTorch's and TensorFlow's
    /// Huber losses; scikit-learn's `SGDRegressor` defaults to 0.1).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, parameter) = match s.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (s, None),
        };
        let loss = match name {
            "squared" => Loss::Squared,
            "absolute" => Loss::Absolute,
            "hinge" => Loss::Hinge,
            "log" | "logistic" => Loss::Log,
            "squared-hinge" => Loss::SquaredHinge,
            "smooth-hinge" => Loss::SmoothHinge,
            "modified-huber" => Loss::ModifiedHuber,
            "poisson" => Loss::Poisson,
            "huber" => {
                let delta = match parameter {
                    None => 1.0,
                    Some(p) => p
                        .parse::<f64>()
                        .ok()
                        .filter(|d| *d > 0.0 && d.is_finite())
                        .ok_or_else(|| format!("δ '{p}' is not a positive number"))?,
                };
                return Ok(Loss::Huber(delta));
            }
            "epsilon-insensitive" => return Ok(Loss::EpsilonInsensitive(epsilon(parameter)?)),
            "squared-epsilon-insensitive" => {
                return Ok(Loss::SquaredEpsilonInsensitive(epsilon(parameter)?));
            }
            "quantile" | "pinball" => {
                let tau = match parameter {
                    None => 0.5,
                    Some(p) => p
                        .parse::<f64>()
                        .ok()
                        .filter(|t| *t > 0.0 && *t < 1.0)
                        .ok_or_else(|| format!("τ '{p}' is not a number between 0 and 1"))?,
                };
                return Ok(Loss::Quantile(tau));
            }
            _ => {
                return Err(format!(
                    "unknown loss '{s}' (squared, absolute, hinge, log, squared-hinge, smooth-hinge, modified-huber, epsilon-insensitive[:ε], squared-epsilon-insensitive[:ε], quantile[:τ], huber[:δ], poisson)"
                ));
            }
        };
        match parameter {
            None => Ok(loss),
            Some(_) => Err(format!("loss '{name}' takes no parameter")),
        }
    }
}

/// The ε of `epsilon-insensitive[:ε]`: 0.1 when not given, else a non-negative number.
fn epsilon(parameter: Option<&str>) -> Result<f64, String> {
    match parameter {
        None => Ok(0.1),
        Some(p) => p
            .parse::<f64>()
            .ok()
            .filter(|e| *e >= 0.0 && e.is_finite())
            .ok_or_else(|| format!("ε '{p}' is not a non-negative number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Loss; 13] = [
        Loss::Squared,
        Loss::Absolute,
        Loss::Hinge,
        Loss::Log,
        Loss::SquaredHinge,
        Loss::SmoothHinge,
        Loss::EpsilonInsensitive(0.1),
        Loss::SquaredEpsilonInsensitive(0.1),
        Loss::Quantile(0.5),
        Loss::Quantile(0.2),
        Loss::Huber(0.8),
        Loss::ModifiedHuber,
        Loss::Poisson,
    ];

    /// Labels to test a loss at: classes, and a value between, or counts for the Poisson loss
    /// (which has no negative label).
    fn labels(loss: Loss) -> &'static [f64] {
        match loss {
            Loss::Poisson => &[0.0, 1.0, 0.3, 7.0],
            _ => &[-1.0, 1.0, 0.3],
        }
    }

    /// The tolerance of a check on a value of magnitude `magnitude`: absolute up to 1, relative
    /// beyond (the Poisson loss's e^p at p = 40 is 2·10¹⁷).
    fn within(magnitude: f64, tolerance: f64) -> f64 {
        tolerance * magnitude.abs().max(1.0)
    }

    /// The slice forms are the row-by-row functions, bit for bit, on every loss: arguments
    /// from the tails of the log loss (±800, where e^−|z| underflows) to 0, NaN included.
    #[test]
    fn slice_forms_are_the_row_functions_bit_for_bit() {
        let ps = [
            -800.0,
            -37.5,
            -2.0,
            -0.3,
            -0.0,
            0.0,
            1e-9,
            0.7,
            1.0,
            4.5,
            40.0,
            720.0,
            f64::NAN,
        ];
        let ys = [-1.0, 1.0, 0.4, -2.5];
        let (mut p, mut y) = (Vec::new(), Vec::new());
        for &pv in &ps {
            for &yv in &ys {
                p.push(pv);
                y.push(yv);
            }
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut out = vec![0.0; p.len()];
        for loss in ALL {
            let row = |f: fn(Loss, f64, f64) -> f64| {
                p.iter()
                    .zip(&y)
                    .map(|(&p, &y)| f(loss, p, y))
                    .collect::<Vec<_>>()
            };
            loss.values(&p, &y, &mut out);
            assert_eq!(bits(&out), bits(&row(Loss::value)), "{loss} values");
            loss.derivatives(&p, &y, &mut out);
            assert_eq!(
                bits(&out),
                bits(&row(Loss::derivative)),
                "{loss} derivatives"
            );
            let mut both = vec![0.0; p.len()];
            loss.values_and_derivatives(&p, &y, &mut both, &mut out);
            assert_eq!(bits(&both), bits(&row(Loss::value)), "{loss} both: values");
            assert_eq!(
                bits(&out),
                bits(&row(Loss::derivative)),
                "{loss} both: derivatives"
            );
            loss.second_derivatives(&p, &y, &mut out);
            assert_eq!(
                bits(&out),
                bits(&row(Loss::second_derivative)),
                "{loss} curvatures"
            );
            loss.conjugates(&p, &y, &mut out);
            let conjugate = |loss: Loss, v, y| loss.conjugate(v, y).unwrap_or(f64::INFINITY);
            assert_eq!(bits(&out), bits(&row(conjugate)), "{loss} conjugates");
        }
    }

    #[test]
    fn logistic_is_the_log_loss_probability_at_every_scale() {
        assert_eq!(logistic(0.0), 0.5);
        for s in [1e-9, 0.3, 2.0, 17.5, 40.0] {
            let (up, down) = (logistic(s), logistic(-s));
            assert!((up + down - 1.0).abs() <= f64::EPSILON, "σ({s}) + σ(−{s})");
            assert!(
                (up / down - s.exp()).abs() <= 1e-12 * s.exp(),
                "odds at {s}"
            );
            // The log loss of a +1 label is −log P(+1).
            assert!((Loss::Log.value(s, 1.0) + up.ln()).abs() <= 1e-15);
            assert!((Loss::Log.value(s, -1.0) + down.ln()).abs() <= 1e-12 * s.max(1.0));
        }
        // Far tails: exact to rounding, neither 0/0 nor 1/∞ = 0 too early.
        assert_eq!(logistic(-720.0), math::exp(-720.0));
        assert!(logistic(-720.0) > 0.0 && (720.0f64).exp().is_infinite());
        assert_eq!(logistic(-800.0), 0.0); // e^(−800) is below the smallest double
        assert_eq!(logistic(800.0), 1.0);
        assert_eq!(logistic(f64::INFINITY), 1.0);
        assert_eq!(logistic(f64::NEG_INFINITY), 0.0);
        assert!(logistic(f64::NAN).is_nan());
    }

    #[test]
    fn derivative_matches_finite_differences_away_from_kinks() {
        for loss in ALL {
            for &y in labels(loss) {
                for &p in &[-2.7, -0.55, 0.45, 0.77, 1.9, 3.3] {
                    let h = 1e-6;
                    let numeric = (loss.value(p + h, y) - loss.value(p - h, y)) / (2.0 * h);
                    let analytic = loss.derivative(p, y);
                    assert!(
                        (numeric - analytic).abs() < 1e-5,
                        "{loss} p={p} y={y}: {numeric} vs {analytic}"
                    );
                }
            }
        }
    }

    #[test]
    fn second_derivative_matches_finite_differences_away_from_kinks() {
        for loss in ALL {
            for &y in labels(loss) {
                for &p in &[-2.7, -0.55, 0.45, 0.77, 1.9, 3.3, 40.0] {
                    let h = 1e-6;
                    let numeric =
                        (loss.derivative(p + h, y) - loss.derivative(p - h, y)) / (2.0 * h);
                    let analytic = loss.second_derivative(p, y);
                    assert!(
                        (numeric - analytic).abs() < within(analytic, 1e-5),
                        "{loss} p={p} y={y}: {numeric} vs {analytic}"
                    );
                }
            }
        }
        // The log loss's curvature stays positive and exact far in the tails.
        let tail = Loss::Log.second_derivative(700.0, 1.0);
        assert!(tail > 0.0 && (tail / (-700.0f64).exp() - 1.0).abs() < 1e-12);
    }

    /// Fenchel–Young: ℓ(p) + ℓ*(ℓ'(p)) = p·ℓ'(p) for the smooth losses, and ℓ* is the
    /// supremum it claims to be (no p on a grid does better); outside the domain, +∞.
    #[test]
    fn conjugates_meet_fenchel_young_with_equality() {
        let grid: Vec<f64> = (-400..=400).map(|k| k as f64 / 40.0).collect();
        for loss in ALL {
            let Some(_) = loss.conjugate(0.0, 1.0) else {
                assert!(!loss.is_smooth(), "{loss}");
                continue;
            };
            // Classes ±1; counts for the Poisson loss, whose e^40 asks for a relative bound.
            let (ys, scale): (&[f64], fn(f64) -> f64) = match loss {
                Loss::Poisson => (labels(loss), |x| x),
                _ => (&[-1.0, 1.0], |_| 1.0),
            };
            for &y in ys {
                for &p in &[-30.0, -2.7, -0.55, 0.0, 0.45, 0.99, 1.9, 40.0] {
                    let v = loss.derivative(p, y);
                    let conjugate = loss.conjugate(v, y).unwrap();
                    let equality = loss.value(p, y) + conjugate - p * v;
                    let tolerance = within(scale(p * v), 1e-12);
                    assert!(
                        equality.abs() <= tolerance,
                        "{loss} p={p} y={y}: {equality:e}"
                    );
                    let best = grid
                        .iter()
                        .map(|&q| v * q - loss.value(q, y))
                        .fold(f64::NEG_INFINITY, f64::max);
                    assert!(best <= conjugate + tolerance, "{loss} p={p} y={y}");
                }
            }
        }
        assert_eq!(Loss::Log.conjugate(0.5, 1.0), Some(f64::INFINITY));
        assert_eq!(
            Loss::SquaredHinge.conjugate(-0.5, -1.0),
            Some(f64::INFINITY)
        );
        assert_eq!(Loss::SmoothHinge.conjugate(-1.5, 1.0), Some(f64::INFINITY));
        assert_eq!(Loss::Hinge.conjugate(-0.5, 1.0), None);
    }

    #[test]
    fn log_loss_is_stable_for_huge_margins() {
        for &p in &[1e300, -1e300, 700.0, -700.0, 1e-300] {
            for &y in &[-1.0, 1.0] {
                let v = Loss::Log.value(p, y);
                let d = Loss::Log.derivative(p, y);
                assert!(v.is_finite() && d.is_finite(), "p={p} y={y}: {v} {d}");
                assert!(v >= 0.0 && d.abs() <= 1.0);
            }
        }
        assert_eq!(Loss::Log.value(-1e300, 1.0), 1e300);
        assert_eq!(Loss::Log.derivative(1e300, 1.0), 0.0);
    }

    /// The pinball loss weighs misses below y by τ and above by 1 − τ; τ = ½ is half the
    /// absolute loss; τ outside (0, 1) is refused.
    #[test]
    fn quantile_loss_weighs_the_two_sides_by_tau() {
        let q = Loss::Quantile(0.2);
        assert_eq!(q.value(1.0, 6.0), 0.2 * 5.0);
        assert_eq!(q.value(6.0, 1.0), 0.8 * 5.0);
        assert_eq!(
            (q.derivative(1.0, 6.0), q.derivative(6.0, 1.0)),
            (-0.2, 0.8)
        );
        assert_eq!(q.derivative(3.0, 3.0), 0.0);
        for (p, y) in [(-2.5, 1.0), (4.0, 0.5), (0.0, 0.0)] {
            let half = Loss::Quantile(0.5);
            assert_eq!(half.value(p, y), 0.5 * Loss::Absolute.value(p, y));
        }
        assert_eq!("quantile".parse::<Loss>(), Ok(Loss::Quantile(0.5)));
        assert_eq!("pinball:0.9".parse::<Loss>(), Ok(Loss::Quantile(0.9)));
        for bad in ["quantile:0", "quantile:1", "quantile:-0.2", "quantile:x"] {
            assert!(
                bad.parse::<Loss>().unwrap_err().contains("between 0 and 1"),
                "{bad}"
            );
        }
        assert!(!q.is_classification() && !q.is_smooth());
    }

    /// The Poisson loss is half the deviance: 0 at the score ln y, e^p for a count of 0, its
    /// derivative the residual of the mean e^p; its models predict that mean.
    #[test]
    fn the_poisson_loss_is_half_the_deviance_of_the_mean() {
        let poisson = Loss::Poisson;
        for y in [0.5f64, 1.0, 7.0, 300.0] {
            let best = y.ln();
            assert!(poisson.value(best, y).abs() <= 1e-12 * y, "y={y}");
            assert!(poisson.derivative(best, y).abs() <= 1e-12 * y, "y={y}");
            // The deviance 2(y·ln(y/μ) − y + μ) of the mean μ = e^p.
            let (p, mu) = (best + 0.75, (best + 0.75).exp());
            let deviance = 2.0 * (y * (y / mu).ln() - y + mu);
            assert!((2.0 * poisson.value(p, y) - deviance).abs() <= 1e-12 * deviance);
        }
        assert_eq!(poisson.value(1.5, 0.0), math::exp(1.5));
        assert_eq!(poisson.derivative(0.0, 4.0), -3.0);
        assert!(poisson.value(0.0, -1.0).is_nan(), "no negative count");
        assert_eq!(poisson.predicted_value(2.0f64.ln()), 2.0);
        assert_eq!(Loss::Squared.predicted_value(-3.5), -3.5);
        // ℓ* at s = v + y = 0 is y − y·ln y; below it +∞.
        let at_zero = poisson.conjugate(-7.0, 7.0).unwrap();
        assert!((at_zero - (7.0 - 7.0 * 7.0f64.ln())).abs() <= 1e-12 * 7.0);
        assert_eq!(poisson.conjugate(-7.5, 7.0), Some(f64::INFINITY));
        assert!(poisson.is_smooth() && !poisson.is_classification());
        assert!(!poisson.has_stochastic_steps() && Loss::Log.has_stochastic_steps());
        assert_eq!("poisson".parse::<Loss>(), Ok(Loss::Poisson));
        assert!(
            "poisson:1"
                .parse::<Loss>()
                .unwrap_err()
                .contains("no parameter")
        );
        assert_eq!(poisson.to_string(), "poisson");
    }

    /// Huber's loss is the squared loss within δ of the label and δ-sloped beyond, continuous
    /// at ±δ; the modified Huber loss is the squared hinge down to yp = −1, then −4yp.
    #[test]
    fn the_huber_losses_are_squared_near_and_linear_far() {
        let huber = Loss::Huber(2.0);
        assert_eq!(
            (huber.value(3.0, 2.0), huber.derivative(3.0, 2.0)),
            (0.5, 1.0)
        );
        assert_eq!(
            (huber.value(7.0, 2.0), huber.derivative(7.0, 2.0)),
            (8.0, 2.0)
        );
        assert_eq!(
            (huber.value(-3.0, 2.0), huber.derivative(-3.0, 2.0)),
            (8.0, -2.0)
        );
        assert_eq!(
            huber.value(4.0, 2.0),
            2.0,
            "½δ² at the seam, from either side"
        );
        let modified = Loss::ModifiedHuber;
        for z in [-0.5, 0.3, 0.9, 1.0, 2.0] {
            assert_eq!(modified.value(z, 1.0), Loss::SquaredHinge.value(z, 1.0));
        }
        assert_eq!(
            (modified.value(-3.0, 1.0), modified.derivative(-3.0, 1.0)),
            (12.0, -4.0)
        );
        assert_eq!(
            (modified.value(3.0, -1.0), modified.derivative(3.0, -1.0)),
            (12.0, 4.0)
        );
        assert_eq!(modified.value(-1.0, 1.0), 4.0, "continuous at yp = −1");
        assert!(modified.is_classification() && !huber.is_classification());
        assert_eq!("huber".parse::<Loss>(), Ok(Loss::Huber(1.0)));
        assert_eq!("huber:0.5".parse::<Loss>(), Ok(Loss::Huber(0.5)));
        for bad in ["huber:0", "huber:-1", "huber:inf", "huber:x"] {
            let error = bad.parse::<Loss>().unwrap_err();
            assert!(error.contains("not a positive number"), "{bad}: {error}");
        }
        assert!("modified-huber:1".parse::<Loss>().is_err());
    }

    #[test]
    fn names_round_trip() {
        for loss in ALL {
            assert_eq!(loss.to_string().parse::<Loss>().unwrap(), loss);
        }
        assert!("nope".parse::<Loss>().is_err());
    }
}
