//! Configuration and the training loop shared by every online learner.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rand_core::{Rng, SeedableRng};

use super::casgd::mean_example;
use super::lookahead::prefetch_upcoming;
use super::{
    Adagrad, AdagradRule, Asgd, Casgd, Iterate, Learner, Naive, NaiveAdagrad, NaiveKind,
    RunningHarmonic, Sampler, Sampling, Schedule, Sgd, Snapshot,
};

use crate::data::Examples;
use crate::loss::{ClassWeightError, ClassWeights, Loss, WeightedLoss};
use crate::memory::AllocError;

/// Which online learner to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Algorithm 1, O(k) per step; outputs the last iterate.
    Sgd,
    /// Algorithm 2, O(k) per step; outputs the averaged iterate.
    Asgd,
    /// Algorithm 3, O(k) per step; outputs the averaged iterate with the implicit bias.
    Casgd,
    /// The O(n)-per-step baseline of [`Algorithm::Sgd`].
    NaiveSgd,
    /// The O(n)-per-step baseline of [`Algorithm::Asgd`].
    NaiveAsgd,
    /// The O(n)-per-step baseline of [`Algorithm::Casgd`].
    NaiveCasgd,
    /// AdaGrad in its dual averaging form ([`super::Adagrad`]), O(k) per step; outputs the
    /// last iterate.
    Adagrad,
    /// The O(n)-per-step baseline of [`Algorithm::Adagrad`].
    NaiveAdagrad,
}

impl Algorithm {
    /// Every algorithm, fast ones first.
    pub const ALL: [Algorithm; 8] = [
        Algorithm::Sgd,
        Algorithm::Asgd,
        Algorithm::Casgd,
        Algorithm::Adagrad,
        Algorithm::NaiveSgd,
        Algorithm::NaiveAsgd,
        Algorithm::NaiveCasgd,
        Algorithm::NaiveAdagrad,
    ];

    /// The name used on the command line and in model files.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Sgd => "sgd",
            Algorithm::Asgd => "asgd",
            Algorithm::Casgd => "casgd",
            Algorithm::NaiveSgd => "naive-sgd",
            Algorithm::NaiveAsgd => "naive-asgd",
            Algorithm::NaiveCasgd => "naive-casgd",
            Algorithm::Adagrad => "adagrad",
            Algorithm::NaiveAdagrad => "naive-adagrad",
        }
    }

    /// Whether it averages its iterates (ASGD, CASGD and their baselines), so that an
    /// averaging start applies.
    pub fn averages(self) -> bool {
        matches!(
            self,
            Algorithm::Asgd | Algorithm::Casgd | Algorithm::NaiveAsgd | Algorithm::NaiveCasgd
        )
    }

    /// Whether it steps with AdaGrad's per-feature sizes (its η, no t₀ or bias rate) rather
    /// than the schedule η_t = 1/(λ(t + t₀)).
    pub fn is_adagrad(self) -> bool {
        matches!(self, Algorithm::Adagrad | Algorithm::NaiveAdagrad)
    }

    /// Whether it takes an L1 term: SGD (truncated steps), AdaGrad and their baselines.
    pub fn has_l1(self) -> bool {
        matches!(
            self,
            Algorithm::Sgd | Algorithm::NaiveSgd | Algorithm::Adagrad | Algorithm::NaiveAdagrad
        )
    }

    /// Whether it runs on Hogwild workers ([`crate::online::hogwild`]): the O(k) learners;
    /// the O(n) baselines run on one thread.
    pub fn has_hogwild(self) -> bool {
        matches!(self, Algorithm::Sgd | Algorithm::Asgd | Algorithm::Casgd)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown online algorithm '{s}'"))
    }
}

/// When training stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After exactly T steps.
    Steps(u64),
    /// After E passes' worth of steps (E·m).
    Epochs(u64),
}

/// Everything that determines a run: same config and data, same model, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// The loss ℓ.
    pub loss: Loss,
    /// The weights of the classes' losses (unit for none; only a classification loss takes
    /// others).
    pub class_weights: ClassWeights,
    /// λ > 0 (λ ≥ 0 for AdaGrad).
    pub lambda: f64,
    /// λ₁ ≥ 0 of an L1 term λ₁(‖w‖₁ + |b|) (0: none; SGD, AdaGrad and their baselines only).
    /// SGD soft-thresholds the weights by η_t·λ₁ after each step (truncated gradient), lazily
    /// in O(k); AdaGrad's iterate minimizes a model with the term itself.
    pub l1: f64,
    /// Step-size offset t₀ ≥ 0; `None` picks [`default_t0`] (AdaGrad: `None`, it has none).
    pub t0: Option<f64>,
    /// AdaGrad's step η > 0; `None` picks [`super::AdagradRule::DEFAULT_ETA`] (the other
    /// learners: `None`, they step by the schedule).
    pub eta: Option<f64>,
    /// First averaged step t_a ≥ 1.
    pub average_start: u64,
    /// Whether (λ/2)b² is in the objective (the seed's objective has it).
    pub regularize_bias: bool,
    /// Step-size multiplier of a free bias ([`Schedule::bias_rate`]): positive and finite, and
    /// 1 with a regularized bias.
    pub bias_rate: f64,
    /// The visiting order.
    pub sampling: Sampling,
    /// Seed of the sampler.
    pub seed: u64,
    /// When to stop.
    pub stop: Stop,
}

