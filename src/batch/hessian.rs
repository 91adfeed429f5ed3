//! What the Newton solvers ([`super::tron`], [`super::newton`]) share: Hessian-vector products
//! of the smooth objective, computed from the rows without storing H,
//!
//! ```text
//! H·d = λd + (1/m) Xᵀ(D·X·d),   D_ii = s_i·c_{y_i}·ℓ''(p_i, y_i),
//! ```
//!
//! over the rows of non-zero curvature alone (for the squared hinge, whose ℓ'' is the
//! generalized one, the rows inside the margin), the diagonal preconditioner, and the
//! conjugate gradients both step (each with its own stopping rule).

use sparselin_kernels::dense;

use super::Tracker;
use super::objective::Objective;
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// The preconditioner M = λ + a·diag((1/m)XᵀDX) mixes H's diagonal (a = 1) with the
/// regularizer's (a = 0): liblinear's a (Hsia, Chiang & Lin, ACML 2018). In TRON it cut the
/// passes 2–9× where the columns' scales differ and cost up to 1.6× the time on
/// rows-normalized text and mnist_3v5; 0.001, 0.1 and 1 each did worse somewhere (PERF.md
/// "TRON's diagonal preconditioner").
const PRECONDITIONER_MIX: f64 = 0.01;

/// M⁻¹'s diagonal for M = λ + a·diag((1/m)XᵀDX), D the rows' curvatures
/// ([`PRECONDITIONER_MIX`]): M is positive wherever λ is. One pass over the rows.
pub(super) fn inverse_preconditioner<E: Examples>(
    objective: &Objective<'_, E>,
    curvatures: &[f64],
) -> Result<Vec<f64>, AllocError> {
    let mut diagonal = objective.transpose_squares(curvatures)?;
    let mix = PRECONDITIONER_MIX / objective.total_rows() as f64;
    diagonal
        .iter_mut()
        .for_each(|x| *x = (objective.lambda() + mix * *x).recip());
    Ok(diagonal)
}

/// M⁻¹r, from M⁻¹'s diagonal `inverse`.
pub(super) fn preconditioned(r: &[f64], inverse: &[f64]) -> Result<Vec<f64>, AllocError> {
    let mut z = memory::copied("preconditioned residual", r)?;
    precondition(r, inverse, &mut z);
    Ok(z)
}

/// z = M⁻¹r, from M⁻¹'s diagonal `inverse`.
fn precondition(r: &[f64], inverse: &[f64], z: &mut [f64]) {
    z.iter_mut()
        .zip(r.iter().zip(inverse))
        .for_each(|(z, (r, inverse))| *z = r * inverse);
}

/// (X·d, H·d) at the point whose curvatures are `curvatures`: H·d = λd + (1/m) Xᵀ(D·X·d),
/// X·d computed (and non-zero) only on the rows of non-zero curvature.
fn hessian_product<E: Examples>(
    objective: &Objective<'_, E>,
    curvatures: &[f64],
    d: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), AllocError> {
    let xd = objective.product_where(d, |i| curvatures[i] != 0.0);
    let weighted: Vec<f64> = xd.iter().zip(curvatures).map(|(x, c)| x * c).collect();
    let mut hd = objective.transpose_product(&weighted)?;
    dense::axpby(
        objective.lambda(),
        d,
        1.0 / objective.total_rows() as f64,
        &mut hd,
    );
    Ok((xd, hd))
}

