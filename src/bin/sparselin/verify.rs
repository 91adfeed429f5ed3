//! `sparselin verify`: the full integrity check of a dataset.

use std::path::PathBuf;

use sparselin::data::Dataset;

/// Recompute every section checksum and check every row invariant, then the length and
/// checksum of every per-column file (frequencies, means) and its contents against the
/// statistics recomputed from the shards; exits non-zero on the first failure, naming the file.
#[derive(clap::Args)]
pub struct Args {
    /// Dataset directory.
    dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let dataset = Dataset::open(&args.dir)?;
    dataset.verify()?;
    let m = dataset.manifest();
    let columns = if m.column_frequencies.is_some() || m.column_means.is_some() {
        ", column statistics"
    } else {
        ""
    };
    let weights = if m.sample_weights.is_some() {
        ", sample weights"
    } else {
        ""
    };
    outln!(
        "{}: ok ({} shards, {} rows, {} nnz; checksums, row invariants{columns}{weights} verified)",
        args.dir.display(),
        m.shards.len(),
        m.rows,
        m.nnz
    )?;
    Ok(())
}
