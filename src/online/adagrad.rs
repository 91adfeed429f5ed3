//! AdaGrad (Duchi, Hazan & Singer, 2011) in its regularized dual averaging form: per-feature
//! step sizes, O(k) per step, and its literal O(Tn) baseline.
//!
//! The learner keeps, per feature, the sum of its loss gradients u_j = Σ_{i≤t} g_i x_ij (SGD's
//! v) and the root of the sum of their squares, r_j = √G_j, G_j = Σ_{i≤t} (g_i x_ij)² (the
//! root, so that reading a weight takes a division and no square root). Its iterate after t
//! steps minimizes ⟨u, w⟩ + t·(λ/2‖w‖² + λ₁‖w‖₁) + ½ Σ_j h_j (w_j − c_j)² with
//! h_j = (δ + r_j)/η, the paper's RDA update with the composite term of MATH.md's objective,
//! centred on the starting point c (0, or a warm start's weights):
//!
//! w_j = −soft(u_j − h_j c_j, tλ₁) / (tλ + h_j).
//!
//! From zero this is SGD's Lemma 1, w = −v/(λt + λt₀), with the constant λt₀ replaced by h_j,
//! which grows with the feature's own gradients: a rare feature takes long steps, a frequent
//! one short, and no t₀ needs choosing. As t grows, tλ outweighs h_j (which grows as √t at
//! most) and the iterate tends to MATH.md's minimizer. A weight depends on its own sums (and
//! centre) and t only, so a step reads and writes the example's k features and nothing else;
//! the L1 term, applied as tλ₁ to the whole sum, needs no catching up either (unlike SGD's
//! truncation). Those k entries are read and written by `sparselin_kernels::adagrad`, whose
//! vector paths take a weight's division and a root's square root four entries at a time.
//!
//! A regularized bias is one more feature of value 1; a free one has λ = λ₁ = 0.

use sparselin_kernels::HugeArray;
use sparselin_kernels::adagrad::{self, Weights, add_gradient};

use super::{Iterate, Learner, Snapshot, for_each_entry, soft_threshold};
use crate::data::Row;
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// δ of h_j = (δ + r_j)/η: it keeps a feature's first steps, taken while r_j is small, from
/// jumping to ±η whatever the gradient's size. 1, as McMahan et al. (2013) found usually good
/// enough for the same role in FTRL-Proximal (their β); the gradients it is compared with are
/// the loss derivative (at most 1 for the Lipschitz losses) times a feature value.
pub const DELTA: f64 = 1.0;

/// The per-feature rule: λ, λ₁, η and whether the bias is regularized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdagradRule {
    /// λ ≥ 0 of (λ/2)‖w‖².
    pub lambda: f64,
    /// λ₁ of λ₁‖w‖₁ (0: none).
    pub l1: f64,
    /// The step η > 0.
    pub eta: f64,
    /// Whether λ and λ₁ apply to the bias too.
    pub regularize_bias: bool,
}

impl AdagradRule {
    /// The default step η: a feature's first step moves its weight by less than η/2 (|g·x_j|
    /// < 1 against δ = 1), which suits features of values up to about 1 and the Lipschitz
    /// losses; a regression on targets of a larger scale needs a larger η.
    pub const DEFAULT_ETA: f64 = 1.0;

    /// The weights' rule after `t` steps.
    #[inline]
    fn at(&self, t: u64) -> WeightsAt {
        let features = Weights {
            lambda_t: t as f64 * self.lambda,
            l1_t: t as f64 * self.l1,
            delta: DELTA,
            inverse_eta: 1.0 / self.eta,
        };
        let free = Weights {
            lambda_t: 0.0,
            l1_t: 0.0,
            ..features
        };
        WeightsAt {
            features,
            bias: if self.regularize_bias { features } else { free },
        }
    }
}

