//! AdaGrad in its dual averaging form: the O(k) learner takes its literal O(Tn) baseline's
//! steps (bit for bit on the scalar kernels, to rounding on a vector path; every loss, λ = 0
//! and λ > 0, with and without an L1 term, a free or regularized bias, class and sample
//! weights, from a start), restarts at the iterates it is
//! given and from its own without changing them, approaches the optima of batch solvers (the
//! L1 optimum of coordinate descent, Poisson regression's; liblinear's on reuters_grain in
//! `online_optimum.rs`), ends an overflowing run as diverged and refuses the settings that are
//! not its own.

mod online_common;

use online_common::{LOSSES, bits, labelled_problem, problem, relative_difference};
use sparselin::api::{ExampleSet, Learner, Trainer};
use sparselin::batch;
use sparselin::data::{CsrMatrix, Examples, SampleWeighted, ValueVec};
use sparselin::kernels::dispatch::{self, Isa};
use sparselin::loss::{ClassWeights, Loss};
use sparselin::metrics::{Penalty, objective};
use sparselin::online::{
    Adagrad, AdagradRule, Algorithm, Config, ConfigError, Iterate, Learner as _, Mixing, Sampling,
    Snapshot, Start, Stop, fit, fit_from, fit_mixing,
};

/// [`problem`] with labels ±1 (their sign).
fn binary_problem(m: usize, n: usize, k: usize, seed: u64) -> CsrMatrix {
    labelled_problem(m, n, k, seed, |y: f64| if y > 0.0 { 1.0 } else { -1.0 })
}

fn config(loss: Loss, lambda: f64, l1: f64, regularize_bias: bool) -> Config {
    Config {
        loss,
        class_weights: ClassWeights::UNIT,
        lambda,
        l1,
        t0: None,
        average_start: 1,
        regularize_bias,
        bias_rate: 1.0,
        eta: Some(0.7),
        sampling: Sampling::Uniform,
        seed: 42,
        stop: Stop::Steps(2000),
    }
}

/// The minimum of `loss` at λ (bias regularized) on `data` as L-BFGS finds it: its weights
/// and bias, and its objective.
fn lbfgs_optimum(data: &CsrMatrix, loss: Loss, lambda: f64) -> (Iterate, f64) {
    let model = Trainer::new(Learner::Batch(batch::Algorithm::Lbfgs))
        .loss(loss)
        .lambda(lambda)
        .tolerance(1e-12)
        .train(&ExampleSet::Matrix(data.clone()))
        .unwrap();
    let penalty = Penalty::l2(lambda, true);
    let f_star = objective(loss, penalty, &model.weights, model.bias, data);
    let optimum = Iterate {
        weights: model.weights,
        bias: model.bias,
    };
    (optimum, f_star)
}

/// The fast learner and the baseline on `data` from `start`: the same model, and not zero.
/// Bit for bit on the scalar kernels, which sum a prediction in the baseline's order; a vector
/// path sums it in another (its weights and updated sums are the scalar ones bit for bit,
/// `sparselin_kernels::adagrad`), so there the models agree to 1e-12 relative (1e-15 seen).
/// `SPARSELIN_ISA=scalar` runs the bit-for-bit check (CI does).
fn assert_same_steps<E: sparselin::data::Examples>(
    data: &E,
    c: &Config,
    start: Option<&Start>,
    what: &str,
) -> Snapshot {
    let fast = fit_from(data, Algorithm::Adagrad, c, start, &mut ()).unwrap();
    let naive = fit_from(data, Algorithm::NaiveAdagrad, c, start, &mut ()).unwrap();
    assert_eq!(fast.snapshot.averaged, None, "{what}");
    let (fast_last, naive_last) = (&fast.snapshot.last, &naive.snapshot.last);
    if dispatch::isa() == Isa::Scalar {
        assert!(
            bits(fast_last) == bits(naive_last),
            "{what}: the fast learner left its baseline"
        );
    } else {
        let difference = relative_difference(fast_last, naive_last);
        assert!(
            difference <= 1e-12,
            "{what}: the fast learner left its baseline by {difference:e}"
        );
    }
    let nonzero = fast.snapshot.last.weights.iter().filter(|&&w| w != 0.0);
    assert!(nonzero.count() > 5, "{what}: w = 0");
    fast.snapshot
}

