//! The solvers and the exact line search across ranks (threads standing in for processes,
//! [`crate::dist::threads`]) against the same computation on one process.

use std::ops::Range;

use super::line_search;
use super::objective::tests::{planted, random_matrix, uniforms};
use super::objective::{Objective, Ray};
use super::{Algorithm, Options, solve};
use crate::data::{CsrMatrix, Examples, Row};
use crate::dist::{Reducer, threads};
use crate::loss::{ClassWeights, Loss, WeightedLoss};

/// Rows `rows` of a matrix: one rank's share.
struct Part<'a> {
    x: &'a CsrMatrix,
    rows: Range<usize>,
}

impl Examples for Part<'_> {
    fn n_rows(&self) -> usize {
        self.rows.len()
    }

    fn n_features(&self) -> usize {
        self.x.n_features()
    }

    fn row(&self, i: usize) -> Row<'_> {
        assert!(i < self.rows.len());
        self.x.row(self.rows.start + i)
    }

    fn nnz(&self) -> u64 {
        self.rows.clone().map(|i| self.x.row(i).nnz() as u64).sum()
    }

    type Rows<'b>
        = &'b Self
    where
        Self: 'b;

    fn rows(&self) -> &Self {
        self
    }
}

/// Rank `rank`'s rows when `m` rows are cut into `ranks` uneven contiguous parts (the last
/// rank gets the most).
fn share(m: usize, rank: usize, ranks: usize) -> Range<usize> {
    let cut = |r: usize| m * r * r / (ranks * ranks);
    cut(rank)..cut(rank + 1)
}

#[test]
fn exact_search_across_ranks_lands_where_the_scan_lands() {
    let mut next = uniforms(11);
    let mut landings = 0;
    for case in 0..200 {
        let m = 3 + case % 150;
        let weighted = WeightedLoss::new(Loss::Hinge, ClassWeights::new(0.5, 4.0).unwrap());
        let losses = [
            Loss::Hinge.into(),
            Loss::Absolute.into(),
            weighted.unwrap(),
            Loss::Quantile(0.25).into(),
        ];
        let loss = losses[case / 3 % 4];
        let y: Vec<f64> = (0..m)
            .map(|_| if next() < 0.5 { 1.0 } else { -1.0 })
            .collect();
        // Coarse grids make kinks coincide (across ranks too) and steps land on them.
        let p: Vec<f64> = (0..m).map(|_| (next() * 8.0).floor() / 2.0 - 2.0).collect();
        let xd: Vec<f64> = (0..m).map(|_| (next() * 6.0).floor() - 3.0).collect();
        let lambda = [1e-6, 1e-2, 1.0][case % 3];
        let (ww, wd, dd) = (1.0 + next(), next() - 0.5, 0.5 + next());
        let target = if case % 5 == 0 { -0.1 } else { 0.0 };
        // Every other case with sample weights, a few of them 0.
        let s: Vec<f64> = (0..m).map(|_| (next() * 4.0).floor() * 0.75).collect();
        let weighted_rows = case % 2 == 1;
        let ray = |rows: Range<usize>, reducer: &dyn Reducer| {
            let ray = Ray {
                p: &p[rows.clone()],
                xd: &xd[rows.clone()],
                targets: &y[rows.clone()],
                sample_weights: weighted_rows.then(|| &s[rows.clone()]),
                loss,
                lambda,
                rows: m as f64,
                reducer,
                ww,
                wd,
                dd,
            };
            let step = line_search::exact(&ray, target);
            step.map(|s| {
                let landed: Vec<usize> = s.landed.iter().map(|i| i + rows.start).collect();
                (s.eta, landed)
            })
        };
        let single = ray(0..m, &crate::dist::Local);
        for ranks in [1, 2, 3, 4] {
            let parts = threads::run(ranks, |r| ray(share(m, r.rank(), ranks), r));
            let eta = parts[0].as_ref().map(|s| s.0);
            assert!(parts.iter().all(|s| s.as_ref().map(|s| s.0) == eta));
            let mut landed: Vec<usize> = parts.into_iter().flatten().flat_map(|s| s.1).collect();
            landed.sort_unstable();
            match (&single, eta) {
                (None, None) => {}
                (Some((want, want_landed)), Some(got)) => {
                    assert!(
                        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                        "case {case}, {ranks} ranks: η {got} vs {want}"
                    );
                    let mut want_landed = want_landed.clone();
                    want_landed.sort_unstable();
                    assert_eq!(landed, want_landed, "case {case}, {ranks} ranks");
                    landings += usize::from(!landed.is_empty());
                }
                (want, got) => panic!("case {case}: {want:?} vs {got:?}"),
            }
        }
    }
    assert!(landings > 50, "only {landings} steps landed on kinks");
}

