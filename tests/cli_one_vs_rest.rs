//! `sparselin train / predict / eval / show` on data of more than two classes: one model per
//! class against the rest, end to end.

mod cli;

use std::path::Path;
use std::process::{Command, Output};

use cli::{sparselin, stdout};

fn assert_clean_failure(out: &Output, message: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(err.contains(message), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Four classes (−1, 0, 2, 7), each around its own pair of features out of six, with a noise
/// feature; `odd` relabels every 50th row as class 9, which the training data never has.
fn write_classes(path: &Path, rows: usize, odd: bool) {
    let classes = [2, -1, 7, 0];
    let mut text = String::new();
    for i in 0..rows {
        let k = (i * 7 + i / 5) % 4;
        let jitter = ((i * 37) % 11) as f64 / 11.0 - 0.5;
        let label = if odd && i % 50 == 0 { 9 } else { classes[k] };
        // Entries may come in any order in LIBSVM text: they are sorted.
        text.push_str(&format!(
            "{label} {}:{} {}:{} {}:0.2\n",
            k + 1,
            1.0 + 0.5 * jitter,
            (k + 1) % 6 + 1,
            0.3 - jitter,
            7 + i % 9
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn a_classifier_of_four_classes_trains_predicts_evaluates_and_shows() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 400, false);
    write_classes(Path::new(&p("test.svm")), 200, true);
    let (train, test, model) = (p("train.svm"), p("test.svm"), p("c.model"));
    let out = sparselin(&[
        "train", &train, "--algo", "sublbfgs", "--lambda", "1e-3", "--test", &test, "-o", &model,
    ]);
    let summary = stdout(&out);
    assert!(summary.contains("one-vs-rest over 4 classes"), "{summary}");
    assert!(
        summary.contains("class 7: 80 rows, train objective"),
        "{summary}"
    );
    assert!(
        summary.contains(", 4 rows of labels no class has"),
        "{summary}"
    );
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(
        progress.contains("class -1 against the rest (1 of 4)"),
        "{progress}"
    );

    // Predictions are classes; scores are a column per class, in the classes' order, and
    // the prediction is the class of the highest.
    let predicted = stdout(&sparselin(&["predict", &model, &test]));
    let scores = stdout(&sparselin(&["predict", &model, &test, "--scores"]));
    let classes = [-1.0, 0.0, 2.0, 7.0];
    for (class, row) in lines(&predicted).iter().zip(lines(&scores)) {
        let row: Vec<f64> = row.split(' ').map(|s| s.parse().unwrap()).collect();
        assert_eq!(row.len(), 4);
        let best = (0..4).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
        assert_eq!(class.parse::<f64>().unwrap(), classes[best]);
    }
    // The error rate counts the predictions that are not the label (class 9 always is).
    let labels: Vec<f64> = std::fs::read_to_string(&test)
        .unwrap()
        .lines()
        .map(|line| line.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let wrong = lines(&predicted)
        .iter()
        .zip(&labels)
        .filter(|(p, y)| p.parse::<f64>().unwrap() != **y)
        .count();
    let eval: serde_json::Value =
        serde_json::from_str(&stdout(&sparselin(&["eval", &model, &test, "--json"]))).unwrap();
    assert_eq!(eval["error_rate"], wrong as f64 / 200.0);
    assert_eq!(eval["unknown_labels"], 4);
    assert_eq!(eval["classes"].as_array().unwrap().len(), 4);
    assert!((4..20).contains(&wrong), "{wrong} of 200 wrong");
    let text = stdout(&sparselin(&["eval", &model, &test]));
    assert!(text.starts_with("rows 200\nerror_rate "), "{text}");
    assert!(text.contains("\nclass 2 rows "), "{text}");
    // Hinge scores are no probabilities.
    let out = sparselin(&["predict", &model, &test, "--probabilities"]);
    assert_clean_failure(
        &out,
        "--probabilities needs a model trained with --loss log",
    );

    // A class whose solver stops early is named in a warning, as a binary model is.
    let early = p("early.model");
    let out = sparselin(&[
        "train",
        &train,
        "--algo",
        "sublbfgs",
        "--max-iter",
        "2",
        "--quiet",
        "-o",
        &early,
    ]);
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains("warning: class 2: sublbfgs stopped before converging"),
        "{warned}"
    );

    let show = stdout(&sparselin(&["show", &model, "--top", "2"]));
    assert!(
        show.contains("one-vs-rest      4 classes: -1 0 2 7"),
        "{show}"
    );
    assert!(show.contains("class 7\n"), "{show}");
    let show: serde_json::Value =
        serde_json::from_str(&stdout(&sparselin(&["show", &model, "--json"]))).unwrap();
    assert_eq!(show["classes"][3]["class"], 7.0);
    assert_eq!(show["features"], 15);
}

#[test]
fn log_loss_gives_each_class_a_probability_and_f32_weights_are_rounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 300, false);
    let (train, model) = (p("train.svm"), p("c.model"));
    let out = sparselin(&[
        "train",
        &train,
        "--algo",
        "lbfgs",
        "--loss",
        "log",
        "--lambda",
        "1e-3",
        "--weights",
        "f32",
        "-o",
        &model,
        "--json",
        "--quiet",
    ]);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["classes"], serde_json::json!([-1.0, 0.0, 2.0, 7.0]));
    assert!(summary["train"]["error_rate"].as_f64().unwrap() < 0.05);
    let probabilities = stdout(&sparselin(&["predict", &model, &train, "--probabilities"]));
    for row in lines(&probabilities) {
        let p: Vec<f64> = row.split(' ').map(|s| s.parse().unwrap()).collect();
        assert_eq!(p.len(), 4);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{row}");
    }
    // The summary describes the model as written: its f32 weights score the same error.
    let eval: serde_json::Value =
        serde_json::from_str(&stdout(&sparselin(&["eval", &model, &train, "--json"]))).unwrap();
    assert_eq!(eval["error_rate"], summary["train"]["error_rate"]);
    assert_eq!(
        eval["classes"][1]["one_vs_rest"]["objective"],
        summary["train"]["classes"][1]["one_vs_rest"]["objective"]
    );
}

#[test]
fn multinomial_fits_the_classes_together_and_predicts_softmax_probabilities() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 300, false);
    let (train, model) = (p("train.svm"), p("m.model"));
    let args = [
        "train",
        &train,
        "--algo",
        "lbfgs",
        "--loss",
        "log",
        "--multinomial",
    ];
    let out = sparselin(&[&args[..], &["--lambda", "1e-3", "-o", &model]].concat());
    let text = stdout(&out);
    assert!(text.contains("multinomial over 4 classes"), "{text}");
    assert!(text.contains("\ntrain objective "), "{text}");
    assert!(text.contains("class 7: 60 rows, precision "), "{text}");
    // Probabilities: the softmax of the scores, in the classes' order.
    let scores = stdout(&sparselin(&["predict", &model, &train, "--scores"]));
    let probabilities = stdout(&sparselin(&["predict", &model, &train, "--probabilities"]));
    for (scores, probabilities) in lines(&scores).iter().zip(lines(&probabilities)) {
        let numbers =
            |row: &str| -> Vec<f64> { row.split(' ').map(|s| s.parse().unwrap()).collect() };
        let (s, p) = (numbers(scores), numbers(probabilities));
        let total: f64 = s.iter().map(|s| s.exp()).sum();
        for (s, p) in s.iter().zip(&p) {
            assert!(
                (p - s.exp() / total).abs() < 1e-9,
                "{scores} / {probabilities}"
            );
        }
    }
    let show = stdout(&sparselin(&["show", &model]));
    assert!(
        show.contains("multinomial      4 classes: -1 0 2 7"),
        "{show}"
    );
    let cv = stdout(&sparselin(&[&args[..], &["--cv", "3"]].concat()));
    assert!(
        cv.contains("3-fold cross-validation of 300 rows, multinomial"),
        "{cv}"
    );
    let eval = stdout(&sparselin(&["eval", &model, &train]));
    assert!(
        eval.contains("class 2 rows 120 predicted") && !eval.contains("objective"),
        "{eval}"
    );
    // One solve, one warning when it stops early (not one per class).
    let out = sparselin(&[&args[..], &["--max-iter", "2", "-o", &model]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let warning = "warning: multinomial lbfgs stopped before converging (max-iterations after 2";
    assert!(err.contains(warning), "{err}");
    assert_eq!(err.matches("stopped before converging").count(), 1, "{err}");
    // cd fits no multinomial model: no hint at it.
    assert!(!err.contains("--algo cd"), "{err}");
    // Only lbfgs fits it, and only more than two classes.
    let out = sparselin(&[
        "train",
        &train,
        "--algo",
        "sublbfgs",
        "--multinomial",
        "-o",
        &p("x"),
    ]);
    assert_clean_failure(&out, "--multinomial does not apply to --algo sublbfgs");
    std::fs::write(p("binary.svm"), "1 1:1\n-1 2:1\n1 1:0.5\n").unwrap();
    let binary = p("binary.svm");
    let args = [
        "train",
        &binary,
        "--algo",
        "lbfgs",
        "--loss",
        "log",
        "--multinomial",
    ];
    let out = sparselin(&[&args[..], &["-o", &p("x")]].concat());
    assert_clean_failure(&out, "fits more than two classes together");
}

/// `--crammer-singer` fits the classes together by dcd (liblinear's `-s 4`): one objective,
/// one stop, shown and cross-validated as such, and refused where it cannot apply.
#[test]
fn crammer_singer_fits_the_classes_together_by_dcd() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 300, false);
    let (train, model) = (p("train.svm"), p("m.model"));
    let args = ["train", &train, "--algo", "dcd", "--crammer-singer"];
    let out = sparselin(&[&args[..], &["--lambda", "1", "-o", &model, "--json"]].concat());
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let details = &summary["details"][0];
    assert_eq!(details["crammer_singer"], true, "{summary}");
    assert_eq!(details["stop"], "converged", "{summary}");
    assert!(
        summary["train"]["error_rate"].as_f64().unwrap() < 0.2,
        "{summary}"
    );
    let text = stdout(&sparselin(
        &[&args[..], &["--lambda", "1", "-o", &model]].concat(),
    ));
    assert!(
        text.contains("dcd (hinge, λ = 1e0), crammer-singer over 4 classes"),
        "{text}"
    );
    assert!(text.contains("\ntrain objective "), "{text}");
    let show = stdout(&sparselin(&["show", &model]));
    assert!(
        show.contains("crammer-singer   4 classes: -1 0 2 7"),
        "{show}"
    );
    let eval = stdout(&sparselin(&["eval", &model, &train]));
    assert!(!eval.contains("objective"), "{eval}");
    let cv = stdout(&sparselin(&[&args[..], &["--cv", "3"]].concat()));
    assert!(
        cv.contains("3-fold cross-validation of 300 rows, crammer-singer"),
        "{cv}"
    );
    let refused = |extra: &[&str], message: &str| {
        let out = sparselin(&[&["train", &train, "-o", &p("x")][..], extra].concat());
        assert_clean_failure(&out, message);
    };
    refused(
        &["--algo", "lbfgs", "--crammer-singer"],
        "--crammer-singer does not apply to --algo lbfgs",
    );
    refused(
        &[
            "--algo",
            "dcd",
            "--loss",
            "squared-hinge",
            "--crammer-singer",
        ],
        "does not take a loss other than hinge",
    );
    std::fs::write(p("binary.svm"), "1 1:1\n-1 2:1\n1 1:0.5\n").unwrap();
    let binary = p("binary.svm");
    let out = sparselin(&[
        "train",
        &binary,
        "--algo",
        "dcd",
        "--crammer-singer",
        "-o",
        &p("x"),
    ]);
    assert_clean_failure(&out, "fits more than two classes together");
}

