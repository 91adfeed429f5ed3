//! `sparselin gen / convert / info` end to end: no progress output when standard error is
//! not a terminal (as here, where it is a pipe), and `info` reading the column statistics
//! and summarizing labels.

mod cli;

use cli::sparselin;

#[test]
fn gen_convert_info_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let out = sparselin(&[
        "gen",
        &p("corpus"),
        "--train-rows",
        "3000",
        "--test-rows",
        "100",
        "--text",
        &p("corpus"),
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Only the summary line: no bar, no terminal control characters.
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        !stderr.contains('\x1b') && !stderr.contains('\r'),
        "{stderr:?}"
    );

    let quiet = sparselin(&["gen", &p("quiet"), "--train-rows", "10", "--quiet"]);
    let steep = sparselin(&["gen", &p("steep"), "--train-rows", "10", "--zipf=-1"]);
    assert!(!steep.status.success(), "{steep:?}");
    assert!(String::from_utf8_lossy(&steep.stderr).contains("--zipf must be between"));
    assert!(!dir.path().join("steep").exists());
    assert!(
        quiet.status.success() && quiet.stderr.is_empty(),
        "{quiet:?}"
    );

    for extra in [&[][..], &["--quiet"][..]] {
        let output = p(&format!("converted{}", extra.len()));
        let mut args = vec!["convert", "--renumber"];
        let text = p("corpus.train.svm");
        args.extend([text.as_str(), output.as_str()]);
        args.extend(extra);
        let out = sparselin(&args);
        assert!(out.status.success(), "{out:?}");
        assert!(out.stderr.is_empty(), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("3000 rows"));
    }

    let info = sparselin(&["info", &p("converted0")]);
    assert!(info.status.success(), "{info:?}");
    let stdout = String::from_utf8_lossy(&info.stdout);
    assert!(
        stdout.contains("features renumbered") && stdout.contains("col usage"),
        "{stdout}"
    );
}

/// `info --json` of the dataset converted from `text` (with `extra` convert flags), and
/// `info`'s text output.
fn info(
    dir: &std::path::Path,
    name: &str,
    text: &str,
    extra: &[&str],
) -> (serde_json::Value, String) {
    let p = |file: &str| dir.join(file).to_str().unwrap().to_string();
    std::fs::write(p(&format!("{name}.svm")), text).unwrap();
    let mut args = vec!["convert", "-q"];
    args.extend(extra);
    let (svm, dataset) = (p(&format!("{name}.svm")), p(name));
    args.extend([svm.as_str(), dataset.as_str()]);
    let out = sparselin(&args);
    assert!(out.status.success(), "{out:?}");
    let json = sparselin(&["info", "--json", &dataset]);
    assert!(json.status.success(), "{json:?}");
    let plain = sparselin(&["info", &dataset]);
    assert!(plain.status.success(), "{plain:?}");
    (
        serde_json::from_slice(&json.stdout).unwrap(),
        String::from_utf8(plain.stdout).unwrap(),
    )
}

#[test]
fn info_names_the_densest_feature_by_its_id_in_the_text() {
    let dir = tempfile::tempdir().unwrap();
    // Feature 7 is in every row, 2 in two, 9 in one: renumbered by frequency, 7 becomes
    // internal column 0, which `info` must not print.
    let text = "1 2:1 7:1\n-1 7:1 9:1\n1 2:1 7:1\n";
    for (name, extra) in [("plain", &[][..]), ("renumbered", &["--renumber"][..])] {
        let (json, stdout) = info(dir.path(), name, text, extra);
        assert_eq!(
            json["column_usage"]["densest"],
            serde_json::json!({"feature": 7, "rows": 3}),
            "{name}"
        );
        assert!(
            stdout.contains("; densest feature 7 in 3 rows;"),
            "{name}: {stdout}"
        );
    }
    // No column used: no densest column to name.
    let (json, stdout) = info(dir.path(), "empty", "", &[]);
    assert_eq!(json["column_usage"]["densest"], serde_json::Value::Null);
    assert!(!stdout.contains("densest"), "{stdout}");
}