/// [`AdagradRule`] after t steps: the features' weights and the bias's (λ = λ₁ = 0 where it is
/// free), w_j = −soft(u_j − h_j c_j, tλ₁)/(tλ + h_j) with h_j = (δ + r_j)/η
/// ([`Weights::weight`]).
#[derive(Clone, Copy)]
struct WeightsAt {
    features: Weights,
    bias: Weights,
}

/// [u, r] with u set so that the weight `rule` gives, centred on `centre`, is `w`: the
/// inverse of [`Weights::weight`]. Under an L1 term every |u − hc| ≤ tλ₁ gives a zero weight:
/// where both `w` and the sums' own weight are 0 the sums are kept, so that what the learner
/// accumulated below the threshold is not lost.
fn restarted(rule: Weights, [u, root]: [f64; 2], centre: f64, w: f64) -> [f64; 2] {
    let h = rule.proximal(root);
    let u = match w {
        0.0 if soft_threshold(u - h * centre, rule.l1_t) == 0.0 => u,
        0.0 => h * centre,
        w => h * centre - w * (rule.lambda_t + h) - rule.l1_t.copysign(w),
    };
    [u, root]
}

/// Where the iterates are centred: the origin, or a warm start's weights and bias.
struct Centre {
    weights: Option<Vec<f64>>,
    bias: f64,
}

impl Centre {
    /// The starting point's weights and bias, or the origin; an error if the weights' copy
    /// cannot be allocated.
    fn of(start: Option<&Iterate>) -> Result<Centre, AllocError> {
        Ok(match start {
            Some(start) => Centre {
                weights: Some(memory::copied("weights", &start.weights)?),
                bias: start.bias,
            },
            None => Centre {
                weights: None,
                bias: 0.0,
            },
        })
    }

    /// c_j.
    #[inline]
    fn weight(&self, j: usize) -> f64 {
        self.weights.as_ref().map_or(0.0, |c| c[j])
    }
}

/// AdaGrad's state: the two sums of every feature and of the bias, and the centre.
pub struct Adagrad {
    loss: WeightedLoss,
    rule: AdagradRule,
    /// [u_j, r_j] per feature, interleaved: one cache line serves both in a step.
    sums: HugeArray<[f64; 2]>,
    /// The bias's [u, r].
    bias: [f64; 2],
    centre: Centre,
}

impl Adagrad {
    /// A fresh learner over `n_features` features, its iterates centred on `start` (at step 0
    /// the iterate, with the steps at their largest; the origin if `None`); an error if the
    /// sums (16 bytes a feature) or the centre (8) cannot be allocated.
    pub fn new(
        n_features: usize,
        loss: impl Into<WeightedLoss>,
        rule: AdagradRule,
        start: Option<&Iterate>,
    ) -> Result<Adagrad, AllocError> {
        Ok(Adagrad {
            loss: loss.into(),
            rule,
            sums: memory::zeroed("weights", n_features)?,
            bias: [0.0; 2],
            centre: Centre::of(start)?,
        })
    }

    /// p = Σ_j x_j w_j + b with the weights after `t` steps, over the example's entries.
    #[inline]
    fn predict(&self, x: &Row<'_>, t: u64) -> f64 {
        let at = self.rule.at(t);
        let centre = self.centre.weights.as_deref();
        let p = adagrad::dot(at.features, &self.sums, centre, x.indices, x.values);
        p + at.bias.weight(self.bias, self.centre.bias)
    }
}

impl Learner for Adagrad {
    #[inline]
    fn step(&mut self, _i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let p = self.predict(&x, t - 1);
        let g = s * self.loss.derivative(p, y);
        if g != 0.0 {
            adagrad::accumulate(g, x.indices, x.values, &mut self.sums);
            add_gradient(&mut self.bias, g);
        }
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        iterate_at(self.rule.at(t), &self.sums, self.bias, &self.centre)
    }

    /// Keeps each feature's r_j and centre and sets u_j so that the iterate after `t` steps
    /// is the snapshot's last one: restarting from the learner's own snapshot changes nothing
    /// but rounding, and a learner centred on its start restarts there at step 0 with u = 0.
    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        let now = self.rule.at(t);
        restart_sums(now, &mut self.sums, &mut self.bias, &self.centre, snapshot);
    }
}

