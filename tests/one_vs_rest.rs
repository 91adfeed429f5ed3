//! One-vs-rest training (`Trainer::train_one_vs_rest`): each class's model is the binary model
//! of the class against the rest, and on real data the classifier reaches liblinear's
//! multiclass optima.

mod real_data;

use real_data::data_dir;
use sparselin::api::{self, ExampleSet, Examples, Learner, Loss, Trainer, ValueVec};
use sparselin::batch::Algorithm;
use sparselin::data::libsvm::{ParseOptions, ValueType};
use sparselin::data::{ClassVsRest, open_examples};
use sparselin::loss::{ClassWeighting, ClassWeights};
use sparselin::metrics;
use sparselin::online;

/// Four classes labelled −1, 0, 2 and 7, each around its own corner of six features, with
/// noise features; rows come in a mixed order.
fn four_classes(rows: usize) -> (Vec<f64>, Vec<u64>, Vec<u32>, Vec<f64>) {
    let classes = [2.0, -1.0, 7.0, 0.0];
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for i in 0..rows {
        let k = (i * 7 + i / 5) % 4;
        labels.push(classes[k]);
        let jitter = ((i * 37) % 11) as f64 / 11.0 - 0.5;
        indices.extend([k as u32, (k + 1) as u32 % 6, 6 + (i % 9) as u32]);
        values.extend([1.0 + 0.5 * jitter, 0.3 - jitter, 0.2]);
        offsets.push(indices.len() as u64);
    }
    (labels, offsets, indices, values)
}

fn set((labels, offsets, indices, values): (Vec<f64>, Vec<u64>, Vec<u32>, Vec<f64>)) -> ExampleSet {
    api::from_csr(labels, offsets, indices, ValueVec::F64(values), 15).unwrap()
}

/// A copy of the rows of `raw` labelled +1 where the label is `class` and −1 elsewhere: the
/// binary problem written out, which the one-vs-rest view must equal.
fn relabelled_copy(raw: &(Vec<f64>, Vec<u64>, Vec<u32>, Vec<f64>), class: f64) -> ExampleSet {
    let labels = raw.0.iter().map(|&y| if y == class { 1.0 } else { -1.0 });
    set((
        labels.collect(),
        raw.1.clone(),
        raw.2.clone(),
        raw.3.clone(),
    ))
}

/// The learners one-vs-rest runs, with the settings that make each deterministic (one
/// Hogwild worker).
fn trainers() -> Vec<Trainer> {
    let online = |a| {
        Trainer::new(Learner::Online(a))
            .lambda(1e-3)
            .epochs(3)
            .threads(1)
    };
    let batch = |a| {
        Trainer::new(Learner::Batch(a))
            .lambda(1e-3)
            .max_iterations(50)
    };
    vec![
        online(online::Algorithm::Sgd),
        online(online::Algorithm::Asgd).loss(Loss::Log),
        online(online::Algorithm::Casgd),
        online(online::Algorithm::NaiveAsgd),
        batch(Algorithm::SubLbfgs),
        batch(Algorithm::Lbfgs).loss(Loss::Log),
        batch(Algorithm::Dcd).loss(Loss::SquaredHinge),
        batch(Algorithm::SubGd),
        // Its classes share one column-major copy of the data, a binary run builds its own.
        batch(Algorithm::Cd).loss(Loss::Log).l1(1e-3),
    ]
}

#[test]
fn each_class_s_model_is_the_binary_model_of_a_relabelled_copy() {
    let raw = four_classes(240);
    let data = set(raw.clone());
    let sample_weights: Vec<f64> = (0..240).map(|i| (i % 4) as f64 * 0.5).collect();
    for trainer in trainers() {
        // Bit for bit with each class in passes of its own (one pass: the next test).
        let trainer = trainer.classes_in_one_pass(false);
        for weighted in [false, true] {
            let trainer = match weighted {
                true => trainer.clone().sample_weights(sample_weights.clone()),
                false => trainer.clone(),
            };
            let trained = trainer.train_one_vs_rest(&data, &mut ()).unwrap();
            let classifier = &trained.classifier;
            assert_eq!(classifier.classes(), [-1.0, 0.0, 2.0, 7.0]);
            for (&class, model) in classifier.classes().iter().zip(classifier.models()) {
                let copy = relabelled_copy(&raw, class);
                let binary = trainer.train(&copy).unwrap();
                let what = format!(
                    "{} (weighted: {weighted}), class {class}",
                    binary.info.algorithm
                );
                assert_eq!(model.weights, binary.weights, "{what}");
                assert_eq!(model.bias, binary.bias, "{what}");
                assert_eq!(model.loss, binary.loss, "{what}");
            }
        }
    }
}

