//! Line searches along w + ηd (MATH.md §7): strong Wolfe for smooth J, weak Wolfe by
//! bisection for the plain-BFGS baseline, and the exact search for piecewise-linear losses
//! (J piecewise quadratic along the ray, minimized by a scan over the sorted kinks).

use super::objective::{Ray, RowWeights, Unweighted};
use crate::loss::{Loss, WeightedLoss};

/// Sufficient-decrease constant c₁.
pub const C1: f64 = 1e-4;
/// Curvature constant c₂ (quasi-Newton value).
pub const C2: f64 = 0.9;

/// A step accepted by a line search: η, Φ(η), Φ'(η).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Step length.
    pub eta: f64,
    /// Φ(η) = J(w + ηd).
    pub value: f64,
    /// Φ'(η) (the loss's own derivative at kinks).
    pub slope: f64,
}

/// Strong Wolfe conditions Φ(η) ≤ Φ(0) + c₁ηΦ'(0) and |Φ'(η)| ≤ c₂|Φ'(0)|, found by
/// bracketing and zooming with safeguarded cubic interpolation (Nocedal & Wright, Alg. 3.5–3.6).
/// `phi` returns (Φ, Φ'); `start` = (Φ(0), Φ'(0)) with Φ'(0) < 0. `None` when `max_evals`
/// evaluations find no such step.
pub fn strong_wolfe(
    mut phi: impl FnMut(f64) -> (f64, f64),
    start: (f64, f64),
    eta0: f64,
    max_evals: usize,
) -> Option<Step> {
    let (f0, g0) = start;
    if g0.partial_cmp(&0.0) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let sufficient = |eta: f64, f: f64| f <= f0 + C1 * eta * g0;
    let curvature = |g: f64| g.abs() <= -C2 * g0;
    let (mut prev_eta, mut prev_f, mut prev_g) = (0.0, f0, g0);
    let mut eta = eta0;
    let mut evals = 0;
    while evals < max_evals {
        let (f, g) = phi(eta);
        evals += 1;
        if !f.is_finite() {
            eta = 0.5 * (prev_eta + eta);
            continue;
        }
        if !sufficient(eta, f) || (evals > 1 && f >= prev_f) {
            return zoom(
                &mut phi,
                start,
                (prev_eta, prev_f, prev_g),
                (eta, f, g),
                max_evals - evals,
            );
        }
        if curvature(g) {
            return Some(Step {
                eta,
                value: f,
                slope: g,
            });
        }
        if g >= 0.0 {
            return zoom(
                &mut phi,
                start,
                (eta, f, g),
                (prev_eta, prev_f, prev_g),
                max_evals - evals,
            );
        }
        (prev_eta, prev_f, prev_g) = (eta, f, g);
        eta *= 4.0;
    }
    None
}

/// Zoom between `lo` (satisfies sufficient decrease, lowest value so far) and `hi`.
fn zoom(
    phi: &mut impl FnMut(f64) -> (f64, f64),
    (f0, g0): (f64, f64),
    mut lo: (f64, f64, f64),
    mut hi: (f64, f64, f64),
    budget: usize,
) -> Option<Step> {
    for _ in 0..budget {
        let (a, b) = (lo.0.min(hi.0), lo.0.max(hi.0));
        let width = b - a;
        if width <= f64::EPSILON * b.max(f64::MIN_POSITIVE) {
            break;
        }
        let mut eta = cubic_minimizer(lo, hi).unwrap_or(0.5 * (lo.0 + hi.0));
        if !(eta > a + 0.1 * width && eta < b - 0.1 * width) {
            eta = 0.5 * (lo.0 + hi.0);
        }
        let (f, g) = phi(eta);
        if f > f0 + C1 * eta * g0 || f >= lo.1 {
            hi = (eta, f, g);
        } else {
            if g.abs() <= -C2 * g0 {
                return Some(Step {
                    eta,
                    value: f,
                    slope: g,
                });
            }
            if g * (hi.0 - lo.0) >= 0.0 {
                hi = lo;
            }
            lo = (eta, f, g);
        }
    }
    None
}

