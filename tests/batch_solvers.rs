//! Batch solvers against known optima (MATH.md §7): the slides' toy problem, and liblinear's
//! optima on real data (`../shared/data`, found through `SPARSELIN_DATA` or the usual places).

mod real_data;

use real_data::data_dir;
use sparselin::batch::{self, Algorithm, Objective, Options, Stop, Tracker, lbfgs, sublbfgs};
use sparselin::data::libsvm::{ParseOptions, ValueType, read_file};
use sparselin::data::{CsrMatrix, Examples, SampleWeighted, ValueVec};
use sparselin::loss::{ClassWeights, Loss, WeightedLoss};

fn load(name: &str, n_features: usize) -> CsrMatrix {
    let path = data_dir().join(name);
    let options = ParseOptions {
        zero_based: false,
        value_type: ValueType::F64,
        n_features: Some(n_features),
    };
    read_file(&path, options).unwrap()
}

fn solve(
    algorithm: Algorithm,
    objective: &Objective<'_, CsrMatrix>,
    options: &Options,
) -> batch::Solution {
    batch::solve(algorithm, objective, options, &mut |_| {}).unwrap()
}

/// The slides' J(w₁, w₂) = 10|w₁| + |w₂| as absolute loss on two rows (10, 0) and (0, 1) with
/// label 0, no bias and λ = 0 (so J is halved: the minimizer and the iterates are the same).
fn toy() -> CsrMatrix {
    CsrMatrix::new(
        vec![0.0, 0.0],
        vec![0, 1, 2],
        vec![0, 1],
        ValueVec::F64(vec![10.0, 1.0]),
        2,
    )
    .unwrap()
}

const TOY_STARTS: [[f64; 2]; 4] = [[0.7, 0.4], [-1.0, 0.3], [0.05, -0.9], [-0.33, -0.21]];

#[test]
fn subbfgs_solves_the_toy_problem_exactly_in_two_iterations() {
    let data = toy();
    let objective = Objective::new(&data, Loss::Absolute, 0.0, false);
    for start in TOY_STARTS {
        let options = Options {
            b0_scale: Some(1.0),
            dir_eps: 1e-12,
            first_descent: false,
            w0: Some(start.to_vec()),
            ..Options::default()
        };
        let mut trace = Vec::new();
        let mut record = |p: &batch::Progress| trace.push(p.objective);
        let solution =
            sublbfgs::solve(&objective, &options, &mut Tracker::new(&mut record)).unwrap();
        // The solver's J (from its snapped prediction cache) is exactly 0 after 2 iterations.
        assert_eq!(trace.len(), 3, "start {start:?}: {trace:?}");
        assert_eq!(trace[2], 0.0, "start {start:?}: {trace:?}");
        assert_eq!(solution.iterations, 2);
        assert_eq!(solution.stop, Stop::NoDescent);
        // And w itself is the origin up to the rounding of one step.
        let j = 10.0 * solution.w[0].abs() + solution.w[1].abs();
        assert!(j <= 1e-14, "start {start:?}: w = {:?}", solution.w);
    }
}

#[test]
fn plain_bfgs_does_not_solve_the_toy_problem_in_two_iterations() {
    let data = toy();
    let objective = Objective::new(&data, Loss::Absolute, 0.0, false);
    for start in TOY_STARTS {
        let options = Options {
            b0_scale: Some(1.0),
            max_iter: 2,
            w0: Some(start.to_vec()),
            ..Options::default()
        };
        let mut trace = Vec::new();
        let mut record = |p: &batch::Progress| trace.push(p.objective);
        let solution = lbfgs::solve(
            &objective,
            &options,
            lbfgs::Wolfe::Weak,
            &mut Tracker::new(&mut record),
        )
        .unwrap();
        assert_eq!(
            solution.iterations, 2,
            "start {start:?}: {:?}",
            solution.stop
        );
        // Halved J: 10|w₁| + |w₂| = 2J stays far from 0 (the slides: it hops between orthants).
        assert!(
            2.0 * solution.objective > 1e-3,
            "start {start:?}: {trace:?}"
        );
        let with_more = Options {
            max_iter: 50,
            ..options
        };
        let later = lbfgs::solve(
            &objective,
            &with_more,
            lbfgs::Wolfe::Weak,
            &mut Tracker::new(&mut |_| {}),
        )
        .unwrap();
        assert!(later.objective > 0.0 && later.objective < solution.objective);
    }
}

/// Optima of J = λ/2‖w‖² + (1/m)Σℓ computed from liblinear 2.4.6 models (bias regularized,
/// `-B 1`), C = 1/(λm), J evaluated from the model's w (label order handled) in double
/// precision, which is liblinear's primal (½‖w‖² + CΣℓ) divided by Cm.
/// Commands (heart_scale: m = 270, reuters_grain train: m = 1554):
///   liblinear-train -q -s 3 -c 0.37037037037037035 -B 1 -e 1e-13 heart_scale      (λ = 1e-2)
///   liblinear-train -q -s 0 -c 0.37037037037037035 -B 1 -e 1e-13 heart_scale      (λ = 1e-2)
///   liblinear-train -q -s 0 -c 3.7037037037037033 -B 1 -e 1e-13 heart_scale       (λ = 1e-3)
///   liblinear-train -q -s 3 -c 0.06435006435006435 -B 1 -e 1e-10 grain.svm        (λ = 1e-2)
///   liblinear-train -q -s 0 -c 6.435006435006435 -B 1 -e 1e-10 grain.svm          (λ = 1e-4)
/// (`-s 3` at heart_scale λ = 1e-3 stops at its iteration limit 1.3e-3 above its own dual
/// bound, so it is no reference there.)
const HEART_HINGE: (f64, f64) = (1e-2, 0.35759867266825385);
const HEART_LOG: [(f64, f64); 2] = [(1e-2, 0.37301983851666637), (1e-3, 0.3401942419458272)];
const GRAIN_HINGE: (f64, f64) = (1e-2, 0.13112418152321453);
const GRAIN_LOG: (f64, f64) = (1e-4, 0.07578954140257976);