/// SGD, ASGD and CASGD train one-vs-rest's classes in one pass by default: each class takes the
/// steps it takes in passes of its own (to rounding: its dot products are summed in another
/// order), with sample and class weights too, and its model does not depend on the classes
/// that share its pass (2 groups of 2 classes, or 4 of 1, give the same bits as one group of 4).
#[test]
fn classes_in_one_pass_take_the_steps_each_class_takes_alone() {
    let data = set(four_classes(240));
    let sample_weights: Vec<f64> = (0..240).map(|i| (i % 4) as f64 * 0.5).collect();
    let algorithms = [
        online::Algorithm::Sgd,
        online::Algorithm::Asgd,
        online::Algorithm::Casgd,
    ];
    for algorithm in algorithms {
        for (loss, weighted) in [
            (Loss::Hinge, false),
            (Loss::Log, false),
            (Loss::Hinge, true),
        ] {
            let trainer = Trainer::new(Learner::Online(algorithm))
                .loss(loss)
                .lambda(1e-3)
                .epochs(3)
                .threads(1);
            let trainer = match weighted {
                true => (trainer.sample_weights(sample_weights.clone()))
                    .class_weights("7=3,-1=0.25".parse().unwrap()),
                false => trainer,
            };
            let what = format!("{algorithm}, {loss}, weighted: {weighted}");
            let train = |trainer: Trainer| trainer.train_one_vs_rest(&data, &mut ()).unwrap();
            let joint = train(trainer.clone()).classifier;
            let apart = train(trainer.clone().classes_in_one_pass(false)).classifier;
            let mut largest = 0.0_f64;
            for (a, b) in joint.models().iter().zip(apart.models()) {
                assert_eq!(a.info.details["one_pass_classes"], 4, "{what}");
                assert!(!b.info.details.contains_key("one_pass_classes"), "{what}");
                assert_eq!(a.info.class_weights, b.info.class_weights, "{what}");
                let scale = b.weights.iter().fold(b.bias.abs(), |m, w| m.max(w.abs()));
                assert!(scale > 0.1, "{what}: nothing learned");
                let pairs = a.weights.iter().zip(&b.weights).chain([(&a.bias, &b.bias)]);
                for (x, y) in pairs {
                    largest = largest.max((x - y).abs() / scale);
                }
            }
            assert!(
                largest <= 1e-12,
                "{what}: differs by {largest:e} of the largest weight"
            );
            for threads in [2, 4] {
                let groups = train(trainer.clone().threads(threads)).classifier;
                for (a, b) in joint.models().iter().zip(groups.models()) {
                    assert_eq!((&a.weights, a.bias), (&b.weights, b.bias), "{what}");
                    assert_eq!(b.info.details["one_pass_classes"], 4 / threads, "{what}");
                }
            }
        }
    }
}

