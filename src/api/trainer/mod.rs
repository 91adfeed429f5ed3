//! [`Trainer`]: one learner of any family with its settings, run on a dataset; what the
//! `sparselin train` command line and the C ABI build their models with. Each family's run
//! has a module of its own (`online_run`, `batch_solve`, `attribute_efficient`), and so has
//! one-vs-rest training (`one_vs_rest`; `one_pass` and `multinomial` its two other ways).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::json;

use super::{Error, ExampleSet, Examples, Learner, Loss, Model};
use crate::batch;
use crate::data::SampleWeighted;
use crate::data::column_major::ColumnMajor;
use crate::dist::online::{self as dist_online, Averaging, LocalSteps};
use crate::dist::{self, Local, Reducer};
use crate::lao;
use crate::loss::{ClassWeightError, ClassWeighting, ClassWeights, WeightedLoss};
use crate::model::{OneVsRest, ResumeState, TrainingInfo, weights_in_columns, weights_to_original};
use crate::online::hogwild::ScalarSharing;
use crate::online::{self, Sampling, Stop};

mod attribute_efficient;
mod batch_solve;
mod early_stopping;
mod joint;
mod one_pass;
mod one_vs_rest;
mod online_run;

pub use early_stopping::EarlyStopping;
pub use one_vs_rest::OneVsRestTraining;
pub(super) use one_vs_rest::class_labels_across;

/// A learner with its settings; [`Trainer::train`] runs it. Setting something the chosen
/// learner does not use makes `train` fail rather than be silently ignored; λ, the seed and
/// the sampling order, which always have a value, are the exception: each learner that has
/// them uses them, the others leave them aside (the attribute-efficient learners have no λ,
/// the batch solvers draw no sample).
///
/// ```
/// use sparselin::api::{Learner, Loss, Trainer};
/// use sparselin::batch::Algorithm;
///
/// let trainer = Trainer::new(Learner::Batch(Algorithm::Lbfgs))
///     .loss(Loss::Log)
///     .lambda(1e-4)
///     .max_iterations(200)
///     .tolerance(1e-8);
/// # let _ = trainer;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Trainer {
    learner: Learner,
    loss: Option<Loss>,
    lambda: f64,
    /// liblinear's C, when λ is given so ([`Trainer::cost`]).
    cost: Option<f64>,
    l1: f64,
    stop: Option<Stop>,
    seed: u64,
    regularize_bias: bool,
    /// Whether the model has a bias b (false: b = 0; batch solvers).
    fit_bias: bool,
    bias_rate: Option<f64>,
    t0: Option<f64>,
    average_start: Option<u64>,
    sampling: Sampling,
    threads: Option<usize>,
    scalars: Option<ScalarSharing>,
    hot_features: Option<usize>,
    averaging: Option<Averaging>,
    local_steps: Option<LocalSteps>,
    averages_per_epoch: Option<u64>,
    max_iterations: Option<usize>,
    warm_start: Option<u64>,
    tolerance: Option<f64>,
    memory: Option<usize>,
    exact_direction: bool,
    attributes: Option<usize>,
    radius: Option<f64>,
    eta: Option<f64>,
    smoothing: Option<f64>,
    class_weighting: Option<ClassWeighting>,
    sample_weights: Option<Vec<f64>>,
    initial_model: Option<Model>,
    /// dcd's starting dual variables ([`Trainer::initial_dual`]).
    initial_dual: Option<Vec<f64>>,
    resume: Option<Model>,
    save_resume: bool,
    /// Whether Hogwild workers are pinned to cores ([`crate::online::hogwild::Options::pin`]): not where
    /// several runs share the process, as one-vs-rest's classes do.
    pin_workers: bool,
    multinomial: bool,
    crammer_singer: bool,
    classes_in_one_pass: bool,
    early_stopping: Option<EarlyStopping>,
}

/// Online learners without `epochs` or `steps`: this many passes.
pub const DEFAULT_EPOCHS: u64 = 5;

/// The most threads a run may ask for. More workers than cores only take turns on them, and
/// a count beyond this is a typo rather than a plan: each thread costs a stack and, under
/// Hogwild, its own copy of the hot features.
pub const MAX_THREADS: usize = 1024;

/// What a caller sees of a training run as it happens: the online learners' progress and
/// epoch ends (the [`online::Observer`] part) and every batch solver iteration. `()` watches
/// nothing. A batch solver asked for a number of threads runs, and calls its monitor, on one
/// of them, hence `Send`.
pub trait Monitor: online::Observer + Send {
    /// After each iteration of a batch solver.
    fn iteration(&mut self, _progress: &batch::Progress) {}

    /// Before one-vs-rest training ([`Trainer::train_one_vs_rest`]) trains class `class`,
    /// the `index`-th (from 0) of `classes`.
    fn class_start(&mut self, _class: f64, _index: usize, _classes: usize) {}
}

impl Monitor for () {}

/// A finished run: the model and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Training {
    /// The model, in original feature ids.
    pub model: Model,
    /// Seconds of training (loading, set-up and observers excluded where the learner times
    /// itself; batch solvers: the whole solve).
    pub seconds: f64,
    /// Examples processed: steps (online), rows × passes over the data (batch), examples
    /// (attribute-efficient).
    pub examples: u64,
    /// dcd: its dual variables where it stopped, one per row trained on, in row order: the
    /// start of a run on the same rows at another λ or C ([`Trainer::initial_dual`]). `None`
    /// for the other learners.
    pub dual: Option<Vec<f64>>,
}