fn relative(found: f64, optimum: f64) -> f64 {
    (found - optimum) / optimum
}

#[test]
fn sublbfgs_reaches_liblinear_hinge_optimum_on_heart_scale() {
    let data = load("heart_scale/heart_scale", 13);
    let (lambda, optimum) = HEART_HINGE;
    let objective = Objective::new(&data, Loss::Hinge, lambda, true);
    let solution = solve(Algorithm::SubLbfgs, &objective, &Options::default());
    let error = relative(solution.objective, optimum);
    assert!(
        error.abs() <= 1e-6,
        "{} vs {optimum} ({error:e}, {:?})",
        solution.objective,
        solution.stop
    );
}

#[test]
fn lbfgs_cd_and_the_newton_solvers_reach_liblinear_log_optimum_on_heart_scale() {
    let data = load("heart_scale/heart_scale", 13);
    for algorithm in [
        Algorithm::Lbfgs,
        Algorithm::Cd,
        Algorithm::Tron,
        Algorithm::Newton,
    ] {
        for (lambda, optimum) in HEART_LOG {
            let objective = Objective::new(&data, Loss::Log, lambda, true);
            let solution = solve(algorithm, &objective, &Options::default());
            let error = relative(solution.objective, optimum);
            assert!(
                error.abs() <= 1e-6,
                "{algorithm} λ = {lambda}: {} vs {optimum} ({error:e})",
                solution.objective
            );
        }
    }
}

#[test]
fn lbfgs_cd_and_the_newton_solvers_reach_liblinear_log_optimum_on_reuters_grain() {
    let data = load("reuters_grain/train.svm.gz", 27653);
    let log = Objective::new(&data, Loss::Log, GRAIN_LOG.0, true);
    for algorithm in [
        Algorithm::Lbfgs,
        Algorithm::Cd,
        Algorithm::Tron,
        Algorithm::Newton,
    ] {
        let solution = solve(algorithm, &log, &Options::default());
        let error = relative(solution.objective, GRAIN_LOG.1);
        assert!(
            error.abs() <= 1e-6,
            "{algorithm}: {} ({error:e})",
            solution.objective
        );
    }
}

/// L2-loss support-vector regression (the squared ε-insensitive loss) on diabetes at
/// λ = 1e-3, ε = 5 against liblinear 2.3.0's `-s 11` (TRON):
///   liblinear-train -s 11 -B 1 -c 2.824858757062147 -p 5 -e 1e-10 diabetes.svm
/// its J = (λ/2)(‖w‖² + b²) + (1/m)Σ max(0, |w·x + b − y| − 5)² computed from the model in
/// double precision.
const DIABETES_L2_SVR: (f64, f64, f64) = (1e-3, 5.0, 2733.3995463787614);

/// The primal solvers, and dcd on its dual (liblinear's `-s 12`), whose lower bound J − gap
/// stays below the optimum at every report.
#[test]
fn every_solver_reaches_liblinears_l2_loss_svr_optimum_on_diabetes() {
    let data = load("diabetes/train.svm.gz", 10);
    let (lambda, epsilon, optimum) = DIABETES_L2_SVR;
    let objective = Objective::new(
        &data,
        Loss::SquaredEpsilonInsensitive(epsilon),
        lambda,
        true,
    );
    for algorithm in [
        Algorithm::Lbfgs,
        Algorithm::Tron,
        Algorithm::Newton,
        Algorithm::Cd,
        Algorithm::Dcd,
    ] {
        let mut highest_bound = f64::NEG_INFINITY;
        let solution = batch::solve(algorithm, &objective, &Options::default(), &mut |p| {
            highest_bound = highest_bound.max(p.objective - p.gap)
        })
        .unwrap();
        assert_eq!(solution.stop, Stop::Converged, "{algorithm}");
        let error = relative(solution.objective, optimum);
        assert!(
            error.abs() <= 1e-9,
            "{algorithm}: {} vs {optimum} ({error:e})",
            solution.objective
        );
        assert!(
            highest_bound <= optimum * (1.0 + 1e-14),
            "{algorithm}: J − gap = {highest_bound} above {optimum}"
        );
    }
}

/// Huber's loss (δ = 20) on diabetes and the modified Huber loss on mnist_3v5, both at
/// λ = 1e-3, against SciPy 1.17.1's L-BFGS-B on the same J (`benches/smooth_loss_reference.py`, the
/// values in double precision, the bias regularized; its certificate ‖∇J‖²/(2λ): 4.4e-12 and
/// 1.3e-13).
const DIABETES_HUBER: (f64, f64, f64) = (1e-3, 20.0, 894.6931885958916);
const MNIST_MODIFIED_HUBER: (f64, f64) = (1e-3, 0.028148018565631164);

/// Every solver of smooth losses converges to those optima, to the default tolerance's 1e-9.
#[test]
fn the_smooth_solvers_reach_scipys_huber_and_modified_huber_optima() {
    let (lambda, delta, huber_optimum) = DIABETES_HUBER;
    let diabetes = load("diabetes/train.svm.gz", 10);
    let huber = Objective::new(&diabetes, Loss::Huber(delta), lambda, true);
    let (lambda_mnist, modified_optimum) = MNIST_MODIFIED_HUBER;
    let mnist = load("mnist_3v5/train.svm.gz", 784);
    let modified = Objective::new(&mnist, Loss::ModifiedHuber, lambda_mnist, true);
    for (objective, optimum) in [(huber, huber_optimum), (modified, modified_optimum)] {
        assert_smooth_solvers_reach(&objective, optimum, "");
    }
}

