//! Every vectorized dense kernel equals the scalar oracle within the documented bound (the
//! checks live in `common::dense_checks`, shared with `no_threads.rs`).

mod common;

use common::dense_checks::{check_axpy_dot, check_elementwise, check_map, check_reductions};
use proptest::prelude::*;
use sparselin_kernels::dense;

proptest! {
    #[test]
    fn reductions_match_scalar(seed: u64, n in 0usize..3000, off in 0usize..8, extreme: bool) {
        check_reductions(seed, n, off, extreme)?;
    }

    #[test]
    fn elementwise_match_scalar(seed: u64, n in 0usize..3000, off in 0usize..8, with_mean: bool) {
        check_elementwise(seed, n, off, with_mean)?;
    }

    #[test]
    fn elementwise_functions_match_scalar_bit_for_bit(
        seed: u64, n in 0usize..3000, off in 0usize..8, specials: bool
    ) {
        check_map(seed, n, off, specials)?;
    }

    #[test]
    fn axpy_dot_is_axpby_then_dot(seed: u64, n in 0usize..3000, off in 0usize..8, extreme: bool) {
        check_axpy_dot(seed, n, off, extreme)?;
    }
}

#[test]
#[should_panic(expected = "lengths differ")]
fn axpy_dot_lengths_must_match() {
    dense::axpy_dot(1.0, &[1.0, 2.0], &mut [0.0, 0.0], &[1.0]);
}

#[test]
#[should_panic(expected = "lengths differ")]
fn dense_lengths_must_match() {
    dense::dot(&[1.0, 2.0], &[1.0]);
}