#[test]
fn class_weights_weigh_each_class_s_rows_in_its_problem_and_the_rest_1() {
    let raw = four_classes(240);
    let data = set(raw.clone());
    let online = Trainer::new(Learner::Online(online::Algorithm::Asgd))
        .threads(1)
        .classes_in_one_pass(false);
    let batch = Trainer::new(Learner::Batch(Algorithm::SubLbfgs)).max_iterations(50);
    // Balanced: m/(K·m_k) for class k; by label: the weight named, 1 for a class not named.
    let balanced = |class: f64| {
        let rows = raw.0.iter().filter(|&&y| y == class).count();
        240.0 / (4.0 * rows as f64)
    };
    let by_label = |class: f64| match class {
        7.0 => 3.0,
        -1.0 => 0.25,
        _ => 1.0,
    };
    let weightings: [(ClassWeighting, &dyn Fn(f64) -> f64); 2] = [
        (ClassWeighting::Balanced, &balanced),
        ("7=3,-1=0.25".parse().unwrap(), &by_label),
    ];
    for (trainer, (weighting, own_weight)) in [online, batch].into_iter().zip(weightings) {
        let trainer = trainer.lambda(1e-3);
        let weighted = trainer.clone().class_weights(weighting);
        let classifier = weighted
            .train_one_vs_rest(&data, &mut ())
            .unwrap()
            .classifier;
        for (&class, model) in classifier.classes().iter().zip(classifier.models()) {
            let weights = ClassWeights::new(own_weight(class), 1.0).unwrap();
            assert_eq!(model.info.class_weights, weights);
            let copy = relabelled_copy(&raw, class);
            let binary = trainer
                .clone()
                .class_weights(ClassWeighting::Fixed(weights));
            let binary = binary.train(&copy).unwrap();
            assert_eq!((&model.weights, model.bias), (&binary.weights, binary.bias));
        }
        // The evaluation's objective is the weighted one training minimized.
        let evaluation = api::evaluate_one_vs_rest(&classifier, &data, None).unwrap();
        for (c, model) in evaluation.classes.iter().zip(classifier.models()) {
            let view = ClassVsRest::new(&data, c.class);
            let weights = model.weights_for(data.n_features(), None);
            let loss = model.weighted_loss().unwrap();
            let direct = metrics::objective(
                loss,
                metrics::Penalty::l2(1e-3, true),
                &weights,
                model.bias,
                &view,
            );
            assert_eq!(c.one_vs_rest.objective, direct);
        }
    }
}

#[test]
fn the_classifier_predicts_the_class_of_highest_score_and_learns_the_classes() {
    let data = set(four_classes(400));
    let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs))
        .loss(Loss::Log)
        .lambda(1e-4);
    let classifier = trainer
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    let scores = api::class_scores(&classifier, &data);
    let predicted = api::predict_classes(&classifier, &data);
    let probabilities = api::class_probabilities(&classifier, &data).unwrap();
    for i in 0..data.n_rows() {
        let row: Vec<f64> = scores.iter().map(|column| column[i]).collect();
        let best = (0..4).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
        assert_eq!(predicted[i], classifier.classes()[best]);
        let p = &probabilities[i];
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let most_likely = (0..4).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap();
        assert_eq!(most_likely, best, "the logistic is increasing");
    }
    let evaluation = api::evaluate_one_vs_rest(&classifier, &data, None).unwrap();
    assert!(evaluation.error_rate < 0.05, "{}", evaluation.error_rate);
    let labels = metrics::labels(&data);
    let wrong = predicted
        .iter()
        .zip(&labels)
        .filter(|(p, y)| p != y)
        .count();
    assert_eq!(evaluation.error_rate, wrong as f64 / 400.0);
    // Each class's binary evaluation is its model's objective on the class against the rest.
    for (c, model) in evaluation.classes.iter().zip(classifier.models()) {
        let view = ClassVsRest::new(&data, c.class);
        let weights = model.weights_for(data.n_features(), None);
        let direct = metrics::objective(
            model.loss,
            metrics::Penalty::l2(1e-4, true),
            &weights,
            model.bias,
            &view,
        );
        assert_eq!(c.one_vs_rest.objective, direct);
        assert_eq!(c.rows, labels.iter().filter(|&&y| y == c.class).count());
    }
    // Two Hogwild workers learn the classes too; a hinge classifier gives no probabilities.
    let hinge = Trainer::new(Learner::ASGD).lambda(1e-4).threads(2);
    let classifier = hinge.train_one_vs_rest(&data, &mut ()).unwrap().classifier;
    let evaluation = api::evaluate_one_vs_rest(&classifier, &data, None).unwrap();
    assert!(evaluation.error_rate < 0.05, "{}", evaluation.error_rate);
    assert!(api::class_probabilities(&classifier, &data).is_none());
}

