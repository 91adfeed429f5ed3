//! Test data for comparing kernel paths: rows with random, sorted, Zipf-like and clustered
//! index patterns, values of ordinary or extreme (1e±250) magnitude, placed at unaligned
//! offsets inside larger allocations; and the error bounds the paths must meet.
#![allow(dead_code)] // each test binary uses a different part of this module

pub mod dense_checks;
pub mod row_block_checks;
pub mod sparse_checks;

use proptest::prelude::*;
use sparselin_kernels::dispatch::Isa;
use sparselin_kernels::{KernelSet, Values};

/// Unit roundoff of f64, 2⁻⁵³.
pub const U: f64 = f64::EPSILON / 2.0;

/// γ_k = k·u / (1 − k·u): the classic bound on the relative error of a k-term sum.
pub fn gamma(k: usize) -> f64 {
    let ku = k as f64 * U;
    ku / (1.0 - ku)
}

/// Bound on the difference between two summation orders of k products with Σ|p_i| = abs.
pub fn sum_bound(k: usize, abs: f64) -> f64 {
    2.0 * gamma(k.max(1)) * abs
}

/// Every vectorized path this CPU has, after saying which it skips.
pub fn vector_paths() -> Vec<&'static KernelSet> {
    static SAY_ONCE: std::sync::Once = std::sync::Once::new();
    SAY_ONCE.call_once(|| {
        for isa in Isa::ALL {
            if isa != Isa::Scalar && !isa.is_available() {
                eprintln!("skipping the {isa} path: not supported by this CPU");
            }
        }
    });
    KernelSet::available()
        .filter(|set| set.isa() != Isa::Scalar)
        .collect()
}

/// The scalar oracle.
pub fn scalar() -> &'static KernelSet {
    KernelSet::for_isa(Isa::Scalar).unwrap()
}

/// SplitMix64: a tiny deterministic generator, so one proptest seed fixes a whole case.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// ±m·10^e with m in [1, 10) and e uniform in [-emax, emax] (or in (-1, 1) if emax = 0).
    pub fn magnitude(&mut self, emax: i32) -> f64 {
        let sign = if self.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
        if emax == 0 {
            return sign * self.unit();
        }
        let e = self.below((2 * emax + 1) as usize) as i32 - emax;
        sign * (1.0 + 9.0 * self.unit()) * 10f64.powi(e)
    }
}

/// How a row's column indices are drawn.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    /// Uniform over the weights, in random order.
    Random,
    /// Uniform, increasing (the CSR order).
    Sorted,
    /// Heavy-tailed (log-uniform ≈ Zipf with exponent 1), increasing.
    Zipf,
    /// Runs of consecutive indices, increasing.
    Clustered,
}

/// One test case: weights and a row, each a sub-slice at an unaligned offset.
#[derive(Debug)]
pub struct Case {
    w: Vec<f64>,
    w_off: usize,
    idx: Vec<u32>,
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    row_off: usize,
    pub a: f64,
    pub b: f64,
}

impl Case {
    pub fn w(&self) -> &[f64] {
        &self.w[self.w_off..]
    }
    pub fn idx(&self) -> &[u32] {
        &self.idx[self.row_off..]
    }
    /// The row's values of the given kind (0 = binary, 1 = f32, 2 = f64).
    pub fn values(&self, kind: u8) -> Values<'_> {
        match kind % 3 {
            0 => Values::Ones,
            1 => Values::F32(&self.f32s[self.row_off..]),
            _ => Values::F64(&self.f64s[self.row_off..]),
        }
    }
    /// The weights as blocks of `width` per feature ([`sparselin_kernels::sparse::block_dot`]):
    /// lane c of feature i is w[(i + 7c) mod n], so that lanes differ.
    pub fn blocks(&self, width: usize) -> Vec<f64> {
        let w = self.w();
        (0..w.len() * width)
            .map(|j| w[(j / width + 7 * (j % width)) % w.len()])
            .collect()
    }
    /// `width` coefficients of a block update: a, b, then alternating multiples of them.
    pub fn coefficients(&self, width: usize) -> Vec<f64> {
        (0..width)
            .map(|c| if c % 2 == 0 { self.a } else { self.b } * (1.0 + c as f64 / 4.0))
            .collect()
    }
    /// The weights as interleaved pairs (w_i, a second, independent value).
    pub fn pairs(&self) -> Vec<[f64; 2]> {
        let mut rng = Rng::new(self.w.len() as u64);
        self.w()
            .iter()
            .map(|&v| [v, v * rng.magnitude(1)])
            .collect()
    }
}