/// A configuration that cannot be run on the given data.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// λ must be positive, finite and normal (≥ 2.2·10⁻³⁰⁸), so that 1/λ is finite; for
    /// AdaGrad, which never divides by λ alone, finite and at least 0.
    #[error(
        "λ (lambda) must be a positive finite number of at least 2.2e-308 (adagrad: any finite λ ≥ 0), not {0:e}"
    )]
    Lambda(f64),
    /// AdaGrad's step must be positive, finite and normal (≥ 2.2·10⁻³⁰⁸), so that 1/η is
    /// finite.
    #[error(
        "AdaGrad's step η (eta) must be a positive finite number of at least 2.2e-308, not {0:e}"
    )]
    Eta(f64),
    /// A setting of the schedule's learners given to AdaGrad, or AdaGrad's step given to
    /// another learner.
    #[error("{setting} does not apply to {algorithm}")]
    NotFor {
        /// The setting.
        setting: &'static str,
        /// The learner.
        algorithm: Algorithm,
    },
    /// A resumed AdaGrad run: a model holds the weights, not the gradients' squares that set
    /// the steps.
    #[error(
        "AdaGrad resumes from no stopped run: a model holds its weights, not the squared \
         gradients that size its steps (start from the model's weights instead)"
    )]
    AdagradResume,
    /// t₀ must be non-negative and finite.
    #[error("t0 must be a non-negative finite number, got {0}")]
    T0(f64),
    /// λ₁ must be non-negative and finite.
    #[error("the L1 strength λ₁ must be a non-negative finite number, got {0}")]
    L1(f64),
    /// An L1 term for a learner without one.
    #[error(
        "{0} has no L1 term: it is for sgd and naive-sgd (truncated steps), adagrad and \
         naive-adagrad, and lbfgs among the batch solvers"
    )]
    L1Algorithm(Algorithm),
    /// An L1 term where its lazy truncation cannot run: across Hogwild workers, or for
    /// classes in one pass.
    #[error("an L1 term truncates the weights on one thread, one class at a time: {0}")]
    L1Here(&'static str),
    /// The default t₀ = (‖x‖² + 1)/λ is beyond f64's range (a tiny λ, or huge features).
    #[error(
        "the default t0 = (|x|² + 1)/λ is beyond f64's range at λ = {0:e}: give t0 (--t0), \
         a larger λ, or scale the features"
    )]
    DefaultT0(f64),
    /// The bias rate must be positive and finite.
    #[error("the bias rate must be a positive finite number, got {0}")]
    BiasRate(f64),
    /// A bias rate other than 1 for a regularized bias, whose steps are the weights' (Lemma 1).
    #[error(
        "a bias rate of {0} needs a free (unregularized) bias: a regularized bias steps with \
         the weights"
    )]
    RegularizedBiasRate(f64),
    /// There is nothing to learn from.
    #[error("the training data has no rows")]
    NoRows,
    /// Zero steps requested.
    #[error("training needs at least one step")]
    NoSteps,
    /// A parallel run needs at least one thread.
    #[error("the number of threads must be at least 1")]
    Threads,
    /// Classes in one pass ([`super::fit_classes`]) are trained by the O(k) learners only.
    #[error("{0} does not train its classes in one pass (sgd, asgd and casgd do)")]
    NotInOnePass(Algorithm),
    /// The O(Tn) baselines run on one thread only.
    #[error("{0} has no parallel version (sgd, asgd and casgd do)")]
    NotParallel(Algorithm),
    /// A data-parallel run that averages k > 1 times an epoch was given a step count: the
    /// ranks' numbers of averages could differ.
    #[error("averaging {0} times an epoch needs the run's length in epochs, not in steps")]
    MixesNeedEpochs(u64),
    /// Averaging would start after the last step (or at step 0).
    #[error("average start {start} is not within 1..={steps} (the number of steps)")]
    AverageStart {
        /// The requested t_a.
        start: u64,
        /// The number of steps T.
        steps: u64,
    },
    /// The learner's per-feature state does not fit in this machine's memory.
    #[error(transparent)]
    Memory(#[from] AllocError),
    /// Class weights that cannot be used with this loss.
    #[error(transparent)]
    ClassWeights(#[from] ClassWeightError),
    /// A starting point of another width than the data.
    #[error("the starting point has {got} weights for {features} features")]
    StartWidth {
        /// Its weights.
        got: usize,
        /// The data's features.
        features: usize,
    },
    /// A starting point with a weight or bias that is not finite.
    #[error("the starting point's weights and bias must be finite")]
    StartNotFinite,
    /// A starting point with t₀ = 0: at step 0 the sums are −λt₀·w, which holds no w then.
    #[error("a start from given weights needs t0 > 0 (the sums hold −λ·t0·w at step 0)")]
    StartNeedsT0,
    /// A resumed run whose last step would be past the step counter's range.
    #[error("{steps} steps after step {first_step} pass the step counter's range (2^64 − 1)")]
    StepCount {
        /// The steps taken before.
        first_step: u64,
        /// The steps asked for.
        steps: u64,
    },
    /// A resumed averaging learner past t_a without the average of its steps so far.
    #[error("resuming an averaging learner after {0} steps needs their averaged iterate")]
    StartNeedsAverage(u64),
}

impl Config {
    /// The loss with its class weights, or why they do not go together.
    pub fn weighted_loss(&self) -> Result<WeightedLoss, ConfigError> {
        Ok(WeightedLoss::new(self.loss, self.class_weights)?)
    }
}

/// The default step-size offset for `data` (see [`Schedule::default_t0`] for why).
///
/// The scale is the squared row norm the first steps will meet: the largest one for squared,
/// squared-hinge and squared ε-insensitive loss, whose gradients grow with the residual so that
/// a single step with η‖x‖² > 2 diverges (twice it for the last, of twice the curvature); the mean one for the Lipschitz losses (hinge, log, absolute, smooth
/// hinge, ε-insensitive), where an oversized step cannot diverge but only wastes steps undoing
/// it, and the typical row is what should move by about one unit of margin. The largest norm
/// needs every row; the mean is taken over [`T0_SAMPLE_ROWS`] rows spread over the data (all of
/// them in smaller sets, [`t0_sample`]), as Bottou's sgd sizes its first step on a sample.
pub fn default_t0<E: Examples>(data: &E, loss: Loss, lambda: f64) -> f64 {
    RowNorms::for_t0(data, loss).default_t0(loss, lambda)
}

/// Rows whose mean squared norm sets the default t₀ of the Lipschitz losses. A pass over every
/// row cost ≈ 0.045 CPU-s on rcv1-like, a quarter of a one-epoch ASGD run (PERF.md, "Online
/// learners"); a random sample of this many rows has a mean within a few per cent of the
/// whole data's unless a few rows dominate the norms, and the offset is a heuristic.
pub const T0_SAMPLE_ROWS: usize = 8192;

/// The rows [`RowNorms::for_t0`] samples from `m` rows, ascending: every row when m ≤
/// [`T0_SAMPLE_ROWS`], otherwise one row drawn in each of s = [`T0_SAMPLE_ROWS`] equal strata,
/// row ⌊(j + u_j)·m/s⌋ for j < s, with u_j ∈ [0, 1) from a fixed-seed generator. The draw
/// within a stratum keeps a periodic pattern of norms (every other row long, say) from being
/// read at one phase only, as evenly spaced rows would be; the fixed seed keeps t₀, and so
/// every model, reproducible.
pub fn t0_sample(m: usize) -> impl Iterator<Item = usize> {
    let s = m.min(T0_SAMPLE_ROWS);
    let mut rng = rand_xoshiro::SplitMix64::seed_from_u64(T0_SAMPLE_SEED);
    (0..s).map(move |j| {
        if s == m {
            return j;
        }
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        // m > s ≥ 1 here: the stratum's point lies in [j·m/s, (j + 1)·m/s) ⊂ [0, m).
        (((j as f64 + u) * (m as f64 / s as f64)) as usize).min(m - 1)
    })
}

/// Seed of [`t0_sample`]'s draws.
const T0_SAMPLE_SEED: u64 = 0x5EED_0F70;

/// What [`default_t0`] needs to know of the rows: their number, and the largest and the
/// summed squared norm ‖x_i‖² of the rows measured (every row, or a sample: see
/// [`RowNorms::for_t0`]). A data-parallel run combines the ranks' (sums and maximum) into the
/// whole data's ([`crate::dist::online`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RowNorms {
    /// Number of rows m.
    pub rows: f64,
    /// Number of rows measured (in a data-parallel combination of sampled shares, the rows
    /// their means stand for: see [`crate::dist::online::whole_norms`]).
    pub measured: f64,
    /// max ‖x_i‖² over the rows measured.
    pub max: f64,
    /// Σ ‖x_i‖² over the rows measured.
    pub sum: f64,
}

