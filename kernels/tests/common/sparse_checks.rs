//! The sparse property checks: each vectorized path and the dispatched one against scalar.

use proptest::prelude::*;
use sparselin_kernels::dispatch::Isa;
use sparselin_kernels::{KernelSet, Values, adagrad, dispatch, sparse};

use super::{Case, abs_dot, check_update, scalar, sum_bound, vector_paths};

/// The paths to compare with scalar: each vectorized one, plus the dispatched one (`None`).
fn paths() -> Vec<Option<&'static KernelSet>> {
    let mut p: Vec<_> = vector_paths().into_iter().map(Some).collect();
    p.push(None);
    p
}

pub fn check_dot(case: &Case, kind: u8) -> Result<(), TestCaseError> {
    let (w, idx, val) = (case.w(), case.idx(), case.values(kind));
    let want = scalar().dot(w, idx, val);
    let bound = sum_bound(idx.len(), abs_dot(w, idx, val));
    for path in paths() {
        let got = match path {
            Some(set) => set.dot(w, idx, val),
            None => sparse::dot(w, idx, val),
        };
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        prop_assert!(
            (got - want).abs() <= bound,
            "{isa}: {got:e} vs {want:e}, bound {bound:e}"
        );
    }
    Ok(())
}

pub fn check_dot_first(case: &Case, kind: u8) -> Result<(), TestCaseError> {
    let (vu, idx, val) = (case.pairs(), case.idx(), case.values(kind));
    let want = scalar().dot_first(&vu, idx, val);
    let firsts: Vec<f64> = vu.iter().map(|p| p[0]).collect();
    assert_eq!(want, scalar().dot(&firsts, idx, val));
    let bound = sum_bound(idx.len(), abs_dot(&firsts, idx, val));
    for path in paths() {
        let got = match path {
            Some(set) => set.dot_first(&vu, idx, val),
            None => sparse::dot_first(&vu, idx, val),
        };
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        prop_assert!(
            (got - want).abs() <= bound,
            "{isa}: {got:e} vs {want:e}, bound {bound:e}"
        );
    }
    Ok(())
}

pub fn check_axpy(case: &Case, kind: u8) -> Result<(), TestCaseError> {
    let (idx, val) = (case.idx(), case.values(kind));
    let mut want = case.w().to_vec();
    scalar().axpy(case.a, idx, val, &mut want);
    for path in paths() {
        let mut got = case.w().to_vec();
        match path {
            Some(set) => set.axpy(case.a, idx, val, &mut got),
            None => sparse::axpy(case.a, idx, val, &mut got),
        }
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        let mut touched = vec![false; got.len()];
        for (k, &i) in idx.iter().enumerate() {
            let i = i as usize;
            touched[i] = true;
            let r = check_update(got[i], want[i], case.w()[i], case.a * val.get(k));
            prop_assert!(r.is_ok(), "{isa} at {i}: {}", r.unwrap_err());
        }
        for (i, t) in touched.iter().enumerate() {
            prop_assert!(
                *t || got[i] == case.w()[i],
                "{isa} changed untouched weight {i}"
            );
        }
    }
    Ok(())
}

pub fn check_axpy2(case: &Case, kind: u8) -> Result<(), TestCaseError> {
    let (idx, val) = (case.idx(), case.values(kind));
    let before = case.pairs();
    let mut want = before.clone();
    scalar().axpy2(case.a, case.b, idx, val, &mut want);
    for path in paths() {
        let mut got = before.clone();
        match path {
            Some(set) => set.axpy2(case.a, case.b, idx, val, &mut got),
            None => sparse::axpy2(case.a, case.b, idx, val, &mut got),
        }
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        let mut touched = vec![false; got.len()];
        for (k, &i) in idx.iter().enumerate() {
            let i = i as usize;
            touched[i] = true;
            let x = val.get(k);
            for (m, coef) in [case.a, case.b].into_iter().enumerate() {
                let r = check_update(got[i][m], want[i][m], before[i][m], coef * x);
                prop_assert!(r.is_ok(), "{isa} at {i}[{m}]: {}", r.unwrap_err());
            }
        }
        for (i, t) in touched.iter().enumerate() {
            prop_assert!(
                *t || got[i] == before[i],
                "{isa} changed untouched pair {i}"
            );
        }
    }
    Ok(())
}

