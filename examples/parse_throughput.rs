//! Throughput of the LIBSVM chunk parser alone (PERF.md, "Data"): the file is read into
//! memory first, then parsed on this one thread in 16 MB pieces, values as f32, buffers
//! reused, as `sparselin convert` parses. Time is this thread's CPU time (Linux
//! `/proc/thread-self/schedstat`), so other processes' load does not inflate it; prints the
//! MB of text per CPU-second of each pass and their median.
//!
//!     cargo run --release --example parse_throughput -- FILE [PASSES]

use std::time::Instant;

use sparselin::data::chunk::{ChunkRows, parse_chunk_into, split_at_newlines};

/// CPU nanoseconds this thread has run (first field of schedstat), or wall time elsewhere.
fn cpu_ns(wall: &Instant) -> u128 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| wall.elapsed().as_nanos())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(args.len() >= 2, "usage: parse_throughput FILE [PASSES]");
    let passes: usize = args.get(2).map_or(Ok(5), |p| p.parse())?;
    let text = std::fs::read(&args[1])?;
    let pieces = split_at_newlines(&text, text.len().div_ceil(16 << 20));
    let mut rows = ChunkRows::<f32>::default();
    let wall = Instant::now();
    let mut rates = Vec::new();
    for _ in 0..passes {
        let (start, mut n_rows, mut nnz) = (cpu_ns(&wall), 0, 0);
        for piece in &pieces {
            parse_chunk_into(piece, false, &mut rows)
                .map_err(|e| anyhow::anyhow!("line {}: {}", e.line, e.message))?;
            n_rows += rows.labels.len();
            nnz += rows.indices.len();
        }
        let seconds = (cpu_ns(&wall) - start) as f64 * 1e-9;
        let rate = text.len() as f64 / 1e6 / seconds;
        println!(
            "{} MB, {n_rows} rows, {nnz} nnz: {seconds:.3} CPU-s, {rate:.0} MB/s",
            text.len() / 1_000_000
        );
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    println!("median {:.0} MB/s per CPU-second", rates[rates.len() / 2]);
    Ok(())
}