impl RowNorms {
    /// One O(nnz) pass over every row of `data`.
    pub fn of<E: Examples>(data: &E) -> RowNorms {
        let all = 0..data.n_rows();
        Self::over(data, all.len(), all, true)
    }

    /// What [`default_t0`] of `loss` reads: every row for the losses whose gradient grows
    /// with the residual (the largest norm, [`Loss::grows_with_residual`]), otherwise the rows
    /// of [`t0_sample`].
    pub fn for_t0<E: Examples>(data: &E, loss: Loss) -> RowNorms {
        if loss.grows_with_residual() {
            Self::of(data)
        } else {
            let m = data.n_rows();
            Self::over(data, m, t0_sample(m), false)
        }
    }

    /// The norms of `rows` (ascending) of `data`, which holds `total` rows; `consecutive`
    /// when `rows` walk the storage in order, so that prefetching what follows each row pays.
    fn over<E: Examples>(
        data: &E,
        total: usize,
        rows: impl Iterator<Item = usize>,
        consecutive: bool,
    ) -> RowNorms {
        let data = data.rows();
        let (mut measured, mut max, mut sum) = (0usize, 0.0f64, 0.0f64);
        for i in rows {
            measured += 1;
            let row = data.row(i);
            if consecutive {
                row.prefetch_following();
            }
            let norm2 = row.norm2();
            max = max.max(norm2);
            sum += norm2;
        }
        RowNorms {
            rows: total as f64,
            measured: measured as f64,
            max,
            sum,
        }
    }

