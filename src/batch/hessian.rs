//! What the Newton solvers ([`super::tron`], [`super::newton`]) share: Hessian-vector products
//! of the smooth objective, computed from the rows without storing H,
//!
//! ```text
//! H·d = λd + (1/m) Xᵀ(D·X·d),   D_ii = s_i·c_{y_i}·ℓ''(p_i, y_i),
//! ```
//!
//! over the rows of non-zero curvature alone (for the squared hinge, whose ℓ'' is the
//! generalized one, the rows inside the margin), and the diagonal preconditioner of their
//! conjugate gradients.

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
pub(super) fn precondition(r: &[f64], inverse: &[f64], z: &mut [f64]) {
    z.iter_mut()
        .zip(r.iter().zip(inverse))
        .for_each(|(z, (r, inverse))| *z = r * inverse);
}

/// The fraction of the rows with non-zero curvature: the passes' worth of work of each
/// product [`hessian_product`] makes.
pub(super) fn curved_fraction(curvatures: &[f64]) -> f64 {
    let curved = curvatures.iter().filter(|&&c| c != 0.0).count();
    curved as f64 / curvatures.len().max(1) as f64
}

/// (X·d, H·d) at the point whose curvatures are `curvatures`: H·d = λd + (1/m) Xᵀ(D·X·d),
/// X·d computed (and non-zero) only on the rows of non-zero curvature.
pub(super) fn hessian_product<E: Examples>(
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

/// Completes `xs`, the X·s that conjugate gradients summed from their products' X·d, with
/// X·s on the rows those products left out (zero curvature), where it was held at 0.
pub(super) fn complete_product<E: Examples>(
    objective: &Objective<'_, E>,
    curvatures: &[f64],
    s: &[f64],
    xs: &mut [f64],
    tracker: &mut Tracker<'_>,
) {
    if curvatures.contains(&0.0) {
        let rest = objective.product_where(s, |i| curvatures[i] == 0.0);
        dense::axpby(1.0, &rest, 1.0, xs);
        tracker.passes += 1.0 - curved_fraction(curvatures);
    }
}
