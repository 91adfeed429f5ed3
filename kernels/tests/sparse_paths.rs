//! Every vectorized sparse kernel equals the scalar oracle within the documented bound, for
//! every value kind, index pattern, length 0..1000, unaligned offset and extreme magnitudes.
//! Paths this CPU lacks are skipped with a message; `SPARSELIN_ISA` additionally forces the
//! path behind the free functions (`sparse::dot`, ...), which are checked here too.

mod common;

use common::sparse_checks::{
    check_adagrad_accumulate, check_adagrad_dot, check_adagrad_special_values, check_axpy,
    check_axpy2, check_block_axpy, check_block_dot, check_dot, check_dot_first,
};
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

    #[test]
    fn adagrad_dot_matches_scalar(case in cases(), kind in 0u8..3, variant in 0u8..4) {
        check_adagrad_dot(&case, kind, variant)?;
    }

    #[test]
    fn adagrad_accumulate_matches_scalar(case in cases(), kind in 0u8..3) {
        check_adagrad_accumulate(&case, kind)?;
    }

    #[test]
    fn block_dot_matches_scalar(case in cases(), kind in 0u8..3, width in 1usize..24) {
        check_block_dot(&case, kind, width)?;
    }

    #[test]
    fn block_axpy_matches_scalar(case in cases(), kind in 0u8..3, width in 1usize..24) {
        check_block_axpy(&case, kind, width)?;
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
            check_adagrad_accumulate(&case, kind).unwrap();
            for variant in 0..4 {
                check_adagrad_dot(&case, kind, variant).unwrap();
            }
            for width in [1, 2, 3, 8, 10, 17] {
                check_block_dot(&case, kind, width).unwrap();
                check_block_axpy(&case, kind, width).unwrap();
            }
        }
    }
}

/// AdaGrad's kernels give the scalar definitions' results on special values (zeros, subnormals,
/// huge, infinite, NaN) in every input, on every path.
#[test]
fn adagrad_special_values_give_the_scalar_results() {
    check_adagrad_special_values().unwrap();
}

/// One entry of a vector whose r² + c² leaves the normal range (r² overflows, or c² is
/// subnormal with r = 0) takes `add_gradient`'s `hypot` case on every path, the others in its
/// vector theirs, with the same bits as scalar; and a zero value leaves its pair as it was.
#[test]
fn adagrad_accumulate_takes_the_hypot_case_within_a_vector() {
    for (odd, g) in [
        ([0.5, 1e200], 0.25),
        ([0.5, 0.0], 1e-170),
        ([-0.0, 2.0], 1.0),
    ] {
        for at in 0..11 {
            let idx: Vec<u32> = (0..11).map(|k| 3 * k + 1).collect();
            let mut sums: Vec<[f64; 2]> = (0..40).map(|i| [i as f64 * 0.1 - 2.0, 0.3]).collect();
            sums[idx[at] as usize] = odd;
            let mut val: Vec<f64> = (0..11).map(|k| 0.25 * k as f64 - 1.0).collect();
            val[at] = if odd[0] == -0.0 { 0.0 } else { 1.0 };
            let val = sparselin_kernels::Values::F64(&val);
            let mut want = sums.clone();
            scalar().adagrad_accumulate(g, &idx, val, &mut want);
            let i = idx[at] as usize;
            match odd {
                [_, 1e200] => assert_eq!(want[i][1], 1e200),
                [_, 0.0] => assert_eq!(want[i][1], 1e-170),
                _ => assert_eq!(want[i].map(f64::to_bits), odd.map(f64::to_bits)),
            }
            for set in vector_paths() {
                let mut got = sums.clone();
                set.adagrad_accumulate(g, &idx, val, &mut got);
                let bits =
                    |s: &[[f64; 2]]| s.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{} at {at}: {odd:?}", set.isa());
            }
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

proptest! {
    /// Outside the error bound, which assumes finite arithmetic, and checked exactly: a NaN
    /// weight in the row makes every path's dot NaN and stays NaN through an update; an
    /// infinite one met by a non-zero value gives the same infinity on every path, in the dot
    /// and in the updated weight.
    #[test]
    fn non_finite_weights_give_the_same_result_on_every_path(
        case in cases(),
        kind in 0u8..3,
        at: prop::sample::Index,
        poison in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
    ) {
        let (idx, val) = (case.idx(), case.values(kind));
        prop_assume!(!idx.is_empty());
        let k = at.index(idx.len());
        prop_assume!(val.get(k) != 0.0 && case.a.is_finite() && case.b.is_finite());
        let i = idx[k] as usize;
        let mut w = case.w().to_vec();
        w[i] = poison;
        let mut pairs = case.pairs();
        pairs[i] = [poison, poison];
        // The finite terms must not overflow on their own (extreme cases may).
        prop_assume!(scalar().dot(case.w(), idx, val).is_finite());
        let same = |got: f64, want: f64| got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan();
        let want_dot = if poison.is_nan() { f64::NAN } else { poison * val.get(k).signum() };
        let want_update = if poison.is_nan() { f64::NAN } else { poison };
        for set in std::iter::once(scalar()).chain(vector_paths()) {
            let isa = set.isa();
            let dot = set.dot(&w, idx, val);
            prop_assert!(same(dot, want_dot), "{isa} dot {dot} where {want_dot} was due");
            let mut updated = w.clone();
            set.axpy(case.a, idx, val, &mut updated);
            prop_assert!(same(updated[i], want_update), "{isa} axpy left {}", updated[i]);
            let mut updated = pairs.clone();
            set.axpy2(case.a, case.b, idx, val, &mut updated);
            for got in updated[i] {
                prop_assert!(same(got, want_update), "{isa} axpy2 left {got}");
            }
        }
    }
}
