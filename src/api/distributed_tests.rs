//! One-vs-rest training across ranks ([`Trainer::train_one_vs_rest_across`], on
//! [`crate::dist::threads`]) against the single-process classifier and the binary runs of
//! relabelled shares.

use std::ops::Range;

use super::*;
use crate::dist::{Reducer, threads};
use crate::loss::{ClassWeighting, ClassWeights};

/// Rows of three classes (1, 2 and 5), each around its own feature, with noise features;
/// rows `range` of them.
fn rows(range: Range<usize>, relabel: impl Fn(f64) -> f64) -> ExampleSet {
    let classes = [1.0, 2.0, 5.0];
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for i in range {
        let k = (i * 7 + i / 5) % 3;
        let jitter = ((i * 37) % 11) as f64 / 11.0 - 0.5;
        labels.push(relabel(classes[k]));
        indices.extend([k as u32, 3 + (i % 4) as u32]);
        values.extend([1.0 + 0.6 * jitter, 0.4 - jitter]);
        offsets.push(indices.len() as u64);
    }
    from_csr(labels, offsets, indices, ValueVec::F64(values), 7).unwrap()
}

/// Rank `rank`'s rows of `m` cut into `ranks` shares.
fn share(m: usize, rank: usize, ranks: usize) -> Range<usize> {
    m * rank / ranks..m * (rank + 1) / ranks
}

#[test]
fn every_rank_trains_each_class_as_the_binary_run_of_its_relabelled_share() {
    let m = 300;
    let asgd = Trainer::new(Learner::ASGD)
        .lambda(1e-3)
        .epochs(3)
        .threads(1);
    let lbfgs = Trainer::new(Learner::Batch(batch::Algorithm::Lbfgs))
        .loss(Loss::Log)
        .lambda(1e-3)
        .tolerance(1e-12);
    for trainer in [asgd, lbfgs] {
        for ranks in [2, 3] {
            let runs = threads::run(ranks, |r| {
                let own = rows(share(m, r.rank(), ranks), |y| y);
                let classifier = (trainer.train_one_vs_rest_across(&own, r, &mut ()))
                    .unwrap()
                    .classifier;
                // Each class, as a binary problem on the same shares.
                let binary: Vec<Model> = (classifier.classes().iter())
                    .map(|&class| {
                        let relabelled = rows(share(m, r.rank(), ranks), |y| {
                            if y == class { 1.0 } else { -1.0 }
                        });
                        trainer.train_across(&relabelled, r, &mut ()).unwrap().model
                    })
                    .collect();
                (classifier, binary)
            });
            for (classifier, binary) in &runs {
                assert_eq!(classifier, &runs[0].0, "{ranks} ranks disagree");
                assert_eq!(classifier.classes(), [1.0, 2.0, 5.0]);
                for (model, binary) in classifier.models().iter().zip(binary) {
                    assert_eq!((&model.weights, model.bias), (&binary.weights, binary.bias));
                }
            }
        }
    }
}

#[test]
fn batch_classes_across_ranks_reach_the_single_process_optima() {
    let m = 300;
    let trainer = Trainer::new(Learner::Batch(batch::Algorithm::Lbfgs))
        .loss(Loss::Log)
        .lambda(1e-3)
        .tolerance(1e-12)
        .class_weights(ClassWeighting::Balanced);
    let whole = rows(0..m, |y| y);
    let single = trainer
        .train_one_vs_rest(&whole, &mut ())
        .unwrap()
        .classifier;
    let optima = evaluate_one_vs_rest(&single, &whole, None).unwrap();
    let runs = threads::run(3, |r| {
        let own = rows(share(m, r.rank(), 3), |y| y);
        trainer.train_one_vs_rest_across(&own, r, &mut ()).unwrap()
    });
    let classifier = &runs[0].classifier;
    let reached = evaluate_one_vs_rest(classifier, &whole, None).unwrap();
    for ((across, once), model) in reached
        .classes
        .iter()
        .zip(&optima.classes)
        .zip(classifier.models())
    {
        // Balanced weights from every rank's rows: m/(K·m_k) with the totals.
        let own = m as f64 / (3.0 * once.rows as f64);
        assert_eq!(
            model.info.class_weights,
            ClassWeights::new(own, 1.0).unwrap()
        );
        let (a, b) = (across.one_vs_rest.objective, once.one_vs_rest.objective);
        assert!(
            (a - b).abs() <= 1e-10 * b,
            "class {}: {a} vs {b}",
            across.class
        );
    }
}

#[test]
fn classes_are_every_rank_s_labels_and_a_bad_one_is_refused_everywhere() {
    let trainer = Trainer::new(Learner::Batch(batch::Algorithm::SubLbfgs)).max_iterations(20);
    // Rank 0 holds classes 1 and 2 only, rank 1 class 5 only.
    let results = threads::run(2, |r| {
        let own = match r.rank() {
            0 => rows(0..30, |y| if y == 5.0 { 1.0 } else { y }),
            _ => rows(0..10, |_| 5.0),
        };
        trainer
            .train_one_vs_rest_across(&own, r, &mut ())
            .unwrap()
            .classifier
    });
    assert_eq!(results[0].classes(), [1.0, 2.0, 5.0]);
    // The same models (their details count each rank's own passes).
    let weights = |c: &OneVsRest| -> Vec<(Vec<f64>, f64)> {
        (c.models().iter())
            .map(|m| (m.weights.clone(), m.bias))
            .collect()
    };
    assert_eq!(weights(&results[0]), weights(&results[1]));
    // A label that is no class number on one rank: every rank says so, none hangs.
    let errors = threads::run(3, |r| {
        let own = rows(0..30, |y| if r.rank() == 2 && y == 2.0 { 2.5 } else { y });
        let error = trainer
            .train_one_vs_rest_across(&own, r, &mut ())
            .unwrap_err();
        error.to_string()
    });
    for error in errors {
        assert!(error.contains("2.5 is not a whole number"), "{error}");
    }
    // Fewer than two classes over all ranks.
    let errors = threads::run(2, |r| {
        let own = rows(0..10, |_| 5.0);
        trainer
            .train_one_vs_rest_across(&own, r, &mut ())
            .unwrap_err()
            .to_string()
    });
    assert!(
        errors.iter().all(|e| e.contains("every label is 5")),
        "{errors:?}"
    );
}