/// Lane `lane` of blocks of `width` as a plain weight vector.
fn lane(blocks: &[f64], width: usize, lane: usize) -> Vec<f64> {
    blocks.iter().skip(lane).step_by(width).copied().collect()
}

/// Each path's block dot against scalar within the sum bound of each lane, and each lane,
/// bit for bit, what the same path gives that lane's weights alone (width 1).
pub fn check_block_dot(case: &Case, kind: u8, width: usize) -> Result<(), TestCaseError> {
    let (w, idx, val) = (case.blocks(width), case.idx(), case.values(kind));
    let start: Vec<f64> = case.coefficients(width);
    let mut want = start.clone();
    scalar().block_dot(&w, width, idx, val, &mut want);
    for path in paths() {
        let mut got = start.clone();
        match path {
            Some(set) => set.block_dot(&w, width, idx, val, &mut got),
            None => sparse::block_dot(&w, width, idx, val, &mut got),
        }
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        for c in 0..width {
            let column = lane(&w, width, c);
            let bound = sum_bound(idx.len() + 1, abs_dot(&column, idx, val) + start[c].abs());
            prop_assert!(
                (got[c] - want[c]).abs() <= bound,
                "{isa} lane {c} of {width}: {:e} vs {:e}, bound {bound:e}",
                got[c],
                want[c]
            );
            let mut alone = [start[c]];
            match path {
                Some(set) => set.block_dot(&column, 1, idx, val, &mut alone),
                None => sparse::block_dot(&column, 1, idx, val, &mut alone),
            }
            prop_assert_eq!(alone[0].to_bits(), got[c].to_bits(), "{} lane {}", isa, c);
            // The first c + 1 lanes alone, read from the blocks of `width`.
            let mut first = start[..=c].to_vec();
            match path {
                Some(set) => set.block_dot(&w, width, idx, val, &mut first),
                None => sparse::block_dot(&w, width, idx, val, &mut first),
            }
            prop_assert_eq!(
                first[c].to_bits(),
                got[c].to_bits(),
                "{} lanes ..={}",
                isa,
                c
            );
        }
    }
    Ok(())
}

/// Each path's block update against scalar within the update bound, untouched blocks left as
/// they were, and each lane, bit for bit, the same path's update of that lane alone.
pub fn check_block_axpy(case: &Case, kind: u8, width: usize) -> Result<(), TestCaseError> {
    let (idx, val) = (case.idx(), case.values(kind));
    let (before, coef) = (case.blocks(width), case.coefficients(width));
    let mut want = before.clone();
    scalar().block_axpy(&coef, idx, val, &mut want);
    for path in paths() {
        let mut got = before.clone();
        match path {
            Some(set) => set.block_axpy(&coef, idx, val, &mut got),
            None => sparse::block_axpy(&coef, idx, val, &mut got),
        }
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        let mut touched = vec![false; got.len()];
        for (k, &i) in idx.iter().enumerate() {
            for (c, &a) in coef.iter().enumerate() {
                let j = i as usize * width + c;
                touched[j] = true;
                let r = check_update(got[j], want[j], before[j], a * val.get(k));
                prop_assert!(r.is_ok(), "{isa} at {i}[{c}]: {}", r.unwrap_err());
            }
        }
        for (j, t) in touched.iter().enumerate() {
            prop_assert!(
                *t || got[j] == before[j],
                "{isa} changed untouched entry {j}"
            );
        }
        for (c, &a) in coef.iter().enumerate() {
            let mut alone = lane(&before, width, c);
            match path {
                Some(set) => set.block_axpy(&[a], idx, val, &mut alone),
                None => sparse::block_axpy(&[a], idx, val, &mut alone),
            }
            let same = alone
                .iter()
                .zip(lane(&got, width, c))
                .all(|(x, y)| x.to_bits() == y.to_bits());
            prop_assert!(
                same,
                "{isa} lane {c} of {width} differs from the lane alone"
            );
        }
    }
    Ok(())
}

