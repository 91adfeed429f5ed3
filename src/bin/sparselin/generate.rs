//! `sparselin gen`: a reproducible synthetic corpus.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use sparselin::data::synth::{CorpusSpec, PRESETS, Task, generate_with_progress};

use crate::progress::{Unit, bar};

/// Generate a synthetic corpus (Zipf feature frequencies, L2-normalized tf-idf-like values,
/// labels from a planted linear model with noise) as `OUT/train` and `OUT/test` dataset
/// directories, and optionally as LIBSVM text. Same options and seed, same corpus.
#[derive(clap::Args)]
pub struct Args {
    /// Output directory (it must not exist): `train/` and `test/` are created inside.
    out: PathBuf,
    /// Preset: small, small-regression, rcv1-like (781,265 + 23,149 rows, 47,236 features,
    /// ~76 nnz/row), large (100M rows, written shard by shard).
    #[arg(long, default_value = "small")]
    preset: String,
    /// Also write LIBSVM text to PREFIX.train.svm and PREFIX.test.svm (PREFIX may be inside
    /// the output directory: `gen corpus --text corpus/rcv1`).
    #[arg(long, value_name = "PREFIX")]
    text: Option<PathBuf>,
    /// Random seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the number of training rows.
    #[arg(long)]
    train_rows: Option<u64>,
    /// Override the number of test rows.
    #[arg(long)]
    test_rows: Option<u64>,
    /// Override the number of features (columns).
    #[arg(long)]
    features: Option<usize>,
    /// Override the mean number of non-zeros per row.
    #[arg(long)]
    nnz: Option<f64>,
    /// Override the Zipf exponent of the feature frequencies (default 1; larger puts a few
    /// features in nearly every row: the contention case of Hogwild, PERF.md `## Hogwild`).
    #[arg(long, value_name = "EXPONENT")]
    zipf: Option<f64>,
    /// Override the task.
    #[arg(long, value_enum)]
    task: Option<TaskArg>,
    /// Classification into K ≥ 3 classes labelled 1..K, each row's the class of highest
    /// margin among K planted models (--noise replaces a label by another class): data for
    /// one-vs-rest training. Without it, classification labels are ±1.
    #[arg(
        long,
        value_name = "K",
        value_parser = clap::value_parser!(u32).range(3..=1000),
        conflicts_with = "task"
    )]
    classes: Option<u32>,
    /// Override the label noise (flip probability, or regression noise std-dev).
    #[arg(long)]
    noise: Option<f64>,
    /// Override the rows per shard.
    #[arg(long)]
    rows_per_shard: Option<usize>,
    /// No progress bar and no summary line (the bar is also hidden when standard error is
    /// not a terminal).
    #[arg(long, short)]
    quiet: bool,
}

