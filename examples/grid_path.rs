//! Iterations and seconds of each batch solve along a path of C on one dataset, each from
//! zero and each from the solution at the C before (dcd from its dual variables, the primal
//! solvers from the weights): what warm starts along a `--cost-grid` save, without the folds.
//!
//! `cargo run --release --example grid_path -- DATA ALGO LOSS [C1,C2,...]` (DATA: a dataset
//! directory or a LIBSVM file; no bias, as liblinear's default; C defaults to liblinear's grid
//! 2^-12 … 2^10 on reuters_grain). Prints one line per C and the totals.

use std::time::Instant;

use sparselin::api::{Learner, Loss, Trainer, Training, open};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: grid_path DATA ALGO LOSS [C1,C2,...]";
    let (path, algo, loss) = match &args[1..] {
        [path, algo, loss, ..] => (path, algo, loss),
        _ => anyhow::bail!(usage),
    };
    let costs: Vec<f64> = match args.get(4) {
        Some(list) => list.split(',').map(str::parse).collect::<Result<_, _>>()?,
        None => (-12..=10).map(|e| 2f64.powi(e)).collect(),
    };
    let data = open(path)?;
    let learner: Learner = algo.parse().map_err(anyhow::Error::msg)?;
    let trainer = Trainer::new(learner)
        .loss(loss.parse::<Loss>().map_err(anyhow::Error::msg)?)
        .fit_bias(false);
    let mut totals = [(0, 0.0); 2];
    let mut previous: Option<Training> = None;
    for &cost in &costs {
        let at_cost = trainer.clone().cost(cost);
        let cold = solve(&at_cost, &data)?;
        let warm_trainer = match previous.take() {
            Some(Training {
                dual: Some(dual), ..
            }) => at_cost.initial_dual(dual),
            Some(training) => at_cost.initial_model(training.model),
            None => at_cost,
        };
        let warm = solve(&warm_trainer, &data)?;
        let iterations =
            |t: &(Training, f64)| t.0.model.info.details["iterations"].as_u64().unwrap_or(0);
        println!(
            "C = {cost:<12e} from zero {:>5} iterations {:>7.3} s   warm {:>5} iterations {:>7.3} s",
            iterations(&cold),
            cold.1,
            iterations(&warm),
            warm.1
        );
        for (total, run) in totals.iter_mut().zip([&cold, &warm]) {
            total.0 += iterations(run);
            total.1 += run.1;
        }
        previous = Some(warm.0);
    }
    println!(
        "total: from zero {} iterations {:.3} s, warm {} iterations {:.3} s",
        totals[0].0, totals[0].1, totals[1].0, totals[1].1
    );
    Ok(())
}

/// A run of `trainer` on `data` and its wall seconds.
fn solve(trainer: &Trainer, data: &sparselin::api::ExampleSet) -> anyhow::Result<(Training, f64)> {
    let started = Instant::now();
    let training = trainer.train_monitored(data, &mut ())?;
    Ok((training, started.elapsed().as_secs_f64()))
}