/// Whether two results are the same: equal bits, or both NaN (whose payloads may differ).
fn same(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan()
}

/// `adagrad::dot` on each path against scalar: within the dot's bound where Σ|val·w| is
/// finite (a sum past the largest double may round to ∞ in one order and not in another; about
/// a third of the extreme cases); and each of the first nine entries' weights, read through
/// [`probe`]. `variant`'s bit 0 adds an L1 term, bit 1 a centre.
pub fn check_adagrad_dot(case: &Case, kind: u8, variant: u8) -> Result<(), TestCaseError> {
    let (idx, val) = (case.idx(), case.values(kind));
    let (sums, centre) = case.adagrad_state();
    let weights = case.adagrad_weights(variant & 1 != 0);
    let centre = (variant & 2 != 0).then_some(&centre[..]);
    let weight = |i: u32| weights.weight(sums[i as usize], centre.map_or(0.0, |c| c[i as usize]));
    let dot = |path: Option<&KernelSet>, idx: &[u32], val: Values<'_>| match path {
        Some(set) => set.adagrad_dot(weights, &sums, centre, idx, val),
        None => adagrad::dot(weights, &sums, centre, idx, val),
    };
    let want = scalar().adagrad_dot(weights, &sums, centre, idx, val);
    let abs: f64 = (idx.iter().enumerate())
        .map(|(k, &i)| (val.get(k) * weight(i)).abs())
        .sum();
    let bound = sum_bound(idx.len(), abs);
    for path in paths() {
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        if abs.is_finite() {
            let got = dot(path, idx, val);
            prop_assert!(
                (got - want).abs() <= bound,
                "{isa}: {got:e} vs {want:e}, bound {bound:e}"
            );
        }
        // The scalar kernel sums the copies one by one, rounding 3w, 5w, ...
        if isa == Isa::Scalar {
            continue;
        }
        for &i in idx.iter().take(9) {
            let (got, want) = probe(path, weights, &sums, centre, i);
            prop_assert!(
                same(got, want),
                "{isa}, state {:?}: {got:e} vs {want:e}",
                sums[i as usize]
            );
        }
    }
    Ok(())
}

/// The weight of pair `i` as a vector path computes it, and the scalar definition's, both
/// read as the dot of a row of eight copies of `i` (a dot allows repeats) and values 1: 8·w,
/// exact, from weights computed in the path's vector lanes (not its scalar tail). The same
/// bits where the weights are, except that a sum from +0 turns −0 into +0, and NaN for NaN.
fn probe(
    path: Option<&KernelSet>,
    weights: adagrad::Weights,
    sums: &[[f64; 2]],
    centre: Option<&[f64]>,
    i: u32,
) -> (f64, f64) {
    let got = match path {
        Some(set) => set.adagrad_dot(weights, sums, centre, &[i; 8], Values::Ones),
        None => adagrad::dot(weights, sums, centre, &[i; 8], Values::Ones),
    };
    let w = weights.weight(sums[i as usize], centre.map_or(0.0, |c| c[i as usize]));
    let four = (w + w) + (w + w);
    // Where 4w overflows, the lanes' partial sums make ∞ (or NaN from ∞ − ∞, which 8w does
    // not).
    let want = match four.is_finite() {
        true => 8.0 * w + 0.0,
        false => four + four,
    };
    (got, want)
}

