//! `mpirun -np N sparselin train DIR --ranks N ...`: data-parallel training over MPI (cargo
//! feature `mpi`).
//!
//! Every rank opens its share of the dataset's shards (`Dataset::open_share`). Batch solvers
//! sum across ranks every iteration and end with the same weights everywhere; online learners
//! train on each share and the models are averaged, weighted by rows, after every epoch or
//! once at the end (`--average-every`, `sparselin::dist::online`). Rank 0 alone prints and
//! writes the model (atomically, after every rank has finished); an error on any rank ends the
//! whole job through `MPI_Abort`, so it exits non-zero and writes no model.

use anyhow::{Context, bail};
use serde_json::json;
use sparselin::api::{self, Model, Monitor, Trainer};
use sparselin::batch;
use sparselin::data::{ClassVsRest, Dataset, ExampleSet, Examples, SampleWeighted, sample_weights};
use sparselin::dist::mpi::World;
use sparselin::dist::{Reducer, Timed};
use sparselin::metrics::{self, ClassTally};
use sparselin::online::Observer;

use crate::scaling;
use crate::train::Args;

/// Initialize MPI, check the job size against `ranks`, train; on error, abort every rank.
pub fn run(mut args: Args, ranks: usize) -> anyhow::Result<()> {
    let universe = mpi::initialize().context("MPI could not be initialized (or already was)")?;
    let world = World::new(&universe);
    if world.size() != ranks {
        bail!(
            "--ranks {ranks}, but this process sees {} MPI process(es) in MPI_COMM_WORLD: the \
             launcher (mpirun -np) and --ranks disagree, or mpirun belongs to another MPI than \
             the one sparselin was built with (each process would then run alone as rank 0)",
            world.size()
        );
    }
    let rank = world.rank();
    args.quiet |= rank != 0;
    match train(args, &world) {
        Ok(()) => Ok(()),
        Err(error) => {
            errln!("sparselin: error on rank {rank} of {ranks}: {error:#}");
            world.abort(1)
        }
    }
}