/// lbfgs, tron, newton and cd each converge on `objective` to within the default tolerance's
/// 1e-9 of `optimum` (`what` names the case in a failure).
fn assert_smooth_solvers_reach(objective: &Objective<'_, CsrMatrix>, optimum: f64, what: &str) {
    for algorithm in [
        Algorithm::Lbfgs,
        Algorithm::Tron,
        Algorithm::Newton,
        Algorithm::Cd,
    ] {
        let solution = solve(algorithm, objective, &Options::default());
        assert_eq!(solution.stop, Stop::Converged, "{algorithm}{what}");
        let error = relative(solution.objective, optimum);
        assert!(
            error.abs() <= 1e-9,
            "{algorithm}{what}: {} vs {optimum} ({error:e})",
            solution.objective
        );
    }
}

/// Poisson regression on diabetes (disease progression, 25 to 346) at λ = 1e-3 and 1e-6,
/// against SciPy 1.17.1's L-BFGS-B on the same J (`benches/smooth_loss_reference.py DATA
/// poisson λ`; certificates 9.3e-14 and 2.2e-14).
const DIABETES_POISSON: [(f64, f64); 2] = [(1e-3, 9.421987338686298), (1e-6, 9.337784242178767)];

/// Every solver of smooth losses reaches them, to the default tolerance's 1e-9, though the
/// loss's curvature e^p spans the labels' range (25 to 346) and grows without bound along a
/// line search's longer trials.
#[test]
fn the_smooth_solvers_reach_scipys_poisson_optima() {
    let diabetes = load("diabetes/train.svm.gz", 10);
    for (lambda, optimum) in DIABETES_POISSON {
        let objective = Objective::new(&diabetes, Loss::Poisson, lambda, true);
        assert_smooth_solvers_reach(&objective, optimum, &format!(" λ={lambda}"));
    }
}

/// At λ = 1e-9 every diabetes label lies beyond δ = 20 of 0, so at w = 0 no row has
/// curvature and the Newton step is −∇J/λ: newton's line search must shorten it by far more
/// than liblinear's 20 halvings (with those it stopped at w = 0, having trained nothing).
/// SciPy's optimum there: 672.5943850768844 (certificate 8e-11).
#[test]
fn newton_steps_from_zero_where_huber_s_loss_has_no_curvature() {
    let data = load("diabetes/train.svm.gz", 10);
    let objective = Objective::new(&data, Loss::Huber(20.0), 1e-9, true);
    let solution = solve(Algorithm::Newton, &objective, &Options::default());
    assert_eq!(solution.stop, Stop::Converged);
    let error = relative(solution.objective, 672.5943850768844);
    assert!(error.abs() <= 1e-9, "{} ({error:e})", solution.objective);
}

/// Quantile (pinball) regression on diabetes at τ = 0.3 against the exact optimum of the
/// unregularized problem, a linear program: scikit-learn 1.9.1 `QuantileRegressor(quantile=0.3,
/// alpha=0, solver="highs")` on the train split gives a mean pinball loss of
/// 17.974708320049537 at ‖(w, b)‖² = 1062502.10. At λ = 1e-10 the regularized optimum J* is
/// then at most that loss plus λ/2·‖(w, b)‖² (5.3e-5 more), and the pinball part of any w is
/// at least the LP's loss: subLBFGS must land between the two (5.3e-5 is 3e-6 of J), up to
/// 1e-10 of J above: at ‖w‖² ≈ 10⁶ and λ = 1e-10 it stops on rounding (no descent), where
/// the last bits of the sums over rows put it (1.4e-11 above the ceiling once the sums were
/// taken in the kernels' partial sums, below it before).
#[test]
fn sublbfgs_reaches_the_linear_programming_optimum_of_quantile_regression() {
    const LP_LOSS: f64 = 17.974708320049537;
    const LP_NORM2: f64 = 1062502.1037062905;
    let lambda = 1e-10;
    let data = load("diabetes/train.svm.gz", 10);
    let objective = Objective::new(&data, Loss::Quantile(0.3), lambda, true);
    let options = Options {
        max_iter: 500,
        tol: 0.0,
        ..Options::default()
    };
    let ceiling = LP_LOSS + 0.5 * lambda * LP_NORM2;
    let pinball =
        |s: &batch::Solution| s.objective - 0.5 * lambda * s.w.iter().map(|w| w * w).sum::<f64>();
    let solution = solve(Algorithm::SubLbfgs, &objective, &options);
    assert!(
        solution.objective <= ceiling * (1.0 + 1e-10),
        "{} above {ceiling} ({:?})",
        solution.objective,
        solution.stop
    );
    assert!(
        pinball(&solution) >= LP_LOSS * (1.0 - 1e-9),
        "{}",
        pinball(&solution)
    );
}

/// Dual coordinate descent on the regression losses with a kink (absolute, quantile): on
/// diabetes at λ = 1e-4 it converges with a duality gap below 1e-9 of J, its J agrees with
/// subLBFGS's to 1e-9, and its certified lower bound J − gap is below subLBFGS's J (weak
/// duality, which a wrong sign or box in the dual would break).
#[test]
fn dcd_certifies_the_optimum_of_absolute_and_quantile_regression() {
    let data = load("diabetes/train.svm.gz", 10);
    for loss in [Loss::Absolute, Loss::Quantile(0.3), Loss::Quantile(0.9)] {
        let objective = Objective::new(&data, loss, 1e-4, true);
        let tight = Options {
            tol: 1e-10,
            max_iter: 5000,
            ..Options::default()
        };
        let mut gaps = Vec::new();
        let mut record = |p: &batch::Progress| gaps.push((p.objective, p.gap));
        let dual = batch::solve(Algorithm::Dcd, &objective, &tight, &mut record).unwrap();
        assert_eq!(dual.stop, Stop::Converged, "{loss}");
        let (value, gap) = *gaps.last().unwrap();
        assert_eq!(value, dual.objective);
        assert!(gap <= 1e-9 * value, "{loss}: gap {gap:e}");
        let primal = solve(Algorithm::SubLbfgs, &objective, &tight);
        assert!(
            relative(dual.objective, primal.objective).abs() <= 1e-9,
            "{loss}: dcd {} vs sublbfgs {}",
            dual.objective,
            primal.objective
        );
        for (value, gap) in gaps {
            assert!(value - gap <= primal.objective * (1.0 + 1e-12), "{loss}");
        }
    }
}

