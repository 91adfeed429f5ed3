//! The path comparisons run without libtest's threads (`harness = false`).
//!
//! CI runs the NEON path under qemu-user, whose 7.2 release hangs in `pthread_create` on this
//! machine's kernel (a plain C program that starts one thread hangs too), so the threaded test
//! harness cannot run there. This binary drives the same property checks as
//! `sparse_paths.rs`, `row_blocks.rs` and `dense_paths.rs` from one thread with proptest's `TestRunner`, plus
//! the out-of-bounds checks, and prints a `N passed, N failed` line.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::dense_checks::{check_axpy_dot, check_elementwise, check_map, check_reductions};
use common::row_block_checks::{block_cases, check_every_path};
use common::sparse_checks::{
    check_adagrad_accumulate, check_adagrad_dot, check_adagrad_special_values, check_axpy,
    check_axpy2, check_block_axpy, check_block_dot, check_dot, check_dot_first,
};
use common::{Pattern, build, cases};
use proptest::prelude::any;
use proptest::test_runner::{Config, TestRunner};
use sparselin_kernels::{KernelSet, Values, dispatch};

fn main() {
    println!("dispatched path: {}", dispatch::isa());
    for set in common::vector_paths() {
        println!("checking path {} against scalar", set.isa());
    }
    let config = Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    };
    let mut passed = 0;
    let mut failed = 0;
    let mut report = |name: &str, ok: Result<(), String>| match ok {
        Ok(()) => passed += 1,
        Err(e) => {
            failed += 1;
            println!("FAILED {name}: {e}");
        }
    };
    type Check = fn(&common::Case, u8) -> Result<(), proptest::test_runner::TestCaseError>;
    let checks: [(&str, Check); 7] = [
        ("dot", check_dot),
        ("dot_first", check_dot_first),
        ("axpy", check_axpy),
        ("axpy2", check_axpy2),
        ("adagrad_accumulate", check_adagrad_accumulate),
        ("adagrad_dot", |case, kind| {
            check_adagrad_dot(case, kind, kind)
        }),
        ("adagrad_dot, L1 and centre", |case, kind| {
            check_adagrad_dot(case, kind, 3 - kind)
        }),
    ];
    for (name, check) in checks {
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&(cases(), 0u8..3), |(case, kind)| check(&case, kind));
        report(name, result.map_err(|e| e.to_string()));
        let short = (0..=40).try_for_each(|nnz| {
            (0..3).try_for_each(|kind| {
                let case = build(nnz as u64, Pattern::Random, nnz, 200, false);
                check(&case, kind).map_err(|e| format!("nnz {nnz}, kind {kind}: {e}"))
            })
        });
        report(&format!("{name} short lengths"), short);
    }
    report("adagrad special values", check_adagrad_special_values());
    type BlockCheck =
        fn(&common::Case, u8, usize) -> Result<(), proptest::test_runner::TestCaseError>;
    let block_checks: [(&str, BlockCheck); 2] = [
        ("block_dot", check_block_dot),
        ("block_axpy", check_block_axpy),
    ];
    for (name, check) in block_checks {
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&(cases(), 0u8..3, 1usize..24), |(case, kind, width)| {
            check(&case, kind, width)
        });
        report(name, result.map_err(|e| e.to_string()));
    }
    let mut runner = TestRunner::new(config.clone());
    let result = runner.run(&block_cases(), check_every_path);
    report("dot_rows, axpy_rows", result.map_err(|e| e.to_string()));
    type DenseCheck =
        fn(u64, usize, usize, bool) -> Result<(), proptest::test_runner::TestCaseError>;
    let dense_checks: [(&str, DenseCheck); 4] = [
        ("dense reductions", check_reductions),
        ("dense elementwise", check_elementwise),
        ("axpy_dot", check_axpy_dot),
        ("map", check_map),
    ];
    for (name, check) in dense_checks {
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(
            &(any::<u64>(), 0usize..3000, 0usize..8, any::<bool>()),
            |(seed, n, off, flag)| check(seed, n, off, flag),
        );
        report(name, result.map_err(|e| e.to_string()));
    }
    let w = [0.5f64; 9];
    let mut bounds = Ok(());
    // The expected panics would each print a message; one thread, so the hook swap is safe.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for set in KernelSet::available() {
        for len in 1..=20u32 {
            let mut idx: Vec<u32> = (0..len).map(|k| k % 9).collect();
            idx[(len / 2) as usize] = 9;
            if catch_unwind(AssertUnwindSafe(|| set.dot(&w, &idx, Values::Ones))).is_ok() {
                bounds = Err(format!("{}: index 9 of 9 weights did not panic", set.isa()));
            }
        }
    }
    std::panic::set_hook(default_hook);
    report("out-of-bounds index panics", bounds);
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
