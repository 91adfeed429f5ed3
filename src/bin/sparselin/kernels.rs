//! `sparselin kernels`: which SIMD kernel path this machine runs, and which it could run.

use anyhow::Context;
use clap::Args as ClapArgs;
use sparselin::kernels::dispatch::{self, ENV_VAR, Isa};

/// Report the kernel path in use (chosen from the CPU, or forced with SPARSELIN_ISA) and every
/// path this CPU supports. Fails if SPARSELIN_ISA names an unknown or unsupported path.
#[derive(ClapArgs)]
pub struct Args {
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let chosen = dispatch::try_select().context("choosing the kernel path")?;
    let available: Vec<&str> = Isa::ALL
        .into_iter()
        .filter(|isa| isa.is_available())
        .map(Isa::name)
        .collect();
    let forced = std::env::var(ENV_VAR).ok().filter(|s| !s.trim().is_empty());
    if args.json {
        let summary = serde_json::json!({
            "isa": chosen.name(),
            "forced": forced.is_some(),
            "available": available,
        });
        outln!("{summary}")?;
    } else {
        let how = if forced.is_some() {
            "forced by"
        } else {
            "best available; set"
        };
        outln!("kernel path: {chosen} ({how} {ENV_VAR})")?;
        outln!("available:   {}", available.join(" "))?;
    }
    Ok(())
}
