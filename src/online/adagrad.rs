//! AdaGrad (Duchi, Hazan & Singer, 2011) in its regularized dual averaging form: per-feature
//! step sizes, O(k) per step, and its literal O(Tn) baseline.
//!
//! The learner keeps, per feature, the sum of its loss gradients u_j = Σ_{i≤t} g_i x_ij (SGD's
//! v) and the root of the sum of their squares, r_j = √G_j, G_j = Σ_{i≤t} (g_i x_ij)² (the
//! root, so that reading a weight takes a division and no square root). Its iterate after t steps
//! minimizes ⟨u, w⟩ + t·(λ/2‖w‖² + λ₁‖w‖₁) + ½ Σ_j h_j w_j² with h_j = (δ + r_j)/η, the
//! paper's RDA update with the composite term of MATH.md's objective:
//!
//! w_j = −soft(u_j, tλ₁) / (tλ + h_j).
//!
//! This is SGD's Lemma 1, w = −v/(λt + λt₀), with the constant λt₀ replaced by h_j, which grows
//! with the feature's own gradients: a rare feature takes long steps, a frequent one short, and
//! no t₀ needs choosing. As t grows, tλ outweighs h_j (which grows as √t at most) and the
//! iterate tends to MATH.md's minimizer. A weight depends on its own two sums and t only, so a
//! step reads and writes the example's k features and nothing else; the L1 term, applied as
//! tλ₁ to the whole sum, needs no catching up either (unlike SGD's truncation).
//!
//! A regularized bias is one more feature of value 1; a free one has λ = λ₁ = 0.

use sparselin_kernels::HugeArray;

use super::{Iterate, Learner, Snapshot, for_each_entry, soft_threshold};
use crate::data::Row;
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// δ of h_j = (δ + r_j)/η: it keeps a feature's first steps, taken while G_j is small, from
/// jumping to ±η whatever the gradient's size. 1, as McMahan et al. (2013) found usually good
/// enough for the same role in FTRL-Proximal (their β); the gradients it is compared with are
/// the loss derivative (at most 1 for the Lipschitz losses) times a feature value.
pub const DELTA: f64 = 1.0;

/// The per-feature rule: λ, λ₁, η and whether the bias is regularized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdagradRule {
    /// λ of (λ/2)‖w‖².
    pub lambda: f64,
    /// λ₁ of λ₁‖w‖₁ (0: none).
    pub l1: f64,
    /// The step η > 0.
    pub eta: f64,
    /// Whether λ and λ₁ apply to the bias too.
    pub regularize_bias: bool,
}

impl AdagradRule {
    /// The default step η: a feature's first step moves its weight by up to η/2 (|g·x_j| ≤ 1
    /// against δ = 1), which suits features of values up to about 1.
    pub const DEFAULT_ETA: f64 = 1.0;

    /// The weights' rule after `t` steps.
    #[inline]
    fn at(&self, t: u64) -> WeightsAt {
        let t = t as f64;
        WeightsAt {
            lambda_t: t * self.lambda,
            l1_t: t * self.l1,
            inverse_eta: 1.0 / self.eta,
            bias_lambda_t: if self.regularize_bias {
                t * self.lambda
            } else {
                0.0
            },
            bias_l1_t: if self.regularize_bias {
                t * self.l1
            } else {
                0.0
            },
        }
    }
}

/// [`AdagradRule`] after t steps: w_j = −soft(u_j, tλ₁)/(tλ + (δ + r_j)/η), the bias's with
/// λ = λ₁ = 0 where it is free.
#[derive(Clone, Copy)]
struct WeightsAt {
    lambda_t: f64,
    l1_t: f64,
    inverse_eta: f64,
    bias_lambda_t: f64,
    bias_l1_t: f64,
}

impl WeightsAt {
    /// w_j from [u_j, r_j].
    #[inline]
    fn weight(&self, [u, root]: [f64; 2]) -> f64 {
        Self::of(u, root, self.lambda_t, self.l1_t, self.inverse_eta)
    }

    /// b from its [u, r].
    #[inline]
    fn bias(&self, [u, root]: [f64; 2]) -> f64 {
        Self::of(
            u,
            root,
            self.bias_lambda_t,
            self.bias_l1_t,
            self.inverse_eta,
        )
    }

    #[inline]
    fn of(u: f64, root: f64, lambda_t: f64, l1_t: f64, inverse_eta: f64) -> f64 {
        -soft_threshold(u, l1_t) / (lambda_t + (DELTA + root) * inverse_eta)
    }

    /// The u that gives weight `w` with root r, tλ and tλ₁: the inverse of
    /// [`WeightsAt::of`].
    fn sum_for(w: f64, root: f64, lambda_t: f64, l1_t: f64, inverse_eta: f64) -> f64 {
        match w {
            0.0 => 0.0,
            w => -w * (lambda_t + (DELTA + root) * inverse_eta) - l1_t.copysign(w),
        }
    }

    /// [u_j, r_j] with u_j set so that the weight is `w`.
    fn restarted(&self, sums: [f64; 2], w: f64) -> [f64; 2] {
        Self::sum_to(sums, w, self.lambda_t, self.l1_t, self.inverse_eta)
    }

    /// The bias's [u, r] with u set so that the bias is `b`.
    fn restarted_bias(&self, sums: [f64; 2], b: f64) -> [f64; 2] {
        Self::sum_to(
            sums,
            b,
            self.bias_lambda_t,
            self.bias_l1_t,
            self.inverse_eta,
        )
    }

