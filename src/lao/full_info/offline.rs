//! Offline ridge and lasso in their constrained form: minimize F(w) = (1/2m) Σ_i (w·x_i − y_i)²
//! over ‖w‖ ≤ B (ℓ₂ or ℓ₁), by FISTA (Beck & Teboulle 2009) with the exact projection,
//! backtracking on the Lipschitz constant and function-value restarts (O'Donoghue & Candès).

use crate::data::Examples;
use crate::kernels::sparse;

use super::projection::Ball;

/// When to stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OfflineOptions {
    /// Iteration cap.
    pub max_iterations: usize,
    /// Stop when ‖w_{k+1} − w_k‖₂ ≤ tolerance·max(1, ‖w_{k+1}‖₂).
    pub tolerance: f64,
}

impl Default for OfflineOptions {
    fn default() -> Self {
        OfflineOptions {
            max_iterations: 2000,
            tolerance: 1e-9,
        }
    }
}

/// The solution and how it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct OfflineFit {
    /// The minimizer w over the ball.
    pub weights: Vec<f64>,
    /// F(w).
    pub objective: f64,
    /// Iterations taken.
    pub iterations: usize,
}

/// F(w) and, if asked, ∇F(w) = (1/m) Σ (w·x − y)·x over `rows`.
fn objective(data: &dyn Examples, rows: &[usize], w: &[f64], grad: Option<&mut [f64]>) -> f64 {
    let m = rows.len().max(1) as f64;
    let mut value = 0.0;
    match grad {
        Some(g) => {
            g.iter_mut().for_each(|x| *x = 0.0);
            for &r in rows {
                let row = data.row(r);
                let residual = sparse::dot(w, row.indices, row.values) - row.label;
                value += residual * residual;
                sparse::axpy(residual / m, row.indices, row.values, g);
            }
        }
        None => {
            for &r in rows {
                let row = data.row(r);
                let residual = sparse::dot(w, row.indices, row.values) - row.label;
                value += residual * residual;
            }
        }
    }
    value / (2.0 * m)
}

/// The constrained least-squares fit on the examples `rows` of `data`, starting from 0.
pub fn least_squares(
    data: &dyn Examples,
    rows: &[usize],
    ball: Ball,
    options: OfflineOptions,
) -> OfflineFit {
    let d = data.n_features();
    let mut x = vec![0.0; d];
    let mut y = x.clone();
    let mut grad = vec![0.0; d];
    let mut next = vec![0.0; d];
    let mut t = 1.0f64;
    // Start L at the mean squared row norm / d: backtracking doubles it up to a valid bound.
    let mean_sq: f64 = rows
        .iter()
        .map(|&r| {
            let row = data.row(r);
            (0..row.nnz())
                .map(|q| row.values.get(q).powi(2))
                .sum::<f64>()
        })
        .sum::<f64>()
        / rows.len().max(1) as f64;
    let mut lipschitz = (mean_sq / d.max(1) as f64).max(1e-12);
    let mut f_x = objective(data, rows, &x, None);
    let mut iterations = 0;
    while iterations < options.max_iterations {
        iterations += 1;
        let f_y = objective(data, rows, &y, Some(&mut grad));
        // Backtracking: accept L once F(p) ≤ F(y) + ∇F(y)·(p − y) + (L/2)‖p − y‖².
        let f_next = loop {
            for ((n, yi), gi) in next.iter_mut().zip(&y).zip(&grad) {
                *n = yi - gi / lipschitz;
            }
            ball.project(&mut next);
            let (mut linear, mut quad) = (0.0, 0.0);
            for ((n, yi), gi) in next.iter().zip(&y).zip(&grad) {
                let step = n - yi;
                linear += gi * step;
                quad += step * step;
            }
            let f_n = objective(data, rows, &next, None);
            if f_n <= f_y + linear + 0.5 * lipschitz * quad + 1e-15 * f_y.abs() {
                break f_n;
            }
            lipschitz *= 2.0;
        };
        let (mut change, mut norm) = (0.0, 0.0);
        for (n, xi) in next.iter().zip(&x) {
            change += (n - xi) * (n - xi);
            norm += n * n;
        }
        if f_next > f_x {
            // Restart the momentum when the objective goes up.
            t = 1.0;
            y.copy_from_slice(&x);
            continue;
        }
        let t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
        let momentum = (t - 1.0) / t_next;
        for ((yi, n), xi) in y.iter_mut().zip(&next).zip(&x) {
            *yi = n + momentum * (n - xi);
        }
        x.copy_from_slice(&next);
        f_x = f_next;
        t = t_next;
        if change.sqrt() <= options.tolerance * norm.sqrt().max(1.0) {
            break;
        }
    }
    OfflineFit {
        weights: x,
        objective: f_x,
        iterations,
    }
}