fn train(mut args: Args, world: &World<'_>) -> anyhow::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    if !args.data.is_dir() {
        bail!(
            "{}: distributed training reads a dataset directory (`sparselin convert`), whose \
             shards the ranks share",
            args.data.display()
        );
    }
    if args.test.is_some() || args.trace.is_some() || args.plot.is_some() {
        bail!("--test, --trace and --plot are not available with --ranks");
    }
    let share = Dataset::open_share(&args.data, rank, size)?;
    args.vw_features = share.vw_features().cloned();
    let first_row = share.first_row() as usize;
    let share = share.into_examples()?;
    let share = match args.features {
        Some(n) => share.with_n_features(n)?,
        None => share,
    };
    let data = ExampleSet::Dataset(share);
    // The largest magnitudes over every rank's rows.
    args.column_scales = scaling::run_scales(&args, &data, world)?;
    let data = scaling::scaled(data, &args, &args.data)?;
    let rows = sparselin::dist::total_rows(world, data.n_rows());
    crate::train::with_lambda_of_cost(&mut args, rows)?;
    let args = &args;
    let timed = Timed::new(world);
    let local = Args {
        threads: args.threads.or(Some(1)),
        ..args.clone()
    };
    let online = matches!(args.algo.learner(), sparselin::api::Learner::Online(_));
    if online && data.n_rows() == 0 {
        bail!(
            "{}: rank {rank} of {size} has no rows to train on: every rank reads whole shards, \
             and the online learners need rows on each (the batch solvers do not); convert \
             with a smaller --rows-per-shard to give every rank a shard",
            args.data.display()
        );
    }
    let trainer = if online {
        crate::train::trainer(&local)?
            .averaging(args.average_every)
            .local_steps(args.local_steps)
            .averages_per_epoch(args.averages_per_epoch)
    } else {
        crate::train::trainer(args)?
    };
    // Every rank reads the whole weight file and keeps its share's rows' weights.
    let trainer = match (trainer.sample_weights_given(), args.weights_origin()) {
        (Some(all), Some(path)) => {
            let total = sparselin::dist::total_rows(world, data.n_rows());
            sample_weights::check(all, total).with_context(|| {
                format!(
                    "{}: the weights of the rows of {}",
                    path.display(),
                    args.data.display()
                )
            })?;
            let share = all[first_row..first_row + data.n_rows()].to_vec();
            trainer.sample_weights(share)
        }
        _ => trainer,
    };
    let mut lines = Lines { quiet: args.quiet };
    if crate::train::classifies(args) && api::more_than_two_labels_across(&data, world) {
        return train_classes(args, &trainer, &data, world, &timed, &mut lines);
    }
    let mut trained = trainer.train_across(&data, &timed, &mut lines)?;
    if let Some(rules) = args.vw_features_detail() {
        let details = &mut trained.model.info.details;
        details.insert(crate::input::VW_FEATURES.to_string(), rules);
    }
    let traffic = timed.traffic();
    let (objective, error_rate) = match trainer.sample_weights_given() {
        Some(weights) => {
            let rows = SampleWeighted::new(&data, weights)?;
            evaluate(&trained.model, &rows, data.feature_permutation(), world)?
        }
        None => evaluate(&trained.model, &data, data.feature_permutation(), world)?,
    };
    world.barrier();
    if rank != 0 {
        return Ok(());
    }
    let model = &trained.model;
    crate::train::write_outputs(args, &scaling::to_write(model.clone(), args), None)?;
    if args.json {
        let summary = json!({
            "algorithm": model.info.algorithm,
            "loss": model.loss.to_string(),
            "lambda": model.info.lambda,
            "l1": model.info.l1,
            "class_weights": model.info.class_weights,
            "cost": args.cost,
            "scale": crate::train::scale_name(args),
            "ranks": size,
            "details": model.info.details,
            "seconds": trained.seconds,
            "communication": traffic,
            "train": { "objective": objective, "error_rate": error_rate },
            "model": args.output,
        });
        outln!("{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        outln!(
            "{} ({}, {}{}) on {size} ranks: {:.3} s, of which {:.3} s in {} sums",
            model.info.algorithm,
            model.loss,
            model.info.penalty(),
            crate::train::title_notes(args),
            trained.seconds,
            traffic.seconds,
            traffic.calls
        )?;
        let error = error_rate.map_or(String::new(), |e| format!(", error {e:.5}"));
        outln!("train objective {objective:.12e}{error}")?;
        if let Some(path) = &args.output {
            outln!("model written to {}", path.display())?;
        }
    }
    Ok(())
}

