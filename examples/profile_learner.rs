//! One learner on one dataset and nothing else: the program the flamegraphs in
//! docs/flamegraphs/ profile (README "Profiling").
//!
//! ```sh
//! RUSTFLAGS="-C force-frame-pointers=yes" cargo build --profile profiling --example profile_learner
//! target/profiling/examples/profile_learner LEARNER DATA [STEPS_OR_ITERATIONS]
//! ```
//!
//! LEARNER is any [`sparselin::api::Learner`] name (`asgd`, `sublbfgs`, `aerr`, ...); the
//! optional count caps the work: steps for online learners, iterations for batch ones
//! (attribute-efficient learners make one pass).

use sparselin::api::{self, Examples, Learner, Trainer};
use sparselin::metrics;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [learner, data, rest @ ..] = args.as_slice() else {
        return Err("usage: profile_learner LEARNER DATA [STEPS_OR_ITERATIONS]".into());
    };
    let learner: Learner = learner.parse()?;
    let count: Option<u64> = rest.first().map(|c| c.parse()).transpose()?;
    let data = api::open(data)?;
    let mut trainer = Trainer::new(learner);
    trainer = match (learner, count) {
        (Learner::Online(_), Some(t)) => trainer.steps(t),
        (Learner::Batch(_), Some(i)) => trainer.max_iterations(i as usize),
        (Learner::AttributeEfficient(_), _) => trainer.attributes(8),
        _ => trainer,
    };
    let started = std::time::Instant::now();
    let model = trainer.train(&data)?;
    let seconds = started.elapsed().as_secs_f64();
    let error = metrics::error_rate(&api::scores(&model, &data), &metrics::labels(&data));
    println!(
        "{learner}: {} rows, {seconds:.2} s, training error {error:.4}",
        data.n_rows()
    );
    Ok(())
}
