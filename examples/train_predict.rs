//! The crate as a library: open data, train one learner of each family, evaluate, save, load.
//!
//! ```sh
//! cargo run --release --example train_predict -- TRAIN TEST [MODEL]
//! ```
//!
//! TRAIN and TEST are dataset directories (`sparselin convert`/`gen` output) or LIBSVM files
//! with ±1 labels. With no arguments, a small synthetic problem is built in memory from CSR
//! arrays instead, so the example runs anywhere.

use std::path::PathBuf;

use sparselin::api::{self, ExampleSet, Examples, Learner, Loss, Model, Precision, Trainer};
use sparselin::data::ValueVec;
use sparselin::metrics;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (train, test) = match args.as_slice() {
        [] => (synthetic(2000, 1), synthetic(500, 2)),
        [train, test, ..] => (api::open(train)?, api::open(test)?),
        _ => return Err("usage: train_predict [TRAIN TEST [MODEL]]".into()),
    };
    println!(
        "train: {} rows, {} features, {} non-zeros",
        train.n_rows(),
        train.n_features(),
        train.nnz()
    );
    let trainers = [
        Trainer::new(Learner::ASGD).loss(Loss::Hinge).epochs(3),
        Trainer::new("sublbfgs".parse()?)
            .loss(Loss::Hinge)
            .max_iterations(30),
        Trainer::new("lbfgs".parse()?)
            .loss(Loss::Log)
            .max_iterations(50),
    ];
    let labels = metrics::labels(&test);
    let mut best: Option<(f64, Model)> = None;
    for trainer in &trainers {
        let model = trainer.train(&train)?;
        let error = metrics::error_rate(&api::scores(&model, &test), &labels);
        println!("{:>9}: test error {:.4}", trainer.learner(), error);
        if best.as_ref().is_none_or(|(e, _)| error < *e) {
            best = Some((error, model));
        }
    }
    let (_, model) = best.expect("at least one trainer");
    let path = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("sparselin-example.model"));
    model.save(&path, Precision::F64)?;
    let loaded = Model::load(&path)?;
    assert_eq!(api::predict(&loaded, &test), api::predict(&model, &test));
    println!(
        "saved the best ({}) to {}",
        model.info.algorithm,
        path.display()
    );
    Ok(())
}

/// m rows of 50 features, 5 non-zeros each, labels from a fixed planted w (seeded LCG).
fn synthetic(m: usize, seed: u64) -> ExampleSet {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for _ in 0..m {
        let mut row: Vec<(u32, f64)> = (0..5)
            .map(|_| (next() % 50, f64::from(next() % 1000) / 1000.0))
            .collect();
        row.sort_by_key(|e| e.0);
        row.dedup_by_key(|e| e.0);
        let score: f64 = row.iter().map(|(j, v)| v * (f64::from(*j) - 24.5)).sum();
        labels.push(if score > 0.0 { 1.0 } else { -1.0 });
        for (j, v) in row {
            indices.push(j);
            values.push(v);
        }
        offsets.push(indices.len() as u64);
    }
    api::from_csr(labels, offsets, indices, ValueVec::F64(values), 50).expect("valid CSR")
}