#[test]
fn what_one_vs_rest_does_not_take_is_refused() {
    let data = set(four_classes(40));
    let refusal = |trainer: Trainer| {
        trainer
            .train_one_vs_rest(&data, &mut ())
            .unwrap_err()
            .to_string()
    };
    let asgd = || Trainer::new(Learner::ASGD).threads(1);
    assert!(refusal(asgd().loss(Loss::Squared)).contains("squared loss is a regression"));
    let aerr = Trainer::new(Learner::AttributeEfficient(sparselin::lao::Algo::Aerr));
    assert!(refusal(aerr).contains("aerr is a regression"));
    let fixed = ClassWeights::new(2.0, 1.0).unwrap();
    let weighted = asgd().class_weights(ClassWeighting::Fixed(fixed));
    assert!(refusal(weighted).contains("weighs each class by its label"));
    let unknown = asgd().class_weights("7=2,3=2".parse().unwrap());
    let message = refusal(unknown);
    assert!(
        message.contains("label 3") && message.contains("(-1, 0, 2, 7)"),
        "{message}"
    );
    assert!(refusal(asgd().save_resume(true)).contains("does not take a resume state"));
    let binary = Trainer::new(Learner::ASGD).threads(1).train(&set({
        let (labels, o, i, v) = four_classes(40);
        (
            labels
                .iter()
                .map(|&y| if y > 0.0 { 1.0 } else { -1.0 })
                .collect(),
            o,
            i,
            v,
        )
    }));
    let binary = binary.unwrap();
    assert!(refusal(asgd().initial_model(binary.clone())).contains("an initial model"));
    // Real-valued labels are a regression's, and one class is no classification.
    let (mut labels, o, i, v) = four_classes(40);
    labels[3] = 0.5;
    let error = asgd().train_one_vs_rest(&set((labels, o.clone(), i.clone(), v.clone())), &mut ());
    assert!(
        error
            .unwrap_err()
            .to_string()
            .contains("0.5 is not a whole number")
    );
    let one = set((vec![3.0; 40], o, i, v));
    let error = asgd()
        .train_one_vs_rest(&one, &mut ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("at least two classes, and every label is 3"),
        "{error}"
    );
    // The binary trainer names one-vs-rest when the labels have more than two values.
    let error = asgd().train(&data).unwrap_err().to_string();
    assert!(error.contains("Trainer::train_one_vs_rest"), "{error}");
}

/// spamassassin's training rows labelled by their corpus folder: 1 easy-ham-1, 2 easy-ham-2,
/// 3 hard-ham-1, 4 spam-1, 5 spam-2 (1966, 1103, 205, 400 and 1054 rows).
fn spamassassin_groups(dir: &std::path::Path) -> ExampleSet {
    use std::io::Read;
    let read = |name: &str| {
        let file = std::fs::File::open(data_dir().join("spamassassin").join(name)).unwrap();
        let mut text = String::new();
        flate2::read::GzDecoder::new(file)
            .read_to_string(&mut text)
            .unwrap();
        text
    };
    let groups = ["easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2"];
    let (rows, folders) = (read("train.svm.gz"), read("train.labels_group.txt.gz"));
    let text: String = rows
        .lines()
        .zip(folders.lines())
        .map(|(row, folder)| {
            let class = 1 + groups.iter().position(|&g| g == folder).unwrap();
            let entries = row.split_once(' ').unwrap().1;
            format!("{class} {entries}\n")
        })
        .collect();
    let path = dir.join("groups.svm");
    std::fs::write(&path, text).unwrap();
    let options = ParseOptions {
        zero_based: false,
        value_type: ValueType::F64,
        n_features: Some(172_764),
    };
    open_examples(&path, options).unwrap()
}

/// liblinear 2.4.6's multiclass logistic regression (one-vs-rest, `-s 0`) on the
/// spamassassin folders at λ = 1e-3, each class's optimum of J = λ/2(‖w‖² + b²) + (1/m)Σℓ
/// computed from its model (the bias column regularized, as `-B 1` does):
///
///   liblinear-train -q -s 0 -c 0.21150592216582065 -B 1 -e 1e-10 groups.svm
const LIBLINEAR_LOG_OPTIMA: [f64; 5] = [
    0.537677350336475,
    0.4398010242834882,
    0.15967394299927323,
    0.2595375015369516,
    0.4124081308196106,
];

/// The same with balanced class weights, each class's rows weighing m/(5·m_k) in its
/// problem and the others 1 (liblinear's `-wi` scales class i's C in class i's problem):
///
///   liblinear-train -q -s 0 -c 0.21150592216582065 -B 1 -e 1e-10 -w1 0.4809766022380468
///       -w2 0.857298277425204 -w3 4.612682926829268 -w4 2.364 -w5 0.8971537001897533 groups.svm
const LIBLINEAR_BALANCED_LOG_OPTIMA: [f64; 5] = [
    0.38010135567336956,
    0.40703863494966047,
    0.3386827721912503,
    0.4153935863477874,
    0.3915032843228784,
];

