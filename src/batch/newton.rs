//! Truncated Newton with a line search (Galli & Lin, "A study on truncated Newton methods for
//! linear classification", IEEE TNNLS 2022; liblinear's primal solver of `-s 0`, `-s 2` and
//! `-s 11` in its current releases, where it replaced TRON) for the smooth losses. Each
//! iteration solves the Newton system H·s = −∇J inexactly by preconditioned conjugate
//! gradients on Hessian-vector products (TRON's), then backtracks along s from the full step
//! until J falls by a fraction of what the slope promises (Armijo).
//!
//! Where TRON ([`super::tron`]) bounds each step by a region and refuses the steps the model
//! predicted badly (each refusal costs its whole CG solve), here every direction is used: the
//! line search shortens it, at O(m) per trial from the cached predictions (X·s comes out of
//! the CG steps' products). CG stops on the quadratic model's own progress (Nash & Sofer's
//! rule: the last step's decrease, times the steps taken, is below a fraction of the decrease
//! so far), a fraction that shrinks with ‖∇J‖ so that the steps grow exact as w converges.
//! The certificate is L-BFGS's, ‖∇J‖²/(2λ).

use sparselin_kernels::dense;

use super::hessian::{ConjugateGradients, inverse_preconditioner};
use super::objective::{Landing, Objective, Ray, advance};
use super::{Options, Progress, Solution, Stop, Tracker};
use crate::data::Examples;
use crate::memory::AllocError;

/// CG's stopping fraction is min([`CG_TOLERANCE`], ‖∇J‖_{M⁻¹}^{1/2}) (liblinear's 0.5).
const CG_TOLERANCE: f64 = 0.5;

/// A step is taken when J falls by at least this fraction of the slope's promise η·⟨∇J, s⟩
/// (liblinear's 0.01).
const ARMIJO: f64 = 0.01;

/// Halvings of the step before the line search gives up: down to 2⁻⁶⁰ ≈ 10⁻¹⁸ of the
/// Newton step. liblinear stops at 20 (a millionth), which at w = 0 under Huber's loss with
/// every residual beyond δ (ℓ'' = 0 on every row, so H = λI and the step −∇J/λ) is not short
/// enough for λ below about 1e-6: diabetes at δ = 20, λ = 1e-7, stopped there having trained
/// nothing. Each trial is O(m) from the cached predictions.
const MOST_HALVINGS: usize = 60;

/// Line-search Newton from `options.w0` (or zero) until the certificate is below `tol`·J, the
/// iteration limit, or a stall (no decrease along a direction, or a decrease down to
/// rounding).
pub fn solve<E: Examples>(
    objective: &Objective<'_, E>,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, AllocError> {
    let lambda = objective.lambda();
    let mut w = options.start(objective.dim())?;
    let mut p = objective.product(&w);
    let mut value = objective.value(&w, &p);
    let mut gradient = objective.gradient(&w, &p)?;
    tracker.passes += 2.0;
    let mut landing = objective.landing()?;
    let mut iteration = 0;
    let stop = loop {
        let gap = tracker.gap(lambda, &gradient);
        tracker.report(Progress::new(iteration, value, gap, &w));
        if let Some(stop) = options.converged(iteration, value, gap) {
            break stop;
        }
        let curvatures = objective.curvatures(&p);
        let inverse = inverse_preconditioner(objective, &curvatures)?;
        tracker.passes += 1.0;
        let (s, xs) = newton_direction(objective, &curvatures, &inverse, &gradient, tracker)?;
        let ray = objective.ray(&w, &s, &p, &xs);
        let slope = dense::dot(&gradient, &s);
        let Some(eta) = backtrack(&ray, value, slope, &mut landing) else {
            break stalled_or_converged(options, iteration, value, gap);
        };
        dense::axpby(eta, &s, 1.0, &mut w);
        advance(&mut p, &xs, eta);
        let next_value;
        (next_value, gradient) = objective.landed(&w, &p, eta, &landing)?;
        tracker.passes += 1.0;
        iteration += 1;
        let fell = value - next_value;
        value = next_value;
        if fell.abs() <= 1e-12 * value.abs() {
            let gap = tracker.gap(lambda, &gradient);
            tracker.report(Progress::new(iteration, value, gap, &w));
            break stalled_or_converged(options, iteration, value, gap);
        }
    };
    Ok(Solution {
        objective: value,
        w,
        iterations: iteration,
        stop,
        dual: None,
    })
}

/// A stop with no further progress to make: converged if the certificate says so.
fn stalled_or_converged(options: &Options, iteration: usize, value: f64, gap: f64) -> Stop {
    match options.converged(iteration, value, gap) {
        Some(Stop::Converged) => Stop::Converged,
        _ => Stop::Stalled,
    }
}