impl Case {
    /// An AdaGrad state per weight: `[u, r]` with u = w_i and r ≥ 0 of an independent size
    /// (0 for every fifth), and centres with every third 0.
    pub fn adagrad_state(&self) -> (Vec<[f64; 2]>, Vec<f64>) {
        let sums = (self.pairs().into_iter().enumerate())
            .map(|(i, [u, r])| [u, if i % 5 == 0 { 0.0 } else { r.abs() }])
            .collect();
        let centre = (self.w().iter().enumerate())
            .map(|(i, &w)| if i % 3 == 0 { 0.0 } else { -0.5 * w })
            .collect();
        (sums, centre)
    }
    /// The weights' rule of AdaGrad after some steps: tλ = |a|, tλ₁ = |b| (0 unless `l1`),
    /// δ = 1, η = 1/|a + b|.
    pub fn adagrad_weights(&self, l1: bool) -> sparselin_kernels::adagrad::Weights {
        sparselin_kernels::adagrad::Weights {
            lambda_t: self.a.abs(),
            l1_t: if l1 { self.b.abs() } else { 0.0 },
            delta: 1.0,
            inverse_eta: (self.a + self.b).abs(),
        }
    }
}

/// Distinct indices below `n`, `nnz` of them at most (fewer if drawing repeats for Zipf).
fn draw_indices(rng: &mut Rng, pattern: Pattern, nnz: usize, n: usize) -> Vec<u32> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(nnz);
    let mut push = |i: usize, out: &mut Vec<u32>| {
        if i < n && seen.insert(i) {
            out.push(i as u32);
        }
    };
    let mut tries = 0;
    while out.len() < nnz && tries < 20 * nnz + 20 {
        tries += 1;
        match pattern {
            Pattern::Random | Pattern::Sorted => push(rng.below(n), &mut out),
            Pattern::Zipf => push((n as f64).powf(rng.unit()) as usize - 1, &mut out),
            Pattern::Clustered => {
                let start = rng.below(n);
                for i in start..start + 1 + rng.below(16) {
                    push(i, &mut out);
                }
            }
        }
    }
    out.truncate(nnz);
    if !matches!(pattern, Pattern::Random) {
        out.sort_unstable();
    }
    out
}

/// Builds a case: `nnz` non-zeros over `n_w` weights (grown to fit), offsets below 8.
pub fn build(seed: u64, pattern: Pattern, nnz: usize, n_w: usize, extreme: bool) -> Case {
    let mut rng = Rng::new(seed);
    let n = n_w.max(nnz + 1);
    let (w_off, row_off) = (rng.below(8), rng.below(8));
    let (ew, ex) = if extreme { (250, 30) } else { (0, 0) };
    let w = (0..n + w_off).map(|_| rng.magnitude(ew)).collect();
    let mut idx = vec![0; row_off];
    idx.extend(draw_indices(&mut rng, pattern, nnz, n));
    let f32s: Vec<f32> = idx.iter().map(|_| rng.magnitude(ex) as f32).collect();
    let f64s = idx.iter().map(|_| rng.magnitude(ex)).collect();
    let (ea, eb) = if extreme { (200, 200) } else { (1, 1) };
    Case {
        w,
        w_off,
        idx,
        f32s,
        f64s,
        row_off,
        a: rng.magnitude(ea),
        b: rng.magnitude(eb),
    }
}

/// Proptest strategy for cases: lengths 0..1000, every pattern, ordinary or extreme values.
pub fn cases() -> impl Strategy<Value = Case> {
    (
        any::<u64>(),
        prop_oneof![
            Just(Pattern::Random),
            Just(Pattern::Sorted),
            Just(Pattern::Zipf),
            Just(Pattern::Clustered)
        ],
        0usize..1000,
        prop_oneof![1usize..64, 1usize..5000],
        any::<bool>(),
    )
        .prop_map(|(seed, pattern, nnz, n_w, extreme)| build(seed, pattern, nnz, n_w, extreme))
}

/// Σ_k |w[idx[k]]·val[k]|.
pub fn abs_dot(w: &[f64], idx: &[u32], val: Values<'_>) -> f64 {
    idx.iter()
        .enumerate()
        .map(|(k, &i)| (w[i as usize] * val.get(k)).abs())
        .sum()
}

/// Checks one updated entry against the oracle's: |Δ| ≤ 4u·(|w| + |a·x|), above the 3.01u
/// the crate documents (u = 2⁻⁵³).
pub fn check_update(got: f64, want: f64, before: f64, ax: f64) -> Result<(), String> {
    let bound = 4.0 * U * (before.abs() + ax.abs());
    if (got - want).abs() <= bound {
        Ok(())
    } else {
        Err(format!("got {got:e}, oracle {want:e}, bound {bound:e}"))
    }
}
