//! The fused pair update against plain `axpy`, timed in one process with the kernels
//! alternated round by round, each round starting with the next, so that a host whose speed
//! drifts slows all three alike
//! (PERF.md `## Kernels`, "`axpy2`: two rewrites measured and not kept").
//!
//! `cargo run --release -p sparselin-kernels --example fused_update -- LOG_N ROW_NNZ [ones]`
//!
//! Rows of ROW_NNZ distinct random indices below 2^LOG_N, 2^15 non-zeros in all, each row
//! carrying the bound of the whole index array (as shards do), with `f32` values or, with
//! `ones`, binary (no values to widen and spread). For every path: the median
//! ns per non-zero of `axpy` into n weights, `axpy2` into n pairs, and `axpy` through doubled
//! indices into the pairs viewed as 2n weights (`first`: the same cache lines as `axpy2`),
//! and the medians of the per-round ratios; then the median over rounds of the fastest
//! `axpy2` of any path over the fastest `axpy` of any path. Every kernel of every path runs
//! once per round.

use std::time::Instant;

use sparselin_kernels::{IndexVec, KernelSet, Values};

const NNZ: usize = 1 << 15;
const ROUNDS: usize = 21;
const PASSES: usize = 200;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ratios(num: &[f64], den: &[f64]) -> f64 {
    median(num.iter().zip(den).map(|(a, b)| a / b).collect())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (sizes, ones) = match &args[..] {
        [n, r] => ([n, r], false),
        [n, r, kind] if kind == "ones" => ([n, r], true),
        _ => {
            eprintln!("usage: fused_update LOG_N ROW_NNZ [ones]");
            std::process::exit(2);
        }
    };
    let [log_n, row] = sizes.map(|a| a.parse::<usize>().expect("LOG_N and ROW_NNZ: integers"));
    let n = 1usize << log_n;
    assert!((1..=n).contains(&row), "ROW_NNZ must be 1..=2^LOG_N");

    // xorshift64: reproducible rows.
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut below = |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as u32
    };
    let mut idx = Vec::with_capacity(NNZ);
    while idx.len() + row <= NNZ {
        let mut r: Vec<u32> = Vec::with_capacity(row);
        while r.len() < row {
            let i = below(n);
            if !r.contains(&i) {
                r.push(i);
            }
        }
        r.sort_unstable();
        idx.extend(r);
    }
    let val: Vec<f32> = (0..idx.len())
        .map(|k| (k % 13) as f32 * 0.1 - 0.6)
        .collect();
    let doubled = IndexVec::new(idx.iter().map(|&i| 2 * i).collect());
    let idx = IndexVec::new(idx);
    let (plain, twice) = (idx.bounded(), doubled.bounded());
    let nnz = val.len();

    // Every kernel of every path, alternated within each round: a host whose speed drifts
    // slows them all alike, so that paths can be compared with one another too.
    let sets: Vec<&KernelSet> = KernelSet::available().collect();
    let mut weights: Vec<(Vec<f64>, Vec<[f64; 2]>)> = sets
        .iter()
        .map(|_| (vec![0.0; n], vec![[0.0; 2]; n]))
        .collect();
    let kernels = 3 * sets.len();
    let mut times = vec![Vec::with_capacity(ROUNDS); kernels];
    for round in 0..ROUNDS {
        // Each round starts with the next kernel, so none always runs on the caches another
        // left.
        for step in 0..kernels {
            let kernel = (round + step) % kernels;
            let (set, (w, vu)) = (sets[kernel / 3], &mut weights[kernel / 3]);
            let start = Instant::now();
            for _ in 0..PASSES {
                for s in (0..nnz).step_by(row) {
                    let v = if ones {
                        Values::Ones
                    } else {
                        Values::F32(&val[s..s + row])
                    };
                    match kernel % 3 {
                        0 => set.axpy(1e-9, plain.slice(s..s + row), v, w),
                        1 => set.axpy2(1e-9, -1e-9, plain.slice(s..s + row), v, vu),
                        _ => set.axpy(1e-9, twice.slice(s..s + row), v, vu.as_flattened_mut()),
                    }
                }
            }
            times[kernel].push(start.elapsed().as_secs_f64() * 1e9 / (PASSES * nnz) as f64);
        }
    }
    for (set, path) in sets.iter().zip(times.chunks(3)) {
        let [axpy, axpy2, first] = path else {
            unreachable!("three kernels per path")
        };
        println!(
            "{} 2^{log_n} row {row}: axpy {:.3} axpy2 {:.3} first {:.3} ns/nnz | axpy2/axpy {:.3} axpy2/first {:.3}",
            set.isa(),
            median(axpy.clone()),
            median(axpy2.clone()),
            median(first.clone()),
            ratios(axpy2, axpy),
            ratios(axpy2, first),
        );
    }
    // Per round, the fastest `axpy2` of any path against the fastest `axpy` of any path.
    let fastest = |kind: usize| -> Vec<f64> {
        (0..ROUNDS)
            .map(|r| {
                (kind..kernels)
                    .step_by(3)
                    .map(|k| times[k][r])
                    .fold(f64::INFINITY, f64::min)
            })
            .collect()
    };
    println!(
        "best of the paths 2^{log_n} row {row}: axpy2/axpy {:.3}",
        ratios(&fastest(1), &fastest(0))
    );
    std::hint::black_box(&weights);
}