/// Dual coordinate descent on the ε-insensitive loss (support-vector regression) reaches
/// liblinear's optimum: on diabetes at λ = 1e-4 and ε = 5, liblinear 2.4.6
/// `liblinear-train -q -s 13 -c 28.248587570621467 -p 5 -B 1 -e 1e-10` gives a model whose J
/// (computed in double precision from its w and bias, as the hinge optima above) is
/// 53.44904159123651.
#[test]
fn dcd_reaches_liblinear_svr_optimum_on_diabetes() {
    let data = load("diabetes/train.svm.gz", 10);
    let objective = Objective::new(&data, Loss::EpsilonInsensitive(5.0), 1e-4, true);
    let options = Options {
        tol: 1e-10,
        ..Options::default()
    };
    let solution = solve(Algorithm::Dcd, &objective, &options);
    assert_eq!(solution.stop, Stop::Converged);
    let error = relative(solution.objective, 53.44904159123651);
    assert!(error.abs() <= 1e-9, "{} ({error:e})", solution.objective);
}

/// subLBFGS slows down near the optimum when many examples sit on the margin (MATH.md §7;
/// reuters_grain has ~700 support vectors): with M = 20, 1.0e-4 above liblinear's optimum after
/// 100 iterations, 3.5e-5 after 200 (M = 10: 1.4e-4, 9e-5). This pins that behaviour down.
#[test]
fn sublbfgs_approaches_liblinear_hinge_optimum_on_reuters_grain() {
    let data = load("reuters_grain/train.svm.gz", 27653);
    let hinge = Objective::new(&data, Loss::Hinge, GRAIN_HINGE.0, true);
    let options = Options {
        max_iter: 100,
        ..Options::default()
    };
    let solution = solve(Algorithm::SubLbfgs, &hinge, &options);
    let error = relative(solution.objective, GRAIN_HINGE.1);
    assert!(
        (-1e-9..2e-4).contains(&error),
        "hinge: {} ({error:e}, {:?})",
        solution.objective,
        solution.stop
    );
}

/// digits_3v5 (64 features) is linearly separable: at these λ the optimum is the hard-margin
/// w, so J*/λ is the same at every λ. At λ = 1e-6 subLBFGS used to stop as stalled 5.5% above
/// it, after a single step that the next kink cut short (η ~ 1e-13); it now goes on. And the
/// J it reports is that of X·w computed afresh, not of its snapped prediction cache (which
/// differs visibly where J is this small).
///
/// Where it ends depends on the kernel path's summation order: at λ = 1e-6 it stops for want
/// of a descent direction (the method's limit on separable data at tiny λ, see
/// `Stop::NoDescent`) 4e-9 above J* on AVX2, 1.8e-3 on the scalar path and 8e-8 on AVX-512
/// (seen on an Intel Xeon; AVX-512 stopped 1.8e-2 above while its dot summed a row's last
/// len mod 8 entries in the low lanes of a vector, not the high ones); the bound of 2.5e-2
/// allows for such a path and is still twice below the stalled stop. With a stall patience of
/// 1 the scalar and AVX2 paths stop as stalled (the assertion below); on AVX-512 that rounding
/// path never stalls. J* is
/// dual coordinate descent's at λ = 1e-3, certified by its gap: subLBFGS's own stop there sat
/// 4e-6 above it on AVX-512, below what it then reached at 1e-6.
#[test]
fn sublbfgs_goes_on_past_steps_a_kink_cuts_short_and_reports_the_true_objective() {
    let data = load("digits_3v5/train.svm.gz", 64);
    let options = Options {
        memory: 50,
        ..Options::default()
    };
    let hard_margin = |lambda: f64| {
        let objective = Objective::new(&data, Loss::Hinge, lambda, true);
        let solution = solve(Algorithm::SubLbfgs, &objective, &options);
        let fresh = objective.value(&solution.w, &objective.product(&solution.w));
        assert_eq!(solution.objective, fresh, "λ = {lambda}");
        (solution.objective / lambda, solution.stop)
    };
    let objective = Objective::new(&data, Loss::Hinge, 1e-3, true);
    let tight = Options {
        tol: 1e-10,
        max_iter: 100_000,
        ..Options::default()
    };
    let mut gap = f64::INFINITY;
    let dual = batch::solve(
        Algorithm::Dcd,
        &objective,
        &tight,
        &mut |p: &batch::Progress| gap = p.gap,
    )
    .unwrap();
    assert!(gap <= 1e-9 * dual.objective, "dcd's gap {gap:e}");
    let reference = dual.objective / 1e-3;
    // The reported J is still checked at every λ, this one included.
    hard_margin(1e-3);
    hard_margin(1e-8);
    let (small, stop) = hard_margin(1e-6);
    assert_ne!(stop, Stop::Stalled);
    let error = relative(small, reference);
    assert!(
        (-1e-6..2.5e-2).contains(&error),
        "{small} vs {reference} ({error:e}, {stop:?})"
    );
}

#[test]
fn sublbfgs_leaves_zero_where_the_inverse_of_lambda_squared_overflows() {
    // At λ = 1e-200, B₀ = I/λ makes the first direction's ‖p‖² overflow: the line search used
    // to fail there and leave w = 0, J = 1. The data are separable: J can fall to rounding.
    let data = load("digits_3v5/train.svm.gz", 64);
    let objective = Objective::new(&data, Loss::Hinge, 1e-200, true);
    let solution = solve(Algorithm::SubLbfgs, &objective, &Options::default());
    assert_ne!(solution.stop, Stop::LineSearchFailed);
    assert!(
        solution.iterations > 0 && solution.objective < 1e-12,
        "{} after {} iterations ({:?})",
        solution.objective,
        solution.iterations,
        solution.stop
    );
}

