//! Kernel benchmarks: ns per non-zero of the sparse kernels on every path this CPU has, at
//! weight-vector sizes from L1 to DRAM, for random / Zipf / clustered index patterns; the
//! dense kernels in bytes per second; and, in the same run, this machine's limits: the cost of
//! one independent random 8-byte load from an array of each size, and streaming read
//! bandwidth. The weight arrays are the learners' own storage ([`HugeArray`]: 2 MiB pages
//! from 2 MiB up), and the rows come with a proven index bound ([`BoundedIndices`]), as a
//! shard's and a `CsrMatrix`'s do, so no kernel scans its row; `bounds_check` times that scan,
//! which a plain `&[u32]` row costs on top.
//!
//! AdaGrad's kernels (`adagrad_dot`, `adagrad_accumulate`) run over the same rows, against
//! the `dot_first` and `axpy2` of the same bytes (interleaved pairs).
//!
//! The block kernels of one-vs-rest in one pass (`block/...`) are timed against the per-class
//! kernels over the same rows: K classes of ASGD, one pass (a block dot of the K v's and a
//! block update of the 2K sums per row) against K passes (a `dot_first` and an `axpy2` per
//! row and class), in ns per non-zero and class.
//!
//! The row-block kernels (`rows/...`) are timed against a row kernel call per row over the same
//! rows, 4 to 128 non-zeros long: the cost of the calls themselves; and alone over rows of
//! varying length (`..._varied`), where a row's remainder is not the same every time.
//!
//! Throughputs are reported per non-zero (sparse) or per byte (dense). By default a few sizes
//! are sampled with short measurement times; `SPARSELIN_BENCH_FULL=1` sweeps 2^10..2^26.
//! `kernels/perf_table.py` turns criterion's estimates into the PERF.md table.

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sparselin_kernels::math::Elementwise;
use sparselin_kernels::{
    BoundedIndices, HugeArray, IndexVec, KernelSet, RowBlock, Values, adagrad, sparse,
};

/// Non-zeros per row (a typical text row) and per benchmark iteration.
const ROW_NNZ: usize = 32;
const ITER_NNZ: usize = 1 << 15;
/// Non-zeros of the rows of varying length ([`VariedRows`]).
const VARIED_NNZ: usize = 1 << 20;

fn sizes() -> Vec<u32> {
    if std::env::var_os("SPARSELIN_BENCH_FULL").is_some() {
        (10..=26).step_by(2).collect()
    } else {
        vec![10, 18, 24]
    }
}

/// SplitMix64, for reproducible data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy)]
enum Pattern {
    Random,
    Zipf,
    Clustered,
}

impl Pattern {
    const ALL: [Pattern; 3] = [Pattern::Random, Pattern::Zipf, Pattern::Clustered];
    fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Zipf => "zipf",
            Pattern::Clustered => "clustered",
        }
    }
}

/// Rows of `row_nnz` (ROW_NNZ unless said) distinct increasing indices below n, ITER_NNZ
/// non-zeros in all.
struct Rows {
    /// Scanned once for its bound, as a shard's or a `CsrMatrix`'s indices are: the kernels
    /// then compare the bound with the weights' length once per row instead of scanning it.
    idx: IndexVec,
    val: Vec<f32>,
    row_nnz: usize,
}

