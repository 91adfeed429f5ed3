//! `sparselin train DATA --algo ... -o MODEL`: train, save the model, report.
//!
//! A thin layer over [`sparselin::api::Trainer`]: the flags become a trainer, a [`Progress`]
//! monitor draws the progress bar and records the trace, and the model is saved and evaluated.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::applicable;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget};
use serde_json::json;
use sparselin::api::{EarlyStopping, Learner, MAX_THREADS, Monitor, Trainer, Training};
use sparselin::batch;
use sparselin::data::vw::FeatureRules;
use sparselin::data::{ExampleSet, Examples, SampleWeighted};
use sparselin::dist::Local;
use sparselin::lao;
use sparselin::loss::{ClassWeighting, Loss, WeightedLoss};
use sparselin::metrics::Penalty;
use sparselin::metrics::{self, Evaluation};
use sparselin::model::{Model, Precision, weights_to_original};
use sparselin::online::hogwild::{self, ScalarSharing};
use sparselin::online::{self, EpochEnd, Observer, Sampling};
use sparselin::output::OutputFile;

use crate::input::{
    Input, RowWeights, TextArgs, VW_FEATURES, read_examples, refuse_unscorable_labels, row_weights,
    vw_features,
};
use crate::number::decimal;
use crate::scaling;
use crate::trace::{self, TraceRow};

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
    /// AdaGrad (Duchi, Hazan & Singer) in its dual averaging form: a step size per feature,
    /// shrinking with its own gradients (no t₀ to choose), λ and --l1 exactly, O(k) per step
    /// (last iterate; one thread)
    Adagrad,
    /// AdaGrad written literally, O(n) per step (baseline).
    NaiveAdagrad,
    /// Batch L-BFGS with a strong-Wolfe line search (smooth losses).
    Lbfgs,
    /// Batch subLBFGS with the exact line search (hinge, absolute, quantile).
    Sublbfgs,
    /// Batch subgradient descent, η_t = 1/(λt) (baseline).
    Subgd,
    /// Batch BFGS (limited memory) on the raw subgradient, weak Wolfe (baseline).
    Bfgs,
    /// Batch dual coordinate descent (hinge, squared hinge, absolute, quantile, and the
    /// ε-insensitive losses), certified by its duality gap: the fast exact solver where many
    /// rows sit on their kink (small or separable data).
    Dcd,
    /// Batch coordinate descent on a Newton model (newGLMNET, liblinear's `-s 6`) for a smooth
    /// loss with --l1, --lambda or both, certified by its duality gap: the L1 solver for dense
    /// or correlated features (keeps a column-major copy of the data in memory)
    Cd,
    /// Batch trust-region Newton with conjugate gradients (liblinear's primal solver of `-s 0`,
    /// `-s 2`, `-s 11`) for the smooth losses: superlinear near the optimum, where L-BFGS
    /// slows at small λ (large C).
    Tron,
    /// Batch truncated Newton with conjugate gradients and a backtracking line search
    /// (liblinear's primal solver of `-s 0`, `-s 2`, `-s 11` in its current releases) for the
    /// smooth losses: TRON's Newton steps, shortened along their direction instead of refused.
    Newton,
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
#[derive(Clone, clap::Args)]
pub struct Args {
    /// Training data: a dataset directory (`sparselin convert`) or a text file (gzip ok),
    /// LIBSVM or (--format vw) Vowpal Wabbit.
    pub data: PathBuf,
    /// The algorithm.
    #[arg(long, value_enum, default_value = "asgd")]
    pub algo: Algo,
    /// Loss: squared, absolute, hinge, log, squared-hinge, smooth-hinge, modified-huber
    /// (scikit-learn's), epsilon-insensitive[:ε], squared-epsilon-insensitive[:ε] (liblinear's
    /// L2-loss SVR, `-s 11 -p ε`; ε defaults to 0.1 as `-p` does), quantile[:τ] (the pinball
    /// loss; its model predicts the τ-quantile, default 0.5), huber[:δ] (squared within δ of
    /// the label, linear of slope δ beyond; default 1), poisson (Poisson regression of counts
    /// or rates ≥ 0, log link: its model predicts the mean e^(w·x + b); batch solvers and
    /// adagrad only).
    /// The classification losses (hinge, log, squared-hinge, smooth-hinge, modified-huber) read
    /// a label > 0 as +1 and any other as −1 (±1 and 0/1 labels both work; predictions print
    /// ±1), and need both classes; labels of more than two values train a model per class.
    #[arg(long, default_value = "hinge")]
    pub loss: Loss,
    /// Classification losses: weigh each class's loss in the objective, as liblinear's
    /// `-w1 W -w-1 W` and scikit-learn's `class_weight` do: `LABEL=W` pairs, e.g. `+1=W,-1=W`
    /// (a class not named weighs 1; `1` and `0` name the classes of 0/1 labels too), or
    /// `balanced` (c_y = m/(2m_y), so that each class weighs half; in --cv computed on each
    /// fold's training rows, under --early-stop on its held-out rows too). One-vs-rest:
    /// `3=W,7=W` weighs class 3's rows W in its problem against the rest, the others 1
    /// (liblinear's `-w3 W`); `balanced` weighs class k's rows m/(K·m_k) in its problem.
    #[arg(long, value_name = "LABEL=W,...|balanced", allow_hyphen_values = true)]
    pub class_weight: Option<ClassWeighting>,
    /// Weigh each row's loss by a weight of its own: FILE (gzip ok) holds one non-negative
    /// number per line, the weight of the training row of the same line (liblinear's `-W`, scikit-learn's
    /// `sample_weight`; a row of weight 0 counts as none). In --cv each fold's training rows
    /// keep theirs; held-out metrics count every row once. Without it, a dataset that stores
    /// weights (converted from Vowpal Wabbit text, or with `convert --sample-weights`) is
    /// weighed by those.
    #[arg(long, value_name = "FILE")]
    pub sample_weights: Option<PathBuf>,
    /// Regularization strength λ of the objective (1/m)Σℓ + (λ/2)(‖w‖² + b²) (0 for
    /// adagrad: plain AdaGrad; the other online learners need λ > 0).
    #[arg(long, default_value_t = 1e-4, allow_negative_numbers = true)]
    pub lambda: f64,
    /// liblinear's and scikit-learn's C instead of --lambda: λ = 1/(C·m), m the training
    /// rows (every rank's; under --cv each fold's own, as liblinear's `-c C -v K` keeps C),
    /// so that the objective is liblinear's ½‖w‖² + C Σℓ (with `-B 1`) divided by C·m. The
    /// model records C (`cost`).
    #[arg(
        long,
        short = 'c',
        value_name = "C",
        allow_negative_numbers = true,
        conflicts_with_all = ["lambda", "lambda_grid", "cost_grid"]
    )]
    pub cost: Option<f64>,
    /// With --cv: cross-validate each of these C (`--cost`) on the same folds (e.g.
    /// 0.01,0.1,1,10) and name the one of lowest mean held-out error (as --lambda-grid judges
    /// it; the smaller C of a tie), as liblinear's `-C` searches its C.
    #[arg(
        long,
        value_name = "C1,C2,...",
        value_delimiter = ',',
        allow_negative_numbers = true,
        conflicts_with_all = ["lambda", "lambda_grid", "l1_grid"]
    )]
    pub cost_grid: Vec<f64>,
    /// Add an L1 term λ₁(‖w‖₁ + |b|) to the objective, for a sparse model: `--algo cd` or
    /// `lbfgs` with a smooth loss (coordinate descent, or OWL-QN; λ stays as set: `--lambda 0`
    /// for L1 alone, liblinear's `-s 6` with C = 1/(λ₁m), scikit-learn's `penalty='l1'`; λ > 0
    /// the elastic net), `--algo adagrad|naive-adagrad` (exactly: the dual averaging iterate
    /// minimizes a model with the term), or `--algo sgd|naive-sgd` (truncated gradient, as
    /// Vowpal Wabbit's `--l1`: each step ends by moving every weight η_t·λ₁ toward 0, lazily in
    /// O(k); on one thread, λ > 0)
    #[arg(
        long,
        value_name = "λ₁",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub l1: f64,
    /// Scale the features before training: `max-abs` divides each by the power of two at or
    /// above its largest |value| in the training data, so that values lie in [−1, 1] (as
    /// svm-scale or scikit-learn's MaxAbsScaler; zeros stay zeros), for features of very
    /// different scales, which slow or stall the learners. λ and λ₁ then regularize the
    /// weights of the scaled features. The model written is of the original features,
    /// exactly (powers of two round nothing), with the scales recorded: predict and eval
    /// take unscaled data. Resuming a model trained so scales alike; an --initial-model
    /// trained so lends its scales.
    #[arg(long, value_enum, value_name = "HOW")]
    pub scale: Option<crate::scaling::Scaling>,
    /// With --cv: cross-validate each of these λ on the same folds (comma-separated, e.g.
    /// 1e-2,1e-3,1e-4) and name the one of lowest mean held-out error (RMSE for regression,
    /// the pinball loss for quantile and the deviance for Poisson regression; the larger λ of a
    /// tie), as liblinear's `-C` searches its C.
    #[arg(
        long,
        value_name = "L1,L2,...",
        value_delimiter = ',',
        allow_negative_numbers = true,
        conflicts_with = "lambda"
    )]
    pub lambda_grid: Vec<f64>,
    /// With --cv: cross-validate each of these λ₁ of the L1 term on the same folds (e.g.
    /// 1e-3,1e-4,1e-5; cd, lbfgs, sgd, adagrad and their baselines) and name the one of lowest
    /// mean held-out error (the larger λ₁, the sparser model, of a tie), as scikit-learn's
    /// `LogisticRegressionCV(penalty='l1')` searches its C
    #[arg(
        long,
        value_name = "L1,L2,...",
        value_delimiter = ',',
        allow_negative_numbers = true,
        conflicts_with_all = ["l1", "lambda_grid"]
    )]
    pub l1_grid: Vec<f64>,
    /// With a grid (--lambda-grid, --cost-grid, --l1-grid): each batch solve from zero, as a
    /// separate run at its value, instead of from its fold's solution at the value before.
    /// The grid runs from the value that regularizes most (λ and λ₁ large, C small) to the
    /// one that regularizes least, each fold's solve starting from the last (liblinear's `-C`
    /// and scikit-learn's `LogisticRegressionCV` start theirs so): each value still solved to
    /// --tol, in a fraction of the iterations. (--crammer-singer solves start from zero always.)
    #[arg(long)]
    pub cold_grid: bool,
    /// Batch solvers: iteration limit (dcd: passes' worth of coordinate steps, m steps each).
    #[arg(long, default_value_t = 1000)]
    pub max_iter: usize,
    /// Batch solvers but dcd: start from the model of N epochs of ASGD (same loss, λ and seed;
    /// in a distributed run, averaged across the ranks every epoch) instead of from zero.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub warm_start_epochs: Option<u64>,
    /// Start from this model's weights and bias (a model file of any learner; features it
    /// lacks start at 0): batch solvers but dcd, e.g. to go on from a run stopped by
    /// --max-iter or along a path of λ; online learners, to go on learning from new data,
    /// their step sizes and average starting anew (scikit-learn's `warm_start`/`coef_init`,
    /// Vowpal Wabbit's `-i`).
    #[arg(long, value_name = "MODEL", conflicts_with = "warm_start_epochs")]
    pub initial_model: Option<PathBuf>,
    /// Online learners: also keep in the model where the run stopped (its step count, step
    /// schedule and last iterate), so that --resume can go on from it (Vowpal Wabbit's
    /// `--save_resume`). Such a model is saved with f64 weights.
    #[arg(long)]
    pub save_resume: bool,
    /// Online learners: go on from where MODEL's run stopped (a model saved with
    /// --save-resume), as that run would have: the next step's size, the average of the steps
    /// before kept (scikit-learn's `partial_fit`); on data of as many rows as the run's, the
    /// sampling order drawn on, on other data begun anew. --epochs and --steps count this
    /// run's. The algorithm, loss, λ, bias setting, t0, average start and
    /// bias rate are the model's unless given, and must then agree with it; so are the
    /// sampling and seed, which may differ. The new model is resumable too.
    #[arg(long, value_name = "MODEL",
          conflicts_with_all = ["initial_model", "warm_start_epochs", "cv", "lambda_grid",
                                "l1_grid", "cost_grid"])]
    pub resume: Option<PathBuf>,
    /// Batch solvers: stop once ‖g‖²/(2λ) ≤ tol·J for a subgradient g, or for dcd and --l1
    /// once the duality gap ≤ tol·J (either a certificate that J is within a factor 1 + tol of
    /// its minimum). Default 1e-9; 1e-6 with --l1, whose gap stopped falling at 3e-9·J to 6e-7·J in the runs
    /// measured
    #[arg(long, allow_negative_numbers = true)]
    pub tol: Option<f64>,
    /// subLBFGS: continue direction finding past the first descent direction until its duality
    /// gap is below 1e-8·J (MATH.md §7's ε rule; slower per iteration on real data).
    #[arg(long)]
    pub exact_direction: bool,
    /// lbfgs with --loss log on labels of more than two values: fit the classes' models
    /// together by multinomial logistic regression (softmax, as scikit-learn's
    /// LogisticRegression does) instead of each against the rest; probabilities are the
    /// softmax of the scores.
    #[arg(long)]
    pub multinomial: bool,
    /// dcd with --loss hinge on labels of more than two values: fit the classes' models
    /// together by Crammer and Singer's multiclass SVM (liblinear's `-s 4`: each row's own
    /// class to outscore every other by a margin of 1) instead of each against the rest.
    #[arg(long)]
    pub crammer_singer: bool,
    /// One-vs-rest with sgd, asgd or casgd: train each class in passes of its own over the data,
    /// instead of every class in one pass (the default, as Vowpal Wabbit's --oaa); each
    /// class's model then equals, bit for bit, the binary model of its relabelled rows.
    #[arg(long)]
    pub separate_class_passes: bool,
    /// Online learners: hold out a share of the training rows (--holdout), score them after
    /// every epoch (their mean loss, weighted as in training), and stop once N epochs in a row
    /// have not lowered it by more than --early-stop-tol of its best; the model is the best
    /// epoch's (Vowpal Wabbit's holdout with `--early_terminate N`, which keeps the best pass's
    /// model too; scikit-learn's `early_stopping` with `n_iter_no_change`). At most --epochs
    /// passes (default 100). One-vs-rest then trains each class in passes of its own, each
    /// stopping on its own.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub early_stop: Option<u32>,
    /// With --early-stop: the share of the rows held out (strictly between 0 and 1, default
    /// 0.1 as scikit-learn's `validation_fraction`), drawn by --seed, by class for a
    /// classification loss (never a class's every row). They are not trained on; the
    /// summary's objective, `--class-weight balanced`, `--scale max-abs` and --cost's λ still
    /// count every row, as scikit-learn computes its balanced weights before its split.
    #[arg(
        long,
        value_name = "SHARE",
        requires = "early_stop",
        allow_negative_numbers = true
    )]
    pub holdout: Option<f64>,
    /// With --early-stop: an epoch improves on the best held-out loss L so far only if its own
    /// is below L − TOL·|L| (default 1e-3, scikit-learn's `tol`, relative here).
    #[arg(
        long,
        value_name = "TOL",
        requires = "early_stop",
        allow_negative_numbers = true
    )]
    pub early_stop_tol: Option<f64>,
    /// lbfgs, sublbfgs and bfgs: L-BFGS memory M.
    #[arg(long, default_value_t = sparselin::batch::DEFAULT_MEMORY)]
    pub memory: usize,
    /// Passes over the data (E·m steps). Default 5 unless --steps is given (100 with
    /// --early-stop, which usually ends the run sooner).
    #[arg(long, conflicts_with = "steps")]
    pub epochs: Option<u64>,
    /// Exactly this many steps.
    #[arg(long)]
    pub steps: Option<u64>,
    /// Step-size offset t₀ in η_t = 1/(λ(t + t₀)); default (‖x‖² + 1)/λ with ‖x‖² the mean
    /// squared norm of 8,192 rows drawn across the data, one per equal stratum, with a fixed
    /// seed (all rows if fewer; for squared and squared-hinge loss the largest norm of every
    /// row, and twice (max‖x‖² + 1)/λ for squared ε-insensitive loss). 0 is the seed's
    /// schedule.
    #[arg(long, allow_negative_numbers = true)]
    pub t0: Option<f64>,
    /// First step t_a included in the average (averaged algorithms).
    #[arg(long, default_value_t = 1)]
    pub average_start: u64,
    /// Leave the bias out of the regularizer (the default regularizes it, as the seed does).
    #[arg(long)]
    pub free_bias: bool,
    /// Batch solvers: fit no bias (b = 0), as liblinear does without `-B` (its default) and
    /// scikit-learn with `fit_intercept=False`; the default fits one, regularized as a feature
    /// of value 1 (liblinear's `-B 1`).
    #[arg(long, conflicts_with_all = ["free_bias", "bias_rate"])]
    pub no_bias: bool,
    /// Online learners with --free-bias: the bias steps by RATE·η_t (default 1, the weights'
    /// step). Bottou's svmsgd/svmasgd and scikit-learn on sparse data use 0.01: the one bias
    /// every row moves otherwise jumps by as much per step as a rarely seen weight.
    #[arg(long, value_name = "RATE", allow_negative_numbers = true)]
    pub bias_rate: Option<f64>,
    /// Order of the examples.
    #[arg(long, default_value = "uniform")]
    pub sampling: Sampling,
    /// Seed of the sampler (and of --cv's folds and --early-stop's held-out rows): same seed,
    /// same model, bit for bit (online learners: with `--threads 1`; several Hogwild workers,
    /// the default, also depend on their timing).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// aerr/aelr/aesvr: attributes k drawn per example for the gradient estimate (each example
    /// costs k + 1 observed attributes). These learners use the squared loss (aesvr: --loss
    /// epsilon-insensitive:δ), no bias and no λ; they make one pass in a seeded random order.
    /// Default: 4, or the feature count if smaller.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub attributes: Option<u64>,
    /// aerr/aelr/aesvr: radius B of the constraint ball (‖w‖₂ ≤ B, or ‖w‖₁ ≤ B for aelr).
    #[arg(long, default_value_t = 1.0)]
    pub radius: f64,
    /// aerr/aelr/aesvr: step size η (default: the theorems' step, MATH.md §8). adagrad: the step
    /// η of its rule w_j = −soft(u_j, tλ₁)/(tλ + (1 + √G_j)/η), u_j and G_j the sums of feature
    /// j's gradients and of their squares (default 1: a feature's first step moves its weight
    /// by less than η/2 for gradients below 1; regression on targets of a larger scale needs a
    /// larger η). From --initial-model the iterates are centred on its weights, and a small η
    /// keeps them near: e.g. 0.01 to go on from a model close to the optimum.
    #[arg(long)]
    pub eta: Option<f64>,
    /// aesvr: width ε of the erf smoothing of the insensitive loss [default: 0.1].
    #[arg(long)]
    pub smoothing: Option<f64>,
    /// Threads, from 1 to 1024 (default: all cores). sgd, asgd and casgd: lock-free Hogwild
    /// workers; with 1 the run is the single-threaded learner's, bit for bit; with more, runs
    /// with the same seed differ by the threads' timing (see `sparselin::online::hogwild`).
    /// Batch solvers: the threads evaluating the objective, the same result for any count.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS as u64))]
    pub threads: Option<u64>,
    /// How Hogwild workers share the per-step scalars (bias and projection sums): per-thread
    /// slots summed by each prediction, or one shared value.
    #[arg(long, default_value = "per-thread")]
    pub scalars: ScalarSharing,
    /// Hogwild workers keep the first N features (the most frequent, on data numbered by
    /// frequency: `gen` corpora, `convert --renumber`) in private copies merged every 256
    /// steps, instead of contending for their cache lines at every step; 0 shares all directly.
    /// Default: 256 (measured: PERF.md `## Hogwild`).
    #[arg(long)]
    pub hot_features: Option<usize>,
    /// Feature count (default: meta.json beside the data, else the largest index seen, + 1
    /// with --zero-based; 2^bits for Vowpal Wabbit text).
    #[arg(long)]
    pub features: Option<usize>,
    #[command(flatten)]
    pub text: TextArgs,
    /// Where to write the model.
    #[arg(short = 'o', long, required_unless_present_any = ["cv", "lambda_grid", "l1_grid", "cost_grid"])]
    pub output: Option<PathBuf>,
    /// Cross-validate instead of training one model (liblinear's `-v K`): deal the rows into K
    /// folds at random (the seed's; stratified by class for the classification losses),
    /// train K models with these settings, each on all folds but one, and print each one's
    /// metrics on the fold it did not see, and their mean. Writes no model.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(2..),
          conflicts_with_all = ["output", "readable", "weights", "test", "trace", "plot",
                                "save_resume"])]
    pub cv: Option<u64>,
    /// Also write the model as text here.
    #[arg(long)]
    pub readable: Option<PathBuf>,
    /// Weight precision in the model file.
    #[arg(long, value_enum, default_value = "f64")]
    pub weights: WeightType,
    /// Held-out data, evaluated at the end, and after every epoch of an online learner or
    /// iteration of a batch solver (its objective and error go into the trace; the time they
    /// take is not counted as training).
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text. Its `seconds` are the training's own
    /// wall time (set-up and evaluations left out); `cpu_seconds` the process CPU time of the
    /// whole training call, all threads (the default t₀'s rows and any --test scoring in).
    #[arg(long)]
    pub json: bool,
    /// Write the trace, a row per epoch or batch iteration (objective, test error, time, and
    /// under --early-stop the held-out loss), as CSV.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Plot the trace (objective, and test error or else the held-out loss, against time) as SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Train across this many MPI processes (`mpirun -np N sparselin train DIR --ranks N`):
    /// each opens its share of the dataset's shards; a communicator of another size is an
    /// error. lbfgs, sublbfgs, subgd and bfgs sum across ranks every iteration; the online
    /// learners train on each share (one thread per rank) and average the models (--average-every).
    /// Labels of more than two values over the ranks train one class after another, each
    /// across the ranks (one-vs-rest).
    #[cfg(feature = "mpi")]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "cv")]
    pub ranks: Option<u64>,
    /// With --ranks, the online learners: average the ranks' models after every epoch and go on
    /// from the average (iterative parameter mixing, one sum per epoch), or once at the end (a
    /// single sum, but further from the single-process model when the shares differ; allows
    /// --threads above 1).
    #[cfg(feature = "mpi")]
    #[arg(long, default_value = "epoch", requires = "ranks")]
    pub average_every: sparselin::dist::online::Averaging,
    /// With --ranks and --average-every epoch: how long each rank's steps are. scaled: t0
    /// scaled by the rank's share of the rows, so that every epoch weighs as in a single run,
    /// each step m/m_r times a single run's; full: the whole t0 on every rank, no step longer
    /// than a single run's (better for hinge loss on small, dense shares; PERF.md).
    #[cfg(feature = "mpi")]
    #[arg(long, default_value = "scaled", requires = "ranks")]
    pub local_steps: sparselin::dist::online::LocalSteps,
    /// With --ranks and --average-every epoch: average K times an epoch (K sums of 2(n + 1)
    /// values an epoch instead of one; closer to the single-process run; needs --epochs).
    #[cfg(feature = "mpi")]
    #[arg(long, value_name = "K", default_value_t = 1, requires = "ranks",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub averages_per_epoch: u64,
    /// The ids of the flags given on the command line (see [`crate::applicable`]).
    #[arg(skip)]
    pub given: Vec<String>,
    /// The model of --resume, read once ([`with_start_models`]).
    #[arg(skip)]
    pub resumed: Option<Model>,
    /// The model of --initial-model, read once ([`with_start_models`]).
    #[arg(skip)]
    pub initial: Option<Model>,
    /// The column scales of the run, in original feature ids, once known
    /// ([`crate::scaling::run_scales`]).
    #[arg(skip)]
    pub column_scales: Option<sparselin::data::column_scales::ColumnScales>,
    /// The training rows' sample weights, read once: --sample-weights, or the dataset's own
    /// ([`with_row_weights`]).
    #[arg(skip)]
    pub row_weights: Option<RowWeights>,
    /// How the training data was formed from Vowpal Wabbit text, if not by VW's defaults,
    /// once read ([`crate::input::vw_features`]): models record it.
    #[arg(skip)]
    pub vw_features: Option<FeatureRules>,
}

