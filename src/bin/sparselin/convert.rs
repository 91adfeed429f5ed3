//! `sparselin convert`: LIBSVM or Vowpal Wabbit text → dataset directory of binary shards.

use std::path::PathBuf;
use std::time::Instant;

use sparselin::data::convert::{ConvertOptions, Storage, convert_with_progress};
use sparselin::data::libsvm::ValueType;
use sparselin::data::stream::{TextFormat, plain_text_len};

use crate::input::{TextArgs, meta_features, naming_meta};
use crate::progress::{Unit, bar};

/// Stream a LIBSVM/SVMlight or Vowpal Wabbit text file into a dataset directory (shards +
/// manifest.json).
#[derive(clap::Args)]
pub struct Args {
    /// Input text, optionally gzip-compressed; `-` reads standard input.
    input: PathBuf,
    /// Output dataset directory; must not exist (written under a temporary name, renamed at
    /// the end, so an error leaves nothing behind).
    output: PathBuf,
    #[command(flatten)]
    text: TextArgs,
    /// Store a sample weight for each row in the dataset: FILE (gzip ok) holds one
    /// non-negative number per line, the weight of the row of the same line (as `train
    /// --sample-weights` reads). Training on the dataset then weighs its rows by them.
    #[arg(long, value_name = "FILE")]
    sample_weights: Option<PathBuf>,
    /// Storage precision of the values.
    #[arg(long, value_enum, default_value_t = Precision::F32)]
    values: Precision,
    /// Binary storage (no value section, every entry reads 1.0): `auto` when every value is
    /// 1, `yes` to force it (values are dropped), `no` to always keep values.
    #[arg(long, value_enum, default_value_t = Binary::Auto)]
    binary: Binary,
    /// Rows per shard (shards are the unit of parallel and out-of-core work); at least 1.
    #[arg(long, default_value_t = 1 << 17)]
    rows_per_shard: usize,
    /// Declared column count (default: the `features` entry of a meta.json beside a LIBSVM
    /// file, else the largest index seen); an index beyond it is an error.
    #[arg(long)]
    features: Option<usize>,
    /// Renumber features by descending frequency (hot weights share cache lines); the
    /// permutation is kept in the manifest and models are written in original ids.
    #[arg(long)]
    renumber: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
    /// No progress bar (it is also hidden when standard error is not a terminal).
    #[arg(long, short)]
    quiet: bool,
}

/// Value precision on the command line.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Precision {
    F32,
    F64,
}

/// Binary storage choice on the command line.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Binary {
    Auto,
    Yes,
    No,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.rows_per_shard >= 1,
        "--rows-per-shard must be at least 1"
    );
    let format = args.text.format(None)?;
    let meta = match (args.features, &format) {
        (None, TextFormat::Libsvm { .. }) if args.input.is_file() => meta_features(&args.input),
        _ => None,
    };
    let options = ConvertOptions {
        format,
        sample_weights: args.sample_weights,
        value_type: match args.values {
            Precision::F32 => ValueType::F32,
            Precision::F64 => ValueType::F64,
        },
        storage: match args.binary {
            Binary::Auto => Storage::Auto,
            Binary::Yes => Storage::Binary,
            Binary::No => Storage::Values,
        },
        rows_per_shard: args.rows_per_shard,
        n_features: args.features.or(meta.as_ref().map(|m| m.1)),
        renumber_by_frequency: args.renumber,
        ..ConvertOptions::default()
    };
    let start = Instant::now();
    let progress = bar(plain_text_len(&args.input), Unit::Bytes, args.quiet);
    let summary = convert_with_progress(&args.input, &args.output, &options, &mut |bytes| {
        progress.set_position(bytes);
    });
    progress.finish_and_clear();
    let summary = summary.map_err(|error| naming_meta(error, meta))?;
    let seconds = start.elapsed().as_secs_f64();
    let mb_per_s = summary.text_bytes as f64 / 1e6 / seconds.max(1e-9);
    if args.json {
        let json = serde_json::json!({
            "output": args.output.display().to_string(),
            "rows": summary.rows,
            "columns": summary.columns,
            "nnz": summary.nnz,
            "shards": summary.shards,
            "value_type": summary.value_type.to_string(),
            "sample_weights": summary.sample_weights,
            "text_bytes": summary.text_bytes,
            "seconds": seconds,
            "mb_per_s": mb_per_s,
        });
        outln!("{json}")?;
    } else {
        outln!(
            "{}: {} rows, {} columns, {} nnz, {} values, {} shards{} ({:.1} MB of text in {:.2} s, {:.0} MB/s)",
            args.output.display(),
            summary.rows,
            summary.columns,
            summary.nnz,
            summary.value_type,
            summary.shards,
            if summary.sample_weights {
                ", sample weights"
            } else {
                ""
            },
            summary.text_bytes as f64 / 1e6,
            seconds,
            mb_per_s
        )?;
    }
    Ok(())
}
