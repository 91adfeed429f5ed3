//! The dense property checks that both test harnesses run (the threaded `dense_paths.rs` and
//! the single-threaded `no_threads.rs` that CI runs on NEON under qemu).

use proptest::prelude::*;
use sparselin_kernels::dense;

use super::{Rng, scalar, vector_paths};

/// A vector of `n` values (extreme magnitudes if asked).
pub fn vector(rng: &mut Rng, n: usize, extreme: bool) -> Vec<f64> {
    let e = if extreme { 120 } else { 0 };
    (0..n).map(|_| rng.magnitude(e)).collect()
}

/// On every path, the scalar one and the dispatched one included, `axpy_dot` equals that
/// path's `axpby(a, x, 1, y)` then `dense_dot(z, y)` bit for bit, on vectors of `n` entries
/// starting `off` entries into their allocation.
pub fn check_axpy_dot(seed: u64, n: usize, off: usize, extreme: bool) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed);
    let x = vector(&mut rng, n + off, extreme);
    let y = vector(&mut rng, n + off, extreme);
    let z = vector(&mut rng, n + off, extreme);
    let (x, y, z) = (&x[off..], &y[off..], &z[off..]);
    let a = rng.magnitude(2);
    for set in std::iter::once(scalar()).chain(vector_paths()) {
        let mut want = y.to_vec();
        set.axpby(a, x, 1.0, &mut want);
        let want_dot = set.dense_dot(z, &want);
        let mut got = y.to_vec();
        let got_dot = set.axpy_dot(a, x, &mut got, z);
        prop_assert_eq!(got_dot.to_bits(), want_dot.to_bits(), "{} dot", set.isa());
        prop_assert_eq!(&got, &want, "{} update", set.isa());
    }
    let mut want = y.to_vec();
    dense::axpby(a, x, 1.0, &mut want);
    let want_dot = dense::dot(z, &want);
    let mut got = y.to_vec();
    let got_dot = dense::axpy_dot(a, x, &mut got, z);
    prop_assert_eq!(got_dot.to_bits(), want_dot.to_bits(), "dispatched dot");
    prop_assert_eq!(got, want, "dispatched update");
    Ok(())
}