impl Args {
    /// What a model's details record under [`VW_FEATURES`]: how its training data was formed
    /// from Vowpal Wabbit text, so that text it scores is read alike.
    pub fn vw_features_detail(&self) -> Option<serde_json::Value> {
        self.vw_features
            .as_ref()
            .map(|rules| serde_json::json!(rules))
    }

    /// Where the training rows' sample weights come from, if they have any.
    pub fn weights_origin(&self) -> Option<&Path> {
        self.row_weights.as_ref().map(|w| w.origin.as_path())
    }
}

/// `args` with the training rows' sample weights read: from --sample-weights, or else those
/// the data carries (`carried`: the importance weights of Vowpal Wabbit text as read) or
/// stores (a dataset's). A learner that weighs no rows (the attribute-efficient ones, which
/// refuse --sample-weights) trains on weighted data with a warning that its weights are not
/// used.
pub fn with_row_weights(mut args: Args, carried: Option<RowWeights>) -> anyhow::Result<Args> {
    let weights = row_weights(args.sample_weights.as_deref(), &args.data, carried)?;
    args.row_weights = match weights {
        Some(_) if args.sample_weights.is_none() && !args.algo.weighs_rows() => {
            errln!(
                "sparselin: warning: {} carries sample weights, which {} does not use: every \
                 row weighs 1",
                args.data.display(),
                args.algo.learner()
            );
            None
        }
        weights => weights,
    };
    Ok(args)
}

