//! Trust-region Newton (TRON: Lin, Weng & Keerthi, JMLR 2008; liblinear's primal solver of
//! `-s 0`, `-s 2` and `-s 11`) for the smooth losses. Each iteration minimizes the quadratic
//! model of J around w within a trust region by conjugate gradients on Hessian-vector
//! products
//!
//! ```text
//! H·d = λd + (1/m) Xᵀ(D·X·d),   D_ii = s_i·c_{y_i}·ℓ''(p_i, y_i)
//! ```
//!
//! (no Hessian stored: per CG step, two passes over the rows of non-zero curvature — for the
//! squared hinge, whose ℓ'' is the generalized one, the rows inside the margin — and one pass
//! per iteration for the preconditioner), then takes the step if J fell by enough
//! of what the model predicted and grows or shrinks the region by how well it did. The CG is
//! preconditioned by a mix of H's diagonal and λ (Hsia, Chiang & Lin, ACML 2018; liblinear's
//! since 2.20), and the region is a ball in the norm the preconditioner defines, so that
//! features of very different curvature get steps of their own scale. Near the
//! optimum the Newton steps converge superlinearly where L-BFGS's curvature estimate from a
//! few pairs lags, as at large C (small λ), where J is ill-conditioned. The certificate is
//! L-BFGS's, ‖∇J‖²/(2λ). Rows of every rank: the products are local, the sums over rows
//! reduced ([`Objective::transpose_product`]), so the ranks take the same steps.

use sparselin_kernels::dense;

use super::hessian::{ConjugateGradients, inverse_preconditioner, preconditioned};
use super::objective::Objective;
use super::{Options, Progress, Solution, Stop, Tracker};
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// A step is taken when J falls by more than this fraction of the model's predicted decrease
/// (liblinear's η₀; η₁ and η₂ grade how well the model did, σ₁…σ₃ resize the region).
const ETA0: f64 = 1e-4;
const ETA1: f64 = 0.25;
const ETA2: f64 = 0.75;
const SIGMA1: f64 = 0.25;
const SIGMA2: f64 = 0.5;
const SIGMA3: f64 = 4.0;

/// Conjugate gradients stop when the model's residual is below this fraction of ∇J, both in
/// the M⁻¹-norm (liblinear's 0.1: an inexact Newton step, still superlinear as ‖∇J‖ → 0).
const CG_TOLERANCE: f64 = 0.1;

/// Steps refused in a row before the solver stops as stalled: each refusal shrinks the region
/// at least fourfold, so by then the steps are down to rounding.
const MOST_REFUSALS: usize = 60;

