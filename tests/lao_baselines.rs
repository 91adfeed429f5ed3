//! The full-information baselines: offline ridge against a closed form, offline lasso against
//! its optimality (KKT) conditions, and projected OGD approaching the offline optimum.

mod lao_common;

use lao_common::synthetic;
use sparselin::data::Examples;
use sparselin::lao::full_info::{Ball, OfflineOptions, ProjectedOgd, least_squares};

/// Dense XᵀX/m and Xᵀy/m.
fn normal_equations(data: &dyn Examples) -> (Vec<Vec<f64>>, Vec<f64>) {
    let (m, d) = (data.n_rows(), data.n_features());
    let (mut a, mut b) = (vec![vec![0.0; d]; d], vec![0.0; d]);
    for r in 0..m {
        let row = data.row(r);
        for p in 0..row.nnz() {
            let (i, vi) = (row.indices[p] as usize, row.values.get(p));
            b[i] += vi * row.label / m as f64;
            for q in 0..row.nnz() {
                a[i][row.indices[q] as usize] += vi * row.values.get(q) / m as f64;
            }
        }
    }
    (a, b)
}

/// Solve (A + λI)w = b by Gaussian elimination with partial pivoting.
fn solve(a: &[Vec<f64>], b: &[f64], lambda: f64) -> Vec<f64> {
    let d = b.len();
    let mut m: Vec<Vec<f64>> = a.to_vec();
    let mut rhs = b.to_vec();
    for (i, row) in m.iter_mut().enumerate() {
        row[i] += lambda;
    }
    for c in 0..d {
        let p = (c..d)
            .max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))
            .unwrap();
        m.swap(c, p);
        rhs.swap(c, p);
        let (top, bottom) = m.split_at_mut(c + 1);
        let pivot = &top[c];
        for (r, row) in bottom.iter_mut().enumerate() {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
            rhs[c + 1 + r] -= f * rhs[c];
        }
    }
    let mut w = vec![0.0; d];
    for c in (0..d).rev() {
        let s: f64 = (c + 1..d).map(|q| m[c][q] * w[q]).sum();
        w[c] = (rhs[c] - s) / m[c][c];
    }
    w
}

fn norm2(w: &[f64]) -> f64 {
    w.iter().map(|x| x * x).sum::<f64>().sqrt()
}

#[test]
fn offline_ridge_matches_closed_form_with_bisection() {
    let data = synthetic(120, 15, 6, 11);
    let rows: Vec<usize> = (0..data.n_rows()).collect();
    let (a, b) = normal_equations(&data);
    let unconstrained = solve(&a, &b, 0.0);
    let radius = 0.5 * norm2(&unconstrained);
    // ‖w(λ)‖ decreases in λ: bisect for ‖w(λ)‖ = B.
    let (mut lo, mut hi) = (0.0, 1e3);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if norm2(&solve(&a, &b, mid)) > radius {
            lo = mid
        } else {
            hi = mid
        }
    }
    let exact = solve(&a, &b, hi);
    let options = OfflineOptions {
        max_iterations: 20_000,
        tolerance: 1e-13,
    };
    let fit = least_squares(&data, &rows, Ball::L2(radius), options);
    let gap = exact
        .iter()
        .zip(&fit.weights)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(
        gap < 1e-6,
        "ridge off by {gap} after {} iterations",
        fit.iterations
    );
    // Inside the ball the constraint is inactive: the unconstrained least squares solution.
    let fit = least_squares(&data, &rows, Ball::L2(10.0 * radius), options);
    let gap = unconstrained
        .iter()
        .zip(&fit.weights)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(gap < 1e-6, "unconstrained off by {gap}");
}

#[test]
fn offline_lasso_satisfies_kkt() {
    let data = synthetic(100, 20, 6, 12);
    let rows: Vec<usize> = (0..data.n_rows()).collect();
    let radius = 0.6;
    let options = OfflineOptions {
        max_iterations: 20_000,
        tolerance: 1e-13,
    };
    let fit = least_squares(&data, &rows, Ball::L1(radius), options);
    let w = &fit.weights;
    let l1: f64 = w.iter().map(|x| x.abs()).sum();
    assert!((l1 - radius).abs() < 1e-9, "‖w‖₁ = {l1}");
    // ∇F(w) = (XᵀX/m)w − Xᵀy/m. KKT on the ℓ₁ sphere: −∇F_i = μ·sign(w_i) where w_i ≠ 0 and
    // |∇F_i| ≤ μ where w_i = 0, for one μ ≥ 0.
    let (a, b) = normal_equations(&data);
    let grad: Vec<f64> = (0..w.len())
        .map(|i| a[i].iter().zip(w).map(|(x, y)| x * y).sum::<f64>() - b[i])
        .collect();
    let support: Vec<usize> = (0..w.len()).filter(|&i| w[i].abs() > 1e-10).collect();
    assert!(
        support.len() >= 2 && support.len() < w.len(),
        "support {support:?}"
    );
    let mu = -grad[support[0]] * w[support[0]].signum();
    assert!(mu > 0.0);
    for &i in &support {
        assert!(
            (-grad[i] * w[i].signum() - mu).abs() < 1e-6,
            "coordinate {i}"
        );
    }
    for i in (0..w.len()).filter(|i| !support.contains(i)) {
        assert!(
            grad[i].abs() <= mu + 1e-6,
            "coordinate {i}: {} > {mu}",
            grad[i].abs()
        );
    }
}

#[test]
fn projected_ogd_approaches_the_offline_optimum() {
    let data = synthetic(4000, 10, 5, 13);
    let rows: Vec<usize> = (0..data.n_rows()).collect();
    for ball in [Ball::L2(0.5), Ball::L1(0.8)] {
        let best = least_squares(&data, &rows, ball, OfflineOptions::default());
        let risk = |w: &[f64]| {
            rows.iter()
                .map(|&r| {
                    let row = data.row(r);
                    let p: f64 = (0..row.nnz())
                        .map(|q| w[row.indices[q] as usize] * row.values.get(q))
                        .sum();
                    0.5 * (p - row.label).powi(2)
                })
                .sum::<f64>()
                / rows.len() as f64
        };
        let eta = 10.0 * ProjectedOgd::default_eta(ball, 2.0, 1.0, rows.len());
        let mut ogd = ProjectedOgd::new(10, ball, eta);
        for &r in &rows {
            ogd.step(data.row(r));
        }
        let (r_ogd, r_best, r_zero) = (risk(&ogd.average()), risk(&best.weights), risk(&[0.0; 10]));
        assert!(r_best <= r_ogd + 1e-12);
        // OGD closes at least 90% of the gap between w = 0 and the optimum.
        assert!(
            r_ogd - r_best < 0.1 * (r_zero - r_best),
            "{ball:?}: {r_ogd} {r_best} {r_zero}"
        );
    }
}