#[test]
fn a_renumbered_dataset_trains_the_classifier_of_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 300, false);
    let (train, data) = (p("train.svm"), p("data"));
    stdout(&sparselin(&[
        "convert",
        &train,
        &data,
        "--renumber",
        "--quiet",
    ]));
    let args = [
        "--algo",
        "asgd",
        "--threads",
        "1",
        "--epochs",
        "3",
        "--quiet",
    ];
    let (text_model, data_model) = (p("text.model"), p("data.model"));
    let from_text = [&["train", &train, "-o", &text_model][..], &args].concat();
    let from_data = [&["train", &data, "-o", &data_model][..], &args].concat();
    stdout(&sparselin(&from_text));
    stdout(&sparselin(&from_data));
    let scores = |model: &str| stdout(&sparselin(&["predict", model, &train, "--scores"]));
    let (text, renumbered) = (scores(&text_model), scores(&data_model));
    for (a, b) in lines(&text).iter().zip(lines(&renumbered)) {
        let (a, b): (Vec<f64>, Vec<f64>) = (
            a.split(' ').map(|s| s.parse().unwrap()).collect(),
            b.split(' ').map(|s| s.parse().unwrap()).collect(),
        );
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-9 * (1.0 + x.abs()), "{a:?} vs {b:?}");
        }
    }
}