impl Algo {
    /// Whether the learner weighs rows by sample weights (all but the attribute-efficient
    /// ones, whose objective has no per-row weights).
    pub fn weighs_rows(self) -> bool {
        !matches!(self.learner(), Learner::AttributeEfficient(_))
    }

    /// The library's learner of this name.
    pub fn learner(self) -> Learner {
        use {batch::Algorithm as B, lao::Algo as L, online::Algorithm as O};
        match self {
            Algo::Sgd => Learner::Online(O::Sgd),
            Algo::Asgd => Learner::Online(O::Asgd),
            Algo::Casgd => Learner::Online(O::Casgd),
            Algo::NaiveSgd => Learner::Online(O::NaiveSgd),
            Algo::NaiveAsgd => Learner::Online(O::NaiveAsgd),
            Algo::NaiveCasgd => Learner::Online(O::NaiveCasgd),
            Algo::Adagrad => Learner::Online(O::Adagrad),
            Algo::NaiveAdagrad => Learner::Online(O::NaiveAdagrad),
            Algo::Lbfgs => Learner::Batch(B::Lbfgs),
            Algo::Sublbfgs => Learner::Batch(B::SubLbfgs),
            Algo::Subgd => Learner::Batch(B::SubGd),
            Algo::Bfgs => Learner::Batch(B::Bfgs),
            Algo::Dcd => Learner::Batch(B::Dcd),
            Algo::Cd => Learner::Batch(B::Cd),
            Algo::Tron => Learner::Batch(B::Tron),
            Algo::Newton => Learner::Batch(B::Newton),
            Algo::Aerr => Learner::AttributeEfficient(L::Aerr),
            Algo::Aelr => Learner::AttributeEfficient(L::Aelr),
            Algo::Aesvr => Learner::AttributeEfficient(L::Aesvr),
        }
    }
}

