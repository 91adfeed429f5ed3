//! The data subcommands on bad input: a clear error naming the file, a non-zero exit (never a
//! panic or an abort), and nothing left behind — feature counts beyond 32-bit indices,
//! corrupt per-column files under `verify`, out-of-range `gen`/`convert` settings — and
//! `demo` on the smallest training set it accepts.

mod cli;

use std::path::Path;
use std::process::{Command, Output};

use cli::sparselin;

/// Asserts that `out` is a clean failure (exit status 1, not a panic's 101 or an abort's
/// signal) whose message contains every one of `parts`.
fn assert_refused(out: &Output, parts: &[&str]) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for part in parts {
        assert!(stderr.contains(part), "{part:?} not in {stderr}");
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Copies the flat dataset directory `from` to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// 60 rows of LIBSVM text over 40 features with varied values.
fn small_text() -> String {
    (0..60)
        .map(|i| {
            let label = if i % 3 == 0 { 1 } else { -1 };
            let a = 1 + i % 40;
            let b = 1 + (i * 7 + 3) % 40;
            let (a, b) = (a.min(b), a.max(b) + u32::from(a == b));
            format!("{label} {a}:{}.5 {b}:0.25\n", i % 5)
        })
        .collect()
}

#[test]
fn convert_refuses_feature_counts_beyond_32_bit_indices_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // The largest 1-based index a u32 holds: with --features 10 it is refused as it is read,
    // before the column statistics are sized by it (which would need 64 GB).
    std::fs::write(p("huge.svm"), "1 4294967295:1\n").unwrap();
    let out = sparselin(&["convert", "-q", "--features", "10", &p("huge.svm"), &p("h")]);
    assert_refused(
        &out,
        &["huge.svm:1:3: index 4294967295 is beyond the declared 10 features"],
    );
    std::fs::write(p("small.svm"), small_text()).unwrap();
    for features in ["4294967297", "99999999999"] {
        let out = sparselin(&[
            "convert",
            "-q",
            "--features",
            features,
            &p("small.svm"),
            &p("s"),
        ]);
        assert_refused(
            &out,
            &[
                "small.svm",
                &format!("{features} features declared"),
                "at most 2^32",
            ],
        );
    }
    assert_eq!(names(dir.path()), ["huge.svm", "small.svm"]);
}