    /// [`default_t0`] of these rows.
    pub fn default_t0(&self, loss: Loss, lambda: f64) -> f64 {
        let scale = match loss {
            // ℓ'' = 2 on both sides of the tube, twice the squared loss's: t₀ = 2(max‖x‖² +
            // 1)/λ, so that the first step's η·ℓ''·(‖x‖² + 1) is at most 1 as the squared
            // loss's is. (The squared hinge's ℓ'' = 2 holds on one side only: a step past the
            // margin lands where its gradient is 0, and nothing grows.)
            Loss::SquaredEpsilonInsensitive(_) => 2.0 * self.max + 1.0,
            _ if loss.grows_with_residual() => self.max,
            _ => self.sum / self.measured.max(1.0),
        };
        Schedule::default_t0(lambda, scale)
    }
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The final iterates; [`Snapshot::output`] is the model.
    pub snapshot: Snapshot,
    /// The schedule used (t₀ resolved).
    pub schedule: Schedule,
    /// Steps taken by this run, T (a resumed run's iterates are after [`Start::steps`] + T).
    pub steps: u64,
    /// Wall-clock seconds spent in the steps and the final O(n) recovery (set-up and
    /// observers excluded).
    pub seconds: f64,
}

/// The state at the end of an epoch (every m steps, and after the last step).
#[derive(Clone, Copy)]
pub struct EpochEnd<'a> {
    /// Epochs of this run completed, fractional for a last partial one.
    pub epochs: f64,
    /// Steps this run has taken so far.
    pub steps: u64,
    /// Training seconds so far (observers excluded).
    pub seconds: f64,
    /// The iterates now.
    pub snapshot: &'a Snapshot,
    /// Under early stopping, the mean loss of the held-out rows at these iterates
    /// ([`crate::api::EarlyStopping`]); `None` otherwise.
    pub held_out_loss: Option<f64>,
}