/// SGD, ASGD and CASGD train the classes in one pass by default; on the scalar kernel path (the one
/// whose sums are in row order either way) each class's model is, bit for bit, the one it gets
/// in passes of its own (`--separate-class-passes`), whichever classes share its pass.
#[test]
fn classes_in_one_pass_are_each_class_s_own_model_on_the_scalar_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    stdout(&sparselin(&[
        "gen",
        &p("corpus"),
        "--classes",
        "4",
        "--quiet",
    ]));
    let (train, test) = (p("corpus/train"), p("corpus/test"));
    let scalar = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_sparselin"))
            .args(args)
            .env("SPARSELIN_ISA", "scalar")
            .output()
            .expect("the binary runs");
        stdout(&out)
    };
    for algo in ["sgd", "asgd", "casgd"] {
        let scores = |name: &str, flags: &[&str]| {
            let model = p(&format!("{algo}-{name}.model"));
            let common = [
                "train", &train, "--algo", algo, "--loss", "log", "--epochs", "2",
            ];
            scalar(&[&common[..], flags, &["-o", &model, "--quiet"]].concat());
            let show = scalar(&["show", &model, "--json"]);
            (scalar(&["predict", &model, &test, "--scores"]), show)
        };
        let (apart, apart_show) = scores("apart", &["--threads", "1", "--separate-class-passes"]);
        for (name, threads, group) in [("one", "1", 4), ("two", "2", 2)] {
            let (joint, show) = scores(name, &["--threads", threads]);
            assert_eq!(joint, apart, "{algo} on {threads} threads");
            assert!(
                show.contains(&format!("\"one_pass_classes\": {group}")),
                "{show}"
            );
        }
        assert!(!apart_show.contains("one_pass_classes"), "{apart_show}");
    }
    // A batch solver has no passes to share.
    let model = p("dcd.model");
    let flags = ["--algo", "dcd", "--separate-class-passes", "-o", &model];
    let out = sparselin(&[&["train", &train][..], &flags].concat());
    assert_clean_failure(&out, "--separate-class-passes does not apply to --algo dcd");
    assert!(!Path::new(&model).exists());
}