/// `args` with the models it starts from read once (--initial-model, --resume), and the
/// settings of the resumed run that were not given taken from its model: the algorithm, loss, λ, bias setting, average start, sampling and seed (t₀
/// and the bias rate the library takes from its resume state). Given ones are left for the
/// library to compare with the model's (a sampling or seed given differently draws another
/// order, which is allowed).
pub fn with_start_models(mut args: Args) -> anyhow::Result<Args> {
    anyhow::ensure!(
        args.weights == WeightType::F64 || !(args.save_resume || args.resume.is_some()),
        "a resumable model (--save-resume, --resume) keeps f64 weights: --weights f32 does not \
         apply"
    );
    if let Some(path) = &args.initial_model {
        args.initial = Some(Model::load(path)?);
    }
    let Some(path) = &args.resume else {
        return Ok(args);
    };
    let model = Model::load(path)?;
    let given = |id: &str| args.given.iter().any(|g| g == id);
    // Only a resumable model's settings are a run's to go on with; of any other model the
    // library says that it holds no resume state.
    if let Some(state) = &model.resume {
        if !given("algo")
            && let Ok(algo) = <Algo as clap::ValueEnum>::from_str(&model.info.algorithm, false)
        {
            args.algo = algo;
        }
        if !given("loss") {
            args.loss = model.loss;
        }
        if !given("lambda") {
            args.lambda = model.info.lambda;
        }
        if !given("l1") {
            args.l1 = model.info.l1;
        }
        if !given("free_bias") {
            args.free_bias = !model.info.regularize_bias;
        }
        // The scales, if any, are the model's own (see `scaling::run_scales`).
        anyhow::ensure!(
            args.scale.is_none() || model.column_scales.is_some(),
            "--scale: {} was trained on unscaled features, and a resumed run goes on with its \
             objective",
            path.display()
        );
        if !given("average_start") {
            args.average_start = state.average_start;
        }
        // The order the run drew its rows in, so that a resumed run draws on in it.
        let detail = |key: &str| model.info.details.get(key);
        if !given("sampling")
            && let Some(sampling) = detail("sampling").and_then(|s| s.as_str()?.parse().ok())
        {
            args.sampling = sampling;
        }
        if !given("seed")
            && let Some(seed) = detail("seed").and_then(|s| s.as_u64())
        {
            args.seed = seed;
        }
    }
    args.resumed = Some(model);
    Ok(args)
}

