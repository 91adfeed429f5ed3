//! Shared fixtures of the attribute-efficient regression tests (included with `mod`).
#![allow(dead_code)] // each test binary uses a part of these fixtures

use sparselin::data::{CsrMatrix, ValueVec};
use sparselin::lao::draws::Draws;

/// m random sparse rows over d features (about `nnz` entries each, values in [−1, 1]) with
/// labels y = w*·x + noise, |y| ≤ 1 roughly.
pub fn synthetic(m: usize, d: usize, nnz: usize, seed: u64) -> CsrMatrix {
    let mut draws = Draws::new(seed);
    let truth: Vec<f64> = (0..d).map(|_| draws.uniform() - 0.5).collect();
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for _ in 0..m {
        let mut row: Vec<u32> = (0..nnz).map(|_| draws.index(d) as u32).collect();
        row.sort_unstable();
        row.dedup();
        let mut y = 0.0;
        for &i in &row {
            let v = 2.0 * draws.uniform() - 1.0;
            y += truth[i as usize] * v;
            values.push(v);
        }
        indices.extend_from_slice(&row);
        offsets.push(indices.len() as u64);
        labels.push((y / (nnz as f64).sqrt() + 0.1 * (draws.uniform() - 0.5)).clamp(-1.0, 1.0));
    }
    CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), d).unwrap()
}

/// max_i |a_i − b_i| / max(1, max_i |a_i|).
pub fn relative_gap(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}
