//! The dense property checks that both test harnesses run (the threaded `dense_paths.rs` and
//! the single-threaded `no_threads.rs` that CI runs on NEON under qemu).

use proptest::prelude::*;
use sparselin_kernels::dense;
use sparselin_kernels::math::Elementwise;

use super::{Rng, U, scalar, sum_bound, vector_paths};

/// A vector of `n` values (extreme magnitudes if asked).
fn vector(rng: &mut Rng, n: usize, extreme: bool) -> Vec<f64> {
    let e = if extreme { 120 } else { 0 };
    (0..n).map(|_| rng.magnitude(e)).collect()
}

fn close(got: f64, want: f64, bound: f64) -> Result<(), TestCaseError> {
    prop_assert!(
        (got - want).abs() <= bound,
        "{got:e} vs {want:e}, bound {bound:e}"
    );
    Ok(())
}

/// Every path's dot, squared norm and sum, and the dispatched ones, equal scalar's within the
/// summation bound, on vectors of `n` entries starting `off` entries into their allocation.
pub fn check_reductions(
    seed: u64,
    n: usize,
    off: usize,
    extreme: bool,
) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed);
    let x = vector(&mut rng, n + off, extreme);
    let y = vector(&mut rng, n + off, extreme);
    let (x, y) = (&x[off..], &y[off..]);
    let abs_xy: f64 = x.iter().zip(y).map(|(a, b)| (a * b).abs()).sum();
    let abs_xx: f64 = x.iter().map(|a| a * a).sum();
    let abs_x: f64 = x.iter().map(|a| a.abs()).sum();
    let (dot, norm2, sum) = (scalar().dense_dot(x, y), scalar().norm2(x), scalar().sum(x));
    for set in vector_paths() {
        close(set.dense_dot(x, y), dot, sum_bound(n, abs_xy))?;
        close(set.norm2(x), norm2, sum_bound(n, abs_xx))?;
        close(set.sum(x), sum, sum_bound(n, abs_x))?;
    }
    close(dense::dot(x, y), dot, sum_bound(n, abs_xy))?;
    close(dense::norm2(x), norm2, sum_bound(n, abs_xx))?;
    close(dense::sum(x), sum, sum_bound(n, abs_x))?;
    Ok(())
}

/// Every path's scale, axpby and averaged-iterate recovery, and the dispatched ones, equal
/// scalar's (scale exactly, the others within a few roundings of each entry).
pub fn check_elementwise(
    seed: u64,
    n: usize,
    off: usize,
    with_mean: bool,
) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed);
    let x = vector(&mut rng, n + off, false);
    let y = vector(&mut rng, n + off, false);
    let vu: Vec<[f64; 2]> = (0..n + off)
        .map(|_| [rng.magnitude(3), rng.magnitude(3)])
        .collect();
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
            prop_assert!(
                (p[i] - want_axpby[i]).abs() <= bound,
                "{} axpby at {}",
                isa,
                i
            );
            let inner = (h * vu[i][0]).abs() + vu[i][1].abs();
            let mean = xbar.map_or(0.0, |m| (b * m[i]).abs());
            let bound = 8.0 * U * (a.abs() * inner + mean);
            prop_assert!(
                (r[i] - want_avg[i]).abs() <= bound,
                "{} rescale at {}",
                isa,
                i
            );
        }
    }
    Ok(())
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

/// Every path's `map` of each function, and the dispatched one, equals the scalar function
/// ([`Elementwise::at`]) bit for bit, and so does each half of `softplus_and_logistic`, on `n` arguments from 10^−3 to 10^3 in magnitude
/// (beyond `exp`'s range at both ends) or, one in three, in [0, 1) (the entropy's domain),
/// `off` entries into their allocation, one in seven a special value if asked (NaN, ±∞, ±0,
/// the ends of `exp`'s range).
pub fn check_map(seed: u64, n: usize, off: usize, specials: bool) -> Result<(), TestCaseError> {
    const SPECIAL: [f64; 8] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        709.78,
        -745.1,
        1e-300,
    ];
    let mut rng = Rng::new(seed);
    let x: Vec<f64> = (0..n + off)
        .map(|_| {
            if specials && rng.below(7) == 0 {
                SPECIAL[rng.below(SPECIAL.len())]
            } else if rng.below(3) == 0 {
                rng.unit()
            } else {
                rng.magnitude(3)
            }
        })
        .collect();
    let x = &x[off..];
    for f in [
        Elementwise::Exp,
        Elementwise::Softplus,
        Elementwise::Logistic,
        Elementwise::Entropy,
    ] {
        let want: Vec<u64> = x.iter().map(|&v| f.at(v).to_bits()).collect();
        let mut runs = Vec::new();
        for set in std::iter::once(scalar()).chain(vector_paths()) {
            let mut got = x.to_vec();
            set.map(f, &mut got);
            runs.push((set.isa().to_string(), got));
        }
        let mut got = x.to_vec();
        dense::map(f, &mut got);
        runs.push(("dispatched".into(), got));
        for (isa, got) in runs {
            let got: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(&got, &want, "{} {:?}", isa, f);
        }
    }
    // Both functions at once: each the bits of its own map.
    let bits = |f: Elementwise| -> Vec<u64> { x.iter().map(|&v| f.at(v).to_bits()).collect() };
    let want = (bits(Elementwise::Softplus), bits(Elementwise::Logistic));
    let mut runs = Vec::new();
    for set in std::iter::once(scalar()).chain(vector_paths()) {
        let (mut t, mut sigma) = (x.to_vec(), vec![0.0; x.len()]);
        set.softplus_and_logistic(&mut t, &mut sigma);
        runs.push((set.isa().to_string(), t, sigma));
    }
    let (mut t, mut sigma) = (x.to_vec(), vec![0.0; x.len()]);
    dense::softplus_and_logistic(&mut t, &mut sigma);
    runs.push(("dispatched".into(), t, sigma));
    for (isa, t, sigma) in runs {
        let t: Vec<u64> = t.iter().map(|v| v.to_bits()).collect();
        let sigma: Vec<u64> = sigma.iter().map(|v| v.to_bits()).collect();
        prop_assert_eq!(&t, &want.0, "{} softplus_and_logistic: softplus", isa);
        prop_assert_eq!(&sigma, &want.1, "{} softplus_and_logistic: logistic", isa);
    }
    Ok(())
}