/// Train, save, report.
pub fn run(args: Args) -> anyhow::Result<()> {
    let args = with_start_models(args)?;
    let format = args.text.format(None)?;
    let launched = launcher_size();
    #[cfg(feature = "mpi")]
    if let Some(ranks) = args.ranks {
        return crate::train_mpi::run(with_row_weights(args, None)?, ranks as usize);
    }
    if let Some(size) = launched.filter(|&n| n > 1) {
        anyhow::bail!(
            "started by an MPI launcher as one of {size} processes, but this is a single-process \
             run: every process would train alone and write the same model. {}",
            if cfg!(feature = "mpi") {
                format!("Pass --ranks {size}.")
            } else {
                "This sparselin was built without MPI: rebuild with --features mpi and pass --ranks."
                    .to_string()
            }
        );
    }
    anyhow::ensure!(
        args.lambda_grid.is_empty() || args.cv.is_some(),
        "--lambda-grid compares λ by cross-validation: add --cv K (which writes no model)"
    );
    anyhow::ensure!(
        args.l1_grid.is_empty() || args.cv.is_some(),
        "--l1-grid compares λ₁ by cross-validation: add --cv K (which writes no model)"
    );
    anyhow::ensure!(
        args.cost_grid.is_empty() || args.cv.is_some(),
        "--cost-grid compares C by cross-validation: add --cv K (which writes no model)"
    );
    anyhow::ensure!(
        !args.cold_grid
            || [&args.lambda_grid, &args.l1_grid, &args.cost_grid]
                .iter()
                .any(|grid| !grid.is_empty()),
        "--cold-grid starts each value of a grid from zero: add --lambda-grid, --cost-grid or \
         --l1-grid (with --cv K)"
    );
    if let Some(folds) = args.cv {
        let folds = usize::try_from(folds).context("--cv: too many folds")?;
        return crate::cross_validation::run(args, format, folds);
    }
    check_inputs(&args)?;
    check_outputs(&args)?;
    let Input { examples, weights } = read_examples(&args.data, args.features, &format)?;
    let mut args = with_row_weights(args, weights)?;
    args.vw_features = vw_features(&examples, &format);
    args.column_scales = scaling::run_scales(&args, &examples, &Local)?;
    // From here on the run sees the scaled columns, if it scales, and so do its summaries;
    // the model file is of the original ones.
    let examples = scaling::scaled(examples, &args, &args.data)?;
    with_lambda_of_cost(&mut args, examples.n_rows())?;
    let data = &examples;
    let test = match &args.test {
        // Its own feature count: features it has and the training data lack weigh 0.
        Some(path) => {
            let test = read_examples(path, None, &format)?.examples;
            anyhow::ensure!(
                test.n_rows() > 0,
                "{}: no rows to evaluate (every --test metric would be 0 or undefined)",
                sparselin::data::error::name(path)
            );
            Some(scaling::scaled(test, &args, path)?)
        }
        None => None,
    };
    let trainer = trainer(&args)?;
    let rows = weighted_rows(&args, &trainer, data)?;
    if trains_one_vs_rest(&args, data) {
        return crate::train_one_vs_rest::run(&args, &trainer, data, test.as_ref());
    }
    if let (Some(test), Some(path), true) = (&test, &args.test, classifies(&args)) {
        refuse_unscorable_labels(args.loss, test, path, "test labels")?;
    }
    // The weights the epochs' objectives need; without --class-weight there is nothing to
    // compute (and the classes are counted once, by the training).
    let loss = match args.class_weight {
        None => WeightedLoss::from(args.loss),
        Some(_) => trainer
            .weighted_loss_for(data)
            .with_context(|| format!("training on {}", args.data.display()))?,
    };
    let mut progress = Progress::new(&args, loss, &rows, test.as_ref());
    let cpu = cpu_time::ProcessTime::try_now().ok();
    let mut training = trainer
        .train_monitored(data, &mut progress)
        .with_context(|| format!("training on {}", args.data.display()))?;
    if args.weights == WeightType::F32 {
        // The summary describes the model as written: its weights rounded to f32.
        for w in &mut training.model.weights {
            *w = f64::from(*w as f32);
        }
    }
    let cpu_seconds = cpu
        .and_then(|start| start.try_elapsed().ok())
        .map(|d| d.as_secs_f64());
    progress.bar.finish_and_clear();
    if let Some(rules) = args.vw_features_detail() {
        let details = &mut training.model.info.details;
        details.insert(VW_FEATURES.to_string(), rules);
    }
    let written = scaling::to_write(training.model.clone(), &args);
    write_outputs(&args, &written, Some(&progress.trace))?;
    report(&args, &rows, test.as_ref(), &training, cpu_seconds)
}

/// The training rows as the objective weighs them: with the trainer's sample weights, if any,
/// which must be one per row (an error naming the weight file and the data otherwise).
pub fn weighted_rows<'a>(
    args: &Args,
    trainer: &'a Trainer,
    data: &'a ExampleSet,
) -> anyhow::Result<TrainingRows<'a>> {
    let weighted = match (trainer.sample_weights_given(), args.weights_origin()) {
        (Some(weights), Some(path)) => {
            Some(SampleWeighted::new(data, weights).with_context(|| {
                format!(
                    "{}: the weights of the training rows of {}",
                    path.display(),
                    args.data.display()
                )
            })?)
        }
        _ => None,
    };
    Ok(TrainingRows { data, weighted })
}

/// The training data, with the sample weights of its rows if it has any.
pub struct TrainingRows<'a> {
    /// The rows.
    pub data: &'a ExampleSet,
    weighted: Option<SampleWeighted<'a, &'a ExampleSet>>,
}

impl TrainingRows<'_> {
    /// [`metrics::evaluate`] of (w, b) on the rows, the objective weighing them.
    pub fn evaluate(
        &self,
        loss: WeightedLoss,
        penalty: f64,
        weights: &[f64],
        bias: f64,
    ) -> Evaluation {
        match &self.weighted {
            Some(rows) => metrics::evaluate_with_penalty(loss, penalty, weights, bias, rows),
            None => metrics::evaluate_with_penalty(loss, penalty, weights, bias, self.data),
        }
    }
}

/// The job size an MPI launcher announces in the environment (Open MPI, MPICH/Hydra).
pub fn launcher_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
}

/// Epochs of an online run without --epochs or --steps.
fn default_epochs(args: &Args) -> u64 {
    match args.early_stop {
        Some(_) => EarlyStopping::DEFAULT_MAX_EPOCHS,
        None => sparselin::api::DEFAULT_EPOCHS,
    }
}

/// The [`Trainer`] the flags describe: each family gets only the flags it uses, and a flag
/// given for another family is refused ([`applicable`]).
pub fn trainer(args: &Args) -> anyhow::Result<Trainer> {
    applicable::refuse_flags_that_do_not_apply(args)?;
    let learner = args.algo.learner();
    let trainer = Trainer::new(learner)
        .lambda(args.lambda)
        .l1(args.l1)
        .seed(args.seed);
    let trainer = match args.cost {
        Some(cost) => trainer.cost(positive("--cost", cost)?),
        None => trainer,
    };
    Ok(match learner {
        Learner::Online(algorithm) => {
            let trainer = match &args.initial {
                Some(model) => trainer.initial_model(scaling::as_start(model.clone(), args)),
                None => trainer,
            };
            let trainer = match &args.resumed {
                Some(model) => trainer.resume(scaling::as_start(model.clone(), args)),
                None => trainer.save_resume(args.save_resume),
            };
            let trainer = with_weights(trainer, args)
                .loss(args.loss)
                .regularize_bias(!args.free_bias)
                .sampling(args.sampling)
                .classes_in_one_pass(!args.separate_class_passes);
            let trainer = match algorithm.averages() {
                true => trainer.average_start(args.average_start),
                false => trainer,
            };
            let trainer = match (args.steps, args.epochs) {
                (Some(t), _) => trainer.steps(t),
                (None, e) => trainer.epochs(e.unwrap_or(default_epochs(args))),
            };
            let trainer = match args.early_stop {
                Some(patience) => trainer.early_stopping(EarlyStopping {
                    patience,
                    holdout: args.holdout.unwrap_or(EarlyStopping::DEFAULT_HOLDOUT),
                    tolerance: args
                        .early_stop_tol
                        .unwrap_or(EarlyStopping::DEFAULT_TOLERANCE),
                }),
                None => trainer,
            };
            let trainer = match args.t0 {
                Some(t0) => trainer.t0(t0),
                None => trainer,
            };
            let trainer = match args.bias_rate {
                Some(rate) => trainer.bias_rate(positive("--bias-rate", rate)?),
                None => trainer,
            };
            let trainer = match args.eta {
                Some(eta) => trainer.eta(positive("--eta", eta)?),
                None => trainer,
            };
            let parallel = algorithm.has_hogwild();
            let trainer = match args.threads {
                Some(n) => trainer.threads(usize::try_from(n).unwrap_or(usize::MAX)),
                // An L1 term's truncation runs on one thread.
                None if parallel && args.l1 == 0.0 && args.l1_grid.is_empty() => {
                    trainer.threads(hogwild::available_threads())
                }
                None => trainer,
            };
            match (parallel, args.hot_features) {
                (false, _) => trainer,
                (true, None) => trainer.scalar_sharing(args.scalars),
                (true, Some(features)) => {
                    trainer.scalar_sharing(args.scalars).hot_features(features)
                }
            }
        }
        Learner::Batch(algorithm) => {
            let trainer = with_weights(trainer, args);
            let trainer = match args.warm_start_epochs {
                Some(epochs) => trainer.warm_start_epochs(epochs),
                None => trainer,
            };
            let trainer = match &args.initial {
                Some(model) => trainer.initial_model(scaling::as_start(model.clone(), args)),
                None => trainer,
            };
            let trainer = match args.threads {
                Some(n) => trainer.threads(usize::try_from(n).unwrap_or(usize::MAX)),
                None => trainer,
            }
            .loss(args.loss)
            .regularize_bias(!args.free_bias)
            .fit_bias(!args.no_bias)
            .max_iterations(args.max_iter);
            let trainer = match args.tol {
                Some(tol) => trainer.tolerance(tol),
                None => trainer,
            };
            let trainer = match algorithm.has_memory() {
                true => trainer.memory(args.memory),
                false => trainer,
            };
            let trainer =
                (trainer.multinomial(args.multinomial)).crammer_singer(args.crammer_singer);
            match algorithm.is_primal() {
                true => trainer.exact_direction(args.exact_direction),
                false => trainer,
            }
        }
        Learner::AttributeEfficient(algo) => {
            // The flags are checked here to name them; the library checks the values again.
            let trainer = match args.attributes {
                Some(k) => trainer.attributes(usize::try_from(k).unwrap_or(usize::MAX)),
                None => trainer,
            }
            .radius(positive("--radius", args.radius)?);
            let trainer = match args.eta {
                Some(eta) => trainer.eta(positive("--eta", eta)?),
                None => trainer,
            };
            if algo != lao::Algo::Aesvr {
                // AERR and AELR learn the squared loss (`applicable` refuses any other).
                return Ok(trainer);
            }
            let trainer = match args.smoothing {
                Some(width) => trainer.smoothing(positive("--smoothing", width)?),
                None => trainer,
            };
            // Without --loss, the library's default insensitivity.
            if !args.given.iter().any(|id| id == "loss") {
                return Ok(trainer);
            }
            anyhow::ensure!(
                matches!(args.loss, Loss::EpsilonInsensitive(_)),
                "aesvr learns the ε-insensitive loss: pass --loss epsilon-insensitive:δ (got {})",
                args.loss
            );
            trainer.loss(args.loss)
        }
    })
}

