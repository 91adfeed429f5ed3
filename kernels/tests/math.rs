//! `math::exp` and `math::softplus` against the C library's `exp` and `log1p`, in ulps: the
//! distance between the two doubles' positions on the number line.

use proptest::prelude::*;
use sparselin_kernels::math::{entropy, exp, softplus};

/// How many doubles lie between a and b (both finite and of one sign, or equal).
fn ulps(a: f64, b: f64) -> u64 {
    if a == b {
        return 0;
    }
    assert_eq!(a.is_sign_negative(), b.is_sign_negative(), "{a} and {b}");
    a.to_bits().abs_diff(b.to_bits())
}

/// The C library's softplus, by the same identity: t⁺ + log1p(e^−|t|).
fn libm_softplus(t: f64) -> f64 {
    t.max(0.0) + (-t.abs()).exp().ln_1p()
}

/// Arguments spread evenly over [from, to], `count` of them.
fn sweep(from: f64, to: f64, count: usize) -> impl Iterator<Item = f64> {
    (0..count).map(move |i| from + (to - from) * i as f64 / (count - 1) as f64)
}

#[test]
fn exp_is_within_one_ulp_of_libm_over_its_whole_range() {
    let mut worst = 0;
    for x in sweep(-708.0, 709.7, 400_001).chain(sweep(-1.0, 1.0, 100_001)) {
        worst = worst.max(ulps(exp(x), x.exp()));
    }
    assert!(worst <= 1, "{worst} ulps");
    // Subnormal results: within one step of the subnormal grid.
    for x in sweep(-745.0, -708.5, 10_001) {
        let (ours, theirs) = (exp(x), x.exp());
        assert!(
            (ours - theirs).abs() <= f64::from_bits(1),
            "{x}: {ours} vs {theirs}"
        );
    }
}

#[test]
fn softplus_is_within_two_ulps_of_libm() {
    let mut worst = 0;
    for t in sweep(-60.0, 60.0, 400_001).chain(sweep(-1.0, 1.0, 100_001)) {
        worst = worst.max(ulps(softplus(t), libm_softplus(t)));
    }
    assert!(worst <= 2, "{worst} ulps");
}

#[test]
fn entropy_is_within_two_ulps_of_libm() {
    let mut worst = 0;
    for a in sweep(0.0, 1.0, 200_001).chain(sweep(-30.0, 0.0, 10_001).map(f64::exp)) {
        let theirs = if a > 0.0 { a * a.ln() } else { 0.0 }
            + if a < 1.0 {
                (1.0 - a) * (-a).ln_1p()
            } else {
                0.0
            };
        worst = worst.max(ulps(entropy(a), theirs));
    }
    assert!(worst <= 2, "{worst} ulps");
}

proptest! {
    #[test]
    fn exp_matches_libm_anywhere(x in -745.2f64..710.0) {
        let (ours, theirs) = (exp(x), x.exp());
        if theirs >= f64::MIN_POSITIVE && theirs.is_finite() {
            prop_assert!(ulps(ours, theirs) <= 1, "{}: {} vs {}", x, ours, theirs);
        } else {
            prop_assert!((ours - theirs).abs() <= f64::from_bits(1) || ours == theirs);
        }
    }

    #[test]
    fn softplus_matches_libm_anywhere(t in -800.0f64..800.0) {
        let (ours, theirs) = (softplus(t), libm_softplus(t));
        prop_assert!(ulps(ours, theirs) <= 2 || (ours - theirs).abs() <= f64::from_bits(1),
            "{}: {} vs {}", t, ours, theirs);
    }
}