    /// [u, r] with u set so that the weight is `w`. Under an L1 term every |u| ≤ tλ₁ gives a
    /// zero weight: where both `w` and the sums' own weight are 0 the sums are kept, so that
    /// what the learner accumulated below the threshold is not lost.
    fn sum_to([u, root]: [f64; 2], w: f64, lambda_t: f64, l1_t: f64, inverse_eta: f64) -> [f64; 2] {
        if w == 0.0 && soft_threshold(u, l1_t) == 0.0 {
            return [u, root];
        }
        [Self::sum_for(w, root, lambda_t, l1_t, inverse_eta), root]
    }
}

/// AdaGrad's state: the two sums of every feature and of the bias.
pub struct Adagrad {
    loss: WeightedLoss,
    rule: AdagradRule,
    /// [u_j, r_j] per feature, interleaved: one cache line serves both in a step.
    sums: HugeArray<[f64; 2]>,
    /// The bias's [u, r].
    bias: [f64; 2],
}

impl Adagrad {
    /// A fresh learner over `n_features` features (w = 0, b = 0); an error if the sums (16
    /// bytes a feature) cannot be allocated.
    pub fn new(
        n_features: usize,
        loss: impl Into<WeightedLoss>,
        rule: AdagradRule,
    ) -> Result<Adagrad, AllocError> {
        Ok(Adagrad {
            loss: loss.into(),
            rule,
            sums: memory::zeroed("weights", n_features)?,
            bias: [0.0; 2],
        })
    }
}

impl Learner for Adagrad {
    #[inline]
    fn step(&mut self, _i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let (before, sums) = (self.rule.at(t - 1), &mut self.sums);
        let mut p = 0.0;
        for_each_entry(&x, |j, value| p += value * before.weight(sums[j]));
        p += before.bias(self.bias);
        let g = s * self.loss.derivative(p, y);
        if g != 0.0 {
            for_each_entry(&x, |j, value| add_gradient(&mut sums[j], g * value));
            add_gradient(&mut self.bias, g);
        }
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        let now = self.rule.at(t);
        let weights = self.sums.iter().map(|&sums| now.weight(sums));
        let weights = memory::collected("weights", self.sums.len(), weights)?;
        Ok(last_iterate(weights, now.bias(self.bias)))
    }

    /// Keeps each feature's r_j and sets u_j so that the iterate after `t` steps is the
    /// snapshot's last one: restarting from the learner's own snapshot changes nothing but
    /// rounding, and a fresh learner starts at the given weights with its steps at their
    /// largest (r = 0).
    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        let now = self.rule.at(t);
        for (sums, &w) in self.sums.iter_mut().zip(&snapshot.last.weights) {
            *sums = now.restarted(*sums, w);
        }
        self.bias = now.restarted_bias(self.bias, snapshot.last.bias);
    }
}

/// [u, r] ← [u + c, √(r² + c²)] for the gradient component c; a zero component changes
/// neither (the baseline adds one for every feature an example lacks, and √(r²) need not
/// round back to r where r² underflows).
#[inline]
fn add_gradient(sums: &mut [f64; 2], c: f64) {
    if c != 0.0 {
        let [u, root] = *sums;
        *sums = [u + c, (root * root + c * c).sqrt()];
    }
}

/// A snapshot of a learner that outputs its last iterate.
fn last_iterate(weights: Vec<f64>, bias: f64) -> Snapshot {
    Snapshot {
        last: Iterate { weights, bias },
        averaged: None,
    }
}

/// AdaGrad written literally: every step recomputes all n weights from the sums, copies the
/// example into a dense vector and adds its gradient to all n sums (zero where the example
/// has no entry). The oracle of [`Adagrad`], which takes the very same steps, and the O(Tn)
/// baseline of its cost.
pub struct NaiveAdagrad {
    loss: WeightedLoss,
    rule: AdagradRule,
    /// [u_j, r_j] per feature.
    sums: Vec<[f64; 2]>,
    /// The bias's [u, r].
    bias: [f64; 2],
    /// w_{t−1}, recomputed at every step.
    w: Vec<f64>,
    /// Dense copy of the current example.
    x: Vec<f64>,
}

impl NaiveAdagrad {
    /// A fresh baseline over `n_features` features; an error if its dense vectors (n
    /// entries each) cannot be allocated.
    pub fn new(
        n_features: usize,
        loss: impl Into<WeightedLoss>,
        rule: AdagradRule,
    ) -> Result<NaiveAdagrad, AllocError> {
        let zeros = || memory::filled("weights", n_features, 0.0);
        Ok(NaiveAdagrad {
            loss: loss.into(),
            rule,
            sums: memory::filled("weights", n_features, [0.0; 2])?,
            bias: [0.0; 2],
            w: zeros()?,
            x: zeros()?,
        })
    }
}

impl Learner for NaiveAdagrad {
    fn step(&mut self, _i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let before = self.rule.at(t - 1);
        for (w, &sums) in self.w.iter_mut().zip(&self.sums) {
            *w = before.weight(sums);
        }
        let mut p = 0.0;
        for_each_entry(&x, |j, value| {
            self.x[j] = value;
            p += value * self.w[j];
        });
        p += before.bias(self.bias);
        let g = s * self.loss.derivative(p, y);
        for (sums, &value) in self.sums.iter_mut().zip(&self.x) {
            add_gradient(sums, g * value);
        }
        add_gradient(&mut self.bias, g);
        for_each_entry(&x, |j, _| self.x[j] = 0.0);
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        let now = self.rule.at(t);
        let weights = self.sums.iter().map(|&sums| now.weight(sums));
        let weights = memory::collected("weights", self.sums.len(), weights)?;
        Ok(last_iterate(weights, now.bias(self.bias)))
    }

    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        let now = self.rule.at(t);
        for (sums, &w) in self.sums.iter_mut().zip(&snapshot.last.weights) {
            *sums = now.restarted(*sums, w);
        }
        self.bias = now.restarted_bias(self.bias, snapshot.last.bias);
    }
}