/// Minimizer of the cubic through two points with their values and slopes, if it exists.
fn cubic_minimizer(p: (f64, f64, f64), q: (f64, f64, f64)) -> Option<f64> {
    let (x0, f0, g0) = p;
    let (x1, f1, g1) = q;
    let d1 = g0 + g1 - 3.0 * (f0 - f1) / (x0 - x1);
    let disc = d1 * d1 - g0 * g1;
    if disc < 0.0 {
        return None;
    }
    let d2 = (x1 - x0).signum() * disc.sqrt();
    let x = x1 - (x1 - x0) * (g1 + d2 - d1) / (g1 - g0 + 2.0 * d2);
    x.is_finite().then_some(x)
}

/// Weak Wolfe conditions Φ(η) ≤ Φ(0) + c₁ηΦ'(0) and Φ'(η) ≥ c₂Φ'(0) by doubling and
/// bisection (Lewis & Overton 2013): the search plain BFGS uses on non-smooth objectives.
pub fn weak_wolfe(
    mut phi: impl FnMut(f64) -> (f64, f64),
    (f0, g0): (f64, f64),
    max_evals: usize,
) -> Option<Step> {
    if g0.partial_cmp(&0.0) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let (mut lo, mut hi, mut eta) = (0.0, f64::INFINITY, 1.0);
    for _ in 0..max_evals {
        let (f, g) = phi(eta);
        if f.is_nan() || f > f0 + C1 * eta * g0 {
            hi = eta;
        } else if g < C2 * g0 {
            lo = eta;
        } else {
            return Some(Step {
                eta,
                value: f,
                slope: g,
            });
        }
        eta = if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            2.0 * lo
        };
    }
    None
}

/// Slopes of a piecewise-linear loss in the prediction p left and right of its single kink,
/// which for hinge (y = ±1), absolute and quantile loss lies at p = y, each times the row's class
/// weight and its sample weight `s`. `None` for other losses.
#[inline]
pub fn kink_slopes(loss: WeightedLoss, y: f64, s: f64) -> Option<(f64, f64)> {
    let (left, right) = match loss.loss() {
        Loss::Hinge if y > 0.0 => (-1.0, 0.0),
        Loss::Hinge => (0.0, 1.0),
        Loss::Absolute => (-1.0, 1.0),
        Loss::Quantile(tau) => (-tau, 1.0 - tau),
        _ => return None,
    };
    let c = s * loss.weight(y);
    Some((c * left, c * right))
}

/// Whether prediction p is on the kink at y ("μ_i = 1" for hinge), within `KINK_TOLERANCE`.
#[inline]
pub fn on_kink(p: f64, y: f64) -> bool {
    (p - y).abs() <= KINK_TOLERANCE * y.abs().max(1.0)
}

/// |1 − μ_i| ≤ this counts as on the hinge (MATH.md §7).
pub const KINK_TOLERANCE: f64 = 1e-12;

/// The result of [`exact`]: the step and the rows whose kink it lands on (their predictions
/// are to be snapped onto the kink, so the next subdifferential sees them there).
#[derive(Debug)]
pub struct ExactStep {
    /// Step length η* > 0 (or 0 when d is not a descent direction).
    pub eta: f64,
    /// Rows whose kink lies at η*.
    pub landed: Vec<usize>,
}