/// Receives progress while [`fit`] runs.
pub trait Observer {
    /// Every `PROGRESS_INTERVAL` steps: steps done, and the mean loss ℓ(p_t, y) over a
    /// sample (every 64th) of the steps since the last call, a cheap objective estimate.
    fn progress(&mut self, _steps: u64, _mean_loss: f64) {}
    /// During a Hogwild epoch, about every 100 ms: the steps claimed so far (no loss estimate:
    /// the workers' own sums are added up at the epoch's end).
    fn steps(&mut self, _steps: u64) {}
    /// Whether [`Observer::epoch_end`] is wanted (it costs an O(n) snapshot per epoch).
    fn wants_epochs(&self) -> bool {
        false
    }
    /// After each epoch, if [`Observer::wants_epochs`].
    fn epoch_end(&mut self, _end: &EpochEnd<'_>) {}
    /// Whether the run ends at the epoch end just observed (asked after each
    /// [`Observer::epoch_end`]; early stopping, [`crate::api::EarlyStopping`]): it then takes
    /// no further step, and that epoch end is its last.
    fn stop_requested(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
impl Observer for () {}

/// Steps between two [`Observer::progress`] calls.
pub const PROGRESS_INTERVAL: u64 = 1 << 16;

/// Train `algorithm` on `data` as `config` says.
pub fn fit<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    observer: &mut dyn Observer,
) -> Result<Fit, ConfigError> {
    fit_mixing(data, algorithm, config, None, observer, None)
}

/// Where a run begins other than at zero: the iterates after `steps` steps.
///
/// With `steps` = 0 the learner begins its schedule and its average anew at `snapshot.last`
/// (a warm start, scikit-learn's `coef_init`; [`Start::warm`]). With `steps` = t > 0 it goes
/// on from a run stopped after t steps as that run would have gone on: step t + 1 with
/// η_{t+1}, the running average of the earlier steps kept (a resumed run, Vowpal Wabbit's
/// `--save_resume` and scikit-learn's `partial_fit`). Its config then needs the stopped run's
/// t₀, t_a and bias rate. On the stopped run's own rows, with `drawn` = t, the resumed run
/// draws on in the sampler's stream and ends where the uninterrupted run ends, up to
/// rounding (the sums are rebuilt from the iterates); on new data `drawn` = 0 begins the
/// stream anew (in file order, at the first row).
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    /// The iterates to begin at: the last one, and the averaged one where the learner
    /// averages and `steps` ≥ t_a.
    pub snapshot: Snapshot,
    /// Steps taken to reach them (0 for a warm start).
    pub steps: u64,
    /// Indices of the sampler's stream to pass over before the first step: those the stopped
    /// run drew, to go on in its order over the same rows; 0 to begin the order anew.
    pub drawn: u64,
}

impl Start {
    /// A warm start at `iterate`: step 0, nothing averaged yet.
    pub fn warm(iterate: Iterate) -> Start {
        Start {
            snapshot: Snapshot {
                last: iterate,
                averaged: None,
            },
            steps: 0,
            drawn: 0,
        }
    }
}

/// [`fit`] from `start` instead of from zero (the learner is restarted there,
/// [`Learner::restart`]); `None` is [`fit`]. [`Fit::steps`] counts the steps of this run only.
pub fn fit_from<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    start: Option<&Start>,
    observer: &mut dyn Observer,
) -> Result<Fit, ConfigError> {
    fit_mixing(data, algorithm, config, start, observer, None)
}

/// Replaces the iterates at the end of every epoch, and the final ones: a data-parallel run
/// replaces them by the ranks' average ([`crate::dist::online`]).
pub type Mix<'a> = &'a mut dyn FnMut(&mut Snapshot);

/// How a data-parallel run joins [`fit_mixing`].
pub struct Mixing<'a> {
    /// Replaces the iterates `per_epoch` times an epoch and after the last step.
    pub mix: Mix<'a>,
    /// Mixes per epoch k ≥ 1: after steps ⌈j·m/k⌉ for j = 1, 2, … below T (with m < k some
    /// of them follow each other without a step between: the count per epoch stays k).
    pub per_epoch: u64,
    /// CASGD's centre x̄ (a data-parallel run gives the whole data's mean); `None`: the mean
    /// of `data`.
    pub x_bar: Option<Vec<f64>>,
}

impl<'a> Mixing<'a> {
    /// The mix (none without mixing), the mixes per epoch (at least 1) and x̄ of `mixing`.
    pub(crate) fn parts(mixing: Option<Mixing<'a>>) -> (Option<Mix<'a>>, u64, Option<Vec<f64>>) {
        match mixing {
            Some(Mixing {
                mix,
                per_epoch,
                x_bar,
            }) => (Some(mix), per_epoch.max(1), x_bar),
            None => (None, 1, None),
        }
    }
}