#[test]
fn flags_one_vs_rest_does_not_take_are_refused_before_any_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 60, false);
    let (train, model, readable, trace) = (p("train.svm"), p("c.model"), p("c.txt"), p("t.csv"));
    let refused = [
        (&["--readable", &readable][..], "--readable"),
        (&["--trace", &trace][..], "--trace"),
        (&["--save-resume"][..], "--save-resume"),
    ];
    for (flags, named) in refused {
        let args = [&["train", &train, "-o", &model][..], flags].concat();
        let out = sparselin(&args);
        assert_clean_failure(
            &out,
            &format!("one-vs-rest), which {named} does not apply to"),
        );
        assert!(!Path::new(&model).exists(), "{named}");
    }
    // Weights name the classes by label: +1 is no class of these.
    let out = sparselin(&["train", &train, "--class-weight", "+1=2", "-o", &model]);
    assert_clean_failure(
        &out,
        "names the label 1, which is not a class of the data (-1, 0, 2, 7)",
    );
    assert!(!Path::new(&model).exists());
    let out = sparselin(&["train", &train, "--class-weight", "balanced", "-o", &model]);
    assert!(stdout(&out).contains("class weights balanced"), "{out:?}");
    // Class 2 has 24 of the 60 rows: 60/(4·24) for its own, 1 for the others.
    let show = stdout(&sparselin(&["show", &model]));
    assert!(
        show.contains("class 2\n  class_weights    +1=0.625,-1=1\n"),
        "{show}"
    );
    // By label, as liblinear's -w7 3 -w-1 0.5: the classes not named are unweighted.
    let args = [
        "train",
        &train,
        "--class-weight",
        "7=3,-1=0.5",
        "-o",
        &model,
    ];
    assert!(stdout(&sparselin(&args)).contains("class weights 7=3,-1=0.5"));
    let show = stdout(&sparselin(&["show", &model]));
    assert!(
        show.contains("class 7\n  class_weights    +1=3,-1=1\n"),
        "{show}"
    );
    assert!(show.contains("class -1\n  class_weights    +1=0.5,-1=1\n"));
    assert_eq!(show.matches("class_weights").count(), 2, "{show}");
    // A one-vs-rest model is no binary model to resume or start from.
    stdout(&sparselin(&["train", &train, "-o", &model, "--quiet"]));
    for flag in ["--resume", "--initial-model"] {
        let out = sparselin(&["train", &train, flag, &model, "-o", &p("next.model")]);
        assert_clean_failure(&out, "holds a one-vs-rest classifier of 4 classes");
    }
    // Sample weights must be one per row, as for a binary model.
    std::fs::write(p("w.txt"), "1\n2\n").unwrap();
    let out = sparselin(&[
        "train",
        &train,
        "--sample-weights",
        &p("w.txt"),
        "-o",
        &p("w.model"),
    ]);
    assert_clean_failure(&out, "w.txt: the weights of the training rows");
}