#[test]
fn info_counts_minus_zero_as_zero_and_averages_huge_labels() {
    let dir = tempfile::tempdir().unwrap();
    let (json, stdout) = info(dir.path(), "signed", "-0 1:1\n0 1:1\n1 1:1\n", &[]);
    assert_eq!(
        json["labels"]["counts"],
        serde_json::json!([[0.0, 2], [1.0, 1]])
    );
    assert!(
        stdout.contains("labels     0: 2 (66.7%), 1: 1 (33.3%)"),
        "{stdout}"
    );
    // Finite labels whose sum overflows: 17 distinct ones (so `info` prints their mean) from
    // 1.00e308 to 1.16e308, mean 1.08e308.
    let text: String = (100..=116).map(|k| format!("{k}e306 1:1\n")).collect();
    let (json, stdout) = info(dir.path(), "huge", &text, &[]);
    let mean = json["labels"]["mean"].as_f64().expect("a finite mean");
    let expected = 1.08e308;
    assert!(
        (mean / expected - 1.0).abs() < 1e-12,
        "{mean:e} vs {expected:e}"
    );
    assert!(
        stdout.contains("labels     real, min 1e308, max 1.16e308, mean 1.08e308\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("inf"), "{stdout}");
    // Everyday labels keep plain decimals, tiny ones go scientific.
    let text: String = (0..17)
        .map(|k| format!("{} 1:1\n", k as f64 / 8.0 - 0.3))
        .collect();
    let (_, stdout) = info(dir.path(), "everyday", &text, &[]);
    assert!(
        stdout.contains("labels     real, min -0.3, max 1.7, mean 0.7\n"),
        "{stdout}"
    );
    // Distinct labels print distinct (each the shortest text that reads back to it).
    let (_, stdout) = info(
        dir.path(),
        "close",
        "1.00001 1:1\n1.00002 1:1\n0.00012 1:1\n",
        &[],
    );
    assert!(
        stdout.contains("labels     0.00012: 1 (33.3%), 1.00001: 1 (33.3%), 1.00002: 1 (33.3%)"),
        "{stdout}"
    );
    let text: String = (1..=17).map(|k| format!("{k}e-9 1:1\n")).collect();
    let (_, stdout) = info(dir.path(), "tiny", &text, &[]);
    assert!(
        stdout.contains("labels     real, min 1e-9, max 1.7e-8, mean 9e-9\n"),
        "{stdout}"
    );
}

/// `gen --classes K` writes labels 1..K, which `train` learns one class against the rest.
#[test]
fn gen_classes_writes_a_multiclass_corpus_that_trains_one_vs_rest() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let rows = [
        "--train-rows",
        "2000",
        "--test-rows",
        "300",
        "--features",
        "100",
    ];
    let out = sparselin(
        &[
            &["gen", &p("c"), "--classes", "4", "--noise", "0"][..],
            &rows,
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("100 features, 4 classes"),
        "{out:?}"
    );
    let (train, test) = (p("c/train"), p("c/test"));
    let args = [
        "train", &train, "--test", &test, "--algo", "dcd", "--lambda", "1e-4",
    ];
    let out = sparselin(&[&args[..], &["-o", &p("c.model"), "--json"]].concat());
    assert!(out.status.success(), "{out:?}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let classes: Vec<f64> = (summary["train"]["classes"].as_array().unwrap().iter())
        .map(|c| c["class"].as_f64().unwrap())
        .collect();
    assert_eq!(classes, [1.0, 2.0, 3.0, 4.0]);
    // Noise-free labels of planted linear models: learnable to a low test error.
    let error = summary["test"]["error_rate"].as_f64().unwrap();
    assert!(error < 0.25, "test error {error}");
    for (extra, message) in [
        (&["--classes", "2"][..], "2 is not in 3..=1000"),
        (
            &["--classes", "3", "--preset", "small-regression"][..],
            "is a regression",
        ),
        (
            &["--classes", "3", "--task", "regression"][..],
            "cannot be used with",
        ),
    ] {
        let out = sparselin(&[&["gen", &p("never")][..], extra].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(message),
            "{extra:?}: {stderr}"
        );
        assert!(!dir.path().join("never").exists());
    }
}