impl Rows {
    fn new(pattern: Pattern, n: usize, seed: u64) -> Rows {
        Rows::of_length(ROW_NNZ, pattern, n, seed)
    }
    fn of_length(row_nnz: usize, pattern: Pattern, n: usize, seed: u64) -> Rows {
        let mut rng = Rng(seed);
        let mut idx = Vec::with_capacity(ITER_NNZ);
        while idx.len() < ITER_NNZ {
            let mut row = Vec::with_capacity(row_nnz);
            while row.len() < row_nnz.min(n) {
                match pattern {
                    Pattern::Random => row.push(rng.below(n) as u32),
                    // Log-uniform ranks: density ∝ 1/i, Zipf with exponent 1.
                    Pattern::Zipf => row.push(((n as f64).powf(rng.unit()) as usize - 1) as u32),
                    Pattern::Clustered => {
                        let start = rng.below(n);
                        row.extend((start..(start + 8).min(n)).map(|i| i as u32));
                    }
                }
                row.sort_unstable();
                row.dedup();
                row.truncate(row_nnz);
            }
            idx.extend(row);
        }
        idx.truncate(ITER_NNZ - ITER_NNZ % row_nnz.min(n));
        let val = idx
            .iter()
            .map(|_| (rng.unit() * 2.0 - 1.0) as f32)
            .collect();
        Rows {
            idx: IndexVec::new(idx),
            val,
            row_nnz,
        }
    }
    /// The same rows with every index doubled: plain `axpy` through them into the pairs viewed
    /// as one `f64` array updates the first members, the cache lines `axpy2` updates.
    fn doubled(&self) -> Rows {
        Rows {
            idx: IndexVec::new(self.idx.as_slice().iter().map(|&i| 2 * i).collect()),
            val: self.val.clone(),
            row_nnz: self.row_nnz,
        }
    }
    /// The rows, each with the bound of the whole index array (the learners' hot path).
    fn rows(&self) -> impl Iterator<Item = (BoundedIndices<'_>, Values<'_>)> {
        let all = self.idx.bounded();
        let k = self.row_nnz.min(self.len().max(1));
        (0..self.len())
            .step_by(k)
            .zip(self.val.chunks(k))
            .map(move |(start, v)| (all.slice(start..start + v.len()), Values::F32(v)))
    }
    /// Non-zeros in all.
    fn len(&self) -> usize {
        self.val.len()
    }
    /// The rows' offsets (every row is `row_nnz` long).
    fn offsets(&self) -> Vec<u64> {
        (0..=self.len())
            .step_by(self.row_nnz)
            .map(|k| k as u64)
            .collect()
    }
}

