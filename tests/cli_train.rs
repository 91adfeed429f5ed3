//! `sparselin train / predict / eval` end to end on a small file.

mod cli;
mod real_data;

use std::path::Path;
use std::process::Output;

use cli::{sparselin, text};

/// A failed run whose output says `message`.
fn assert_refused(out: &Output, message: &str) {
    assert!(!out.status.success(), "{}", text(out));
    assert!(text(out).contains(message), "{}", text(out));
}

/// Separable data: the label is the sign of feature 1 minus feature 2.
fn write_data(path: &Path, rows: usize, features: usize) {
    let mut s = String::new();
    for i in 0..rows {
        let (a, b) = ((i % 7) as f64 / 7.0, (i % 5) as f64 / 5.0);
        let y = if a > b { "+1" } else { "-1" };
        s.push_str(&format!("{y} 1:{a} 2:{b} {}:1\n", 3 + i % (features - 2)));
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn train_predict_eval_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 300, 10);
    let out = sparselin(&[
        "train",
        &p("train.svm"),
        "--algo",
        "casgd",
        "--loss",
        "log",
        "--lambda",
        "1e-3",
        "--epochs",
        "4",
        "--sampling",
        "permutation",
        "-o",
        &p("m.model"),
        "--test",
        &p("train.svm"),
        "--json",
        "--trace",
        &p("trace.csv"),
        "--readable",
        &p("m.txt"),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["algorithm"], "casgd");
    assert_eq!(summary["details"]["steps"], 1200);
    // Wall and CPU seconds of the training, the CPU including the evaluations on --test.
    let (wall, cpu) = (&summary["seconds"], &summary["cpu_seconds"]);
    assert!(
        wall.as_f64().unwrap() > 0.0 && cpu.as_f64().unwrap() > 0.0,
        "{summary}"
    );
    assert!(
        summary["test"]["error_rate"].as_f64().unwrap() < 0.2,
        "{summary}"
    );
    let trace = std::fs::read_to_string(p("trace.csv")).unwrap();
    assert_eq!(
        trace.lines().count(),
        5,
        "header + one line per epoch:\n{trace}"
    );
    assert!(
        std::fs::read_to_string(p("m.txt"))
            .unwrap()
            .contains("loss log")
    );

    let eval = sparselin(&["eval", &p("m.model"), &p("train.svm"), "--json"]);
    assert!(eval.status.success(), "{}", text(&eval));
    let metrics: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!(metrics["error_rate"], summary["test"]["error_rate"]);
    assert!(metrics["log_loss"].is_number() && metrics["auc"].is_number());
    for name in ["precision", "recall", "f1"] {
        let value = metrics[name].as_f64().unwrap();
        assert!((0.5..=1.0).contains(&value), "{name} {value}");
    }
    assert!(metrics.get("rmse").is_none());

    let predict = sparselin(&["predict", &p("m.model"), &p("train.svm")]);
    assert!(predict.status.success());
    let labels: Vec<&str> = std::str::from_utf8(&predict.stdout)
        .unwrap()
        .lines()
        .collect();
    assert_eq!(labels.len(), 300);
    assert!(labels.iter().all(|l| *l == "1" || *l == "-1"));

    // Data with more features than the model: those weigh 0, as in liblinear's predict.
    write_data(Path::new(&p("wide.svm")), 20, 40);
    let wide = sparselin(&["eval", &p("m.model"), &p("wide.svm")]);
    assert!(wide.status.success(), "{}", text(&wide));

    // A damaged model file is refused, naming the file.
    let mut bytes = std::fs::read(p("m.model")).unwrap();
    bytes[60] ^= 0xff;
    std::fs::write(p("bad.model"), bytes).unwrap();
    let bad = sparselin(&["predict", &p("bad.model"), &p("train.svm")]);
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("bad.model") && text(&bad).contains("checksum"),
        "{}",
        text(&bad)
    );

    // A bad configuration: non-zero exit, no model written.
    let zero = sparselin(&[
        "train",
        &p("train.svm"),
        "--lambda",
        "0",
        "-o",
        &p("z.model"),
    ]);
    assert!(!zero.status.success() && text(&zero).contains("lambda"));
    assert!(!Path::new(&p("z.model")).exists());
}

#[test]
fn a_model_trained_on_a_renumbered_dataset_is_written_in_original_ids() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 200, 12);
    let convert = sparselin(&[
        "convert",
        &p("train.svm"),
        &p("ds"),
        "--renumber",
        "--values",
        "f64",
    ]);
    assert!(convert.status.success(), "{}", text(&convert));
    let train = |input: &str, model: &str| {
        let out = sparselin(&[
            "train",
            input,
            "--algo",
            "asgd",
            "--epochs",
            "2",
            "--sampling",
            "file-order",
            "--threads",
            "1",
            "--lambda",
            "1e-2",
            "-o",
            model,
            "--quiet",
        ]);
        assert!(out.status.success(), "{}", text(&out));
    };
    train(&p("ds"), &p("ds.model"));
    train(&p("train.svm"), &p("text.model"));
    // Same rows in the same order: the same model, once mapped back to original ids, up to
    // rounding: renumbering reorders the entries within a row, hence each dot's summation
    // order, and 400 steps amplify that to ~1e-8 (a wrong mapping is off by O(1)).
    let scores = |model: &str, data: &str| -> Vec<f64> {
        let out = sparselin(&["predict", "--scores", model, data]);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
    };
    let reference = scores(&p("text.model"), &p("train.svm"));
    for (model, data) in [
        ("ds.model", "train.svm"),
        ("ds.model", "ds"),
        ("text.model", "ds"),
    ] {
        let got = scores(&p(model), &p(data));
        for (a, b) in got.iter().zip(&reference) {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{model} on {data}: {a} vs {b}"
            );
        }
    }
}