/// Task on the command line.
#[derive(Clone, Copy, clap::ValueEnum)]
enum TaskArg {
    Classification,
    Regression,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut spec = CorpusSpec::preset(&args.preset).with_context(|| {
        format!(
            "unknown preset '{}' (one of: {})",
            args.preset,
            PRESETS.join(", ")
        )
    })?;
    spec.seed = args.seed.unwrap_or(spec.seed);
    spec.train_rows = args.train_rows.unwrap_or(spec.train_rows);
    spec.test_rows = args.test_rows.unwrap_or(spec.test_rows);
    spec.n_features = args.features.unwrap_or(spec.n_features);
    spec.mean_nnz = args.nnz.unwrap_or(spec.mean_nnz);
    spec.label_noise = args.noise.unwrap_or(spec.label_noise);
    spec.zipf_exponent = args.zipf.unwrap_or(spec.zipf_exponent);
    spec.rows_per_shard = args.rows_per_shard.unwrap_or(spec.rows_per_shard);
    if let Some(task) = args.task {
        spec.task = match task {
            TaskArg::Classification => Task::Classification,
            TaskArg::Regression => Task::Regression,
        };
    }
    if let Some(classes) = args.classes {
        anyhow::ensure!(
            spec.task == Task::Classification,
            "--classes is a classification task, and preset '{}' is a regression",
            args.preset
        );
        spec.task = Task::Classes(classes);
    }
    anyhow::ensure!(
        spec.n_features >= 1 && spec.n_features <= u32::MAX as usize,
        "--features must be between 1 and 2^32 − 1"
    );
    anyhow::ensure!(spec.mean_nnz >= 1.0, "--nnz must be at least 1");
    anyhow::ensure!(
        (0.0..=8.0).contains(&spec.zipf_exponent),
        "--zipf must be between 0 (uniform) and 8"
    );
    // NaN fails both checks: it would make every label NaN.
    match spec.task {
        Task::Classification | Task::Classes(_) => anyhow::ensure!(
            (0.0..=1.0).contains(&spec.label_noise),
            "--noise is a label flip probability for classification: it must be between 0 and 1, \
             not {}",
            spec.label_noise
        ),
        Task::Regression => anyhow::ensure!(
            spec.label_noise >= 0.0 && spec.label_noise.is_finite(),
            "--noise is the noise standard deviation for regression: it must be finite and at \
             least 0, not {}",
            spec.label_noise
        ),
    }
    anyhow::ensure!(
        spec.rows_per_shard >= 1,
        "--rows-per-shard must be at least 1"
    );
    // `-` means standard input or output elsewhere; a corpus is a directory.
    anyhow::ensure!(
        args.out != Path::new("-"),
        "-: the output is a corpus directory, which standard output cannot hold: name a \
         directory (./- for one literally named -)"
    );
    anyhow::ensure!(
        args.text.as_deref() != Some(Path::new("-")),
        "--text -: the text goes to two files, PREFIX.train.svm and PREFIX.test.svm, which \
         standard output cannot hold: name a prefix (./- for files literally named -.*.svm)"
    );
    anyhow::ensure!(
        !args.out.exists(),
        "{}: already exists (remove it or choose another output)",
        args.out.display()
    );
    // Both splits are written into a sibling staging directory renamed into place at the
    // end, so that a failure (an unwritable --text path, say) leaves no output directory.
    let staging = staging_dir(&args.out)?;
    // Text inside the output directory is written into the staging directory with the rest
    // (a PREFIX equal to OUT names files beside it: OUT.train.svm).
    let text = args
        .text
        .as_ref()
        .map(|prefix| match prefix.strip_prefix(&args.out) {
            Ok(inside) if !inside.as_os_str().is_empty() => staging.join(inside),
            _ => prefix.clone(),
        });
    if let Some(parent) = text
        .iter()
        .filter_map(|t| t.parent())
        .find(|p| p.starts_with(&staging))
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        let _ = std::fs::remove_dir_all(&staging);
        sparselin::output::settled(&staging);
        return Err(e).with_context(|| parent.display().to_string());
    }
    let start = Instant::now();
    let progress = bar(
        Some(spec.train_rows + spec.test_rows),
        Unit::Rows,
        args.quiet,
    );
    let result = generate_with_progress(&spec, &staging, text.as_deref(), &mut |rows| {
        progress.set_position(rows);
    })
    .map_err(anyhow::Error::from)
    .and_then(|()| {
        std::fs::rename(&staging, &args.out).with_context(|| args.out.display().to_string())
    });
    progress.finish_and_clear();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    sparselin::output::settled(&staging);
    result?;
    if args.quiet {
        return Ok(());
    }
    errln!(
        "{}: {} train + {} test rows, {} features{}, in {:.1} s",
        args.out.display(),
        spec.train_rows,
        spec.test_rows,
        spec.n_features,
        match spec.task {
            Task::Classes(classes) => format!(", {classes} classes"),
            _ => String::new(),
        },
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A fresh, empty directory beside `out` (its parent created if missing) for the corpus to
/// be written into before it is renamed to `out`.
fn staging_dir(out: &Path) -> anyhow::Result<PathBuf> {
    out.file_name()
        .with_context(|| format!("{}: not a directory name", out.display()))?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| parent.display().to_string())?;
    }
    let (staging, ()) = sparselin::output::create_beside(out, |path| std::fs::create_dir(path))
        .with_context(|| format!("{}: creating its staging directory", out.display()))?;
    Ok(staging)
}
