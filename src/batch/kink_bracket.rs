//! The exact hinge/absolute line search when the rows are spread over ranks (MATH.md §7).
//!
//! Φ'(η⁺) − target = λ(⟨w, d⟩ + η‖d‖²) + (1/m) Σ_i ℓ'_i(η⁺)(Xd)_i − target is non-decreasing
//! in η and changes slope only at the kinks η_i = (y_i − p_i)/(Xd)_i. Each rank sorts its own
//! kinks once and keeps prefix sums of their slope jumps (R_i − L_i)|(Xd)_i|, so its part of
//! the sum at any η costs one binary search. The search keeps a bracket (lo, hi) of kinks with
//! Φ'(lo⁺) < target ≤ Φ'(hi⁺) and shrinks it in rounds of two sums:
//!
//! 1. every rank posts [`PROPOSALS`] of its kinks inside the bracket, evenly spaced in its
//!    sorted order, and its count of kinks inside (one sum of p·PROPOSALS + 1 numbers);
//! 2. the slopes at every posted kink are summed (one sum of at most p·PROPOSALS numbers), and
//!    the bracket moves to the two neighbouring posted kinks around the crossing.
//!
//! A rank's kinks inside the bracket fall by a factor PROPOSALS + 1 per round (all of them go
//! once it has at most PROPOSALS + 1 left), so O(log_{PROPOSALS+1} k) rounds of O(p) numbers
//! replace gathering all k kinks. When no kink is left strictly inside, Φ' − target is the
//! line A + Hη on (lo, hi): the step is −A/H if that is at most hi, else hi itself, landing on
//! the kinks there, exactly the scan's decision on one process.

use rayon::prelude::*;

use super::line_search::{ExactStep, kink_order, slope_pair};
use super::objective::Ray;

/// Kinks each rank posts per round.
pub const PROPOSALS: usize = 7;

/// [`super::line_search::exact`] across ranks, from this rank's part of Φ'(0⁺) and its kinks
/// ahead (`super::line_search::kinks_ahead`).
pub fn search(
    ray: &Ray<'_>,
    target: f64,
    loss_slope: f64,
    mut kinks: Vec<(f64, usize)>,
) -> Option<ExactStep> {
    let reducer = ray.reducer;
    let (ranks, rank) = (reducer.size(), reducer.rank());
    kinks.par_sort_unstable_by(kink_order);
    let mut jumps = Vec::with_capacity(kinks.len());
    let mut running = 0.0;
    for &(_, i) in &kinks {
        let (left, right) = slope_pair(ray, i);
        running += (right - left) * ray.xd[i].abs();
        jumps.push(running);
    }
    // This rank's Σ ℓ'_i(η⁺)(Xd)_i.
    let local = |eta: f64| {
        let crossed = kinks.partition_point(|k| k.0 <= eta);
        loss_slope + if crossed > 0 { jumps[crossed - 1] } else { 0.0 }
    };
    let h = ray.lambda * ray.dd;
    // Φ'(η⁺) − target from the summed loss part.
    let slope =
        |eta: f64, loss: f64| ray.lambda * (ray.wd + eta * ray.dd) + loss / ray.rows - target;
    let mut start = [loss_slope];
    reducer.sum(&mut start);
    let mut lo = (0.0, slope(0.0, start[0]));
    if lo.1 >= 0.0 {
        return Some(ExactStep {
            eta: 0.0,
            landed: Vec::new(),
        });
    }
    let mut hi = f64::INFINITY;
    loop {
        let first = kinks.partition_point(|k| k.0 <= lo.0);
        let count = kinks.partition_point(|k| k.0 < hi) - first;
        let mut posted = vec![0.0; ranks * PROPOSALS + 1];
        if count > 0 {
            for (j, slot) in posted[rank * PROPOSALS..(rank + 1) * PROPOSALS]
                .iter_mut()
                .enumerate()
            {
                *slot = kinks[first + (j + 1) * count / (PROPOSALS + 1)].0;
            }
        }
        posted[ranks * PROPOSALS] = count as f64;
        reducer.sum(&mut posted);
        if posted[ranks * PROPOSALS] == 0.0 {
            break;
        }
        // Kinks are > lo ≥ 0, so an empty slot (0) is no proposal.
        let mut candidates: Vec<f64> = posted[..ranks * PROPOSALS]
            .iter()
            .copied()
            .filter(|&eta| eta > 0.0)
            .collect();
        candidates.sort_unstable_by(f64::total_cmp);
        candidates.dedup();
        let mut sums: Vec<f64> = candidates.iter().map(|&eta| local(eta)).collect();
        reducer.sum(&mut sums);
        for (&eta, &loss) in candidates.iter().zip(&sums) {
            let value = slope(eta, loss);
            if value >= 0.0 {
                hi = eta;
                break;
            }
            lo = (eta, value);
        }
    }
    // Φ'(η⁺) − target = a + hη on (lo, hi).
    let a = lo.1 - h * lo.0;
    if hi.is_finite() && a + h * hi < 0.0 {
        let landed = kinks
            .iter()
            .filter(|k| k.0 == hi)
            .map(|&(_, i)| i)
            .collect();
        return Some(ExactStep { eta: hi, landed });
    }
    (h > 0.0).then(|| ExactStep {
        eta: -a / h,
        landed: Vec::new(),
    })
}
