//! The O(k log d) learners equal the literal O(d) ones given the same draws (MATH.md §8):
//! iterates and averages to 1e-9, across projections, folds of the scale and re-bases of the
//! log-domain shift, with the same attributes observed.

mod lao_common;

use lao_common::{relative_gap, synthetic};
use sparselin::data::Examples;
use sparselin::lao::{
    Aelr, Aerr, AttributeLearner, Attributes, LiteralAelr, LiteralAerr, Phi, SmoothedInsensitive,
};

/// Step both learners through `data` (twice over), comparing iterates every 50 steps.
fn run_pair(
    data: &dyn Examples,
    fast: &mut dyn AttributeLearner,
    literal: &mut dyn AttributeLearner,
) -> u64 {
    let d = data.n_features();
    let mut observed = 0;
    for t in 0..2 * data.n_rows() {
        let row = data.row(t % data.n_rows());
        let (mut a, mut b) = (Attributes::new(row, d), Attributes::new(row, d));
        fast.step(&mut a);
        literal.step(&mut b);
        assert_eq!(a.observed(), b.observed(), "step {t}");
        observed += a.observed();
        if t % 50 == 0 {
            let gap = relative_gap(&literal.current(), &fast.current());
            assert!(gap < 1e-9, "step {t}: iterates differ by {gap}");
        }
    }
    let gap = relative_gap(&literal.average().unwrap(), &fast.average().unwrap());
    assert!(gap < 1e-9, "averages differ by {gap}");
    let gap = relative_gap(&literal.current(), &fast.current());
    assert!(gap < 1e-9, "final iterates differ by {gap}");
    observed
}

#[test]
fn aerr_fast_equals_literal_with_projections_and_folds() {
    let data = synthetic(400, 60, 12, 1);
    let (k, radius, eta) = (5, 0.8, 0.02);
    let mut fast = Aerr::with_flush_ratio(60, k, radius, eta, Phi::Squared, 9, 16.0).unwrap();
    let mut literal = LiteralAerr::new(60, k, radius, eta, Phi::Squared, 9).unwrap();
    let observed = run_pair(&data, &mut fast, &mut literal);
    // Exactly k + 1 attributes per example (w never vanishes).
    assert_eq!(observed, 800 * (k as u64 + 1));
    let (projections, folds) = fast.counters();
    assert!(projections > 100, "only {projections} projections");
    assert!(folds > 10, "only {folds} folds");
}

#[test]
fn aerr_fast_equals_literal_with_the_default_flush_rule() {
    let data = synthetic(300, 1000, 30, 2);
    let mut fast = Aerr::new(1000, 8, 2.0, 0.005, Phi::Squared, 4).unwrap();
    let mut literal = LiteralAerr::new(1000, 8, 2.0, 0.005, Phi::Squared, 4).unwrap();
    run_pair(&data, &mut fast, &mut literal);
}

#[test]
fn aesvr_fast_equals_literal() {
    let data = synthetic(300, 40, 10, 3);
    let svr = Phi::Smoothed(SmoothedInsensitive {
        smoothing: 0.5,
        insensitivity: 0.1,
    });
    let mut fast = Aerr::with_flush_ratio(40, 4, 1.0, 0.01, svr, 5, 32.0).unwrap();
    let mut literal = LiteralAerr::new(40, 4, 1.0, 0.01, svr, 5).unwrap();
    let observed = run_pair(&data, &mut fast, &mut literal);
    // k per example for x̃, plus GenEst's draws: about 2 more on average, varying.
    let per_example = observed as f64 / 600.0;
    assert!(per_example > 4.5 && per_example < 12.0, "{per_example}");
    assert!(fast.counters().0 > 0, "no projection exercised");
}

#[test]
fn aelr_fast_equals_literal_with_rebases_and_flushes() {
    let data = synthetic(500, 30, 10, 4);
    let (k, radius, eta) = (4, 20.0, 0.3);
    let mut fast = Aelr::with_thresholds(30, k, radius, eta, 6, 64.0, 0.5).unwrap();
    let mut literal = LiteralAelr::new(30, k, radius, eta, 6).unwrap();
    let observed = run_pair(&data, &mut fast, &mut literal);
    // k + 1 per example, except the first (w₁ = 0: nothing to sample for φ̃).
    assert_eq!(observed, 1000 * (k as u64 + 1) - 1);
    let (rebases, flushes) = fast.counters();
    assert!(rebases > 3, "only {rebases} re-bases");
    assert!(flushes > rebases, "no flush besides re-bases");
}

#[test]
fn aelr_fast_equals_literal_with_default_thresholds() {
    let data = synthetic(300, 500, 25, 5);
    let mut fast = Aelr::new(500, 6, 5.0, 0.01, 8).unwrap();
    let mut literal = LiteralAelr::new(500, 6, 5.0, 0.01, 8).unwrap();
    run_pair(&data, &mut fast, &mut literal);
}

#[test]
fn same_seed_same_model_other_seed_other_model() {
    let data = synthetic(200, 50, 10, 6);
    let run = |seed| {
        let mut l = Aelr::new(50, 3, 2.0, 0.05, seed).unwrap();
        for r in 0..data.n_rows() {
            l.step(&mut Attributes::new(data.row(r), 50));
        }
        l.average().unwrap()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}
