//! `sparselin info`: what a dataset holds.

use std::path::PathBuf;

use sparselin::data::Dataset;
use sparselin::data::stats::summarize;

/// Rows, columns, non-zeros, non-zeros per row, label balance, sample weights and shards of a
/// dataset.
#[derive(clap::Args)]
pub struct Args {
    /// Dataset directory.
    dir: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let dataset = Dataset::open(&args.dir)?;
    let open_seconds = start.elapsed().as_secs_f64();
    let s = summarize(&dataset)?;
    if args.json {
        let mut json = serde_json::to_value(&s)?;
        json["open_seconds"] = open_seconds.into();
        json["vw_features"] = serde_json::json!(dataset.vw_features());
        outln!("{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    outln!("dataset    {}", args.dir.display())?;
    outln!("rows       {}", s.rows)?;
    outln!("columns    {}", s.columns)?;
    outln!("nnz        {}", s.nnz)?;
    outln!(
        "values     {}{}",
        s.value_type,
        if s.renumbered {
            " (features renumbered by frequency)"
        } else {
            ""
        }
    )?;
    let d = &s.nnz_per_row;
    outln!(
        "nnz/row    mean {:.2}, min {}, median {}, p90 {}, p99 {}, max {}",
        d.mean,
        d.min,
        d.p50,
        d.p90,
        d.p99,
        d.max
    )?;
    match &s.labels.counts {
        Some(counts) => {
            let parts: Vec<String> = counts
                .iter()
                .map(|(y, n)| {
                    let share = 100.0 * *n as f64 / s.rows as f64;
                    format!("{}: {n} ({share:.1}%)", short_number(*y))
                })
                .collect();
            outln!("labels     {}", parts.join(", "))?;
        }
        None => outln!(
            "labels     real, min {}, max {}, mean {}",
            short_number(s.labels.min),
            short_number(s.labels.max),
            six_digits(s.labels.mean)
        )?,
    }
    if let Some((c, densest)) = s
        .column_usage
        .as_ref()
        .and_then(|c| Some((c, c.densest.as_ref()?)))
    {
        outln!(
            "col usage  {} used; densest feature {} in {} rows; median used column in {} rows",
            c.used,
            densest.feature,
            densest.rows,
            c.median_frequency
        )?;
    }
    if let Some(w) = &s.sample_weights {
        outln!(
            "weights    min {}, max {}, mean {}, {} rows of weight 0",
            short_number(w.min),
            short_number(w.max),
            six_digits(w.mean),
            w.zero
        )?;
    }
    if let Some(rules) = dataset.vw_features() {
        outln!("vw text    {}", serde_json::to_string(rules)?)?;
    }
    outln!(
        "opened in  {:.3} ms (manifest and shard headers only)",
        open_seconds * 1e3
    )?;
    outln!("shards     {}", s.shards.len())?;
    for shard in &s.shards {
        outln!(
            "  {}  rows {}..{}  nnz {}  {} bytes",
            shard.file,
            shard.first_row,
            shard.first_row + shard.rows,
            shard.nnz,
            shard.bytes
        )?;
    }
    Ok(())
}

/// A label exactly, in the shortest text that reads back to it (1.00001 and 1.00002 stay
/// apart): plain decimals for everyday magnitudes, scientific beyond (1e300, not 301 digits).
fn short_number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
        format!("{}", if x == 0.0 { 0.0 } else { x })
    } else {
        format!("{x:e}")
    }
}

/// A computed value (a mean) to six significant digits, trailing zeros dropped.
fn six_digits(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return short_number(x);
    }
    let trim = |s: String| s.trim_end_matches('0').trim_end_matches('.').to_string();
    if (1e-4..1e15).contains(&x.abs()) {
        let decimals = (5 - x.abs().log10().floor() as i32).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    } else {
        let scientific = format!("{x:.5e}");
        let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
        format!("{}e{exponent}", trim(mantissa.to_string()))
    }
}