#[test]
fn a_feature_count_from_meta_json_is_checked_and_named_and_a_stray_one_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("t.svm"), "1 1:1 2:1\n-1 1:1\n1 2:1 5:1\n").unwrap();
    let meta = p("meta.json");
    std::fs::write(&meta, r#"{"features": 3}"#).unwrap();
    let out = sparselin(&["train", &p("t.svm"), "-o", &p("m.model")]);
    let beyond = format!("t.svm:3:7: index 5 is beyond the 3 features that {meta} declares");
    assert_refused(&out, &[&beyond]);
    // convert reads it too, and leaves no dataset behind when it refuses.
    let out = sparselin(&["convert", &p("t.svm"), &p("ds"), "--quiet"]);
    assert_refused(&out, &[&beyond]);
    assert!(!std::path::Path::new(&p("ds")).exists());
    std::fs::write(&meta, r#"{"features": 7}"#).unwrap();
    let out = sparselin(&["train", &p("t.svm"), "-o", &p("m.model"), "--quiet"]);
    assert!(out.status.success(), "{out:?}");
    let out = sparselin(&["convert", &p("t.svm"), &p("ds"), "--quiet"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("3 rows, 7 columns"),
        "{out:?}"
    );
    std::fs::remove_dir_all(p("ds")).unwrap();
    // `meta.json` is a common name: one that is not JSON, or whose entry is not a feature
    // count, is not the data's. A warning names it; the count is the largest index seen.
    let bad_entries = ["\"abc\"", "1e3", "-4", "null", "4294967297"]
        .map(|bad| format!(r#"{{"other": 1, "features": {bad}}}"#));
    for (text, why) in bad_entries
        .iter()
        .map(|text| (text.as_str(), "\"features\" is "))
        .chain([("garbage", "expected value"), ("", "EOF while parsing")])
    {
        std::fs::write(&meta, text).unwrap();
        for args in [
            &["train", &p("t.svm"), "-o", &p("m2.model"), "--quiet"][..],
            &["eval", &p("m.model"), &p("t.svm")],
            &["predict", &p("m.model"), &p("t.svm")],
        ] {
            let out = sparselin(args);
            assert!(out.status.success(), "{text}: {out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let warning = format!("sparselin: warning: {meta}: {why}");
            assert!(stderr.contains(&warning), "{text}: {stderr}");
            assert!(
                stderr.contains("not used for the feature count"),
                "{stderr}"
            );
        }
    }
}

/// The commands that read a dataset directory, given a text file, say to convert it.
#[test]
fn info_verify_and_export_of_a_text_file_say_to_convert_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("t.svm"), small_text()).unwrap();
    for args in [
        &["info", &p("t.svm")][..],
        &["verify", &p("t.svm")],
        &["export", &p("t.svm"), &p("out.svm")],
    ] {
        let out = sparselin(args);
        let expected = format!(
            "{}: a file, where a dataset directory is expected",
            p("t.svm")
        );
        assert_refused(&out, &[&expected, "sparselin convert"]);
    }
    assert_eq!(names(dir.path()), ["t.svm"]);
}

#[test]
fn train_refuses_feature_counts_beyond_32_bit_indices() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("small.svm"), small_text()).unwrap();
    assert!(
        sparselin(&["convert", "-q", &p("small.svm"), &p("ds")])
            .status
            .success()
    );
    for data in [p("ds"), p("small.svm")] {
        let out = sparselin(&[
            "train",
            &data,
            "-o",
            &p("model"),
            "--features",
            "4294967297",
        ]);
        assert_refused(
            &out,
            &[&data, "4294967297 features declared", "at most 2^32"],
        );
    }
    assert_eq!(names(dir.path()), ["ds", "small.svm"]);
}

#[test]
fn verify_checks_the_per_column_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    std::fs::write(p("small.svm"), small_text()).unwrap();
    let (text, good) = (p("small.svm"), p("good"));
    let out = sparselin(&[
        "convert",
        "-q",
        "--rows-per-shard",
        "16",
        text.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let verify = |d: &Path| sparselin(&["verify", d.to_str().unwrap()]);
    assert!(verify(&good).status.success());
    let means = "column_means.f64";
    let frequencies = "column_frequencies.u64";

    let corrupt = p("corrupt");
    copy_dir(&good, &corrupt);
    let mut bytes = std::fs::read(corrupt.join(means)).unwrap();
    bytes[100] ^= 0x11;
    std::fs::write(corrupt.join(means), bytes).unwrap();
    assert_refused(
        &verify(&corrupt),
        &["corrupt/column_means.f64", "checksum mismatch"],
    );

    let truncated = p("truncated");
    copy_dir(&good, &truncated);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(truncated.join(frequencies))
        .unwrap();
    file.set_len(100).unwrap();
    assert_refused(
        &verify(&truncated),
        &["truncated/column_frequencies.u64", "100 bytes"],
    );

    let missing = p("missing");
    copy_dir(&good, &missing);
    std::fs::remove_file(missing.join(means)).unwrap();
    assert_refused(&verify(&missing), &["missing/column_means.f64"]);

    // A wrong checksum in the manifest, the file itself intact.
    let listed = p("listed");
    copy_dir(&good, &listed);
    let manifest = std::fs::read_to_string(listed.join("manifest.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let crc = json["column_frequencies"]["crc32"].as_u64().unwrap();
    json["column_frequencies"]["crc32"] = (crc ^ 1).into();
    std::fs::write(listed.join("manifest.json"), json.to_string()).unwrap();
    assert_refused(
        &verify(&listed),
        &["listed/column_frequencies.u64", "checksum mismatch"],
    );

    // An array rewritten with its checksum fixed in the manifest: the contents no longer
    // describe the shards. Renumbered, so the message must map the column back to its feature.
    let renumbered = p("renumbered");
    let out = sparselin(&[
        "convert",
        "-q",
        "--renumber",
        "--rows-per-shard",
        "16",
        text.to_str().unwrap(),
        renumbered.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(verify(&renumbered).status.success());
    let permutation: Vec<u32> = bytemuck::pod_collect_to_vec(
        &std::fs::read(renumbered.join("feature_permutation.u32")).unwrap(),
    );
    for (file, entry, edit) in [
        (frequencies, "column_frequencies", 8u64.to_le_bytes()),
        (means, "column_means", 0.5f64.to_le_bytes()),
    ] {
        let edited = p(&format!("edited_{entry}"));
        copy_dir(&renumbered, &edited);
        let mut bytes = std::fs::read(edited.join(file)).unwrap();
        bytes[24..32].copy_from_slice(&edit);
        std::fs::write(edited.join(file), &bytes).unwrap();
        let manifest = std::fs::read_to_string(edited.join("manifest.json")).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&manifest).unwrap();
        json[entry]["crc32"] = crc32fast::hash(&bytes).into();
        std::fs::write(edited.join("manifest.json"), json.to_string()).unwrap();
        let place = format!("column 3 (feature {}) holds", permutation[3] + 1);
        let path = format!("edited_{entry}/{file}");
        assert_refused(&verify(&edited), &[&path, &place, "the shards give"]);
    }

    // A version-1 manifest holds the arrays inline as JSON: means that need 17 digits must
    // read back to the bit, and an edited one is named by its manifest entry.
    let v1 = p("v1");
    copy_dir(&good, &v1);
    let manifest = std::fs::read_to_string(v1.join("manifest.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let f: Vec<u64> = bytemuck::pod_collect_to_vec(&std::fs::read(v1.join(frequencies)).unwrap());
    let m: Vec<f64> = bytemuck::pod_collect_to_vec(&std::fs::read(v1.join(means)).unwrap());
    assert!(m.iter().any(|x| format!("{x}").len() > 17), "{m:?}");
    json["version"] = 1.into();
    json["column_frequencies"] = serde_json::json!(f);
    json["column_means"] = serde_json::json!(m);
    std::fs::write(v1.join("manifest.json"), json.to_string()).unwrap();
    std::fs::remove_file(v1.join(frequencies)).unwrap();
    std::fs::remove_file(v1.join(means)).unwrap();
    let out = verify(&v1);
    assert!(out.status.success(), "{out:?}");
    json["column_means"][5] = (m[5] * (1.0 + f64::EPSILON)).into();
    std::fs::write(v1.join("manifest.json"), json.to_string()).unwrap();
    assert_refused(
        &verify(&v1),
        &[
            "v1/manifest.json",
            "column_means: column 5 (feature 6) holds",
        ],
    );
}

#[test]
fn no_command_uses_a_shard_whose_checksums_fail() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("small.svm"), small_text()).unwrap();
    let out = sparselin(&[
        "convert",
        "-q",
        "--rows-per-shard",
        "16",
        &p("small.svm"),
        &p("ds"),
    ]);
    assert!(out.status.success(), "{out:?}");
    // Flip the sign of the first label of the third shard (the label section starts right
    // after the 192-byte header): still a finite label, so only the checksum tells.
    let shard = dir.path().join("ds/shard-000002.csr");
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes[192 + 7] ^= 0x80;
    std::fs::write(&shard, bytes).unwrap();
    let refusal = ["ds/shard-000002.csr", "labels section checksum mismatch"];
    assert_refused(&sparselin(&["verify", &p("ds")]), &refusal);
    // `info` summarizes the labels: it checks them first.
    assert_refused(&sparselin(&["info", &p("ds")]), &refusal);
    assert_refused(&sparselin(&["info", "--json", &p("ds")]), &refusal);
    assert_refused(&sparselin(&["export", &p("ds"), &p("out.svm")]), &refusal);
    assert_refused(&sparselin(&["export", &p("ds"), "-"]), &refusal);
    // Nor is the corrupt label trained on, or scored.
    assert!(
        sparselin(&["train", &p("small.svm"), "-o", &p("m")])
            .status
            .success()
    );
    assert_refused(&sparselin(&["train", &p("ds"), "-o", &p("m2")]), &refusal);
    assert_refused(&sparselin(&["eval", &p("m"), &p("ds")]), &refusal);
    assert_refused(&sparselin(&["predict", &p("m"), &p("ds")]), &refusal);
    std::fs::remove_file(p("m")).unwrap();
    assert_eq!(names(dir.path()), ["ds", "small.svm"], "nothing written");
}

/// The manifest of the dataset `dir`, as JSON.
fn read_manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

/// A copy of the dataset `from` at `to` whose manifest is `edit` of the original's text.
fn copy_with_manifest(from: &Path, to: &Path, edit: impl FnOnce(String) -> String) {
    copy_dir(from, to);
    let text = std::fs::read_to_string(to.join("manifest.json")).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(to.join("manifest.json"), edited).unwrap();
}

/// A manifest entry that names another shard's file — two same-shaped shards' names swapped,
/// or `shard-000001.csr` flipped by one bit to `shard-000000.csr` (the audit's repro) — is
/// refused by every command that opens the dataset, naming the manifest, the entry and the
/// file, before any row is read or written; version 2 (no checksums recorded) still reads,
/// version 4 without the sample weights it stands for is refused, and so is version 5.
#[test]
fn no_command_reads_a_shard_its_manifest_entry_does_not_record() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let s = |name: &str| p(name).to_str().unwrap().to_string();
    std::fs::write(p("small.svm"), small_text()).unwrap();
    // 60 rows of two entries each: six shards of 10 rows, 20 entries and the same length.
    let out = sparselin(&[
        "convert",
        "-q",
        "--rows-per-shard",
        "10",
        &s("small.svm"),
        &s("good"),
    ]);
    assert!(out.status.success(), "{out:?}");
    let manifest = read_manifest(&p("good"));
    assert_eq!(manifest["version"], 3);
    let entries = manifest["shards"].as_array().unwrap();
    let shape = |e: &serde_json::Value| (e["rows"].clone(), e["nnz"].clone(), e["bytes"].clone());
    assert_eq!(entries.len(), 6);
    assert!(entries.iter().all(|e| shape(e) == shape(&entries[0])));
    let out = sparselin(&["train", &s("small.svm"), "-o", &s("m"), "--quiet"]);
    assert!(out.status.success(), "{out:?}");
    let exported = sparselin(&["export", &s("good"), "-"]);
    assert!(exported.status.success(), "{exported:?}");

    let refused_everywhere = |data: &str, parts: &[&str]| {
        for args in [
            &["info", data][..],
            &["verify", data],
            &["export", data, "-"],
            &["train", data, "-o", &s("m2")],
            &["eval", &s("m"), data],
            &["predict", &s("m"), data],
        ] {
            let out = sparselin(args);
            assert_refused(&out, parts);
            assert!(out.stdout.is_empty(), "{args:?} wrote {out:?}");
        }
    };
    copy_with_manifest(&p("good"), &p("swapped"), |text| {
        text.replace("shard-000001.csr", "shard-00000X.csr")
            .replace("shard-000002.csr", "shard-000001.csr")
            .replace("shard-00000X.csr", "shard-000002.csr")
    });
    refused_everywhere(
        &s("swapped"),
        &[
            "swapped/manifest.json: shard entry 1 names shard-000002.csr, whose header checksum",
            "recorded for it",
        ],
    );
    copy_with_manifest(&p("good"), &p("flipped"), |text| {
        text.replace(
            r#""file":"shard-000001.csr""#,
            r#""file":"shard-000000.csr""#,
        )
    });
    refused_everywhere(
        &s("flipped"),
        &[
            "flipped/manifest.json",
            "entries 0 and 1 both name shard-000000.csr",
        ],
    );

    let mut v2 = manifest.clone();
    v2["version"] = 2.into();
    for entry in v2["shards"].as_array_mut().unwrap() {
        entry
            .as_object_mut()
            .unwrap()
            .remove("header_crc32")
            .unwrap();
    }
    copy_with_manifest(&p("good"), &p("v2"), |_| v2.to_string());
    for args in [&["info", &s("v2")][..], &["verify", &s("v2")]] {
        let out = sparselin(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    let out = sparselin(&["export", &s("v2"), "-"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, exported.stdout);

    copy_with_manifest(&p("good"), &p("v4"), |text| {
        text.replace(r#""version":3"#, r#""version":4"#)
    });
    refused_everywhere(
        &s("v4"),
        &["v4/manifest.json: manifest version 4 without sample weights"],
    );
    copy_with_manifest(&p("good"), &p("v5"), |text| {
        text.replace(r#""version":3"#, r#""version":5"#)
    });
    refused_everywhere(
        &s("v5"),
        &["v5/manifest.json: unsupported manifest version 5"],
    );
    assert!(!p("m2").exists());
}

/// `info` on shards whose checksums hold but whose labels or row offsets are wrong (written
/// behind the writer's back): offsets that go past the entries and come back, which a
/// subtraction would turn into a row of 2^64 − 1 entries, and a NaN label; and on an inner
/// row offset changed after writing, which only its section's checksum tells. Each is refused
/// with `verify`'s message, naming the shard, and nothing is printed.
#[test]
fn info_refuses_offsets_and_labels_that_verify_refuses() {
    use sparselin::data::{DatasetWriter, FinishOptions, ShardParts, ValueKind, Values};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, labels: &[f64], offsets: &[u64]| {
        let path = dir.path().join(name);
        let mut writer = DatasetWriter::create(&path, ValueKind::Ones).unwrap();
        let parts = ShardParts {
            labels,
            offsets,
            indices: &[0, 1, 2, 3, 4],
            values: Values::Ones,
            n_features: 5,
        };
        writer.write_shard(&parts).unwrap();
        writer.finish(FinishOptions::default()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let wrapping = write("wrapping", &[1.0, -1.0, 1.0], &[0, u64::MAX, 3, 5]);
    let nan = write("nan", &[1.0, f64::NAN, -1.0], &[0, 1, 3, 5]);
    let flipped = write("flipped", &[1.0, -1.0, 1.0], &[0, 1, 3, 5]);
    // The offsets section follows 3 labels at the next multiple of 64 after the header: 256.
    let shard = dir.path().join("flipped/shard-000000.csr");
    let mut bytes = std::fs::read(&shard).unwrap();
    assert_eq!(bytes[256 + 16], 3, "offsets[2]");
    bytes[256 + 16] = 4;
    std::fs::write(&shard, bytes).unwrap();
    let cases = [
        (
            wrapping,
            "wrapping/shard-000000.csr: row 0: offsets 0..18446744073709551615 are decreasing or \
             past 5 entries",
        ),
        (nan, "nan/shard-000000.csr: row 1: label is not finite"),
        (
            flipped,
            "flipped/shard-000000.csr: row offsets section checksum mismatch",
        ),
    ];
    for (data, message) in cases {
        for args in [
            &["verify", &data][..],
            &["info", &data],
            &["info", "--json", &data],
        ] {
            let out = sparselin(args);
            assert_refused(&out, &[message]);
            assert!(out.stdout.is_empty(), "{args:?} printed {out:?}");
        }
    }
}

/// `-` is standard input as an input; as the output directory of `convert` or `gen` it is
/// refused, where it used to create a directory named `-`. `./-` still names one.
#[test]
fn convert_and_gen_refuse_dash_as_their_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.svm"), small_text()).unwrap();
    let in_dir = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sparselin"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("the binary runs")
    };
    let out = in_dir(&["convert", "-q", "small.svm", "-"]);
    assert_refused(
        &out,
        &["-: the output is a dataset directory, which standard output cannot hold"],
    );
    let out = in_dir(&["gen", "-q", "--train-rows", "10", "--test-rows", "5", "-"]);
    assert_refused(
        &out,
        &["-: the output is a corpus directory, which standard output cannot hold"],
    );
    let out = in_dir(&["gen", "-q", "--train-rows", "10", "corpus", "--text", "-"]);
    assert_refused(
        &out,
        &[
            "--text -: the text goes to two files",
            "standard output cannot hold",
        ],
    );
    assert_eq!(names(dir.path()), ["small.svm"]);
    let out = in_dir(&["convert", "-q", "small.svm", "./-"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(names(dir.path()), ["-", "small.svm"]);
}

#[test]
fn gen_and_convert_refuse_out_of_range_settings_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let flip = "--noise is a label flip probability";
    let std_dev = "--noise is the noise standard deviation";
    let shards = "--rows-per-shard must be at least 1";
    let refused: [(&[&str], [&str; 2]); 5] = [
        (
            &["--task", "regression", "--noise", "nan"],
            [std_dev, "not NaN"],
        ),
        (
            &["--task", "regression", "--noise", "inf"],
            [std_dev, "not inf"],
        ),
        (&["--noise", "2"], [flip, "between 0 and 1, not 2"]),
        (&["--noise=-1"], [flip, "between 0 and 1, not -1"]),
        (&["--rows-per-shard", "0"], [shards, shards]),
    ];
    let out_dir = p("gx");
    for (settings, message) in refused {
        let mut args = vec!["gen", "-q", "--train-rows", "50", "--test-rows", "5"];
        args.extend(settings);
        args.push(&out_dir);
        assert_refused(&sparselin(&args), &message);
        assert!(!dir.path().join("gx").exists(), "{settings:?}");
    }
    let noisy = [
        "gen",
        "-q",
        "--task",
        "regression",
        "--noise",
        "2",
        "--train-rows",
        "50",
    ];
    let out = sparselin(&[&noisy[..], &["--test-rows", "5", &p("gx")]].concat());
    assert!(
        out.status.success(),
        "a regression noise of 2 is a std-dev: {out:?}"
    );

    std::fs::write(p("small.svm"), small_text()).unwrap();
    let out = sparselin(&[
        "convert",
        "-q",
        "--rows-per-shard",
        "0",
        &p("small.svm"),
        &p("c"),
    ]);
    assert_refused(&out, &[shards]);
    assert_eq!(names(dir.path()), ["gx", "small.svm"]);
}

#[test]
fn demo_runs_on_a_small_training_set() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("demo");
    let work = work.to_str().unwrap();
    // 50 training rows reach few of the corpus's columns; the test set has them all.
    let out = sparselin(&["demo", "--dir", work, "--train-rows", "50", "--epochs", "1"]);
    assert!(out.status.success(), "{out:?}");
    let other = dir.path().join("other");
    let refused = sparselin(&[
        "demo",
        "--dir",
        other.to_str().unwrap(),
        "--train-rows",
        "0",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(!other.exists());
}

#[test]
fn gen_leaves_no_directory_when_its_text_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("file"), "").unwrap();
    let under_a_file = format!("{}/corpus", p("file"));
    let out = sparselin(&[
        "gen",
        "-q",
        "--train-rows",
        "10",
        "--text",
        &under_a_file,
        &p("g"),
    ]);
    assert_refused(&out, &["Not a directory"]);
    assert_eq!(names(dir.path()), ["file"]);
    let made = gen_tiny(&[&p("g")]);
    assert!(made.status.success(), "{made:?}");
    assert_eq!(names(&dir.path().join("g")), ["test", "train"]);
    let again = sparselin(&["gen", "-q", "--train-rows", "10", &p("g")]);
    assert_refused(&again, &["already exists"]);
}

/// `sparselin gen -q` of a 10 + 5-row corpus, with `args` after.
fn gen_tiny(args: &[&str]) -> Output {
    let mut all = vec!["gen", "-q", "--train-rows", "10", "--test-rows", "5"];
    all.extend(args);
    sparselin(&all)
}

#[test]
fn gen_writes_text_inside_its_own_output_directory() {
    // The README's `sparselin gen corpus/ --text corpus/rcv1`: the output directory does not
    // exist yet, and its text goes in with the rest.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corpus");
    let prefix = out.join("sub").join("rcv1");
    let made = gen_tiny(&[
        "--text",
        prefix.to_str().unwrap(),
        &format!("{}/", out.display()),
    ]);
    assert!(made.status.success(), "{made:?}");
    assert_eq!(names(&out), ["sub", "test", "train"]);
    assert_eq!(names(&out.join("sub")), ["rcv1.test.svm", "rcv1.train.svm"]);
    assert_eq!(names(dir.path()), ["corpus"], "no staging directory left");
}
