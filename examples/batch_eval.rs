//! Throughput of one batch evaluation (J and ∇J: the product Xw, then Xᵀℓ'(p, y)) at 1 and 2
//! threads, against the kernel limits: a bare serial pass of each row-block kernel the
//! evaluation runs over the stored runs of rows (`Examples::for_each_block`): `sparse::dot_rows`
//! for Xw, and `sparse::axpy_rows` for Xᵀc with no coefficient 0.
//!
//! `cargo run --release --example batch_eval -- DATA [REPEATS]` (DATA: a dataset directory or a
//! LIBSVM file). Prints medians over REPEATS (default 5) and non-zeros per second, and the CPU
//! seconds the process used per evaluation (Linux: from /proc/self/stat, USER_HZ = 100): when
//! 2 threads use no more CPU than 1 but the wall time does not halve, the second worker is
//! waiting for a core, not doing extra work.

use std::time::Instant;

use sparselin::batch::Objective;
use sparselin::data::libsvm::ParseOptions;
use sparselin::data::{Examples, open_examples};
use sparselin::kernels::sparse;
use sparselin::loss::Loss;

/// User + system CPU seconds of this process so far (`None` off Linux).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start with field 3 (state);
    // utime and stime are fields 14 and 15, in ticks of USER_HZ = 100.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let user: f64 = fields.next()?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    Some((user + system) / 100.0)
}

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
        let cpu_before = cpu_seconds();
        let times = (0..repeats)
            .map(|_| {
                pool.install(|| {
                    let started = Instant::now();
                    let p = objective.product(&w);
                    let value = objective.value(&w, &p);
                    let gradient = objective.gradient(&w, &p)?;
                    std::hint::black_box((value, gradient));
                    Ok(started.elapsed().as_secs_f64())
                })
            })
            .collect::<Result<Vec<f64>, sparselin::memory::AllocError>>()?;
        let cpu = match (cpu_before, cpu_seconds()) {
            (Some(before), Some(after)) => format!("{:.4} s", (after - before) / repeats as f64),
            _ => "unknown".to_string(),
        };
        let t = median(times);
        println!(
            "threads {threads}: evaluation {t:.4} s median of {repeats}, {:.3e} nnz/s (2 passes), \
             CPU {cpu} per evaluation (mean)",
            2.0 * nnz / t
        );
        seconds_at.push(t);
    }
    println!(
        "speed-up 1 → 2 threads: {:.2}x",
        seconds_at[0] / seconds_at[1]
    );
    let n = data.n_features();
    let mut out = vec![0.0; data.n_rows()];
    let times: Vec<f64> = (0..repeats)
        .map(|_| {
            let started = Instant::now();
            data.for_each_block(0..data.n_rows(), &mut |first, block| {
                sparse::dot_rows(&w[..n], block, &mut out[first..first + block.len()]);
            });
            std::hint::black_box(&out);
            started.elapsed().as_secs_f64()
        })
        .collect();
    let t = median(times);
    println!(
        "kernel limit (serial sparse::dot_rows over all rows): {t:.4} s, {:.3e} nnz/s",
        nnz / t
    );
    // The transpose pass with a non-zero coefficient for every row, as log loss gives.
    let coefficients: Vec<f64> = (0..data.n_rows())
        .map(|i| ((i % 31) as f64 - 15.5) * 1e-2)
        .collect();
    let mut g = vec![0.0; n];
    let times: Vec<f64> = (0..repeats)
        .map(|_| {
            let started = Instant::now();
            g.fill(0.0);
            data.for_each_block(0..data.n_rows(), &mut |first, block| {
                sparse::axpy_rows(&coefficients[first..first + block.len()], block, &mut g);
            });
            std::hint::black_box(&g);
            started.elapsed().as_secs_f64()
        })
        .collect();
    let t = median(times);
    println!(
        "kernel limit (serial sparse::axpy_rows over all rows): {t:.4} s, {:.3e} nnz/s",
        nnz / t
    );
    Ok(())
}
