//! Exact Euclidean projections onto the balls ‖w‖₂ ≤ B and ‖w‖₁ ≤ B.

/// The constraint set of a baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ball {
    /// ‖w‖₂ ≤ B (ridge).
    L2(f64),
    /// ‖w‖₁ ≤ B (lasso).
    L1(f64),
}

impl Ball {
    /// The radius B.
    pub fn radius(&self) -> f64 {
        match *self {
            Ball::L2(b) | Ball::L1(b) => b,
        }
    }

    /// Replace `w` by its Euclidean projection onto the ball.
    pub fn project(&self, w: &mut [f64]) {
        match *self {
            Ball::L2(b) => project_l2(w, b),
            Ball::L1(b) => project_l1(w, b),
        }
    }
}

/// w ← w·B/max(‖w‖₂, B). O(d).
pub fn project_l2(w: &mut [f64], radius: f64) {
    let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > radius {
        let f = radius / norm;
        w.iter_mut().for_each(|x| *x *= f);
    }
}

/// Exact projection onto ‖w‖₁ ≤ B by sorting (Duchi, Shalev-Shwartz, Singer & Chandra 2008):
/// soft-threshold at the τ ≥ 0 for which Σ max(|w_i| − τ, 0) = B. O(d log d).
pub fn project_l1(w: &mut [f64], radius: f64) {
    let l1: f64 = w.iter().map(|x| x.abs()).sum();
    if l1 <= radius {
        return;
    }
    if radius <= 0.0 {
        w.iter_mut().for_each(|x| *x = 0.0);
        return;
    }
    let mut u: Vec<f64> = w.iter().map(|x| x.abs()).filter(|&x| x > 0.0).collect();
    u.sort_unstable_by(|a, b| b.total_cmp(a));
    let (mut cumulative, mut tau) = (0.0, 0.0);
    for (j, &uj) in u.iter().enumerate() {
        cumulative += uj;
        let candidate = (cumulative - radius) / (j + 1) as f64;
        if uj > candidate {
            tau = candidate;
        } else {
            break;
        }
    }
    for x in w.iter_mut() {
        *x = x.signum() * (x.abs() - tau).max(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// τ by bisection on the monotone Σ max(|w_i| − τ, 0) = B: a slow, obviously right oracle.
    fn project_l1_bisection(w: &[f64], radius: f64) -> Vec<f64> {
        if w.iter().map(|x| x.abs()).sum::<f64>() <= radius {
            return w.to_vec();
        }
        let (mut lo, mut hi) = (0.0, w.iter().fold(0.0f64, |m, x| m.max(x.abs())));
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            let s: f64 = w.iter().map(|x| (x.abs() - mid).max(0.0)).sum();
            if s > radius { lo = mid } else { hi = mid }
        }
        w.iter()
            .map(|x| x.signum() * (x.abs() - hi).max(0.0))
            .collect()
    }

    #[test]
    fn l1_projection_matches_bisection() {
        let mut x = 0.3141_f64;
        for case in 0..200 {
            let d = 1 + case % 17;
            let w: Vec<f64> = (0..d)
                .map(|_| {
                    x = (x * 3.99 * (1.0 - x)).clamp(1e-6, 1.0 - 1e-6);
                    (x - 0.5) * 10.0
                })
                .collect();
            let radius = 0.1 + (case % 7) as f64;
            let mut fast = w.clone();
            project_l1(&mut fast, radius);
            let slow = project_l1_bisection(&w, radius);
            for (a, b) in fast.iter().zip(&slow) {
                assert!((a - b).abs() < 1e-9, "case {case}: {fast:?} vs {slow:?}");
            }
            let l1: f64 = fast.iter().map(|v| v.abs()).sum();
            assert!(l1 <= radius * (1.0 + 1e-12));
        }
    }

    #[test]
    fn l1_projection_with_ties_and_inside_points() {
        let mut w = vec![1.0, -1.0, 1.0, 0.0];
        project_l1(&mut w, 1.5);
        assert_eq!(w, vec![0.5, -0.5, 0.5, 0.0]);
        let mut inside = vec![0.2, -0.3];
        project_l1(&mut inside, 1.0);
        assert_eq!(inside, vec![0.2, -0.3]);
    }

    #[test]
    fn l2_projection_scales_onto_the_sphere() {
        let mut w = vec![3.0, 4.0];
        Ball::L2(1.0).project(&mut w);
        assert!((w[0] - 0.6).abs() < 1e-15 && (w[1] - 0.8).abs() < 1e-15);
        let mut inside = vec![0.1, 0.1];
        Ball::L2(1.0).project(&mut inside);
        assert_eq!(inside, vec![0.1, 0.1]);
    }
}