impl Trainer {
    /// `learner` with the defaults: its [`Learner::default_loss`], λ = 10⁻⁴, seed 1, a
    /// regularized bias, [`DEFAULT_EPOCHS`] passes (online), the batch solvers' own limits.
    pub fn new(learner: Learner) -> Self {
        Trainer {
            learner,
            loss: None,
            lambda: 1e-4,
            cost: None,
            l1: 0.0,
            stop: None,
            seed: 1,
            regularize_bias: true,
            fit_bias: true,
            bias_rate: None,
            t0: None,
            average_start: None,
            sampling: Sampling::default(),
            threads: None,
            scalars: None,
            hot_features: None,
            averaging: None,
            local_steps: None,
            averages_per_epoch: None,
            max_iterations: None,
            warm_start: None,
            tolerance: None,
            memory: None,
            exact_direction: false,
            attributes: None,
            radius: None,
            eta: None,
            smoothing: None,
            class_weighting: None,
            sample_weights: None,
            initial_model: None,
            initial_dual: None,
            resume: None,
            save_resume: false,
            pin_workers: true,
            multinomial: false,
            crammer_singer: false,
            classes_in_one_pass: true,
            early_stopping: None,
        }
    }

    /// The loss ℓ (online and batch learners; AESVR takes ε from `EpsilonInsensitive(ε)`).
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = Some(loss);
        self
    }

    /// λ > 0 of the objective (online and batch learners; λ ≥ 0 for AdaGrad). Replaces a
    /// [`Trainer::cost`].
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self.cost = None;
        self
    }

    /// λ given as liblinear's and scikit-learn's C instead (online and batch learners):
    /// λ = 1/(C·m) ([`lambda_for_cost`]), m the rows trained on — every rank's, and in
    /// cross-validation each fold's own, as liblinear's `-c C -v k` keeps C per fold — so that
    /// the objective is theirs, ½‖w‖² + C Σ ℓ_i, divided by C·m (the bias regularized as
    /// their `-B 1` feature). The models record C in their details (`cost`). Replaces a
    /// [`Trainer::lambda`].
    pub fn cost(mut self, cost: f64) -> Self {
        self.cost = Some(cost);
        self
    }

    /// λ₁ ≥ 0 of an L1 term λ₁(‖w‖₁ + |b|) added to the objective (0, the default: none):
    /// L1-regularized models, sparse, as liblinear's `-s 6` (λ = 0, C = 1/(λ₁m)) and
    /// scikit-learn's `penalty='l1'` fit them, or with λ > 0 the elastic net. Batch L-BFGS
    /// (run as OWL-QN) and coordinate descent (`cd`) with a smooth loss; SGD and its baseline
    /// (truncated gradient, λ > 0, on one thread: a thread count of 1, classes one at a time);
    /// AdaGrad and its baseline (exactly, by dual averaging).
    pub fn l1(mut self, l1: f64) -> Self {
        self.l1 = l1;
        self
    }

    /// Online learners: E passes' worth of steps (E·m).
    pub fn epochs(mut self, epochs: u64) -> Self {
        self.stop = Some(Stop::Epochs(epochs));
        self
    }

    /// Online learners: exactly T steps.
    pub fn steps(mut self, steps: u64) -> Self {
        self.stop = Some(Stop::Steps(steps));
        self
    }

    /// Seed of the sampler (online) or of the draws and order (attribute-efficient): same
    /// seed, same data, same model, bit for bit — except for online learners on more than
    /// one Hogwild worker ([`Trainer::threads`]), whose interleaving of updates depends on
    /// timing (the default runs them on one).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Whether (λ/2)b² is in the objective (default yes). Batch solvers always regularize it.
    pub fn regularize_bias(mut self, yes: bool) -> Self {
        self.regularize_bias = yes;
        self
    }

    /// Batch solvers: whether the model has a bias b (default yes, regularized as a feature
    /// of value 1: liblinear's `-B 1`, scikit-learn's `fit_intercept=True` with liblinear).
    /// `false` fits w alone, b = 0: liblinear's default (no `-B`), scikit-learn's
    /// `fit_intercept=False`. The model records it (`fit_bias: false` in its details).
    pub fn fit_bias(mut self, yes: bool) -> Self {
        self.fit_bias = yes;
        self
    }

    /// Online learners with a free bias ([`Trainer::regularize_bias`] `false`): the bias steps
    /// by `rate`·η_t (default 1, the weights' step; Bottou's sgd and scikit-learn on sparse data
    /// use 0.01). For CASGD it is the bias of the centered model that steps so (its bias on
    /// the raw features also moves with w·x̄), as in naive CASGD. See
    /// [`online::Schedule::bias_rate`].
    pub fn bias_rate(mut self, rate: f64) -> Self {
        self.bias_rate = Some(rate);
        self
    }

    /// Online learners: the step-size offset t₀ (default: [`online::default_t0`]).
    pub fn t0(mut self, t0: f64) -> Self {
        self.t0 = Some(t0);
        self
    }

    /// Averaged online learners: the first step t_a in the average (default 1).
    pub fn average_start(mut self, step: u64) -> Self {
        self.average_start = Some(step);
        self
    }

    /// Online learners: the order examples are visited in.
    pub fn sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// SGD, ASGD and CASGD: run on this many lock-free Hogwild workers
    /// ([`online::hogwild`]); 1 is the single-threaded learner, bit for bit. Without it they
    /// run single-threaded; the O(n) baselines run on one thread only.
    ///
    /// Batch solvers: evaluate the objective over the shards on this many threads (the
    /// result is the same, bit for bit, for any count); without it, on rayon's global pool.
    ///
    /// From 1 to [`MAX_THREADS`].
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Hogwild workers (see [`Trainer::threads`]): how the per-step scalars are shared.
    pub fn scalar_sharing(mut self, sharing: ScalarSharing) -> Self {
        self.scalars = Some(sharing);
        self
    }

    /// Hogwild workers (see [`Trainer::threads`]): how many of the first features each worker
    /// keeps in a private copy between merges ([`crate::online::hogwild::Options::hot_features`]; default
    /// [`crate::online::hogwild::DEFAULT_HOT_FEATURES`]).
    pub fn hot_features(mut self, features: usize) -> Self {
        self.hot_features = Some(features);
        self
    }

    /// Online learners across several ranks ([`Trainer::train_across`]): when the ranks'
    /// models are averaged (default [`Averaging::Epoch`]).
    pub fn averaging(mut self, averaging: Averaging) -> Self {
        self.averaging = Some(averaging);
        self
    }

    /// Online learners averaged across ranks every epoch: how long each rank's steps are
    /// (default [`LocalSteps::Scaled`]).
    pub fn local_steps(mut self, steps: LocalSteps) -> Self {
        self.local_steps = Some(steps);
        self
    }

    /// Online learners averaged across ranks every epoch: averages per epoch k ≥ 1 (default
    /// 1; k > 1 needs the length in epochs).
    pub fn averages_per_epoch(mut self, k: u64) -> Self {
        self.averages_per_epoch = Some(k);
        self
    }

    /// Batch learners: the iteration limit.
    pub fn max_iterations(mut self, iterations: usize) -> Self {
        self.max_iterations = Some(iterations);
        self
    }

    /// Batch learners: start from the model of `epochs` epochs of ASGD with the same loss, λ
    /// and seed (averaged across the ranks every epoch under [`Trainer::train_across`])
    /// instead of from zero. The ASGD epochs count in the training time.
    pub fn warm_start_epochs(mut self, epochs: u64) -> Self {
        self.warm_start = Some(epochs);
        self
    }

    /// Start from `model`'s weights and bias instead of from zero (scikit-learn's `warm_start`
    /// and `coef_init`, Vowpal Wabbit's `-i`): batch solvers that iterate on w (not dcd), to go
    /// on from a run that stopped at its iteration limit or along a path of λ; online learners,
    /// to go on learning from new data, their step sizes and average starting anew as
    /// scikit-learn's do ([`online::fit_from`]; needs t₀ > 0, which the default is). Weights
    /// are matched by original feature id; features the model lacks start at 0.
    pub fn initial_model(mut self, model: Model) -> Self {
        self.initial_model = Some(model);
        self
    }

    /// dcd: start from these dual variables instead of from zero, one per row of the data
    /// trained on in row order: the [`Training::dual`] of a run on the same rows, at another λ
    /// or C. Each is clamped into this run's bounds (at a smaller C, the box of a hinge-type
    /// loss shrinks). Along a path of λ from large to small (C from small to large) each
    /// solution is a start near the next: on reuters_grain, squared hinge over liblinear's
    /// grid of C, 379 iterations in all against 3,594 from zero (PERF.md "Warm starts along a
    /// grid").
    pub fn initial_dual(mut self, alpha: Vec<f64>) -> Self {
        self.initial_dual = Some(alpha);
        self
    }

    /// Online learners: keep in the model where the run stopped ([`Model::resume`]: the step
    /// count, the schedule, and the last iterate beside the averaged one), so that
    /// [`Trainer::resume`] can go on from it (Vowpal Wabbit's `--save_resume`). Such a model
    /// is saved in f64 only. Single-process runs only: the ranks of a distributed run count
    /// their steps apart.
    pub fn save_resume(mut self, yes: bool) -> Self {
        self.save_resume = yes;
        self
    }

    /// Online learners: go on from where `model`'s run stopped (a model of
    /// [`Trainer::save_resume`]), as that run would have gone on: step t + 1 with η_{t+1}, the
    /// average of the t steps before kept ([`online::Start`]; scikit-learn's `partial_fit`).
    /// On data of as many rows as the run's (its own rows again) the sampling order goes on
    /// past the run's t draws, so E₁ epochs resumed for E₂ more end where E₁ + E₂ epochs end,
    /// up to rounding; on other data the order begins anew (in file order, at the first row)
    /// and the run goes on learning at the step size it had reached. The model's learner (or
    /// its O(Tn) baseline's twin), loss, λ and bias settings must be this trainer's, and its
    /// t₀, t_a and bias rate are taken (others given are an error); the data needs at least
    /// its features (more start at 0); epochs and steps count this run's. The new model is
    /// resumable too. Not with [`Trainer::initial_model`], nor across ranks.
    pub fn resume(mut self, model: Model) -> Self {
        self.resume = Some(model);
        self
    }

    /// Batch learners: stop once the relative suboptimality certificate is below `tol`
    /// (default 1e-9, and [`batch::owlqn::DEFAULT_TOL`] with an L1 term).
    pub fn tolerance(mut self, tol: f64) -> Self {
        self.tolerance = Some(tol);
        self
    }

    /// Batch learners: the L-BFGS memory M (default [`batch::DEFAULT_MEMORY`]).
    pub fn memory(mut self, memory: usize) -> Self {
        self.memory = Some(memory);
        self
    }

    /// subLBFGS: continue direction finding past the first descent direction (MATH.md §7's
    /// ε rule) instead of stopping at it.
    pub fn exact_direction(mut self, yes: bool) -> Self {
        self.exact_direction = yes;
        self
    }

    /// Online learners: hold out a share of the rows, score them after every epoch, and stop
    /// once `settings.patience` epochs in a row have not improved their mean loss; the model
    /// is the best epoch's ([`EarlyStopping`]; Vowpal Wabbit's holdout with
    /// `--early_terminate`, scikit-learn's `early_stopping`). Without epochs or steps set, at
    /// most [`EarlyStopping::DEFAULT_MAX_EPOCHS`] passes. The λ of a cost and balanced class
    /// weights count every row given, held-out ones too. One-vs-rest then trains each class in
    /// passes of its own (each stops on its own). Not across ranks.
    pub fn early_stopping(mut self, settings: EarlyStopping) -> Self {
        self.early_stopping = Some(settings);
        self
    }

    /// Whether one-vs-rest SGD, ASGD and CASGD train their classes in one pass over the data
    /// ([`online::fit_classes`], the default) or each class in passes of its own
    /// ([`Trainer::train_one_vs_rest`]). In one pass a class takes the same steps as alone,
    /// with its dot products summed in another order (the same bits on the scalar kernel
    /// path), and reads each row once for all classes. Classes go one at a time anyway with
    /// the O(Tn) baselines, or at least twice as many threads as classes (Hogwild workers per
    /// class); other training ignores this.
    pub fn classes_in_one_pass(mut self, yes: bool) -> Self {
        self.classes_in_one_pass = yes;
        self
    }

    /// L-BFGS with log loss on more than two classes ([`Trainer::train_one_vs_rest`]): fit
    /// the classes' models together, by multinomial logistic regression (softmax, as
    /// scikit-learn's `LogisticRegression` fits more classes; [`batch::multinomial`]), instead
    /// of each against the rest.
    pub fn multinomial(mut self, yes: bool) -> Self {
        self.multinomial = yes;
        self
    }

    /// Dual coordinate descent with hinge loss on more than two classes
    /// ([`Trainer::train_one_vs_rest`]): fit the classes' models together, by Crammer and
    /// Singer's multiclass SVM (liblinear's `-s 4`; [`batch::crammer_singer`]), each row's own
    /// class to outscore every other by a margin of 1, instead of each class against the rest.
    pub fn crammer_singer(mut self, yes: bool) -> Self {
        self.crammer_singer = yes;
        self
    }

    /// Attribute-efficient learners: k ≥ 1 attributes read per example (default
    /// [`lao::DEFAULT_ATTRIBUTES`], or d if the data have fewer features).
    pub fn attributes(mut self, k: usize) -> Self {
        self.attributes = Some(k);
        self
    }

    /// Attribute-efficient learners: the radius B > 0 of the weight ball (default 1).
    pub fn radius(mut self, radius: f64) -> Self {
        self.radius = Some(radius);
        self
    }

    /// The step size η > 0 of the attribute-efficient learners (default: the theorems' step)
    /// and of AdaGrad (default [`crate::online::AdagradRule::DEFAULT_ETA`]; its iterates are
    /// centred on an initial model, and a small η keeps them near it).
    pub fn eta(mut self, eta: f64) -> Self {
        self.eta = Some(eta);
        self
    }

    /// AESVR: the width ε > 0 of the erf smoothing of the insensitive loss |z|_δ (default
    /// [`lao::DEFAULT_SMOOTHING`]; MATH.md §8's f_ε).
    pub fn smoothing(mut self, width: f64) -> Self {
        self.smoothing = Some(width);
        self
    }

    /// Classification losses: weigh each class's loss (liblinear's `-w1 W -w-1 W`,
    /// scikit-learn's `class_weight`; [`ClassWeights`]), by given weights or by weights
    /// balanced on the rows trained on (and under [`Trainer::early_stopping`] on those it
    /// holds out, as scikit-learn balances before its validation split). Online and batch
    /// learners; default unweighted.
    pub fn class_weights(mut self, weighting: ClassWeighting) -> Self {
        self.class_weighting = Some(weighting);
        self
    }

    /// Weigh row i's loss by `weights[i]` (scikit-learn's `sample_weight`, liblinear's `-W`;
    /// [`crate::data::sample_weights`]): one non-negative finite weight per row of the data
    /// [`Trainer::train`] is given (of this rank's share, distributed), in row order, not all
    /// 0. Online and batch learners; default unweighted. Cross-validation gives each fold's
    /// training rows their own weights.
    pub fn sample_weights(mut self, weights: Vec<f64>) -> Self {
        self.sample_weights = Some(weights);
        self
    }

    /// The sample weights set, if any.
    pub fn sample_weights_given(&self) -> Option<&[f64]> {
        self.sample_weights.as_deref()
    }

    /// The learner this trainer runs.
    pub fn learner(&self) -> Learner {
        self.learner
    }

    /// The loss it trains with: the one set, else the learner's [`Learner::default_loss`].
    pub fn training_loss(&self) -> Loss {
        self.loss.unwrap_or(self.learner.default_loss())
    }

    /// The seed of its random choices.
    pub(super) fn seed_used(&self) -> u64 {
        self.seed
    }

    /// Train on `data`. The model's weights are in original feature ids (a renumbered
    /// dataset's permutation is undone), ready for [`Model::save`] and [`super::predict`].
    pub fn train(&self, data: &ExampleSet) -> Result<Model, Error> {
        Ok(self.train_monitored(data, &mut ())?.model)
    }

    /// [`Trainer::train`], reporting progress to `monitor` as it goes, and timed.
    pub fn train_monitored<M: Monitor>(
        &self,
        data: &ExampleSet,
        monitor: &mut M,
    ) -> Result<Training, Error> {
        self.train_across(data, &Local, monitor)
    }

    /// Data-parallel training ([`crate::dist`]): `data` is this rank's share, and every rank
    /// of `reducer` calls this with the same settings. Batch solvers sum across ranks every
    /// iteration; online learners train on each share with seed + rank and the ranks' models
    /// are averaged, weighted by rows, after every epoch ([`dist::online`]) or once at the end
    /// (see [`Trainer::averaging`]). Every rank returns the same model.
    pub fn train_across<M: Monitor>(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<Training, Error> {
        self.check_settings()?;
        let mut training = (self.with_lambda_of_cost(data.n_rows(), reducer)?)
            .train_at_lambda(data, reducer, monitor)?;
        if let Some(cost) = self.cost {
            training
                .model
                .info
                .details
                .insert("cost".into(), json!(cost));
        }
        Ok(training)
    }

    /// These settings with λ from the cost, if one is set ([`Trainer::cost`]), for a run on
    /// `rows` rows on this rank (`reducer` sums every rank's).
    pub(super) fn with_lambda_of_cost(
        &self,
        rows: usize,
        reducer: &dyn Reducer,
    ) -> Result<Cow<'_, Trainer>, Error> {
        let Some(cost) = self.cost else {
            return Ok(Cow::Borrowed(self));
        };
        if !(cost > 0.0 && cost.is_finite()) {
            return Err(Error::Config(format!(
                "the cost C must be a positive finite number, not {cost}"
            )));
        }
        let m = dist::total_rows(reducer, rows);
        Ok(Cow::Owned(Trainer {
            lambda: lambda_for_cost(cost, m),
            ..self.clone()
        }))
    }

    /// [`Trainer::train_across`] at the trainer's λ.
    fn train_at_lambda<M: Monitor>(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<Training, Error> {
        if self.multinomial {
            return Err(Error::Config(
                "multinomial logistic regression fits more than two classes together, as \
                 one-vs-rest training does (Trainer::train_one_vs_rest; the command line on \
                 labels of more than two values): binary data is plain logistic regression, \
                 trained without it"
                    .into(),
            ));
        }
        if self.crammer_singer {
            return Err(Error::Config(
                "the Crammer–Singer multiclass SVM fits more than two classes together, as \
                 one-vs-rest training does (Trainer::train_one_vs_rest; the command line on \
                 labels of more than two values): binary data is a plain SVM, trained without it"
                    .into(),
            ));
        }
        let weighted = self.weighted_loss_across(data, reducer)?;
        let permutation = data.feature_permutation();
        let (run, details) = match self.learner {
            Learner::AttributeEfficient(algo) if reducer.size() > 1 => {
                return Err(Error::Config(format!("{algo} has no distributed version")));
            }
            Learner::AttributeEfficient(algo) => self.train_lao(algo, weighted.loss(), data)?,
            _ => self.run_learner(data, permutation, weighted, None, reducer, monitor)?,
        };
        self.finish(run, details, weighted, permutation, reducer)
    }

    /// These batch settings started from a run of them at another strength on the same rows,
    /// of model `model` and dual variables `dual`: dcd from those, the primal solvers from the
    /// model (and not from ASGD epochs).
    pub(in crate::api) fn continued_from(&self, model: Model, dual: Option<Vec<f64>>) -> Trainer {
        let mut next = self.clone();
        match dual {
            Some(dual) => next.initial_dual = Some(dual),
            None => {
                next.initial_model = Some(model);
                next.warm_start = None;
            }
        }
        next
    }

    /// The settings' own checks, before any data is read: those the learner does not use,
    /// and values out of range.
    fn check_settings(&self) -> Result<(), Error> {
        self.refuse_settings_that_do_not_apply()?;
        if let Some(threads) = self.threads.filter(|t| !(1..=MAX_THREADS).contains(t)) {
            return Err(Error::Config(format!(
                "threads must be from 1 to {MAX_THREADS}, got {threads}"
            )));
        }
        if let Some(settings) = &self.early_stopping {
            settings.check()?;
        }
        if self.averages_per_epoch == Some(0) {
            return Err(Error::Config(
                "averages per epoch must be at least 1".into(),
            ));
        }
        // The parameters a loss parsed from text is held to (`Loss::from_str`), for a loss
        // built in code: out of range, a run trained and saved a model no load would take.
        match self.training_loss() {
            loss @ (Loss::EpsilonInsensitive(eps) | Loss::SquaredEpsilonInsensitive(eps))
                if !(eps >= 0.0 && eps.is_finite()) =>
            {
                let name = match loss {
                    Loss::EpsilonInsensitive(_) => "ε-insensitive",
                    _ => "squared ε-insensitive",
                };
                Err(Error::Config(format!(
                    "the ε of the {name} loss must be a non-negative number, got {eps}"
                )))
            }
            Loss::Quantile(tau) if !(tau > 0.0 && tau < 1.0) => Err(Error::Config(format!(
                "the τ of the quantile loss must be a number between 0 and 1, got {tau}"
            ))),
            Loss::Huber(delta) if !(delta > 0.0 && delta.is_finite()) => Err(Error::Config(
                format!("the δ of Huber's loss must be a positive number, got {delta}"),
            )),
            loss if !loss.has_stochastic_steps() => match self.learner {
                // AdaGrad sizes its steps by the gradients it meets, not by a bound on them.
                Learner::Online(algorithm) if algorithm.is_adagrad() => Ok(()),
                Learner::Batch(batch::Algorithm::SubGd) | Learner::Online(_) => {
                    Err(Error::Config(format!(
                        "{} cannot learn {loss} loss: its curvature e^p has no bound the step \
                         sizes could be set from; use lbfgs, tron, newton, cd or adagrad",
                        self.learner
                    )))
                }
                Learner::Batch(_) if self.warm_start.is_some() => Err(Error::Config(format!(
                    "a warm start runs ASGD, which cannot step on {loss} loss: start {loss} \
                     loss's solver from zero or from an initial model"
                ))),
                // The attribute-efficient learners name the loss they learn themselves.
                Learner::Batch(_) | Learner::AttributeEfficient(_) => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The online learner or batch solver run on `data`'s rows, weighed by the sample
    /// weights if any (`columns`: [`batch::Options::columns`]).
    fn run_learner<M: Monitor, E: Examples>(
        &self,
        data: &E,
        permutation: Option<&[u32]>,
        weighted: WeightedLoss,
        columns: Option<&Arc<ColumnMajor>>,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<(Run, serde_json::Value), Error> {
        let rows = match &self.sample_weights {
            Some(weights) => {
                Some(SampleWeighted::new(data, weights).map_err(|e| Error::Config(e.to_string()))?)
            }
            None => None,
        };
        match (self.learner, &rows) {
            (Learner::Online(algorithm), None) => {
                self.train_online(algorithm, weighted, data, permutation, reducer, monitor)
            }
            (Learner::Online(algorithm), Some(rows)) => {
                self.train_online(algorithm, weighted, rows, permutation, reducer, monitor)
            }
            (Learner::Batch(algorithm), None) => self.train_batch(
                algorithm,
                weighted,
                data,
                permutation,
                columns,
                reducer,
                monitor,
            ),
            (Learner::Batch(algorithm), Some(rows)) => self.train_batch(
                algorithm,
                weighted,
                rows,
                permutation,
                columns,
                reducer,
                monitor,
            ),
            (Learner::AttributeEfficient(algo), _) => {
                unreachable!("{algo} is trained by train_lao")
            }
        }
    }

    /// The model of a finished run, in original feature ids, with what it was trained with;
    /// an error if it diverged.
    fn finish(
        &self,
        run: Run,
        mut details: serde_json::Value,
        weighted: WeightedLoss,
        permutation: Option<&[u32]>,
        reducer: &dyn Reducer,
    ) -> Result<Training, Error> {
        if let Some(weights) = &self.sample_weights {
            // Over every rank's rows (one sum, which every rank makes).
            let zero = weights.iter().filter(|&&s| s == 0.0).count();
            let mut totals = [weights.iter().sum::<f64>(), zero as f64];
            reducer.sum(&mut totals);
            details["sample_weights"] = json!({ "sum": totals[0], "zero": totals[1] as u64 });
        }
        if !(run.bias.is_finite() && run.weights.iter().all(|w| w.is_finite())) {
            return Err(Error::Diverged {
                algorithm: self.learner.to_string(),
                cure: match self.learner {
                    Learner::AttributeEfficient(_) => "a smaller radius B or step size η",
                    Learner::Batch(_) => SCALE_CURE,
                    Learner::Online(a) if a.is_adagrad() => {
                        "scaling the features (`--scale max-abs`, or `api::scaled`) or a smaller \
                         step η"
                    }
                    Learner::Online(_) => "a larger λ or a smaller step size",
                },
            });
        }
        let to_original = |weights: Vec<f64>| match permutation {
            Some(permutation) => weights_to_original(&weights, permutation),
            None => weights,
        };
        let weights = to_original(run.weights);
        let resume = run.resume.map(|state| ResumeState {
            last: state.last.map(|last| online::Iterate {
                weights: to_original(last.weights),
                bias: last.bias,
            }),
            ..state
        });
        // The attribute-efficient learners have neither λ nor a bias.
        let lao = matches!(self.learner, Learner::AttributeEfficient(_));
        let model = Model {
            weights,
            bias: run.bias,
            loss: weighted.loss(),
            info: TrainingInfo {
                algorithm: self.learner.to_string(),
                lambda: if lao { 0.0 } else { self.lambda },
                l1: self.l1,
                regularize_bias: self.regularize_bias && !lao,
                class_weights: weighted.class_weights(),
                details: details.as_object().cloned().unwrap_or_default(),
            },
            resume,
            column_scales: None,
        };
        Ok(Training {
            model,
            seconds: run.seconds,
            examples: run.examples,
            dual: run.dual,
        })
    }

    /// The loss a run on `data` trains with, and its class weights: unit unless set, the
    /// balanced ones computed from `data`'s classes. An error for a classification loss unless
    /// `data` has both classes and at most two label values, and for weights that cannot be
    /// used ([`WeightedLoss::new`]).
    pub fn weighted_loss_for(&self, data: &ExampleSet) -> Result<WeightedLoss, Error> {
        self.weighted_loss_across(data, &Local)
    }

    /// [`Trainer::weighted_loss_for`] on every rank's share of the data.
    fn weighted_loss_across(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
    ) -> Result<WeightedLoss, Error> {
        let loss = self.training_loss();
        let classes = if loss.is_classification() {
            Some(count_two_classes(loss, data, reducer)?)
        } else {
            None
        };
        if loss == Loss::Poisson {
            check_counts(data, reducer)?;
        }
        let class_weights = match (&self.class_weighting, classes) {
            (None, _) => Ok(ClassWeights::UNIT),
            (Some(_), None) => Err(ClassWeightError::Regression(loss)),
            (Some(weighting), Some((positives, negatives))) => {
                weighting.binary(positives, negatives)
            }
        };
        class_weights
            .and_then(|weights| WeightedLoss::new(loss, weights))
            .map_err(|e| Error::Config(e.to_string()))
    }

    /// An error naming the first setting that the chosen learner does not use.
    fn refuse_settings_that_do_not_apply(&self) -> Result<(), Error> {
        let (online, batch, lao, family) = match self.learner {
            Learner::Online(_) => (true, false, false, "n online"),
            Learner::Batch(_) => (false, true, false, " batch"),
            Learner::AttributeEfficient(_) => (false, false, true, "n attribute-efficient"),
        };
        let aesvr = self.learner == Learner::AttributeEfficient(lao::Algo::Aesvr);
        let (averaging, hogwild, adagrad) = match self.learner {
            Learner::Online(a) => (a.averages(), a.has_hogwild(), a.is_adagrad()),
            _ => (false, false, false),
        };
        let scheduled = online && !adagrad;
        let primal = matches!(self.learner, Learner::Batch(a) if a.is_primal());
        let with_memory = matches!(self.learner, Learner::Batch(a) if a.has_memory());
        // (setting, whether it is set, whether this learner uses it)
        let settings = [
            ("cost", self.cost.is_some(), online || batch),
            ("epochs/steps", self.stop.is_some(), online),
            ("t0", self.t0.is_some(), scheduled),
            ("average_start", self.average_start.is_some(), averaging),
            ("threads", self.threads.is_some(), online || batch),
            ("scalar_sharing", self.scalars.is_some(), hogwild),
            ("hot_features", self.hot_features.is_some(), hogwild),
            ("averaging", self.averaging.is_some(), online),
            ("local steps", self.local_steps.is_some(), scheduled),
            (
                "averages per epoch",
                self.averages_per_epoch.is_some(),
                online,
            ),
            // Batch solvers always regularize the bias; attribute-efficient ones have none.
            ("a free bias", !self.regularize_bias, online),
            ("a model without a bias", !self.fit_bias, batch),
            ("bias_rate", self.bias_rate.is_some(), scheduled),
            ("max_iterations", self.max_iterations.is_some(), batch),
            ("warm_start_epochs", self.warm_start.is_some(), primal),
            (
                "initial_model",
                self.initial_model.is_some(),
                primal || online,
            ),
            (
                "initial_dual",
                self.initial_dual.is_some(),
                self.learner == Learner::Batch(batch::Algorithm::Dcd),
            ),
            (
                "sample_weights",
                self.sample_weights.is_some(),
                online || batch,
            ),
            ("save_resume", self.save_resume, scheduled),
            ("early_stopping", self.early_stopping.is_some(), online),
            ("resume", self.resume.is_some(), scheduled),
            ("tolerance", self.tolerance.is_some(), batch),
            ("memory", self.memory.is_some(), with_memory),
            ("exact_direction", self.exact_direction, primal),
            ("attributes", self.attributes.is_some(), lao),
            ("radius", self.radius.is_some(), lao),
            ("eta", self.eta.is_some(), lao || adagrad),
            ("smoothing", self.smoothing.is_some(), aesvr),
            (
                "multinomial",
                self.multinomial,
                self.learner == Learner::Batch(batch::Algorithm::Lbfgs),
            ),
            (
                "crammer_singer",
                self.crammer_singer,
                self.learner == Learner::Batch(batch::Algorithm::Dcd),
            ),
            (
                "an L1 term",
                self.l1 != 0.0,
                match self.learner {
                    Learner::Batch(algorithm) => {
                        matches!(algorithm, batch::Algorithm::Lbfgs | batch::Algorithm::Cd)
                    }
                    Learner::Online(algorithm) => algorithm.has_l1(),
                    Learner::AttributeEfficient(_) => false,
                },
            ),
        ];
        if self.multinomial && !self.fit_bias {
            return Err(Error::Config(
                "multinomial logistic regression fits a bias per class: train the classes one \
                 against the rest (without multinomial) for models without a bias"
                    .into(),
            ));
        }
        if self.multinomial && self.l1 != 0.0 {
            return Err(Error::Config(
                "multinomial logistic regression has no L1 term: train the classes one against \
                 the rest (without multinomial) for L1-regularized models"
                    .into(),
            ));
        }
        match settings.iter().find(|(_, set, used)| *set && !*used) {
            Some((what, _, _)) => Err(Error::Config(format!(
                "{what} does not apply to {} (a{family} learner{})",
                self.learner,
                match (online, averaging, hogwild) {
                    _ if adagrad => {
                        " that sizes its steps by its gradients: no t₀, bias rate or local \
                         steps, and a model holds no squared gradients to resume with"
                    }
                    (true, false, false) => " that neither averages nor runs in parallel",
                    (true, false, true) => " that does not average",
                    (true, true, false) => " that does not run in parallel",
                    _ => "",
                }
            ))),
            None => Ok(()),
        }
    }

    /// The initial model's weights and bias over `n` features of data whose columns
    /// `permutation` renumbered (features the model lacks start at 0), if there is one.
    fn initial_iterate(&self, n: usize, permutation: Option<&[u32]>) -> Option<online::Iterate> {
        (self.initial_model.as_ref())
            .map(|model| iterate_in_columns(&model.weights, model.bias, n, permutation))
    }

    /// `solve` run in a pool of the threads set, if set (else in the current pool).
    fn on_threads<T: Send>(&self, solve: impl FnOnce() -> T + Send) -> Result<T, Error> {
        match self.threads {
            Some(threads) => Ok(thread_pool(threads)?.install(solve)),
            None => Ok(solve()),
        }
    }
}

/// Weights in original feature ids, and a bias, as an iterate over data of `n` columns
/// numbered by `permutation` (features the weights lack at 0, [`weights_in_columns`]).
fn iterate_in_columns(
    weights: &[f64],
    bias: f64,
    n: usize,
    permutation: Option<&[u32]>,
) -> online::Iterate {
    let mut weights = weights_in_columns(weights, n, permutation).into_owned();
    weights.resize(n, 0.0);
    online::Iterate { weights, bias }
}

/// The cure of a batch solver's divergence: its steps come from a line search, so what
/// overflows is the data's scale.
const SCALE_CURE: &str = "scaling the features (`--scale max-abs`, or `api::scaled`; products \
                          of values beyond about 1e150 overflow)";

/// λ of the objective whose multiple by C·m is liblinear's ½‖w‖² + C Σ ℓ_i over `rows` rows:
/// 1/(C·m) ([`Trainer::cost`]).
pub fn lambda_for_cost(cost: f64, rows: usize) -> f64 {
    1.0 / (cost * rows as f64)
}

/// What one family's run hands back before the weights are mapped to original ids.
struct Run {
    weights: Vec<f64>,
    bias: f64,
    seconds: f64,
    examples: u64,
    /// An online run's resume state, in the data's column numbering.
    resume: Option<ResumeState>,
    /// dcd's dual variables ([`Training::dual`]).
    dual: Option<Vec<f64>>,
}

/// A rayon pool of `threads` threads.
fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("cannot start {threads} threads: {e}")))
}

/// An error unless every label over all ranks is a count or rate (finite, ≥ 0), as the
/// Poisson loss needs: below 0 its deviance is undefined (on a row of sample weight 0 too,
/// whose term would be 0·NaN).
fn check_counts(data: &ExampleSet, reducer: &dyn Reducer) -> Result<(), Error> {
    let labels = crate::metrics::labels(data);
    let bad = labels.iter().position(|y| !(*y >= 0.0 && y.is_finite()));
    // One collective for every rank, whatever this rank found.
    let mut found = [f64::from(u8::from(bad.is_some()))];
    reducer.sum(&mut found);
    if found[0] > 0.0 {
        let at = bad.map_or("on another rank".to_string(), |i| {
            format!("the label of row {} is {}", i + 1, labels[i])
        });
        return Err(Error::Config(format!(
            "poisson loss needs labels that are counts or rates, finite and ≥ 0, but {at}"
        )));
    }
    Ok(())
}

/// The rows of the classes +1 and −1 over all ranks. Classification losses read a label > 0
/// as +1 and any other as −1, so that ±1 and 0/1 labels both work. An error unless both
/// classes occur (counted over all ranks) and the labels take at most two values (on each
/// rank): labels 1 and 2 would otherwise train a single class without a word, and 1, 2, 3 is a
/// multiclass problem this binary learner does not solve.
fn count_two_classes(
    loss: Loss,
    data: &ExampleSet,
    reducer: &dyn Reducer,
) -> Result<(u64, u64), Error> {
    let labels = crate::metrics::labels(data);
    let many = crate::metrics::more_than_two_values(&labels);
    let positive = labels.iter().filter(|&&y| y > 0.0).count();
    // One collective for every rank, whatever this rank found.
    let mut counts = [
        positive as f64,
        (labels.len() - positive) as f64,
        f64::from(u8::from(many.is_some())),
    ];
    reducer.sum(&mut counts);
    let [positive, negative, many_somewhere] = counts;
    if many_somewhere > 0.0 {
        let values = many.map_or("on another rank".to_string(), |[a, b, c]| {
            format!("{a}, {b}, {c}, …")
        });
        return Err(Error::Config(format!(
            "{loss} loss is binary classification, but the labels take more than two values \
             ({values}): label one class > 0 and the other ≤ 0 (e.g. ±1); one-vs-rest \
             training learns more classes (Trainer::train_one_vs_rest, sl_train_one_vs_rest \
             from C, or `sparselin train`)"
        )));
    }
    if positive + negative > 0.0 && (positive == 0.0 || negative == 0.0) {
        let side = if negative == 0.0 { "> 0" } else { "≤ 0" };
        return Err(Error::Config(format!(
            "{loss} loss needs both classes, but every label is {side} (a label > 0 is the \
             class +1, any other −1)"
        )));
    }
    Ok((positive as u64, negative as u64))
}
