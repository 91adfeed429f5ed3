//! Online projected gradient descent on the squared loss ½(w·x − y)² over a ball, with full
//! information (every attribute of every example) and the averaged iterate: the online
//! full-information counterpart of AERR/AELR.

use crate::data::Row;
use crate::kernels::sparse;

use super::projection::Ball;

/// w_{t+1} = Π(w_t − η(w_t·x_t − y_t)x_t), w̄ = (1/m)Σ w_t.
#[derive(Clone, Debug)]
pub struct ProjectedOgd {
    w: Vec<f64>,
    sum: Vec<f64>,
    steps: u64,
    ball: Ball,
    eta: f64,
}

impl ProjectedOgd {
    /// d features, constant step `eta`, w₁ = 0.
    pub fn new(d: usize, ball: Ball, eta: f64) -> Self {
        ProjectedOgd {
            w: vec![0.0; d],
            sum: vec![0.0; d],
            steps: 0,
            ball,
            eta,
        }
    }

    /// The step of Zinkevich's bound for m steps: η = B/(G√m) with G = (B·X + Y)·X, where X
    /// bounds the dual norm of x (‖x‖₂ for ℓ₂, ‖x‖_∞ for ℓ₁) and Y bounds |y|.
    pub fn default_eta(ball: Ball, max_x_dual_norm: f64, max_abs_y: f64, m: usize) -> f64 {
        let b = ball.radius();
        let g = (b * max_x_dual_norm + max_abs_y) * max_x_dual_norm;
        b / (g.max(1e-300) * (m.max(1) as f64).sqrt())
    }

    /// One full-information step on `row`. O(d) (the dense projection and running sum).
    pub fn step(&mut self, row: Row<'_>) {
        for (s, w) in self.sum.iter_mut().zip(&self.w) {
            *s += w;
        }
        self.steps += 1;
        let residual = sparse::dot(&self.w, row.indices, row.values) - row.label;
        sparse::axpy(-self.eta * residual, row.indices, row.values, &mut self.w);
        self.ball.project(&mut self.w);
    }

    /// w̄ over the steps so far.
    pub fn average(&self) -> Vec<f64> {
        let t = self.steps.max(1) as f64;
        self.sum.iter().map(|s| s / t).collect()
    }
}
