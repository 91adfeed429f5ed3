//! Every vector of one entry per feature that training and model loading allocate is allocated
//! fallibly: under a memory budget that runs out anywhere along the way, a run either finishes
//! or returns the error that names what could not be allocated — it never aborts (which would
//! end this test binary).
//!
//! The budget is the global allocator's ([`cap::Cap`]): room for k vectors of features and
//! a margin for the small allocations around them (which, as everywhere in Rust, abort when
//! they fail), k raised from 0 until the run fits. Arrays large enough for 2 MiB pages are
//! memory maps, outside the allocator's count: the learners' pair sums and the L-BFGS pairs,
//! whose failures the unit tests of `memory` and `HugeArray` cover.

use std::alloc::System;
use std::collections::BTreeSet;
use std::fmt::Display;
use std::path::Path;

use cap::Cap;
use sparselin::batch::{self, Algorithm as Batch, Objective, SolveError};
use sparselin::data::{CsrMatrix, ValueVec};
use sparselin::loss::Loss;
use sparselin::model::{Model, ModelError, Precision, TrainingInfo};
use sparselin::online::hogwild::{self, Options as Hogwild};
use sparselin::online::{self, Algorithm as Online, Config, ConfigError, Sampling, Stop};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Features: wide enough that a vector of them (1 MiB) stands out from everything else a run
/// allocates, small enough for a debug build to sweep quickly.
const FEATURES: usize = 1 << 17;

/// The budget grows by one vector of features (with room for a bias) per try.
const STEP: usize = FEATURES * 8 + 64;

/// Room for the small allocations of a run on top of its vectors of features: less than one
/// vector, so that k steps never hold k + 1 of them.
const MARGIN: usize = 256 << 10;

/// Forty rows of five entries, two of them in the last columns, with ±1 labels.
fn wide_rows() -> CsrMatrix {
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for i in 0..40u32 {
        labels.push(if i % 3 == 0 { 1.0 } else { -1.0 });
        let mut row = [i % 7, 10 + i % 11, 100 + i, (FEATURES as u32) - 1 - i % 5];
        row.sort_unstable();
        for (k, &j) in row.iter().enumerate() {
            indices.push(j);
            values.push(if k == 0 {
                1.0
            } else {
                0.5 + (i % 4) as f64 * 0.25
            });
        }
        offsets.push(indices.len() as u64);
    }
    CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), FEATURES).unwrap()
}

/// Runs `job` with budgets of k vectors of features and the [`MARGIN`] more than is
/// allocated when each try starts, k = 0, 1, … until it succeeds. Every failure must be a
/// memory error (`is_memory`) naming what did not fit. Returns the k that sufficed and the
/// distinct messages, in the order of the budgets that gave them.
fn sweep<T, E: Display>(
    name: &str,
    job: impl Fn() -> Result<T, E>,
    is_memory: impl Fn(&E) -> bool,
) -> (usize, Vec<String>) {
    let mut messages = Vec::new();
    let mut seen = BTreeSet::new();
    for tries in 0.. {
        assert!(
            tries < 100,
            "{name}: no room for {tries} vectors was enough"
        );
        ALLOCATOR
            .set_limit(ALLOCATOR.allocated() + tries * STEP + MARGIN)
            .expect("the limit is above what is allocated");
        let result = job();
        ALLOCATOR.set_limit(usize::MAX).unwrap();
        match result {
            Ok(_) => return (tries, messages),
            Err(e) => {
                let m = e.to_string();
                assert!(
                    is_memory(&e) && m.contains("cannot allocate the "),
                    "{name}, room for {tries} vectors: {m}"
                );
                if seen.insert(m.clone()) {
                    messages.push(m);
                }
            }
        }
    }
    unreachable!("the loop returns or fails")
}

/// A run that needed room for exactly `peak` vectors of features at once: it failed cleanly
/// at its first allocation of one and at every later one that ran short, and its peak memory
/// is what it was (a copy more shows here).
fn assert_peak(name: &str, (needed, messages): (usize, Vec<String>), peak: usize) {
    assert_eq!(
        needed, peak,
        "{name}: fitted in room for {needed} vectors of features, failing before with {messages:?}"
    );
}