#[test]
fn solvers_across_ranks_reach_the_single_process_objective() {
    let x = planted(3000, 25, 5);
    let cases = [
        (Algorithm::Lbfgs, Loss::Log, 1e-3),
        (Algorithm::Tron, Loss::Log, 1e-3),
        (Algorithm::Newton, Loss::SquaredHinge, 1e-3),
        (Algorithm::SubLbfgs, Loss::Hinge, 1e-1),
        (Algorithm::SubLbfgs, Loss::Absolute, 1e-1),
        (Algorithm::SubLbfgs, Loss::Quantile(0.7), 1e-1),
    ];
    let options = Options {
        tol: 1e-12,
        max_iter: 500,
        ..Options::default()
    };
    for (algorithm, loss, lambda) in cases {
        let objective = Objective::new(&x, loss, lambda, true);
        let single = solve(algorithm, &objective, &options, &mut |_| {}).unwrap();
        for ranks in [2, 3] {
            let runs = threads::run(ranks, |r| {
                let part = Part {
                    x: &x,
                    rows: share(x.n_rows(), r.rank(), ranks),
                };
                let objective = Objective::distributed(&part, loss, lambda, true, r);
                solve(algorithm, &objective, &options, &mut |_| {}).unwrap()
            });
            for run in &runs {
                assert_eq!(run.w, runs[0].w, "{algorithm}: ranks disagree");
            }
            let relative = (runs[0].objective - single.objective).abs() / single.objective;
            assert!(
                relative <= 1e-10,
                "{algorithm} {loss}, {ranks} ranks: {} vs {} ({relative:e})",
                runs[0].objective,
                single.objective
            );
        }
    }
}

/// OWL-QN across ranks: its duality gap sums the conjugates over every rank's rows, so the
/// ranks stop together, on the single process's optimum (L1 alone and the elastic net).
#[test]
fn owlqn_across_ranks_reaches_the_single_process_objective() {
    let x = planted(3000, 25, 5);
    let options = Options {
        tol: crate::batch::owlqn::DEFAULT_TOL,
        ..Options::default()
    };
    for (lambda, l1) in [(0.0, 3e-3), (1e-3, 1e-3)] {
        let objective = Objective::new(&x, Loss::Log, lambda, true).with_l1(l1);
        let single = solve(Algorithm::Lbfgs, &objective, &options, &mut |_| {}).unwrap();
        assert_eq!(single.stop, crate::batch::Stop::Converged);
        for ranks in [2, 3] {
            let runs = threads::run(ranks, |r| {
                let part = Part {
                    x: &x,
                    rows: share(x.n_rows(), r.rank(), ranks),
                };
                let objective = Objective::distributed(&part, Loss::Log, lambda, true, r);
                solve(
                    Algorithm::Lbfgs,
                    &objective.with_l1(l1),
                    &options,
                    &mut |_| {},
                )
                .unwrap()
            });
            for run in &runs {
                assert_eq!(run.w, runs[0].w, "λ₁ = {l1}: ranks disagree");
                assert_eq!(run.stop, crate::batch::Stop::Converged);
            }
            let relative = (runs[0].objective - single.objective).abs() / single.objective;
            assert!(relative <= 1e-6, "λ₁ = {l1}, {ranks} ranks: {relative:e}");
        }
    }
}

#[test]
fn a_rank_without_rows_takes_part_in_every_sum() {
    let x = random_matrix(500, 10, 9);
    let objective = Objective::new(&x, Loss::Hinge, 1e-2, true);
    let options = Options::default();
    let single = solve(Algorithm::SubLbfgs, &objective, &options, &mut |_| {}).unwrap();
    let runs = threads::run(3, |r| {
        let rows = [0..0, 0..200, 200..500][r.rank()].clone();
        let part = Part { x: &x, rows };
        let objective = Objective::distributed(&part, Loss::Hinge, 1e-2, true, r);
        solve(Algorithm::SubLbfgs, &objective, &options, &mut |_| {}).unwrap()
    });
    let relative = (runs[0].objective - single.objective).abs() / single.objective;
    assert!(relative <= 1e-10, "{relative:e}");
}