/// Sparse kernels on every path, and the random-load limit, at every size and pattern.
fn sparse_kernels(c: &mut Criterion) {
    for log_n in sizes() {
        let n = 1usize << log_n;
        // The learners' storage: 2 MiB pages from 2 MiB up (`HugeArray`).
        let mut w = HugeArray::<f64>::zeroed(n);
        let mut vu = HugeArray::<[f64; 2]>::zeroed(n);
        let aw = HugeArray::<AtomicU64>::zeroed(n);
        // AdaGrad's [u, r] per feature (r ≥ 0).
        let mut sums = HugeArray::<[f64; 2]>::zeroed(n);
        for (i, ((x, pair), a)) in w.iter_mut().zip(vu.iter_mut()).zip(&aw[..]).enumerate() {
            *x = (i % 7) as f64 * 0.1;
            *pair = [*x, -*x];
            a.store(x.to_bits(), std::sync::atomic::Ordering::Relaxed);
            sums[i] = [-*x, *x];
        }
        let rule = adagrad::Weights {
            lambda_t: 1.0,
            l1_t: 0.0,
            delta: 1.0,
            inverse_eta: 1.0,
        };
        for pattern in Pattern::ALL {
            let rows = Rows::new(pattern, n, u64::from(log_n));
            let first_members = rows.doubled();
            let mut g = c.benchmark_group(format!("sparse/{}/2^{log_n}", pattern.name()));
            g.throughput(Throughput::Elements(rows.len() as u64));

            // The limit: independent random 8-byte loads through the same index stream.
            g.bench_function("limit/random_load", |b| {
                b.iter(|| {
                    rows.idx
                        .as_slice()
                        .iter()
                        .fold(0u64, |acc, &i| acc ^ w[i as usize].to_bits())
                })
            });
            for set in KernelSet::available() {
                let isa = set.isa().name();
                g.bench_function(BenchmarkId::new("dot", isa), |b| {
                    b.iter(|| rows.rows().map(|(i, v)| set.dot(&w, i, v)).sum::<f64>())
                });
                g.bench_function(BenchmarkId::new("axpy", isa), |b| {
                    b.iter(|| {
                        for (i, v) in rows.rows() {
                            set.axpy(1e-9, i, v, &mut w);
                        }
                    })
                });
                g.bench_function(BenchmarkId::new("dot_first", isa), |b| {
                    b.iter(|| {
                        rows.rows()
                            .map(|(i, v)| set.dot_first(&vu, i, v))
                            .sum::<f64>()
                    })
                });
                g.bench_function(BenchmarkId::new("axpy2", isa), |b| {
                    b.iter(|| {
                        for (i, v) in rows.rows() {
                            set.axpy2(1e-9, -1e-9, i, v, &mut vu);
                        }
                    })
                });
                // One plain axpy over the same bytes as `axpy2`: the first members of the pairs.
                g.bench_function(BenchmarkId::new("axpy_first", isa), |b| {
                    b.iter(|| {
                        for (i, v) in first_members.rows() {
                            set.axpy(1e-9, i, v, vu.as_flattened_mut());
                        }
                    })
                });
                // AdaGrad's step: the prediction over the weights its [u, r] pairs give (a
                // division per entry), and the pairs' update (a square root per entry).
                g.bench_function(BenchmarkId::new("adagrad_dot", isa), |b| {
                    b.iter(|| {
                        rows.rows()
                            .map(|(i, v)| set.adagrad_dot(rule, &sums, None, i, v))
                            .sum::<f64>()
                    })
                });
                g.bench_function(BenchmarkId::new("adagrad_accumulate", isa), |b| {
                    b.iter(|| {
                        for (i, v) in rows.rows() {
                            set.adagrad_accumulate(1e-9, i, v, &mut sums);
                        }
                    })
                });
                g.bench_function(BenchmarkId::new("bounds_check", isa), |b| {
                    b.iter(|| rows.rows().map(|(i, _)| set.max_index(&i)).max())
                });
            }
            g.bench_function("dot_atomic/portable", |b| {
                b.iter(|| {
                    rows.rows()
                        .map(|(i, v)| sparse::dot_atomic(&aw, i, v))
                        .sum::<f64>()
                })
            });
            g.bench_function("axpy_atomic/portable", |b| {
                b.iter(|| {
                    for (i, v) in rows.rows() {
                        sparse::axpy_atomic(1e-9, i, v, &aw);
                    }
                })
            });
            // An SGD-like step (dot, then axpy of the same row), without and with prefetching
            // the next row's weights first.
            let row_list: Vec<_> = rows.rows().collect();
            for prefetch in [false, true] {
                let name = if prefetch { "step_prefetch" } else { "step" };
                g.bench_function(
                    BenchmarkId::new(name, sparselin_kernels::dispatch::isa().name()),
                    |b| {
                        b.iter(|| {
                            for (r, &(i, v)) in row_list.iter().enumerate() {
                                if prefetch && let Some(&(next, _)) = row_list.get(r + 1) {
                                    sparse::prefetch(&w, next.as_slice());
                                }
                                let d = sparse::dot(&w, i, v);
                                sparse::axpy(-1e-9 * d.signum(), i, v, &mut w);
                            }
                        })
                    },
                );
            }
            g.finish();
        }
        black_box((&w[..], &vu[..], &sums[..]));
    }
}

