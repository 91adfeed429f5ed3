//! `sparselin gen / convert / info` end to end: no progress output when standard error is
//! not a terminal (as here, where it is a pipe), and `info` reading the column statistics.

use std::process::{Command, Output};

fn sparselin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparselin"))
        .args(args)
        .output()
        .expect("the binary runs")
}

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