/// [`fit_from`], with the iterates passed through `mixing.mix` k times an epoch and after the
/// last step; the learner restarts from the mixed ones ([`Learner::restart`]), and the
/// observer (at epoch ends) and the result see them. Without `mixing` this is [`fit_from`].
pub fn fit_mixing<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    start: Option<&Start>,
    observer: &mut dyn Observer,
    mixing: Option<Mixing<'_>>,
) -> Result<Fit, ConfigError> {
    let first_step = start.map_or(0, |start| start.steps);
    let (schedule, steps) = plan(data, algorithm, config, first_step)?;
    if let Some(start) = start {
        check_start(start, algorithm, data.n_features(), &schedule)?;
    }
    let (n, loss, reg) = (
        data.n_features(),
        config.weighted_loss()?,
        config.regularize_bias,
    );
    let (mix, per_epoch, x_bar) = Mixing::parts(mixing);
    let rule = AdagradRule {
        lambda: config.lambda,
        l1: config.l1,
        eta: config.eta.unwrap_or(AdagradRule::DEFAULT_ETA),
        regularize_bias: reg,
    };
    // AdaGrad's iterates are centred on a warm start (resumes are refused in `check_start`).
    let centre = start
        .filter(|start| start.steps == 0)
        .map(|start| &start.snapshot.last);
    // x̄ (n entries) moves into the one learner that runs: no copy.
    let naive = |kind, x_bar| {
        Naive::around(data, kind, x_bar, loss, schedule, reg).map(|n| n.truncating(config.l1))
    };
    let run = Run {
        config,
        loss,
        schedule,
        steps,
        mix,
        per_epoch,
        start,
    };
    Ok(match algorithm {
        Algorithm::Sgd => {
            let sgd = Sgd::new(n, loss, schedule, reg)?.truncating(config.l1)?;
            run.drive(data, sgd, observer)
        }
        Algorithm::Asgd => run.drive(data, Asgd::new(n, loss, schedule, reg)?, observer),
        Algorithm::Casgd => {
            let x_bar = x_bar.map_or_else(|| mean_example(data), Ok)?;
            let casgd = Casgd::around(data, x_bar, loss, schedule, reg)?;
            run.drive(data, casgd, observer)
        }
        Algorithm::NaiveSgd => run.drive(data, naive(NaiveKind::Sgd, x_bar)?, observer),
        Algorithm::NaiveAsgd => run.drive(data, naive(NaiveKind::Asgd, x_bar)?, observer),
        Algorithm::NaiveCasgd => run.drive(data, naive(NaiveKind::Casgd, x_bar)?, observer),
        Algorithm::Adagrad => run.drive(data, Adagrad::new(n, loss, rule, centre)?, observer),
        Algorithm::NaiveAdagrad => {
            let naive = NaiveAdagrad::new(n, loss, rule, centre)?;
            run.drive(data, naive, observer)
        }
    }?)
}

/// Checks `config` against `data` for a run that begins after `first_step` steps, and
/// resolves it: the schedule (t₀ defaulted) and the steps T it takes. Shared with the
/// parallel learners of [`super::hogwild`].
pub(crate) fn plan<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    first_step: u64,
) -> Result<(Schedule, u64), ConfigError> {
    let m = data.n_rows();
    config.weighted_loss()?;
    let adagrad = algorithm.is_adagrad();
    let lambda = config.lambda;
    if !(lambda > 0.0 && lambda.is_normal() || adagrad && lambda >= 0.0 && lambda.is_finite()) {
        return Err(ConfigError::Lambda(lambda));
    }
    check_steps(algorithm, config)?;
    if m == 0 {
        return Err(ConfigError::NoRows);
    }
    if !(config.l1 >= 0.0 && config.l1.is_finite()) {
        return Err(ConfigError::L1(config.l1));
    }
    if config.l1 != 0.0 && !algorithm.has_l1() {
        return Err(ConfigError::L1Algorithm(algorithm));
    }
    let rate = config.bias_rate;
    if !(rate > 0.0 && rate.is_finite()) {
        return Err(ConfigError::BiasRate(rate));
    }
    if config.regularize_bias && rate != 1.0 {
        return Err(ConfigError::RegularizedBiasRate(rate));
    }
    let t0 = match config.t0 {
        Some(t0) if t0 >= 0.0 && t0.is_finite() => t0,
        Some(t0) => return Err(ConfigError::T0(t0)),
        // AdaGrad has no schedule to offset.
        None if adagrad => 0.0,
        None => match default_t0(data, config.loss, config.lambda) {
            t0 if t0.is_finite() => t0,
            _ => return Err(ConfigError::DefaultT0(config.lambda)),
        },
    };
    let steps = match config.stop {
        Stop::Steps(t) => t,
        Stop::Epochs(e) => e.saturating_mul(m as u64),
    };
    if steps == 0 {
        return Err(ConfigError::NoSteps);
    }
    let Some(last_step) = first_step.checked_add(steps) else {
        return Err(ConfigError::StepCount { first_step, steps });
    };
    if algorithm.averages() && !(1..=last_step).contains(&config.average_start) {
        return Err(ConfigError::AverageStart {
            start: config.average_start,
            steps: last_step,
        });
    }
    let schedule = Schedule {
        lambda: config.lambda,
        t0,
        average_start: config.average_start.max(1),
        bias_rate: config.bias_rate,
    };
    Ok((schedule, steps))
}

