//! Problems and helpers shared by the online learners' tests (included with
//! `mod online_common;`).

use sparselin::data::{CsrMatrix, ValueVec};
use sparselin::loss::Loss;
use sparselin::online::Iterate;

/// A small random sparse problem: m rows, n features, ~k non-zeros each, values in [−1, 1]
/// scaled so ‖x‖² ≈ 1, with a dense-ish feature 0 (so x̄ is not tiny) and real labels
/// (classification losses read their sign).
pub fn problem(m: usize, n: usize, k: usize, seed: u64) -> CsrMatrix {
    labelled_problem(m, n, k, seed, |y| y)
}

/// [`problem`] with each label y replaced by `label(y)`.
pub fn labelled_problem(
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
    label: fn(f64) -> f64,
) -> CsrMatrix {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for _ in 0..m {
        let mut row: Vec<u32> = (0..k).map(|_| (next() * n as f64) as u32).collect();
        row.push(0);
        row.sort_unstable();
        row.dedup();
        let scale = 1.0 / (row.len() as f64).sqrt();
        for &j in &row {
            indices.push(j);
            values.push(if j == 0 {
                0.8
            } else {
                (2.0 * next() - 1.0) * scale * 1.7
            });
        }
        offsets.push(indices.len() as u64);
        labels.push(label(4.0 * next() - 1.5));
    }
    CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), n).unwrap()
}

/// Every online learner's loss but squared ε-insensitive.
pub const LOSSES: [Loss; 10] = [
    Loss::Squared,
    Loss::Absolute,
    Loss::Hinge,
    Loss::Log,
    Loss::SquaredHinge,
    Loss::SmoothHinge,
    Loss::EpsilonInsensitive(0.3),
    Loss::Quantile(0.8),
    Loss::Huber(0.5),
    Loss::ModifiedHuber,
];

/// The bits of an iterate's weights and bias.
pub fn bits(it: &Iterate) -> Vec<u64> {
    it.weights
        .iter()
        .chain([&it.bias])
        .map(|x| x.to_bits())
        .collect()
}

/// ‖a − b‖∞ relative to the larger of ‖b‖∞ and |b's bias|.
pub fn relative_difference(fast: &Iterate, naive: &Iterate) -> f64 {
    let scale = naive
        .weights
        .iter()
        .fold(naive.bias.abs(), |s, w| s.max(w.abs()));
    let diff = fast
        .weights
        .iter()
        .zip(&naive.weights)
        .fold((fast.bias - naive.bias).abs(), |d, (a, b)| {
            d.max((a - b).abs())
        });
    diff / scale
}
