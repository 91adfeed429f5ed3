//! `sparselin demo`: the main job end to end on an embedded default, as a script of the other
//! subcommands (each printed as the command line a user would type, then run in-process).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::CommandFactory;
use sparselin::data::synth::CorpusSpec;

use crate::{Cli, command, execute};

/// Generate an RCV1-shaped corpus as LIBSVM text, convert it to binary shards, verify and
/// summarize it, train averaged SGD (hinge loss) with held-out evaluation, and evaluate the
/// saved model.
#[derive(clap::Args)]
pub struct Args {
    /// Working directory (created; must not exist). Default: a temporary directory that is
    /// removed at the end.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Training rows of the generated corpus (the full rcv1-like preset has 781,265).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    train_rows: u64,
    /// Passes of averaged SGD over the training set.
    #[arg(long, default_value_t = 3)]
    epochs: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (dir, temporary) = match &args.dir {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("sparselin-demo-{}", std::process::id())),
            true,
        ),
    };
    anyhow::ensure!(
        !dir.exists(),
        "{} already exists; choose another --dir",
        dir.display()
    );
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = script(&args, &dir);
    if temporary {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    result
}

/// The preset the demo generates.
const PRESET: &str = "rcv1-like";

fn script(args: &Args, dir: &Path) -> anyhow::Result<()> {
    let path = |name: &str| dir.join(name).display().to_string();
    let train_rows = args.train_rows.to_string();
    // The converted text takes its column count from the largest index it holds, which a
    // small training set may not reach: declare the corpus's, which the test set has.
    let features = CorpusSpec::preset(PRESET)
        .context("the demo's preset")?
        .n_features
        .to_string();
    let epochs = args.epochs.to_string();
    let (generated, text, train) = (path("generated"), path("rcv1"), path("train"));
    let train_text = path("rcv1.train.svm");
    let (model, test) = (path("model"), path("generated/test"));
    let steps: [Vec<&str>; 6] = [
        vec![
            "gen",
            &generated,
            "--preset",
            PRESET,
            "--train-rows",
            &train_rows,
            "--text",
            &text,
        ],
        vec!["convert", &train_text, &train, "--features", &features],
        vec!["verify", &train],
        vec!["info", &train],
        vec![
            "train", &train, "--algo", "asgd", "--loss", "hinge", "--lambda", "1e-5", "--epochs",
            &epochs, "--test", &test, "-o", &model,
        ],
        vec!["eval", &model, &test],
    ];
    let start = Instant::now();
    for step in steps {
        errln!("\n$ sparselin {}", step.join(" "));
        let matches = Cli::command()
            .try_get_matches_from(std::iter::once("sparselin").chain(step.iter().copied()))
            .context("demo script")?;
        execute(command(&matches).context("demo script")?)?;
    }
    errln!(
        "\ndemo finished in {:.1} s (working directory {})",
        start.elapsed().as_secs_f64(),
        dir.display()
    );
    Ok(())
}