/// A run saved with `--save-resume` and resumed goes on as the whole run would have: two
/// epochs on the text resumed for three on the renumbered dataset (the same rows, columns
/// permuted) score as five epochs on the text, the algorithm and settings coming from the
/// model; the resumed model resumes again; what cannot be resumed is refused.
#[test]
fn a_run_saved_to_resume_goes_on_where_it_stopped_on_renumbered_data() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 200, 12);
    let convert = sparselin(&["convert", &p("train.svm"), &p("ds"), "--renumber"]);
    assert!(convert.status.success(), "{}", text(&convert));
    let train = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["train", "--threads", "1", "--json", "--quiet"];
        all.extend(args);
        let out = sparselin(&all);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let settings = [
        "--algo",
        "casgd",
        "--loss",
        "log",
        "--lambda",
        "1e-2",
        "--sampling",
        "permutation",
        "--average-start",
        "150",
    ];
    let [
        text_data,
        ds,
        whole_model,
        stopped,
        resumed_model,
        again_model,
        readable,
        output,
    ] = [
        "train.svm",
        "ds",
        "whole.model",
        "s.model",
        "r.model",
        "a.model",
        "a.txt",
        "x.model",
    ]
    .map(p);
    train(
        &[
            &settings[..],
            &[&text_data, "--epochs", "5", "-o", &whole_model],
        ]
        .concat(),
    );
    let first = [&text_data, "--epochs", "2", "--save-resume", "-o", &stopped];
    train(&[&settings[..], &first[..]].concat());
    let resumed = train(&[
        &ds,
        "--resume",
        &stopped,
        "--epochs",
        "3",
        "-o",
        &resumed_model,
    ]);
    assert_eq!(resumed["algorithm"], "casgd");
    assert_eq!(resumed["details"]["resumed_at"], 400);
    assert_eq!(resumed["details"]["steps"], 600);
    assert_eq!(resumed["details"]["average_start"], 150);
    let scores = |model: &str| -> Vec<f64> {
        let out = sparselin(&["predict", "--scores", model, &text_data]);
        assert!(out.status.success(), "{}", text(&out));
        let lines = String::from_utf8(out.stdout).unwrap();
        lines.lines().map(|l| l.parse().unwrap()).collect()
    };
    // Up to rounding: renumbering reorders each dot's sum (see the test above).
    let reference = scores(&whole_model);
    for (a, b) in scores(&resumed_model).iter().zip(&reference) {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    }
    // A resumed model resumes again; the summary and the text form say from where.
    let again = train(&[
        &ds,
        "--resume",
        &resumed_model,
        "--steps",
        "7",
        "-o",
        &again_model,
    ]);
    assert_eq!(again["details"]["resumed_at"], 1000);
    let once_more = [
        "train",
        &ds,
        "--resume",
        &again_model,
        "--steps",
        "1",
        "-o",
        &output,
    ];
    let out = sparselin(&once_more);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("resumed after step 1007"),
        "{}",
        text(&out)
    );
    let out = sparselin(&[&once_more[..], &["--readable", &readable]].concat());
    assert!(out.status.success(), "{}", text(&out));
    let readable = std::fs::read_to_string(&readable).unwrap();
    assert!(
        readable.contains("resume steps=1008 rows=200 "),
        "{readable}"
    );
    let show = sparselin(&["show", &again_model]);
    assert!(show.status.success(), "{}", text(&show));
    assert!(
        text(&show).contains("resumable        after step 1007 over 200 rows"),
        "{}",
        text(&show)
    );
    let show = sparselin(&["show", &whole_model, "--json"]);
    let show: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert!(show["resume"].is_null(), "{show}");
    std::fs::remove_file(&output).unwrap();
    let missing = p("missing.model");
    let batch_model = p("lbfgs.model");
    let args = [&ds, "--algo", "lbfgs", "--loss", "log", "-o", &batch_model];
    train(&args);
    for (args, message) in [
        (
            vec!["--resume", &whole_model],
            "the model holds no resume state",
        ),
        (
            vec!["--resume", &batch_model],
            "the model holds no resume state",
        ),
        (
            vec!["--resume", &stopped, "--lambda", "1e-3"],
            "lambda 0.01, this run has 0.001",
        ),
        (
            vec!["--resume", &stopped, "--average-start", "1"],
            "average start 150, which a resumed run keeps",
        ),
        (
            vec!["--resume", &stopped, "--algo", "dcd"],
            "--resume does not apply to --algo dcd",
        ),
        (
            vec!["--save-resume", "--weights", "f32"],
            "keeps f64 weights",
        ),
        (
            vec!["--resume", &stopped, "--cv", "3"],
            "cannot be used with",
        ),
        (vec!["--resume", &missing], "missing.model"),
    ] {
        let mut all = vec!["train", &ds, "-o", &output];
        all.extend(&args);
        let out = sparselin(&all);
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).contains(message), "{args:?}: {}", text(&out));
        assert!(!Path::new(&output).exists(), "{args:?}");
    }
    // Cross-validation writes no model, so none to resume.
    let out = sparselin(&["train", &ds, "--save-resume", "--cv", "3"]);
    assert!(!out.status.success());
    let message = "'--save-resume' cannot be used with '--cv <K>'";
    assert!(text(&out).contains(message), "{}", text(&out));
}