/// The same with class 3's rows weighing 4 in its problem and class 5's 0.5, the other
/// classes' optima unchanged:
///
///   liblinear-train -q -s 0 -c 0.21150592216582065 -B 1 -e 1e-10 -w3 4 -w5 0.5 groups.svm
const LIBLINEAR_BY_LABEL_LOG_OPTIMA: [f64; 5] = [
    LIBLINEAR_LOG_OPTIMA[0],
    LIBLINEAR_LOG_OPTIMA[1],
    0.3190407635455526,
    LIBLINEAR_LOG_OPTIMA[3],
    0.2891874645977333,
];

#[test]
fn lbfgs_one_vs_rest_reaches_liblinear_s_multiclass_optima_on_spamassassin_folders() {
    let dir = tempfile::tempdir().unwrap();
    let data = spamassassin_groups(dir.path());
    let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs))
        .loss(Loss::Log)
        .lambda(1e-3)
        .tolerance(1e-10);
    let classifier = trainer
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    assert_eq!(classifier.classes(), [1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_near_optima(&classifier, &data, LIBLINEAR_LOG_OPTIMA);
    for (weighting, optima) in [
        ("balanced", LIBLINEAR_BALANCED_LOG_OPTIMA),
        ("3=4,5=0.5", LIBLINEAR_BY_LABEL_LOG_OPTIMA),
    ] {
        let weighted = trainer.clone().class_weights(weighting.parse().unwrap());
        let classifier = weighted
            .train_one_vs_rest(&data, &mut ())
            .unwrap()
            .classifier;
        assert_near_optima(&classifier, &data, optima);
    }
}

/// scikit-learn 1.9.1's multinomial `LogisticRegression` on the spamassassin folders at
/// λ = 1e-3, the bias a column of ones (as `-B 1`, regularized), J = λ/2‖W‖² + (1/m)Σ(log
/// Σ_k e^(z_ik) − z_(i,y_i)) computed from its coefficients:
///
///   LogisticRegression(C=1/(λm), fit_intercept=False, tol=1e-12, max_iter=100000)
///       .fit(hstack([x, ones]), y)                                    # 81 iterations
const SCIKIT_LEARN_MULTINOMIAL_OPTIMUM: f64 = 1.017900590333437;

#[test]
fn multinomial_lbfgs_reaches_scikit_learn_s_optimum_on_spamassassin_folders() {
    let dir = tempfile::tempdir().unwrap();
    let data = spamassassin_groups(dir.path());
    let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs))
        .loss(Loss::Log)
        .lambda(1e-3)
        .tolerance(1e-12)
        .multinomial(true);
    let classifier = trainer
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    assert!(classifier.is_multinomial());
    let details = &classifier.models()[0].info.details;
    let objective = details["objective"].as_f64().unwrap();
    let relative =
        (objective - SCIKIT_LEARN_MULTINOMIAL_OPTIMUM) / SCIKIT_LEARN_MULTINOMIAL_OPTIMUM;
    assert!(relative.abs() < 1e-8, "{objective} ({relative:e})");
    assert_eq!(details["stop"], "converged");
}

/// liblinear 2.3's Crammer–Singer multiclass SVM (`-s 4`) on the spamassassin folders at
/// λ = 0.1, J = λ/2‖W‖² + (1/m)Σ(max_k (w_k·x_i + [k ≠ y_i]) − w_{y_i}·x_i) computed from its
/// model (the bias a column of ones, regularized; 3,516 iterations, 18 s):
///
///   liblinear-train -s 4 -c 0.0021150592216582064 -B 1 -e 1e-10 groups.svm
const LIBLINEAR_CRAMMER_SINGER_OPTIMUM: f64 = 0.9896545920453859;