/// `trainer` with --class-weight and the rows' sample weights, if given.
fn with_weights(trainer: Trainer, args: &Args) -> Trainer {
    let trainer = match &args.class_weight {
        Some(weighting) => trainer.class_weights(weighting.clone()),
        None => trainer,
    };
    match &args.row_weights {
        Some(row_weights) => trainer.sample_weights(row_weights.weights.clone()),
        None => trainer,
    }
}

/// `value`, or an error naming `flag` unless it is positive and finite.
pub(crate) fn positive(flag: &str, value: f64) -> anyhow::Result<f64> {
    anyhow::ensure!(
        value > 0.0 && value.is_finite(),
        "{flag} must be positive and finite, got {value}"
    );
    Ok(value)
}

/// The progress bar and per-epoch evaluation of the online learners, the per-iteration lines of
/// the batch solvers, and the trace of either.
struct Progress<'a> {
    bar: ProgressBar,
    /// The training rows (and their sample weights, if any).
    rows: &'a TrainingRows<'a>,
    test: Option<&'a ExampleSet>,
    args: &'a Args,
    /// The loss and class weights the epochs' objectives are measured with.
    loss: WeightedLoss,
    epoch_every: u64,
    trace: Vec<TraceRow>,
}

impl<'a> Progress<'a> {
    fn new(
        args: &'a Args,
        loss: WeightedLoss,
        rows: &'a TrainingRows<'a>,
        test: Option<&'a ExampleSet>,
    ) -> Self {
        let data = rows.data;
        // Under early stopping an epoch is a pass over the rows not held out.
        let held_out = args.early_stop.map_or(0.0, |_| {
            args.holdout.unwrap_or(EarlyStopping::DEFAULT_HOLDOUT)
        });
        let epoch_every = ((data.n_rows() as f64 * (1.0 - held_out)).round() as u64).max(1);
        let steps = match (args.steps, args.epochs) {
            (Some(t), _) => t,
            (None, e) => e
                .unwrap_or(default_epochs(args))
                .saturating_mul(epoch_every),
        };
        let bar = match args.algo.learner() {
            Learner::Online(_) if !args.quiet => {
                ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stderr())
            }
            _ => ProgressBar::hidden(),
        };
        bar.set_style(crate::progress::style(
            "{elapsed_precise} {bar:30} {human_pos}/{human_len} steps, {rate} {msg}",
        ));
        Progress {
            bar,
            rows,
            test,
            args,
            loss,
            epoch_every,
            trace: Vec::new(),
        }
    }
}

impl Observer for Progress<'_> {
    fn progress(&mut self, steps: u64, mean_loss: f64) {
        self.bar.set_position(steps);
        self.bar.set_message(format!(
            "epoch {:.2}, loss ≈ {}",
            steps as f64 / self.epoch_every as f64,
            decimal(mean_loss, 5)
        ));
    }

    fn steps(&mut self, steps: u64) {
        self.bar.set_position(steps);
    }

    fn wants_epochs(&self) -> bool {
        self.scores_epochs() || (self.args.early_stop.is_some() && !self.args.quiet)
    }

    fn epoch_end(&mut self, end: &EpochEnd<'_>) {
        if !self.scores_epochs() {
            // Early stopping's held-out loss alone: no pass over the training rows for it.
            if let Some(loss) = end.held_out_loss {
                self.bar.set_position(end.steps);
                self.bar.println(format!(
                    "epoch {:.2}: held-out loss {}",
                    end.epochs,
                    decimal(loss, 6)
                ));
            }
            return;
        }
        let w = end.snapshot.output();
        let penalty = self.penalty().value(&w.weights, w.bias);
        let train = self.rows.evaluate(self.loss, penalty, &w.weights, w.bias);
        let test = self.evaluate_test(&w.weights, w.bias);
        self.bar.set_position(end.steps);
        self.bar.println(format!(
            "epoch {:.2}: objective {}{}{}",
            end.epochs,
            decimal(train.objective, 6),
            end.held_out_loss
                .map(|loss| format!(", held-out loss {}", decimal(loss, 6)))
                .unwrap_or_default(),
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
            gap: None,
            held_out_loss: end.held_out_loss,
        });
    }
}

impl Progress<'_> {
    /// Whether each epoch's iterate is scored on the training rows (and the test rows): for
    /// `--test`, the trace or the plot.
    fn scores_epochs(&self) -> bool {
        self.test.is_some() || self.args.trace.is_some() || self.args.plot.is_some()
    }

    /// F(w, b) and the metrics of `d`, for weights in the training data's columns.
    fn evaluate(&self, d: &ExampleSet, weights: &[f64], bias: f64) -> Evaluation {
        metrics::evaluate(self.loss, self.penalty(), weights, bias, d)
    }

    /// The objective's regularization, as the arguments set it.
    fn penalty(&self) -> Penalty {
        Penalty {
            lambda: self.args.lambda,
            l1: self.args.l1,
            regularize_bias: !self.args.free_bias,
        }
    }

    /// The same on the test data, if any (moving the weights to its columns when it is
    /// numbered differently; features the training data lack weigh 0 either way).
    fn evaluate_test(&self, weights: &[f64], bias: f64) -> Option<Evaluation> {
        self.test.map(|t| {
            let data = self.rows.data;
            if t.feature_permutation() == data.feature_permutation() {
                self.evaluate(t, weights, bias)
            } else {
                self.evaluate(t, &renumber(weights, data, t), bias)
            }
        })
    }
}