#[test]
fn baselines_descend_toward_the_optimum() {
    let data = load("heart_scale/heart_scale", 13);
    let (lambda, optimum) = HEART_HINGE;
    let objective = Objective::new(&data, Loss::Hinge, lambda, true);
    let options = Options {
        max_iter: 200,
        ..Options::default()
    };
    for algorithm in [Algorithm::SubGd, Algorithm::Bfgs] {
        let solution = solve(algorithm, &objective, &options);
        let error = relative(solution.objective, optimum);
        assert!((0.0..0.05).contains(&error), "{algorithm}: {error:e}");
    }
    assert!(batch::solve(Algorithm::Lbfgs, &objective, &options, &mut |_| {}).is_err());
}

/// Dual coordinate descent on reuters_grain (hinge, λ = 1e-2), where subLBFGS is still 1e-4
/// above after 100 iterations: it converges to the certified tolerance, and its duality gap
/// never understates the distance to the optimum (J − gap ≤ J* at every report).
#[test]
fn dcd_certifies_liblinear_hinge_optimum_on_reuters_grain() {
    let data = load("reuters_grain/train.svm.gz", 27653);
    let (lambda, optimum) = GRAIN_HINGE;
    let objective = Objective::new(&data, Loss::Hinge, lambda, true);
    let mut reports = Vec::new();
    let solution = batch::solve(Algorithm::Dcd, &objective, &Options::default(), &mut |p| {
        reports.push((p.objective, p.gap))
    })
    .unwrap();
    assert_eq!(solution.stop, Stop::Converged);
    let error = relative(solution.objective, optimum);
    assert!(error.abs() <= 1e-8, "{} ({error:e})", solution.objective);
    assert!(reports.len() > 3, "{reports:?}");
    let (last_value, last_gap) = *reports.last().unwrap();
    assert_eq!(last_value, solution.objective);
    assert!(last_gap <= 1e-9 * last_value);
    for &(value, gap) in &reports {
        assert!(gap >= 0.0);
        assert!(
            value - gap <= solution.objective * (1.0 + 1e-12),
            "{value} − {gap}"
        );
    }
}

/// On heart_scale (13 features, no margin-dominated optimum) dual coordinate descent meets
/// liblinear's hinge optimum too, and for squared hinge L-BFGS's.
#[test]
fn dcd_agrees_with_liblinear_and_lbfgs_on_heart_scale() {
    let data = load("heart_scale/heart_scale", 13);
    let (lambda, optimum) = HEART_HINGE;
    let hinge = Objective::new(&data, Loss::Hinge, lambda, true);
    let solution = solve(Algorithm::Dcd, &hinge, &Options::default());
    assert_eq!(solution.stop, Stop::Converged);
    let error = relative(solution.objective, optimum);
    assert!(error.abs() <= 1e-6, "{} ({error:e})", solution.objective);
    // With nothing left to gain but rounding (tolerance 0), it stops as stalled rather than
    // running to its iteration limit (it used to, with rows whose steps were too small to take
    // keeping the projected-gradient spread open; it now stalls at iteration 32).
    let strong = Objective::new(&data, Loss::Hinge, 1.0, true);
    let endless = Options {
        tol: 0.0,
        max_iter: 1_000_000,
        ..Options::default()
    };
    assert_eq!(solve(Algorithm::Dcd, &strong, &endless).stop, Stop::Stalled);
    for lambda in [1e-2, 1e-3] {
        let squared = Objective::new(&data, Loss::SquaredHinge, lambda, true);
        let dual = solve(Algorithm::Dcd, &squared, &Options::default());
        assert_eq!(dual.stop, Stop::Converged, "λ = {lambda}");
        let primal = solve(Algorithm::Lbfgs, &squared, &Options::default());
        let error = relative(dual.objective, primal.objective);
        assert!(
            error.abs() <= 1e-8,
            "λ = {lambda}: {} vs {} ({error:e}, {:?})",
            dual.objective,
            primal.objective,
            dual.stop
        );
    }
}

/// liblinear's optima with the classes weighted, `-w1 3 -w-1 0.5` (C_i = c_{y_i}·C), on
/// heart_scale at λ = 1e-2, J = λ/2‖w‖² + (1/m)Σ c_{y_i}ℓ_i evaluated from the model files as
/// above:
///   liblinear-train -q -s 3 -c 0.37037037037037035 -B 1 -e 1e-13 -w1 3 -w-1 0.5 heart_scale
///   liblinear-train -q -s 0 (same flags)        (log)
///   liblinear-train -q -s 1 (same flags)        (squared hinge)
const HEART_WEIGHTED: (f64, f64) = (3.0, 0.5);
const HEART_WEIGHTED_HINGE: f64 = 0.43011011320258347;
const HEART_WEIGHTED_LOG: f64 = 0.4461058993041986;
const HEART_WEIGHTED_SQUARED_HINGE: f64 = 0.4995428638588904;

#[test]
fn every_solver_reaches_liblinears_class_weighted_optima_on_heart_scale() {
    let data = load("heart_scale/heart_scale", 13);
    let (positive, negative) = HEART_WEIGHTED;
    let weights = ClassWeights::new(positive, negative).unwrap();
    let cases = [
        (Loss::Hinge, Algorithm::SubLbfgs, HEART_WEIGHTED_HINGE),
        (Loss::Hinge, Algorithm::Dcd, HEART_WEIGHTED_HINGE),
        (Loss::Log, Algorithm::Lbfgs, HEART_WEIGHTED_LOG),
        (Loss::Log, Algorithm::Cd, HEART_WEIGHTED_LOG),
        (Loss::Log, Algorithm::Tron, HEART_WEIGHTED_LOG),
        (Loss::Log, Algorithm::Newton, HEART_WEIGHTED_LOG),
        (
            Loss::SquaredHinge,
            Algorithm::Lbfgs,
            HEART_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Tron,
            HEART_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Newton,
            HEART_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Dcd,
            HEART_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Cd,
            HEART_WEIGHTED_SQUARED_HINGE,
        ),
    ];
    for (loss, algorithm, optimum) in cases {
        let weighted = WeightedLoss::new(loss, weights).unwrap();
        let objective = Objective::new(&data, weighted, 1e-2, true);
        let solution = solve(algorithm, &objective, &Options::default());
        let error = relative(solution.objective, optimum);
        assert!(
            error.abs() <= 1e-6,
            "{algorithm} {loss}: {} vs {optimum} ({error:e}, {:?})",
            solution.objective,
            solution.stop
        );
        // Unweighted, the same solver lands elsewhere: the weights are not ignored.
        let plain = solve(
            algorithm,
            &Objective::new(&data, loss, 1e-2, true),
            &Options::default(),
        );
        assert!(
            relative(plain.objective, optimum).abs() > 1e-2,
            "{algorithm} {loss}"
        );
    }
}

