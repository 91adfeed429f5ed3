//! The O(Tn) baselines (MATH.md §5): SGD, ASGD and CASGD written literally.
//!
//! Every step copies the example into a dense vector (centered for CASGD: x − x̄, dense),
//! shrinks all of [w, b] by 1 − 1/(t + t₀) and adds −η_t g_t [x, 1] (a free bias: no shrink,
//! and −r·η_t g_t at the bias rate r); the averaged learners then update the dense running
//! mean w̄ ← w̄ + (w − w̄)/(t − t_a + 1). With an L1 term SGD then soft-thresholds every
//! weight (and a regularized bias) by η_t·λ₁. They exist to be the correctness oracle of the O(k)
//! learners (same loss, sampler and schedule, hence the same steps) and the baseline of the
//! cost comparison; their cost grows as T·n.

use sparselin_kernels::{dense, sparse};

use super::casgd::mean_example;
use super::{Iterate, Learner, Schedule, Snapshot, soft_threshold};
use crate::data::{Examples, Row};
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// Which of the three algorithms the baseline runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NaiveKind {
    /// Algorithm 1 without the gradient sum.
    Sgd,
    /// Algorithm 2 with a dense running average.
    Asgd,
    /// Algorithm 3 on explicitly centered, dense examples.
    Casgd,
}

/// Dense state of a baseline.
pub struct Naive {
    loss: WeightedLoss,
    schedule: Schedule,
    regularize_bias: bool,
    kind: NaiveKind,
    /// x̄ (CASGD only).
    x_bar: Vec<f64>,
    w: Vec<f64>,
    b: f64,
    w_bar: Vec<f64>,
    b_bar: f64,
    /// Dense copy of the current example.
    x: Vec<f64>,
    /// λ₁ of an L1 term (SGD; 0: none).
    l1: f64,
}

impl Naive {
    /// A fresh baseline; CASGD computes x̄ from `data` (O(mk + n)).
    pub fn new<E: Examples>(
        data: &E,
        kind: NaiveKind,
        loss: impl Into<WeightedLoss>,
        schedule: Schedule,
        regularize_bias: bool,
    ) -> Result<Naive, AllocError> {
        let x_bar = match kind {
            NaiveKind::Casgd => Some(mean_example(data)?),
            _ => None,
        };
        Naive::around(data, kind, x_bar, loss, schedule, regularize_bias)
    }

    /// A fresh baseline, CASGD centered on a given `x_bar` (see [`super::Casgd::around`]); an
    /// error if its dense vectors (n entries each) cannot be allocated.
    pub fn around<E: Examples>(
        data: &E,
        kind: NaiveKind,
        x_bar: Option<Vec<f64>>,
        loss: impl Into<WeightedLoss>,
        schedule: Schedule,
        regularize_bias: bool,
    ) -> Result<Naive, AllocError> {
        let n = data.n_features();
        let x_bar = match (kind, x_bar) {
            (NaiveKind::Casgd, Some(x_bar)) => x_bar,
            (NaiveKind::Casgd, None) => mean_example(data)?,
            _ => Vec::new(),
        };
        let averaged = kind != NaiveKind::Sgd;
        Ok(Naive {
            loss: loss.into(),
            schedule,
            regularize_bias,
            kind,
            x_bar,
            w: memory::filled("weights", n, 0.0)?,
            b: 0.0,
            w_bar: if averaged {
                memory::filled("averaged weights", n, 0.0)?
            } else {
                Vec::new()
            },
            b_bar: 0.0,
            x: memory::filled("dense example values", n, 0.0)?,
            l1: 0.0,
        })
    }

    /// The baseline with an L1 term λ₁ (SGD only: the driver refuses it for the others).
    pub fn truncating(mut self, l1: f64) -> Naive {
        self.l1 = l1;
        self
    }

    /// The model on raw data: for CASGD b' = b − w·x̄ (MATH.md §4).
    fn raw(&self, w: &[f64], b: f64) -> Result<Iterate, AllocError> {
        let bias = if self.kind == NaiveKind::Casgd {
            b - dense::dot(w, &self.x_bar)
        } else {
            b
        };
        Ok(Iterate {
            weights: memory::copied("weights", w)?,
            bias,
        })
    }
}

impl Learner for Naive {
    fn step(&mut self, _i: usize, row: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        // Dense (centered) copy of the example.
        if self.kind == NaiveKind::Casgd {
            self.x.copy_from_slice(&self.x_bar);
            dense::scale(-1.0, &mut self.x);
        } else {
            self.x.fill(0.0);
        }
        sparse::axpy(1.0, row.indices, row.values, &mut self.x);

        let p = dense::dot(&self.w, &self.x) + self.b;
        let g = s * self.loss.derivative(p, y);
        let eta = self.schedule.eta(t);
        // [w, b] ← (1 − ηλ)[w, b] − η g [x, 1], with ηλ = 1/(t + t₀).
        let shrink = 1.0 - 1.0 / (t as f64 + self.schedule.t0);
        dense::axpby(-eta * g, &self.x, shrink, &mut self.w);
        self.b = if self.regularize_bias {
            shrink * self.b - eta * g
        } else {
            self.b - self.schedule.bias_eta(t) * g
        };
        if self.l1 != 0.0 {
            let by = eta * self.l1;
            self.w.iter_mut().for_each(|w| *w = soft_threshold(*w, by));
            if self.regularize_bias {
                self.b = soft_threshold(self.b, by);
            }
        }

        let start = self.schedule.average_start;
        if self.kind != NaiveKind::Sgd && t >= start {
            let c = (t - start + 1) as f64;
            dense::axpby(1.0 / c, &self.w, 1.0 - 1.0 / c, &mut self.w_bar);
            self.b_bar += (self.b - self.b_bar) / c;
        }
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        let averaged = (self.kind != NaiveKind::Sgd && t >= self.schedule.average_start)
            .then(|| self.raw(&self.w_bar, self.b_bar))
            .transpose()?;
        Ok(Snapshot {
            last: self.raw(&self.w, self.b)?,
            averaged,
        })
    }

    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        // The dense state is the iterates themselves (CASGD's biases back to centered ones).
        let centered = |it: &Iterate| {
            if self.kind == NaiveKind::Casgd {
                it.bias + dense::dot(&it.weights, &self.x_bar)
            } else {
                it.bias
            }
        };
        self.b = centered(&snapshot.last);
        self.w.copy_from_slice(&snapshot.last.weights);
        let count = (t + 1).saturating_sub(self.schedule.average_start);
        if self.kind != NaiveKind::Sgd
            && let Some(averaged) = snapshot.averaged_for_restart(count)
        {
            self.b_bar = centered(averaged);
            self.w_bar.copy_from_slice(&averaged.weights);
        }
    }
}
