//! Vowpal Wabbit text through the command line: `convert --format vw` hashes names into
//! columns and stores the importance weights; training and evaluation weigh the rows by
//! them exactly as they weigh a LIBSVM dataset's rows by a `--sample-weights` file, and
//! read from the text itself (`--format vw`) as from its conversion; bad input, bad flags
//! and damaged weights are clear errors that leave nothing behind.

mod cli;

use std::fs;
use std::path::Path;

use cli::sparselin;

fn ok(args: &[&str]) -> String {
    let out = sparselin(args);
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn failure(args: &[&str], message: &str) {
    let out = sparselin(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
    assert!(err.contains(message), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// 240 rows of VW text: two named namespaces (one scaled), the default one, numeric and
/// string names, tags of both kinds, and importance weights of 0, 1 and fractions.
fn vw_text() -> String {
    let mut text = String::new();
    for i in 0..240u32 {
        let label = if (i * 7 + 3) % 5 < 2 { "1" } else { "-1" };
        let weight = match i % 4 {
            0 => String::new(),
            1 => " 2.5".to_string(),
            2 => " 0.5".to_string(),
            _ if i % 8 == 3 => " 0".to_string(),
            _ => " 1".to_string(),
        };
        let tag = match i % 3 {
            0 => format!(" 'row{i}"),
            1 => format!(" id{i}"),
            _ => String::new(),
        };
        let space = if i % 3 == 1 { "" } else { " " };
        let x = (i % 13) as f32 / 4.0 - 1.0;
        text.push_str(&format!(
            "{label}{weight}{tag}{space}|words w{} w{} {}:{x} |num:0.5 {} len:{} | bias{}\n",
            i % 17,
            i % 29,
            i % 11,
            i % 7,
            (i % 5) + 1,
            i % 2
        ));
    }
    text
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        let files = Files {
            dir: tempfile::tempdir().unwrap(),
        };
        fs::write(files.path("train.vw"), vw_text()).unwrap();
        files
    }

    /// `train.vw` converted into 2^10 columns; the dataset's path.
    fn converted(&self) -> String {
        let data = self.path("vw");
        ok(&[
            "convert",
            &self.path("train.vw"),
            &data,
            "--format",
            "vw",
            "--bits",
            "10",
        ]);
        data
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }
}

fn train(data: &str, model: &str, algo: &str, extra: &[&str]) {
    let mut args = vec![
        "train",
        data,
        "-o",
        model,
        "--algo",
        algo,
        "--loss",
        "log",
        "--threads",
        "1",
    ];
    args.extend_from_slice(extra);
    ok(&args);
}

fn same_bytes(a: &str, b: &str) -> bool {
    fs::read(a).unwrap() == fs::read(b).unwrap()
}

#[test]
fn vw_importance_weights_train_as_a_weight_file_does() {
    let f = Files::new();
    let (vw, text, weights) = (f.path("vw"), f.path("text.svm"), f.path("weights.txt"));
    let summary = ok(&[
        "convert",
        &f.path("train.vw"),
        &vw,
        "--format",
        "vw",
        "--bits",
        "12",
        "--rows-per-shard",
        "50",
    ]);
    assert!(summary.contains("240 rows, 4096 columns") && summary.contains("sample weights"));
    assert!(ok(&["verify", &vw]).contains("sample weights verified"));
    let info = ok(&["info", &vw]);
    assert!(info.contains("weights    min 0, max 2.5"), "{info}");
    assert!(info.contains("30 rows of weight 0"), "{info}");
    // The same rows as LIBSVM text and a weight file, converted twice: with the weights
    // stored, and without (to be given to train).
    ok(&["export", &vw, &text, "--sample-weights", &weights]);
    let (stored, plain) = (f.path("stored"), f.path("plain"));
    ok(&[
        "convert",
        &text,
        &stored,
        "--features",
        "4096",
        "--sample-weights",
        &weights,
        "--rows-per-shard",
        "70",
    ]);
    ok(&["convert", &text, &plain, "--features", "4096"]);
    for algo in ["sgd", "asgd", "lbfgs"] {
        let model = |name: &str| f.path(&format!("{algo}-{name}.model"));
        train(&vw, &model("vw"), algo, &[]);
        train(&stored, &model("stored"), algo, &[]);
        train(
            &plain,
            &model("file"),
            algo,
            &["--sample-weights", &weights],
        );
        train(&plain, &model("unweighted"), algo, &[]);
        assert!(same_bytes(&model("vw"), &model("stored")), "{algo}");
        assert!(same_bytes(&model("vw"), &model("file")), "{algo}");
        let scores = |model: &str| ok(&["predict", model, &plain, "--scores"]);
        assert_ne!(scores(&model("vw")), scores(&model("unweighted")), "{algo}");
        // Evaluation weighs the objective by the stored weights too.
        let vw_model = model("vw");
        let eval = |data: &str, extra: &[&str]| {
            let mut args = vec!["eval", &vw_model, data, "--json"];
            args.extend_from_slice(extra);
            ok(&args)
        };
        assert_eq!(
            eval(&vw, &[]),
            eval(&plain, &["--sample-weights", &weights])
        );
        assert_ne!(eval(&vw, &[]), eval(&plain, &[]));
    }
    // A weight file given to train replaces the stored weights: weights of 1 give the
    // unweighted model's scores (the models' records of the weights differ).
    let ones = f.path("ones.txt");
    fs::write(&ones, "1\n".repeat(240)).unwrap();
    train(
        &vw,
        &f.path("ones.model"),
        "sgd",
        &["--sample-weights", &ones],
    );
    let scores = |model: &str| ok(&["predict", model, &plain, "--scores"]);
    assert_eq!(
        scores(&f.path("ones.model")),
        scores(&f.path("sgd-unweighted.model"))
    );
    assert_ne!(
        scores(&f.path("ones.model")),
        scores(&f.path("sgd-vw.model"))
    );
}

#[test]
fn a_file_without_importance_weights_stores_none() {
    let f = Files::new();
    let text = "1 |a x y:2\n-1 'tag |a z\n1 1 |b x\n";
    fs::write(f.path("t.vw"), text).unwrap();
    let out = f.path("out");
    let summary = ok(&["convert", &f.path("t.vw"), &out, "--format", "vw"]);
    assert!(summary.contains("262144 columns") && !summary.contains("sample weights"));
    let manifest = fs::read_to_string(Path::new(&out).join("manifest.json")).unwrap();
    assert!(manifest.contains("\"version\":3") && !manifest.contains("sample_weights"));
}

#[test]
fn bad_vw_text_and_flags_are_errors_that_leave_nothing() {
    let f = Files::new();
    let out = f.path("out");
    let bad = f.path("bad.vw");
    fs::write(&bad, "1 |a x\n-1 |a y\n1 |a z:oops\n").unwrap();
    let vw = ["--format", "vw"];
    let convert = |input: &str, extra: &[&str], message: &str| {
        let mut args = vec!["convert", input, &out];
        args.extend_from_slice(extra);
        failure(&args, message);
        assert!(!Path::new(&out).exists(), "{args:?}");
    };
    convert(
        &bad,
        &vw,
        "bad.vw:3:8: feature value 'oops' is not a finite number",
    );
    fs::write(&bad, "1 |a x\n|a y\n").unwrap();
    convert(&bad, &vw, "bad.vw:2:1: no label");
    fs::write(&bad, "1 -3 |a x\n").unwrap();
    convert(&bad, &vw, "bad.vw:1:3: importance weight -3 is negative");
    let train = f.path("train.vw");
    convert(&train, &["--format", "vw", "--bits", "0"], "0 hash bits");
    convert(&train, &["--format", "vw", "--bits", "33"], "33 hash bits");
    convert(
        &train,
        &["--bits", "12"],
        "--bits is for Vowpal Wabbit text",
    );
    convert(&train, &["--format", "vw", "--zero-based"], "--zero-based");
    convert(
        &train,
        &["--format", "vw", "--bits", "12", "--features", "100"],
        "2^12 = 4096 columns",
    );
    let weights = f.path("w.txt");
    fs::write(&weights, "1\n2\n").unwrap();
    convert(
        &train,
        &["--format", "vw", "--sample-weights", &weights],
        "gives its rows' weights itself",
    );
    let svm = f.path("t.svm");
    fs::write(&svm, "1 1:1\n-1 2:1\n1 3:1\n").unwrap();
    convert(
        &svm,
        &["--sample-weights", &weights],
        "2 sample weights for 3 rows",
    );
    fs::write(&weights, "0\n0\n0\n").unwrap();
    convert(
        &svm,
        &["--sample-weights", &weights],
        "every sample weight is 0",
    );
}

#[test]
fn damaged_weights_or_manifests_are_refused() {
    let f = Files::new();
    let data = f.converted();
    let weights = Path::new(&data).join("sample_weights.f64");
    let original = fs::read(&weights).unwrap();
    let mut damaged = original.clone();
    damaged[8] ^= 0x40;
    fs::write(&weights, &damaged).unwrap();
    failure(&["verify", &data], "sample_weights.f64: checksum mismatch");
    failure(
        &["train", &data, "-o", &f.path("m"), "--algo", "sgd"],
        "sample_weights.f64: checksum mismatch",
    );
    assert!(!Path::new(&f.path("m")).exists());
    fs::write(&weights, &original[..original.len() - 8]).unwrap();
    failure(&["verify", &data], "sample_weights.f64");
    fs::write(&weights, &original).unwrap();
    ok(&["verify", &data]);
    // Version 4 is the version with weights, and only it.
    let manifest = Path::new(&data).join("manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, text.replace("\"version\":4", "\"version\":3")).unwrap();
    failure(&["info", &data], "manifest version 3 with sample weights");
}

#[test]
fn learners_without_row_weights_warn_that_they_ignore_stored_ones() {
    let f = Files::new();
    let data = f.converted();
    let out = sparselin(&[
        "train",
        &data,
        "-o",
        &f.path("m"),
        "--algo",
        "aerr",
        "--loss",
        "squared",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(
        err.contains("carries sample weights, which aerr does not use"),
        "{err}"
    );
}

#[test]
fn vw_text_read_directly_trains_predicts_and_evaluates_as_its_conversion() {
    let f = Files::new();
    let text = f.path("train.vw");
    let data = f.converted();
    let vw = ["--format", "vw", "--bits", "10"];
    for algo in ["sgd", "asgd", "lbfgs"] {
        let model = |name: &str| f.path(&format!("{algo}-{name}.model"));
        train(&data, &model("dataset"), algo, &[]);
        train(&text, &model("text"), algo, &vw);
        assert!(same_bytes(&model("dataset"), &model("text")), "{algo}");
    }
    // Text a model scores is hashed into the model's bits unless told otherwise.
    let model = f.path("sgd-text.model");
    // Predictions read no labels: VW's unlabeled test lines (tags kept) predict as the
    // labeled ones; evaluation needs the labels.
    let unlabeled = f.path("unlabeled.vw");
    let without_labels: String = vw_text()
        .lines()
        .map(|line| {
            let bar = line.find('|').unwrap();
            let tag = line[..bar].split_whitespace().find(|t| t.starts_with('\''));
            format!("{} {}\n", tag.unwrap_or(""), &line[bar..])
        })
        .collect();
    fs::write(&unlabeled, without_labels).unwrap();
    assert_eq!(
        ok(&["predict", &model, &unlabeled, "--format", "vw", "--scores"]),
        ok(&["predict", &model, &text, "--format", "vw", "--scores"])
    );
    failure(
        &["eval", &model, &unlabeled, "--format", "vw"],
        "unlabeled.vw:1:1: no label",
    );
    for command in ["predict", "eval"] {
        let on_data = ok(&[command, &model, &data]);
        assert_eq!(ok(&[command, &model, &text, "--format", "vw"]), on_data);
        assert_eq!(
            ok(&[command, &model, &text, "--format", "vw", "--bits", "10"]),
            on_data
        );
        failure(
            &[command, &model, &text, "--format", "vw", "--bits", "12"],
            "--bits 12, but the model has 2^10 columns",
        );
    }
    // The importance weights weigh the objective: the unweighted rows evaluate otherwise.
    let ones = f.path("ones.txt");
    fs::write(&ones, "1\n".repeat(240)).unwrap();
    let unweighted = ok(&[
        "eval",
        &model,
        &text,
        "--format",
        "vw",
        "--sample-weights",
        &ones,
    ]);
    assert_ne!(unweighted, ok(&["eval", &model, &data]));
    // Cross-validation and a --test set read the text as well.
    let cv = |input: &str, extra: &[&str]| {
        let mut args = vec![
            "train", input, "--cv", "3", "--algo", "sgd", "--loss", "log",
        ];
        args.extend_from_slice(&["--threads", "1"]);
        args.extend_from_slice(extra);
        ok(&args)
    };
    // The header names where the weights come from: the text, or the dataset's weight file.
    let weights_file = format!("{data}/sample_weights.f64");
    let replaced = |out: String| out.replace(&text, "W").replace(&weights_file, "W");
    assert_eq!(replaced(cv(&text, &vw)), replaced(cv(&data, &[])));
    // A --test set of VW text scores as its conversion does (test rows are unweighted).
    let test_line = |test: &str| {
        let mut args = vec![
            "train", &text, "-o", &model, "--algo", "sgd", "--test", test,
        ];
        args.extend_from_slice(&vw);
        args.extend_from_slice(&["--threads", "1"]);
        let out = ok(&args);
        let line = out.lines().find(|l| l.starts_with("test objective"));
        line.unwrap_or_else(|| panic!("{out}")).to_string()
    };
    assert_eq!(test_line(&text), test_line(&data));
    // Flags of one format given for the other, and hash bits at odds with --features.
    let refused = |flags: &[&str], message: &str| {
        let mut args = vec!["train", &text, "-o", &model];
        args.extend_from_slice(flags);
        failure(&args, message);
    };
    refused(
        &["--bits", "10"],
        "--bits is for Vowpal Wabbit text: add --format vw",
    );
    refused(
        &["--format", "vw", "--zero-based"],
        "--zero-based numbers LIBSVM indices",
    );
    refused(
        &["--format", "vw", "--features", "100"],
        "100 declared features, but hashed Vowpal Wabbit text has 2^18 = 262144 columns",
    );
    let bad = f.path("bad.vw");
    fs::write(&bad, "1 0 |a x\n-1 0 |b z\n").unwrap();
    failure(
        &["train", &bad, "-o", &model, "--format", "vw"],
        "importance weights: every sample weight is 0",
    );
}

#[test]
fn interactions_are_formed_recorded_and_given_again_to_text_a_model_scores() {
    let f = Files::new();
    let text = f.path("train.vw");
    let data = f.path("crossed");
    let crossed = [
        "--quadratic",
        "wn",
        "--cubic",
        "wn ",
        "--interactions",
        "ww",
    ];
    let mut convert = vec!["convert", &text, &data, "--format", "vw", "--bits", "14"];
    convert.extend_from_slice(&crossed);
    let summary = ok(&convert);
    let info = ok(&["info", &data]);
    assert!(
        info.contains(r#"vw text    {"interactions":["wn","wn ","ww"]}"#),
        "{info}"
    );
    // More columns per row than without the interactions.
    let plain = f.path("plain");
    ok(&["convert", &text, &plain, "--format", "vw", "--bits", "14"]);
    let nnz = |info: &str| -> u64 {
        let line = info.lines().find(|l| l.starts_with("nnz ")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert!(nnz(&info) > 2 * nnz(&ok(&["info", &plain])), "{summary}");
    // Trained on the text with the same flags: the same model, bit for bit, recording them.
    let (from_data, from_text) = (f.path("data.model"), f.path("text.model"));
    train(&data, &from_data, "asgd", &[]);
    let mut direct = vec!["--format", "vw", "--bits", "14"];
    direct.extend_from_slice(&crossed);
    train(&text, &from_text, "asgd", &direct);
    assert!(same_bytes(&from_data, &from_text));
    let shown = ok(&["show", &from_data, "--json"]);
    assert!(shown.contains("vw_features"), "{shown}");
    // Text a model scores is given its interactions (and bits) unless told otherwise, and
    // must not be told other ones.
    let scores = ok(&["predict", &from_data, &data, "--scores"]);
    let vw = ["--format", "vw"];
    let mut args = vec!["predict", &from_data, &text, "--scores"];
    args.extend_from_slice(&vw);
    assert_eq!(ok(&args), scores);
    args.extend_from_slice(&crossed);
    assert_eq!(ok(&args), scores);
    failure(
        &[
            "predict",
            &from_data,
            &text,
            "--format",
            "vw",
            "--quadratic",
            "wn",
        ],
        r#"but the model was trained on text read by {"interactions":["wn","wn ","ww"]}"#,
    );
    failure(
        &["predict", &from_data, &text, "--quadratic", "wn"],
        "--quadratic is for Vowpal Wabbit text: add --format vw",
    );
    let unconverted = f.path("x");
    let refused = |flags: &[&str], message: &str| {
        let mut args = vec!["convert", &text, &unconverted, "--format", "vw"];
        args.extend_from_slice(flags);
        failure(&args, message);
    };
    refused(
        &["--cubic", "ab"],
        "--cubic \"ab\": give 3 namespace letters",
    );
    refused(&["--ignore", "a", "--keep", "b"], "both ignored and kept");
    // A manifest's interactions are checked as flags are.
    let manifest = Path::new(&data).join("manifest.json");
    let json = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, json.replace("\"ww\"", "\"w\"")).unwrap();
    failure(
        &["info", &data],
        "vw_features: interaction 'w' has fewer than two",
    );
    fs::write(&manifest, json.replace("\"ww\"", "\"ww\"],\"color\":[")).unwrap();
    failure(&["info", &data], "unknown field `color`");
}

/// Every line of `vw_text` has the namespaces ` `, `n` and `w`, so the wildcard pair `::`
/// forms there the six pairs of those letters, each once, and is recorded as given.
#[test]
fn a_wildcard_forms_every_pair_of_the_namespaces_of_a_line() {
    let f = Files::new();
    let text = f.path("train.vw");
    let convert = |name: &str, interactions: &[&str]| {
        let data = f.path(name);
        let mut args = vec!["convert", &text, &data, "--format", "vw", "--bits", "14"];
        for interaction in interactions {
            args.extend_from_slice(&["--quadratic", interaction]);
        }
        ok(&args);
        let exported = f.path(&format!("{name}.svm"));
        ok(&["export", &data, &exported]);
        (data, fs::read_to_string(exported).unwrap())
    };
    let (wild, rows) = convert("wild", &["::"]);
    let (_, pairs) = convert("pairs", &["nw", "  ", " w", "ww", "nn", " n"]);
    assert_eq!(rows, pairs);
    let (_, plain) = convert("plain", &[]);
    assert_ne!(rows, plain);
    let info = ok(&["info", &wild]);
    assert!(
        info.contains(r#"vw text    {"interactions":["::"]}"#),
        "{info}"
    );
    // A model trained on it gives the wildcard to text it scores.
    let model = f.path("wild.model");
    train(&wild, &model, "sgd", &[]);
    let scores = ok(&["predict", &model, &wild, "--scores"]);
    assert_eq!(
        ok(&["predict", &model, &text, "--format", "vw", "--scores"]),
        scores
    );
}

#[test]
fn dropped_namespaces_and_hashed_digits_are_recorded_and_read_alike() {
    let f = Files::new();
    let text = f.path("train.vw");
    let data = f.path("dropped");
    let rules = [
        "--ignore",
        "n",
        "--ignore-linear",
        "w",
        "--hash",
        "all",
        "--quadratic",
        "w ",
    ];
    let mut convert = vec!["convert", &text, &data, "--format", "vw", "--bits", "12"];
    convert.extend_from_slice(&rules);
    ok(&convert);
    let info = ok(&["info", &data]);
    assert!(
        info.contains(
            r#"vw text    {"interactions":["w "],"ignore":"n","ignore_linear":"w","hash_all":true}"#
        ),
        "{info}"
    );
    let model = f.path("m");
    train(&data, &model, "sgd", &[]);
    // The text is read as the model's data was: the same scores as the dataset's.
    let scores = ok(&["predict", &model, &data, "--scores"]);
    assert_eq!(
        ok(&["predict", &model, &text, "--format", "vw", "--scores"]),
        scores
    );
    let mut given = vec!["predict", &model, &text, "--format", "vw", "--scores"];
    given.extend_from_slice(&rules);
    assert_eq!(ok(&given), scores);
    given.pop();
    given.pop();
    failure(&given, "but the model was trained on text read by");
    // A dataset converted by other rules is refused as such text is.
    let plain = f.converted();
    for command in ["predict", "eval"] {
        failure(
            &[command, &model, &plain],
            r#"converted from Vowpal Wabbit text read by {}, but the model was trained on text read by {"interactions":["w "],"ignore":"n","ignore_linear":"w","hash_all":true}"#,
        );
    }
}
