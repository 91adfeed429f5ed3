//! `sparselin train --scale max-abs` end to end: the run on scaled features against the same
//! run on features scaled by hand, the model file of the original features, resuming, and
//! one-vs-rest, cross-validation and datasets alike.

mod cli;
mod real_data;

use std::path::Path;

use cli::{run, sparselin, text};
use sparselin::model::{Model, SavedModel};

/// Rows of features of very different scales: a count in the hundreds, a rate in the
/// thousandths, a ±1 flag and a value of a few units, the label a noisy sign of their sum
/// once scaled; column 5 never appears.
fn rows(m: usize) -> Vec<(i32, Vec<(usize, f32)>)> {
    (0..m)
        .map(|i| {
            let u = |s: usize| ((i * s + 7) % 101) as f32 / 101.0;
            let count = (u(13) * 900.0).round() + 1.0;
            let rate = u(29) * 0.004 - 0.001;
            let flag = if i % 3 == 0 { 1.0 } else { -1.0 };
            let units = u(41) * 7.5 - 2.0;
            let z = count / 900.0 - 0.5 + rate * 300.0 + 0.3 * flag + units / 7.5 - 0.2;
            let y = if (z > 0.0) != (i % 17 == 0) { 1 } else { -1 };
            (y, vec![(1, count), (2, rate), (3, flag), (4, units)])
        })
        .collect()
}