/// Whether the step settings of `config` are those of `algorithm`: η for AdaGrad, which has no
/// t₀ and no bias rate; neither for the others.
fn check_steps(algorithm: Algorithm, config: &Config) -> Result<(), ConfigError> {
    let not_for = |setting| Err(ConfigError::NotFor { setting, algorithm });
    if !algorithm.is_adagrad() {
        return match config.eta {
            Some(_) => not_for("AdaGrad's step η"),
            None => Ok(()),
        };
    }
    match config.eta {
        Some(eta) if !(eta > 0.0 && eta.is_normal()) => Err(ConfigError::Eta(eta)),
        _ if config.t0.is_some() => not_for("the step-size offset t0"),
        _ if config.bias_rate != 1.0 => not_for("a bias rate"),
        _ => Ok(()),
    }
}

/// Whether `start` can start `algorithm` over `features` features with `schedule`: iterates as
/// wide and finite, the averaged one there where the learner has averaged, and t + t₀ > 0
/// (shared with [`super::hogwild`]).
pub(crate) fn check_start(
    start: &Start,
    algorithm: Algorithm,
    features: usize,
    schedule: &Schedule,
) -> Result<(), ConfigError> {
    let averaged = RunningHarmonic::new(schedule).count(start.steps) > 0 && algorithm.averages();
    let snapshot = &start.snapshot;
    let iterates = [
        Some(&snapshot.last),
        snapshot.averaged.as_ref().filter(|_| averaged),
    ];
    for iterate in iterates.into_iter().flatten() {
        if iterate.weights.len() != features {
            return Err(ConfigError::StartWidth {
                got: iterate.weights.len(),
                features,
            });
        }
        if !(iterate.bias.is_finite() && iterate.weights.iter().all(|w| w.is_finite())) {
            return Err(ConfigError::StartNotFinite);
        }
    }
    if averaged && snapshot.averaged.is_none() {
        return Err(ConfigError::StartNeedsAverage(start.steps));
    }
    if algorithm.is_adagrad() {
        return match start.steps {
            0 => Ok(()),
            _ => Err(ConfigError::AdagradResume),
        };
    }
    if schedule.divisor(start.steps) <= 0.0 {
        return Err(ConfigError::StartNeedsT0);
    }
    Ok(())
}

/// A validated run.
struct Run<'a, 'm> {
    config: &'a Config,
    /// The config's loss with its class weights.
    loss: WeightedLoss,
    schedule: Schedule,
    steps: u64,
    mix: Option<Mix<'m>>,
    /// Mixes per epoch (1 without mixing).
    per_epoch: u64,
    /// Where the iterates start (zero if `None`).
    start: Option<&'a Start>,
}