/// An integer class weight is that many copies of the class's rows, with λ scaled by m/m' to
/// keep λm (MATH.md §1 with C_i = c_{y_i}C): the weighted optimum is the copies' optimum, and
/// the objectives differ by the factor m/m'.
#[test]
fn an_integer_class_weight_is_that_many_copies_of_its_rows() {
    let data = load("heart_scale/heart_scale", 13);
    let copies = 3;
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for i in 0..data.n_rows() {
        let row = data.row(i);
        let times = if row.label > 0.0 { copies } else { 1 };
        for _ in 0..times {
            labels.push(row.label);
            indices.extend_from_slice(row.indices.as_slice());
            values.extend((0..row.nnz()).map(|k| row.values.get(k)));
            offsets.push(indices.len() as u64);
        }
    }
    let m_copied = labels.len();
    let copied = CsrMatrix::new(
        labels,
        offsets,
        indices,
        ValueVec::F64(values),
        data.n_features(),
    )
    .unwrap();
    let (m, lambda) = (data.n_rows() as f64, 1e-2);
    let weights = ClassWeights::new(copies as f64, 1.0).unwrap();
    let tight = Options {
        tol: 1e-14,
        ..Options::default()
    };
    for (loss, algorithm) in [
        (Loss::Log, Algorithm::Lbfgs),
        (Loss::SquaredHinge, Algorithm::Dcd),
        (Loss::Hinge, Algorithm::Dcd),
    ] {
        let weighted = WeightedLoss::new(loss, weights).unwrap();
        let a = solve(
            algorithm,
            &Objective::new(&data, weighted, lambda, true),
            &tight,
        );
        let scaled = lambda * m / m_copied as f64;
        let b = solve(
            algorithm,
            &Objective::new(&copied, loss, scaled, true),
            &tight,
        );
        let expected = a.objective * m / m_copied as f64;
        let error = relative(b.objective, expected);
        assert!(error.abs() <= 1e-9, "{loss}: {} vs {expected}", b.objective);
        if loss != Loss::Hinge {
            // Strictly convex: one minimizer.
            let norm = a.w.iter().fold(0.0f64, |s, w| s.max(w.abs()));
            let apart =
                a.w.iter()
                    .zip(&b.w)
                    .fold(0.0f64, |d, (x, y)| d.max((x - y).abs()));
            assert!(apart <= 1e-5 * norm, "{loss}: minimizers {apart:e} apart");
        }
    }
}

/// heart_scale's rows with integer sample weights 0–3 (row i weighs (7i mod 9) mod 4), and
/// the same rows each copied as many times as it weighs (none for weight 0).
fn heart_weighted_and_copied() -> (CsrMatrix, Vec<f64>, CsrMatrix) {
    let data = load("heart_scale/heart_scale", 13);
    let weights: Vec<f64> = (0..data.n_rows())
        .map(|i| ((7 * i % 9) % 4) as f64)
        .collect();
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for (i, &s) in weights.iter().enumerate() {
        let row = data.row(i);
        for _ in 0..s as usize {
            labels.push(row.label);
            indices.extend_from_slice(row.indices.as_slice());
            values.extend((0..row.nnz()).map(|k| row.values.get(k)));
            offsets.push(indices.len() as u64);
        }
    }
    let n = data.n_features();
    let copied = CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), n).unwrap();
    (data, weights, copied)
}