/// Exact line search for hinge/absolute loss (MATH.md §7): Φ is convex and piecewise quadratic,
/// kinks at η_i = (y_i − p_i)/(Xd)_i; the result is the η where the right-derivative
/// Φ'(η⁺) − `target` = A + Hη first reaches zero: inside a segment or at a kink. With `target` =
/// 0 this is the minimizer; with `target` = c₂Φ'(0⁺) it is the first η satisfying the curvature
/// condition (the Wolfe fallback). Rows on their kink at η = 0 (within tolerance) contribute
/// their right derivative and have no kink ahead. `None` when Φ decreases without bound (λ = 0
/// and no kink stops it).
///
/// On one process the crossing is bracketed among the kinks around their median until few are
/// left (`bracket`, O(m) expected instead of sorting all of them), and those are sorted and
/// scanned left to right; across ranks
/// ([`super::kink_bracket`]) the crossing is bracketed between kinks with summed slopes, which
/// lands on the same η without gathering the kinks.
pub fn exact(ray: &Ray<'_>, target: f64) -> Option<ExactStep> {
    let (loss_slope, kinks) = kinks_ahead(ray);
    if ray.reducer.size() > 1 {
        super::kink_bracket::search(ray, target, loss_slope, kinks)
    } else {
        scan(ray, target, loss_slope, kinks)
    }
}

/// The loss part of Φ'(0⁺) (Σ_i ℓ'_i(0⁺)·(Xd)_i over the local rows, in row order) and the
/// kinks ahead, (η_i > 0, i), unsorted.
pub(super) fn kinks_ahead(ray: &Ray<'_>) -> (f64, Vec<(f64, usize)>) {
    match ray.sample_weights {
        Some(s) => kinks_ahead_weighted(ray, s),
        None => kinks_ahead_weighted(ray, Unweighted),
    }
}

/// [`kinks_ahead`], row i's slopes times s.at(i).
fn kinks_ahead_weighted(ray: &Ray<'_>, s: impl RowWeights) -> (f64, Vec<(f64, usize)>) {
    let (p, xd, y) = (ray.p, ray.xd, ray.targets);
    let mut loss_slope = 0.0;
    let mut kinks: Vec<(f64, usize)> = Vec::new();
    for i in 0..p.len() {
        let (left, right) =
            kink_slopes(ray.loss, y[i], s.at(i)).expect("exact line search: kinked loss");
        let gap = y[i] - p[i];
        if on_kink(p[i], y[i]) {
            loss_slope += (left * xd[i]).max(right * xd[i]);
        } else {
            loss_slope += if gap > 0.0 { left } else { right } * xd[i];
            let eta = gap / xd[i];
            if xd[i] != 0.0 && eta > 0.0 {
                kinks.push((eta, i));
            }
        }
    }
    (loss_slope, kinks)
}

/// The loss slopes (left, right) of row `i`'s kink.
pub(super) fn slope_pair(ray: &Ray<'_>, i: usize) -> (f64, f64) {
    kink_slopes(ray.loss, ray.targets[i], ray.sample_weight(i))
        .expect("exact line search: kinked loss")
}

/// Orders kinks by η, then row.
pub(super) fn kink_order(u: &(f64, usize), v: &(f64, usize)) -> std::cmp::Ordering {
    u.0.total_cmp(&v.0).then(u.1.cmp(&v.1))
}

/// [`exact`] on one process: bracket the crossing, then sort the kinks left and scan them, A
/// growing by (R_i − L_i)|(Xd)_i|/m at each.
fn scan(
    ray: &Ray<'_>,
    target: f64,
    loss_slope: f64,
    kinks: Vec<(f64, usize)>,
) -> Option<ExactStep> {
    let (xd, m) = (ray.xd, ray.rows);
    let a = ray.lambda * ray.wd + loss_slope / m - target;
    let h = ray.lambda * ray.dd;
    if a >= 0.0 {
        return Some(ExactStep {
            eta: 0.0,
            landed: Vec::new(),
        });
    }
    let jump = |&(_, i): &(f64, usize)| {
        let (left, right) = slope_pair(ray, i);
        (right - left) * xd[i].abs() / m
    };
    let (mut a, mut kinks) = bracket(a, h, kinks, jump);
    kinks.sort_unstable_by(kink_order);
    let mut k = 0;
    while k < kinks.len() {
        let eta = kinks[k].0;
        if a + h * eta >= 0.0 {
            return Some(ExactStep {
                eta: -a / h,
                landed: Vec::new(),
            });
        }
        // All kinks at exactly this η are crossed together.
        let mut end = k;
        while end < kinks.len() && kinks[end].0 == eta {
            a += jump(&kinks[end]);
            end += 1;
        }
        if a + h * eta >= 0.0 {
            let landed = kinks[k..end].iter().map(|&(_, i)| i).collect();
            return Some(ExactStep { eta, landed });
        }
        k = end;
    }
    (h > 0.0).then(|| ExactStep {
        eta: -a / h,
        landed: Vec::new(),
    })
}

