//! The `sparselin` command line: argument parsing, progress and error reporting only.
//! Each subcommand lives in its own module; all the work is done by the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Linear learning on large sparse data.
#[derive(Parser)]
#[command(name = "sparselin", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match cli.command {};
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("sparselin: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
