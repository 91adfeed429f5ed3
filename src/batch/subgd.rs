//! Subgradient descent, the baseline of the slides: w_{t+1} = w_t − η_t g_t with g_t ∈ ∂J(w_t)
//! (the loss's own derivative at kinks) and η_t = 1/(λt), the step for λ-strongly convex J.
//! J does not decrease monotonically, so the best iterate is kept and returned.

use sparselin_kernels::dense;

use super::objective::Objective;
use super::{Options, Progress, Solution, Tracker};
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// Run `options.max_iter` subgradient steps (or until the certificate gap ≤ tol·J).
pub fn solve<E: Examples>(
    objective: &Objective<'_, E>,
    options: &Options,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, AllocError> {
    let lambda = objective.lambda();
    let mut w = options.start(objective.dim())?;
    let mut best = (f64::INFINITY, memory::copied("weights", &w)?, f64::INFINITY);
    let mut iteration = 0;
    let stop = loop {
        let p = objective.product(&w);
        let value = objective.value(&w, &p);
        let g = objective.gradient(&w, &p)?;
        tracker.passes += 2.0;
        let gap = tracker.gap(lambda, &g);
        if value < best.0 {
            best.1.copy_from_slice(&w);
            (best.0, best.2) = (value, gap);
        }
        tracker.report(Progress::new(iteration, best.0, best.2, &best.1));
        if let Some(stop) = options.converged(iteration, best.0, best.2) {
            break stop;
        }
        iteration += 1;
        dense::axpby(-1.0 / (lambda * iteration as f64), &g, 1.0, &mut w);
    };
    Ok(Solution {
        objective: best.0,
        w: best.1,
        iterations: iteration,
        stop,
        dual: None,
    })
}
