//! The sparse kernels against this machine's random-load limit, timed in one process with the
//! kernels alternated round by round (as `fused_update` does), so that a host whose speed
//! drifts within the minute, where criterion cells timed seconds apart are not comparable
//! (PERF.md `## Kernels`, the Intel host), still gives each round's ratio to the limit.
//!
//! `cargo run --release -p sparselin-kernels --example load_limit -- [LOG_N ...]`
//!
//! For each size n = 2^LOG_N (default 10, 14, 18, 20, 22, 24, 26) and index pattern (random,
//! Zipf): rows of 32 distinct increasing indices below n, 2^15 non-zeros in all, with `f32`
//! values, as in the criterion benchmark. The limit is its own: one independent 8-byte load
//! `w[idx[k]]` per index of the same stream. Printed: the medians of the limit and of the
//! fastest `dot` and `axpy` of any path in ns per non-zero, and the medians over rounds of the
//! fastest `dot` and `axpy` over the limit (the "best path within 1.5× of the limit").

use std::hint::black_box;
use std::time::Instant;

use sparselin_kernels::{HugeArray, IndexVec, KernelSet, Values};

const NNZ: usize = 1 << 15;
const ROW_NNZ: usize = 32;
const ROUNDS: usize = 11;
const PASSES: usize = 40;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// xorshift64: reproducible rows.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Rows of ROW_NNZ distinct increasing indices below n: uniform, or log-uniform ranks (Zipf
/// with exponent 1).
fn rows(n: usize, zipf: bool, rng: &mut Rng) -> Vec<u32> {
    let mut idx = Vec::with_capacity(NNZ);
    while idx.len() + ROW_NNZ <= NNZ {
        let mut row: Vec<u32> = Vec::with_capacity(ROW_NNZ);
        while row.len() < ROW_NNZ.min(n) {
            let i = if zipf {
                (n as f64).powf(rng.unit()) as usize - 1
            } else {
                (rng.unit() * n as f64) as usize
            };
            let i = i.min(n - 1) as u32;
            if !row.contains(&i) {
                row.push(i);
            }
        }
        row.sort_unstable();
        idx.extend(row);
    }
    idx
}

fn main() {
    let sizes: Vec<u32> = match std::env::args().skip(1).map(|a| a.parse()).collect() {
        Ok(sizes) if !Vec::is_empty(&sizes) => sizes,
        Ok(_) => vec![10, 14, 18, 20, 22, 24, 26],
        Err(_) => {
            eprintln!("usage: load_limit [LOG_N ...]");
            std::process::exit(2);
        }
    };
    let sets: Vec<&KernelSet> = KernelSet::available().collect();
    let mut rng = Rng(0x1234_5678_9abc_def0);
    for log_n in sizes {
        let n = 1usize << log_n;
        let mut w = HugeArray::<f64>::zeroed(n);
        for (i, x) in w.iter_mut().enumerate() {
            *x = (i % 7) as f64 * 0.1;
        }
        for (pattern, zipf) in [("random", false), ("zipf", true)] {
            let idx = IndexVec::new(rows(n, zipf, &mut rng));
            let val: Vec<f32> = (0..idx.as_slice().len())
                .map(|_| (rng.unit() * 2.0 - 1.0) as f32)
                .collect();
            let all = idx.bounded();
            let nnz = val.len();
            // Kernel 0 is the limit; then each path's dot and axpy.
            let kernels = 1 + 2 * sets.len();
            let mut times = vec![Vec::with_capacity(ROUNDS); kernels];
            for round in 0..ROUNDS {
                for step in 0..kernels {
                    let kernel = (round + step) % kernels;
                    let start = Instant::now();
                    for _ in 0..PASSES {
                        if kernel == 0 {
                            let loads = idx
                                .as_slice()
                                .iter()
                                .fold(0u64, |acc, &i| acc ^ w[i as usize].to_bits());
                            black_box(loads);
                            continue;
                        }
                        let set = sets[(kernel - 1) / 2];
                        let mut sum = 0.0;
                        for s in (0..nnz).step_by(ROW_NNZ) {
                            let (i, v) = (all.slice(s..s + ROW_NNZ), &val[s..s + ROW_NNZ]);
                            if kernel % 2 == 1 {
                                sum += set.dot(&w, i, Values::F32(v));
                            } else {
                                set.axpy(1e-9, i, Values::F32(v), &mut w);
                            }
                        }
                        black_box(sum);
                    }
                    times[kernel].push(start.elapsed().as_secs_f64() * 1e9 / (PASSES * nnz) as f64);
                }
            }
            // Per round, the fastest path of a kind (1: dot, 2: axpy) and which one it was.
            let fastest = |kind: usize| -> Vec<(f64, usize)> {
                (0..ROUNDS)
                    .map(|r| {
                        (kind..kernels)
                            .step_by(2)
                            .map(|k| (times[k][r], (k - 1) / 2))
                            .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a })
                    })
                    .collect()
            };
            let limit = &times[0];
            let report = |kind: usize| {
                let best = fastest(kind);
                let ratio = median(best.iter().zip(limit).map(|((t, _), l)| t / l).collect());
                let mut wins = vec![0; sets.len()];
                for &(_, path) in &best {
                    wins[path] += 1;
                }
                let winner = (0..sets.len()).max_by_key(|&p| wins[p]).unwrap_or(0);
                let ns = median(best.iter().map(|&(t, _)| t).collect());
                format!("{ns:.3} ({}) = {ratio:.2}× limit", sets[winner].isa())
            };
            println!(
                "2^{log_n} {pattern}: limit {:.3} ns | best dot {} | best axpy {}",
                median(limit.clone()),
                report(1),
                report(2),
            );
        }
        black_box(&w[..]);
    }
}
