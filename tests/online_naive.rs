//! The O(k) learners against their literal O(Tn) baselines (MATH.md §5): given the same
//! config (hence the same sampler and steps), the final (w, b) and (w̄, b̄) agree to 1e-9
//! relative for every learner × loss × t₀ × t_a × bias regularization, CASGD's implicit bias
//! included. Also: same seed, same model bit for bit; a different seed, a different one.

mod online_common;

use online_common::{LOSSES, bits, problem, relative_difference};
use sparselin::data::SampleWeighted;
use sparselin::loss::{ClassWeights, Loss};
use sparselin::online::{
    Algorithm, Config, ConfigError, Iterate, Sampling, Snapshot, Start, Stop, fit, fit_from,
};

fn config(loss: Loss, t0: f64, ta: u64, regularize_bias: bool) -> Config {
    Config {
        loss,
        class_weights: Default::default(),
        lambda: 0.05,
        l1: 0.0,
        t0: Some(t0),
        average_start: ta,
        regularize_bias,
        bias_rate: 1.0,
        eta: None,
        sampling: Sampling::Uniform,
        seed: 42,
        stop: Stop::Steps(3000),
    }
}

#[test]
fn fast_learners_match_their_baselines_step_for_step() {
    let data = problem(150, 40, 6, 1);
    let pairs = [
        (Algorithm::Sgd, Algorithm::NaiveSgd),
        (Algorithm::Asgd, Algorithm::NaiveAsgd),
        (Algorithm::Casgd, Algorithm::NaiveCasgd),
    ];
    let mut worst = 0.0f64;
    let mut cases = 0;
    for (fast, naive) in pairs {
        for loss in LOSSES {
            for t0 in [0.0, 7.5] {
                for ta in [1, 1201] {
                    for (regularize_bias, bias_rate) in [(true, 1.0), (false, 1.0), (false, 0.01)] {
                        let c = Config {
                            bias_rate,
                            ..config(loss, t0, ta, regularize_bias)
                        };
                        let a = fit(&data, fast, &c, &mut ()).unwrap().snapshot;
                        let b = fit(&data, naive, &c, &mut ()).unwrap().snapshot;
                        let what = format!(
                            "{fast} {loss} t0={t0} ta={ta} bias={regularize_bias} rate={bias_rate}"
                        );
                        let last = relative_difference(&a.last, &b.last);
                        assert!(last <= 1e-9, "{what}: last iterates differ by {last:e}");
                        assert!(a.last.weights.iter().any(|&w| w != 0.0), "{what}: w = 0");
                        worst = worst.max(last);
                        match (&a.averaged, &b.averaged) {
                            (Some(x), Some(y)) => {
                                let avg = relative_difference(x, y);
                                assert!(avg <= 1e-9, "{what}: averages differ by {avg:e}");
                                worst = worst.max(avg);
                            }
                            (None, None) => assert_eq!(fast, Algorithm::Sgd),
                            _ => panic!("{what}: only one side averaged"),
                        }
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 3 * LOSSES.len() * 2 * 2 * 3);
    println!("worst relative difference over {cases} cases: {worst:e}");
}

/// With the classes weighted (c₊ = 4, c₋ = 0.3), every classification loss: the O(k)
/// learners still take the baselines' steps, and the weights change the model.
#[test]
fn fast_learners_match_their_baselines_with_weighted_classes() {
    let data = problem(150, 40, 6, 3);
    let weights = ClassWeights::new(4.0, 0.3).unwrap();
    let pairs = [
        (Algorithm::Sgd, Algorithm::NaiveSgd),
        (Algorithm::Asgd, Algorithm::NaiveAsgd),
        (Algorithm::Casgd, Algorithm::NaiveCasgd),
    ];
    let classification = [
        Loss::Hinge,
        Loss::Log,
        Loss::SquaredHinge,
        Loss::SmoothHinge,
        Loss::ModifiedHuber,
    ];
    for (fast, naive) in pairs {
        for loss in classification {
            for (ta, regularize_bias) in [(1, true), (1201, false)] {
                let unweighted = config(loss, 7.5, ta, regularize_bias);
                let c = Config {
                    class_weights: weights,
                    ..unweighted
                };
                let a = fit(&data, fast, &c, &mut ()).unwrap().snapshot;
                let b = fit(&data, naive, &c, &mut ()).unwrap().snapshot;
                let what = format!("{fast} {loss} ta={ta} bias={regularize_bias}");
                let (a, b) = (a.output(), b.output());
                let difference = relative_difference(a, b);
                assert!(difference <= 1e-9, "{what}: differ by {difference:e}");
                let plain = fit(&data, fast, &unweighted, &mut ()).unwrap().snapshot;
                let change = relative_difference(a, plain.output());
                assert!(
                    change > 1e-2,
                    "{what}: weighting changed the model by {change:e}"
                );
            }
        }
    }
}

/// With sample weights (0, ½, 1 and 2.5), every loss: the O(k) learners still take the
/// baselines' steps, weights of 1 everywhere change no bit, and these weights change the model.
#[test]
fn fast_learners_match_their_baselines_with_sample_weights() {
    let data = problem(150, 40, 6, 5);
    let weights: Vec<f64> = (0..150).map(|i| [0.0, 0.5, 1.0, 2.5][i * 7 % 4]).collect();
    let weighted = SampleWeighted::new(&data, &weights).unwrap();
    let ones = vec![1.0; 150];
    let unit = SampleWeighted::new(&data, &ones).unwrap();
    let pairs = [
        (Algorithm::Sgd, Algorithm::NaiveSgd),
        (Algorithm::Asgd, Algorithm::NaiveAsgd),
        (Algorithm::Casgd, Algorithm::NaiveCasgd),
    ];
    for (fast, naive) in pairs {
        for loss in LOSSES {
            for (ta, regularize_bias) in [(1, true), (1201, false)] {
                let c = config(loss, 7.5, ta, regularize_bias);
                let what = format!("{fast} {loss} ta={ta} bias={regularize_bias}");
                let a = fit(&weighted, fast, &c, &mut ()).unwrap().snapshot;
                let b = fit(&weighted, naive, &c, &mut ()).unwrap().snapshot;
                let difference = relative_difference(a.output(), b.output());
                assert!(difference <= 1e-9, "{what}: differ by {difference:e}");
                let plain = fit(&data, fast, &c, &mut ()).unwrap().snapshot;
                let same = fit(&unit, fast, &c, &mut ()).unwrap().snapshot;
                assert!(bits(same.output()) == bits(plain.output()), "{what}");
                let change = relative_difference(a.output(), plain.output());
                assert!(
                    change > 1e-2,
                    "{what}: weighting changed the model by {change:e}"
                );
            }
        }
    }
}

/// From a given starting point: the O(k) learners take the baselines' steps, a start at zero
/// is the cold start, a start elsewhere ends elsewhere, and a start that cannot be one is
/// refused.
#[test]
fn fast_learners_match_their_baselines_from_a_start() {
    let data = problem(150, 40, 6, 6);
    let start = Iterate {
        weights: (0..40).map(|j| (j * 7 % 11) as f64 / 11.0 - 0.4).collect(),
        bias: 0.3,
    };
    let zero = Iterate {
        weights: vec![0.0; 40],
        bias: 0.0,
    };
    let pairs = [
        (Algorithm::Sgd, Algorithm::NaiveSgd),
        (Algorithm::Asgd, Algorithm::NaiveAsgd),
        (Algorithm::Casgd, Algorithm::NaiveCasgd),
    ];
    for (fast, naive) in pairs {
        for loss in [Loss::Hinge, Loss::Log, Loss::Squared] {
            for (ta, regularize_bias) in [(1, true), (1201, false)] {
                let c = config(loss, 7.5, ta, regularize_bias);
                let what = format!("{fast} {loss} ta={ta} bias={regularize_bias}");
                let run = |algorithm, start| {
                    fit_from(&data, algorithm, &c, start, &mut ())
                        .unwrap()
                        .snapshot
                };
                let (start, zero) = (Start::warm(start.clone()), Start::warm(zero.clone()));
                let (a, b) = (run(fast, Some(&start)), run(naive, Some(&start)));
                let last = relative_difference(&a.last, &b.last);
                assert!(last <= 1e-9, "{what}: last iterates differ by {last:e}");
                let output = relative_difference(a.output(), b.output());
                assert!(output <= 1e-9, "{what}: outputs differ by {output:e}");
                let cold = run(fast, None);
                assert_eq!(run(fast, Some(&zero)).output(), cold.output(), "{what}");
                let change = relative_difference(a.output(), cold.output());
                assert!(
                    change > 1e-3,
                    "{what}: the start moved the model by {change:e}"
                );
            }
        }
    }
    let c = config(Loss::Log, 7.5, 1, true);
    let refused = |start: &Iterate, c: &Config| {
        fit_from(
            &data,
            Algorithm::Asgd,
            c,
            Some(&Start::warm(start.clone())),
            &mut (),
        )
        .err()
        .unwrap()
    };
    let narrow = Iterate {
        weights: vec![0.5; 39],
        bias: 0.0,
    };
    assert!(matches!(
        refused(&narrow, &c),
        ConfigError::StartWidth {
            got: 39,
            features: 40
        }
    ));
    let nan = Iterate {
        bias: f64::NAN,
        ..start.clone()
    };
    assert_eq!(refused(&nan, &c), ConfigError::StartNotFinite);
    let no_offset = Config { t0: Some(0.0), ..c };
    assert_eq!(refused(&start, &no_offset), ConfigError::StartNeedsT0);
}

/// A run stopped after S steps and resumed from its iterates for T − S more ends where the
/// run of T steps ends, to rounding (the sums are rebuilt from the iterates), for every
/// learner, averaging start (up to S, the last step the first run may average from), bias
/// and order; a fast learner resumes its
/// baseline's run and the other way round. An averaging learner resumed past t_a without its
/// average is refused.
#[test]
fn a_stopped_run_resumed_ends_where_the_whole_run_ends() {
    let data = problem(150, 40, 6, 9);
    let (whole, stopped) = (3000, 1300);
    let pairs = [
        (Algorithm::Sgd, Algorithm::NaiveSgd),
        (Algorithm::Asgd, Algorithm::NaiveAsgd),
        (Algorithm::Casgd, Algorithm::NaiveCasgd),
    ];
    let mut worst = 0.0f64;
    for (fast, naive) in pairs {
        for sampling in [
            Sampling::Uniform,
            Sampling::Permutation,
            Sampling::FileOrder,
        ] {
            for (ta, regularize_bias) in [(1, true), (1201, false), (1300, true)] {
                let c = Config {
                    sampling,
                    ..config(Loss::Log, 7.5, ta, regularize_bias)
                };
                let first = Config {
                    stop: Stop::Steps(stopped),
                    ..c
                };
                let rest = Config {
                    stop: Stop::Steps(whole - stopped),
                    ..c
                };
                let what = format!("{fast} {sampling} ta={ta} bias={regularize_bias}");
                let reference = fit(&data, fast, &c, &mut ()).unwrap().snapshot;
                for (before, after) in [(fast, fast), (fast, naive), (naive, fast)] {
                    let start = Start {
                        snapshot: fit(&data, before, &first, &mut ()).unwrap().snapshot,
                        steps: stopped,
                        drawn: stopped,
                    };
                    let resumed = fit_from(&data, after, &rest, Some(&start), &mut ()).unwrap();
                    assert_eq!(resumed.steps, whole - stopped);
                    let got = resumed.snapshot;
                    let last = relative_difference(&got.last, &reference.last);
                    let output = relative_difference(got.output(), reference.output());
                    let what = format!("{what} {before} then {after}");
                    assert!(last <= 1e-10, "{what}: last iterates differ by {last:e}");
                    assert!(output <= 1e-10, "{what}: outputs differ by {output:e}");
                    assert_eq!(got.averaged.is_some(), reference.averaged.is_some());
                    worst = worst.max(last).max(output);
                }
            }
        }
    }
    // Seen: 2.7e-14 at most.
    assert!(
        worst > 0.0,
        "resuming rebuilds the sums: some rounding is expected"
    );
    let c = config(Loss::Log, 7.5, 1, true);
    let no_average = Start {
        snapshot: Snapshot {
            last: Iterate {
                weights: vec![0.1; 40],
                bias: 0.0,
            },
            averaged: None,
        },
        steps: 10,
        drawn: 10,
    };
    let refused = fit_from(&data, Algorithm::Asgd, &c, Some(&no_average), &mut ());
    assert_eq!(refused.err(), Some(ConfigError::StartNeedsAverage(10)));
    let overflowing = Start {
        steps: u64::MAX - 5,
        ..no_average.clone()
    };
    let refused = fit_from(&data, Algorithm::Sgd, &c, Some(&overflowing), &mut ());
    assert!(matches!(refused, Err(ConfigError::StepCount { .. })));
    // SGD has no average to need; t₀ = 0 is fine once steps were taken.
    let sgd = Config { t0: Some(0.0), ..c };
    assert!(fit_from(&data, Algorithm::Sgd, &sgd, Some(&no_average), &mut ()).is_ok());
}

/// A regression loss has no classes to weigh: the config is refused, not run unweighted.
#[test]
fn class_weights_with_a_regression_loss_are_refused() {
    let data = problem(20, 5, 2, 4);
    let c = Config {
        class_weights: ClassWeights::new(2.0, 1.0).unwrap(),
        ..config(Loss::Squared, 1.0, 1, true)
    };
    let error = fit(&data, Algorithm::Sgd, &c, &mut ()).err().unwrap();
    assert!(matches!(error, ConfigError::ClassWeights(_)), "{error}");
}

#[test]
fn averaging_from_a_later_start_differs_from_averaging_everything() {
    let data = problem(100, 30, 5, 2);
    let early = fit(
        &data,
        Algorithm::Asgd,
        &config(Loss::Hinge, 3.0, 1, true),
        &mut (),
    )
    .unwrap();
    let late = fit(
        &data,
        Algorithm::Asgd,
        &config(Loss::Hinge, 3.0, 2001, true),
        &mut (),
    )
    .unwrap();
    assert_eq!(early.snapshot.last, late.snapshot.last);
    assert_ne!(early.snapshot.averaged, late.snapshot.averaged);
}

#[test]
fn same_seed_same_model_bit_for_bit() {
    let data = problem(200, 50, 6, 3);
    for sampling in [
        Sampling::Uniform,
        Sampling::Permutation,
        Sampling::FileOrder,
    ] {
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let mut c = config(Loss::Log, 10.0, 1, true);
            c.sampling = sampling;
            c.stop = Stop::Epochs(3);
            let a = fit(&data, algorithm, &c, &mut ()).unwrap().snapshot;
            let b = fit(&data, algorithm, &c, &mut ()).unwrap().snapshot;
            assert_eq!(a, b, "{algorithm} {sampling}");
            c.seed += 1;
            let other = fit(&data, algorithm, &c, &mut ()).unwrap().snapshot;
            assert_eq!(
                other == a,
                sampling == Sampling::FileOrder,
                "{algorithm} {sampling}"
            );
        }
    }
}

#[test]
fn bad_configurations_are_refused() {
    let data = problem(10, 5, 2, 4);
    let mut c = config(Loss::Hinge, 1.0, 1, true);
    c.lambda = 0.0;
    assert_eq!(
        fit(&data, Algorithm::Sgd, &c, &mut ()).unwrap_err(),
        ConfigError::Lambda(0.0)
    );
    let mut c = config(Loss::Hinge, -1.0, 1, true);
    assert_eq!(
        fit(&data, Algorithm::Sgd, &c, &mut ()).unwrap_err(),
        ConfigError::T0(-1.0)
    );
    c.t0 = None;
    c.average_start = 3001;
    let err = fit(&data, Algorithm::Asgd, &c, &mut ()).unwrap_err();
    assert_eq!(
        err,
        ConfigError::AverageStart {
            start: 3001,
            steps: 3000
        }
    );
    c.stop = Stop::Epochs(0);
    assert_eq!(
        fit(&data, Algorithm::Sgd, &c, &mut ()).unwrap_err(),
        ConfigError::NoSteps
    );
    // A regularized bias steps with the weights; a free one at a positive finite rate.
    for (regularize_bias, rate) in [(true, 0.01), (false, 0.0), (false, f64::NAN)] {
        let c = Config {
            bias_rate: rate,
            ..config(Loss::Hinge, 1.0, 1, regularize_bias)
        };
        let err = fit(&data, Algorithm::Asgd, &c, &mut ()).unwrap_err();
        let refused = match err {
            ConfigError::RegularizedBiasRate(r) => regularize_bias && r == rate,
            ConfigError::BiasRate(r) => !regularize_bias && r.to_bits() == rate.to_bits(),
            _ => false,
        };
        assert!(refused, "{regularize_bias} {rate}: {err}");
    }
}

/// The free bias's rate scales its steps and nothing else: at rate 0.01 the first step moves
/// the bias by exactly 0.01 times what it moves at rate 1, and the weights are the same.
#[test]
fn a_free_bias_steps_at_its_rate() {
    let data = problem(50, 10, 3, 5);
    let one_step = |rate: f64| {
        let c = Config {
            bias_rate: rate,
            stop: Stop::Steps(1),
            ..config(Loss::Hinge, 4.0, 1, false)
        };
        fit(&data, Algorithm::Sgd, &c, &mut ())
            .unwrap()
            .snapshot
            .last
    };
    let (full, slow) = (one_step(1.0), one_step(0.01));
    assert_ne!(full.bias, 0.0);
    assert!((slow.bias - 0.01 * full.bias).abs() <= 1e-15 * full.bias.abs());
    assert_eq!(slow.weights, full.weights);
    // Over many steps the slower bias ends elsewhere (and so do the weights it shifts).
    let long = |rate: f64| {
        let c = Config {
            bias_rate: rate,
            ..config(Loss::Hinge, 4.0, 1, false)
        };
        fit(&data, Algorithm::Asgd, &c, &mut ())
            .unwrap()
            .snapshot
            .output()
            .bias
    };
    assert!((long(1.0) - long(0.01)).abs() > 1e-6);
}

/// SGD with an L1 term (truncated gradient) against its literal baseline: the O(k) learner
/// truncates a weight lazily, by the steps it missed at once, the baseline every weight every
/// step; both land on the same iterate, with the same weights at exactly 0 — for every loss,
/// t₀, bias setting and a start from given weights; a resumed run ends where an
/// uninterrupted one does. Other learners refuse the term.
#[test]
fn sgd_with_an_l1_term_matches_its_baseline() {
    let data = problem(150, 40, 6, 3);
    let (mut cases, mut sparse) = (0, 0);
    for loss in LOSSES {
        for t0 in [0.0, 7.5] {
            for regularize_bias in [true, false] {
                let c = Config {
                    l1: 0.02,
                    ..config(loss, t0, 1, regularize_bias)
                };
                let a = fit(&data, Algorithm::Sgd, &c, &mut ()).unwrap().snapshot;
                let b = fit(&data, Algorithm::NaiveSgd, &c, &mut ())
                    .unwrap()
                    .snapshot;
                let what = format!("{loss} t0={t0} bias={regularize_bias}");
                let difference = relative_difference(&a.last, &b.last);
                assert!(
                    difference <= 1e-9,
                    "{what}: iterates differ by {difference:e}"
                );
                let zeros = |w: &Iterate| w.weights.iter().filter(|&&w| w == 0.0).count();
                assert_eq!(zeros(&a.last), zeros(&b.last), "{what}");
                sparse += usize::from(zeros(&a.last) > 0);
                cases += 1;
            }
        }
    }
    // Squared and squared-hinge loss keep every weight in 5 of the 40 runs.
    assert_eq!(cases, 40);
    assert!(sparse >= 34, "{sparse} of {cases} runs have weights at 0");
    // From given weights (the restart brings every weight's truncation up to its step).
    let c = Config {
        l1: 2e-3,
        stop: Stop::Steps(500),
        ..config(Loss::Log, 7.5, 1, true)
    };
    let start = Start::warm(Iterate {
        weights: (0..40).map(|j| (j as f64 * 0.37).sin()).collect(),
        bias: 0.5,
    });
    let a = fit_from(&data, Algorithm::Sgd, &c, Some(&start), &mut ()).unwrap();
    let b = fit_from(&data, Algorithm::NaiveSgd, &c, Some(&start), &mut ()).unwrap();
    let difference = relative_difference(&a.snapshot.last, &b.snapshot.last);
    assert!(difference <= 1e-9, "warm start: {difference:e}");
    // Stopped and resumed, the run ends where the uninterrupted one does (to rounding).
    let whole = Config {
        l1: 2e-3,
        stop: Stop::Steps(1000),
        ..config(Loss::Log, 7.5, 1, true)
    };
    let first = Config {
        stop: Stop::Steps(400),
        ..whole
    };
    let stopped = fit(&data, Algorithm::Sgd, &first, &mut ())
        .unwrap()
        .snapshot;
    let start = Start {
        snapshot: stopped,
        steps: 400,
        drawn: 400,
    };
    let rest = Config {
        stop: Stop::Steps(600),
        ..whole
    };
    let resumed = fit_from(&data, Algorithm::Sgd, &rest, Some(&start), &mut ()).unwrap();
    let uninterrupted = fit(&data, Algorithm::Sgd, &whole, &mut ())
        .unwrap()
        .snapshot;
    let difference = relative_difference(&resumed.snapshot.last, &uninterrupted.last);
    assert!(difference <= 1e-9, "resumed: {difference:e}");
    // Without the term the result is SGD's, bit for bit; ASGD has none.
    let plain = config(Loss::Log, 7.5, 1, true);
    let zero = Config { l1: 0.0, ..plain };
    assert_eq!(
        fit(&data, Algorithm::Sgd, &plain, &mut ())
            .unwrap()
            .snapshot,
        fit(&data, Algorithm::Sgd, &zero, &mut ()).unwrap().snapshot
    );
    let e = fit(
        &data,
        Algorithm::Asgd,
        &Config { l1: 1e-3, ..plain },
        &mut (),
    )
    .unwrap_err();
    assert!(
        matches!(e, ConfigError::L1Algorithm(Algorithm::Asgd)),
        "{e}"
    );
    let e = fit(
        &data,
        Algorithm::Sgd,
        &Config { l1: -1.0, ..plain },
        &mut (),
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::L1(_)), "{e}");
}
