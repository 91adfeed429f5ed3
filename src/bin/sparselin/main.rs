//! The `sparselin` command line: argument parsing, progress and error reporting only.
//! Each subcommand lives in its own module; all the work is done by the library.

/// `println!` that returns an error (a full disk, say) instead of panicking; a closed pipe
/// ends the program quietly (see [`main`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        anyhow::Context::context(
            writeln!(std::io::stdout().lock(), $($arg)*),
            "writing to standard output",
        )
    }};
}

/// `eprintln!` that never panics: when standard error is closed or full there is nowhere
/// left to report that, so the failure is ignored and the exit status alone tells the
/// outcome.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod applicable;
mod convert;
mod cross_validation;
mod demo;
mod eval;
mod export;
mod generate;
mod info;
mod input;
mod kernels;
mod number;
mod plot;
mod predict;
mod progress;
mod scaling;
mod show;
mod trace;
mod train;
#[cfg(feature = "mpi")]
mod train_mpi;
mod train_one_vs_rest;
mod verify;

use std::io;
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Subcommand};
use sparselin::data::DataError;

/// Linear learning on large sparse data.
#[derive(clap::Parser)]
#[command(name = "sparselin", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the main job end to end on a generated corpus: gen, convert, verify, info, train, eval.
    Demo(demo::Args),
    /// Convert LIBSVM or Vowpal Wabbit text into a dataset directory of binary shards.
    Convert(convert::Args),
    /// Summarize a dataset: rows, columns, nnz per row, labels, shards.
    Info(info::Args),
    /// Verify every checksum and row invariant of a dataset.
    Verify(verify::Args),
    /// Write a dataset back as LIBSVM text.
    Export(export::Args),
    /// Generate a reproducible synthetic corpus.
    Gen(generate::Args),
    /// Train a linear model.
    Train(Box<train::Args>),
    /// Print a model's predictions (labels or values, or raw scores) for every row of a file.
    Predict(predict::Args),
    /// Evaluate a model on labeled data: objective, error rate, AUC, precision/recall/F1, log
    /// loss, RMSE, R², coverage, Poisson deviance.
    Eval(eval::Args),
    /// Show what a model holds: its settings, size, norms and largest weights (named with
    /// --names).
    Show(show::Args),
    /// Plot training traces of several runs against time on shared log axes.
    Plot(plot::Args),
    /// Show the SIMD kernel path in use and the ones this CPU supports.
    Kernels(kernels::Args),
}

fn main() -> ExitCode {
    let command = command(&Cli::command().get_matches()).unwrap_or_else(|error| error.exit());
    // Interrupted (Ctrl-C, `kill`, a closed terminal): leave no temporary output behind, and
    // exit as a shell expects of a process ended by SIGINT.
    let interrupted = ctrlc::set_handler(|| {
        sparselin::output::remove_temporaries();
        std::process::exit(130);
    });
    if let Err(e) = interrupted {
        errln!(
            "sparselin: warning: no signal handler ({e}): an interrupted run may leave a temporary output"
        );
    }
    let kernels = sparselin_kernels::dispatch::try_selected()
        .map(drop)
        .context("choosing the kernel path");
    match kernels.and_then(|()| execute(command)) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`sparselin info d | head -1`): nothing to report.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            errln!("sparselin: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The subcommand that parsed command-line `matches` describe. `train` refuses the flags its
/// algorithm does not use, so it is also told which flags were given.
pub(crate) fn command(matches: &clap::ArgMatches) -> Result<Command, clap::Error> {
    let command = Cli::from_arg_matches(matches)?.command;
    Ok(match (command, matches.subcommand()) {
        (Command::Train(args), Some((_, given))) => Command::Train(Box::new(train::Args {
            given: applicable::given(given),
            ..*args
        })),
        (command, _) => command,
    })
}

/// Whether the error, or one of its causes, is writing into a pipe whose reader has gone
/// (a data error carries its I/O error as part of its message, not as a cause).
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    let broken = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().is_some_and(broken)
            || matches!(
                cause.downcast_ref::<DataError>(),
                Some(DataError::Io { reason, .. }) if broken(reason)
            )
    })
}

/// Run one subcommand.
pub(crate) fn execute(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Demo(args) => demo::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Info(args) => info::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Export(args) => export::run(args),
        Command::Gen(args) => generate::run(args),
        Command::Train(args) => train::run(*args),
        Command::Predict(args) => predict::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Kernels(args) => kernels::run(args),
        Command::Show(args) => show::run(args),
    }
}
