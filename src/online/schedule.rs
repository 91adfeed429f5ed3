//! Step sizes η_t = 1/(λ(t + t₀)) and the harmonic numbers h_t = Σ_{i≤t} 1/(i + t₀)
//! (MATH.md §2–§3).
//!
//! The learners keep a running h (an f64 sum, drift ≤ 3e-13 by t = 10⁷); [`harmonic`] is the
//! closed form for parallel workers that do not share a running sum (MATH.md §6).

/// The step-size schedule η_t = 1/(λ(t + t₀)) and the averaging start t_a.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Regularization strength λ > 0.
    pub lambda: f64,
    /// Offset t₀ ≥ 0 (need not be an integer); 0 is the seed's schedule.
    pub t0: f64,
    /// First step t_a ≥ 1 included in the averaged iterate.
    pub average_start: u64,
    /// A free bias steps by bias_rate·η_t (1: the weights' own step). Bottou's sgd and
    /// scikit-learn on sparse data step the intercept at 0.01·η: one bias shared by every row
    /// otherwise moves as much per step as a weight that only a few rows touch. A regularized
    /// bias is part of Lemma 1's sums and steps at the weights' rate.
    pub bias_rate: f64,
}

impl Schedule {
    /// η_t for step t ≥ 1.
    #[inline]
    pub fn eta(&self, t: u64) -> f64 {
        1.0 / (self.lambda * (t as f64 + self.t0))
    }

    /// The free bias's step at step t: bias_rate·η_t (η_t itself, bit for bit, at rate 1).
    #[inline]
    pub fn bias_eta(&self, t: u64) -> f64 {
        self.bias_rate * self.eta(t)
    }

    /// λ(t + t₀): the divisor that turns the gradient sums into the iterate after step t
    /// (Lemma 1: [w_t, b_t] = −[v_t, a_t]/(λ(t + t₀))). Zero only for t = t₀ = 0, where w_0 = 0.
    #[inline]
    pub fn divisor(&self, t: u64) -> f64 {
        self.lambda * (t as f64 + self.t0)
    }

    /// The default t₀ for data whose largest squared row norm is `max_norm2` (‖x‖², bias
    /// feature included: `max_norm2 + 1`).
    ///
    /// The first step of the t₀ = 0 schedule is η_1 = 1/λ, so (w_1, b_1) = −g_1[x, 1]/λ: with
    /// λ = 10⁻⁴ that is a weight of 10⁴ per unit feature, which the rest of the run has to
    /// undo (slowly: the decay factor is 1 − 1/(t + t₀)). With squared loss it is worse, the
    /// iterates grow like Π|1 − ‖x‖²/(λ(t + t₀))| until λ(t + t₀) > ‖x‖² (MATH.md §2). Choosing
    /// t₀ = ‖x‖²_max/λ makes every step contractive for squared loss (η_t‖x‖² ≤ 1) and caps the
    /// first step's change of the prediction at |g|, the scale of the loss's own slope:
    /// the first update moves p by −η_1 g (‖x‖² + 1) ≥ −g. This is the `t₀ ≥ max_i ‖x_i‖²/λ`
    /// of MATH.md §2, the same idea as Bottou's sgd, which picks t₀ so that the initial step
    /// size suits the data (there by a trial run on a sample).
    pub fn default_t0(lambda: f64, max_norm2: f64) -> f64 {
        (max_norm2 + 1.0) / lambda
    }
}

/// The running restarted harmonic sum h'_{t−1} = Σ_{i=t_a..t−1} 1/(i + t₀) of the averaged
/// learners (MATH.md §3; h' = h when t_a = 1), kept in f64.
#[derive(Clone, Copy, Debug)]
pub struct RunningHarmonic {
    h: f64,
    t0: f64,
    start: u64,
}

impl RunningHarmonic {
    /// h'_0 = 0 for a schedule.
    pub fn new(schedule: &Schedule) -> RunningHarmonic {
        RunningHarmonic {
            h: 0.0,
            t0: schedule.t0,
            start: schedule.average_start,
        }
    }

    /// The running sum resumed at a known value h (e.g. the closed form [`harmonic`] at a
    /// parallel worker's first step of a block).
    pub fn resume(schedule: &Schedule, h: f64) -> RunningHarmonic {
        RunningHarmonic {
            h,
            ..RunningHarmonic::new(schedule)
        }
    }

    /// A running sum at h'_t, taken from the closed form (after a jump in t, or a restart).
    pub fn at_step(schedule: &Schedule, t: u64) -> RunningHarmonic {
        RunningHarmonic::resume(schedule, RunningHarmonic::closed_form(schedule, t))
    }