/// dcd's Crammer–Singer solve certifies itself within the default 1e-9 of J*, and so lands
/// within that of liblinear's optimum (which J* cannot exceed).
#[test]
fn crammer_singer_reaches_liblinear_s_optimum_on_spamassassin_folders() {
    let dir = tempfile::tempdir().unwrap();
    let data = spamassassin_groups(dir.path());
    let trainer = Trainer::new(Learner::Batch(Algorithm::Dcd))
        .loss(Loss::Hinge)
        .lambda(0.1)
        .crammer_singer(true);
    let classifier = (trainer.train_one_vs_rest(&data, &mut ()).unwrap()).classifier;
    assert!(classifier.is_crammer_singer() && classifier.kind() == "crammer-singer");
    let details = &classifier.models()[0].info.details;
    assert_eq!(details["stop"], "converged");
    let objective = details["objective"].as_f64().unwrap();
    let relative =
        (objective - LIBLINEAR_CRAMMER_SINGER_OPTIMUM) / LIBLINEAR_CRAMMER_SINGER_OPTIMUM;
    assert!(
        (-1e-9..=1e-9 * (1.0 + 1e-6)).contains(&relative),
        "{objective} ({relative:e})"
    );
}

/// Each class's objective within 1e-8 (relative) of liblinear's optimum for it.
fn assert_near_optima(classifier: &api::OneVsRest, data: &ExampleSet, optima: [f64; 5]) {
    let evaluation = api::evaluate_one_vs_rest(classifier, data, None).unwrap();
    for (c, optimum) in evaluation.classes.iter().zip(optima) {
        let objective = c.one_vs_rest.objective;
        let relative = (objective - optimum) / optimum;
        assert!(
            relative.abs() < 1e-8,
            "class {}: {objective} vs {optimum}",
            c.class
        );
    }
}

#[test]
fn the_classifier_is_the_same_whatever_the_classes_run_on() {
    let data = set(four_classes(240));
    let asgd = || Trainer::new(Learner::ASGD).lambda(1e-3).epochs(2);
    let sublbfgs = || {
        Trainer::new(Learner::Batch(Algorithm::SubLbfgs))
            .lambda(1e-3)
            .max_iterations(40)
    };
    // One thread in all (one class at a time), or 2, 3 or 4 classes at once, each on one;
    // a batch solver also on 8 threads, 2 for each class; an online learner without Hogwild
    // workers on one thread per class, whatever the budget.
    let naive = || Trainer::new(Learner::Online(online::Algorithm::NaiveSgd)).epochs(2);
    let runs = [
        (
            asgd(),
            vec![asgd().threads(1), asgd().threads(2), asgd().threads(4)],
        ),
        (naive(), vec![naive().threads(3), naive().threads(8)]),
        (
            sublbfgs().threads(1),
            vec![sublbfgs(), sublbfgs().threads(3), sublbfgs().threads(8)],
        ),
    ];
    for (reference, others) in runs {
        let expected = reference
            .train_one_vs_rest(&data, &mut ())
            .unwrap()
            .classifier;
        for other in others {
            let got = other.train_one_vs_rest(&data, &mut ()).unwrap().classifier;
            for (a, b) in expected.models().iter().zip(got.models()) {
                assert_eq!((&a.weights, a.bias), (&b.weights, b.bias), "{other:?}");
            }
        }
    }
}