#[test]
fn train_reports_of_renumbered_and_of_wider_data_what_eval_reports() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // Features 4 and 9 are in every row, 1 in a third of them: renumbering by frequency moves
    // every one of them.
    let mut train = String::new();
    for i in 0..200 {
        let (a, b) = ((i % 7) as f64 / 7.0, (i % 5) as f64 / 5.0);
        let y = if a > b { "+1" } else { "-1" };
        let rare = if i % 3 == 0 { " 1:1" } else { "" };
        train.push_str(&format!("{y}{rare} 4:{b} 9:{a}\n"));
    }
    std::fs::write(p("train.svm"), &train).unwrap();
    // The test rows have a feature the training data never had.
    std::fs::write(p("wide.svm"), train.replace('\n', " 20:1\n")).unwrap();
    let convert = sparselin(&["convert", "-q", &p("train.svm"), &p("ds"), "--renumber"]);
    assert!(convert.status.success(), "{}", text(&convert));
    let json = |out: &Output| -> serde_json::Value {
        assert!(out.status.success(), "{}", text(out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let summary = json(&sparselin(&[
        "train",
        &p("ds"),
        "--test",
        &p("wide.svm"),
        "--threads",
        "1",
        "--lambda",
        "1e-2",
        "--json",
        "-o",
        &p("m"),
    ]));
    for (part, data) in [("train", "ds"), ("test", "wide.svm")] {
        let eval = json(&sparselin(&["eval", "--json", &p("m"), &p(data)]));
        for key in ["objective", "error_rate"] {
            assert_eq!(summary[part][key], eval[key], "{part} {key}");
        }
    }
}

#[test]
fn a_free_bias_trains_at_the_bias_rate_and_a_regularized_one_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (train, model, readable) = (p("train.svm"), p("m.model"), p("m.txt"));
    write_data(Path::new(&train), 300, 10);
    let bias = |extra: &[&str]| {
        let mut args = vec!["train", &train, "--algo", "sgd"];
        args.extend_from_slice(&["--threads", "1", "--epochs", "2", "--quiet"]);
        args.extend_from_slice(&["-o", &model, "--readable", &readable]);
        args.extend_from_slice(extra);
        let out = sparselin(&args);
        assert!(out.status.success(), "{}", text(&out));
        let weights = std::fs::read_to_string(&readable).unwrap();
        let line = weights.lines().find(|l| l.starts_with("bias ")).unwrap();
        line["bias ".len()..].parse::<f64>().unwrap()
    };
    let full = bias(&["--free-bias"]);
    assert_eq!(bias(&["--free-bias", "--bias-rate", "1"]), full);
    let slow = bias(&["--free-bias", "--bias-rate", "0.01"]);
    assert_ne!(slow, full);
    // The summary records the rate with the rest of the schedule.
    let out = sparselin(&[
        "train",
        &train,
        "--algo",
        "sgd",
        "--free-bias",
        "--bias-rate",
        "0.01",
        "--json",
        "--quiet",
        "-o",
        &model,
    ]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["details"]["bias_rate"], 0.01);

    let refused = |extra: &[&str], message: &str| {
        let mut args = vec!["train", &train, "-o", &model];
        args.extend_from_slice(extra);
        let out = sparselin(&args);
        assert_refused(&out, message);
    };
    refused(
        &["--bias-rate", "0.01"],
        "--bias-rate sets the step of a free bias",
    );
    refused(
        &["--algo", "sublbfgs", "--bias-rate", "0.01"],
        "--bias-rate does not apply to --algo sublbfgs",
    );
    // Batch solvers always regularize the bias.
    refused(
        &["--algo", "sublbfgs", "--free-bias"],
        "--free-bias does not apply to --algo sublbfgs",
    );
    refused(
        &["--algo", "subgd", "--memory", "3"],
        "--memory does not apply to --algo subgd",
    );
    for rate in ["0", "-1", "nan"] {
        refused(
            &["--free-bias", "--bias-rate", rate],
            "--bias-rate must be positive",
        );
    }
}

#[test]
fn predict_prints_the_probabilities_of_a_log_loss_model_and_refuses_them_for_others() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 200, 8);
    let lines = |out: &Output| -> Vec<f64> {
        assert!(out.status.success(), "{}", text(out));
        let stdout = std::str::from_utf8(&out.stdout).unwrap();
        stdout.lines().map(|l| l.parse().unwrap()).collect()
    };
    for loss in ["log", "hinge"] {
        let model = p(&format!("{loss}.model"));
        let out = sparselin(&[
            "train",
            &p("train.svm"),
            "--loss",
            loss,
            "--lambda",
            "1e-3",
            "-o",
            &model,
            "--quiet",
        ]);
        assert!(out.status.success(), "{}", text(&out));
        let probabilities = sparselin(&["predict", "--probabilities", &model, &p("train.svm")]);
        if loss == "hinge" {
            assert!(!probabilities.status.success() && probabilities.stdout.is_empty());
            let message = text(&probabilities);
            assert!(
                message.contains("hinge") && message.contains("--loss log"),
                "{message}"
            );
            continue;
        }
        let scores = lines(&sparselin(&[
            "predict",
            "--scores",
            &model,
            &p("train.svm"),
        ]));
        let probabilities = lines(&probabilities);
        assert_eq!(probabilities.len(), 200);
        for (p, s) in probabilities.iter().zip(&scores) {
            assert!(
                (p - 1.0 / (1.0 + (-s).exp())).abs() <= 1e-15,
                "{p} for score {s}"
            );
        }
        // The printed probabilities are exact: their mean −log P(label) is eval's log loss.
        let labels: Vec<f64> = std::fs::read_to_string(p("train.svm"))
            .unwrap()
            .lines()
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .collect();
        let log_loss = probabilities
            .iter()
            .zip(&labels)
            .map(|(p, y)| -(if *y > 0.0 { *p } else { 1.0 - p }).ln())
            .sum::<f64>()
            / 200.0;
        let eval = sparselin(&["eval", &model, &p("train.svm"), "--json"]);
        assert!(eval.status.success(), "{}", text(&eval));
        let metrics: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
        let reported = metrics["log_loss"].as_f64().unwrap();
        assert!(
            (log_loss - reported).abs() <= 1e-12,
            "{log_loss} vs {reported}"
        );
    }
    let both = sparselin(&[
        "predict",
        "--scores",
        "--probabilities",
        &p("log.model"),
        &p("train.svm"),
    ]);
    assert!(!both.status.success() && text(&both).contains("cannot be used with"));
}

#[test]
fn cv_prints_each_folds_held_out_metrics_and_their_mean_and_writes_no_model() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 90, 8);
    let data = p("train.svm");
    let cv = |extra: &[&str]| {
        let mut args = vec!["train", &data, "--cv", "3", "--lambda", "1e-3"];
        args.extend(extra);
        sparselin(&args)
    };
    let out = cv(&["--loss", "log", "--algo", "lbfgs"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].starts_with("lbfgs (log, λ = 1e-3): 3-fold cross-validation of 90 rows"));
    for (i, line) in lines[1..4].iter().enumerate() {
        let start = format!(
            "fold {}: trained on 60 rows, held out 30: objective ",
            i + 1
        );
        assert!(
            line.starts_with(&start) && line.contains("log loss"),
            "{line}"
        );
    }
    assert!(lines[4].starts_with("mean over the folds: objective "));
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "no model or temporary written");

    // The JSON report: the mean is the folds' mean; the same seed deals the same folds and,
    // at one thread (Hogwild's workers depend on their timing), trains the same models.
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = cv(&[&["--json", "--threads", "1"], extra].concat());
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let report = json(&[]);
    let folds = report["folds"].as_array().unwrap();
    let error = |f: &serde_json::Value| f["held_out"]["error_rate"].as_f64().unwrap();
    let mean = folds.iter().map(error).sum::<f64>() / 3.0;
    assert_eq!(report["mean"]["error_rate"].as_f64().unwrap(), mean);
    assert_eq!(report["mean"]["rows"], 90);
    assert_eq!(report["seed"], 1, "the seed that dealt the folds");
    assert_eq!(json(&[]), report);
    assert_ne!(json(&["--seed", "2"])["folds"], report["folds"]);

    // It trains no model, so the model's outputs and --test are refused; so is K < 2.
    for extra in [&["-o", "m"][..], &["--test", "t"], &["--readable", "r"]] {
        let out = cv(extra);
        assert!(!out.status.success() && text(&out).contains("cannot be used with"));
    }
    let one = sparselin(&["train", &p("train.svm"), "--cv", "1"]);
    assert!(!one.status.success());
    let many = sparselin(&["train", &p("train.svm"), "--cv", "91"]);
    assert!(!many.status.success() && many.stdout.is_empty());
    assert!(
        text(&many).contains("from 2 folds to one per row (90 rows)"),
        "{}",
        text(&many)
    );
    // A fold whose training rows hold one class: the error names the fold, once.
    std::fs::write(p("one.svm"), "+1 1:1\n-1 2:1\n-1 3:1\n-1 1:1 2:1\n").unwrap();
    let one_positive = sparselin(&["train", &p("one.svm"), "--cv", "2"]);
    let message = text(&one_positive);
    assert!(!one_positive.status.success() && one_positive.stdout.is_empty());
    assert!(
        message.contains("of 2: hinge loss needs both classes"),
        "{message}"
    );
    assert_eq!(
        message.matches("needs both classes").count(),
        1,
        "{message}"
    );
    let neither = sparselin(&["train", &p("train.svm")]);
    assert!(!neither.status.success() && text(&neither).contains("--output"));
}

