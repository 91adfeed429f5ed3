//! subLBFGS (Yu, Vishwanathan, Günter & Schraudolph, JMLR 2010) for hinge, absolute and
//! quantile loss, exactly as MATH.md §7: direction finding over the subdifferential with the
//! ε-gap rule,
//! the exact line search with the Wolfe fallback, B₀ = I/λ, the pair built from
//! s' = argsup_{s∈∂J(w_{t+1})}⟨s, p_t⟩, and the memory cleared once when direction finding fails.
//!
//! Each loss has one kink per example, at prediction p_i = y_i, with slopes (L_i, R_i) on
//! either side ([`line_search::kink_slopes`]); a row is on its kink when |p_i − y_i| ≤ 1e-12,
//! and the rows a line search stops on are snapped onto it (the "carried" μ_i = 1 of §7).

use sparselin_kernels::dense;

use super::lbfgs::Memory;
use super::line_search::{self, C1, C2, kink_slopes, on_kink};
use super::objective::{Objective, TransposeCache, fixed_sum};
use super::{Options, Progress, Solution, Stop, Tracker};
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// The supremum of ⟨s, d⟩ over ∂J(w) and the loss derivatives c_i of the subgradient attaining
/// it (s = λw + (1/m)Xᵀc): on a kink, the side whose slope times (Xd)_i is larger (β_i = 1 where
/// that increases ⟨s, d⟩); elsewhere the side p_i lies on.
fn argsup<E: Examples>(
    objective: &Objective<'_, E>,
    w: &[f64],
    p: &[f64],
    d: &[f64],
    xd: &[f64],
) -> (f64, Vec<f64>) {
    let (y, loss) = (objective.targets(), objective.weighted_loss());
    // Unweighted first, then times s_i where rows have weights (s_i ≥ 0 leaves every row's
    // choice of side as it was): the unweighted loop is then the one without weights.
    let mut c: Vec<f64> = (0..p.len())
        .map(|i| {
            let (left, right) = kink_slopes(loss, y[i], 1.0).expect("kinked loss");
            if on_kink(p[i], y[i]) {
                if left * xd[i] > right * xd[i] {
                    left
                } else {
                    right
                }
            } else if p[i] < y[i] {
                left
            } else {
                right
            }
        })
        .collect();
    if let Some(s) = objective.sample_weights() {
        c.iter_mut().zip(s).for_each(|(c, s)| *c *= s);
    }
    let mut loss_part = [fixed_sum(p.len(), |rows| {
        rows.map(|i| c[i] * xd[i]).sum::<f64>()
    })];
    objective.reducer().sum(&mut loss_part);
    let sup = objective.lambda() * dense::dot(w, d) + loss_part[0] / objective.total_rows() as f64;
    (sup, c)
}

/// A descent direction p with X·p, the aggregate subgradient ḡ (p = −Bḡ), sup_s⟨s, p⟩ = Φ'(0⁺)
/// and the direction-finding duality gap ε_i.
struct Direction {
    p: Vec<f64>,
    xp: Vec<f64>,
    gbar: Vec<f64>,
    sup: f64,
}