/// One model per class of every rank's labels (one-vs-rest), each trained across the ranks
/// in turn (the online learners' classes at once, in one pass); rank 0 writes the classifier and reports each class's objective and error, and
/// the classes' error and macro F1, over every rank's rows.
fn train_classes(
    args: &Args,
    trainer: &Trainer,
    data: &ExampleSet,
    world: &World<'_>,
    timed: &Timed<'_>,
    lines: &mut Lines,
) -> anyhow::Result<()> {
    crate::train_one_vs_rest::refuse_binary_flags(args)?;
    let training = trainer.train_one_vs_rest_across(data, timed, lines)?;
    let traffic = timed.traffic();
    let classifier = &training.classifier;
    let permutation = data.feature_permutation();
    // Each class's model against the rest; not a multinomial classifier's, whose models
    // minimized one objective together.
    let multinomial = classifier.is_multinomial();
    let mut per_class = Vec::with_capacity(classifier.classes().len());
    if !multinomial {
        for (&class, model) in classifier.classes().iter().zip(classifier.models()) {
            let rows = ClassVsRest::new(data, class);
            per_class.push(match trainer.sample_weights_given() {
                Some(weights) => {
                    let rows = SampleWeighted::new(&rows, weights)?;
                    evaluate(model, &rows, permutation, timed)?
                }
                None => evaluate(model, &rows, permutation, timed)?,
            });
        }
    }
    let predictions = api::predict_classes(classifier, data);
    let labels = metrics::labels(data);
    let mut tally = ClassTally::new(classifier.classes(), &predictions, &labels);
    tally.add_across(timed);
    world.barrier();
    if world.rank() != 0 {
        return Ok(());
    }
    let classifier = crate::train_one_vs_rest::write_classifier(args, training.classifier)?;
    let model = &classifier.models()[0];
    if args.json {
        let classes: Vec<_> = (classifier.classes().iter().zip(&per_class))
            .map(|(class, (objective, error_rate))| {
                json!({ "class": class, "objective": objective, "error_rate": error_rate })
            })
            .collect();
        let summary = json!({
            "algorithm": model.info.algorithm,
            "loss": model.loss.to_string(),
            "lambda": model.info.lambda,
            "l1": model.info.l1,
            "cost": args.cost,
            "scale": crate::train::scale_name(args),
            "classes": classifier.classes(),
            "class_weights": (classifier.models().iter())
                .map(|m| m.info.class_weights)
                .collect::<Vec<_>>(),
            "ranks": world.size(),
            "details": classifier.models().iter().map(|m| &m.info.details).collect::<Vec<_>>(),
            "seconds": training.seconds,
            "communication": traffic,
            "train": {
                "classes": classes,
                "objective": multinomial.then(|| &model.info.details["objective"]),
                "error_rate": tally.error_rate(),
                "macro_f1": tally.macro_f1(),
            },
            "model": args.output,
        });
        outln!("{}", serde_json::to_string_pretty(&summary)?)?;
        return Ok(());
    }
    outln!(
        "{} on {} ranks: {:.3} s, of which {:.3} s in {} sums",
        crate::train_one_vs_rest::title(args, &classifier),
        world.size(),
        training.seconds,
        traffic.seconds,
        traffic.calls
    )?;
    if multinomial {
        let objective = model.info.details["objective"].as_f64().unwrap_or(f64::NAN);
        outln!("train objective {objective:.12e}")?;
    }
    for (class, (objective, error)) in classifier.classes().iter().zip(&per_class) {
        let error = error.map_or(String::new(), |e| format!(", error {e:.5}"));
        outln!("class {class}: train objective {objective:.12e}{error}")?;
    }
    let f1 = tally
        .macro_f1()
        .map_or(String::new(), |f1| format!(", macro F1 {f1:.5}"));
    outln!("train error {:.5}{f1}", tally.error_rate())?;
    if let Some(path) = &args.output {
        outln!("model written to {}", path.display())?;
    }
    Ok(())
}

/// Rank 0's batch iteration lines, and the classes of one-vs-rest as they start.
struct Lines {
    quiet: bool,
}

impl Observer for Lines {}

impl Monitor for Lines {
    fn class_start(&mut self, class: f64, index: usize, classes: usize) {
        crate::train_one_vs_rest::announce_class(self.quiet, class, index, classes);
    }

    fn iteration(&mut self, p: &batch::Progress) {
        if !self.quiet {
            errln!(
                "iteration {:>5}  objective {:.12e}  gap {:.3e}  {:.3} s  {:.2} passes",
                p.iteration,
                p.objective,
                p.gap,
                p.seconds,
                p.passes
            );
        }
    }
}

/// The training objective and error rate of `model` over every rank's rows.
fn evaluate<E: Examples>(
    model: &Model,
    data: &E,
    permutation: Option<&[u32]>,
    reducer: &dyn Reducer,
) -> anyhow::Result<(f64, Option<f64>)> {
    let loss = model.weighted_loss()?;
    // The model holds original feature ids; the data internal columns.
    let weights: Vec<f64> = match permutation {
        Some(permutation) => permutation
            .iter()
            .map(|&id| model.weights[id as usize])
            .collect(),
        None => model.weights.clone(),
    };
    let penalty = model.penalty_value();
    let rows = data.n_rows() as f64;
    // A rank without rows adds zeros.
    let mut sums = [0.0; 3];
    if rows > 0.0 {
        let local = metrics::evaluate_with_penalty(loss, penalty, &weights, model.bias, data);
        sums = [
            local.mean_loss * rows,
            local.error_rate.unwrap_or(0.0) * rows,
            rows,
        ];
    }
    reducer.sum(&mut sums);
    let objective = sums[0] / sums[2] + penalty;
    let error_rate = model.loss.is_classification().then(|| sums[1] / sums[2]);
    Ok((objective, error_rate))
}