/// The first of η = 1, ½, ¼, … at which J(w + ηs) ≤ J(w) + [`ARMIJO`]·η·⟨∇J, s⟩ along the
/// ray from w (J(w) = `value`) along s (`slope` = ⟨∇J, s⟩), each trial O(m) from the cached
/// predictions, the last trial kept in `landing`; `None` when s is no descent direction
/// (rounding) or [`MOST_HALVINGS`] halvings found no such η.
fn backtrack(ray: &Ray<'_>, value: f64, slope: f64, landing: &mut Landing) -> Option<f64> {
    if slope.partial_cmp(&0.0) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let mut eta = 1.0;
    for _ in 0..MOST_HALVINGS {
        if ray.eval_keeping(eta, landing).0 - value <= ARMIJO * eta * slope {
            return Some(eta);
        }
        eta *= 0.5;
    }
    None
}

/// An inexact Newton direction s ≈ −H⁻¹∇J and X·s, by conjugate gradients preconditioned by
/// M (`inverse`: M⁻¹'s diagonal) from s = 0, stopped by the quadratic model
/// q(s) = ⟨∇J, s⟩ + ½⟨s, H s⟩ when step k's decrease times k is within a fraction
/// (`CG_TOLERANCE`, smaller near the optimum) of q itself, or when a step finds no positive
/// curvature (rounding: H is positive definite where λ > 0).
fn newton_direction<E: Examples>(
    objective: &Objective<'_, E>,
    curvatures: &[f64],
    inverse: &[f64],
    gradient: &[f64],
    tracker: &mut Tracker<'_>,
) -> Result<(Vec<f64>, Vec<f64>), AllocError> {
    let mut cg = ConjugateGradients::start(gradient, curvatures, inverse)?;
    let tolerance = CG_TOLERANCE.min(cg.rz.sqrt().sqrt());
    let mut model = 0.0;
    // At most max(dim, 5) steps (liblinear's bound): in exact arithmetic CG is done after dim.
    for step in 1..=gradient.len().max(5) {
        let along = cg.along_direction(objective, tracker)?;
        if along.curvature.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            break;
        }
        cg.advance(cg.rz / along.curvature, &along);
        // q(s) = −½(⟨s, r⟩ − ⟨s, ∇J⟩), since r = −∇J − H s.
        let next_model = -0.5 * (dense::dot(&cg.s, &cg.r) - dense::dot(&cg.s, gradient));
        let decrease = next_model - model;
        if next_model > 0.0 || decrease > 0.0 || step as f64 * decrease >= tolerance * next_model {
            break;
        }
        model = next_model;
        cg.turn();
    }
    let (s, xs, _) = cg.finish(objective, tracker);
    Ok((s, xs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};
    use crate::loss::Loss;

    /// One row x = (1), y = +1, log loss, λ = 1e-2, at w = 0 (J = ln 2, ∇J = −½) along
    /// s = 100: the full step overshoots to J ≈ 50, and the search halves it to the first η
    /// where J falls by 1% of the slope's promise. Along an ascent direction it takes nothing.
    #[test]
    fn the_line_search_shortens_a_step_that_overshoots() {
        let data =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![1.0]), 1).unwrap();
        let objective = Objective::new(&data, Loss::Log, 1e-2, false);
        let (w, p) = ([0.0], [0.0]);
        let value = objective.value(&w, &p);
        let gradient = objective.gradient(&w, &p).unwrap();
        assert_eq!(gradient, [-0.5]);
        let (s, xs) = ([100.0], [100.0]);
        let mut landing = objective.landing().unwrap();
        let ray = objective.ray(&w, &s, &p, &xs);
        let slope = dense::dot(&gradient, &s);
        let eta = backtrack(&ray, value, slope, &mut landing).unwrap();
        let at = |eta: f64| objective.value(&[eta * 100.0], &[eta * 100.0]);
        let promised = |eta: f64| value + ARMIJO * eta * -50.0;
        assert!(eta < 1.0, "{eta}");
        assert!(
            at(eta) <= promised(eta),
            "{eta}: {} > {}",
            at(eta),
            promised(eta)
        );
        assert!(
            at(2.0 * eta) > promised(2.0 * eta),
            "{eta}: a longer step passed too"
        );
        let ray = objective.ray(&w, &[-1.0], &p, &[-1.0]);
        let ascent = backtrack(&ray, value, dense::dot(&gradient, &[-1.0]), &mut landing);
        assert_eq!(ascent, None);
    }
}