#[test]
fn training_and_loading_under_any_budget_finish_or_name_what_did_not_fit() {
    // The thread pool is built before any budget applies.
    rayon::broadcast(|_| ());
    let data = wide_rows();

    // Vectors of features at the peak: the iterate, gradients (one partial per row block, and
    // their sum), directions; the L-BFGS pairs are mapped. The row block's buffer is kept
    // between evaluations: subLBFGS, whose peak falls outside one, holds it there too.
    for (algorithm, loss, peak) in [
        (Batch::Lbfgs, Loss::Log, 5),
        (Batch::SubLbfgs, Loss::Hinge, 7),
        (Batch::SubGd, Loss::Hinge, 4),
        (Batch::Bfgs, Loss::Hinge, 5),
        (Batch::Dcd, Loss::Hinge, 2),
    ] {
        let options = batch::Options {
            max_iter: 4,
            ..batch::Options::default()
        };
        let name = format!("{algorithm} ({loss})");
        // A fresh objective each try: it keeps its row blocks' buffers between evaluations,
        // and a try's peak must count them.
        let result = sweep(
            &name,
            || {
                let objective = Objective::new(&data, loss, 1e-3, true);
                batch::solve(algorithm, &objective, &options, &mut |_| {})
            },
            |e| matches!(e, SolveError::Memory(_)),
        );
        assert_peak(&name, result, peak);
    }

    let config = |loss| Config {
        loss,
        class_weights: Default::default(),
        lambda: 1e-3,
        l1: 0.0,
        t0: None,
        average_start: 10,
        regularize_bias: true,
        bias_rate: 1.0,
        eta: None,
        sampling: Sampling::Uniform,
        seed: 5,
        stop: Stop::Epochs(2),
    };
    let is_memory = |e: &ConfigError| matches!(e, ConfigError::Memory(_));
    // The sums (pairs of them are mapped), x̄, the dense example of the literal learners, and
    // the iterates recovered at the end: the last and the averaged.
    for (algorithm, peak) in [
        (Online::Sgd, 2),
        (Online::Asgd, 2),
        (Online::Casgd, 3),
        (Online::NaiveSgd, 3),
        (Online::NaiveAsgd, 5),
        (Online::NaiveCasgd, 6),
    ] {
        let config = config(Loss::Hinge);
        let name = format!("{algorithm:?}");
        let result = sweep(
            &name,
            || online::fit(&data, algorithm, &config, &mut ()),
            is_memory,
        );
        assert_peak(&name, result, peak);
    }
    // The same peaks: the final iterates are recovered from the sums themselves, not a copy.
    for (algorithm, peak) in [(Online::Sgd, 2), (Online::Asgd, 2), (Online::Casgd, 3)] {
        for threads in [1, 2] {
            let config = config(Loss::Log);
            let name = format!("Hogwild {algorithm:?} on {threads} threads");
            let result = sweep(
                &name,
                || hogwild::fit(&data, algorithm, &config, &Hogwild::new(threads), &mut ()),
                is_memory,
            );
            assert_peak(&name, result, peak);
        }
    }

    let model = Model {
        weights: (0..FEATURES).map(|j| j as f64 * 1e-3).collect(),
        bias: 0.5,
        loss: Loss::Hinge,
        info: TrainingInfo {
            algorithm: "asgd".into(),
            lambda: 1e-3,
            l1: 0.0,
            regularize_bias: true,
            class_weights: Default::default(),
            details: Default::default(),
        },
        resume: None,
        column_scales: None,
    };
    let bytes = model.to_bytes(Precision::F64);
    let path = Path::new("wide.model");
    let (_, messages) = sweep(
        "loading a model",
        || Model::from_bytes(&bytes, path),
        |e| matches!(e, ModelError::Memory { .. }),
    );
    assert_eq!(
        messages,
        ["wide.model: cannot allocate the weights of 131072 features (1.0 MB)"]
    );
}
