//! The two solvers of an objective with an L1 term, OWL-QN (`lbfgs`) and coordinate descent
//! (`cd`), against the optimality conditions, their duality gaps against the optimum, and
//! each other.

use std::sync::Arc;

use super::objective::tests::random_matrix;
use super::{Algorithm, Objective, Options, Progress, Solution, SolveError, Stop, solve};
use crate::data::column_major::ColumnMajor;
use crate::data::{CsrMatrix, Examples};
use crate::dist::threads;
use crate::loss::Loss;

const L1_SOLVERS: [Algorithm; 2] = [Algorithm::Lbfgs, Algorithm::Cd];

fn data() -> CsrMatrix {
    random_matrix(300, 40, 11)
}

/// The data a loss is tested on: [`data`], its ±1 labels made counts 0 and 2 for the Poisson
/// loss, which has no negative label.
fn data_for(loss: Loss) -> CsrMatrix {
    let x = data();
    if loss != Loss::Poisson {
        return x;
    }
    let counts = x.labels().iter().map(|y| y + 1.0).collect();
    let (offsets, indices) = (x.offsets().to_vec(), x.indices().to_vec());
    CsrMatrix::new(counts, offsets, indices, x.values().clone(), x.n_features()).unwrap()
}

/// Solve with `algorithm` to `tol`: the solution, ∇ of the smooth part at it, and every
/// iteration's (J, gap).
fn solve_l1(
    algorithm: Algorithm,
    (loss, lambda, l1): (Loss, f64, f64),
    options: Options,
) -> (Solution, Vec<f64>, Vec<(f64, f64)>) {
    let x = data_for(loss);
    let objective = Objective::new(&x, loss, lambda, true).with_l1(l1);
    let mut seen = Vec::new();
    let solution = solve(algorithm, &objective, &options, &mut |p: &Progress<'_>| {
        seen.push((p.objective, p.gap));
    })
    .unwrap();
    let p = objective.product(&solution.w);
    let gradient = objective.gradient(&solution.w, &p).unwrap();
    (solution, gradient, seen)
}

fn to(tol: f64) -> Options {
    Options {
        tol,
        ..Options::default()
    }
}

/// At the returned w the optimality conditions of the L1 problem hold: ∇_j = −λ₁·sign(w_j)
/// where w_j ≠ 0, |∇_j| ≤ λ₁ where w_j = 0 — and some weights are exactly 0.
#[test]
fn the_solution_meets_the_l1_optimality_conditions() {
    for algorithm in L1_SOLVERS {
        for (loss, lambda, l1) in [
            (Loss::Log, 0.0, 0.02),
            (Loss::Log, 1e-3, 0.01),
            (Loss::Squared, 0.0, 0.05),
            (Loss::SquaredHinge, 1e-4, 0.03),
            (Loss::SmoothHinge, 1e-4, 0.02),
            (Loss::ModifiedHuber, 1e-4, 0.02),
            (Loss::Huber(0.5), 1e-4, 0.02),
            (Loss::Poisson, 1e-4, 0.02),
        ] {
            let (solution, gradient, seen) = solve_l1(algorithm, (loss, lambda, l1), to(1e-10));
            let what = format!("{algorithm} {loss} λ={lambda}");
            assert_eq!(solution.stop, Stop::Converged, "{what}");
            let gap = seen.last().unwrap().1;
            assert!(gap <= 1e-10 * solution.objective, "{what}: gap {gap:e}");
            let zeros = solution.w.iter().filter(|w| **w == 0.0).count();
            assert!(
                zeros >= 3 && zeros < solution.w.len(),
                "{what}: {zeros} zeros"
            );
            for (j, (&w, &g)) in solution.w.iter().zip(&gradient).enumerate() {
                if w == 0.0 {
                    assert!(g.abs() <= l1 * (1.0 + 1e-6), "{what} j={j}: |{g}| > λ₁");
                } else {
                    let residual = g + l1 * w.signum();
                    assert!(residual.abs() <= 1e-4 * l1, "{what} j={j}: {residual:e}");
                }
            }
        }
    }
}

