//! `sparselin train --algo aerr|aelr|aesvr` end to end: the model is written, the attributes
//! observed are reported, bad settings fail with a message and no model.

mod cli;

use cli::sparselin;

/// 400 rows over 12 features, y = x₁ − x₂ (a sparse linear target).
fn write_data(path: &std::path::Path) {
    let mut s = String::new();
    for i in 0..400 {
        let (a, b) = ((i % 7) as f64 / 7.0, (i % 5) as f64 / 5.0);
        s.push_str(&format!("{} 1:{a} 2:{b} {}:0.5\n", a - b, 3 + i % 10));
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn lao_learners_train_and_report_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let train = p("train.svm");
    write_data(std::path::Path::new(&train));
    for (algo, extra) in [
        ("aerr", vec![]),
        ("aelr", vec![]),
        ("aesvr", vec!["--loss", "epsilon-insensitive:0.05"]),
    ] {
        let model = p(&format!("{algo}.model"));
        let mut args = vec![
            "train",
            &train,
            "--algo",
            algo,
            "--attributes",
            "3",
            "--radius",
            "2",
            "--json",
            "--quiet",
            "-o",
            &model,
        ];
        args.extend(extra);
        let out = sparselin(&args);
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{algo}: {text}");
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["algorithm"], algo);
        let observed = summary["details"]["attributes_observed"].as_u64().unwrap();
        match algo {
            "aerr" => assert_eq!(observed, 400 * 4),
            "aelr" => assert_eq!(observed, 400 * 4 - 1),
            _ => assert!(observed > 400 * 3 && observed < 400 * 12, "{observed}"),
        }
        assert!(std::path::Path::new(&model).exists());
    }
}

#[test]
fn lao_bad_settings_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let train = p("train.svm");
    write_data(std::path::Path::new(&train));
    for (args, message) in [
        (
            vec!["--algo", "aesvr", "--loss", "hinge"],
            "epsilon-insensitive",
        ),
        (
            vec!["--algo", "aerr", "--loss", "hinge"],
            "learns the squared loss",
        ),
        (
            vec!["--algo", "aelr", "--lambda", "1"],
            "--lambda does not apply",
        ),
        (vec!["--algo", "aerr", "--radius", "1e120"], "at most 1e100"),
        (
            vec!["--algo", "aesvr", "--radius", "1e120"],
            "at most 1e100",
        ),
        (vec!["--algo", "aerr", "--radius", "0"], "--radius"),
        (vec!["--algo", "aelr", "--attributes", "0"], "attributes"),
    ] {
        let model = p("bad.model");
        let mut all = vec!["train", &train, "-o", &model, "--quiet"];
        all.extend(args);
        let out = sparselin(&all);
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{all:?} succeeded");
        assert!(text.contains(message), "{all:?}: {text}");
        assert!(!std::path::Path::new(&model).exists());
    }
}

#[test]
fn lao_defaults_fit_small_data_and_empty_data_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // Two features: the default k (4) is cut to 2; aesvr takes its default insensitivity.
    std::fs::write(p("two.svm"), "0.5 1:1 2:0.5\n-0.2 1:-0.3 2:1\n0.1 2:0.2\n").unwrap();
    for algo in ["aerr", "aelr", "aesvr"] {
        let out = sparselin(&[
            "train",
            &p("two.svm"),
            "--algo",
            algo,
            "-o",
            &p("m"),
            "--quiet",
        ]);
        assert!(
            out.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // AELR keeps its weights in logarithms: a huge radius is no trouble.
    let out = sparselin(&[
        "train",
        &p("two.svm"),
        "--algo",
        "aelr",
        "--radius",
        "1e120",
        "-o",
        &p("m"),
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(p("empty.svm"), "").unwrap();
    std::fs::write(p("labels.svm"), "0.5\n0.3\n").unwrap();
    for (data, message) in [("empty.svm", "no rows"), ("labels.svm", "no features")] {
        let out = sparselin(&[
            "train",
            &p(data),
            "--algo",
            "aerr",
            "-o",
            &p("m"),
            "--quiet",
        ]);
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            !out.status.success() && text.contains(message),
            "{data}: {text}"
        );
    }
}
