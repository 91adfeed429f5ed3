//! Throughput of one batch evaluation (J and ∇J: the product Xw, then Xᵀℓ'(p, y)) at 1 and 2
//! threads, against the kernel limit (a bare serial loop of `sparse::dot` over every row).
//!
//! `cargo run --release --example batch_eval -- DATA [REPEATS]` (DATA: a dataset directory or a
//! LIBSVM file). Prints medians over REPEATS (default 5) and non-zeros per second.

use std::time::Instant;

use sparselin::batch::Objective;
use sparselin::data::libsvm::ParseOptions;
use sparselin::data::{Examples, open_examples};
use sparselin::kernels::sparse;
use sparselin::loss::Loss;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or_else(|| anyhow::anyhow!("usage: batch_eval DATA [REPEATS]"))?;
    let repeats: usize = args.get(2).map_or(Ok(5), |r| r.parse())?;
    let data = open_examples(path.as_ref(), ParseOptions::default())?;
    let objective = Objective::new(&data, Loss::Hinge, 1e-4, true);
    let w: Vec<f64> = (0..objective.dim())
        .map(|j| ((j % 97) as f64 - 48.0) * 1e-3)
        .collect();
    let nnz = data.nnz() as f64;
    let mut seconds_at = Vec::new();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let times: Vec<f64> = (0..repeats)
            .map(|_| {
                pool.install(|| {
                    let started = Instant::now();
                    let p = objective.product(&w);
                    let value = objective.value(&w, &p);
                    let gradient = objective.gradient(&w, &p);
                    std::hint::black_box((value, gradient));
                    started.elapsed().as_secs_f64()
                })
            })
            .collect();
        let t = median(times);
        println!(
            "threads {threads}: evaluation {t:.4} s median of {repeats}, {:.3e} nnz/s (2 passes)",
            2.0 * nnz / t
        );
        seconds_at.push(t);
    }
    println!(
        "speed-up 1 → 2 threads: {:.2}x",
        seconds_at[0] / seconds_at[1]
    );
    let n = data.n_features();
    let times: Vec<f64> = (0..repeats)
        .map(|_| {
            let started = Instant::now();
            let sum: f64 = (0..data.n_rows())
                .map(|i| {
                    let row = data.row(i);
                    sparse::dot(&w[..n], row.indices, row.values)
                })
                .sum();
            std::hint::black_box(sum);
            started.elapsed().as_secs_f64()
        })
        .collect();
    let t = median(times);
    println!(
        "kernel limit (serial sparse::dot over all rows): {t:.4} s, {:.3e} nnz/s",
        nnz / t
    );
    Ok(())
}
