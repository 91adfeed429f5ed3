//! Every vectorized dense kernel equals the scalar oracle within the documented bound.

mod common;

use common::dense_checks::{check_axpy_dot, vector};
use common::{Rng, U, scalar, sum_bound, vector_paths};
use proptest::prelude::*;
use sparselin_kernels::dense;

fn close(got: f64, want: f64, bound: f64) -> Result<(), TestCaseError> {
    prop_assert!(
        (got - want).abs() <= bound,
        "{got:e} vs {want:e}, bound {bound:e}"
    );
    Ok(())
}

proptest! {
    #[test]
    fn reductions_match_scalar(seed: u64, n in 0usize..3000, off in 0usize..8, extreme: bool) {
        let mut rng = Rng::new(seed);
        let x = vector(&mut rng, n + off, extreme);
        let y = vector(&mut rng, n + off, extreme);
        let (x, y) = (&x[off..], &y[off..]);
        let abs_xy: f64 = x.iter().zip(y).map(|(a, b)| (a * b).abs()).sum();
        let abs_xx: f64 = x.iter().map(|a| a * a).sum();
        let (dot, norm2) = (scalar().dense_dot(x, y), scalar().norm2(x));
        for set in vector_paths() {
            close(set.dense_dot(x, y), dot, sum_bound(n, abs_xy))?;
            close(set.norm2(x), norm2, sum_bound(n, abs_xx))?;
        }
        close(dense::dot(x, y), dot, sum_bound(n, abs_xy))?;
        close(dense::norm2(x), norm2, sum_bound(n, abs_xx))?;
    }

    #[test]
    fn elementwise_match_scalar(seed: u64, n in 0usize..3000, off in 0usize..8, with_mean: bool) {
        let mut rng = Rng::new(seed);
        let x = vector(&mut rng, n + off, false);
        let y = vector(&mut rng, n + off, false);
        let vu: Vec<[f64; 2]> = (0..n + off).map(|_| [rng.magnitude(3), rng.magnitude(3)]).collect();
        let (x, y, vu) = (&x[off..], &y[off..], &vu[off..]);
        let (a, b, h) = (rng.magnitude(2), rng.magnitude(2), rng.magnitude(2));
        let xbar = with_mean.then_some(x);

        let mut want_scale = y.to_vec();
        scalar().scale(a, &mut want_scale);
        let mut want_axpby = y.to_vec();
        scalar().axpby(a, x, b, &mut want_axpby);
        let mut want_avg = vec![0.0; n];
        scalar().rescale_average(a, h, vu, b, xbar, &mut want_avg);

        let mut runs: Vec<(String, [Vec<f64>; 3])> = Vec::new();
        for set in vector_paths() {
            let (mut s, mut p, mut r) = (y.to_vec(), y.to_vec(), vec![0.0; n]);
            set.scale(a, &mut s);
            set.axpby(a, x, b, &mut p);
            set.rescale_average(a, h, vu, b, xbar, &mut r);
            runs.push((set.isa().to_string(), [s, p, r]));
        }
        let (mut s, mut p, mut r) = (y.to_vec(), y.to_vec(), vec![0.0; n]);
        dense::scale(a, &mut s);
        dense::axpby(a, x, b, &mut p);
        dense::rescale_average(a, h, vu, b, xbar, &mut r);
        runs.push(("dispatched".into(), [s, p, r]));

        for (isa, [s, p, r]) in runs {
            prop_assert_eq!(&s, &want_scale, "{} scale", isa);
            for i in 0..n {
                let bound = 4.0 * U * ((a * x[i]).abs() + (b * y[i]).abs());
                prop_assert!((p[i] - want_axpby[i]).abs() <= bound, "{} axpby at {}", isa, i);
                let inner = (h * vu[i][0]).abs() + vu[i][1].abs();
                let mean = xbar.map_or(0.0, |m| (b * m[i]).abs());
                let bound = 8.0 * U * (a.abs() * inner + mean);
                prop_assert!((r[i] - want_avg[i]).abs() <= bound, "{} rescale at {}", isa, i);
            }
        }
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
