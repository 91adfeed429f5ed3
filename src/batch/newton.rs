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

use super::hessian::{
    complete_product, curved_fraction, hessian_product, inverse_preconditioner, precondition,
    preconditioned,
};
use super::objective::Objective;
use super::{Options, Progress, Solution, Stop, Tracker};
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// CG's stopping fraction is min([`CG_TOLERANCE`], ‖∇J‖_{M⁻¹}^{1/2}) (liblinear's 0.5).
const CG_TOLERANCE: f64 = 0.5;

/// A step is taken when J falls by at least this fraction of the slope's promise η·⟨∇J, s⟩
/// (liblinear's 0.01).
const ARMIJO: f64 = 0.01;

/// Halvings of the step before the line search gives up (liblinear's 20: the step is then
/// a millionth of the Newton step).
const MOST_HALVINGS: usize = 20;

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
        let Some(eta) = backtrack(objective, &w, &p, &s, &xs, value, &gradient) else {
            break stalled_or_converged(options, iteration, value, gap);
        };
        dense::axpby(eta, &s, 1.0, &mut w);
        dense::axpby(eta, &xs, 1.0, &mut p);
        let next_value = objective.value(&w, &p);
        gradient = objective.gradient(&w, &p)?;
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

/// The first of η = 1, ½, ¼, … at which J(w + ηs) ≤ J(w) + [`ARMIJO`]·η·⟨∇J, s⟩, each trial
/// O(m) from the predictions p and X·s; `None` when s is no descent direction (rounding) or
/// [`MOST_HALVINGS`] halvings found no such η.
fn backtrack<E: Examples>(
    objective: &Objective<'_, E>,
    w: &[f64],
    p: &[f64],
    s: &[f64],
    xs: &[f64],
    value: f64,
    gradient: &[f64],
) -> Option<f64> {
    let slope = dense::dot(gradient, s);
    if slope.partial_cmp(&0.0) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let ray = objective.ray(w, s, p, xs);
    let mut eta = 1.0;
    for _ in 0..MOST_HALVINGS {
        if ray.eval(eta).0 - value <= ARMIJO * eta * slope {
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
    let dim = gradient.len();
    let mut s = memory::filled("step", dim, 0.0)?;
    let mut xs = vec![0.0; curvatures.len()];
    let mut r = memory::copied("residual", gradient)?;
    dense::scale(-1.0, &mut r);
    let mut z = preconditioned(&r, inverse)?;
    let mut d = memory::copied("direction", &z)?;
    let mut rz = dense::dot(&r, &z);
    let tolerance = CG_TOLERANCE.min(rz.sqrt().sqrt());
    let fraction = curved_fraction(curvatures);
    let mut model = 0.0;
    // At most one CG step per dimension: in exact arithmetic CG is done by then.
    for step in 1..=dim.max(5) {
        let (xd, hd) = hessian_product(objective, curvatures, &d)?;
        tracker.passes += 2.0 * fraction;
        let dhd = dense::dot(&d, &hd);
        if dhd.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            break;
        }
        let alpha = rz / dhd;
        dense::axpby(alpha, &d, 1.0, &mut s);
        dense::axpby(alpha, &xd, 1.0, &mut xs);
        dense::axpby(-alpha, &hd, 1.0, &mut r);
        // q(s) = −½(⟨s, r⟩ − ⟨s, ∇J⟩), since r = −∇J − H s.
        let next_model = -0.5 * (dense::dot(&s, &r) - dense::dot(&s, gradient));
        let decrease = next_model - model;
        if next_model > 0.0 || decrease > 0.0 || step as f64 * decrease >= tolerance * next_model {
            break;
        }
        model = next_model;
        precondition(&r, inverse, &mut z);
        let next_rz = dense::dot(&r, &z);
        dense::axpby(1.0, &z, next_rz / rz, &mut d);
        rz = next_rz;
    }
    complete_product(objective, curvatures, &s, &mut xs, tracker);
    Ok((s, xs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{self, Algorithm, SolveError};
    use crate::data::{CsrMatrix, ValueVec};
    use crate::loss::Loss;

    /// One example x = (2), y = +1, no bias, squared hinge: J(w) = (λ/2)w² + (1 − 2w)² for
    /// w < 1/2, least at w* = 4/(λ + 8). The model is J itself: the full Newton step lands on
    /// it and the line search takes it.
    #[test]
    fn one_newton_step_lands_on_a_quadratic_optimum() {
        let data =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![2.0]), 1).unwrap();
        let lambda = 0.5;
        let objective = Objective::new(&data, Loss::SquaredHinge, lambda, false);
        let solution = batch::solve(
            Algorithm::Newton,
            &objective,
            &Options::default(),
            &mut |_| {},
        )
        .unwrap();
        let w = 4.0 / (lambda + 8.0);
        assert!((solution.w[0] - w).abs() <= 1e-15, "{:?}", solution.w);
        assert_eq!(solution.stop, Stop::Converged);
        assert_eq!(solution.iterations, 1, "{solution:?}");
    }

    /// On random data, the optimum L-BFGS and TRON certify, J reported at the w returned, and
    /// from that optimum nothing to do.
    #[test]
    fn reaches_the_lbfgs_optimum_and_stays_there() {
        let data = crate::batch::objective::tests::planted(300, 15, 4);
        for loss in [
            Loss::Log,
            Loss::SquaredHinge,
            Loss::Squared,
            Loss::SmoothHinge,
        ] {
            let objective = Objective::new(&data, loss, 1e-3, true);
            let solve = |algorithm, w0| {
                let options = Options {
                    w0,
                    ..Options::default()
                };
                batch::solve(algorithm, &objective, &options, &mut |_| {}).unwrap()
            };
            let (lbfgs, newton) = (
                solve(Algorithm::Lbfgs, None),
                solve(Algorithm::Newton, None),
            );
            assert_eq!(newton.stop, Stop::Converged, "{loss}");
            let fresh = objective.value(&newton.w, &objective.product(&newton.w));
            assert!(
                (newton.objective - fresh).abs() <= 1e-12 * fresh,
                "{loss}: {} vs {fresh}",
                newton.objective
            );
            let difference = (newton.objective - lbfgs.objective).abs();
            assert!(
                difference <= 2e-9 * lbfgs.objective,
                "{loss}: {difference:e}"
            );
            let again = solve(Algorithm::Newton, Some(newton.w.clone()));
            assert_eq!(again.iterations, 0, "{loss}");
        }
    }

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
        let eta = backtrack(&objective, &w, &p, &s, &xs, value, &gradient).unwrap();
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
        let ascent = backtrack(&objective, &w, &p, &[-1.0], &[-1.0], value, &gradient);
        assert_eq!(ascent, None);
    }

    /// The piecewise-linear losses have no curvature to model, and Newton has no L1 term.
    #[test]
    fn kinked_losses_and_an_l1_term_are_refused() {
        let data = crate::batch::objective::tests::planted(20, 3, 1);
        let hinge = Objective::new(&data, Loss::Hinge, 1e-2, true);
        let refused = batch::solve(Algorithm::Newton, &hinge, &Options::default(), &mut |_| {});
        assert!(
            matches!(refused, Err(SolveError::WrongLoss { .. })),
            "{refused:?}"
        );
        let l1 = Objective::new(&data, Loss::Log, 1e-2, true).with_l1(1e-3);
        let refused = batch::solve(Algorithm::Newton, &l1, &Options::default(), &mut |_| {});
        assert!(
            matches!(&refused, Err(SolveError::BadOption(m)) if m.contains("no L1 term")),
            "{refused:?}"
        );
    }
}