/// Dense kernels on every path, and streaming read bandwidth, in bytes per second.
fn dense_kernels(c: &mut Criterion) {
    let logs: Vec<u32> = sizes().into_iter().filter(|&l| l >= 12).collect();
    for log_n in logs {
        let n = 1usize << log_n;
        let x: Vec<f64> = (0..n).map(|i| (i % 11) as f64 * 0.5 - 2.0).collect();
        let mut y: Vec<f64> = (0..n).map(|i| (i % 5) as f64 * 0.25).collect();
        let vu: Vec<[f64; 2]> = x.iter().map(|&a| [a, 0.5 * a]).collect();
        let mut out = vec![0.0; n];
        let z: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 0.125).collect();
        let bytes = (n * 8) as u64;
        let mut g = c.benchmark_group(format!("dense/2^{log_n}"));
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function("limit/stream_read", |b| {
            b.iter(|| x.iter().fold(0u64, |acc, &v| acc.wrapping_add(v.to_bits())))
        });
        for set in KernelSet::available() {
            let isa = set.isa().name();
            g.throughput(Throughput::Bytes(2 * bytes));
            g.bench_function(BenchmarkId::new("dot", isa), |b| {
                b.iter(|| set.dense_dot(&x, &y))
            });
            g.throughput(Throughput::Bytes(bytes));
            g.bench_function(BenchmarkId::new("norm2", isa), |b| b.iter(|| set.norm2(&x)));
            g.bench_function(BenchmarkId::new("sum", isa), |b| b.iter(|| set.sum(&x)));
            g.throughput(Throughput::Bytes(2 * bytes));
            g.bench_function(BenchmarkId::new("scale", isa), |b| {
                b.iter(|| set.scale(1.0, &mut y))
            });
            g.throughput(Throughput::Bytes(3 * bytes));
            g.bench_function(BenchmarkId::new("axpby", isa), |b| {
                b.iter(|| set.axpby(1e-3, &x, 0.999, &mut y))
            });
            g.throughput(Throughput::Bytes(4 * bytes));
            g.bench_function(BenchmarkId::new("axpy_dot", isa), |b| {
                b.iter(|| set.axpy_dot(1e-3, &x, &mut y, &z))
            });
            g.bench_function(BenchmarkId::new("rescale_average", isa), |b| {
                b.iter(|| set.rescale_average(0.5, 2.0, &vu, 0.1, Some(&x), &mut out))
            });
        }
        g.finish();
    }
}

/// One value's function.
type ScalarFn = fn(f64) -> f64;

/// `map` of each elementwise function on every path, in elements per second, against the C
/// library's `exp`, `log1p` and `ln` called for each element (what the losses called before).
fn elementwise_functions(c: &mut Criterion) {
    let n = 1usize << 14;
    // Margins from −20 to 20, the log loss's working range; the entropy's domain is [0, 1].
    let margins: Vec<f64> = (0..n).map(|i| (i as f64 / n as f64 - 0.5) * 40.0).collect();
    let shares: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
    let mut y = margins.clone();
    let libm: [(Elementwise, ScalarFn, &[f64]); 4] = [
        (Elementwise::Exp, f64::exp, &margins),
        (
            Elementwise::Softplus,
            |t| t.max(0.0) + (-t.abs()).exp().ln_1p(),
            &margins,
        ),
        (
            Elementwise::Logistic,
            |s| {
                let e = (-s.abs()).exp();
                if s >= 0.0 {
                    1.0 / (1.0 + e)
                } else {
                    e / (1.0 + e)
                }
            },
            &margins,
        ),
        (
            Elementwise::Entropy,
            |a| (if a > 0.0 { a * a.ln() } else { 0.0 }) + (1.0 - a) * (-a).ln_1p(),
            &shares,
        ),
    ];
    for (f, scalar_libm, x) in libm {
        let mut g = c.benchmark_group(format!("elementwise/{f:?}/2^14"));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("libm", |b| {
            b.iter(|| {
                for (o, &v) in y.iter_mut().zip(x) {
                    *o = scalar_libm(black_box(v));
                }
            })
        });
        for set in KernelSet::available() {
            g.bench_function(set.isa().name(), |b| {
                b.iter(|| {
                    y.copy_from_slice(x);
                    set.map(f, &mut y)
                })
            });
        }
        g.finish();
    }
    // The log loss's value and derivative together: one exponential each, against the two
    // maps it replaces.
    let mut g = c.benchmark_group("elementwise/SoftplusAndLogistic/2^14");
    g.throughput(Throughput::Elements(n as u64));
    let mut sigma = vec![0.0; n];
    for set in KernelSet::available() {
        g.bench_function(BenchmarkId::new("fused", set.isa().name()), |b| {
            b.iter(|| {
                y.copy_from_slice(&margins);
                set.softplus_and_logistic(&mut y, &mut sigma)
            })
        });
        g.bench_function(BenchmarkId::new("two maps", set.isa().name()), |b| {
            b.iter(|| {
                y.copy_from_slice(&margins);
                sigma.copy_from_slice(&margins);
                set.map(Elementwise::Softplus, &mut y);
                set.map(Elementwise::Logistic, &mut sigma)
            })
        });
    }
    g.finish();
    black_box((&y, &sigma));
}