/// The iterate `now` gives of every feature's sums and the bias's.
fn iterate_at(
    now: WeightsAt,
    sums: &[[f64; 2]],
    bias: [f64; 2],
    centre: &Centre,
) -> Result<Snapshot, AllocError> {
    let weights =
        (sums.iter().enumerate()).map(|(j, &sums)| now.features.weight(sums, centre.weight(j)));
    let weights = memory::collected("weights", sums.len(), weights)?;
    Ok(Snapshot {
        last: Iterate {
            weights,
            bias: now.bias.weight(bias, centre.bias),
        },
        averaged: None,
    })
}

/// Every u_j (and the bias's) set so that the iterate `now` gives is the snapshot's last one
/// ([`restarted`]).
fn restart_sums(
    now: WeightsAt,
    sums: &mut [[f64; 2]],
    bias: &mut [f64; 2],
    centre: &Centre,
    snapshot: &Snapshot,
) {
    let last = &snapshot.last;
    for (j, (sums, &w)) in sums.iter_mut().zip(&last.weights).enumerate() {
        *sums = restarted(now.features, *sums, centre.weight(j), w);
    }
    *bias = restarted(now.bias, *bias, centre.bias, last.bias);
}

/// AdaGrad written literally: every step recomputes all n weights from the sums, copies the
/// example into a dense vector and adds its gradient to all n sums (zero where the example
/// has no entry). The oracle of [`Adagrad`], which takes the very same steps (bit for bit on
/// the scalar kernels; a vector path sums the prediction in another order), and the O(Tn)
/// baseline of its cost.
pub struct NaiveAdagrad {
    loss: WeightedLoss,
    rule: AdagradRule,
    /// [u_j, r_j] per feature.
    sums: Vec<[f64; 2]>,
    /// The bias's [u, r].
    bias: [f64; 2],
    centre: Centre,
    /// w_{t−1}, recomputed at every step.
    w: Vec<f64>,
    /// Dense copy of the current example.
    x: Vec<f64>,
}

impl NaiveAdagrad {
    /// A fresh baseline over `n_features` features centred on `start` (see [`Adagrad::new`]);
    /// an error if its dense vectors (n entries each) cannot be allocated.
    pub fn new(
        n_features: usize,
        loss: impl Into<WeightedLoss>,
        rule: AdagradRule,
        start: Option<&Iterate>,
    ) -> Result<NaiveAdagrad, AllocError> {
        let zeros = || memory::filled("weights", n_features, 0.0);
        Ok(NaiveAdagrad {
            loss: loss.into(),
            rule,
            sums: memory::filled("weights", n_features, [0.0; 2])?,
            bias: [0.0; 2],
            centre: Centre::of(start)?,
            w: zeros()?,
            x: zeros()?,
        })
    }
}

impl Learner for NaiveAdagrad {
    fn step(&mut self, _i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let before = self.rule.at(t - 1);
        for (j, (w, &sums)) in self.w.iter_mut().zip(&self.sums).enumerate() {
            *w = before.features.weight(sums, self.centre.weight(j));
        }
        let mut p = 0.0;
        for_each_entry(&x, |j, value| {
            self.x[j] = value;
            p += value * self.w[j];
        });
        p += before.bias.weight(self.bias, self.centre.bias);
        let g = s * self.loss.derivative(p, y);
        for (sums, &value) in self.sums.iter_mut().zip(&self.x) {
            add_gradient(sums, g * value);
        }
        add_gradient(&mut self.bias, g);
        for_each_entry(&x, |j, _| self.x[j] = 0.0);
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        iterate_at(self.rule.at(t), &self.sums, self.bias, &self.centre)
    }

    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        let now = self.rule.at(t);
        restart_sums(now, &mut self.sums, &mut self.bias, &self.centre, snapshot);
    }
}
