//! Compiles `tests/c/train_predict.c` against `include/sparselin.h` and the static library,
//! runs it (on a LIBSVM file and its dataset), and checks the scores it prints against the
//! Rust API's for the same settings.
//! Skipped, with a message, when no C compiler (`cc`) is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use sparselin::api::{self, Learner, Loss, Trainer};
use sparselin::data::convert::{ConvertOptions, convert};

/// A small deterministic LIBSVM file: 300 rows, 40 features, ±1 labels from a planted w.
fn write_data(path: &Path) {
    let mut text = String::new();
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    for _ in 0..300 {
        let mut entries: Vec<(u32, f64)> = (0..6)
            .map(|_| (next() % 40 + 1, f64::from(next() % 1000) / 500.0 - 1.0))
            .collect();
        entries.sort_by_key(|e| e.0);
        entries.dedup_by_key(|e| e.0);
        let score: f64 = entries
            .iter()
            .map(|(j, v)| v * (f64::from(*j) - 20.5))
            .sum();
        text.push_str(if score > 0.0 { "+1" } else { "-1" });
        for (j, v) in entries {
            text.push_str(&format!(" {j}:{v}"));
        }
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// The static library cargo built for this test run: beside the test executable in
/// `target/<profile>/deps/` (a staticlib's file name carries no hash).
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libsparselin.a");
    assert!(lib.is_file(), "{} was not built", lib.display());
    lib
}

#[test]
fn c_program_trains_and_predicts_like_the_rust_api() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("SKIPPED: no C compiler '{cc}' found; install gcc to run the C ABI test");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("train_predict");
    let status = Command::new(&cc)
        .arg("-std=c99")
        .args(["-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(root.join("tests/c/train_predict.c"))
        .arg("-I")
        .arg(root.join("include"))
        .arg(static_library())
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap();
    assert!(status.success(), "compiling the C program failed");

    let data_path = dir.path().join("data.svm");
    write_data(&data_path);
    let dataset = dir.path().join("data");
    convert(&data_path, &dataset, &ConvertOptions::default()).unwrap();
    let output = Command::new(&exe)
        .arg(&data_path)
        .arg(dir.path().join("c.model"))
        .arg(&dataset)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the C program failed:\n{stderr}");
    let from_c: Vec<f64> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();

    let data = api::open(&data_path).unwrap();
    let model = Trainer::new(Learner::ASGD)
        .loss(Loss::Hinge)
        .lambda(1e-3)
        .epochs(3)
        .seed(7)
        .train(&data)
        .unwrap();
    let from_rust = api::scores(&model, &data);
    assert_eq!(from_c.len(), 300);
    assert_eq!(from_c, from_rust, "C and Rust scores differ");
    assert!(from_rust.iter().any(|s| *s != 0.0));
}
