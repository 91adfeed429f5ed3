//! The row-block kernels are the row kernels, row by row, bit for bit, on every path: a block
//! changes how often a kernel is called, never a result.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::row_block_checks::{bits, block_cases, check_every_path};
use proptest::prelude::*;
use sparselin_kernels::{BoundedIndices, KernelSet, RowBlock, Values};

proptest! {
    #[test]
    fn block_kernels_are_the_row_kernels_row_by_row(case in block_cases()) {
        check_every_path(case)?;
    }
}

/// A row with a zero coefficient adds nothing, not even the NaN of 0·∞.
#[test]
fn rows_with_a_zero_coefficient_are_skipped() {
    let offsets = [0u64, 2, 3];
    let idx = [0u32, 2, 1];
    let values = [f64::INFINITY, 1.0, 2.0];
    for set in KernelSet::available() {
        let rows = RowBlock::new(&offsets, (&idx).into(), Values::F64(&values));
        let mut w = vec![-0.0, 1.0, 1.0];
        set.axpy_rows(&[0.0, 0.5], rows, &mut w);
        assert_eq!(bits(&w), bits(&[-0.0, 2.0, 1.0]), "{}", set.isa());
    }
}

/// The same inside a run of short rows (the x86 paths' runs, taken where at most one
/// coefficient in 8 is 0): the zero ends the run and its row is skipped.
#[test]
fn a_zero_coefficient_inside_a_run_of_short_rows_is_skipped() {
    let offsets: Vec<u64> = (0..=16).collect();
    let idx: Vec<u32> = (0..16).collect();
    let mut values = vec![1.0; 16];
    values[8] = f64::INFINITY;
    let mut coef = vec![0.5; 16];
    coef[8] = 0.0;
    let mut want = vec![0.5; 16];
    want[8] = -0.0;
    for set in KernelSet::available() {
        let rows = RowBlock::new(&offsets, (&idx).into(), Values::F64(&values));
        let mut w = vec![0.0; 16];
        w[8] = -0.0;
        set.axpy_rows(&coef, rows, &mut w);
        assert_eq!(bits(&w), bits(&want), "{}", set.isa());
    }
}

fn panics(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

#[test]
fn bad_blocks_panic_on_every_path() {
    let idx = [0u32, 3, 1, 2];
    let ones = Values::Ones;
    let proven = || BoundedIndices::scan(&idx);
    for set in KernelSet::available() {
        let isa = set.isa();
        let (mut w, mut out) = (vec![0.0; 4], vec![0.0; 2]);
        // Offsets out of order, past the entries, or too few for the outputs.
        for offsets in [&[0u64, 3, 2][..], &[0, 2, 5], &[0, 4]] {
            let rows = RowBlock::new(offsets, proven(), ones);
            assert!(
                panics(|| set.dot_rows(&w, rows, &mut out)),
                "{isa} {offsets:?}"
            );
            assert!(
                panics(|| set.axpy_rows(&[1.0, 1.0], rows, &mut w)),
                "{isa} {offsets:?}"
            );
        }
        // An index past the weights: refused before anything is written.
        let rows = RowBlock::new(&[0, 2, 4], proven(), ones);
        let mut short = vec![0.0; 3];
        assert!(
            panics(|| set.axpy_rows(&[1.0, 1.0], rows, &mut short)),
            "{isa}"
        );
        assert_eq!(short, [0.0; 3]);
        assert!(panics(|| set.dot_rows(&short, rows, &mut out)), "{isa}");
        // One coefficient per row.
        assert!(panics(|| set.axpy_rows(&[1.0], rows, &mut w)), "{isa}");
    }
    // Values must be as many as the indices, and a block has at least one offset.
    assert!(panics(|| {
        RowBlock::new(&[0, 1], proven(), Values::F32(&[1.0]));
    }));
    assert!(panics(|| {
        RowBlock::new(&[], proven(), ones);
    }));
}
