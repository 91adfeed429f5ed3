//! The sparse property checks: each vectorized path and the dispatched one against scalar.

use proptest::prelude::*;
use sparselin_kernels::{KernelSet, dispatch, sparse};

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