/// An integer sample weight is that many copies of its row, and weight 0 no row, with λ
/// scaled by m/m' to keep λm: every solver's weighted optimum is the copies' optimum (the
/// objectives differ by the factor m/m'), with class weights on top too, and for the
/// regression losses dcd's two-sided boxes (the ±1 labels read as values).
#[test]
fn integer_sample_weights_are_copies_of_their_rows_for_every_solver() {
    let (data, weights, copied) = heart_weighted_and_copied();
    assert!(weights.contains(&0.0) && weights.contains(&3.0));
    let weighted_rows = SampleWeighted::new(&data, &weights).unwrap();
    let (m, m_copied, lambda) = (data.n_rows() as f64, copied.n_rows() as f64, 1e-2);
    let tight = Options {
        tol: 1e-14,
        ..Options::default()
    };
    let (classes, unit) = (ClassWeights::new(2.0, 0.5).unwrap(), ClassWeights::UNIT);
    let cases = [
        (Loss::Log, Algorithm::Lbfgs, ClassWeights::UNIT, 1e-9),
        (Loss::Log, Algorithm::Cd, classes, 1e-9),
        (Loss::SquaredHinge, Algorithm::Lbfgs, classes, 1e-9),
        (Loss::SquaredHinge, Algorithm::Cd, ClassWeights::UNIT, 1e-9),
        (Loss::SquaredHinge, Algorithm::Dcd, ClassWeights::UNIT, 1e-9),
        (Loss::Hinge, Algorithm::Dcd, classes, 1e-9),
        (Loss::Hinge, Algorithm::SubLbfgs, ClassWeights::UNIT, 1e-6),
        (Loss::Hinge, Algorithm::SubLbfgs, classes, 1e-6),
        (Loss::Absolute, Algorithm::Dcd, unit, 1e-9),
        (Loss::Quantile(0.3), Algorithm::Dcd, unit, 1e-9),
        (Loss::EpsilonInsensitive(0.2), Algorithm::Dcd, unit, 1e-9),
        (Loss::Quantile(0.3), Algorithm::SubLbfgs, unit, 1e-6),
    ];
    for (loss, algorithm, class_weights, accuracy) in cases {
        let weighted = WeightedLoss::new(loss, class_weights).unwrap();
        let a = batch::solve(
            algorithm,
            &Objective::new(&weighted_rows, weighted, lambda, true),
            &tight,
            &mut |_| {},
        )
        .unwrap();
        let scaled = lambda * m / m_copied;
        let b = solve(
            algorithm,
            &Objective::new(&copied, weighted, scaled, true),
            &tight,
        );
        let expected = b.objective * m_copied / m;
        let error = relative(a.objective, expected);
        assert!(
            error.abs() <= accuracy,
            "{algorithm} {loss}: {} vs {expected} ({error:e})",
            a.objective
        );
        if loss != Loss::Hinge {
            // Strictly convex: one minimizer.
            let norm = b.w.iter().fold(0.0f64, |s, w| s.max(w.abs()));
            let apart =
                a.w.iter()
                    .zip(&b.w)
                    .fold(0.0f64, |d, (x, y)| d.max((x - y).abs()));
            assert!(apart <= 1e-5 * norm, "{algorithm} {loss}: {apart:e} apart");
        }
        // Unweighted, the same solver lands elsewhere: the weights are not ignored.
        let plain = solve(
            algorithm,
            &Objective::new(&data, weighted, lambda, true),
            &tight,
        );
        let moved = relative(plain.objective, a.objective);
        assert!(moved.abs() > 1e-3, "{algorithm} {loss}: {moved:e}");
    }
}

/// scikit-learn 1.9.1's optima on heart_scale (λ = 1e-2, C = 1/(λm), intercept_scaling 1 so
/// that the bias is regularized as here) with `sample_weight` s_i = ((7i mod 9) mod 4)·0.75 +
/// 0.25·(i mod 2): `LinearSVC(loss="hinge", tol=1e-9)`, `LinearSVC(loss="squared_hinge",
/// tol=1e-12)` and `LogisticRegression(solver="liblinear", tol=1e-12)`, each J computed in
/// numpy from the fitted coefficients.
const SKLEARN_WEIGHTED_HINGE: f64 = 0.3962696342015789;
const SKLEARN_WEIGHTED_SQUARED_HINGE: f64 = 0.48761412774361923;
const SKLEARN_WEIGHTED_LOG: f64 = 0.42253381319168926;

#[test]
fn every_solver_reaches_scikit_learns_sample_weighted_optima_on_heart_scale() {
    let data = load("heart_scale/heart_scale", 13);
    let weights: Vec<f64> = (0..data.n_rows())
        .map(|i| ((7 * i % 9) % 4) as f64 * 0.75 + 0.25 * (i % 2) as f64)
        .collect();
    let rows = SampleWeighted::new(&data, &weights).unwrap();
    let cases = [
        (Loss::Hinge, Algorithm::SubLbfgs, SKLEARN_WEIGHTED_HINGE),
        (Loss::Hinge, Algorithm::Dcd, SKLEARN_WEIGHTED_HINGE),
        (Loss::Log, Algorithm::Lbfgs, SKLEARN_WEIGHTED_LOG),
        (Loss::Log, Algorithm::Cd, SKLEARN_WEIGHTED_LOG),
        (Loss::Log, Algorithm::Tron, SKLEARN_WEIGHTED_LOG),
        (Loss::Log, Algorithm::Newton, SKLEARN_WEIGHTED_LOG),
        (
            Loss::SquaredHinge,
            Algorithm::Lbfgs,
            SKLEARN_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Tron,
            SKLEARN_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Newton,
            SKLEARN_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Cd,
            SKLEARN_WEIGHTED_SQUARED_HINGE,
        ),
        (
            Loss::SquaredHinge,
            Algorithm::Dcd,
            SKLEARN_WEIGHTED_SQUARED_HINGE,
        ),
    ];
    for (loss, algorithm, optimum) in cases {
        let objective = Objective::new(&rows, loss, 1e-2, true);
        let solution = batch::solve(algorithm, &objective, &Options::default(), &mut |_| {});
        let solution = solution.unwrap();
        let error = relative(solution.objective, optimum);
        assert!(
            error.abs() <= 1e-8,
            "{algorithm} {loss}: {} vs {optimum} ({error:e}, {:?})",
            solution.objective,
            solution.stop
        );
    }
}

/// Weights of 1 are the unweighted problem, bit for bit, for every solver.
#[test]
fn unit_sample_weights_change_no_bit_of_any_solver() {
    let data = load("heart_scale/heart_scale", 13);
    let ones = vec![1.0; data.n_rows()];
    let unit = SampleWeighted::new(&data, &ones).unwrap();
    for (loss, algorithm) in [
        (Loss::Log, Algorithm::Lbfgs),
        (Loss::Hinge, Algorithm::SubLbfgs),
        (Loss::Hinge, Algorithm::Dcd),
        (Loss::SquaredHinge, Algorithm::Dcd),
        (Loss::Hinge, Algorithm::SubGd),
        (Loss::Hinge, Algorithm::Bfgs),
        (Loss::Log, Algorithm::Cd),
        (Loss::SquaredHinge, Algorithm::Tron),
        (Loss::Log, Algorithm::Newton),
    ] {
        let options = Options {
            max_iter: 50,
            ..Options::default()
        };
        let a = solve(
            algorithm,
            &Objective::new(&data, loss, 1e-2, true),
            &options,
        );
        let b = batch::solve(
            algorithm,
            &Objective::new(&unit, loss, 1e-2, true),
            &options,
            &mut |_| {},
        )
        .unwrap();
        let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.w), bits(&b.w), "{algorithm} {loss}");
        assert_eq!(a.objective.to_bits(), b.objective.to_bits(), "{algorithm}");
        assert_eq!(a.iterations, b.iterations, "{algorithm} {loss}");
    }
}

