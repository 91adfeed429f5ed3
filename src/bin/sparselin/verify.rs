//! `sparselin verify`: the full integrity check of a dataset.

use std::path::PathBuf;

use sparselin::data::Dataset;

/// Recompute every section checksum and check every row invariant, then the length and
/// checksum of every per-column file (frequencies, means); exits non-zero on the first
/// failure, naming the file.
#[derive(clap::Args)]
pub struct Args {
    /// Dataset directory.
    dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let dataset = Dataset::open(&args.dir)?;
    dataset.verify()?;
    let m = dataset.manifest();
    outln!(
        "{}: ok ({} shards, {} rows, {} nnz; checksums and row invariants verified)",
        args.dir.display(),
        m.shards.len(),
        m.rows,
        m.nnz
    )?;
    Ok(())
}
