//! The relaxed-atomic kernels compute what the scalar oracle computes (updates exactly, dots
//! within the summation-order bound), and concurrent use is free of lost data on disjoint rows.

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use common::{abs_dot, cases, scalar, sum_bound};
use proptest::prelude::*;
use sparselin_kernels::sparse;

fn shared(w: &[f64]) -> Vec<AtomicU64> {
    w.iter().map(|x| AtomicU64::new(x.to_bits())).collect()
}

fn shared_pairs(vu: &[[f64; 2]]) -> Vec<[AtomicU64; 2]> {
    vu.iter()
        .map(|p| {
            [
                AtomicU64::new(p[0].to_bits()),
                AtomicU64::new(p[1].to_bits()),
            ]
        })
        .collect()
}

fn plain(w: &[AtomicU64]) -> Vec<f64> {
    w.iter().map(|x| f64::from_bits(x.load(Relaxed))).collect()
}

proptest! {
    #[test]
    fn atomic_kernels_match_scalar(case in cases(), kind in 0u8..3) {
        let (idx, val) = (case.idx(), case.values(kind));
        let w = case.w();
        let bound = sum_bound(idx.len(), abs_dot(w, idx, val));
        let got = sparse::dot_atomic(&shared(w), idx, val);
        prop_assert!((got - scalar().dot(w, idx, val)).abs() <= bound);

        let mut want = w.to_vec();
        scalar().axpy(case.a, idx, val, &mut want);
        let aw = shared(w);
        sparse::axpy_atomic(case.a, idx, val, &aw);
        prop_assert_eq!(plain(&aw), want);

        let vu = case.pairs();
        let avu = shared_pairs(&vu);
        let firsts: Vec<f64> = vu.iter().map(|p| p[0]).collect();
        let got = sparse::dot_first_atomic(&avu, idx, val);
        let bound = sum_bound(idx.len(), abs_dot(&firsts, idx, val));
        prop_assert!((got - scalar().dot_first(&vu, idx, val)).abs() <= bound);

        let mut want = vu.clone();
        scalar().axpy2(case.a, case.b, idx, val, &mut want);
        sparse::axpy2_atomic(case.a, case.b, idx, val, &avu);
        let got: Vec<[f64; 2]> = avu.iter().map(|p| [p[0].load(Relaxed), p[1].load(Relaxed)].map(f64::from_bits)).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn threads_updating_disjoint_rows_lose_nothing() {
    let w = shared(&[0.0; 64]);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let w = &w;
            s.spawn(move || {
                let idx: Vec<u32> = (0..16).map(|k| 4 * k + t).collect();
                for _ in 0..1000 {
                    sparse::axpy_atomic(1.0, &idx, sparselin_kernels::Values::Ones, w);
                }
            });
        }
    });
    assert!(plain(&w).iter().all(|&x| x == 1000.0));
}
