//! The bias b of the online learners, regularized (the seed's objective, MATH.md §1) or not.
//!
//! Regularized, the bias follows Lemma 1 like the weights: b_t = −a_t/(λ(t + t₀)) with
//! a_t = Σ g_i, and its average is b̄_T = −(h'_T a_T − ā_T)/(λ(T − t_a + 1)) (MATH.md §3).
//! Unregularized, there is no shrinkage to fold into a sum: b_t = b_{t−1} − r·η_t g_t, with
//! the bias rate r of [`Schedule::bias_rate`](super::Schedule::bias_rate) (1 by default), and
//! its average is kept as a running mean. Both are O(1) per step.

use super::soft_threshold;

/// The bias's running state.
#[derive(Clone, Copy, Debug)]
pub enum BiasTerm {
    /// (λ/2)b² is part of the objective.
    Regularized {
        /// a_t = Σ_{i≤t} g_i.
        a: f64,
        /// ā_t = Σ_{i≤t} h'_{i−1} g_i.
        a_bar: f64,
    },
    /// b is not penalized.
    Free {
        /// b_t itself.
        b: f64,
        /// The mean of b_{t_a}, …, b_t.
        b_bar: f64,
    },
}

impl BiasTerm {
    /// b_0 = 0.
    pub fn new(regularized: bool) -> BiasTerm {
        if regularized {
            BiasTerm::Regularized { a: 0.0, a_bar: 0.0 }
        } else {
            BiasTerm::Free { b: 0.0, b_bar: 0.0 }
        }
    }

    /// b_t, given `divisor` = λ(t + t₀) (b_0 = 0 when the divisor is 0).
    #[inline]
    pub fn value(&self, divisor: f64) -> f64 {
        match *self {
            BiasTerm::Regularized { a, .. } => {
                if divisor == 0.0 {
                    0.0
                } else {
                    -a / divisor
                }
            }
            BiasTerm::Free { b, .. } => b,
        }
    }

    /// Step t with loss derivative `g`, not averaged; `eta` is the free bias's step
    /// ([`Schedule::bias_eta`](super::Schedule::bias_eta)), unused by a regularized one.
    #[inline]
    pub fn update(&mut self, g: f64, eta: f64) {
        match self {
            BiasTerm::Regularized { a, .. } => *a += g,
            BiasTerm::Free { b, .. } => *b -= eta * g,
        }
    }

    /// Soft-thresholds a regularized bias's sum a_t by λ₁ (its L1 step, [`super::Sgd`]); a
    /// free bias has no L1 term.
    #[inline]
    pub fn truncate(&mut self, l1: f64) {
        if let BiasTerm::Regularized { a, .. } = self {
            *a = soft_threshold(*a, l1);
        }
    }

    /// Step t of an averaged learner: `eta` as for [`update`](Self::update), `h_prev` = h'_{t−1}
    /// and `count` = t − t_a + 1, the number of iterates averaged after this step (0 before t_a).
    #[inline]
    pub fn update_averaged(&mut self, g: f64, eta: f64, h_prev: f64, count: u64) {
        match self {
            BiasTerm::Regularized { a, a_bar } => {
                *a += g;
                *a_bar += h_prev * g;
            }
            BiasTerm::Free { b, b_bar } => {
                *b -= eta * g;
                if count > 0 {
                    *b_bar += (*b - *b_bar) / count as f64;
                }
            }
        }
    }

    /// b̄_T, given h'_T and `divisor` = λ(T − t_a + 1).
    pub fn averaged(&self, h: f64, divisor: f64) -> f64 {
        match *self {
            BiasTerm::Regularized { a, a_bar } => -(h * a - a_bar) / divisor,
            BiasTerm::Free { b_bar, .. } => b_bar,
        }
    }

    /// The state (of the same kind) whose bias after t steps is `b` and whose average is
    /// `b_bar`, given `divisor` = λ(t + t₀), h'_t and `avg_divisor` = λ(t − t_a + 1) (0 before
    /// t_a, where `b_bar` is not used): the inverse of [`BiasTerm::value`] and
    /// [`BiasTerm::averaged`], a_t = −λ(t + t₀) b_t (Lemma 1) and ā_t = h'_t a_t + λ(t − t_a + 1) b̄_t.
    pub fn restarted(
        &self,
        b: f64,
        b_bar: f64,
        divisor: f64,
        h: f64,
        avg_divisor: f64,
    ) -> BiasTerm {
        let b_bar = if avg_divisor > 0.0 { b_bar } else { 0.0 };
        match self {
            BiasTerm::Regularized { .. } => {
                let a = -divisor * b;
                BiasTerm::Regularized {
                    a,
                    a_bar: h * a + avg_divisor * b_bar,
                }
            }
            BiasTerm::Free { .. } => BiasTerm::Free { b, b_bar },
        }
    }
}