#[test]
fn adagrad_takes_its_baselines_steps() {
    let data = problem(150, 40, 6, 1);
    let mut cases = 0;
    let losses = LOSSES
        .into_iter()
        .chain([Loss::SquaredEpsilonInsensitive(0.1)]);
    for loss in losses {
        for lambda in [0.05, 0.0] {
            for l1 in [0.0, 0.002] {
                for regularize_bias in [true, false] {
                    let c = config(loss, lambda, l1, regularize_bias);
                    let what = format!("{loss} λ={lambda} λ₁={l1} bias={regularize_bias}");
                    assert_same_steps(&data, &c, None, &what);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, (LOSSES.len() + 1) * 8);
}

/// Class weights (c₊ = 4, c₋ = 0.3) and sample weights (0, ½, 1, 2.5): the same steps still,
/// and the weights change the model.
#[test]
fn adagrad_takes_its_baselines_steps_with_weights() {
    let data = problem(150, 40, 6, 3);
    for loss in [Loss::Hinge, Loss::Log, Loss::ModifiedHuber] {
        let plain = config(loss, 0.05, 0.0, true);
        let c = Config {
            class_weights: ClassWeights::new(4.0, 0.3).unwrap(),
            ..plain
        };
        let weighted = assert_same_steps(&data, &c, None, &format!("{loss} class weights"));
        let unweighted = assert_same_steps(&data, &plain, None, &format!("{loss}"));
        assert_ne!(weighted.last, unweighted.last, "{loss}");
    }
    let weights: Vec<f64> = (0..150).map(|i| [0.0, 0.5, 1.0, 2.5][i * 7 % 4]).collect();
    let weighted = SampleWeighted::new(&data, &weights).unwrap();
    let ones = vec![1.0; 150];
    let unit = SampleWeighted::new(&data, &ones).unwrap();
    for loss in LOSSES {
        let c = config(loss, 0.05, 0.0, false);
        let a = assert_same_steps(&weighted, &c, None, &format!("{loss} sample weights"));
        let plain = fit(&data, Algorithm::Adagrad, &c, &mut ())
            .unwrap()
            .snapshot;
        let same = fit(&unit, Algorithm::Adagrad, &c, &mut ())
            .unwrap()
            .snapshot;
        assert!(
            bits(&same.last) == bits(&plain.last),
            "{loss}: unit weights"
        );
        assert_ne!(a.last, plain.last, "{loss}");
    }
}

/// From given weights: the same steps as the baseline; a start at zero is the cold start, and
/// the start's weights are the iterate the first step is taken at (a step whose loss
/// derivative is 0 leaves them where they are).
#[test]
fn adagrad_starts_from_given_weights() {
    let data = problem(150, 40, 6, 6);
    let weights: Vec<f64> = (0..40).map(|j| (j * 7 % 11) as f64 / 11.0 - 0.4).collect();
    let start = Start::warm(Iterate {
        weights: weights.clone(),
        bias: 0.3,
    });
    let zero = Start::warm(Iterate {
        weights: vec![0.0; 40],
        bias: 0.0,
    });
    for loss in [Loss::Hinge, Loss::Log, Loss::Squared] {
        for (l1, regularize_bias) in [(0.0, true), (0.002, false)] {
            let c = config(loss, 0.05, l1, regularize_bias);
            let what = format!("{loss} λ₁={l1} bias={regularize_bias}");
            let started = assert_same_steps(&data, &c, Some(&start), &what);
            let cold = fit(&data, Algorithm::Adagrad, &c, &mut ())
                .unwrap()
                .snapshot;
            let from_zero = fit_from(&data, Algorithm::Adagrad, &c, Some(&zero), &mut ());
            assert!(
                bits(&from_zero.unwrap().snapshot.last) == bits(&cold.last),
                "{what}"
            );
            assert_ne!(started.last, cold.last, "{what}");
        }
    }
    // One step on a row whose loss derivative is 0 (hinge, margin ≥ 1): nothing moves.
    let labels = vec![1.0];
    let row = CsrMatrix::new(labels, vec![0, 1], vec![3], ValueVec::F64(vec![10.0]), 40).unwrap();
    let c = Config {
        stop: Stop::Steps(1),
        ..config(Loss::Hinge, 0.0, 0.0, true)
    };
    let one = fit_from(&row, Algorithm::Adagrad, &c, Some(&start), &mut ()).unwrap();
    let moved = one.snapshot.last.weights.iter().zip(&weights);
    assert!(
        moved
            .into_iter()
            .all(|(a, b)| (a - b).abs() <= 1e-15 * b.abs())
    );
}

/// The iterates are centred on the start: from the optimum, an epoch of small steps stays at
/// it (its noise shrinks with η), where the same epoch from zero is far from it.
#[test]
fn a_warm_start_at_the_optimum_stays_there_with_small_steps() {
    let data = binary_problem(300, 30, 6, 21);
    let lambda = 0.01;
    let (optimum, f_star) = lbfgs_optimum(&data, Loss::Log, lambda);
    let penalty = Penalty::l2(lambda, true);
    let start = Start::warm(optimum);
    for eta in [0.01, 0.001] {
        let c = Config {
            eta: Some(eta),
            stop: Stop::Epochs(1),
            ..config(Loss::Log, lambda, 0.0, true)
        };
        let gap = |start| {
            let fit = fit_from(&data, Algorithm::Adagrad, &c, start, &mut ()).unwrap();
            let w = fit.snapshot.last;
            objective(Loss::Log, penalty, &w.weights, w.bias, &data) / f_star - 1.0
        };
        let (warm, cold) = (gap(Some(&start)), gap(None));
        println!("η = {eta}: warm {warm:e}, cold {cold:e}");
        // Seen: 3.4e-5 warm against 6.2e-2 cold at η = 0.01.
        assert!(
            warm < 1e-2 * eta && cold > 1e-2,
            "η = {eta}: {warm:e}, {cold:e}"
        );
    }
}

/// Restarting from its own iterates at the end of every epoch (a data-parallel run's mix that
/// changes nothing) keeps each feature's gradient squares: the run ends where the
/// uninterrupted one does, to rounding.
#[test]
fn restarting_from_its_own_iterates_changes_nothing_but_rounding() {
    let data = problem(150, 40, 6, 9);
    for (loss, l1, regularize_bias) in [(Loss::Log, 0.0, true), (Loss::Hinge, 0.002, false)] {
        let c = Config {
            stop: Stop::Epochs(6),
            ..config(loss, 0.05, l1, regularize_bias)
        };
        let whole = fit(&data, Algorithm::Adagrad, &c, &mut ())
            .unwrap()
            .snapshot;
        let mut mixes = 0;
        let mut unchanged = |_: &mut Snapshot| mixes += 1;
        let mixing = Mixing {
            mix: &mut unchanged,
            per_epoch: 2,
            x_bar: None,
        };
        let mixed = fit_mixing(&data, Algorithm::Adagrad, &c, None, &mut (), Some(mixing));
        let mixed = mixed.unwrap().snapshot;
        assert_eq!(mixes, 12, "{loss}");
        let scale = whole
            .last
            .weights
            .iter()
            .fold(0.0f64, |s, w| s.max(w.abs()));
        let differences = whole.last.weights.iter().zip(&mixed.last.weights);
        let worst = differences.fold(0.0f64, |d, (a, b)| d.max((a - b).abs()));
        assert!(worst <= 1e-12 * scale, "{loss}: {worst:e} of {scale:e}");
        // Zeros of the L1 term stay exact zeros.
        for (a, b) in whole.last.weights.iter().zip(&mixed.last.weights) {
            assert_eq!(*a == 0.0, *b == 0.0, "{loss}");
        }
    }
}

/// A restart at step t puts the learner at the iterate given, to rounding, whatever its sums
/// and centre: weights moved, some to exactly 0 (which the L1 term keeps exact), the bias
/// elsewhere; the data-parallel runs' mixes restart it so.
#[test]
fn a_restart_puts_the_learner_at_the_given_iterate() {
    let data = binary_problem(100, 30, 6, 13);
    let start = Iterate {
        weights: (0..30).map(|j| ((j * 5 % 7) as f64 - 3.0) * 0.1).collect(),
        bias: 0.2,
    };
    for (l1, centred, regularize_bias) in
        [(0.0, false, true), (0.01, true, true), (0.01, false, false)]
    {
        let rule = AdagradRule {
            lambda: 0.05,
            l1,
            eta: 0.7,
            regularize_bias,
        };
        let mut learner = Adagrad::new(30, Loss::Log, rule, centred.then_some(&start)).unwrap();
        let steps = 200;
        for t in 1..=steps {
            let i = (t as usize * 7) % data.n_rows();
            let row = data.row(i);
            learner.step(i, row, row.label, 1.0, t);
        }
        let mut target = learner.snapshot(steps).unwrap();
        for (j, w) in target.last.weights.iter_mut().enumerate() {
            *w = if j % 3 == 0 { 0.0 } else { 0.5 * *w + 0.1 };
        }
        target.last.bias = -0.3;
        learner.restart(&target, steps);
        let got = learner.snapshot(steps).unwrap().last;
        let what = format!("λ₁ = {l1}, centred {centred}, bias {regularize_bias}");
        for (a, b) in got
            .weights
            .iter()
            .zip(&target.last.weights)
            .chain([(&got.bias, &-0.3)])
        {
            assert!((a - b).abs() <= 1e-12, "{what}: {a} for {b}");
            assert_eq!(*a == 0.0, *b == 0.0, "{what}");
        }
    }
}

/// With an L1 term, the minimum of (1/m)Σ log + (λ/2)‖w‖² + λ₁(‖w‖₁ + |b|) that coordinate
/// descent certifies: AdaGrad's objective approaches it, and its model has exact zeros.
#[test]
fn adagrad_with_an_l1_term_approaches_the_elastic_net_optimum() {
    let data = binary_problem(400, 60, 8, 11);
    let (lambda, l1) = (0.01, 0.003);
    let set = ExampleSet::Matrix(data.clone());
    let cd = Trainer::new(Learner::Batch(batch::Algorithm::Cd))
        .loss(Loss::Log)
        .lambda(lambda)
        .l1(l1)
        .tolerance(1e-10)
        .train(&set)
        .unwrap();
    let penalty = Penalty {
        lambda,
        l1,
        regularize_bias: true,
    };
    let optimum = objective(Loss::Log, penalty, &cd.weights, cd.bias, &data);
    let mut gaps = vec![];
    for epochs in [10, 100, 1000] {
        let c = Config {
            eta: None,
            stop: Stop::Epochs(epochs),
            ..config(Loss::Log, lambda, l1, true)
        };
        let w = fit(&data, Algorithm::Adagrad, &c, &mut ())
            .unwrap()
            .snapshot
            .last;
        let f = objective(Loss::Log, penalty, &w.weights, w.bias, &data);
        let zeros = w.weights.iter().filter(|&&w| w == 0.0).count();
        let optimal_zeros = cd.weights.iter().filter(|&&w| w == 0.0).count();
        println!(
            "{epochs} epochs: F − F* = {:e}, zeros {zeros} ({optimal_zeros})",
            f - optimum
        );
        assert!(
            f >= optimum - 1e-12,
            "{epochs}: {f} below the optimum {optimum}"
        );
        // Seen: 41 of the 60 weights 0 at the optimum, AdaGrad's 46, 44 and 41.
        assert!(
            optimal_zeros > 0 && optimal_zeros < 60,
            "{optimal_zeros} zeros"
        );
        assert!(
            zeros.abs_diff(optimal_zeros) <= 5,
            "{epochs}: {zeros} zeros"
        );
        gaps.push(f - optimum);
    }
    // Seen: 2.0e-3, 5.2e-4 and 1.1e-4.
    assert!(gaps.windows(2).all(|g| g[1] < g[0]), "{gaps:?}");
    assert!(gaps[2] < 3e-4, "{gaps:?}");
}

/// Poisson regression, which the scheduled learners refuse (no step size bounds its curvature
/// e^p): AdaGrad's steps are sized by the gradients met, and it approaches the optimum L-BFGS
/// finds, from above, every iterate finite.
#[test]
fn adagrad_learns_poisson_regression() {
    let data = labelled_problem(300, 20, 5, 31, |y: f64| (2.0 * y.abs()).floor());
    let lambda = 0.01;
    let (_, f_star) = lbfgs_optimum(&data, Loss::Poisson, lambda);
    let penalty = Penalty::l2(lambda, true);
    let mut gaps = vec![];
    for epochs in [10, 100, 1000] {
        let c = Config {
            eta: None,
            stop: Stop::Epochs(epochs),
            ..config(Loss::Poisson, lambda, 0.0, true)
        };
        let w = fit(&data, Algorithm::Adagrad, &c, &mut ())
            .unwrap()
            .snapshot
            .last;
        assert!(w.weights.iter().all(|w| w.is_finite()) && w.bias.is_finite());
        gaps.push(objective(Loss::Poisson, penalty, &w.weights, w.bias, &data) / f_star - 1.0);
    }
    // Seen: 1.7e-2, 1.4e-3 and 1.2e-4.
    assert!(
        gaps.windows(2).all(|g| g[1] < g[0]) && gaps[0] > 0.0,
        "{gaps:?}"
    );
    assert!(gaps[2] < 1e-3, "{gaps:?}");
    // The library takes it from AdaGrad and refuses it from SGD.
    let set = ExampleSet::Matrix(data);
    let online = |algorithm| {
        Trainer::new(Learner::Online(algorithm))
            .loss(Loss::Poisson)
            .lambda(lambda)
            .train(&set)
    };
    assert!(online(Algorithm::Adagrad).is_ok());
    let refused = online(Algorithm::Sgd).unwrap_err().to_string();
    assert!(refused.contains("cannot learn poisson loss"), "{refused}");
}

#[test]
fn settings_that_are_not_adagrads_are_refused() {
    let data = problem(20, 5, 2, 4);
    let c = config(Loss::Hinge, 0.05, 0.0, true);
    let refused = |c: &Config, algorithm| fit(&data, algorithm, c, &mut ()).unwrap_err();
    for eta in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let bad = Config {
            eta: Some(eta),
            ..c
        };
        let error = refused(&bad, Algorithm::Adagrad);
        assert!(matches!(error, ConfigError::Eta(e) if e.to_bits() == eta.to_bits()));
    }
    let t0 = Config { t0: Some(1.0), ..c };
    assert!(matches!(
        refused(&t0, Algorithm::Adagrad),
        ConfigError::NotFor { .. }
    ));
    let rate = Config {
        bias_rate: 0.5,
        regularize_bias: false,
        ..c
    };
    assert!(matches!(
        refused(&rate, Algorithm::NaiveAdagrad),
        ConfigError::NotFor { .. }
    ));
    assert!(matches!(
        refused(&c, Algorithm::Sgd),
        ConfigError::NotFor { .. }
    ));
    // λ = 0 is plain AdaGrad, but no schedule η_t = 1/(λ(t + t₀)) has it.
    let no_lambda = Config {
        lambda: 0.0,
        eta: None,
        ..c
    };
    assert!(fit(&data, Algorithm::Adagrad, &no_lambda, &mut ()).is_ok());
    let sgd = Config {
        t0: Some(1.0),
        ..no_lambda
    };
    assert_eq!(refused(&sgd, Algorithm::Sgd), ConfigError::Lambda(0.0));
    // A model holds no gradient squares to resume with.
    let start = Start {
        steps: 10,
        drawn: 10,
        ..Start::warm(Iterate {
            weights: vec![0.1; 5],
            bias: 0.0,
        })
    };
    let resumed = fit_from(&data, Algorithm::Adagrad, &c, Some(&start), &mut ());
    assert_eq!(resumed.unwrap_err(), ConfigError::AdagradResume);
}

#[test]
fn same_seed_same_model_and_another_seed_another() {
    let data = problem(200, 50, 6, 3);
    let c = config(Loss::Log, 0.01, 0.0, true);
    let a = fit(&data, Algorithm::Adagrad, &c, &mut ())
        .unwrap()
        .snapshot;
    let b = fit(&data, Algorithm::Adagrad, &c, &mut ())
        .unwrap()
        .snapshot;
    assert!(bits(&a.last) == bits(&b.last));
    let other = Config { seed: 43, ..c };
    let other = fit(&data, Algorithm::Adagrad, &other, &mut ())
        .unwrap()
        .snapshot;
    assert_ne!(other.last, a.last);
}

/// A sum that overflows (e^p of a huge score under Poisson loss, from unscaled features and a
/// large step) ends the run as diverged, not as a model of zero weights: NaN sums reach the
/// weights, which the L1 term's shrinkage would otherwise round to 0.
#[test]
fn an_overflowing_sum_is_a_divergence_not_a_zero_model() {
    let data = CsrMatrix::new(
        vec![5.0, 3.0, 0.0],
        vec![0, 1, 2, 3],
        vec![0, 1, 0],
        ValueVec::F64(vec![1e3, 2e3, 3e3]),
        2,
    )
    .unwrap();
    let set = ExampleSet::Matrix(data);
    for l1 in [0.0, 1e-3] {
        let trained = Trainer::new(Learner::Online(Algorithm::Adagrad))
            .loss(Loss::Poisson)
            .lambda(1e-3)
            .l1(l1)
            .eta(1e3)
            .epochs(20)
            .train(&set);
        let error = trained.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("diverged"), "λ₁ = {l1}: {error:?}");
    }
}