#[test]
fn cross_validation_deals_each_class_evenly_and_scores_every_row_once() {
    let data = set(four_classes(240));
    let labels = metrics::labels(&data);
    let trainer = Trainer::new(Learner::Batch(Algorithm::Dcd)).lambda(1e-3);
    let folds = 4;
    let validation = trainer
        .cross_validate_one_vs_rest(&data, folds, |_, _| {})
        .unwrap();
    assert_eq!(validation.folds.len(), folds);
    let mut wrong_in_folds = 0.0;
    for fold in &validation.folds {
        assert_eq!(fold.train_rows + fold.held_out.rows, 240);
        for class in &fold.held_out.classes {
            let all = labels.iter().filter(|&&y| y == class.class).count();
            let share = all as f64 / folds as f64;
            assert!(
                (class.rows as f64 - share).abs() < 1.0,
                "{} of {all}",
                class.rows
            );
        }
        wrong_in_folds += fold.held_out.error_rate * fold.held_out.rows as f64;
    }
    let predictions = &validation.held_out_predictions;
    let wrong = predictions
        .iter()
        .zip(&labels)
        .filter(|(p, y)| p != y)
        .count();
    assert_eq!(wrong as f64, wrong_in_folds.round());
    assert!(validation.mean_error_rate() < 0.05);
    assert!(validation.mean_macro_f1().unwrap() > 0.95);
    // The seed deals the folds: the same seed, the same result.
    let again = trainer.cross_validate_one_vs_rest(&data, folds, |_, _| {});
    assert_eq!(again.unwrap(), validation);
    // A class of one row is in no fold's training but its own: there, an error.
    let (mut labels, o, i, v) = four_classes(240);
    labels[5] = 11.0;
    let odd = set((labels, o, i, v));
    let validation = trainer.cross_validate_one_vs_rest(&odd, folds, |_, _| {});
    let unknown: usize = (validation.unwrap().folds.iter())
        .map(|f| f.held_out.unknown_labels)
        .sum();
    assert_eq!(unknown, 1);
    // A weight for that class weighs it where it trains; a weight for no class is refused.
    let weighted = trainer.clone().class_weights("11=5".parse().unwrap());
    assert!(
        weighted
            .cross_validate_one_vs_rest(&odd, folds, |_, _| {})
            .is_ok()
    );
    let weighted = trainer.class_weights("12=5".parse().unwrap());
    let error = weighted.cross_validate_one_vs_rest(&odd, folds, |_, _| {});
    assert!(error.unwrap_err().to_string().contains("label 12"));
}

#[test]
fn multinomial_probabilities_are_the_softmax_and_weights_scale_the_rows() {
    let data = set(four_classes(200));
    let lbfgs = |lambda: f64| {
        Trainer::new(Learner::Batch(Algorithm::Lbfgs))
            .loss(Loss::Log)
            .lambda(lambda)
            .tolerance(1e-14)
            .multinomial(true)
    };
    let classifier = lbfgs(1e-2)
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    assert_eq!(classifier.classes(), [-1.0, 0.0, 2.0, 7.0]);
    let scores = api::class_scores(&classifier, &data);
    let probabilities = api::class_probabilities(&classifier, &data).unwrap();
    let predictions = api::predict_classes(&classifier, &data);
    for (i, p) in probabilities.iter().enumerate() {
        let row: Vec<f64> = scores.iter().map(|s| s[i]).collect();
        let total: f64 = row.iter().map(|s| s.exp()).sum();
        for (k, &pk) in p.iter().enumerate() {
            assert!(
                (pk - row[k].exp() / total).abs() < 1e-12,
                "row {i} class {k}"
            );
        }
        assert_eq!(predictions[i], classifier.prediction(&row));
    }
    // Every class weighing 2 is the unweighted objective at λ/2, doubled: the same models.
    let doubled = lbfgs(1e-2).class_weights("-1=2,0=2,2=2,7=2".parse().unwrap());
    let doubled = doubled
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    let halved = lbfgs(5e-3)
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    for (a, b) in doubled.models().iter().zip(halved.models()) {
        for (x, y) in a.weights.iter().zip(&b.weights).chain([(&a.bias, &b.bias)]) {
            assert!((x - y).abs() < 1e-7, "{x} vs {y}");
        }
    }
    // And so do sample weights of 2.
    let sampled = lbfgs(1e-2).sample_weights(vec![2.0; 200]);
    let sampled = sampled
        .train_one_vs_rest(&data, &mut ())
        .unwrap()
        .classifier;
    for (a, b) in sampled.models().iter().zip(halved.models()) {
        assert!((a.bias - b.bias).abs() < 1e-7);
    }
    // Refused: another loss or solver, binary training, another rank.
    let refusal = |trainer: Trainer| {
        trainer
            .train_one_vs_rest(&data, &mut ())
            .unwrap_err()
            .to_string()
    };
    assert!(refusal(lbfgs(1e-2).loss(Loss::SquaredHinge)).contains("a loss other than log"));
    let asgd = refusal(Trainer::new(Learner::ASGD).multinomial(true));
    assert!(
        asgd.contains("multinomial does not apply to asgd"),
        "{asgd}"
    );
    let binary = relabelled_copy(&four_classes(200), 7.0);
    let error = lbfgs(1e-2).train(&binary).unwrap_err().to_string();
    assert!(
        error.contains("fits more than two classes together"),
        "{error}"
    );
}