/// One pass of K ASGD classes over the rows (block kernels, a feature's 2K sums side by side)
/// against K passes (each class's own `[v, u]` pairs), on every path, for 10 and 30 classes.
fn block_kernels(c: &mut Criterion) {
    for log_n in [12u32, 16] {
        let n = 1usize << log_n;
        for classes in [10, 30] {
            let width = 2 * classes;
            let mut blocks = HugeArray::<f64>::zeroed(n * width);
            let mut own: Vec<HugeArray<[f64; 2]>> =
                (0..classes).map(|_| HugeArray::zeroed(n)).collect();
            for (j, x) in blocks.iter_mut().enumerate() {
                *x = (j % 7) as f64 * 0.1;
            }
            let coefficients: Vec<f64> = (0..width).map(|c| 1e-9 * (c % 3) as f64).collect();
            for pattern in [Pattern::Random, Pattern::Zipf] {
                let rows = Rows::new(pattern, n, u64::from(log_n));
                let name = format!("block/{}/2^{log_n}/{classes}_classes", pattern.name());
                let mut g = c.benchmark_group(name);
                g.throughput(Throughput::Elements((rows.len() * classes) as u64));
                for set in KernelSet::available() {
                    let isa = set.isa().name();
                    g.bench_function(BenchmarkId::new("one_pass", isa), |b| {
                        let mut dots = vec![0.0; classes];
                        b.iter(|| {
                            for (i, v) in rows.rows() {
                                set.block_dot(&blocks, width, i, v, &mut dots);
                                set.block_axpy(&coefficients, i, v, &mut blocks);
                            }
                            dots[0]
                        })
                    });
                    g.bench_function(BenchmarkId::new("separate_passes", isa), |b| {
                        b.iter(|| {
                            let mut total = 0.0;
                            for vu in own.iter_mut() {
                                for (i, v) in rows.rows() {
                                    total += set.dot_first(vu, i, v);
                                    set.axpy2(1e-9, -1e-9, i, v, vu);
                                }
                            }
                            total
                        })
                    });
                }
                g.finish();
            }
        }
    }
}

