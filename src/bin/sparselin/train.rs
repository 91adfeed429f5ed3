//! `sparselin train DATA --algo ... -o MODEL`: train, save the model, report.
//!
//! Every algorithm turns the shared [`Args`] into a [`Trained`]; adding one is a variant of
//! [`Algo`] and one arm in [`run`]'s match.

use std::path::PathBuf;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use sparselin::batch;
use sparselin::data::{ExampleSet, Examples};
use sparselin::lao;
use sparselin::loss::Loss;
use sparselin::metrics::{self, Evaluation};
use sparselin::model::{Model, Precision, TrainingInfo, weights_to_original};
use sparselin::online::hogwild::{self, ScalarSharing};
use sparselin::online::{self, Algorithm, EpochEnd, Observer, Sampling, Stop};

use crate::input::read_examples;
use crate::trace::{TraceRow, write_csv, write_plot};
use crate::train_batch::train_batch;

/// The training algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Algo {
    /// SGD with the gradient sum, O(k) per step (last iterate).
    Sgd,
    /// Averaged SGD, O(k) per step (averaged iterate).
    Asgd,
    /// Averaged SGD on implicitly centered data, O(k) per step.
    Casgd,
    /// SGD written literally, O(n) per step (baseline).
    NaiveSgd,
    /// ASGD written literally, O(n) per step (baseline).
    NaiveAsgd,
    /// CASGD written literally, O(n) per step (baseline).
    NaiveCasgd,
    /// Batch L-BFGS with a strong-Wolfe line search (smooth losses).
    Lbfgs,
    /// Batch subLBFGS with the exact line search (hinge, absolute).
    Sublbfgs,
    /// Batch subgradient descent, η_t = 1/(λt) (baseline).
    Subgd,
    /// Batch BFGS (limited memory) on the raw subgradient, weak Wolfe (baseline).
    Bfgs,
    /// Attribute-efficient ridge (Hazan & Koren): squared loss, ‖w‖₂ ≤ B, reads k + 1
    /// attributes per example, O(k log d) per example, one pass.
    Aerr,
    /// Attribute-efficient lasso: squared loss, ‖w‖₁ ≤ B, k + 1 attributes per example.
    Aelr,
    /// Attribute-efficient SVR: erf-smoothed ε-insensitive loss (`--loss
    /// epsilon-insensitive:δ`), ‖w‖₂ ≤ B, k + O(1) attributes per example in expectation.
    Aesvr,
}

/// Weight precision in the model file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WeightType {
    /// Exact.
    F64,
    /// Half the size.
    F32,
}