/// Preconditioned conjugate gradients on H·s = −∇J from s = 0 (M the diagonal
/// preconditioner): the step s, X·s summed from the products' X·d, the residual
/// r = −∇J − H·s, the direction d and ⟨r, M⁻¹r⟩. The solvers decide when to stop and how
/// far to go along each direction.
pub(super) struct ConjugateGradients<'c> {
    /// The step so far.
    pub s: Vec<f64>,
    /// X·s on the rows of non-zero curvature (the others are held at 0 until
    /// [`finish`](Self::finish)).
    xs: Vec<f64>,
    /// r = −∇J − H·s.
    pub r: Vec<f64>,
    /// M⁻¹r.
    z: Vec<f64>,
    /// The direction of the next step.
    d: Vec<f64>,
    /// ⟨r, M⁻¹r⟩ = ‖r‖²_M⁻¹.
    pub rz: f64,
    curvatures: &'c [f64],
    /// The rows of non-zero curvature, which each product reads.
    curved: usize,
    /// M⁻¹'s diagonal.
    inverse: &'c [f64],
}

/// H·d for a direction d: ⟨d, H d⟩, X·d (on the curved rows) and H·d.
pub(super) struct AlongDirection {
    /// ⟨d, H d⟩.
    pub curvature: f64,
    xd: Vec<f64>,
    hd: Vec<f64>,
}

impl<'c> ConjugateGradients<'c> {
    /// s = 0, r = −∇J and the first direction M⁻¹r, at the point whose curvatures are
    /// `curvatures` (M⁻¹'s diagonal `inverse`).
    pub(super) fn start(
        gradient: &[f64],
        curvatures: &'c [f64],
        inverse: &'c [f64],
    ) -> Result<Self, AllocError> {
        let s = memory::filled("step", gradient.len(), 0.0)?;
        let mut r = memory::copied("residual", gradient)?;
        dense::scale(-1.0, &mut r);
        let z = preconditioned(&r, inverse)?;
        let d = memory::copied("direction", &z)?;
        let rz = dense::dot(&r, &z);
        Ok(ConjugateGradients {
            s,
            xs: vec![0.0; curvatures.len()],
            r,
            z,
            d,
            rz,
            curvatures,
            curved: curvatures.iter().filter(|&&c| c != 0.0).count(),
            inverse,
        })
    }

    /// The fraction of the rows with non-zero curvature: the passes' worth of work of each
    /// product [`hessian_product`] makes.
    fn curved_fraction(&self) -> f64 {
        self.curved as f64 / self.curvatures.len().max(1) as f64
    }

    /// H·d for the current direction d: a product over the curved rows and one back.
    pub(super) fn along_direction<E: Examples>(
        &self,
        objective: &Objective<'_, E>,
        tracker: &mut Tracker<'_>,
    ) -> Result<AlongDirection, AllocError> {
        let (xd, hd) = hessian_product(objective, self.curvatures, &self.d)?;
        tracker.passes += 2.0 * self.curved_fraction();
        Ok(AlongDirection {
            curvature: dense::dot(&self.d, &hd),
            xd,
            hd,
        })
    }

    /// s += αd, with X·s and r = −∇J − H·s following.
    pub(super) fn advance(&mut self, alpha: f64, along: &AlongDirection) {
        dense::axpby(alpha, &self.d, 1.0, &mut self.s);
        dense::axpby(alpha, &along.xd, 1.0, &mut self.xs);
        dense::axpby(-alpha, &along.hd, 1.0, &mut self.r);
    }

    /// The next direction d = M⁻¹r + βd, M-conjugate to the ones before, with ⟨r, M⁻¹r⟩
    /// renewed; returns β.
    pub(super) fn turn(&mut self) -> f64 {
        precondition(&self.r, self.inverse, &mut self.z);
        let next_rz = dense::dot(&self.r, &self.z);
        let beta = next_rz / self.rz;
        dense::axpby(1.0, &self.z, beta, &mut self.d);
        self.rz = next_rz;
        beta
    }