impl Run<'_, '_> {
    /// The loop: T steps in epochs of m, the sampler choosing each example. An error when
    /// a snapshot of the iterates cannot be allocated.
    fn drive<E: Examples, L: Learner>(
        mut self,
        data: &E,
        mut learner: L,
        observer: &mut dyn Observer,
    ) -> Result<Fit, AllocError> {
        let (first, drawn) = self
            .start
            .map_or((0, 0), |start| (start.steps, start.drawn));
        if let Some(start) = self.start {
            learner.restart(&start.snapshot, first);
        }
        let rows = data.rows();
        let data = &rows;
        let m = data.n_rows() as u64;
        let loss = self.loss;
        let mut sampler = Sampler::new(self.config.sampling, data.n_rows(), self.config.seed);
        sampler.skip(drawn);
        let wants_epochs = observer.wants_epochs();
        let (mut loss_sum, mut loss_count) = (0.0, 0u64);
        let mut seconds = 0.0;
        // Steps are numbered on from the start's: this run takes steps first + 1 ..= last.
        let mut t = first;
        let last = first + self.steps;
        let mut interval = 0u64;
        // The iterates of the epoch end at which the observer stopped the run, if it did.
        let mut stopped_at: Option<Snapshot> = None;
        while t < last {
            let start = Instant::now();
            interval += 1;
            let interval_end = first + (interval * m).div_ceil(self.per_epoch).min(self.steps);
            while t < interval_end {
                t += 1;
                let i = sampler.next();
                let row = data.row(i);
                let y = loss.target(row.label);
                let s = data.sample_weight(i);
                let p = learner.step(i, row, y, s, t);
                prefetch_upcoming(data, &sampler, &row);
                if t % 64 == 0 {
                    loss_sum += s * loss.value(p, y);
                    loss_count += 1;
                }
                if (t - first) % PROGRESS_INTERVAL == 0 {
                    observer.progress(t - first, loss_sum / loss_count.max(1) as f64);
                    (loss_sum, loss_count) = (0.0, 0);
                }
            }
            let mixed = match self.mix.as_deref_mut() {
                Some(mix) if t < last => {
                    let mut snapshot = learner.snapshot(t)?;
                    mix(&mut snapshot);
                    learner.restart(&snapshot, t);
                    Some(snapshot)
                }
                _ => None,
            };
            seconds += start.elapsed().as_secs_f64();
            if wants_epochs && t < last && interval % self.per_epoch == 0 {
                let snapshot = match mixed {
                    Some(snapshot) => snapshot,
                    None => learner.snapshot(t)?,
                };
                observer.epoch_end(&EpochEnd {
                    epochs: (t - first) as f64 / m as f64,
                    steps: t - first,
                    seconds,
                    snapshot: &snapshot,
                    held_out_loss: None,
                });
                if observer.stop_requested() {
                    stopped_at = Some(snapshot);
                    break;
                }
            }
        }
        let steps = t - first;
        let snapshot = match stopped_at {
            Some(snapshot) => snapshot,
            None => {
                let start = Instant::now();
                let mut snapshot = learner.snapshot(t)?;
                if let Some(mix) = self.mix.as_deref_mut() {
                    mix(&mut snapshot);
                }
                seconds += start.elapsed().as_secs_f64();
                if wants_epochs {
                    observer.epoch_end(&EpochEnd {
                        epochs: steps as f64 / m as f64,
                        steps,
                        seconds,
                        snapshot: &snapshot,
                        held_out_loss: None,
                    });
                }
                snapshot
            }
        };
        Ok(Fit {
            snapshot,
            schedule: self.schedule,
            steps,
            seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};

    /// One-entry rows of value 1, except `(row, value)` in `special`.
    fn rows_of_one(m: usize, special: &[(usize, f64)]) -> CsrMatrix {
        let mut values = vec![1.0; m];
        for &(row, value) in special {
            values[row] = value;
        }
        let labels = (0..m)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let offsets = (0..=m as u64).collect();
        CsrMatrix::new(labels, offsets, vec![0; m], ValueVec::F64(values), 1).unwrap()
    }

    #[test]
    fn the_mean_norm_is_sampled_and_the_largest_read_from_every_row() {
        let s = T0_SAMPLE_ROWS;
        let m = 2 * s + 5;
        let sample: Vec<usize> = t0_sample(m).collect();
        assert_eq!(sample.len(), s);
        assert!(sample.windows(2).all(|p| p[0] <= p[1]) && sample[s - 1] < m);
        // One row per stratum [j·m/s, (j + 1)·m/s).
        for (j, &row) in sample.iter().enumerate() {
            assert!(
                j * m / s <= row && row < ((j + 1) * m).div_ceil(s),
                "stratum {j}: {row}"
            );
        }
        let unsampled = (0..m).find(|i| sample.binary_search(i).is_err()).unwrap();
        let sampled = sample[s / 2];
        let data = rows_of_one(m, &[(unsampled, 100.0), (sampled, 3.0)]);
        let norms = RowNorms::for_t0(&data, Loss::Log);
        assert_eq!((norms.rows, norms.measured), (m as f64, s as f64));
        assert_eq!((norms.max, norms.sum), (9.0, (s - 1) as f64 + 9.0));
        let mean = ((s - 1) as f64 + 9.0) / s as f64;
        assert_eq!(default_t0(&data, Loss::Hinge, 0.5), (mean + 1.0) / 0.5);
        let every = RowNorms::for_t0(&data, Loss::Squared);
        assert_eq!(every, RowNorms::of(&data));
        assert_eq!((every.measured, every.max), (m as f64, 10_000.0));
        assert_eq!(default_t0(&data, Loss::SquaredHinge, 0.5), 10_001.0 / 0.5);
        // Twice the curvature on both sides of the tube: twice the squared loss's t₀.
        let tube = Loss::SquaredEpsilonInsensitive(0.1);
        assert_eq!(RowNorms::for_t0(&data, tube), every);
        assert_eq!(default_t0(&data, tube, 0.5), 2.0 * 10_001.0 / 0.5);
    }

    /// Every other row long: evenly spaced rows ⌊j·m/s⌋ with m = 2s would read only the short
    /// ones (a mean of 1 against 50.5).
    #[test]
    fn a_periodic_pattern_of_norms_is_sampled_at_every_phase() {
        let m = 2 * T0_SAMPLE_ROWS;
        let long: Vec<(usize, f64)> = (1..m).step_by(2).map(|i| (i, 10.0)).collect();
        let data = rows_of_one(m, &long);
        let norms = RowNorms::for_t0(&data, Loss::Log);
        let mean = norms.sum / norms.measured;
        assert!((mean - 50.5).abs() < 0.05 * 50.5, "sampled mean {mean}");
    }

    #[test]
    fn small_sets_measure_every_row() {
        let data = rows_of_one(T0_SAMPLE_ROWS, &[(1, 2.0)]);
        assert_eq!(RowNorms::for_t0(&data, Loss::Log), RowNorms::of(&data));
    }
}