impl Monitor for Progress<'_> {
    fn iteration(&mut self, p: &batch::Progress<'_>) {
        // The iterate is the weights of the training data's columns, then the bias.
        let n = self.rows.data.n_features().min(p.w.len());
        let test = self.evaluate_test(&p.w[..n], p.w.get(n).copied().unwrap_or(0.0));
        if !self.args.quiet {
            errln!(
                "iteration {:>5}  objective {:.12e}  gap {:.3e}  {:.3} s  {:.2} passes{}",
                p.iteration,
                p.objective,
                p.gap,
                p.seconds,
                p.passes,
                test.as_ref()
                    .map(|t| format!("  test {}", headline(t)))
                    .unwrap_or_default()
            );
        }
        let row = TraceRow {
            epochs: p.passes,
            steps: p.iteration as u64,
            seconds: p.seconds,
            train_objective: p.objective,
            test_objective: test.as_ref().map(|t| t.objective),
            test_error: test.as_ref().and_then(|t| t.error_rate.or(t.rmse)),
            gap: Some(p.gap),
            held_out_loss: None,
        };
        // A second report of the same iteration (subLBFGS's aggregate subgradient gave a
        // smaller certificate at the same point) replaces the first: one row per iteration.
        match self.trace.last_mut() {
            Some(last) if last.steps == row.steps && last.gap.is_some() => *last = row,
            _ => self.trace.push(row),
        }
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

/// "error 0.0123", "pinball 0.31, coverage 0.897" (quantile regression) or "rmse 0.45, r2
/// 0.61" (R² where the labels vary; led by "deviance 2.1, " for Poisson regression).
fn headline(e: &Evaluation) -> String {
    match (e.error_rate, e.coverage, e.rmse) {
        (Some(err), _, _) => format!("error {err:.5}"),
        (None, Some(coverage), _) => format!(
            "pinball {}, coverage {}",
            decimal(e.mean_loss, 5),
            decimal(coverage, 4)
        ),
        (None, None, Some(rmse)) => {
            let deviance = (e.poisson_deviance).map(|d| format!("deviance {}, ", decimal(d, 5)));
            let fit = match e.r2 {
                Some(r2) => format!("rmse {}, r2 {}", decimal(rmse, 5), decimal(r2, 5)),
                None => format!("rmse {}", decimal(rmse, 5)),
            };
            deviance.unwrap_or_default() + &fit
        }
        _ => String::new(),
    }
}

/// What one output file of a training run holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    Model,
    Readable,
    Trace,
    Plot,
}

impl Output {
    /// The flag that names this output's path.
    fn flag(self) -> &'static str {
        match self {
            Output::Model => "-o",
            Output::Readable => "--readable",
            Output::Trace => "--trace",
            Output::Plot => "--plot",
        }
    }
}

/// The files a training run writes: the model, and the text form, trace and plot if asked.
fn outputs(args: &Args) -> Vec<(Output, &Path)> {
    let asked = [
        (Output::Readable, &args.readable),
        (Output::Trace, &args.trace),
        (Output::Plot, &args.plot),
    ];
    let mut all: Vec<_> = args
        .output
        .iter()
        .map(|p| (Output::Model, p.as_path()))
        .collect();
    all.extend(
        asked
            .into_iter()
            .filter_map(|(what, path)| Some((what, path.as_deref()?))),
    );
    all
}

fn open_output(path: &Path) -> anyhow::Result<OutputFile> {
    OutputFile::create(path).with_context(|| format!("writing {}", path.display()))
}

/// Refuses a run that would read standard input twice, or write an output over a file it
/// reads: its training or test data, sample weights, or the model it starts from (which only
/// the new model may replace, as Vowpal Wabbit's `-i m -f m` does: the model is read whole
/// before training, and replaced only once the run has succeeded).
fn check_inputs(args: &Args) -> anyhow::Result<()> {
    let stdin = Path::new("-");
    if args.data == stdin && args.test.as_deref() == Some(stdin) {
        anyhow::bail!(
            "the training data and --test both name standard input (-), which can be read once"
        );
    }
    let inputs = [
        ("the training data", Some(&args.data), false),
        ("the --test data", args.test.as_ref(), false),
        (
            "the --sample-weights file",
            args.sample_weights.as_ref(),
            false,
        ),
        ("the --initial-model", args.initial_model.as_ref(), true),
        ("the --resume model", args.resume.as_ref(), true),
    ];
    for (what, path) in outputs(args) {
        for &(input, input_path, is_model) in &inputs {
            let Some(input_path) = input_path.filter(|_| !(is_model && what == Output::Model))
            else {
                continue;
            };
            if sparselin::output::would_replace(path, input_path) {
                anyhow::bail!(
                    "{} {} would overwrite {input} ({}): choose another output path",
                    what.flag(),
                    path.display(),
                    input_path.display()
                );
            }
        }
    }
    Ok(())
}

/// Try every output path before training (a temporary opened and removed), so that one that
/// cannot be written fails at once rather than after the run, and an interrupted run leaves
/// no temporary behind. Two outputs may not name the same file: the second would replace the
/// first.
fn check_outputs(args: &Args) -> anyhow::Result<()> {
    let mut seen: Vec<(Output, PathBuf)> = Vec::new();
    for (what, path) in outputs(args) {
        drop(open_output(path)?);
        let place = sparselin::output::written_path(path);
        if let Some((first, _)) = seen.iter().find(|(_, p)| *p == place) {
            anyhow::bail!(
                "{} and {} both name {}: each output needs a path of its own",
                first.flag(),
                what.flag(),
                path.display()
            );
        }
        seen.push((what, place));
    }
    Ok(())
}