/// Arguments of `sparselin train`.
#[derive(clap::Args)]
pub struct Args {
    /// Training data: a dataset directory (`sparselin convert`) or a LIBSVM file (gzip ok).
    pub data: PathBuf,
    /// The algorithm.
    #[arg(long, value_enum, default_value = "asgd")]
    pub algo: Algo,
    /// Loss: squared, absolute, hinge, log, squared-hinge, smooth-hinge, epsilon-insensitive[:ε].
    #[arg(long, default_value = "hinge")]
    pub loss: Loss,
    /// Regularization strength λ of the objective (1/m)Σℓ + (λ/2)(‖w‖² + b²).
    #[arg(long, default_value_t = 1e-4)]
    pub lambda: f64,
    /// Batch solvers: iteration limit.
    #[arg(long, default_value_t = 1000)]
    pub max_iter: usize,
    /// Batch solvers: stop once ‖g‖²/(2λ) ≤ tol·J for a subgradient g (a certificate that
    /// J is within a factor 1 + tol of its minimum).
    #[arg(long, default_value_t = 1e-9)]
    pub tol: f64,
    /// subLBFGS: continue direction finding past the first descent direction until its duality
    /// gap is below 1e-8·J (MATH.md §7's ε rule; slower per iteration on real data).
    #[arg(long)]
    pub exact_direction: bool,
    /// Batch solvers: L-BFGS memory M.
    #[arg(long, default_value_t = sparselin::batch::DEFAULT_MEMORY)]
    pub memory: usize,
    /// Passes over the data (E·m steps). Default 5 unless --steps is given.
    #[arg(long, conflicts_with = "steps")]
    pub epochs: Option<u64>,
    /// Exactly this many steps.
    #[arg(long)]
    pub steps: Option<u64>,
    /// Step-size offset t₀ in η_t = 1/(λ(t + t₀)); default (‖x‖² + 1)/λ with ‖x‖² the mean
    /// squared row norm (largest for squared and squared-hinge loss). 0 is the seed's schedule.
    #[arg(long)]
    pub t0: Option<f64>,
    /// First step t_a included in the average (averaged algorithms).
    #[arg(long, default_value_t = 1)]
    pub average_start: u64,
    /// Leave the bias out of the regularizer (the default regularizes it, as the seed does).
    #[arg(long)]
    pub free_bias: bool,
    /// Order of the examples.
    #[arg(long, default_value = "uniform")]
    pub sampling: Sampling,
    /// Seed of the sampler: same seed, same model, bit for bit.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// aerr/aelr/aesvr: attributes k drawn per example for the gradient estimate (each example
    /// costs k + 1 observed attributes). These learners use the squared loss (aesvr: --loss
    /// epsilon-insensitive:δ), no bias and no λ; they make one pass in a seeded random order.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
    pub attributes: u64,
    /// aerr/aelr/aesvr: radius B of the constraint ball (‖w‖₂ ≤ B, or ‖w‖₁ ≤ B for aelr).
    #[arg(long, default_value_t = 1.0)]
    pub radius: f64,
    /// aerr/aelr/aesvr: step size η (default: the theorems' step, MATH.md §8).
    #[arg(long)]
    pub eta: Option<f64>,
    /// aesvr: width ε of the erf smoothing of the ε-insensitive loss.
    #[arg(long, default_value_t = 0.1)]
    pub smoothing: f64,
    /// Worker threads for sgd, asgd and casgd: lock-free Hogwild (default: all cores). With
    /// 1 the run is the single-threaded learner's, bit for bit; with more, runs with the same
    /// seed differ by the threads' timing (see `sparselin::online::hogwild`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// How Hogwild workers share the per-step scalars (bias and projection sums): per-thread
    /// slots summed by each prediction, or one shared value.
    #[arg(long, default_value = "per-thread")]
    pub scalars: ScalarSharing,
    /// Feature count (default: meta.json beside the data, else the largest index + 1).
    #[arg(long)]
    pub features: Option<usize>,
    /// Where to write the model.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Also write the model as text here.
    #[arg(long)]
    pub readable: Option<PathBuf>,
    /// Weight precision in the model file.
    #[arg(long, value_enum, default_value = "f64")]
    pub weights: WeightType,
    /// Held-out data, evaluated after every epoch and at the end.
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write the per-epoch trace (objective, test error, time) as CSV.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Plot the per-epoch trace (objective and test error against time) as SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// What every algorithm hands back.
pub struct Trained {
    /// The model to save.
    pub model: Model,
    /// Seconds spent training (set-up and evaluation excluded).
    pub seconds: f64,
    /// Examples processed (steps for the online learners, rows × iterations for batch ones).
    pub examples: u64,
    /// Per-epoch (or per-iteration) trace, empty unless asked for.
    pub trace: Vec<TraceRow>,
}

/// Train, save, report.
pub fn run(args: Args) -> anyhow::Result<()> {
    let data = read_examples(&args.data, args.features)?;
    let test = match &args.test {
        Some(path) => Some(read_examples(path, Some(data.n_features()))?),
        None => None,
    };
    let trained = match args.algo {
        Algo::Sgd => train_online(Algorithm::Sgd, &args, &data, test.as_ref())?,
        Algo::Asgd => train_online(Algorithm::Asgd, &args, &data, test.as_ref())?,
        Algo::Casgd => train_online(Algorithm::Casgd, &args, &data, test.as_ref())?,
        Algo::NaiveSgd => train_online(Algorithm::NaiveSgd, &args, &data, test.as_ref())?,
        Algo::NaiveAsgd => train_online(Algorithm::NaiveAsgd, &args, &data, test.as_ref())?,
        Algo::NaiveCasgd => train_online(Algorithm::NaiveCasgd, &args, &data, test.as_ref())?,
        Algo::Lbfgs => train_batch(batch::Algorithm::Lbfgs, &args, &data)?,
        Algo::Sublbfgs => train_batch(batch::Algorithm::SubLbfgs, &args, &data)?,
        Algo::Subgd => train_batch(batch::Algorithm::SubGd, &args, &data)?,
        Algo::Bfgs => train_batch(batch::Algorithm::Bfgs, &args, &data)?,
        Algo::Aerr => train_lao(lao::Algo::Aerr, &args, &data)?,
        Algo::Aelr => train_lao(lao::Algo::Aelr, &args, &data)?,
        Algo::Aesvr => train_lao(lao::Algo::Aesvr, &args, &data)?,
    };
    report(&args, &data, test.as_ref(), &trained)
}

/// The online learners of `sparselin::online`.
fn train_online(
    algorithm: Algorithm,
    args: &Args,
    data: &ExampleSet,
    test: Option<&ExampleSet>,
) -> anyhow::Result<Trained> {
    let stop = match (args.steps, args.epochs) {
        (Some(t), _) => Stop::Steps(t),
        (None, e) => Stop::Epochs(e.unwrap_or(5)),
    };
    let config = online::Config {
        loss: args.loss,
        lambda: args.lambda,
        t0: args.t0,
        average_start: args.average_start,
        regularize_bias: !args.free_bias,
        sampling: args.sampling,
        seed: args.seed,
        stop,
    };
    let total = match stop {
        Stop::Steps(t) => t,
        Stop::Epochs(e) => e.saturating_mul(data.n_rows() as u64),
    };
    let mut observer = Progress::new(args, data, test, total);
    let parallel = matches!(
        algorithm,
        Algorithm::Sgd | Algorithm::Asgd | Algorithm::Casgd
    );
    let threads = match args.threads {
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None if parallel => hogwild::available_threads(),
        None => 1,
    };
    let fit = if parallel {
        let options = hogwild::Options {
            scalars: args.scalars,
            ..hogwild::Options::new(threads)
        };
        hogwild::fit(data, algorithm, &config, &options, &mut observer)?
    } else if threads == 1 {
        online::fit(data, algorithm, &config, &mut observer)?
    } else {
        anyhow::bail!("{algorithm} runs on one thread only (--threads 1)");
    };
    observer.bar.finish_and_clear();
    let output = fit.snapshot.output().clone();
    // Models are stored in original feature ids.
    let weights = match data.feature_permutation() {
        Some(permutation) => weights_to_original(&output.weights, permutation),
        None => output.weights,
    };
    let details = json!({
        "t0": fit.schedule.t0,
        "average_start": fit.schedule.average_start,
        "sampling": args.sampling.to_string(),
        "seed": args.seed,
        "steps": fit.steps,
        "threads": threads,
        "epochs": fit.steps as f64 / data.n_rows() as f64,
        "averaged": fit.snapshot.averaged.is_some(),
    });
    Ok(Trained {
        model: Model {
            weights,
            bias: output.bias,
            loss: args.loss,
            info: TrainingInfo {
                algorithm: algorithm.name().to_string(),
                lambda: args.lambda,
                regularize_bias: !args.free_bias,
                details: details.as_object().cloned().unwrap_or_default(),
            },
        },
        seconds: fit.seconds,
        examples: fit.steps,
        trace: observer.trace,
    })
}

/// The attribute-efficient learners of `sparselin::lao`: one pass, averaged iterate.
fn train_lao(algo: lao::Algo, args: &Args, data: &ExampleSet) -> anyhow::Result<Trained> {
    if !(args.radius > 0.0 && args.radius.is_finite()) {
        anyhow::bail!("--radius must be positive and finite, got {}", args.radius);
    }
    if let Some(eta) = args.eta {
        if !(eta > 0.0 && eta.is_finite()) {
            anyhow::bail!("--eta must be positive and finite, got {eta}");
        }
    }
    let loss = match (algo, args.loss) {
        (lao::Algo::Aesvr, Loss::EpsilonInsensitive(delta)) => Loss::EpsilonInsensitive(delta),
        (lao::Algo::Aesvr, other) => {
            anyhow::bail!(
                "aesvr learns the ε-insensitive loss: pass --loss epsilon-insensitive:δ (got {other})"
            )
        }
        _ => Loss::Squared,
    };
    if algo == lao::Algo::Aesvr && !(args.smoothing > 0.0 && args.smoothing.is_finite()) {
        anyhow::bail!(
            "--smoothing must be positive and finite, got {}",
            args.smoothing
        );
    }
    let insensitivity = match loss {
        Loss::EpsilonInsensitive(delta) => delta,
        _ => 0.0,
    };
    let config = lao::LaoConfig {
        algo,
        k: args.attributes as usize,
        radius: args.radius,
        eta: args.eta,
        svr: lao::SmoothedInsensitive {
            smoothing: args.smoothing,
            insensitivity,
        },
        seed: args.seed,
    };
    let start = std::time::Instant::now();
    let fit = lao::train(data, &config);
    let seconds = start.elapsed().as_secs_f64();
    let weights = match data.feature_permutation() {
        Some(permutation) => weights_to_original(&fit.weights, permutation),
        None => fit.weights,
    };
    let details = json!({
        "attributes_per_example": config.k,
        "radius": config.radius,
        "eta": fit.eta,
        "smoothing": (algo == lao::Algo::Aesvr).then_some(args.smoothing),
        "seed": args.seed,
        "examples": fit.examples,
        "attributes_observed": fit.attributes_observed,
        "attributes_observed_per_example": fit.attributes_observed as f64 / fit.examples.max(1) as f64,
    });
    Ok(Trained {
        model: Model {
            weights,
            bias: 0.0,
            loss,
            info: TrainingInfo {
                algorithm: algo.to_string(),
                lambda: 0.0,
                regularize_bias: false,
                details: details.as_object().cloned().unwrap_or_default(),
            },
        },
        seconds,
        examples: fit.examples,
        trace: Vec::new(),
    })
}

/// Progress bar and per-epoch evaluation of the online learners.
struct Progress<'a> {
    bar: ProgressBar,
    data: &'a ExampleSet,
    test: Option<&'a ExampleSet>,
    args: &'a Args,
    epoch_every: u64,
    trace: Vec<TraceRow>,
}

