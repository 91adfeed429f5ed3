//! The command line under conditions a user's scripts create: a bad `SPARSELIN_ISA`, standard
//! output closed or full, output paths that cannot be written, a run that diverges, test data
//! with features the training data never had, and traces that cannot be drawn. Each must end
//! in a clear error (or a quiet exit for a closed pipe), never a panic, and must replace no
//! existing file.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn sparselin(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sparselin"));
    command.args(args);
    command
}

fn run(args: &[&str]) -> Output {
    sparselin(args).output().expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failure with a message, not a panic.
fn assert_clean_failure(out: &Output, message: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(err.contains(message), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A temporary directory with a toy training file in it, and the paths of that file and of a
/// model beside it (not yet written).
struct Toy {
    dir: tempfile::TempDir,
    data: String,
    model: String,
}

fn toy() -> Toy {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (data, model) = (path("train.svm"), path("m.model"));
    fs::write(&data, "1 1:1 2:1\n-1 1:-1 2:0.5\n1 1:0.5\n-1 2:-1\n").unwrap();
    Toy { dir, data, model }
}

#[test]
fn a_bad_kernel_path_is_an_error_not_a_panic() {
    let Toy {
        dir: _dir, data, ..
    } = toy();
    for args in [&["info", "/no/such/dir"][..], &["train", &data, "-o", "m"]] {
        let out = sparselin(args)
            .env("SPARSELIN_ISA", "bogus")
            .output()
            .unwrap();
        assert_clean_failure(&out, "SPARSELIN_ISA=\"bogus\" is not a kernel path");
    }
}

#[test]
fn a_full_standard_output_is_an_error_and_a_closed_one_ends_quietly() {
    let Toy { dir, data, model } = toy();
    let (data, model) = (&data[..], &model[..]);
    let out = sparselin(&["train", data, "-o", model, "--quiet"])
        .stdout(dev_full())
        .output()
        .unwrap();
    assert_clean_failure(&out, "writing to standard output");
    // A pipe whose reader is gone before the program starts: every write fails with EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = sparselin(&["eval", model, data])
        .stdout(Stdio::from(writer))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    // The same for `export -`, whose write error is a data error naming `-`.
    let dataset = dir.path().join("ds");
    let dataset = dataset.to_str().unwrap();
    assert!(run(&["convert", "-q", data, dataset]).status.success());
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = sparselin(&["export", dataset, "-"])
        .stdout(Stdio::from(writer))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A run whose outputs cannot all be written replaces none of them: here the trace goes to
/// `/dev/full` (written in place, a device), whose failure came to light only as it was
/// flushed, after the model had been moved over the old one.
#[test]
fn a_run_that_cannot_write_every_output_replaces_none() {
    let Toy { dir, data, model } = toy();
    fs::write(&model, "the old model").unwrap();
    let readable = dir.path().join("m.txt");
    let readable = readable.to_str().unwrap();
    let run_args = ["train", &data, "-o", &model, "--readable", readable];
    let out = run(&[&run_args[..], &["--trace", "/dev/full", "--quiet"]].concat());
    assert_clean_failure(&out, "writing /dev/full");
    assert_eq!(fs::read(&model).unwrap(), b"the old model");
    let mut left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["m.model", "train.svm"]);
}

/// `/dev/full`, opened for writing: every write fails with "no space left on device".
fn dev_full() -> Stdio {
    Stdio::from(
        fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

#[test]
fn the_data_commands_end_cleanly_when_their_output_or_error_stream_fails() {
    let Toy { dir, data, .. } = toy();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let dataset = path("ds");
    assert!(run(&["convert", "-q", &data, &dataset]).status.success());
    // A closed pipe on standard output: a quiet, successful exit.
    let converted = path("ds2");
    for args in [
        &["verify", &dataset][..],
        &["convert", "-q", &data, &converted],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = sparselin(args).stdout(writer).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(stderr(&out).is_empty(), "{args:?}: {}", stderr(&out));
    }
    // A full standard output: an error saying so.
    let out = sparselin(&["verify", &dataset])
        .stdout(dev_full())
        .output()
        .unwrap();
    assert_clean_failure(&out, "writing to standard output");
    // A full standard error: the exit status alone tells the outcome, never a panic's 101.
    let text = path("out.svm");
    let corpus = path("corpus");
    for args in [
        &["export", &dataset, &text][..],
        &["gen", &corpus, "--train-rows", "20", "--test-rows", "5"],
    ] {
        let out = sparselin(args).stderr(dev_full()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
    let out = sparselin(&["info", &path("no-such-dir")])
        .stderr(dev_full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn a_binary_classifier_is_not_scored_on_more_than_two_label_values() {
    let Toy { dir, data, model } = toy();
    assert!(
        run(&["train", &data, "-o", &model, "--quiet"])
            .status
            .success()
    );
    let multi = dir.path().join("multi.svm");
    fs::write(&multi, "1 1:1\n2 2:1\n3 1:-1\n-1 2:-1\n").unwrap();
    let multi = multi.to_str().unwrap();
    assert_clean_failure(
        &run(&["eval", &model, multi]),
        "more than two values (1, 2, 3, …)",
    );
    let out = run(&["train", &data, "--test", multi, "-o", &model]);
    assert_clean_failure(&out, "the test labels take more than two values");
}

#[test]
fn a_failed_run_replaces_no_output_and_checks_its_paths_first() {
    let Toy { dir, data, .. } = toy();
    let keep = dir.path().join("keep.model");
    fs::write(&keep, "KEEP").unwrap();
    let keep_path = keep.to_str().unwrap();
    // A companion file under a regular file cannot be written: refused before training.
    let under_a_file = format!("{data}/trace.csv");
    for flag in ["--readable", "--trace", "--plot"] {
        let out = run(&["train", &data, "-o", keep_path, flag, &under_a_file]);
        assert_clean_failure(&out, &under_a_file);
        assert_eq!(fs::read_to_string(&keep).unwrap(), "KEEP");
    }
    // Two outputs naming one file (however spelled): refused before training, as the second
    // would replace the first.
    let dot_keep = dir.path().join(".").join("keep.model");
    let out = run(&[
        "train",
        &data,
        "-o",
        keep_path,
        "--readable",
        dot_keep.to_str().unwrap(),
    ]);
    assert_clean_failure(&out, "-o and --readable both name");
    let shared = dir.path().join("t").to_str().unwrap().to_string();
    let out = run(&[
        "train", &data, "-o", &shared, "--trace", &shared, "--plot", &shared,
    ]);
    assert_clean_failure(&out, "-o and --trace both name");
    assert_eq!(fs::read_to_string(&keep).unwrap(), "KEEP");
    // Steps this long blow up: an error, and neither model nor plot written.
    let plot = dir.path().join("diverged.svg");
    let out = run(&[
        "train",
        &data,
        "-o",
        keep_path,
        "--lambda",
        "1e-300",
        "--t0",
        "1e-300",
        "--loss",
        "squared",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_clean_failure(&out, "training diverged");
    assert_clean_failure(&out, "a larger λ or a smaller step size usually cures it");
    assert_eq!(fs::read_to_string(&keep).unwrap(), "KEEP");
    assert!(!plot.exists());
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.model", "train.svm"], "no temporary left");
}

#[test]
fn features_the_training_data_never_had_weigh_zero_and_no_rows_is_no_score() {
    let Toy { dir, data, model } = toy();
    let (data, model) = (&data[..], &model[..]);
    assert!(
        run(&["train", data, "-o", model, "--quiet"])
            .status
            .success()
    );
    // Feature 9 is beyond the model's two: it adds nothing to the scores.
    let wide = dir.path().join("wide.svm");
    fs::write(&wide, "1 1:1 2:1 9:100\n-1 1:-1 2:0.5\n").unwrap();
    let narrow = dir.path().join("narrow.svm");
    fs::write(&narrow, "1 1:1 2:1\n-1 1:-1 2:0.5\n").unwrap();
    let scores = |path: &Path| {
        let out = run(&["predict", model, path.to_str().unwrap(), "--scores"]);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(scores(&wide), scores(&narrow));
    assert!(
        run(&["eval", model, wide.to_str().unwrap()])
            .status
            .success()
    );
    // No rows: nothing to measure, not a perfect score.
    let empty = dir.path().join("empty.svm");
    fs::write(&empty, "").unwrap();
    let out = run(&["eval", model, empty.to_str().unwrap()]);
    assert_clean_failure(&out, "empty.svm: no rows to evaluate");
}

#[test]
fn traces_that_cannot_be_drawn_are_errors_not_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = |name: &str, rows: &str| {
        let path = dir.path().join(name);
        fs::write(
            &path,
            format!("epochs,steps,seconds,train_objective\n{rows}"),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    let svg = dir.path().join("plot.svg");
    let svg = svg.to_str().unwrap();
    let normal = trace("normal.csv", "1,1,0.001,0.9\n2,2,0.002,0.4\n");
    let out = run(&["plot", "-o", svg, &normal, "--optimum", "0"]);
    assert_clean_failure(&out, "--optimum must be a finite, non-zero J*");
    let extreme = trace("extreme.csv", "1,1,5e-324,1e308\n2,2,0.002,0.4\n");
    let out = run(&["plot", "-o", svg, &extreme]);
    assert_clean_failure(&out, "too wide for a log axis");
    assert!(!Path::new(svg).exists());
    // A non-finite objective is left out; the rest is drawn.
    let with_inf = trace("inf.csv", "1,1,0.001,inf\n2,2,0.002,0.4\n3,3,0.003,0.3\n");
    assert!(run(&["plot", "-o", svg, &with_inf]).status.success());
}

#[test]
fn batch_settings_out_of_range_are_refused() {
    let Toy {
        dir: _dir,
        data,
        model,
    } = toy();
    let (data, model) = (&data[..], &model[..]);
    let lbfgs = [
        "train", data, "-o", model, "--algo", "lbfgs", "--loss", "log",
    ];
    for (setting, message) in [
        (
            "--tol=-1",
            "the tolerance must be a finite number ≥ 0, not -1",
        ),
        (
            "--tol=NaN",
            "the tolerance must be a finite number ≥ 0, not NaN",
        ),
        (
            "--memory=0",
            "the L-BFGS memory must hold at least one pair",
        ),
    ] {
        let out = run(&[&lbfgs[..], &[setting]].concat());
        assert_clean_failure(&out, message);
        assert!(!Path::new(model).exists());
    }
    // A negative number after a flag is its value, refused for its range (not taken for a
    // flag of its own).
    for (setting, message) in [
        (
            ["--lambda", "-1"],
            "λ (lambda) must be a positive finite number of at least 2.2e-308, not -1e0",
        ),
        (["--l1", "-1"], "λ₁ must be a non-negative finite number"),
        (
            ["--tol", "-1"],
            "the tolerance must be a finite number ≥ 0, not -1",
        ),
    ] {
        let out = run(&[&lbfgs[..], &setting].concat());
        assert_clean_failure(&out, message);
        assert!(!Path::new(model).exists());
    }
}

#[test]
fn zero_based_text_is_read_by_train_predict_and_eval_as_the_hint_says() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("zero.svm");
    fs::write(&text, "1 0:1 1:1\n-1 0:-1 1:0.5\n").unwrap();
    let text = text.to_str().unwrap();
    let model = dir.path().join("m.model");
    let model = model.to_str().unwrap();
    let out = run(&["train", text, "-o", model]);
    assert_clean_failure(&out, "use --zero-based");
    assert!(
        run(&["train", text, "-o", model, "--zero-based"])
            .status
            .success()
    );
    for command in ["predict", "eval"] {
        assert!(!run(&[command, model, text]).status.success());
        let out = run(&[command, model, text, "--zero-based"]);
        assert!(out.status.success(), "{command}: {out:?}");
    }
}

#[test]
fn classification_needs_two_classes_of_labels() {
    let Toy { dir, model, .. } = toy();
    let labelled = |name: &str, labels: [&str; 4]| {
        let path = dir.path().join(name);
        let rows = ["1:1 2:1", "1:-1 2:0.5", "1:0.5", "2:-1"];
        let text: String = labels
            .iter()
            .zip(rows)
            .map(|(y, x)| format!("{y} {x}\n"))
            .collect();
        fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let zero_one = labelled("01.svm", ["1", "0", "1", "0"]);
    for algo in ["asgd", "sublbfgs"] {
        let ok = run(&["train", &zero_one, "--algo", algo, "-o", &model]);
        assert!(ok.status.success(), "{algo}: {ok:?}");
        let one_two = labelled("12.svm", ["1", "2", "1", "2"]);
        let out = run(&["train", &one_two, "--algo", algo, "-o", &model]);
        assert_clean_failure(
            &out,
            "hinge loss needs both classes, but every label is > 0",
        );
        // More than two classes train one model per class; labels that are not whole
        // numbers are no classes.
        let three = labelled("123.svm", ["1", "-1", "2", "3"]);
        let out = run(&["train", &three, "--algo", algo, "-o", &model]);
        assert!(out.status.success(), "{algo}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("one-vs-rest over 4 classes"));
        let real = labelled("real.svm", ["1", "-1", "2.5", "3"]);
        let out = run(&["train", &real, "--algo", algo, "-o", &model]);
        assert_clean_failure(
            &out,
            "one-vs-rest takes class numbers as labels, and 2.5 is not",
        );
    }
    // Regression losses take any labels.
    let three = labelled("123.svm", ["1", "-1", "2", "3"]);
    let out = run(&["train", &three, "--loss", "squared", "-o", &model]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn an_output_may_not_overwrite_an_input_and_standard_input_is_read_once() {
    let t = toy();
    let dir = t.dir.path();
    let test = dir.join("test.svm");
    fs::copy(&t.data, &test).unwrap();
    let test = test.to_str().unwrap();
    let original = fs::read(&t.data).unwrap();
    for (args, message) in [
        (
            vec!["train", &t.data, "-o", &t.data],
            "-o ".to_string() + &t.data + " would overwrite the training data",
        ),
        (
            vec![
                "train", &t.data, "-o", &t.model, "--test", test, "--trace", test,
            ],
            "--trace ".to_string() + test + " would overwrite the --test data",
        ),
    ] {
        assert_clean_failure(&run(&args), &message);
    }
    assert_eq!(fs::read(&t.data).unwrap(), original);
    assert_eq!(fs::read(test).unwrap(), original);

    // A model inside a dataset directory, or over one of its shards.
    let set = dir.join("set");
    let set = set.to_str().unwrap();
    assert!(run(&["convert", &t.data, set]).status.success());
    let inside = format!("{set}/shard-000000.csr");
    assert_clean_failure(
        &run(&["train", set, "-o", &inside]),
        "would overwrite the training data",
    );
    assert!(run(&["verify", set]).status.success());

    // Nor over the files it reads besides the data: its sample weights, or the model it
    // starts from, which only the new model may replace (read whole before training).
    let weights = dir.join("w.txt");
    let weights = weights.to_str().unwrap();
    fs::write(weights, "1\n2\n1\n1\n").unwrap();
    let start = dir.join("start.model");
    let start = start.to_str().unwrap();
    let resumable = ["--save-resume", "-o", start, "--quiet"];
    assert!(
        run(&[&["train", &t.data][..], &resumable].concat())
            .status
            .success()
    );
    let saved = fs::read(start).unwrap();
    let lbfgs = [
        "train", &t.data, "--algo", "lbfgs", "--loss", "log", "--quiet",
    ];
    for (args, message) in [
        (
            vec!["--sample-weights", weights, "-o", weights],
            format!("-o {weights} would overwrite the --sample-weights file"),
        ),
        (
            vec![
                "--initial-model",
                start,
                "-o",
                &t.model,
                "--readable",
                start,
            ],
            format!("--readable {start} would overwrite the --initial-model"),
        ),
    ] {
        assert_clean_failure(&run(&[&lbfgs[..], &args].concat()), &message);
    }
    let resume = [
        "train", &t.data, "--resume", start, "-o", &t.model, "--trace", start,
    ];
    let message = format!("--trace {start} would overwrite the --resume model");
    assert_clean_failure(&run(&resume), &message);
    assert_eq!(fs::read(weights).unwrap(), b"1\n2\n1\n1\n");
    assert_eq!(fs::read(start).unwrap(), saved);
    let replaced = [&lbfgs[..], &["--initial-model", start, "-o", start]].concat();
    assert!(run(&replaced).status.success());
    assert_ne!(fs::read(start).unwrap(), saved);

    // `export` over a file of the dataset it reads, or its two outputs on one file.
    let stored = format!("{set}/manifest.json");
    assert_clean_failure(
        &run(&["export", set, &stored]),
        &format!("the output {stored} would overwrite a file of the dataset {set}"),
    );
    let weighted = dir.join("weighted");
    let weighted = weighted.to_str().unwrap();
    let convert = [
        "convert",
        "-q",
        &t.data,
        weighted,
        "--sample-weights",
        weights,
    ];
    assert!(run(&convert).status.success());
    let stored = format!("{weighted}/sample_weights.f64");
    let text = dir.join("back.svm");
    let text = text.to_str().unwrap();
    assert_clean_failure(
        &run(&["export", weighted, text, "--sample-weights", &stored]),
        &format!("--sample-weights {stored} would overwrite a file of the dataset"),
    );
    assert_clean_failure(
        &run(&["export", weighted, text, "--sample-weights", text]),
        &format!("the output and --sample-weights both name {text}"),
    );
    assert!(run(&["verify", set]).status.success() && run(&["verify", weighted]).status.success());

    // A plot over one of its traces.
    let trace = dir.join("run.csv");
    let trace = trace.to_str().unwrap();
    assert!(
        run(&["train", &t.data, "-o", &t.model, "--trace", trace])
            .status
            .success()
    );
    let written = fs::read(trace).unwrap();
    assert_clean_failure(
        &run(&["plot", trace, "-o", trace]),
        "would overwrite the trace",
    );
    assert_eq!(fs::read(trace).unwrap(), written);

    let out = sparselin(&["train", "-", "--test", "-", "-o", &t.model])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_clean_failure(&out, "both name standard input (-), which can be read once");
    let empty = dir.join("empty.svm");
    fs::write(&empty, "").unwrap();
    assert_clean_failure(
        &run(&[
            "train",
            &t.data,
            "-o",
            &t.model,
            "--test",
            empty.to_str().unwrap(),
        ]),
        "no rows to evaluate",
    );
    // Standard input is named as the parser names it.
    assert!(
        run(&["train", &t.data, "-o", &t.model, "--quiet"])
            .status
            .success()
    );
    let out = sparselin(&["eval", &t.model, "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_clean_failure(&out, "<stdin>: no rows to evaluate");
}

#[test]
fn outputs_follow_links_and_standard_output_keeps_its_place() {
    use std::os::unix::fs::symlink;
    let t = toy();
    let dir = t.dir.path();
    fs::write(dir.join("target.model"), "old").unwrap();
    let link = dir.join("link.model");
    symlink("target.model", &link).unwrap();
    let out = run(&["train", &t.data, "-o", link.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read(dir.join("target.model"))
            .unwrap()
            .starts_with(b"SPLNMODL")
    );

    // --readable /dev/stdout into a file: the model's text, then the summary after it (a
    // reopened /dev/stdout would start at 0 and the summary would overwrite the text).
    let captured = dir.join("stdout.txt");
    let out = sparselin(&[
        "train",
        &t.data,
        "-o",
        &t.model,
        "--readable",
        "/dev/stdout",
    ])
    .arg("--quiet")
    .stdout(fs::File::create(&captured).unwrap())
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = fs::read_to_string(&captured).unwrap();
    assert!(text.starts_with("# sparselin model"), "{text}");
    let summary = text.find("train objective").expect("the summary follows");
    assert!(
        summary > text.find("\nbias ").expect("the model's text"),
        "{text}"
    );
}

/// Sends `signal` (a `kill -s` name) to the running `child` once a hidden temporary shows up
/// in `dir`, and returns its exit code.
fn interrupt_once_writing(mut child: std::process::Child, dir: &Path, signal: &str) -> Option<i32> {
    let started = std::time::Instant::now();
    while !fs::read_dir(dir)
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().contains(".tmp-"))
    {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be interrupted"
        );
        assert!(started.elapsed().as_secs() < 60, "no temporary appeared");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-s", signal, &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    child.wait().unwrap().code()
}

/// A file where a dataset's missing parent directory would go is an error naming it (not
/// taken for a temporary's name already in use, which would ask for another name forever).
#[test]
fn a_file_in_the_way_of_the_output_s_parent_is_an_error() {
    let t = toy();
    let blocker = t.dir.path().join("blocker");
    fs::write(&blocker, "").unwrap();
    let out = blocker.join("set");
    let out = out.to_str().unwrap();
    let blocker = blocker.to_str().unwrap();
    assert_clean_failure(
        &run(&["convert", "-q", &t.data, out]),
        &format!("creating {blocker}: "),
    );
    let mut left: Vec<_> = fs::read_dir(t.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["blocker", "train.svm"]);
}

#[test]
fn an_interrupted_command_leaves_no_temporary_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corpus");
    for signal in ["INT", "TERM"] {
        let child = sparselin(&["gen", "--quiet", "--preset", "rcv1-like"])
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert_eq!(
            interrupt_once_writing(child, dir.path(), signal),
            Some(130),
            "{signal}"
        );
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{signal}: {left:?}");
    }
    // Shards of ten rows, written by many threads faster than a directory of them is removed:
    // removed under its own name, the staging directory was left behind every time.
    for signal in ["INT", "TERM"] {
        let child = sparselin(&["gen", "--quiet", "--train-rows", "1000000"])
            .args(["--rows-per-shard", "10"])
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-s", signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let code = child.wait_with_output().unwrap().status.code();
        assert_eq!(code, Some(130), "{signal}");
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{signal}, small shards: {left:?}");
    }
}

#[test]
fn a_shard_or_a_model_given_as_text_is_named_for_what_it_is() {
    let t = toy();
    let set = t.dir.path().join("set");
    let set = set.to_str().unwrap();
    assert!(run(&["convert", &t.data, set]).status.success());
    let shard = format!("{set}/shard-000000.csr");
    assert_clean_failure(
        &run(&["train", &shard, "-o", &t.model]),
        "a shard of a sparselin dataset, not LIBSVM text: pass the dataset's directory",
    );
    assert!(
        run(&["train", &t.data, "-o", &t.model, "--quiet"])
            .status
            .success()
    );
    // A model where the data goes.
    let other = t.dir.path().join("other.model");
    assert_clean_failure(
        &run(&["train", &t.model, "-o", other.to_str().unwrap()]),
        "a sparselin model, not LIBSVM text",
    );
}

#[test]
fn a_model_whose_scores_overflow_is_written_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fs::write(
        p("huge.svm"),
        "+1 1:1e300 2:1\n-1 1:-1e300 3:1\n+1 2:1e299\n-1 3:2\n",
    )
    .unwrap();
    let convert = run(&["convert", "--values", "f64", &p("huge.svm"), &p("huge")]);
    assert!(convert.status.success(), "{}", stderr(&convert));
    let args = [
        "train",
        &p("huge"),
        "--t0",
        "1",
        "--threads",
        "1",
        "-o",
        &p("m"),
    ];
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("warning: the model's training objective is inf: its scores overflow"),
        "{err}"
    );
}