/// The gap bounds J(w) − J* from above at every iterate (J* from a run to 1e-11), and falls
/// to it.
#[test]
fn the_duality_gap_bounds_the_suboptimality() {
    let problem = (Loss::Log, 0.0, 0.02);
    let (best, _, _) = solve_l1(Algorithm::Lbfgs, problem, to(1e-11));
    for algorithm in L1_SOLVERS {
        let (_, _, seen) = solve_l1(algorithm, problem, to(1e-6));
        assert!(seen.len() >= 3, "{algorithm}: {seen:?}");
        for &(value, gap) in &seen {
            assert!(
                value - best.objective <= gap * (1.0 + 1e-9) + 1e-15,
                "{algorithm}: {value} {gap:e}"
            );
        }
        assert!(
            seen.first().unwrap().1 > 1e-2 * best.objective,
            "{algorithm}"
        );
    }
}

/// Coordinate descent and L-BFGS agree on the L2-only optimum (no L1 term: every coordinate
/// stays in the model), and started at its own solution coordinate descent certifies it at
/// once.
#[test]
fn cd_agrees_with_lbfgs_without_an_l1_term_and_certifies_its_own_solution() {
    for loss in [
        Loss::Log,
        Loss::Squared,
        Loss::SquaredHinge,
        Loss::SmoothHinge,
        Loss::Poisson,
    ] {
        let problem = (loss, 1e-2, 0.0);
        let (cd, _, _) = solve_l1(Algorithm::Cd, problem, to(1e-12));
        let (lbfgs, _, _) = solve_l1(Algorithm::Lbfgs, problem, to(1e-12));
        let error = (cd.objective - lbfgs.objective) / lbfgs.objective;
        assert!(error.abs() <= 1e-10, "{loss}: {error:e}");
        let again = Options {
            w0: Some(cd.w.clone()),
            ..to(1e-9)
        };
        let (restarted, _, seen) = solve_l1(Algorithm::Cd, problem, again);
        assert_eq!(restarted.iterations, 0, "{loss}: {seen:?}");
        assert_eq!(restarted.stop, Stop::Converged);
    }
}

/// Coordinate descent takes a smooth loss and one process.
#[test]
fn cd_refuses_piecewise_linear_losses_and_ranks() {
    let x = data();
    for loss in [Loss::Hinge, Loss::Absolute, Loss::Quantile(0.3)] {
        let objective = Objective::new(&x, loss, 1e-2, true).with_l1(1e-3);
        let refused = solve(Algorithm::Cd, &objective, &Options::default(), &mut |_| {});
        assert!(
            matches!(refused, Err(SolveError::WrongLoss { .. })),
            "{loss}"
        );
    }
    let results = threads::run(2, |reducer| {
        let objective = Objective::distributed(&x, Loss::Log, 1e-2, true, reducer);
        solve(Algorithm::Cd, &objective, &Options::default(), &mut |_| {})
            .map(|_| ())
            .unwrap_err()
            .to_string()
    });
    assert!(
        results.iter().all(|r| r.contains("one process")),
        "{results:?}"
    );
}

/// A column-major copy given to cd is read as built, the same model bit for bit, and one of
/// another shape is refused.
#[test]
fn cd_reads_a_shared_column_major_copy_of_the_same_shape_only() {
    let x = data();
    let objective = Objective::new(&x, Loss::Log, 1e-3, true).with_l1(1e-3);
    let own = solve(Algorithm::Cd, &objective, &to(1e-8), &mut |_| {}).unwrap();
    let shared = Options {
        columns: Some(Arc::new(ColumnMajor::of(&x).unwrap())),
        ..to(1e-8)
    };
    let given = solve(Algorithm::Cd, &objective, &shared, &mut |_| {}).unwrap();
    assert_eq!((own.w, own.iterations), (given.w, given.iterations));
    let other = random_matrix(300, 41, 11);
    let mismatched = Options {
        columns: Some(Arc::new(ColumnMajor::of(&other).unwrap())),
        ..to(1e-8)
    };
    let refused = solve(Algorithm::Cd, &objective, &mismatched, &mut |_| {}).unwrap_err();
    assert!(
        matches!(&refused, SolveError::BadOption(m) if m.contains("41 columns")),
        "{refused}"
    );
}