/// TRON from `options.w0` (or zero) until the certificate is below `tol`·J, the iteration
/// limit (accepted steps), or a stall.
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
    let mut curvatures = objective.curvatures(&p);
    // M⁻¹'s diagonal: CG divides by M once per step, the region's norm once per iteration.
    let mut inverse = inverse_preconditioner(objective, &curvatures)?;
    tracker.passes += 1.0;
    // The first region reaches as far as the preconditioned gradient step M⁻¹g (‖M⁻¹g‖_M);
    // each step tried before the first is taken shrinks it to that step's length.
    let mut radius = dense::dot(&gradient, &preconditioned(&gradient, &inverse)?).sqrt();
    let (mut iteration, mut refusals) = (0, 0);
    let stop = loop {
        let gap = tracker.gap(lambda, &gradient);
        tracker.report(Progress::new(iteration, value, gap, &w));
        if let Some(stop) = options.converged(iteration, value, gap) {
            break stop;
        }
        let step = trust_region_step(objective, &curvatures, &inverse, &gradient, radius, tracker)?;
        let mut next = memory::copied("weights", &w)?;
        dense::axpby(1.0, &step.s, 1.0, &mut next);
        let mut next_p = p.clone();
        dense::axpby(1.0, &step.xs, 1.0, &mut next_p);
        let next_value = objective.value(&next, &next_p);
        tracker.passes += 1.0;
        let gs = dense::dot(&gradient, &step.s);
        let predicted = -0.5 * (gs - dense::dot(&step.s, &step.r));
        let actual = value - next_value;
        let length = norm_in(&inverse, &step.s);
        if iteration == 0 {
            radius = radius.min(length);
        }
        radius = resized(
            radius,
            &step,
            length,
            actual,
            predicted,
            next_value - value - gs,
            gs,
        );
        let accepted = actual > ETA0 * predicted;
        if accepted {
            (w, p, value) = (next, next_p, next_value);
            gradient = objective.gradient(&w, &p)?;
            curvatures = objective.curvatures(&p);
            inverse = inverse_preconditioner(objective, &curvatures)?;
            tracker.passes += 2.0;
            iteration += 1;
            refusals = 0;
        } else {
            refusals += 1;
        }
        let negligible = |x: f64| x.abs() <= 1e-12 * value.abs();
        if (actual <= 0.0 && predicted <= 0.0) || (negligible(actual) && negligible(predicted)) {
            let gap = tracker.gap(lambda, &gradient);
            if accepted {
                tracker.report(Progress::new(iteration, value, gap, &w));
            }
            break match options.converged(iteration, value, gap) {
                Some(Stop::Converged) => Stop::Converged,
                _ => Stop::Stalled,
            };
        }
        // A radius of 0 (or NaN) leaves no step to try.
        if refusals >= MOST_REFUSALS
            || radius.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            break Stop::Stalled;
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

/// The trust region's new radius after a step `step` of length `length` that lowered J by
/// `actual` against the model's `predicted`, from Lin & Moré's rules (liblinear's `tron.cpp`):
/// `curvature_excess` = J(w + s) − J(w) − ⟨g, s⟩ and `gs` = ⟨g, s⟩ give the minimizer α of
/// the quadratic through J along s, which sizes the new region; a step the region cut short
/// that the model predicted well grows it fourfold.
fn resized(
    radius: f64,
    step: &TrustRegionStep,
    length: f64,
    actual: f64,
    predicted: f64,
    curvature_excess: f64,
    gs: f64,
) -> f64 {
    let alpha = if curvature_excess <= 0.0 {
        SIGMA3
    } else {
        SIGMA1.max(-0.5 * (gs / curvature_excess))
    };
    if actual < ETA0 * predicted {
        (alpha.max(SIGMA1) * length).min(SIGMA2 * radius)
    } else if actual < ETA1 * predicted {
        (SIGMA1 * radius).max((alpha * length).min(SIGMA2 * radius))
    } else if actual < ETA2 * predicted {
        (SIGMA1 * radius).max((alpha * length).min(SIGMA3 * radius))
    } else if step.reached_boundary {
        SIGMA3 * radius
    } else {
        radius.max((alpha * length).min(SIGMA3 * radius))
    }
}

/// ‖s‖_M, from M⁻¹'s diagonal `inverse`.
fn norm_in(inverse: &[f64], s: &[f64]) -> f64 {
    s.iter()
        .zip(inverse)
        .map(|(s, inverse)| s * s / inverse)
        .sum::<f64>()
        .sqrt()
}

/// A step of the trust-region subproblem: s, X·s, the model's residual r = −(g + H·s), and
/// whether the region's boundary cut it short.
struct TrustRegionStep {
    s: Vec<f64>,
    xs: Vec<f64>,
    r: Vec<f64>,
    reached_boundary: bool,
}

/// Conjugate gradients preconditioned by the diagonal M (`inverse`: M⁻¹'s) on
/// min ⟨g, s⟩ + ½⟨s, H s⟩ over ‖s‖_M ≤ `radius` (Steihaug): from s = 0 until the residual's
/// M⁻¹-norm is below [`CG_TOLERANCE`]·‖g‖_M⁻¹, or up to the region's boundary along the
/// direction that would leave it. `curvatures` are the D_ii at the current w. The M-norms the
/// boundary needs follow from CG's own recurrences (Steihaug; Conn, Gould & Toint), not from
/// three more passes over s and d per step.
fn trust_region_step<E: Examples>(
    objective: &Objective<'_, E>,
    curvatures: &[f64],
    inverse: &[f64],
    gradient: &[f64],
    radius: f64,
    tracker: &mut Tracker<'_>,
) -> Result<TrustRegionStep, AllocError> {
    let mut cg = ConjugateGradients::start(gradient, curvatures, inverse)?;
    let tolerance = CG_TOLERANCE * cg.rz.sqrt();
    // ‖s‖²_M, ⟨s, d⟩_M and ‖d‖²_M: d = z at first, and ⟨z, z⟩_M = ⟨r, z⟩.
    let (mut ss, mut sd, mut dd) = (0.0, 0.0, cg.rz);
    let mut reached_boundary = false;
    // At most one CG step per dimension: in exact arithmetic CG is done by then.
    for _ in 0..gradient.len() {
        if cg.rz.sqrt() <= tolerance {
            break;
        }
        let along = cg.along_direction(objective, tracker)?;
        let dhd = along.curvature;
        let mut alpha = cg.rz / dhd;
        // H is positive definite (λ > 0): a direction without positive curvature is rounding,
        // and goes to the boundary as the model says.
        let reaches_boundary = dhd.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
            || ss + 2.0 * alpha * sd + alpha * alpha * dd > radius * radius;
        if reaches_boundary {
            // τ ≥ 0 with ‖s + τd‖_M = radius, in the form that cancels nothing.
            let room = radius * radius - ss;
            let root = (sd * sd + dd * room).sqrt();
            alpha = if sd >= 0.0 {
                room / (sd + root)
            } else {
                (root - sd) / dd
            };
        }
        cg.advance(alpha, &along);
        if reaches_boundary {
            reached_boundary = true;
            break;
        }
        let beta = cg.turn();
        // The new r is M-conjugate to the old directions, so ⟨s, z⟩_M = ⟨s, r⟩ = 0 and
        // ⟨z, d⟩_M = ⟨r, d⟩ = 0.
        ss += alpha * (2.0 * sd + alpha * dd);
        sd = beta * (sd + alpha * dd);
        dd = cg.rz + beta * beta * dd;
    }
    let (s, xs, r) = cg.finish(objective, tracker);
    Ok(TrustRegionStep {
        s,
        xs,
        r,
        reached_boundary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{self, Algorithm};
    use crate::data::{CsrMatrix, ValueVec};
    use crate::loss::Loss;

    /// Columns scaled from 1e-2 to 1e2 (as spambase's unscaled counts are): the diagonal
    /// preconditioner gives each its own step scale, where plain CG needs steps for each.
    #[test]
    fn badly_scaled_columns_take_few_passes() {
        let planted = crate::batch::objective::tests::planted(400, 16, 6);
        let ValueVec::F64(values) = planted.values() else {
            unreachable!("planted stores f64")
        };
        let scaled = planted
            .indices()
            .iter()
            .zip(values)
            .map(|(&j, &v)| v * 10f64.powi(j as i32 % 5 - 2))
            .collect();
        let labels = (0..400).map(|i| planted.row(i).label).collect();
        let (offsets, indices) = (planted.offsets().to_vec(), planted.indices().to_vec());
        let data = CsrMatrix::new(labels, offsets, indices, ValueVec::F64(scaled), 16).unwrap();
        for loss in [Loss::Log, Loss::SquaredHinge] {
            let objective = Objective::new(&data, loss, 1e-4, true);
            let mut passes = 0.0;
            let tron = batch::solve(
                Algorithm::Tron,
                &objective,
                &Options::default(),
                &mut |progress| passes = progress.passes,
            )
            .unwrap();
            let lbfgs = batch::solve(
                Algorithm::Lbfgs,
                &objective,
                &Options::default(),
                &mut |_| {},
            )
            .unwrap();
            assert_eq!(tron.stop, Stop::Converged, "{loss}");
            // 122 (log) and 137 passes; 304 and 350 with M = λ (no preconditioning).
            assert!(passes <= 200.0, "{loss}: {passes} passes");
            let difference = (tron.objective - lbfgs.objective).abs();
            assert!(
                difference <= 2e-9 * lbfgs.objective,
                "{loss}: {difference:e}"
            );
        }
    }
}
