//! Every vectorized sparse kernel equals the scalar oracle within the documented bound, for
//! every value kind, index pattern, length 0..1000, unaligned offset and extreme magnitudes.
//! Paths this CPU lacks are skipped with a message; `SPARSELIN_ISA` additionally forces the
//! path behind the free functions (`sparse::dot`, ...), which are checked here too.

mod common;

use common::sparse_checks::{check_axpy, check_axpy2, check_dot, check_dot_first};
use common::{abs_dot, cases, scalar, sum_bound, vector_paths};
use proptest::prelude::*;

proptest! {
    #[test]
    fn dot_matches_scalar(case in cases(), kind in 0u8..3) {
        check_dot(&case, kind)?;
    }

    #[test]
    fn dot_first_matches_scalar(case in cases(), kind in 0u8..3) {
        check_dot_first(&case, kind)?;
    }

    #[test]
    fn axpy_matches_scalar(case in cases(), kind in 0u8..3) {
        check_axpy(&case, kind)?;
    }

    #[test]
    fn axpy2_matches_scalar(case in cases(), kind in 0u8..3) {
        check_axpy2(&case, kind)?;
    }
}

/// Every length 0..=70 (all unrolled-loop and tail splits) and every value kind, explicitly.
#[test]
fn every_short_length() {
    for nnz in 0..=70 {
        for kind in 0..3 {
            let case = common::build(nnz as u64, common::Pattern::Random, nnz, 300, false);
            assert_eq!(case.idx().len(), nnz);
            check_dot(&case, kind).unwrap();
            check_dot_first(&case, kind).unwrap();
            check_axpy(&case, kind).unwrap();
            check_axpy2(&case, kind).unwrap();
        }
    }
}

/// Repeated indices are allowed in a dot (only updates require distinct indices).
#[test]
fn dot_with_repeated_indices() {
    let w: Vec<f64> = (0..50).map(|i| i as f64 * 0.25 - 3.0).collect();
    let idx: Vec<u32> = (0..200).map(|k| (k * 7 % 13) as u32).collect();
    let val: Vec<f32> = (0..200).map(|k| (k % 5) as f32 - 2.0).collect();
    let val = sparselin_kernels::Values::F32(&val);
    let want = scalar().dot(&w, &idx, val);
    for set in vector_paths() {
        let got = set.dot(&w, &idx, val);
        assert!((got - want).abs() <= sum_bound(200, abs_dot(&w, &idx, val)));
    }
}