/// Direction finding (MATH.md §7). Starting from ḡ₁ = `g1` ∈ ∂J(w), p₁ = −Bḡ₁; each round
/// takes s = argsup⟨s, p_i⟩; a descent direction (⟨s, p_i⟩ < 0) is returned once ε_i ≤ ε (or at
/// once with `first_descent`); otherwise ḡ moves toward s by the μ* minimizing ½ḡᵀBḡ. After
/// `max_rounds`, or when no progress is possible, the last descent direction seen (if any).
/// `cache` holds Xᵀc for the c of `g1`, from which each s is updated.
#[allow(clippy::too_many_arguments)]
fn find_direction<E: Examples>(
    objective: &Objective<'_, E>,
    (w, pred): (&[f64], &[f64]),
    cache: &TransposeCache,
    memory: &Memory,
    g1: &[f64],
    eps: f64,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Option<Direction>, AllocError> {
    let mut gbar = memory::copied("aggregate subgradient", g1)?;
    let mut p = memory.apply(&gbar)?;
    dense::scale(-1.0, &mut p);
    let mut best_primal = f64::INFINITY;
    let mut descent = None;
    for _ in 0..options.max_rounds.max(1) {
        let xp = objective.product(&p);
        tracker.passes += 1.0;
        let (sup, c) = argsup(objective, w, pred, &p, &xp);
        let pg = dense::dot(&p, &gbar);
        best_primal = best_primal.min(sup - 0.5 * pg);
        let gap = best_primal - 0.5 * pg;
        let is_descent = sup < 0.0;
        if is_descent && (options.first_descent || gap <= eps) {
            return Ok(Some(Direction { p, xp, gbar, sup }));
        }
        let (s, work) = objective.subgradient_near(w, &c, cache)?;
        tracker.passes += work;
        let bs = memory.apply(&s)?;
        let mut diff = memory::copied("aggregate subgradient", &gbar)?;
        dense::axpby(-1.0, &s, 1.0, &mut diff);
        // ⟨ḡ − s, B(ḡ − s)⟩ = ⟨ḡ − s, −p − Bs⟩ and ⟨ḡ − s, Bḡ⟩ = ⟨ḡ − s, −p⟩.
        let diff_p = dense::dot(&diff, &p);
        let denominator = -diff_p - dense::dot(&diff, &bs);
        let mu = if denominator > 0.0 {
            (-diff_p / denominator).clamp(0.0, 1.0)
        } else {
            0.0
        };
        if is_descent {
            descent = Some(Direction {
                p: memory::copied("search direction", &p)?,
                xp,
                gbar: memory::copied("aggregate subgradient", &gbar)?,
                sup,
            });
        }
        if mu == 0.0 {
            break;
        }
        dense::axpby(mu, &s, 1.0 - mu, &mut gbar);
        dense::axpby(-mu, &bs, 1.0 - mu, &mut p);
    }
    Ok(descent)
}

/// The power of two that brings the largest |p_j| to about 1: a scaling without rounding
/// (1 when that entry is 0 or not finite).
fn shortening(p: &[f64]) -> f64 {
    let largest = p.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if largest > 0.0 && largest.is_finite() {
        2f64.powi(-(largest.log2().floor() as i32))
    } else {
        1.0
    }
}

/// Consecutive iterations that decrease J by at most ftol·J before subLBFGS stops as stalled.
/// A step that the next kink cuts short can decrease J by almost nothing (10⁻²⁴ relative
/// after an η of 10⁻¹³ on digits_3v5) and still be progress, one more row put on its kink, so
/// a single such step is no reason to stop.
const STALL_PATIENCE: usize = 10;

/// subLBFGS from `options.w0` (or 0). B₀ = I/λ unless `options.b0_scale` says otherwise.
pub fn solve<E: Examples>(
    objective: &Objective<'_, E>,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, AllocError> {
    let lambda = objective.lambda();
    let mut w = options.start(objective.dim())?;
    let mut pred = objective.product(&w);
    let mut value = objective.value(&w, &pred);
    // ḡ₁ of the first iteration: the subgradient with β = 0 on every kink (the loss's choice).
    let (mut g, mut cache, work) =
        objective.cached_subgradient(&w, objective.derivatives(&pred), None)?;
    tracker.passes += 1.0 + work;
    let mut memory = Memory::new(
        objective.dim(),
        options.memory,
        options.b0_scale.or(Some(1.0 / lambda)),
    );
    let mut gap = tracker.gap(lambda, &g);
    let mut iteration = 0;
    let mut stalls = 0;
    let stop = loop {
        tracker.report(Progress::new(iteration, value, gap, &w));
        if let Some(stop) = options.converged(iteration, value, gap) {
            break stop;
        }
        let eps = options.dir_eps * value.abs();
        let find = |memory: &Memory, tracker: &mut Tracker<'_>| {
            find_direction(
                objective,
                (&w, &pred),
                &cache,
                memory,
                &g,
                eps,
                options,
                tracker,
            )
        };
        let direction = match find(&memory, tracker)? {
            Some(direction) => direction,
            // No descent with the curvature pairs: retry as steepest descent before giving up.
            None if !memory.is_empty() => {
                memory.clear();
                match find(&memory, tracker)? {
                    Some(direction) => direction,
                    None => break Stop::NoDescent,
                }
            }
            None => break Stop::NoDescent,
        };
        // ḡ ∈ ∂J(w) too (a convex combination of subgradients at w): a second certificate.
        let aggregate_gap = tracker.gap(lambda, &direction.gbar);
        if aggregate_gap <= options.tol * value.abs() {
            tracker.report(Progress::new(iteration, value, aggregate_gap, &w));
            break Stop::Converged;
        }
        let Direction {
            mut p,
            mut xp,
            gbar,
            mut sup,
        } = direction;
        let mut ray = objective.ray(&w, &p, &pred, &xp);
        if !ray.dd.is_finite() {
            // Under a tiny λ, B₀ = I/λ makes p so long that ‖p‖² overflows (from λ ≈ 10⁻¹⁵⁴
            // on). The line search is exact and only the step η·p is kept, so a shorter p
            // changes η and nothing else.
            let shortening = shortening(&p);
            dense::scale(shortening, &mut p);
            dense::scale(shortening, &mut xp);
            sup *= shortening;
            ray = objective.ray(&w, &p, &pred, &xp);
        }
        let Some(mut step) = line_search::exact(&ray, 0.0) else {
            break Stop::LineSearchFailed;
        };
        if step.eta > 0.0 && ray.eval(step.eta).0 > value + C1 * step.eta * sup {
            match line_search::exact(&ray, C2 * sup) {
                Some(fallback) => step = fallback,
                None => break Stop::LineSearchFailed,
            }
        }
        if step.eta.is_nan() || step.eta <= 0.0 {
            break Stop::LineSearchFailed;
        }
        dense::axpby(step.eta, &p, 1.0, &mut w);
        dense::axpby(step.eta, &xp, 1.0, &mut pred);
        // Rows the step lands on, and rows that stay within tolerance of their kink, sit
        // exactly on it from now on (MATH.md §7: "carried to the next point as μ_i = 1").
        let y = objective.targets();
        for &i in &step.landed {
            pred[i] = y[i];
        }
        for (q, &target) in pred.iter_mut().zip(y) {
            if on_kink(*q, target) {
                *q = target;
            }
        }
        // s' = argsup over ∂J(w_{t+1}) of ⟨s, p_t⟩: X·p_t is already known.
        let (_, c) = argsup(objective, &w, &pred, &p, &xp);
        // Few rows change sides in a step: Xᵀc is updated from the cache, not recomputed.
        let (s_prime, new_cache, work) = objective.cached_subgradient(&w, c, Some(cache))?;
        cache = new_cache;
        tracker.passes += work;
        memory.push(|s, y| {
            s.copy_from_slice(&p);
            dense::scale(step.eta, s);
            y.copy_from_slice(&s_prime);
            dense::axpby(-1.0, &gbar, 1.0, y);
        })?;
        iteration += 1;
        let previous = value;
        value = objective.value(&w, &pred);
        gap = tracker.gap(lambda, &s_prime);
        g = s_prime;
        stalls = if options.stalled(previous, value) {
            stalls + 1
        } else {
            0
        };
        if stalls >= STALL_PATIENCE {
            tracker.report(Progress::new(iteration, value, gap, &w));
            break Stop::Stalled;
        }
    };
    // The iterations track X·w by updates, with the rows near a kink snapped onto it; the
    // objective reported is that of X·w computed afresh (the two differ by rounding only, but
    // where J is tiny that rounding is a visible fraction of it).
    let value = objective.value(&w, &objective.product(&w));
    tracker.passes += 1.0;
    Ok(Solution {
        objective: value,
        w,
        iterations: iteration,
        stop,
        dual: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_are_shortened_by_the_power_of_two_that_brings_them_near_one() {
        assert_eq!(shortening(&[0.0; 4]), 1.0);
        assert_eq!(shortening(&[f64::INFINITY, 1.0]), 1.0);
        assert_eq!(shortening(&[0.75, -3.0]), 0.5);
        let p = [3e160, -7e200, 1.0];
        let factor = shortening(&p);
        assert_eq!(factor, 2f64.powi(-667));
        assert!((1.0..2.0).contains(&(7e200 * factor)));
        // Exact: scaling back recovers every entry bit for bit.
        assert!(p.iter().all(|&x| (x * factor) / factor == x));
    }
}