impl<'a> Progress<'a> {
    fn new(args: &'a Args, data: &'a ExampleSet, test: Option<&'a ExampleSet>, total: u64) -> Self {
        let bar = if args.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} {bar:30} {human_pos}/{human_len} steps, {per_sec} {msg}",
            )
            .expect("a valid template"),
        );
        Progress {
            bar,
            data,
            test,
            args,
            epoch_every: data.n_rows() as u64,
            trace: Vec::new(),
        }
    }
}

impl Observer for Progress<'_> {
    fn progress(&mut self, steps: u64, mean_loss: f64) {
        self.bar.set_position(steps);
        self.bar.set_message(format!(
            "epoch {:.2}, loss ≈ {mean_loss:.5}",
            steps as f64 / self.epoch_every as f64
        ));
    }

    fn wants_epochs(&self) -> bool {
        self.test.is_some() || self.args.trace.is_some() || self.args.plot.is_some()
    }

    fn epoch_end(&mut self, end: &EpochEnd<'_>) {
        let w = end.snapshot.output();
        let evaluate = |d: &ExampleSet, weights: &[f64]| {
            metrics::evaluate(
                self.args.loss,
                self.args.lambda,
                !self.args.free_bias,
                weights,
                w.bias,
                d,
            )
        };
        let train = evaluate(self.data, &w.weights);
        let test = self.test.map(|t| {
            if t.feature_permutation() == self.data.feature_permutation() {
                evaluate(t, &w.weights)
            } else {
                evaluate(t, &renumber(&w.weights, self.data, t))
            }
        });
        self.bar.set_position(end.steps);
        self.bar.println(format!(
            "epoch {:.2}: objective {:.6}{}",
            end.epochs,
            train.objective,
            test.as_ref()
                .map(|t| format!(", test {}", headline(t)))
                .unwrap_or_default()
        ));
        self.trace.push(TraceRow {
            epochs: end.epochs,
            steps: end.steps,
            seconds: end.seconds,
            train_objective: train.objective,
            test_objective: test.as_ref().map(|t| t.objective),
            test_error: test.as_ref().and_then(|t| t.error_rate.or(t.rmse)),
        });
    }
}