    /// (s, X·s, r): X·s completed on the rows the products left out (zero curvature), where
    /// it was held at 0.
    pub(super) fn finish<E: Examples>(
        mut self,
        objective: &Objective<'_, E>,
        tracker: &mut Tracker<'_>,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        if self.curved < self.curvatures.len() {
            let curvatures = self.curvatures;
            let rest = objective.product_where(&self.s, |i| curvatures[i] == 0.0);
            dense::axpby(1.0, &rest, 1.0, &mut self.xs);
            tracker.passes += 1.0 - self.curved_fraction();
        }
        (self.s, self.xs, self.r)
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::objective::Objective;
    use crate::batch::{self, Algorithm, Options, SolveError, Stop};
    use crate::data::{CsrMatrix, ValueVec};
    use crate::loss::Loss;

    /// The two solvers that step these conjugate gradients.
    const NEWTON_SOLVERS: [Algorithm; 2] = [Algorithm::Tron, Algorithm::Newton];

    /// One example x = (2), y = +1, no bias, squared hinge: J(w) = (λ/2)w² + (1 − 2w)² for
    /// w < 1/2, least at w* = 4/(λ + 8). The model is J itself: one Newton step lands on it
    /// (TRON's first region may cut it short: one more).
    #[test]
    fn one_newton_step_lands_on_a_quadratic_optimum() {
        let data =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![2.0]), 1).unwrap();
        let lambda = 0.5;
        let objective = Objective::new(&data, Loss::SquaredHinge, lambda, false);
        for (algorithm, most) in [(Algorithm::Tron, 2), (Algorithm::Newton, 1)] {
            let solution =
                batch::solve(algorithm, &objective, &Options::default(), &mut |_| {}).unwrap();
            let w = 4.0 / (lambda + 8.0);
            assert!(
                (solution.w[0] - w).abs() <= 1e-15,
                "{algorithm}: {:?}",
                solution.w
            );
            assert_eq!(solution.stop, Stop::Converged, "{algorithm}");
            assert!(solution.iterations <= most, "{algorithm}: {solution:?}");
        }
    }

    /// On random data, the optimum L-BFGS certifies, J reported at the w returned, and from
    /// that optimum nothing to do.
    #[test]
    fn reach_the_lbfgs_optimum_and_stay_there() {
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
            let lbfgs = solve(Algorithm::Lbfgs, None);
            for algorithm in NEWTON_SOLVERS {
                let newton = solve(algorithm, None);
                assert_eq!(newton.stop, Stop::Converged, "{algorithm} {loss}");
                // The J reported is J at the w returned: the predictions kept along the steps
                // (X·s summed over CG steps on the curved rows, computed on the others) are
                // X·w.
                let fresh = objective.value(&newton.w, &objective.product(&newton.w));
                assert!(
                    (newton.objective - fresh).abs() <= 1e-12 * fresh,
                    "{algorithm} {loss}: {} vs {fresh}",
                    newton.objective
                );
                let difference = (newton.objective - lbfgs.objective).abs();
                assert!(
                    difference <= 2e-9 * lbfgs.objective,
                    "{algorithm} {loss}: {difference:e}"
                );
                let again = solve(algorithm, Some(newton.w.clone()));
                assert_eq!(again.iterations, 0, "{algorithm} {loss}");
            }
        }
    }

    /// The piecewise-linear losses have no curvature to model, and neither solver has an L1
    /// term.
    #[test]
    fn kinked_losses_and_an_l1_term_are_refused() {
        let data = crate::batch::objective::tests::planted(20, 3, 1);
        let hinge = Objective::new(&data, Loss::Hinge, 1e-2, true);
        let l1 = Objective::new(&data, Loss::Log, 1e-2, true).with_l1(1e-3);
        for algorithm in NEWTON_SOLVERS {
            let refused = batch::solve(algorithm, &hinge, &Options::default(), &mut |_| {});
            assert!(
                matches!(refused, Err(SolveError::WrongLoss { .. })),
                "{algorithm}: {refused:?}"
            );
            let refused = batch::solve(algorithm, &l1, &Options::default(), &mut |_| {});
            assert!(
                matches!(&refused, Err(SolveError::BadOption(m)) if m.contains("no L1 term")),
                "{algorithm}: {refused:?}"
            );
        }
    }
}