/// Candidates left when [`bracket`] stops halving.
const SCAN_KINKS: usize = 64;

/// Narrow the kinks (unsorted) to those among which Φ'(η⁺) − target = A + Hη first reaches 0,
/// given A at η = 0⁺: split them at their median η, keep the lower part (every kink at or below
/// the median) when the slope just right of the median is already ≥ 0, else add the lower
/// part's jumps to A and keep the upper part. Returns A just right of every discarded lower
/// kink and the kinks left, to be sorted and scanned.
fn bracket(
    mut a: f64,
    h: f64,
    mut kinks: Vec<(f64, usize)>,
    jump: impl Fn(&(f64, usize)) -> f64,
) -> (f64, Vec<(f64, usize)>) {
    while kinks.len() > SCAN_KINKS {
        let middle = kinks.len() / 2;
        let pivot = kinks.select_nth_unstable_by(middle, kink_order).1.0;
        let (lower, upper): (Vec<_>, Vec<_>) = kinks.iter().partition(|k| k.0 <= pivot);
        if upper.is_empty() {
            break;
        }
        let after = a + lower.iter().map(&jump).sum::<f64>();
        if after + h * pivot >= 0.0 {
            kinks = lower;
        } else {
            a = after;
            kinks = upper;
        }
    }
    (a, kinks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::objective::tests::uniforms;
    use crate::dist::Local;
    use crate::loss::ClassWeights;

    fn quadratic_ray(eta: f64) -> (f64, f64) {
        // Φ(η) = (η − 3)² + η⁴/100: smooth, minimum near 2.6.
        (
            (eta - 3.0).powi(2) + eta.powi(4) / 100.0,
            2.0 * (eta - 3.0) + eta.powi(3) / 25.0,
        )
    }

    #[test]
    fn strong_wolfe_step_satisfies_both_conditions() {
        let start = quadratic_ray(0.0);
        for eta0 in [1e-3, 1.0, 50.0] {
            let step = strong_wolfe(quadratic_ray, start, eta0, 40).unwrap();
            assert!(step.value <= start.0 + C1 * step.eta * start.1);
            assert!(step.slope.abs() <= -C2 * start.1, "η0={eta0}: {step:?}");
        }
        assert!(strong_wolfe(quadratic_ray, (0.0, 1.0), 1.0, 40).is_none());
    }

    #[test]
    fn weak_wolfe_step_satisfies_both_conditions() {
        let phi = |eta: f64| ((eta - 1.5).abs() * 2.0, 2.0 * (eta - 1.5).signum());
        let start = phi(0.0);
        let step = weak_wolfe(phi, start, 60).unwrap();
        assert!(step.value <= start.0 + C1 * step.eta * start.1);
        assert!(step.slope >= C2 * start.1);
    }

    /// Brute-force minimization of Φ over a fine grid refined around the best point.
    fn brute_minimum(ray: &Ray<'_>) -> f64 {
        let (mut lo, mut hi) = (0.0, 50.0);
        for _ in 0..60 {
            let grid: Vec<f64> = (0..=100)
                .map(|k| lo + (hi - lo) * k as f64 / 100.0)
                .collect();
            let best = grid
                .iter()
                .min_by(|a, b| ray.eval(**a).0.total_cmp(&ray.eval(**b).0))
                .copied()
                .unwrap();
            let step = (hi - lo) / 100.0;
            (lo, hi) = ((best - step).max(0.0), best + step);
        }
        ray.eval(0.5 * (lo + hi)).0
    }

    /// A sample weight from a uniform number in [−1, 1]: 0, ½, 1 or 2.5.
    fn sample_weight(u: f64) -> f64 {
        [0.0, 0.5, 1.0, 2.5][((u + 1.0) * 2.0).min(3.0) as usize]
    }

    #[test]
    fn exact_search_matches_brute_force() {
        let mut uniform = uniforms(7);
        let mut next = move || uniform() * 2.0 - 1.0;
        for case in 0..60 {
            let m = 5 + case % 20;
            // Hinge loss unweighted and with weighted classes, alternately.
            let loss = if case % 2 == 0 {
                let weights = [ClassWeights::UNIT, ClassWeights::new(3.5, 0.25).unwrap()];
                WeightedLoss::new(Loss::Hinge, weights[case / 2 % 2]).unwrap()
            } else {
                Loss::Absolute.into()
            };
            let y: Vec<f64> = (0..m)
                .map(|_| if next() > 0.0 { 1.0 } else { -1.0 })
                .collect();
            let p: Vec<f64> = (0..m).map(|_| 2.0 * next()).collect();
            let xd: Vec<f64> = (0..m).map(|_| next()).collect();
            // Every third case with sample weights, some of them 0.
            let s: Vec<f64> = (0..m).map(|_| sample_weight(next())).collect();
            let ray = Ray {
                p: &p,
                xd: &xd,
                targets: &y,
                sample_weights: (case % 3 == 2).then_some(&s[..]),
                loss,
                lambda: 0.1,
                rows: m as f64,
                reducer: &Local,
                ww: 1.0 + next().abs(),
                wd: next(),
                dd: 0.5 + next().abs(),
            };
            let step = exact(&ray, 0.0).unwrap();
            let best = brute_minimum(&ray).min(ray.eval(0.0).0);
            let found = ray.eval(step.eta).0;
            assert!(found <= best + 1e-12, "case {case}: {found} vs {best}");
        }
    }

    /// The exact search as first written: every positive kink sorted, then one scan.
    fn sorted_scan(ray: &Ray<'_>, target: f64) -> (f64, Vec<usize>) {
        let m = ray.p.len() as f64;
        let slopes =
            |i: usize| kink_slopes(ray.loss, ray.targets[i], ray.sample_weight(i)).unwrap();
        let mut a = ray.lambda * ray.wd - target;
        let mut kinks = Vec::new();
        for i in 0..ray.p.len() {
            let ((left, right), gap) = (slopes(i), ray.targets[i] - ray.p[i]);
            if on_kink(ray.p[i], ray.targets[i]) {
                a += (left * ray.xd[i]).max(right * ray.xd[i]) / m;
            } else {
                a += if gap > 0.0 { left } else { right } * ray.xd[i] / m;
                if ray.xd[i] != 0.0 && gap / ray.xd[i] > 0.0 {
                    kinks.push((gap / ray.xd[i], i));
                }
            }
        }
        let h = ray.lambda * ray.dd;
        if a >= 0.0 {
            return (0.0, vec![]);
        }
        kinks.sort_by(|u, v| u.0.total_cmp(&v.0).then(u.1.cmp(&v.1)));
        for (k, &(eta, i)) in kinks.iter().enumerate() {
            let first_at_eta = k == 0 || kinks[k - 1].0 != eta;
            if first_at_eta && a + h * eta >= 0.0 {
                return (-a / h, vec![]);
            }
            let (left, right) = slopes(i);
            a += (right - left) * ray.xd[i].abs() / m;
            let last_at_eta = kinks.get(k + 1).is_none_or(|next| next.0 != eta);
            if last_at_eta && a + h * eta >= 0.0 {
                let mut landed: Vec<usize> =
                    kinks.iter().filter(|u| u.0 == eta).map(|u| u.1).collect();
                landed.sort_unstable();
                return (eta, landed);
            }
        }
        (-a / h, vec![])
    }

    #[test]
    fn bracketing_gives_the_step_of_a_full_sorted_scan() {
        let mut uniform = uniforms(11);
        let mut next = move || uniform() * 2.0 - 1.0;
        let mut landings = 0;
        for case in 0..40 {
            let m = 200 + 97 * case;
            // Hinge loss unweighted and with weighted classes, alternately.
            let loss = if case % 2 == 0 {
                let weights = [ClassWeights::UNIT, ClassWeights::new(3.5, 0.25).unwrap()];
                WeightedLoss::new(Loss::Hinge, weights[case / 2 % 2]).unwrap()
            } else {
                Loss::Absolute.into()
            };
            let y: Vec<f64> = (0..m)
                .map(|_| if next() > 0.0 { 1.0 } else { -1.0 })
                .collect();
            // Few distinct values, so that many kinks share an η (ties) and some rows sit on
            // their kink.
            let p: Vec<f64> = (0..m).map(|_| (4.0 * next()).round() / 2.0).collect();
            let xd: Vec<f64> = (0..m).map(|_| (4.0 * next()).round() / 4.0).collect();
            // The regularizer pulls along d (λ⟨w, d⟩ < 0), the kinks ahead push back.
            let lambda = [1e-6, 1e-4, 1e-2][case % 3];
            let s: Vec<f64> = (0..m).map(|_| sample_weight(next())).collect();
            let ray = Ray {
                p: &p,
                xd: &xd,
                targets: &y,
                sample_weights: (case % 4 >= 2).then_some(&s[..]),
                loss,
                lambda,
                rows: m as f64,
                reducer: &Local,
                ww: 1.0 / lambda,
                wd: -(0.02 + 0.2 * next().abs()) / lambda,
                dd: (0.01 + 0.05 * next().abs()) / lambda,
            };
            let pull = lambda * ray.wd;
            for target in [0.0, C2 * pull] {
                let step = exact(&ray, target).unwrap();
                let (eta, landed) = sorted_scan(&ray, target);
                assert!(
                    (step.eta - eta).abs() <= 1e-9 * eta,
                    "case {case}: {} vs {eta}",
                    step.eta
                );
                let mut found = step.landed.clone();
                found.sort_unstable();
                assert_eq!(found, landed, "case {case}");
                landings += usize::from(!landed.is_empty());
            }
        }
        assert!(landings >= 10, "only {landings} steps landed on a kink");
    }

    #[test]
    fn wolfe_fallback_example_of_math_section_7() {
        // x = 100 and 0.001, y = 1, λ = 1e-9, w = 0, d = 1: η* = 1000 breaks sufficient
        // decrease; the curvature target gives η = 0.01, which satisfies both conditions.
        let (p, xd, y) = ([0.0, 0.0], [100.0, 0.001], [1.0, 1.0]);
        let ray = Ray {
            p: &p,
            xd: &xd,
            targets: &y,
            sample_weights: None,
            loss: Loss::Hinge.into(),
            lambda: 1e-9,
            rows: 2.0,
            reducer: &Local,
            ww: 0.0,
            wd: 0.0,
            dd: 1.0,
        };
        let start = exact(&ray, 0.0).unwrap();
        assert_eq!(start.eta, 1000.0);
        let slope0 = -(100.0 + 0.001) / 2.0;
        assert!(ray.eval(1000.0).0 > ray.eval(0.0).0 + C1 * 1000.0 * slope0);
        let fallback = exact(&ray, C2 * slope0).unwrap();
        assert_eq!(fallback.eta, 0.01);
        assert!(ray.eval(0.01).0 <= ray.eval(0.0).0 + C1 * 0.01 * slope0);
    }
}