#[test]
fn more_than_two_labels_counts_every_rank_s_values() {
    type Relabel = fn(f64) -> f64;
    let across = |relabel: [Relabel; 2]| {
        threads::run(2, |r| {
            let own = rows(0..30, relabel[r.rank()]);
            super::more_than_two_labels_across(&own, r)
        })
    };
    // {1, 2} and {2, 5}: three values over the ranks, two on each.
    let three = across([
        |y| if y == 5.0 { 2.0 } else { y },
        |y| if y == 1.0 { 2.0 } else { y },
    ]);
    assert_eq!(three, [true, true]);
    let binary = across([|y| if y == 1.0 { 1.0 } else { -1.0 }, |_| 1.0]);
    assert_eq!(binary, [false, false]);
    // -0 is 0.
    let zeros = across([
        |y| if y == 1.0 { 0.0 } else { 1.0 },
        |y| if y == 1.0 { -0.0 } else { 1.0 },
    ]);
    assert_eq!(zeros, [false, false]);
}

#[test]
fn multinomial_across_ranks_reaches_the_single_process_optimum() {
    let m = 300;
    let trainer = Trainer::new(Learner::Batch(batch::Algorithm::Lbfgs))
        .loss(Loss::Log)
        .lambda(1e-3)
        .tolerance(1e-14)
        .multinomial(true)
        .class_weights("2=3".parse().unwrap());
    let whole = rows(0..m, |y| y);
    let single = trainer
        .train_one_vs_rest(&whole, &mut ())
        .unwrap()
        .classifier;
    let objective = |c: &OneVsRest| c.models()[0].info.details["objective"].as_f64().unwrap();
    for ranks in [2, 3] {
        let runs = threads::run(ranks, |r| {
            let own = rows(share(m, r.rank(), ranks), |y| y);
            trainer
                .train_one_vs_rest_across(&own, r, &mut ())
                .unwrap()
                .classifier
        });
        for run in &runs {
            assert!(run.is_multinomial());
            let (a, b) = (objective(run), objective(&single));
            assert!((a - b).abs() <= 1e-10 * b, "{ranks} ranks: {a} vs {b}");
            for (model, once) in run.models().iter().zip(single.models()) {
                for (x, y) in model.weights.iter().zip(&once.weights) {
                    assert!((x - y).abs() < 1e-6, "{x} vs {y}");
                }
            }
            // The same models on every rank.
            for (model, first) in run.models().iter().zip(runs[0].models()) {
                assert_eq!((&model.weights, model.bias), (&first.weights, first.bias));
            }
        }
    }
}

/// SGD, ASGD and CASGD train one-vs-rest's classes in one pass across the ranks too: each
/// class as its separate passes across the ranks make it (to rounding), averaged after every
/// epoch or once at the end, the same classifier on every rank.
#[test]
fn classes_in_one_pass_across_ranks_are_each_class_s_separate_passes() {
    use crate::dist::online::Averaging;
    let m = 300;
    let algorithms = [
        online::Algorithm::Sgd,
        online::Algorithm::Asgd,
        online::Algorithm::Casgd,
    ];
    for algorithm in algorithms {
        for averaging in [Averaging::Epoch, Averaging::End] {
            let trainer = Trainer::new(Learner::Online(algorithm))
                .lambda(1e-3)
                .epochs(3)
                .threads(1)
                .averaging(averaging);
            for ranks in [2, 3] {
                let runs = threads::run(ranks, |r| {
                    let own = rows(share(m, r.rank(), ranks), |y| y);
                    let train = |trainer: &Trainer| {
                        (trainer.train_one_vs_rest_across(&own, r, &mut ()))
                            .unwrap()
                            .classifier
                    };
                    (
                        train(&trainer),
                        train(&trainer.clone().classes_in_one_pass(false)),
                    )
                });
                let what = format!("{algorithm}, averaging {averaging}, {ranks} ranks");
                for (joint, apart) in &runs {
                    assert_eq!(joint, &runs[0].0, "{what}: the ranks disagree");
                    for (a, b) in joint.models().iter().zip(apart.models()) {
                        assert_eq!(a.info.details["one_pass_classes"], 3, "{what}");
                        assert_eq!(a.info.details["averaging"], averaging.to_string());
                        assert_eq!(a.info.details["ranks"], ranks, "{what}");
                        let scale = b.weights.iter().fold(b.bias.abs(), |s, w| s.max(w.abs()));
                        assert!(scale > 0.1, "{what}: nothing learned");
                        let pairs = a.weights.iter().zip(&b.weights).chain([(&a.bias, &b.bias)]);
                        for (x, y) in pairs {
                            assert!((x - y).abs() <= 1e-12 * scale, "{what}: {x} vs {y}");
                        }
                    }
                }
            }
        }
    }
}