/// Weights in `from`'s columns moved to `to`'s columns (datasets renumbered differently);
/// a feature `to` has and `from` lacks gets weight 0.
fn renumber(weights: &[f64], from: &ExampleSet, to: &ExampleSet) -> Vec<f64> {
    let original = match from.feature_permutation() {
        Some(p) => weights_to_original(weights, p),
        None => weights.to_vec(),
    };
    (0..to.n_features())
        .map(|j| {
            let id = to.feature_permutation().map_or(j, |p| p[j] as usize);
            original.get(id).copied().unwrap_or(0.0)
        })
        .collect()
}

/// "error 0.0123" or "rmse 0.45".
fn headline(e: &Evaluation) -> String {
    match (e.error_rate, e.rmse) {
        (Some(err), _) => format!("error {err:.5}"),
        (None, Some(rmse)) => format!("rmse {rmse:.5}"),
        _ => String::new(),
    }
}

/// Save the model and its companions, print the summary.
fn report(
    args: &Args,
    data: &ExampleSet,
    test: Option<&ExampleSet>,
    trained: &Trained,
) -> anyhow::Result<()> {
    let model = &trained.model;
    let precision = match args.weights {
        WeightType::F64 => Precision::F64,
        WeightType::F32 => Precision::F32,
    };
    model.save(&args.output, precision)?;
    if let Some(path) = &args.readable {
        model.save_readable(path)?;
    }
    if let Some(path) = &args.trace {
        write_csv(path, &trained.trace).context("writing the trace")?;
    }
    if let Some(path) = &args.plot {
        let error_name = if args.loss.is_classification() {
            "test error rate"
        } else {
            "test RMSE"
        };
        write_plot(path, &trained.trace, error_name)?;
    }
    let evaluate = |d: &ExampleSet| {
        metrics::evaluate(
            model.loss,
            model.info.lambda,
            model.info.regularize_bias,
            &model.weights,
            model.bias,
            d,
        )
    };
    let train_eval = evaluate(data);
    let test_eval = test.map(evaluate);
    let per_second = trained.examples as f64 / trained.seconds.max(1e-12);
    if args.json {
        let summary = json!({
            "algorithm": model.info.algorithm,
            "loss": model.loss.to_string(),
            "lambda": model.info.lambda,
            "regularize_bias": model.info.regularize_bias,
            "details": model.info.details,
            "rows": data.n_rows(),
            "features": data.n_features(),
            "nnz": data.nnz(),
            "seconds": trained.seconds,
            "examples_per_second": per_second,
            "train": train_eval,
            "test": test_eval,
            "model": args.output,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{} ({}, λ = {:e}): {} examples in {:.3} s ({:.0}/s)",
            model.info.algorithm,
            model.loss,
            model.info.lambda,
            trained.examples,
            trained.seconds,
            per_second
        );
        println!(
            "train objective {:.10}{}",
            train_eval.objective,
            train_eval_tail(&train_eval)
        );
        if let Some(t) = &test_eval {
            println!("test objective {:.10}{}", t.objective, train_eval_tail(t));
        }
        println!("model written to {}", args.output.display());
    }
    Ok(())
}

fn train_eval_tail(e: &Evaluation) -> String {
    let h = headline(e);
    if h.is_empty() { h } else { format!(", {h}") }
}