/// Zeros of both signs, the smallest subnormal, tiny, ordinary, huge and the largest
/// magnitudes, infinities and NaN.
const SPECIALS: [f64; 11] = [
    0.0,
    -0.0,
    5e-324,
    1e-200,
    0.7,
    -1.3,
    1e200,
    f64::MAX,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

/// AdaGrad's kernels on each vector path against scalar over special values: the weights of
/// every state [u, r] ∈ SPECIALS², with no centre or a centre of 0, −0, 0.7, ∞ or NaN, under
/// rules whose tλ₁, tλ, δ and 1/η take special values too ([`probe`]); and the update of every
/// state by every gradient component g·x, g and x ∈ SPECIALS, the pairs bit for bit (NaN for
/// NaN). The kernels are for the learner's finite, non-negative sums, but the public
/// [`adagrad::Weights`] and the sums take any value: outside the learner's range too, each
/// path must give what the scalar definition gives (x86's `max` and ARM's differ on NaN,
/// for one).
pub fn check_adagrad_special_values() -> Result<(), String> {
    let states: Vec<[f64; 2]> = (SPECIALS.iter())
        .flat_map(|&u| SPECIALS.map(|r| [u, r]))
        .collect();
    let n = states.len() as u32;
    let mut paths = paths();
    paths.retain(|p| p.map_or(dispatch::isa(), |s| s.isa()) != Isa::Scalar);
    for l1_t in [0.0, 0.5, 1e200, f64::INFINITY, f64::NAN] {
        for lambda_t in [0.0, 0.25, f64::INFINITY, f64::NAN] {
            for (delta, inverse_eta) in [(1.0, 1.0), (0.0, 1e300), (1.0, f64::NAN)] {
                let weights = adagrad::Weights {
                    lambda_t,
                    l1_t,
                    delta,
                    inverse_eta,
                };
                for c in [
                    None,
                    Some(0.0),
                    Some(-0.0),
                    Some(0.7),
                    Some(f64::INFINITY),
                    Some(f64::NAN),
                ] {
                    let centre = c.map(|c| vec![c; states.len()]);
                    for &path in &paths {
                        for i in 0..n {
                            let (got, want) = probe(path, weights, &states, centre.as_deref(), i);
                            if !same(got, want) {
                                let isa = path.map_or(dispatch::isa(), |s| s.isa());
                                let state = states[i as usize];
                                return Err(format!(
                                    "{isa}: weight of {state:?}, centre {c:?}, {weights:?}: \
                                     {got:e} for {want:e}"
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    let idx: Vec<u32> = (0..n).collect();
    for g in SPECIALS {
        for shift in 0..SPECIALS.len() {
            // Every state meets every value over the shifts.
            let val: Vec<f64> = (0..states.len())
                .map(|k| SPECIALS[(k / SPECIALS.len() + k + shift) % SPECIALS.len()])
                .collect();
            let mut want = states.clone();
            scalar().adagrad_accumulate(g, &idx, Values::F64(&val), &mut want);
            for &path in &paths {
                let mut got = states.clone();
                match path {
                    Some(set) => set.adagrad_accumulate(g, &idx, Values::F64(&val), &mut got),
                    None => adagrad::accumulate(g, &idx, Values::F64(&val), &mut got),
                }
                for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                    if !(same(a[0], b[0]) && same(a[1], b[1])) {
                        let isa = path.map_or(dispatch::isa(), |s| s.isa());
                        return Err(format!(
                            "{isa}: {:?} + {g:e}·{:e} gave {a:?}, scalar {b:?}",
                            states[k], val[k]
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// `adagrad::accumulate` on each path against scalar: every pair bit for bit (NaN for NaN),
/// with g = a (extreme cases square beyond the normal range: the `hypot` case).
pub fn check_adagrad_accumulate(case: &Case, kind: u8) -> Result<(), TestCaseError> {
    let (idx, val) = (case.idx(), case.values(kind));
    let (before, _) = case.adagrad_state();
    let mut want = before.clone();
    scalar().adagrad_accumulate(case.a, idx, val, &mut want);
    for path in paths() {
        let isa = path.map_or(dispatch::isa(), |s| s.isa());
        let mut got = before.clone();
        match path {
            Some(set) => set.adagrad_accumulate(case.a, idx, val, &mut got),
            None => adagrad::accumulate(case.a, idx, val, &mut got),
        }
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            prop_assert!(
                same(g[0], w[0]) && same(g[1], w[1]),
                "{isa} at {i}: {g:?} vs {w:?} (from {:?})",
                before[i]
            );
        }
    }
    Ok(())
}
