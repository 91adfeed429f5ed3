//! The O(k) learners against `../shared/prototype/golden/sgd_asgd_casgd.json`: 21 fixed
//! problems on real data, each with its explicit step sequence π and the exact (w, b) and
//! (w̄, b̄) of the dense reference (`prototype/golden.py`). As the file's doc string says,
//! predictions w·x + b on the used rows are compared relative to Σ_j |w_j x_j| + |b|, to 1e-9.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sparselin::data::libsvm::{ParseOptions, ValueType, read_file};
use sparselin::data::{CsrMatrix, Examples, ValueVec};
use sparselin::loss::Loss;
use sparselin::online::{Asgd, Casgd, Iterate, Learner, Schedule, Sgd};

#[derive(Deserialize)]
struct Golden {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    data: String,
    rows: usize,
    n_features: usize,
    lam: f64,
    loss: String,
    algo: String,
    t0: f64,
    ta: u64,
    pi: Vec<usize>,
    expected: Expected,
}

#[derive(Deserialize)]
struct Expected {
    w: Vec<(usize, f64)>,
    b: f64,
    wbar: Vec<(usize, f64)>,
    bbar: f64,
}

/// `../shared` beside the repository (as CI lays it out).
fn shared() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    assert!(
        dir.join("prototype/golden/sgd_asgd_casgd.json").is_file(),
        "{} does not hold prototype/golden/sgd_asgd_casgd.json: these tests need the shared \
         directory checked out beside the repository",
        dir.display()
    );
    dir
}

/// The first `rows` rows of a LIBSVM file, values in f64 as the reference read them.
fn first_rows(path: &Path, rows: usize, n_features: usize) -> CsrMatrix {
    let options = ParseOptions {
        value_type: ValueType::F64,
        n_features: Some(n_features),
        ..ParseOptions::default()
    };
    let all = read_file(path, options).unwrap();
    let end = all.offsets()[rows] as usize;
    let ValueVec::F64(values) = all.values() else {
        panic!("read as f64")
    };
    CsrMatrix::new(
        all.labels()[..rows].to_vec(),
        all.offsets()[..=rows].to_vec(),
        all.indices()[..end].to_vec(),
        ValueVec::F64(values[..end].to_vec()),
        n_features,
    )
    .unwrap()
}

fn dense(pairs: &[(usize, f64)], n: usize) -> Vec<f64> {
    let mut w = vec![0.0; n];
    for &(j, v) in pairs {
        w[j - 1] = v;
    }
    w
}

/// Largest prediction difference relative to Σ|w_j x_j| + |b| over the rows.
fn prediction_error(data: &CsrMatrix, got: &Iterate, want_w: &[f64], want_b: f64) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..data.n_rows() {
        let row = data.row(i);
        let (mut p_got, mut p_want, mut scale) = (got.bias, want_b, want_b.abs());
        for (k, &j) in row.indices.iter().enumerate() {
            let x = row.values.get(k);
            p_got += got.weights[j as usize] * x;
            p_want += want_w[j as usize] * x;
            scale += (want_w[j as usize] * x).abs();
        }
        worst = worst.max((p_got - p_want).abs() / scale.max(f64::MIN_POSITIVE));
    }
    worst
}

fn run<L: Learner>(mut learner: L, data: &CsrMatrix, loss: Loss, pi: &[usize]) -> L {
    for (t, &i) in pi.iter().enumerate() {
        let row = data.row(i);
        learner.step(i, row, loss.target(row.label), 1.0, t as u64 + 1);
    }
    learner
}

#[test]
fn every_golden_case_is_reproduced() {
    let shared = shared();
    let text =
        std::fs::read_to_string(shared.join("prototype/golden/sgd_asgd_casgd.json")).unwrap();
    let golden: Golden = serde_json::from_str(&text).unwrap();
    assert_eq!(golden.cases.len(), 21);
    let mut failures = Vec::new();
    for case in &golden.cases {
        let data = first_rows(&shared.join(&case.data), case.rows, case.n_features);
        let loss: Loss = case.loss.parse().unwrap();
        let schedule = Schedule {
            lambda: case.lam,
            t0: case.t0,
            average_start: case.ta,
            bias_rate: 1.0,
        };
        let n = case.n_features;
        let t = case.pi.len() as u64;
        // SGD's cases also hold the average of its iterates: ASGD's averaged output.
        let (last, averaged) = match case.algo.as_str() {
            "sgd" => {
                let sgd = run(
                    Sgd::new(n, loss, schedule, true).unwrap(),
                    &data,
                    loss,
                    &case.pi,
                );
                let asgd = run(
                    Asgd::new(n, loss, schedule, true).unwrap(),
                    &data,
                    loss,
                    &case.pi,
                );
                assert_eq!(
                    sgd.snapshot(t).unwrap().last,
                    asgd.snapshot(t).unwrap().last,
                    "{}",
                    case.name
                );
                (
                    sgd.snapshot(t).unwrap().last,
                    asgd.snapshot(t).unwrap().averaged.unwrap(),
                )
            }
            "asgd" => {
                let s = run(
                    Asgd::new(n, loss, schedule, true).unwrap(),
                    &data,
                    loss,
                    &case.pi,
                )
                .snapshot(t)
                .unwrap();
                (s.last, s.averaged.unwrap())
            }
            "casgd" => {
                let learner = Casgd::new(&data, loss, schedule, true).unwrap();
                let s = run(learner, &data, loss, &case.pi).snapshot(t).unwrap();
                (s.last, s.averaged.unwrap())
            }
            other => panic!("unknown algorithm {other}"),
        };
        let e = &case.expected;
        let last_error = prediction_error(&data, &last, &dense(&e.w, n), e.b);
        let averaged_error = prediction_error(&data, &averaged, &dense(&e.wbar, n), e.bbar);
        println!(
            "{:32} last {last_error:.1e} averaged {averaged_error:.1e}",
            case.name
        );
        if !(last_error <= 1e-9 && averaged_error <= 1e-9) {
            failures.push(format!("{}: {last_error:e} {averaged_error:e}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "cases off by more than 1e-9: {failures:?}"
    );
}