#[test]
fn same_solution_bit_for_bit_with_one_and_two_threads() {
    let data = load("reuters_grain/train.svm.gz", 27653);
    let run = |threads: usize, algorithm: Algorithm, loss: Loss| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let objective = Objective::new(&data, loss, 1e-4, true);
            let options = Options {
                max_iter: 15,
                ..Options::default()
            };
            let solution = solve(algorithm, &objective, &options);
            (
                solution.objective.to_bits(),
                solution.w.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            )
        })
    };
    for (algorithm, loss) in [
        (Algorithm::SubLbfgs, Loss::Hinge),
        (Algorithm::Lbfgs, Loss::Log),
        (Algorithm::Dcd, Loss::Hinge),
        (Algorithm::Cd, Loss::Log),
        (Algorithm::Tron, Loss::SquaredHinge),
        (Algorithm::Newton, Loss::SquaredHinge),
    ] {
        assert_eq!(
            run(1, algorithm, loss),
            run(2, algorithm, loss),
            "{algorithm}"
        );
    }
}

/// L1-regularized optima (OWL-QN, `lbfgs` on an objective with an L1 term) against
/// liblinear 2.4.6 `-s 6` and `-s 5` (L1-regularized logistic regression and squared-hinge
/// SVM, bias a regularized feature with `-B 1`; J = λ₁(‖w‖₁ + |b|) + (1/m)Σℓ computed from the
/// model in double precision):
///   liblinear-train -q -s 6 -B 1 -c 0.37037037037037035 -e 1e-12 heart_scale   (λ₁ = 1e-2)
///   liblinear-train -q -s 6 -B 1 -c 0.6435006435006435 -e 1e-12 grain.svm      (λ₁ = 1e-3)
///   liblinear-train -q -s 6 -B 1 -c 6.435006435006435 -e 1e-12 grain.svm       (λ₁ = 1e-4)
///   liblinear-train -q -s 5 -B 1 -c 0.37037037037037035 -e 1e-8 heart_scale    (λ₁ = 1e-2,
///     squared hinge; at -e 1e-12 it stops at its iteration limit 0.3 % above this)
/// and scikit-learn 1.9.1's `Lasso(alpha=λ₁, fit_intercept=False, tol=1e-14)` and
/// `ElasticNet(alpha=λ + λ₁, l1_ratio=λ₁/(λ + λ₁), …)` on diabetes with a column of ones
/// appended (so that the bias is penalized as ours is), J = (1/2m)‖Xw − y‖² + λ₁‖w‖₁ + (λ/2)‖w‖²
/// at their coefficients: (λ, λ₁, J, non-zero weights and bias).
const L1_HEART_LOG: (f64, f64, usize) = (1e-2, 0.4176716776757566, 12);
const L1_HEART_SQUARED_HINGE: (f64, f64, usize) = (1e-2, 0.4611618341423822, 13);
const L1_GRAIN_LOG: [(f64, f64, usize); 2] = [
    (1e-3, 0.17715876650314794, 5),
    (1e-4, 0.05141929515618569, 21),
];
const L1_DIABETES_SQUARED: [(f64, f64, f64, usize); 3] = [
    (0.0, 1.0, 2723.052875297989, 3),
    (0.0, 0.1, 1611.3137416513578, 8),
    (1e-2, 0.5, 2870.4281708527183, 8),
];

#[test]
fn owlqn_and_cd_reach_liblinear_and_scikit_learn_l1_optima() {
    for algorithm in [Algorithm::Lbfgs, Algorithm::Cd] {
        l1_optima_reached_by(algorithm);
    }
}

fn l1_optima_reached_by(algorithm: Algorithm) {
    let check = |data: &CsrMatrix, loss, lambda, l1, optimum: f64, nonzero: usize| {
        let objective = Objective::new(data, loss, lambda, true).with_l1(l1);
        let mut gap = f64::NAN;
        let solution = batch::solve(algorithm, &objective, &Options::default(), &mut |p| {
            gap = p.gap;
        })
        .unwrap();
        let error = relative(solution.objective, optimum);
        assert!(
            error.abs() <= 1e-8,
            "{algorithm} {loss} λ₁ = {l1}: {} vs {optimum} ({error:e})",
            solution.objective
        );
        // The certificate holds: J − J* ≤ gap, the reference's J being ≥ J*.
        assert!(
            solution.objective - optimum <= gap * (1.0 + 1e-6) + 1e-12 * optimum,
            "{loss} λ₁ = {l1}: gap {gap:e} below J − J_ref {:e}",
            solution.objective - optimum
        );
        let found = solution.w.iter().filter(|w| **w != 0.0).count();
        assert_eq!(
            found, nonzero,
            "{loss} λ₁ = {l1}: non-zero weights and bias"
        );
    };
    let heart = load("heart_scale/heart_scale", 13);
    let (l1, optimum, nonzero) = L1_HEART_LOG;
    check(&heart, Loss::Log, 0.0, l1, optimum, nonzero);
    let (l1, optimum, nonzero) = L1_HEART_SQUARED_HINGE;
    check(&heart, Loss::SquaredHinge, 0.0, l1, optimum, nonzero);
    let grain = load("reuters_grain/train.svm.gz", 27653);
    for (l1, optimum, nonzero) in L1_GRAIN_LOG {
        check(&grain, Loss::Log, 0.0, l1, optimum, nonzero);
    }
    let diabetes = load("diabetes/train.svm.gz", 10);
    for (lambda, l1, optimum, nonzero) in L1_DIABETES_SQUARED {
        check(&diabetes, Loss::Squared, lambda, l1, optimum, nonzero);
    }
}