/// LIBSVM text of `rows`, each value as `value(j, x)` gives it, printed to round-trip.
fn write(path: &Path, rows: &[(i32, Vec<(usize, f32)>)], value: impl Fn(usize, f32) -> f32) {
    let mut s = String::new();
    for (y, entries) in rows {
        s.push_str(&format!("{y:+}"));
        for &(j, x) in entries {
            s.push_str(&format!(" {j}:{}", value(j, x)));
        }
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

/// k_j of each 1-based feature j: the smallest k with 2^k ≥ the column's largest |value|
/// (0 for an empty column), found by stepping through powers of two.
fn exponents(rows: &[(i32, Vec<(usize, f32)>)], n: usize) -> Vec<i32> {
    let mut max = vec![0.0f64; n + 1];
    for (_, entries) in rows {
        for &(j, x) in entries {
            max[j] = max[j].max(f64::from(x).abs());
        }
    }
    max.iter()
        .map(|&m| {
            if m == 0.0 {
                return 0;
            }
            let mut k = 0;
            while 2f64.powi(k) < m {
                k += 1;
            }
            while 2f64.powi(k - 1) >= m {
                k -= 1;
            }
            k
        })
        .collect()
}

fn model(path: &str) -> Model {
    Model::load(Path::new(path)).unwrap()
}

#[test]
fn a_scaled_run_is_the_run_on_features_scaled_by_hand_with_its_weights_divided() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let data = rows(400);
    let k = exponents(&data, 5);
    assert_eq!(k, [0, 10, -8, 0, 3, 0]);
    write(Path::new(&p("raw.svm")), &data, |_, x| x);
    let by_hand = |j: usize, x: f32| (f64::from(x) / 2f64.powi(k[j])) as f32;
    write(Path::new(&p("scaled.svm")), &data, by_hand);
    for algo in [
        &["--algo", "dcd", "--loss", "hinge"][..],
        &["--algo", "lbfgs", "--loss", "log"],
        &["--algo", "sublbfgs", "--loss", "hinge"],
        &["--algo", "asgd", "--loss", "hinge", "--threads", "1"],
        &["--algo", "sgd", "--loss", "log", "--l1", "1e-4"],
    ] {
        let settings = [algo, &["--lambda", "1e-3", "--features", "5", "--quiet"]].concat();
        let train = |data: &str, extra: &[&str], model: &str| {
            let args = [&["train", data][..], &settings, extra, &["-o", model]].concat();
            run(&args)
        };
        let scaled_run = train(&p("raw.svm"), &["--scale", "max-abs"], &p("a.model"));
        let by_hand_run = train(&p("scaled.svm"), &[], &p("b.model"));
        // The same objective, to the last printed digit.
        let objective = |summary: &str| summary.lines().nth(1).unwrap().to_string();
        assert_eq!(objective(&scaled_run), objective(&by_hand_run), "{algo:?}");
        assert!(
            scaled_run.contains("features scaled by max-abs"),
            "{scaled_run}"
        );
        let (a, b) = (model(&p("a.model")), model(&p("b.model")));
        assert_eq!(a.bias.to_bits(), b.bias.to_bits(), "{algo:?}");
        for (j, (wa, wb)) in a.weights.iter().zip(&b.weights).enumerate() {
            assert_eq!(*wa, wb / 2f64.powi(k[j + 1]), "{algo:?}: feature {}", j + 1);
        }
        let recorded: Vec<i32> = (a.column_scales.as_ref().unwrap().exponents().iter())
            .map(|&k| i32::from(k))
            .collect();
        assert_eq!(recorded, k[1..], "{algo:?}");
        assert!(b.column_scales.is_none());
        // The model of the original features scores them as the other scores its own,
        // and its objective is the one trained.
        let eval = |model: &str, data: &str| run(&["eval", model, data]);
        assert_eq!(
            eval(&p("a.model"), &p("raw.svm")),
            eval(&p("b.model"), &p("scaled.svm")),
            "{algo:?}"
        );
        let scores = |model: &str, data: &str| run(&["predict", "--scores", model, data]);
        assert_eq!(
            scores(&p("a.model"), &p("raw.svm")),
            scores(&p("b.model"), &p("scaled.svm"))
        );
    }
}

#[test]
fn scaling_rescues_an_online_learner_on_spambase_and_the_model_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.model");
    let m = m.to_str().unwrap();
    let spambase = real_data::data_dir().join("spambase");
    let train = spambase.join("train.svm.gz");
    let test = spambase.join("test.svm.gz");
    let (train, test) = (train.to_str().unwrap(), test.to_str().unwrap());
    let args = [
        "train",
        train,
        "--test",
        test,
        "--algo",
        "asgd",
        "--threads",
        "1",
    ];
    // Unscaled, ASGD's training error is 0.53 against 0.39 for a constant: flagged, and the
    // warning names the cure.
    let out = sparselin(&[&args[..], &["--quiet", "-o", m]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cure = "(0.39001); where the features' scales differ by orders of magnitude, \
                `--scale max-abs` or a batch solver";
    assert!(stderr.contains(cure), "{stderr}");
    let out = sparselin(&[&args[..], &["--json", "--scale", "max-abs", "-o", m]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("larger class"), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["scale"], "max-abs");
    let test_error = summary["test"]["error_rate"].as_f64().unwrap();
    assert!(test_error < 0.12, "{summary}");
    // eval of the file on the unscaled test rows: what the summary reported.
    let eval = run(&["eval", m, test, "--json"]);
    let eval: serde_json::Value = serde_json::from_str(&eval).unwrap();
    assert_eq!(eval["objective"], summary["test"]["objective"]);
    assert_eq!(eval["error_rate"], summary["test"]["error_rate"]);
    let bytes = std::fs::read(m).unwrap();
    assert_eq!(bytes[8..12], 4u32.to_le_bytes(), "format version 4");
    let shown = run(&["show", m]);
    assert!(
        shown.contains("scale            max-abs (features divided by 2^k, k from "),
        "{shown}"
    );
}

#[test]
fn a_scaled_run_resumes_with_its_scales_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write(Path::new(&p("raw.svm")), &rows(300), |_, x| x);
    let settings = [
        "--algo",
        "asgd",
        "--loss",
        "log",
        "--lambda",
        "1e-3",
        "--threads",
        "1",
        "--sampling",
        "permutation",
        "--average-start",
        "100",
        "--quiet",
    ];
    let train = |extra: &[&str]| run(&[&["train", &p("raw.svm")][..], extra].concat());
    train(
        &[
            &settings[..],
            &[
                "--scale",
                "max-abs",
                "--epochs",
                "5",
                "-o",
                &p("whole.model"),
            ],
        ]
        .concat(),
    );
    train(
        &[
            &settings[..],
            &[
                "--scale",
                "max-abs",
                "--epochs",
                "2",
                "--save-resume",
                "-o",
                &p("stop.model"),
            ],
        ]
        .concat(),
    );
    // Resumed without --scale: the model's scales carry on.
    let resume = [
        "--resume",
        &p("stop.model"),
        "--epochs",
        "3",
        "--threads",
        "1",
    ];
    let resumed = train(&[&resume[..], &["-o", &p("go.model")]].concat());
    assert!(resumed.contains("features scaled by max-abs"), "{resumed}");
    let (whole, go) = (model(&p("whole.model")), model(&p("go.model")));
    // To rounding, as unscaled runs resume: the stopped average is stored as weights and
    // taken up again as the learner's scaled sums.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-3);
    for (a, b) in go.weights.iter().zip(&whole.weights) {
        assert!(close(*a, *b), "{a} vs {b}");
    }
    assert!(close(go.bias, whole.bias), "{} vs {}", go.bias, whole.bias);
    assert_eq!(go.column_scales, whole.column_scales);
    // A model trained unscaled goes on unscaled.
    train(
        &[
            &settings[..],
            &["--epochs", "1", "--save-resume", "-o", &p("plain.model")],
        ]
        .concat(),
    );
    let out = sparselin(&[
        "train",
        &p("raw.svm"),
        "--resume",
        &p("plain.model"),
        "--scale",
        "max-abs",
        "-o",
        &p("x.model"),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("plain.model was trained on unscaled features"),
        "{}",
        text(&out)
    );
    // An initial model trained scaled lends its scales: a batch solver warm started at its
    // own optimum stops at once, at that optimum.
    let solve = [
        "--algo", "lbfgs", "--loss", "log", "--lambda", "1e-3", "--quiet", "--scale", "max-abs",
    ];
    train(&[&solve[..], &["-o", &p("opt.model")]].concat());
    let warm = train(
        &[
            &solve[..],
            &[
                "--initial-model",
                &p("opt.model"),
                "--json",
                "-o",
                &p("w.model"),
            ],
        ]
        .concat(),
    );
    let warm: serde_json::Value = serde_json::from_str(&warm).unwrap();
    assert_eq!(warm["details"]["iterations"], 0, "{warm}");
    assert_eq!(model(&p("w.model")).weights, model(&p("opt.model")).weights);
}

#[test]
fn datasets_one_vs_rest_and_cross_validation_scale_alike() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let data = rows(300);
    write(Path::new(&p("raw.svm")), &data, |_, x| x);
    // A dataset, in its own column order or renumbered by frequency: the model of the text.
    let train = |data: &str, extra: &[&str], model: &str| {
        let common = [
            "--algo", "lbfgs", "--loss", "log", "--scale", "max-abs", "--quiet",
        ];
        run(&[&["train", data][..], &common, extra, &["-o", model]].concat())
    };
    let raw = p("raw.svm");
    train(&raw, &[], &p("text.model"));
    let reference = model(&p("text.model"));
    for renumber in [false, true] {
        let ds = p(&format!("ds{renumber}"));
        let mut convert = vec!["convert", &raw, &ds];
        if renumber {
            convert.push("--renumber");
        }
        run(&convert);
        train(&ds, &[], &p("ds.model"));
        let from_dataset = model(&p("ds.model"));
        assert_eq!(from_dataset.column_scales, reference.column_scales);
        for (a, b) in from_dataset.weights.iter().zip(&reference.weights) {
            // Renumbering reorders each dot product's sum.
            let tolerance = if renumber {
                1e-9 * b.abs().max(1e-3)
            } else {
                0.0
            };
            assert!(
                (a - b).abs() <= tolerance,
                "renumber {renumber}: {a} vs {b}"
            );
        }
    }
    // Three classes: each class's model is of the original features, with the scales.
    let three: Vec<_> = (data.iter().enumerate())
        .map(|(i, (_, x))| ((i % 3) as i32 + 1, x.clone()))
        .collect();
    write(Path::new(&p("three.svm")), &three, |_, x| x);
    let summary = train(&p("three.svm"), &["--lambda", "1e-2"], &p("c.model"));
    assert!(summary.contains("features scaled by max-abs"), "{summary}");
    let SavedModel::OneVsRest(classifier) = SavedModel::load(Path::new(&p("c.model"))).unwrap()
    else {
        panic!("a one-vs-rest classifier")
    };
    for m in classifier.models() {
        assert_eq!(m.column_scales, reference.column_scales);
    }
    // Each class's objective as training reported it is eval's on the unscaled rows.
    let eval = run(&["eval", &p("c.model"), &p("three.svm")]);
    let objectives = |s: &str| -> Vec<String> {
        (s.lines().filter(|l| l.starts_with("class ")))
            .map(|l| l.split("objective ").nth(1).unwrap()[..12].to_string())
            .collect()
    };
    assert_eq!(objectives(&summary).len(), 3, "{summary}");
    assert_eq!(objectives(&eval), objectives(&summary), "{eval}\n{summary}");
    let cv = run(&[
        "train",
        &p("raw.svm"),
        "--scale",
        "max-abs",
        "--cv",
        "3",
        "--quiet",
    ]);
    assert!(
        cv.starts_with("asgd (hinge, λ = 1e-4, features scaled by max-abs): 3-fold"),
        "{cv}"
    );
}