/// Quantile regression is judged by its pinball loss, not the RMSE (which judges the mean):
/// on diabetes at τ = 0.9 the two pick different λ of this grid, and the best is the one of
/// least held-out pinball loss; the lines name it and the coverage.
#[test]
fn cv_of_quantile_regression_picks_the_lambda_of_least_pinball_loss() {
    let data = real_data::data_dir().join("diabetes/train.svm.gz");
    let data = data.to_str().unwrap();
    let grid = "1e-2,1e-3,1e-4,1e-6";
    let args = [
        "train",
        data,
        "--loss",
        "quantile:0.9",
        "--cv",
        "3",
        "--epochs",
        "20",
    ];
    let out = sparselin(&[&args[..], &["--lambda-grid", grid, "--json"]].concat());
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let least = |metric: &str| {
        let entries = report["grid"].as_array().unwrap();
        let value = |e: &serde_json::Value| e["mean"][metric].as_f64().unwrap();
        let best = entries.iter().min_by(|a, b| value(a).total_cmp(&value(b)));
        best.unwrap()["lambda"].as_f64().unwrap()
    };
    assert_ne!(
        least("mean_loss"),
        least("rmse"),
        "a grid that tells them apart"
    );
    assert_eq!(report["best_lambda"].as_f64().unwrap(), least("mean_loss"));
    let out = sparselin(&[&args[..], &["--lambda-grid", grid]].concat());
    let stdout = text(&out);
    assert!(
        stdout.contains(", pinball ") && stdout.contains(", coverage 0."),
        "{stdout}"
    );
}