/// Write every output under a temporary name, then move them all into place: a run that
/// fails replaces none of them. The model is at the requested precision; the trace and its
/// plot are written when there is a trace (distributed runs have none).
pub(crate) fn write_outputs(
    args: &Args,
    model: &Model,
    trace: Option<&[TraceRow]>,
) -> anyhow::Result<()> {
    let precision = match args.weights {
        WeightType::F64 => Precision::F64,
        WeightType::F32 => Precision::F32,
    };
    let error_name = if args.loss.is_classification() {
        "test error rate"
    } else {
        "test RMSE"
    };
    let mut written = Vec::new();
    for (what, path) in outputs(args) {
        let bytes = match (what, trace) {
            (Output::Model, _) => model.encode(precision, path)?,
            (Output::Readable, _) => model.to_readable().into_bytes(),
            (Output::Trace, Some(rows)) => trace::csv(rows).into_bytes(),
            (Output::Plot, Some(rows)) => trace::plot(rows, error_name)
                .with_context(|| path.display().to_string())?
                .into_bytes(),
            (Output::Trace | Output::Plot, None) => continue,
        };
        let mut file = open_output(path)?;
        file.write_all(&bytes)
            .and_then(|()| file.sync())
            .with_context(|| format!("writing {}", path.display()))?;
        written.push((file, path));
    }
    for (file, path) in written {
        file.commit()
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Print the summary of a finished run (its files are written).
fn report(
    args: &Args,
    rows: &TrainingRows<'_>,
    test: Option<&ExampleSet>,
    trained: &Training,
    cpu_seconds: Option<f64>,
) -> anyhow::Result<()> {
    let model = &trained.model;
    let scaled = args.column_scales.is_some();
    warn_if_unconverged(model, "", scaled);
    // The model is in original feature ids; the data may be renumbered, or wider.
    let loss = model.weighted_loss()?;
    let penalty = model.info.penalty();
    let weights_for = |d: &ExampleSet| model.weights_for(d.n_features(), d.feature_permutation());
    let data = rows.data;
    let penalty_value = model.penalty_value();
    let train_eval = rows.evaluate(loss, penalty_value, &weights_for(data), model.bias);
    if !train_eval.objective.is_finite() {
        // Finite weights whose scores overflow (values near 1e300): the model is written,
        // but it scores nothing usefully.
        errln!(
            "sparselin: warning: the model's training objective is {}: its scores overflow \
             (scale the features: `--scale max-abs`)",
            train_eval.objective
        );
    }
    if let (Learner::Online(_), Some(error)) = (args.algo.learner(), train_eval.error_rate) {
        warn_if_no_better_than_a_constant(error, data, scaled);
    }
    let test_eval = test.map(|d| {
        metrics::evaluate_with_penalty(loss, penalty_value, &weights_for(d), model.bias, d)
    });
    let per_second = trained.examples as f64 / trained.seconds.max(1e-12);
    if args.json {
        let summary = json!({
            "algorithm": model.info.algorithm,
            "loss": model.loss.to_string(),
            "lambda": model.info.lambda,
            "l1": model.info.l1,
            "regularize_bias": model.info.regularize_bias,
            "class_weights": model.info.class_weights,
            "sample_weights": args.weights_origin(),
            "cost": args.cost,
            "scale": scale_name(args),
            "details": model.info.details,
            "rows": data.n_rows(),
            "features": data.n_features(),
            "nnz": data.nnz(),
            "seconds": trained.seconds,
            "cpu_seconds": cpu_seconds,
            "examples_per_second": per_second,
            "train": train_eval,
            "test": test_eval,
            "model": args.output,
        });
        outln!("{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        let weights = &model.info.class_weights;
        outln!(
            "{} ({}, {}{}{}{}{}): {} examples in {:.3} s ({:.0}/s)",
            model.info.algorithm,
            model.loss,
            penalty,
            title_notes(args),
            if weights.is_unit() {
                String::new()
            } else {
                format!(", class weights {weights}")
            },
            match args.weights_origin() {
                Some(path) => format!(", sample weights {}", path.display()),
                None => String::new(),
            },
            match model.info.details.get("resumed_at") {
                Some(t) => format!("; resumed after step {t}"),
                None => String::new(),
            },
            trained.examples,
            trained.seconds,
            per_second
        )?;
        outln!(
            "train objective {}{}",
            decimal(train_eval.objective, 10),
            eval_tail(&train_eval)
        )?;
        if let Some(line) = early_stopping_line(model) {
            outln!("{line}")?;
        }
        if let Some(t) = &test_eval {
            outln!(
                "test objective {}{}",
                decimal(t.objective, 10),
                eval_tail(t)
            )?;
        }
        if let Some(path) = &args.output {
            outln!("model written to {}", path.display())?;
        }
    }
    Ok(())
}

/// An epoch count as printed: whole, or to two places for a partial last epoch (`--steps`).
pub(crate) fn epoch_count(epoch: f64) -> String {
    decimal(epoch, if epoch.fract() == 0.0 { 0 } else { 2 })
}

/// What early stopping did: the epoch it kept of those run, the held-out loss there, and why
/// the run ended.
pub(crate) fn early_stopping_line(model: &Model) -> Option<String> {
    let report = model.info.details.get("early_stopping")?;
    let count = |key: &str, one: &str, many: &str| match report[key].as_u64() {
        Some(1) => format!("1 {one}"),
        n => format!("{} {many}", n.unwrap_or_default()),
    };
    let best = match report["best_epoch"].as_f64() {
        Some(epoch) => format!(
            "kept epoch {} of {} run (held-out loss {} on {})",
            epoch_count(epoch),
            report["epochs_run"],
            decimal(report["best_held_out_loss"].as_f64()?, 6),
            count("held_out_rows", "row", "rows")
        ),
        None => format!(
            "no epoch of {} scored a finite held-out loss",
            report["epochs_run"]
        ),
    };
    let end = match report["stopped"].as_bool()? {
        true => format!(
            "stopped once {} in a row lowered the lowest held-out loss by no more than the \
             tolerance",
            count("patience", "epoch", "epochs")
        ),
        false => "the epoch limit came first".into(),
    };
    Some(format!("early stopping: {best}; {end}"))
}

/// `args` with λ from --cost, if given, for training on `rows` rows (every rank's): what
/// the trainer resolves it to ([`Trainer::cost`]), for the objectives the progress reports.
pub(crate) fn with_lambda_of_cost(args: &mut Args, rows: usize) -> anyhow::Result<()> {
    if let Some(cost) = args.cost {
        args.lambda = sparselin::api::lambda_for_cost(positive("--cost", cost)?, rows);
    }
    Ok(())
}

/// ", C = 1, features scaled by max-abs": the settings a summary's title adds to the
/// objective's λ (the C it came from) and loss, where given; empty otherwise.
pub(crate) fn title_notes(args: &Args) -> String {
    let cost = args.cost.map(|c| format!(", C = {c}")).unwrap_or_default();
    let scale = scale_name(args)
        .map(|how| format!(", features scaled by {how}"))
        .unwrap_or_default();
    cost + &scale
}

/// How the run scaled the features (`max-abs`), if it did.
pub(crate) fn scale_name(args: &Args) -> Option<&'static str> {
    args.column_scales
        .as_ref()
        .map(|_| sparselin::data::column_scales::MAX_ABS)
}

/// Whether a run of `args` classifies: a classification loss, and a learner other than the
/// attribute-efficient ones (regressions, whatever --loss says).
pub(crate) fn classifies(args: &Args) -> bool {
    !matches!(args.algo.learner(), Learner::AttributeEfficient(_)) && args.loss.is_classification()
}

/// Whether a run of `args` on `data` trains one model per class: it classifies, and the
/// labels take more than two values.
pub(crate) fn trains_one_vs_rest(args: &Args, data: &ExampleSet) -> bool {
    classifies(args) && metrics::more_than_two_values(&metrics::labels(data)).is_some()
}

/// Warn when an online learner's model errs on its training rows at least as often as always
/// predicting the larger class would: it has learned nothing usable, and says so no other way
/// (on spambase's unscaled features ASGD ends at 0.47 training error against 0.39 for the
/// constant: steps sized for the large-valued features barely move the others).
fn warn_if_no_better_than_a_constant(error: f64, data: &ExampleSet, scaled: bool) {
    let labels = metrics::labels(data);
    let positive = labels.iter().filter(|&&y| y > 0.0).count();
    let constant = positive.min(labels.len() - positive) as f64 / labels.len().max(1) as f64;
    if constant > 0.0 && error >= constant {
        let cure = match scaled {
            true => "a batch solver (`--algo cd`, `lbfgs`, `dcd` or `sublbfgs`) may do better",
            false => {
                "where the features' scales differ by orders of magnitude, `--scale max-abs` or \
                 a batch solver (`--algo cd`, `lbfgs`, `dcd` or `sublbfgs`) may do better"
            }
        };
        errln!(
            "sparselin: warning: the model's training error {error:.5} is no lower than always \
             predicting the larger class ({constant:.5}); {cure}"
        );
    }
}

/// Warn, `whose` (e.g. "class 3: ") first, when a batch solver stopped before converging:
/// what liblinear's "reaching max number of iterations" and scikit-learn's
/// ConvergenceWarning tell, the model being the best iterate, not a certified optimum.
/// `scaled`: the run scaled the features (so a hint to scale them is moot).
pub(crate) fn warn_if_unconverged(model: &Model, whose: &str, scaled: bool) {
    if let Some(stop) = unconverged_stop(&model.info.details) {
        let details = &model.info.details;
        let number = |key: &str| details.get(key).and_then(serde_json::Value::as_f64);
        let certified = match (number("gap"), number("objective")) {
            (Some(gap), Some(objective)) if objective > 0.0 => {
                format!(
                    ", its certificate bounding J − J* by {:.1e}·J",
                    gap / objective
                )
            }
            _ => String::new(),
        };
        // L-BFGS crawls where the features' scales differ by orders of magnitude; newGLMNET's
        // Newton steps do not (spambase, log loss, λ = 1e-4: lbfgs stops at 1,000 iterations,
        // cd converges in 42).
        let multinomial = details.get("multinomial") == Some(&serde_json::Value::Bool(true));
        let lbfgs = model.info.algorithm == "lbfgs" && !multinomial;
        let hint = match lbfgs && stop == "max-iterations" && !scaled {
            true => {
                " (where the features' scales differ by orders of magnitude, `--scale max-abs`, \
                 or `--algo cd`, coordinate descent on Newton steps, which they do not slow, \
                 may converge)"
            }
            false => "",
        };
        errln!(
            "sparselin: warning: {whose}{} stopped before converging ({stop} after {} \
             iterations{certified}); the model is the best iterate found{hint}",
            model.info.algorithm,
            details["iterations"]
        );
    }
}

/// A batch solver's stop other than `converged` (online learners stop after their steps and
/// record none).
fn unconverged_stop(details: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    details
        .get("stop")
        .and_then(|stop| stop.as_str())
        .filter(|&stop| stop != "converged")
}

/// ", " and the [`headline`] (empty where it is).
pub(crate) fn eval_tail(e: &Evaluation) -> String {
    let h = headline(e);
    if h.is_empty() { h } else { format!(", {h}") }
}