#[test]
fn cross_validation_reports_each_fold_and_picks_the_lambda_of_lowest_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 200, false);
    let train = p("train.svm");
    let out = stdout(&sparselin(&["train", &train, "--algo", "dcd", "--cv", "4"]));
    let lines = lines(&out);
    assert!(
        lines[0].ends_with(
            "4-fold cross-validation of 200 rows, one-vs-rest, folds stratified by class"
        ),
        "{out}"
    );
    assert!(
        lines[1].starts_with("fold 1: trained on 150 rows, held out 50: error "),
        "{out}"
    );
    assert!(lines[5].starts_with("mean over the folds: error "), "{out}");
    let grid = |values: &str, cold: &[&str]| -> serde_json::Value {
        let args = [
            "train",
            &train,
            "--algo",
            "dcd",
            "--cv",
            "4",
            "--lambda-grid",
            values,
        ];
        let out = stdout(&sparselin(&[&args[..], cold, &["--json"]].concat()));
        serde_json::from_str(&out).unwrap()
    };
    let report = grid("1e2,1e-3", &[]);
    // λ = 100 shrinks every weight towards 0: a worse classifier.
    assert_eq!(report["best_lambda"], 1e-3);
    assert_eq!(report["one_vs_rest"], true);
    let errors: Vec<f64> = (report["grid"].as_array().unwrap().iter())
        .map(|g| g["mean"]["error_rate"].as_f64().unwrap())
        .collect();
    assert!(errors[0] > 0.1 && errors[1] < 0.05, "{errors:?}");
    assert_eq!(report["grid"][1]["folds"].as_array().unwrap().len(), 4);
    // Each class's solve at λ = 1e-3 started from its solution at λ = 100; from zero, the
    // same held-out errors.
    assert_eq!(report["warm_starts"], true);
    let cold = grid("1e-3,1e2", &["--cold-grid"]);
    assert_eq!(cold["warm_starts"], false);
    for k in 0..2 {
        assert_eq!(cold["grid"][k]["lambda"], report["grid"][k]["lambda"]);
        let error = |r: &serde_json::Value| r["grid"][k]["mean"]["error_rate"].clone();
        assert_eq!(error(&cold), error(&report));
    }
}

/// `--l1` trains every class against the rest with the L1 term (each class's model records
/// it, the noise features stay at 0), and cross-validates with it.
#[test]
fn an_l1_term_reaches_every_class_and_cross_validation() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_classes(Path::new(&p("train.svm")), 400, false);
    let (train, model) = (p("train.svm"), p("l1.model"));
    let args = [
        "train", &train, "--algo", "lbfgs", "--loss", "log", "--lambda", "0", "--l1", "0.01",
    ];
    let summary = stdout(&sparselin(&[&args[..], &["-o", &model]].concat()));
    assert!(
        summary.contains("lbfgs (log, λ = 0, λ₁ = 1e-2), one-vs-rest over 4 classes"),
        "{summary}"
    );
    let shown: serde_json::Value =
        serde_json::from_str(&stdout(&sparselin(&["show", &model, "--json"]))).unwrap();
    assert_eq!(shown["l1"], 0.01);
    let readable = stdout(&sparselin(&["show", &model]));
    // Every class's model has weights at exactly 0 (of its 15 features).
    let classes = shown["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 4);
    for class in classes {
        let nonzero = class["nonzero_weights"].as_u64().unwrap();
        assert!((1..15).contains(&nonzero), "{class}\n{readable}");
    }
    let cv = stdout(&sparselin(&[&args[..], &["--cv", "3"]].concat()));
    assert!(cv.contains("λ₁ = 1e-2"), "{cv}");
    let softmax = sparselin(&[&args[..], &["--multinomial", "-o", &model]].concat());
    assert_clean_failure(&softmax, "multinomial logistic regression has no L1 term");
    assert!(cv.contains("3-fold cross-validation of 400 rows"), "{cv}");
}