#[test]
fn cv_over_a_lambda_grid_is_each_lambdas_cv_on_the_same_folds_and_names_the_best() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 90, 8);
    let data = p("train.svm");
    let run = |extra: &[&str]| {
        let args = [&["train", &data, "--cv", "3", "--threads", "1"], extra].concat();
        let out = sparselin(&args);
        assert!(out.status.success(), "{}", text(&out));
        out
    };
    let json = |extra: &[&str]| -> serde_json::Value {
        serde_json::from_slice(&run(&[&["--json"], extra].concat()).stdout).unwrap()
    };
    let grid = ["10", "1e-1", "1e-3"];
    let report = json(&["--lambda-grid", &grid.join(",")]);
    let entries = report["grid"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    let mut best = (f64::INFINITY, 0.0);
    for (entry, lambda) in entries.iter().zip(grid) {
        let alone = json(&["--lambda", lambda]);
        assert_eq!(entry["folds"], alone["folds"], "λ = {lambda}");
        assert_eq!(entry["mean"], alone["mean"], "λ = {lambda}");
        let error = entry["mean"]["error_rate"].as_f64().unwrap();
        let lambda: f64 = lambda.parse().unwrap();
        if error < best.0 || (error == best.0 && lambda > best.1) {
            best = (error, lambda);
        }
    }
    assert_eq!(report["best_lambda"].as_f64().unwrap(), best.1);
    // λ = 10 leaves w near 0: it must not be the best.
    assert!(entries[0]["mean"]["error_rate"].as_f64().unwrap() > best.0);

    let out = run(&["--lambda-grid", "1e-1,1e-3"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[0].starts_with("asgd (hinge): 3-fold cross-validation of 90 rows"));
    assert!(lines[1].starts_with("λ = 1e-1: objective ") && lines[2].starts_with("λ = 1e-3: "));
    assert!(lines[3].starts_with("best: λ = 1e-"), "{stdout}");

    for (args, says) in [
        (&["--lambda-grid", "1e-2"][..], "add --cv K"),
        (
            &["--lambda-grid", "1e-2", "--cv", "2", "--lambda", "1"],
            "cannot be used with",
        ),
        (
            &["--lambda-grid", "1e-2,0", "--cv", "2"],
            "--lambda-grid must be positive",
        ),
        (
            &["--lambda-grid", "1e-2", "--cv", "2", "--algo", "aerr"],
            "does not apply",
        ),
    ] {
        let out = sparselin(&[&["train", &data], args].concat());
        assert!(
            !out.status.success() && text(&out).contains(says),
            "{}",
            text(&out)
        );
    }
}

/// One row in ten labelled +1, the classes overlapping: feature 1 leans toward the label.
fn write_unbalanced(path: &Path, rows: usize) {
    let mut s = String::new();
    for i in 0..rows {
        let positive = i % 10 == 0;
        let lean = ((i * 37) % 11) as f64 / 11.0 + if positive { 0.35 } else { 0.0 };
        let y = if positive { "+1" } else { "-1" };
        s.push_str(&format!("{y} 1:{lean} 2:{}\n", ((i * 13) % 7) as f64 / 7.0));
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn class_weights_train_weighted_objectives_and_are_refused_where_they_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_unbalanced(Path::new(&p("train.svm")), 400);
    let data = p("train.svm");
    let train = |algo: &str, extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "train", &data, "--algo", algo, "--lambda", "1e-2", "--json", "--quiet",
        ];
        args.extend(extra);
        let out = sparselin(&args);
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let recall = |summary: &serde_json::Value| summary["train"]["recall"].as_f64().unwrap_or(0.0);
    for algo in ["dcd", "sublbfgs", "asgd"] {
        let model = p(&format!("{algo}.model"));
        let plain = train(algo, &["-o", &p("plain.model")]);
        let balanced = train(algo, &["--class-weight", "balanced", "-o", &model]);
        // scikit-learn's balanced weights: m/(2m_y) = 400/80 and 400/720.
        let weights = &balanced["class_weights"];
        assert_eq!(weights["positive"].as_f64(), Some(5.0), "{algo}: {weights}");
        assert_eq!(weights["negative"].as_f64(), Some(400.0 / 720.0), "{algo}");
        assert!(
            plain["class_weights"]["positive"].as_f64() == Some(1.0),
            "{algo}"
        );
        assert!(
            recall(&balanced) > recall(&plain) + 0.2,
            "{algo}: recall {} balanced against {} unweighted",
            recall(&balanced),
            recall(&plain)
        );
        // The model file keeps the weights, so eval reports the objective trained on.
        let eval = sparselin(&["eval", &model, &data, "--json"]);
        assert!(eval.status.success(), "{}", text(&eval));
        let eval: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
        assert_eq!(eval["objective"], balanced["train"]["objective"], "{algo}");
        let eval = sparselin(&["eval", &model, &data]);
        assert!(
            text(&eval).contains("class_weights +1=5,-1=0.5555"),
            "{}",
            text(&eval)
        );
        let readable = p("readable.txt");
        let out = train(
            algo,
            &[
                "--class-weight",
                "+1=5,-1=0.5",
                "-o",
                &model,
                "--readable",
                &readable,
            ],
        );
        assert_eq!(out["class_weights"]["negative"].as_f64(), Some(0.5));
        let text = std::fs::read_to_string(&readable).unwrap();
        assert!(text.contains("class_weights +1=5,-1=0.5"), "{text}");
    }
    // Cross-validation takes them too (balanced on each fold's own training rows).
    let cv = sparselin(&[
        "train",
        &data,
        "--cv",
        "3",
        "--algo",
        "dcd",
        "--class-weight",
        "balanced",
    ]);
    assert!(cv.status.success(), "{}", text(&cv));

    let refused = |extra: &[&str], message: &str| {
        let mut args = vec!["train", &data, "-o", "never.model"];
        args.extend(extra);
        let out = sparselin(&args);
        assert!(!out.status.success(), "{extra:?}");
        assert!(text(&out).contains(message), "{extra:?}: {}", text(&out));
        assert!(!Path::new("never.model").exists());
    };
    refused(
        &["--class-weight", "+1=2", "--loss", "squared"],
        "class weights apply to the classification losses, not to squared loss",
    );
    refused(
        &["--class-weight", "balanced", "--algo", "aerr"],
        "--class-weight does not apply to --algo aerr",
    );
    refused(&["--class-weight", "+1=-2"], "a positive finite number");
    refused(
        &["--class-weight", "2=1"],
        "names the label 2, which is not a class of the data (+1 or 1, -1 or 0)",
    );
    refused(
        &["--class-weight", "-1=2,0=3"],
        "class of label 0 is weighted twice",
    );
}

/// A weight file of integer weights (row i weighs i mod 3, so a third weigh 0) trains what
/// copies of the rows train, and the summary reports the weighted objective.
#[test]
fn sample_weights_from_a_file_train_what_copies_of_the_rows_train() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let rows = 300;
    write_unbalanced(Path::new(&p("train.svm")), rows);
    let weight = |i: usize| i % 3;
    let weights: String = (0..rows).map(|i| format!("{}\n", weight(i))).collect();
    std::fs::write(p("weights.txt"), weights).unwrap();
    let text_rows = std::fs::read_to_string(p("train.svm")).unwrap();
    let copies: String = text_rows
        .lines()
        .enumerate()
        .flat_map(|(i, line)| std::iter::repeat_n(format!("{line}\n"), weight(i)))
        .collect();
    std::fs::write(p("copies.svm"), copies).unwrap();
    let copied_rows = (0..rows).map(weight).sum::<usize>();
    let (lambda, scaled) = (1e-2, 1e-2 * rows as f64 / copied_rows as f64);
    let (model, copies_model) = (p("dcd.model"), p("copies.model"));
    let train = |data: &str, lambda: f64, model: &str, extra: &[&str]| -> serde_json::Value {
        let lambda = lambda.to_string();
        let mut args = vec![
            "train", data, "--algo", "dcd", "--lambda", &lambda, "--tol", "1e-12", "--json",
            "--quiet", "-o", &model,
        ];
        args.extend(extra);
        let out = sparselin(&args);
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let weighted = train(
        &p("train.svm"),
        lambda,
        &model,
        &["--sample-weights", &p("weights.txt")],
    );
    let copied = train(&p("copies.svm"), scaled, &copies_model, &[]);
    let objective = |summary: &serde_json::Value| summary["train"]["objective"].as_f64().unwrap();
    let expected = objective(&copied) * copied_rows as f64 / rows as f64;
    let found = objective(&weighted);
    assert!(
        (found - expected).abs() <= 1e-8 * expected,
        "{found} vs {expected}"
    );
    let recorded = &weighted["details"]["sample_weights"];
    assert_eq!(recorded["sum"].as_f64(), Some(copied_rows as f64));
    assert_eq!(recorded["zero"].as_u64(), Some(100));
    // eval weighs the objective by the same file, and without it counts every row once.
    let train_svm = p("train.svm");
    let eval = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["eval", &model, &train_svm, "--json"];
        args.extend(extra);
        let out = sparselin(&args);
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let with_weights = eval(&["--sample-weights", &p("weights.txt")]);
    assert_eq!(with_weights["objective"], weighted["train"]["objective"]);
    assert_ne!(eval(&[])["objective"], weighted["train"]["objective"]);
    // Every learner family that has a loss to weigh takes them, cross-validation too.
    for algo in ["asgd", "sublbfgs"] {
        let out = sparselin(&[
            "train",
            &p("train.svm"),
            "--algo",
            algo,
            "--sample-weights",
            &p("weights.txt"),
            "-o",
            &p("m.model"),
            "--quiet",
        ]);
        assert!(out.status.success(), "{algo}: {}", text(&out));
        assert!(text(&out).contains("sample weights"), "{}", text(&out));
    }
    let cv = sparselin(&[
        "train",
        &p("train.svm"),
        "--cv",
        "3",
        "--algo",
        "dcd",
        "--sample-weights",
        &p("weights.txt"),
    ]);
    assert!(cv.status.success(), "{}", text(&cv));
    assert!(text(&cv).contains("sample weights"), "{}", text(&cv));

    let (data, bad, never) = (p("train.svm"), p("bad.txt"), p("never.model"));
    let refused = |weights: &str, extra: &[&str], message: &str| {
        std::fs::write(&bad, weights).unwrap();
        let mut args = vec!["train", &data, "--sample-weights", &bad];
        if !extra.contains(&"--cv") {
            args.extend(["-o", &never]);
        }
        args.extend(extra);
        let out = sparselin(&args);
        assert!(!out.status.success(), "{extra:?}");
        let said = text(&out);
        assert!(said.contains(message), "{weights:?} {extra:?}: {said}");
        assert!(said.contains("bad.txt"), "{said}");
        assert!(!Path::new(&never).exists());
    };
    refused("1\n2\n", &[], "2 sample weights for 300 rows");
    refused("1\n2\n", &["--cv", "3"], "2 sample weights for 300 rows");
    refused("1\nheavy\n", &[], "line 2: 'heavy' is not a number");
    refused(
        "-1\n",
        &[],
        "line 1: a sample weight must be a non-negative",
    );
    let zeros = "0\n".repeat(rows);
    refused(&zeros, &[], "every sample weight is 0");
    let out = sparselin(&[
        "train",
        &data,
        "--algo",
        "aerr",
        "--sample-weights",
        &p("weights.txt"),
        "-o",
        &never,
    ]);
    assert_refused(&out, "--sample-weights does not apply to --algo aerr");
}

#[test]
fn show_prints_a_models_settings_and_its_largest_weights_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 300, 10);
    let out = sparselin(&[
        "train",
        &p("train.svm"),
        "--algo",
        "dcd",
        "--lambda",
        "1e-2",
        "--class-weight",
        "+1=2",
        "-o",
        &p("m.model"),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    // Names for features 1 and 2 (the two that decide the label), after a header line.
    std::fs::write(p("names.tsv"), "id\tterm\n1\tfirst\n2\tsecond\n3\tthird\n").unwrap();
    let out = sparselin(&[
        "show",
        &p("m.model"),
        "--top",
        "2",
        "--names",
        &p("names.tsv"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8(out.stdout).unwrap();
    for line in [
        "loss             hinge",
        "algorithm        dcd",
        "class_weights    +1=2,-1=1",
    ] {
        assert!(shown.contains(line), "{line}: {shown}");
    }
    let listed: Vec<&str> = shown
        .lines()
        .skip_while(|l| !l.starts_with("largest"))
        .skip(1)
        .collect();
    assert_eq!(listed.len(), 2, "{shown}");
    assert!(
        listed
            .iter()
            .any(|l| l.trim_start().starts_with("1:") && l.ends_with("first"))
    );
    assert!(
        listed
            .iter()
            .any(|l| l.trim_start().starts_with("2:") && l.ends_with("second"))
    );

    // The JSON agrees with the model: its weights of largest magnitude, by 1-based id.
    let out = sparselin(&["show", &p("m.model"), "--top", "3", "--json"]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = sparselin::model::Model::load(Path::new(&p("m.model"))).unwrap();
    let largest = summary["largest"].as_array().unwrap();
    for (entry, (j, w)) in largest.iter().zip(model.largest_weights(3)) {
        assert_eq!(entry["feature"], j + 1);
        assert_eq!(entry["weight"].as_f64(), Some(w));
    }
    assert_eq!(summary["features"], model.weights.len());
    assert_eq!(summary["class_weights"]["positive"].as_f64(), Some(2.0));

    // A names line that is not ID<TAB>NAME, or a model that is not there: named errors.
    std::fs::write(p("bad.tsv"), "1\tfirst\nsecond line\n").unwrap();
    let out = sparselin(&["show", &p("m.model"), "--names", &p("bad.tsv")]);
    assert!(
        !out.status.success() && text(&out).contains("bad.tsv:2"),
        "{}",
        text(&out)
    );
    let out = sparselin(&["show", &p("none.model")]);
    assert!(
        !out.status.success() && text(&out).contains("none.model"),
        "{}",
        text(&out)
    );
}

#[test]
fn predict_writes_its_lines_to_a_file_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 120, 6);
    let out = sparselin(&["train", &p("train.svm"), "-o", &p("m.model"), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
    for flags in [&[][..], &["--scores"]] {
        let printed = sparselin(&[&["predict", &p("m.model"), &p("train.svm")], flags].concat());
        let out = sparselin(
            &[
                &[
                    "predict",
                    &p("m.model"),
                    &p("train.svm"),
                    "-o",
                    &p("pred.txt"),
                ],
                flags,
            ]
            .concat(),
        );
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "{}",
            text(&out)
        );
        assert_eq!(std::fs::read(p("pred.txt")).unwrap(), printed.stdout);
        assert_eq!(printed.stdout.iter().filter(|&&b| b == b'\n').count(), 120);
    }
    // Onto an input, or from data that cannot be read: an error, and no file written.
    let out = sparselin(&[
        "predict",
        &p("m.model"),
        &p("train.svm"),
        "-o",
        &p("m.model"),
    ]);
    assert!(!out.status.success() && text(&out).contains("would overwrite the input"));
    assert!(sparselin::model::Model::load(Path::new(&p("m.model"))).is_ok());
    let out = sparselin(&[
        "predict",
        &p("m.model"),
        &p("missing.svm"),
        "-o",
        &p("none.txt"),
    ]);
    assert!(!out.status.success() && text(&out).contains("missing.svm"));
    assert!(!Path::new(&p("none.txt")).exists());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        left.len(),
        3,
        "train.svm, m.model, pred.txt and no temporary: {left:?}"
    );
}

/// `--l1` with sgd: truncated steps leave the noise features at exactly 0 (the model records
/// λ₁ and its objective counts the term), on one thread; Hogwild workers and averaging
/// learners refuse it, by name.
#[test]
fn sgd_with_an_l1_term_trains_a_sparse_model_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 300, 30);
    let train = |extra: &[&str]| {
        let mut args = vec![
            "train",
            &p("train.svm"),
            "--algo",
            "sgd",
            "--loss",
            "log",
            "--lambda",
            "1e-3",
            "--l1",
            "0.01",
            "--epochs",
            "10",
            "-o",
            &p("m.model"),
            "--json",
            "--quiet",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        args.extend(extra.iter().map(|s| s.to_string()));
        sparselin(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for threads in [&[][..], &["--threads", "1"]] {
        let out = train(threads);
        assert!(out.status.success(), "{}", text(&out));
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["l1"], 0.01);
        let shown = sparselin(&["show", &p("m.model"), "--json"]);
        let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
        let nonzero = shown["nonzero_weights"].as_u64().unwrap();
        assert!((2..25).contains(&nonzero), "{nonzero} of 30 weights off 0");
        let eval = sparselin(&["eval", &p("m.model"), &p("train.svm"), "--json"]);
        let eval: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
        let l1_norm = shown["l1_norm"].as_f64().unwrap() + shown["bias"].as_f64().unwrap().abs();
        let penalty = eval["objective"].as_f64().unwrap() - eval["mean_loss"].as_f64().unwrap();
        let l2 = 0.5e-3
            * (shown["l2_norm"].as_f64().unwrap().powi(2)
                + shown["bias"].as_f64().unwrap().powi(2));
        assert!(
            (penalty - l2 - 0.01 * l1_norm).abs() <= 1e-9,
            "{penalty} {l2} {l1_norm}"
        );
    }
    let out = train(&["--threads", "2"]);
    assert_refused(&out, "Hogwild workers run without it");
    let out = sparselin(&[
        "train",
        &p("train.svm"),
        "--algo",
        "asgd",
        "--l1",
        "0.01",
        "-o",
        &p("a.model"),
    ]);
    assert_refused(&out, "--l1 does not apply to --algo asgd");
}

/// `--cv K --l1-grid …` cross-validates each λ₁ on the same folds and names the best: not the
/// one so large that every weight is 0; sgd takes the grid too, on one thread; asgd refuses it,
/// and so does a run without --cv.
#[test]
fn cv_over_an_l1_grid_names_the_best_l1() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 300, 30);
    let cv = |algo: &str, lambda: &str| {
        sparselin(&[
            "train",
            &p("train.svm"),
            "--algo",
            algo,
            "--loss",
            "log",
            "--lambda",
            lambda,
            "--cv",
            "3",
            "--l1-grid",
            "1,0.01,0.0001",
            "--json",
        ])
    };
    for (algo, lambda) in [("lbfgs", "0"), ("sgd", "1e-3")] {
        let out = cv(algo, lambda);
        assert!(out.status.success(), "{algo}: {}", text(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let grid = report["grid"].as_array().unwrap();
        let values: Vec<f64> = grid.iter().map(|g| g["l1"].as_f64().unwrap()).collect();
        assert_eq!(values, [1.0, 0.01, 0.0001], "{algo}");
        let error = |g: &serde_json::Value| g["mean"]["error_rate"].as_f64().unwrap();
        let best = report["best_l1"].as_f64().unwrap();
        assert_ne!(best, 1.0, "{algo}: {report}");
        let least = grid.iter().map(error).fold(f64::INFINITY, f64::min);
        let best_error = grid.iter().find(|g| g["l1"] == best).map(error).unwrap();
        assert_eq!(best_error, least, "{algo}");
        assert!(
            error(&grid[0]) > least,
            "{algo}: λ₁ = 1 zeroes every weight"
        );
        assert_eq!(
            report["lambda"].as_f64().unwrap(),
            lambda.parse::<f64>().unwrap()
        );
        assert!(
            report.get("l1").is_none(),
            "{algo}: the searched strength is the grid's"
        );
    }
    let out = cv("asgd", "1e-3");
    assert_refused(&out, "--l1-grid does not apply to --algo asgd");
    let out = sparselin(&[
        "train",
        &p("train.svm"),
        "--algo",
        "lbfgs",
        "--l1-grid",
        "0.1",
    ]);
    assert_refused(&out, "add --cv K");
}

/// The labels of a gzipped LIBSVM file, row by row.
fn gz_labels(path: &Path) -> Vec<f64> {
    let gz = std::fs::read(path).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text).unwrap();
    (text.lines())
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

/// Regression models are judged by R² too (scikit-learn's `score`): `eval` prints the R² of
/// the scores `predict` prints, and cross-validation averages it over the folds.
#[test]
fn eval_reports_the_r2_of_a_regression_s_predictions() {
    let data = real_data::data_dir().join("diabetes");
    let (train, test) = (data.join("train.svm.gz"), data.join("test.svm.gz"));
    let (train, test) = (train.to_str().unwrap(), test.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let model = model.to_str().unwrap();
    let args = ["train", train, "--algo", "lbfgs", "--loss", "squared"];
    let out = sparselin(&[&args[..], &["-o", model]].concat());
    assert!(out.status.success(), "{}", text(&out));
    let eval = sparselin(&["eval", model, test, "--json"]);
    assert!(eval.status.success(), "{}", text(&eval));
    let metrics: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
    let r2 = metrics["r2"].as_f64().unwrap();
    let predict = sparselin(&["predict", model, test]);
    let scores: Vec<f64> = std::str::from_utf8(&predict.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let labels = gz_labels(&data.join("test.svm.gz"));
    let mean = labels.iter().sum::<f64>() / labels.len() as f64;
    let total: f64 = labels.iter().map(|y| (y - mean).powi(2)).sum();
    let residual: f64 = scores
        .iter()
        .zip(&labels)
        .map(|(p, y)| (y - p).powi(2))
        .sum();
    assert!((r2 - (1.0 - residual / total)).abs() < 1e-9, "{r2}");
    assert!(
        (0.4..0.5).contains(&r2),
        "{r2} (the data's reference: ridge R² 0.45)"
    );
    let text_eval = text(&sparselin(&["eval", model, test]));
    assert!(text_eval.contains("\nr2 0.4"), "{text_eval}");
    let cv = sparselin(&[&args[..], &["--cv", "3", "--json"]].concat());
    let report: serde_json::Value = serde_json::from_slice(&cv.stdout).unwrap();
    let folds = report["folds"].as_array().unwrap();
    let mean_r2 = folds
        .iter()
        .map(|f| f["held_out"]["r2"].as_f64().unwrap())
        .sum::<f64>()
        / folds.len() as f64;
    assert!((report["mean"]["r2"].as_f64().unwrap() - mean_r2).abs() < 1e-12);
}

/// A Poisson model predicts the mean e^score, and eval's deviance, RMSE and R² are those of
/// the means (recomputed here from the labels); the online learners refuse the loss.
#[test]
fn a_poisson_model_predicts_means_and_is_judged_by_its_deviance() {
    let data = real_data::data_dir().join("diabetes");
    let (train, test) = (data.join("train.svm.gz"), data.join("test.svm.gz"));
    let (train, test) = (train.to_str().unwrap(), test.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let model = model.to_str().unwrap();
    let args = [
        "train", train, "--algo", "newton", "--loss", "poisson", "--lambda", "1e-3",
    ];
    cli::run(&[&args[..], &["-o", model, "--quiet"]].concat());
    let numbers = |out: String| -> Vec<f64> { out.lines().map(|l| l.parse().unwrap()).collect() };
    let means = numbers(cli::run(&["predict", model, test]));
    let scores = numbers(cli::run(&["predict", "--scores", model, test]));
    for (mean, score) in means.iter().zip(&scores) {
        assert!(
            (mean - score.exp()).abs() <= 1e-12 * mean,
            "{mean} vs e^{score}"
        );
    }
    let labels = gz_labels(&data.join("test.svm.gz"));
    let m = labels.len() as f64;
    let deviance = 2.0 / m
        * (labels.iter().zip(&means))
            .map(|(y, mu)| y * (y / mu).ln() - y + mu)
            .sum::<f64>();
    let rmse = ((labels.iter().zip(&means))
        .map(|(y, mu)| (y - mu).powi(2))
        .sum::<f64>()
        / m)
        .sqrt();
    let metrics: serde_json::Value =
        serde_json::from_str(&cli::run(&["eval", model, test, "--json"])).unwrap();
    let close = |key: &str, expected: f64| {
        let got = metrics[key].as_f64().unwrap();
        assert!(
            (got - expected).abs() <= 1e-6 * expected,
            "{key}: {got} vs {expected}"
        );
    };
    close("poisson_deviance", deviance);
    close("mean_loss", deviance / 2.0);
    close("rmse", rmse);
    let r2 = metrics["r2"].as_f64().unwrap();
    assert!(
        (0.4..0.5).contains(&r2),
        "{r2} (squared loss: 0.4..0.5 too)"
    );
    let printed = cli::run(&[&args[..], &["-o", model, "--quiet", "--test", test]].concat());
    assert!(
        printed.contains("test objective") && printed.contains(", deviance 2"),
        "{printed}"
    );
    cli::refused(
        &[
            "train", train, "--algo", "asgd", "--loss", "poisson", "-o", model,
        ],
        "asgd cannot learn poisson loss",
    );
    let negative = dir.path().join("negative.svm");
    std::fs::write(&negative, "3 1:0.01\n-2 2:0.02\n").unwrap();
    cli::refused(
        &["eval", model, negative.to_str().unwrap()],
        "row 2 of the labels is -2, but a Poisson model scores counts or rates",
    );
}

/// An online learner's model that errs on its training rows as often as always predicting the
/// larger class is flagged: on spambase's unscaled features ASGD learns nothing usable.
#[test]
fn an_online_model_no_better_than_a_constant_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let model = model.to_str().unwrap();
    let flagged = "is no lower than always predicting the larger class (0.39001)";
    let spambase = real_data::data_dir().join("spambase/train.svm.gz");
    let heart = real_data::data_dir().join("heart_scale/heart_scale");
    for (data, algo, expected) in [(&spambase, "asgd", true), (&heart, "asgd", false)] {
        let data = data.to_str().unwrap();
        let out = sparselin(&["train", data, "--algo", algo, "--threads", "1", "-o", model]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(stderr.contains(flagged), expected, "{data}: {stderr}");
    }
    // A batch solver's model is not judged so: stopped at iteration 0 it is w = 0, whose
    // scores of 0 predict −1 everywhere, but it warns that it stopped short instead.
    let data = spambase.to_str().unwrap();
    let args = [
        "train",
        data,
        "--algo",
        "lbfgs",
        "--loss",
        "log",
        "--max-iter",
        "0",
    ];
    let out = sparselin(&[&args[..], &["--json", "-o", model]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["train"]["error_rate"].as_f64(),
        Some(1429.0 / 3664.0)
    );
    assert!(stderr.contains("stopped before converging") && !stderr.contains("larger class"));
}

/// `--early-stop N` on real data: the run ends N epochs after its last improvement, well
/// before the 100-epoch limit, the trace scores the held-out rows every epoch (and the plot
/// draws them), the model is the best epoch's (its held-out loss the trace's lowest), the
/// summary says so, and the flags are refused where they cannot apply.
#[test]
fn early_stopping_ends_the_run_at_its_best_epoch_on_the_held_out_rows() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let grain = real_data::data_dir().join("reuters_grain/train.svm.gz");
    let grain = grain.to_str().unwrap();
    let (model, model2, trace, plot) = (p("m"), p("m2"), p("t.csv"), p("t.svg"));
    let common = [
        "train",
        grain,
        "--algo",
        "sgd",
        "--loss",
        "hinge",
        "--lambda",
        "1e-5",
        "--threads",
        "1",
        "--early-stop",
        "3",
        "--quiet",
        "-o",
    ];
    let mut args = common.to_vec();
    args.extend_from_slice(&[&model, "--json", "--trace", &trace, "--plot", &plot]);
    let summary: serde_json::Value = serde_json::from_str(&cli::run(&args)).unwrap();
    let report = &summary["details"]["early_stopping"];
    assert_eq!(report["stopped"], true, "{report}");
    let run = report["epochs_run"].as_u64().unwrap();
    assert!((4..100).contains(&run), "{report}");
    assert_eq!(
        report["held_out_rows"], 155,
        "a tenth of 1,554 rows, by class"
    );
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("held-out loss"),
        "without --test the plot's right panel"
    );
    let trace = std::fs::read_to_string(&trace).unwrap();
    let held_out: Vec<f64> = (trace.lines().skip(1))
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(held_out.len() as u64, run, "{trace}");
    let lowest = held_out.iter().copied().fold(f64::INFINITY, f64::min);
    let best = report["best_epoch"].as_f64().unwrap();
    assert_eq!(held_out[best as usize - 1], lowest, "{trace}");
    let reported = report["best_held_out_loss"].as_f64().unwrap();
    assert!(
        (reported - lowest).abs() <= 1e-11 * lowest,
        "{reported} vs {trace}"
    );
    assert_eq!(
        summary["details"]["steps"],
        best as u64 * 1399,
        "every epoch over the other rows"
    );

    let mut args = common.to_vec();
    args.push(&model2);
    let text = cli::run(&args);
    assert!(text.contains("early stopping: kept epoch"), "{text}");
    assert!(
        text.contains("stopped once 3 epochs in a row lowered the lowest held-out loss"),
        "{text}"
    );

    // Under --cv each fold holds out a tenth of its own training rows, and says what it kept.
    let mut args = common[..common.len() - 1].to_vec();
    args.extend_from_slice(&["--cv", "3"]);
    let text = cli::run(&args);
    let folds: Vec<&str> = text.lines().filter(|l| l.starts_with("fold ")).collect();
    assert_eq!(folds.len(), 3, "{text}");
    for fold in folds {
        assert!(
            fold.contains("trained on 932 rows of 1036 (104 held out to stop early: kept epoch"),
            "{text}"
        );
    }
    args.push("--json");
    let summary: serde_json::Value = serde_json::from_str(&cli::run(&args)).unwrap();
    for fold in summary["folds"].as_array().unwrap() {
        let report = &fold["early_stopping"];
        assert_eq!(report["held_out_rows"], 104, "{fold}");
        let (best, run) = (
            report["best_epoch"].as_f64().unwrap(),
            report["epochs_run"].as_u64().unwrap(),
        );
        assert!(best >= 1.0 && best <= run as f64 && run < 100, "{fold}");
    }

    let refused = |extra: &[&str], message: &str| {
        let mut args = vec!["train", grain, "-o", "/dev/null"];
        args.extend_from_slice(extra);
        cli::refused(&args, message);
    };
    refused(
        &["--algo", "lbfgs", "--loss", "log", "--early-stop", "3"],
        "--early-stop does not apply to --algo lbfgs",
    );
    refused(&["--holdout", "0.2"], "--early-stop");
    refused(&["--early-stop", "0"], "--early-stop");
    refused(
        &["--early-stop", "2", "--holdout", "1"],
        "the share held out",
    );
    refused(
        &["--early-stop", "2", "--early-stop-tol", "-1"],
        "tolerance",
    );
}

/// `--algo adagrad`: its step η and L1 term are taken and recorded (η, not t₀, in the
/// details), predictions come back from the model as written, and the schedule's settings
/// (t₀, bias rate, resuming), several threads and η for another learner are refused with a
/// reason.
#[test]
fn adagrad_trains_with_its_step_and_refuses_the_schedules_settings() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    write_data(Path::new(&p("train.svm")), 300, 10);
    let data = p("train.svm");
    let train = |extra: &[&str]| {
        let mut args = vec!["train", &data, "--algo", "adagrad", "--quiet"];
        args.extend_from_slice(extra);
        if !extra.contains(&"-o") {
            args.extend(["-o", "/dev/null"]);
        }
        let out = sparselin(&args);
        (out.status.success(), out)
    };
    let (ok, out) = train(&["--loss", "log", "--eta", "0.5", "--l1", "1e-3", "--json"]);
    assert!(ok, "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["algorithm"], "adagrad");
    assert_eq!(summary["details"]["eta"], 0.5);
    assert_eq!(summary["details"]["t0"], serde_json::Value::Null);
    assert_eq!(summary["l1"], 1e-3);
    assert!(
        summary["train"]["error_rate"].as_f64().unwrap() < 0.1,
        "{summary}"
    );
    let (ok, out) = train(&["--json"]);
    assert!(ok, "{}", text(&out));
    let default: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(default["details"]["eta"], 1.0);
    let model = p("m.model");
    let (ok, out) = train(&["--lambda", "0", "-o", &model]);
    assert!(ok, "λ = 0 is plain AdaGrad: {}", text(&out));
    let scores = sparselin(&["predict", &p("m.model"), &p("train.svm"), "--scores"]);
    assert!(scores.status.success(), "{}", text(&scores));
    let shown = sparselin(&["show", &p("m.model")]);
    assert!(text(&shown).contains("adagrad"), "{}", text(&shown));
    let refusals: [(&[&str], &str); 5] = [
        (&["--t0", "5"], "--t0 does not apply to --algo adagrad"),
        (
            &["--free-bias", "--bias-rate", "2"],
            "--bias-rate does not apply",
        ),
        (&["--save-resume"], "--save-resume does not apply"),
        (&["--threads", "2"], "adagrad runs on one thread only"),
        (&["--eta", "0"], "--eta must be positive"),
    ];
    for (extra, message) in refusals {
        let (ok, out) = train(extra);
        assert!(!ok, "{extra:?}");
        assert_refused(&out, message);
    }
    let out = sparselin(&[
        "train",
        &data,
        "--algo",
        "sgd",
        "--eta",
        "1",
        "-o",
        "/dev/null",
    ]);
    assert_refused(&out, "--eta does not apply to --algo sgd");
    // λ = 0 in a grid: plain AdaGrad, which the scheduled learners cannot run.
    let grid = |algo| {
        let args = [
            "train",
            &data,
            "--algo",
            algo,
            "--cv",
            "3",
            "--lambda-grid",
            "1e-2,0",
        ];
        sparselin(&args)
    };
    let out = grid("adagrad");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("\nλ = 0: objective"), "{}", text(&out));
    assert_refused(
        &grid("sgd"),
        "--lambda-grid must be positive and finite, got 0",
    );
}