    /// h'_t from the closed form: 0 before t_a, else `harmonic(t − t_a + 1, t₀ + t_a − 1)`.
    pub fn closed_form(schedule: &Schedule, t: u64) -> f64 {
        let ta = schedule.average_start;
        if t < ta {
            0.0
        } else {
            harmonic(t - ta + 1, schedule.t0 + ta as f64 - 1.0)
        }
    }

    /// h'_{t−1} during step t (before [`RunningHarmonic::advance`]), h'_T after the last step.
    #[inline]
    pub fn value(&self) -> f64 {
        self.h
    }

    /// Iterates averaged once step t is done: t − t_a + 1, or 0 before t_a.
    #[inline]
    pub fn count(&self, t: u64) -> u64 {
        (t + 1).saturating_sub(self.start)
    }

    /// End of step t: h'_t = h'_{t−1} + 1/(t + t₀) from t_a on.
    #[inline]
    pub fn advance(&mut self, t: u64) {
        if t >= self.start {
            self.h += 1.0 / (t as f64 + self.t0);
        }
    }
}

/// Switch-over point of [`harmonic`]: below it terms are summed directly.
const SERIES_START: f64 = 64.0;

/// c(x) = ψ(x + 1) − ln x, asymptotic series (error < 1/(240x⁸) < 2e-17 for x ≥ 64).
fn psi_tail(x: f64) -> f64 {
    let r = 1.0 / (x * x);
    0.5 / x - r * (1.0 / 12.0 - r * (1.0 / 120.0 - r / 252.0))
}

/// h_t = Σ_{i=1..t} 1/(i + t₀) in closed form, for real t₀ ≥ 0 (MATH.md §3):
/// the first r = min(t, ⌈64 − t₀⌉⁺) terms summed directly, then
/// log1p((t − r)/(r + t₀)) + c(t + t₀) − c(r + t₀). Relative error ≤ 1e-15.
///
/// The restarted sum h'_t of averaging from t_a is `harmonic(t − t_a + 1, t₀ + t_a − 1)`.
pub fn harmonic(t: u64, t0: f64) -> f64 {
    if t == 0 {
        return 0.0;
    }
    let r = ((SERIES_START - t0).ceil().max(0.0) as u64).min(t);
    let mut sum = 0.0;
    for i in 1..=r {
        sum += 1.0 / (i as f64 + t0);
    }
    if t > r {
        let (a, b) = (r as f64 + t0, t as f64 + t0);
        sum += ((b - a) / a).ln_1p() + (psi_tail(b) - psi_tail(a));
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Direct sum with Neumaier compensation, the oracle for the closed form.
    fn direct(t: u64, t0: f64) -> f64 {
        let (mut sum, mut comp) = (0.0f64, 0.0f64);
        for i in 1..=t {
            let x = 1.0 / (i as f64 + t0);
            let s = sum + x;
            comp += if sum.abs() >= x {
                (sum - s) + x
            } else {
                (x - s) + sum
            };
            sum = s;
        }
        sum + comp
    }

    #[test]
    fn closed_form_matches_the_direct_sum() {
        for &t0 in &[0.0, 0.5, 1.0, 10.0, 63.0, 100.0, 1e4, 1e6] {
            for &t in &[1u64, 2, 63, 64, 65, 100, 1000, 12345, 300_000] {
                let (closed, exact) = (harmonic(t, t0), direct(t, t0));
                assert!(
                    ((closed - exact) / exact).abs() < 2e-15,
                    "t={t} t0={t0}: {closed} vs {exact}"
                );
            }
        }
        assert_eq!(harmonic(0, 3.0), 0.0);
    }

    #[test]
    fn restarted_sum_is_a_shifted_harmonic() {
        let (t0, ta, t) = (7.5, 40u64, 5000u64);
        let restarted: f64 = (ta..=t).map(|i| 1.0 / (i as f64 + t0)).sum();
        let closed = harmonic(t - ta + 1, t0 + ta as f64 - 1.0);
        assert!(((closed - restarted) / restarted).abs() < 1e-14);
    }

    #[test]
    fn schedule_divisor_is_the_inverse_step() {
        let s = Schedule {
            lambda: 1e-3,
            t0: 2.5,
            average_start: 1,
            bias_rate: 1.0,
        };
        assert!((s.eta(7) * s.divisor(7) - 1.0).abs() < 1e-15);
        assert_eq!(Schedule::default_t0(0.5, 3.0), 8.0);
    }
}
