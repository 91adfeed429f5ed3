//! `sparselin export`: dataset → LIBSVM text.

use std::path::PathBuf;

use sparselin::data::Dataset;

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
    /// Also write the sample weights the dataset stores (LIBSVM text has no place for them)
    /// to FILE, one per line, as `convert --sample-weights` and `train --sample-weights`
    /// read them.
    #[arg(long, value_name = "FILE")]
    sample_weights: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    use sparselin::data::export::{export, export_sample_weights};
    use sparselin::output::{would_replace, written_path};
    let dataset = Dataset::open(&args.dir)?;
    let stored = dataset.manifest().sample_weights.is_some();
    anyhow::ensure!(
        args.sample_weights.is_none() || stored,
        "{}: stores no sample weights for --sample-weights to write (every row weighs 1)",
        args.dir.display()
    );
    anyhow::ensure!(
        !(args.output.as_os_str() == "-"
            && args
                .sample_weights
                .as_ref()
                .is_some_and(|p| p.as_os_str() == "-")),
        "the rows and the sample weights cannot both go to standard output"
    );
    let outputs = [
        ("the output", Some(&args.output)),
        ("--sample-weights", args.sample_weights.as_ref()),
    ];
    for (what, path) in outputs {
        let Some(path) = path else { continue };
        anyhow::ensure!(
            !would_replace(path, &args.dir),
            "{what} {} would overwrite a file of the dataset {}: choose another output path",
            path.display(),
            args.dir.display()
        );
    }
    if let Some(weights) = &args.sample_weights {
        anyhow::ensure!(
            args.output.as_os_str() == "-" || written_path(weights) != written_path(&args.output),
            "the output and --sample-weights both name {}: each needs a path of its own",
            weights.display()
        );
    }
    let bytes = export(&args.dir, &args.output)?;
    if args.output.as_os_str() != "-" {
        errln!("{}: {bytes} bytes", args.output.display());
    }
    match &args.sample_weights {
        Some(path) => {
            let bytes = export_sample_weights(&dataset, path)?;
            if path.as_os_str() != "-" {
                errln!("{}: {bytes} bytes", path.display());
            }
        }
        None if stored => errln!(
            "sparselin: warning: {} stores sample weights, which LIBSVM text cannot hold: \
             --sample-weights FILE writes them",
            args.dir.display()
        ),
        None => {}
    }
    Ok(())
}