/// The row-block kernels against one row kernel call per row, over the same rows of 4 to 128
/// non-zeros, on every path: what a call per row costs (weights in L1 at 2^10, where the calls
/// weigh most, and at 2^18).
fn row_block_kernels(c: &mut Criterion) {
    for log_n in [10u32, 18] {
        let n = 1usize << log_n;
        let mut w = HugeArray::<f64>::zeroed(n);
        for (j, x) in w.iter_mut().enumerate() {
            *x = (j % 7) as f64 * 0.1;
        }
        for row_nnz in [4, 13, 32, 128] {
            let rows = Rows::of_length(row_nnz, Pattern::Random, n, u64::from(log_n));
            let offsets = rows.offsets();
            let block = RowBlock::new(&offsets, rows.idx.bounded(), Values::F32(&rows.val));
            let coefficients: Vec<f64> = (0..block.len()).map(|r| 1e-9 * (r % 3) as f64).collect();
            let mut out = vec![0.0; block.len()];
            let mut g = c.benchmark_group(format!("rows/random/2^{log_n}/{row_nnz}_per_row"));
            g.throughput(Throughput::Elements(rows.len() as u64));
            for set in KernelSet::available() {
                let isa = set.isa().name();
                g.bench_function(BenchmarkId::new("dot_per_row", isa), |b| {
                    b.iter(|| {
                        for ((i, v), o) in rows.rows().zip(out.iter_mut()) {
                            *o = set.dot(&w, i, v);
                        }
                        out[0]
                    })
                });
                g.bench_function(BenchmarkId::new("dot_rows", isa), |b| {
                    b.iter(|| {
                        set.dot_rows(&w, block, &mut out);
                        out[0]
                    })
                });
                g.bench_function(BenchmarkId::new("axpy_per_row", isa), |b| {
                    b.iter(|| {
                        for ((i, v), &a) in rows.rows().zip(&coefficients) {
                            if a != 0.0 {
                                set.axpy(a, i, v, &mut w);
                            }
                        }
                    })
                });
                g.bench_function(BenchmarkId::new("axpy_rows", isa), |b| {
                    b.iter(|| set.axpy_rows(&coefficients, block, &mut w))
                });
            }
            g.finish();
        }
        for row_nnz in [13, 76] {
            let rows = VariedRows::new(row_nnz, n, u64::from(log_n));
            let block = RowBlock::new(&rows.offsets, rows.idx.bounded(), Values::F32(&rows.val));
            // A third of the rows skipped (hinge-like losses), or none (log loss).
            let coefficients: Vec<f64> = (0..block.len()).map(|r| 1e-9 * (r % 3) as f64).collect();
            let no_zeros: Vec<f64> = (0..block.len())
                .map(|r| 1e-9 * (r % 3 + 1) as f64)
                .collect();
            let mut out = vec![0.0; block.len()];
            let mut g = c.benchmark_group(format!("rows/random/2^{log_n}/{row_nnz}_varied"));
            g.throughput(Throughput::Elements(rows.val.len() as u64));
            for set in KernelSet::available() {
                let isa = set.isa().name();
                g.bench_function(BenchmarkId::new("dot_rows", isa), |b| {
                    b.iter(|| {
                        set.dot_rows(&w, block, &mut out);
                        out[0]
                    })
                });
                g.bench_function(BenchmarkId::new("axpy_rows", isa), |b| {
                    b.iter(|| set.axpy_rows(&coefficients, block, &mut w))
                });
                g.bench_function(BenchmarkId::new("axpy_rows_no_zeros", isa), |b| {
                    b.iter(|| set.axpy_rows(&no_zeros, block, &mut w))
                });
            }
            g.finish();
        }
    }
}

/// Rows of random lengths from half to one and a half times `row_nnz` (distinct increasing
/// random indices below n, VARIED_NNZ non-zeros in all), as real rows vary: a kernel whose
/// work per row depends on the length's remainder (a tail loop) pays mispredicted branches
/// here that rows of one length never show. More rows than ITER_NNZ makes, so that the branch
/// predictor cannot learn the sequence of lengths from one iteration to the next.
struct VariedRows {
    offsets: Vec<u64>,
    idx: IndexVec,
    val: Vec<f32>,
}

impl VariedRows {
    fn new(row_nnz: usize, n: usize, seed: u64) -> VariedRows {
        let mut rng = Rng(seed);
        let (mut idx, mut offsets) = (Vec::with_capacity(VARIED_NNZ), vec![0u64]);
        while idx.len() < VARIED_NNZ {
            let len = (row_nnz / 2 + rng.below(row_nnz + 1)).min(n);
            let mut row = Vec::with_capacity(len);
            while row.len() < len {
                row.push(rng.below(n) as u32);
                row.sort_unstable();
                row.dedup();
            }
            idx.extend(row);
            offsets.push(idx.len() as u64);
        }
        let val = idx
            .iter()
            .map(|_| (rng.unit() * 2.0 - 1.0) as f32)
            .collect();
        VariedRows {
            offsets,
            idx: IndexVec::new(idx),
            val,
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600))
        .sample_size(10);
    targets = sparse_kernels, dense_kernels, elementwise_functions, block_kernels, row_block_kernels
}
criterion_main!(benches);
