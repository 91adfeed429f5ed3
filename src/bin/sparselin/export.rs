//! `sparselin export`: dataset → LIBSVM text.

use std::path::PathBuf;

/// Write a dataset back as LIBSVM text (1-based indices in original feature ids; values
/// printed so that converting the text again gives the same shards). Every shard is verified
/// as `verify` does (checksums, row invariants) before its rows are written; a corrupted one
/// is an error.
#[derive(clap::Args)]
pub struct Args {
    /// Dataset directory.
    dir: PathBuf,
    /// Output text file (written under a temporary name, renamed at the end); `-` for
    /// standard output.
    output: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let bytes = sparselin::data::export::export(&args.dir, &args.output)?;
    if args.output.as_os_str() != "-" {
        errln!("{}: {bytes} bytes", args.output.display());
    }
    Ok(())
}
