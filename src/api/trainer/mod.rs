//! [`Trainer`]: one learner of any family with its settings, run on a dataset; what the
//! `sparselin train` command line and the C ABI build their models with.

use std::sync::Arc;

use serde_json::json;

use super::{Error, ExampleSet, Examples, Learner, Loss, Model};
use crate::batch::{self, Objective};
use crate::data::column_major::ColumnMajor;
use crate::data::{ClassVsRest, SampleWeighted};
use crate::dist::online::{self as dist_online, Averaging, LocalSteps};
use crate::dist::{self, Local, Reducer};
use crate::lao::{self, LaoConfig, SmoothedInsensitive};
use crate::loss::{ClassWeightError, ClassWeighting, ClassWeights, WeightedLoss};
use crate::model::{OneVsRest, ResumeState, TrainingInfo, weights_in_columns, weights_to_original};
use crate::online::hogwild::{self, ScalarSharing};
use crate::online::{self, Sampling, Stop};

mod multinomial;
mod one_pass;

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
    l1: f64,
    stop: Option<Stop>,
    seed: u64,
    regularize_bias: bool,
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
    resume: Option<Model>,
    save_resume: bool,
    /// Whether Hogwild workers are pinned to cores ([`hogwild::Options::pin`]): not where
    /// several runs share the process, as one-vs-rest's classes do.
    pin_workers: bool,
    multinomial: bool,
    classes_in_one_pass: bool,
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
}

/// A finished one-vs-rest training: the classifier and what its classes' runs cost.
#[derive(Clone, Debug, PartialEq)]
pub struct OneVsRestTraining {
    /// One model per class, in original feature ids.
    pub classifier: OneVsRest,
    /// Wall-clock seconds of training every class (classes train at once where threads
    /// allow: [`Trainer::train_one_vs_rest`]).
    pub seconds: f64,
    /// Examples processed, summed over the classes (as [`Training::examples`]).
    pub examples: u64,
}

impl OneVsRestTraining {
    /// The classifier of the classes' trainings, one per class in the order of `classes`,
    /// which started at `started`.
    fn of(
        classes: Vec<f64>,
        trainings: Vec<Training>,
        started: std::time::Instant,
    ) -> Result<OneVsRestTraining, Error> {
        let seconds = started.elapsed().as_secs_f64();
        let examples = trainings.iter().map(|t| t.examples).sum();
        let models = trainings.into_iter().map(|t| t.model).collect();
        Ok(OneVsRestTraining {
            classifier: OneVsRest::new(classes, models).map_err(Error::Config)?,
            seconds,
            examples,
        })
    }
}

impl Trainer {
    /// `learner` with the defaults: its [`Learner::default_loss`], λ = 10⁻⁴, seed 1, a
    /// regularized bias, [`DEFAULT_EPOCHS`] passes (online), the batch solvers' own limits.
    pub fn new(learner: Learner) -> Self {
        Trainer {
            learner,
            loss: None,
            lambda: 1e-4,
            l1: 0.0,
            stop: None,
            seed: 1,
            regularize_bias: true,
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
            resume: None,
            save_resume: false,
            pin_workers: true,
            multinomial: false,
            classes_in_one_pass: true,
        }
    }

    /// The loss ℓ (online and batch learners; AESVR takes ε from `EpsilonInsensitive(ε)`).
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = Some(loss);
        self
    }

    /// λ > 0 of the objective (online and batch learners).
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self
    }

    /// λ₁ ≥ 0 of an L1 term λ₁(‖w‖₁ + |b|) added to the objective (0, the default: none):
    /// L1-regularized models, sparse, as liblinear's `-s 6` (λ = 0, C = 1/(λ₁m)) and
    /// scikit-learn's `penalty='l1'` fit them, or with λ > 0 the elastic net. Batch L-BFGS
    /// (run as OWL-QN) and coordinate descent (`cd`) with a smooth loss; SGD and its baseline
    /// (truncated gradient, λ > 0, on one thread: a thread count of 1, classes one at a time).
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
    /// keeps in a private copy between merges ([`hogwild::Options::hot_features`]; default
    /// [`hogwild::DEFAULT_HOT_FEATURES`]).
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

    /// Attribute-efficient learners: the step size η > 0 (default: the theorems' step).
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
    /// balanced on the rows trained on. Online and batch learners; default unweighted.
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
        if self.multinomial {
            return Err(Error::Config(
                "multinomial logistic regression fits more than two classes together: train \
                 them with Trainer::train_one_vs_rest (binary data is plain logistic regression)"
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

    /// One binary model per class of `data`, each trained with these settings on the class
    /// against the rest ([`ClassVsRest`]): liblinear's multiclass `-s 0..3`, scikit-learn's
    /// `OneVsRestClassifier`. The classes are the labels' distinct values, which must be whole
    /// numbers, at least two. For a classification loss of an online learner or batch solver,
    /// without an initial model or a resume state (each refused). Class
    /// weights are given by label or balanced ([`ClassWeighting::one_vs_rest`]): class k's
    /// rows weigh c_k in its problem (the weight named for its label, or m/(K·m_k)) and the
    /// other rows 1, as liblinear (`-wi`) and scikit-learn weigh them.
    ///
    /// Classes train at once on the threads set ([`Trainer::threads`]; every core if not),
    /// each with an equal share of them: with 8 threads and 5 classes, 5 at once on 1 thread
    /// each. An online learner without a thread count trains each class on one thread, so
    /// that the classifier is the same bit for bit on any machine; batch solvers give the
    /// same result on any number of threads. SGD, ASGD and CASGD train the classes at once,
    /// in one pass over the data, or one pass per group of classes on more threads
    /// ([`Trainer::classes_in_one_pass`]). `monitor` is told each class as its training
    /// starts; it follows the progress only where one run trains at a time (a budget of 1
    /// thread).
    pub fn train_one_vs_rest<M: Monitor>(
        &self,
        data: &ExampleSet,
        monitor: &mut M,
    ) -> Result<OneVsRestTraining, Error> {
        self.train_classes(data, &Local, monitor, false)
    }

    /// Data-parallel one-vs-rest training ([`Trainer::train_one_vs_rest`] as
    /// [`Trainer::train_across`] trains one model): `data` is this rank's share, the classes
    /// are the labels of every rank's rows, and each class trains across the ranks in turn,
    /// on the threads set (SGD, ASGD and CASGD: every class at once in one pass over each
    /// share, [`Trainer::classes_in_one_pass`], each class's iterates averaged across the
    /// ranks as [`Trainer::train_across`] averages one model's). Every rank returns the same
    /// classifier.
    pub fn train_one_vs_rest_across<M: Monitor>(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<OneVsRestTraining, Error> {
        self.train_classes(data, reducer, monitor, false)
    }

    /// [`Trainer::train_one_vs_rest_across`], with class weights named for labels that are
    /// not classes of `data` skipped if `absent_ok` (as a fold of cross-validation may lack a
    /// class), else refused.
    pub(super) fn train_classes<M: Monitor>(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
        monitor: &mut M,
        absent_ok: bool,
    ) -> Result<OneVsRestTraining, Error> {
        self.check_settings()?;
        let loss = self.training_loss();
        if let Learner::AttributeEfficient(algo) = self.learner {
            return Err(Error::Config(format!(
                "{algo} is a regression: one-vs-rest trains the online learners and batch solvers"
            )));
        }
        if !loss.is_classification() {
            return Err(Error::Config(format!(
                "one-vs-rest trains a classifier per class, and {loss} loss is a regression"
            )));
        }
        let refused = [
            (self.initial_model.is_some(), "an initial model"),
            (self.resume.is_some(), "a resumed run"),
            (self.save_resume, "a resume state"),
        ];
        if let Some((_, what)) = refused.iter().find(|(set, _)| *set) {
            return Err(Error::Config(format!(
                "one-vs-rest training does not take {what}"
            )));
        }
        let (classes, rows) = class_labels_across(data, reducer)?;
        let weights = self.one_vs_rest_weights(&classes, &rows, absent_ok)?;
        if self.multinomial {
            return self.train_multinomial(data, &classes, &weights, reducer, monitor);
        }
        if let Some(algorithm) = self.one_pass_algorithm(classes.len()) {
            return self
                .train_classes_in_one_pass(data, algorithm, &classes, &weights, reducer, monitor);
        }
        // Across ranks, the classes' sums must come in the same order on every rank.
        let (at_once, trainer) = match reducer.size() {
            1 => self.class_trainer(classes.len()),
            _ => (1, self.clone()),
        };
        let started = std::time::Instant::now();
        let columns = self.shared_columns(data, reducer)?;
        let columns = columns.as_ref();
        let trainings: Vec<Result<Training, Error>> = if at_once == 1 {
            let mut trainings = Vec::with_capacity(classes.len());
            for (k, &class) in classes.iter().enumerate() {
                monitor.class_start(class, k, classes.len());
                let weights = weights[k];
                let training = trainer.train_class(data, class, weights, columns, reducer, monitor);
                trainings.push(training);
            }
            trainings
        } else {
            let monitor = std::sync::Mutex::new(monitor);
            at_most_at_once(at_once, classes.len(), |k| {
                let class = classes[k];
                if let Ok(mut monitor) = monitor.lock() {
                    monitor.class_start(class, k, classes.len());
                }
                trainer.train_class(data, class, weights[k], columns, &Local, &mut ())
            })?
        };
        let trainings = trainings.into_iter().collect::<Result<Vec<_>, _>>()?;
        OneVsRestTraining::of(classes, trainings, started)
    }

    /// How one-vs-rest spends the threads: (classes trained at once, the trainer of each).
    /// The budget is the threads set, else every core; at most one class per thread runs at
    /// once, each with an equal share. An online learner without a thread count stays on one
    /// thread per class (its result then is the single-threaded one, bit for bit), and so
    /// does one without Hogwild workers; batch solvers give the same result on any number.
    /// Classes at once leave their workers unpinned: each would pin its own to the same
    /// first cores.
    fn class_trainer(&self, classes: usize) -> (usize, Trainer) {
        let (at_once, per_class) = self.class_threads(classes);
        let mut trainer = match per_class {
            Some(threads) => self.clone().threads(threads),
            None => self.clone(),
        };
        trainer.pin_workers = at_once == 1;
        (at_once, trainer)
    }

    /// [`Trainer::class_trainer`]'s split of the threads: (classes at once, each one's thread
    /// count, `None` to keep the trainer's own).
    fn class_threads(&self, classes: usize) -> (usize, Option<usize>) {
        let budget = self
            .threads
            .unwrap_or_else(rayon::current_num_threads)
            .max(1);
        let at_once = budget.min(classes);
        let per_class = match (self.learner, self.threads) {
            (Learner::Online(_), None) => None,
            (Learner::Online(a), Some(_)) if !a.has_hogwild() => Some(1),
            _ => Some(budget / at_once),
        };
        (at_once, per_class)
    }

    /// Each class's weights against the rest ([`ClassWeighting::one_vs_rest`]; unit without
    /// class weights) for the classes `classes` with `rows[k]` rows of class k.
    pub(super) fn one_vs_rest_weights(
        &self,
        classes: &[f64],
        rows: &[u64],
        absent_ok: bool,
    ) -> Result<Vec<ClassWeights>, Error> {
        match &self.class_weighting {
            None => Ok(vec![ClassWeights::UNIT; rows.len()]),
            Some(weighting) => (weighting.one_vs_rest(classes, rows, absent_ok))
                .map_err(|e| Error::Config(e.to_string())),
        }
    }

    /// The column-major copy of `data` that every class's coordinate descent reads, built once
    /// for them all (one per class would cost its time and memory again); `None` for the other
    /// solvers, and across ranks, where cd does not run.
    fn shared_columns(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
    ) -> Result<Option<Arc<ColumnMajor>>, Error> {
        if self.learner != Learner::Batch(batch::Algorithm::Cd) || reducer.size() > 1 {
            return Ok(None);
        }
        let columns = ColumnMajor::of(data).map_err(batch::SolveError::from)?;
        Ok(Some(Arc::new(columns)))
    }

    /// Class `class` of `data` against the rest, trained across the ranks of `reducer` with
    /// these settings and the class weights `weights` (`columns`: [`batch::Options::columns`]).
    fn train_class<M: Monitor>(
        &self,
        data: &ExampleSet,
        class: f64,
        weights: ClassWeights,
        columns: Option<&Arc<ColumnMajor>>,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<Training, Error> {
        let weighted = WeightedLoss::new(self.training_loss(), weights)
            .map_err(|e| Error::Config(e.to_string()))?;
        let permutation = data.feature_permutation();
        let rows = ClassVsRest::new(data, class);
        let (run, details) =
            self.run_learner(&rows, permutation, weighted, columns, reducer, monitor)?;
        self.finish(run, details, weighted, permutation, reducer)
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
        if self.averages_per_epoch == Some(0) {
            return Err(Error::Config(
                "averages per epoch must be at least 1".into(),
            ));
        }
        if let Loss::EpsilonInsensitive(eps) = self.training_loss()
            && !(eps >= 0.0 && eps.is_finite())
        {
            return Err(Error::Config(format!(
                "the ε of the ε-insensitive loss must be a non-negative number, got {eps}"
            )));
        }
        Ok(())
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
                    // Their steps come from a line search: what overflows is the data's scale.
                    Learner::Batch(_) => {
                        "scaling the features (products of values beyond about 1e150 overflow)"
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
        };
        Ok(Training {
            model,
            seconds: run.seconds,
            examples: run.examples,
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
        let (averaging, hogwild) = match self.learner {
            Learner::Online(a) => (a.averages(), a.has_hogwild()),
            _ => (false, false),
        };
        let primal = matches!(self.learner, Learner::Batch(a) if a.is_primal());
        let with_memory = matches!(self.learner, Learner::Batch(a) if a.has_memory());
        // (setting, whether it is set, whether this learner uses it)
        let settings = [
            ("epochs/steps", self.stop.is_some(), online),
            ("t0", self.t0.is_some(), online),
            ("average_start", self.average_start.is_some(), averaging),
            ("threads", self.threads.is_some(), online || batch),
            ("scalar_sharing", self.scalars.is_some(), hogwild),
            ("hot_features", self.hot_features.is_some(), hogwild),
            ("averaging", self.averaging.is_some(), online),
            ("local steps", self.local_steps.is_some(), online),
            (
                "averages per epoch",
                self.averages_per_epoch.is_some(),
                online,
            ),
            // Batch solvers always regularize the bias; attribute-efficient ones have none.
            ("a free bias", !self.regularize_bias, online),
            ("bias_rate", self.bias_rate.is_some(), online),
            ("max_iterations", self.max_iterations.is_some(), batch),
            ("warm_start_epochs", self.warm_start.is_some(), primal),
            (
                "initial_model",
                self.initial_model.is_some(),
                primal || online,
            ),
            (
                "sample_weights",
                self.sample_weights.is_some(),
                online || batch,
            ),
            ("save_resume", self.save_resume, online),
            ("resume", self.resume.is_some(), online),
            ("tolerance", self.tolerance.is_some(), batch),
            ("memory", self.memory.is_some(), with_memory),
            ("exact_direction", self.exact_direction, primal),
            ("attributes", self.attributes.is_some(), lao),
            ("radius", self.radius.is_some(), lao),
            ("eta", self.eta.is_some(), lao),
            ("smoothing", self.smoothing.is_some(), aesvr),
            (
                "multinomial",
                self.multinomial,
                self.learner == Learner::Batch(batch::Algorithm::Lbfgs),
            ),
            (
                "an L1 term",
                self.l1 != 0.0,
                match self.learner {
                    Learner::Batch(algorithm) => {
                        matches!(algorithm, batch::Algorithm::Lbfgs | batch::Algorithm::Cd)
                    }
                    Learner::Online(algorithm) => matches!(
                        algorithm,
                        online::Algorithm::Sgd | online::Algorithm::NaiveSgd
                    ),
                    Learner::AttributeEfficient(_) => false,
                },
            ),
        ];
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

    /// The resume state of `model` if this trainer can go on from it with `algorithm` and
    /// `loss` on `ranks` ranks over `features` features, else an error naming what differs.
    fn check_resumable<'m>(
        &self,
        model: &'m Model,
        algorithm: online::Algorithm,
        loss: Loss,
        (ranks, features): (usize, usize),
    ) -> Result<&'m ResumeState, Error> {
        let refuse = |why: String| Err(Error::Config(format!("cannot resume: {why}")));
        let Some(state) = &model.resume else {
            return refuse(
                "the model holds no resume state (train it with save_resume, \
                 `--save-resume`)"
                    .into(),
            );
        };
        if self.initial_model.is_some() {
            return refuse("a run resumes or starts from an initial model, not both".into());
        }
        if ranks > 1 {
            return refuse("a distributed run's ranks count their steps apart".into());
        }
        if model.n_features() > features {
            // Its weights beyond them would be dropped, and its run with them.
            return refuse(format!(
                "the model has {} features, the data {features}: read it with at least the \
                 model's (`--features {}`)",
                model.n_features(),
                model.n_features()
            ));
        }
        let trained: Option<online::Algorithm> = model.info.algorithm.parse().ok();
        if trained.map(single_step_rule) != Some(single_step_rule(algorithm)) {
            return refuse(format!(
                "the model was trained by {}, this run is {algorithm}",
                model.info.algorithm
            ));
        }
        let differs = |what: &str, was: String, now: String| {
            refuse(format!(
                "the model was trained with {what} {was}, this run has {now}"
            ))
        };
        if model.loss != loss {
            return differs("loss", model.loss.to_string(), loss.to_string());
        }
        if model.info.lambda != self.lambda {
            return differs(
                "lambda",
                model.info.lambda.to_string(),
                self.lambda.to_string(),
            );
        }
        if model.info.l1 != self.l1 {
            return differs("l1", model.info.l1.to_string(), self.l1.to_string());
        }
        if model.info.regularize_bias != self.regularize_bias {
            let name = |regularized| if regularized { "regularized" } else { "free" };
            let (was, now) = (model.info.regularize_bias, self.regularize_bias);
            return differs("a bias", name(was).into(), name(now).into());
        }
        let given = [
            ("t0", self.t0.map(|t0| t0 != state.t0), state.t0.to_string()),
            (
                "average start",
                self.average_start.map(|ta| ta != state.average_start),
                state.average_start.to_string(),
            ),
            (
                "bias rate",
                self.bias_rate.map(|rate| rate != state.bias_rate),
                state.bias_rate.to_string(),
            ),
        ];
        if let Some((what, _, was)) = given.into_iter().find(|(_, other, _)| *other == Some(true)) {
            return refuse(format!(
                "the model's run had {what} {was}, which a resumed run keeps"
            ));
        }
        Ok(state)
    }

    #[allow(clippy::too_many_arguments)]
    fn train_online<M: Monitor, E: Examples>(
        &self,
        algorithm: online::Algorithm,
        weighted: WeightedLoss,
        data: &E,
        permutation: Option<&[u32]>,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<(Run, serde_json::Value), Error> {
        let loss = weighted.loss();
        let mut config = online::Config {
            class_weights: weighted.class_weights(),
            ..self.online_config(loss)
        };
        let ranks = reducer.size();
        if self.save_resume && ranks > 1 {
            return Err(Error::Config(
                "save_resume needs a single-process run: the ranks count their steps apart".into(),
            ));
        }
        let start = match &self.resume {
            Some(model) => {
                let shape = (ranks, data.n_features());
                let state = self.check_resumable(model, algorithm, loss, shape)?;
                (config.t0, config.average_start) = (Some(state.t0), state.average_start);
                config.bias_rate = state.bias_rate;
                let shape = (data.n_rows(), data.n_features());
                Some(resumed_start(model, state, shape, permutation))
            }
            None => self
                .initial_iterate(data.n_features(), permutation)
                .map(online::Start::warm),
        };
        let start = start.as_ref();
        let resumed_at = self.resume.as_ref().and(start).map(|start| start.steps);
        let parallel = algorithm.has_hogwild();
        let averaging = (ranks > 1).then(|| self.averaging.unwrap_or_default());
        if averaging == Some(Averaging::End) {
            // Every rank a whole run on its share, averaged once below.
            config = dist::online::end_config(&config, data, reducer);
        }
        let fit = match self.threads {
            Some(threads) if threads > 1 && averaging == Some(Averaging::Epoch) => {
                return Err(Error::Config(format!(
                    "averaging every epoch across ranks runs one thread per rank ({threads} \
                     threads asked): use threads 1, or average once at the end"
                )));
            }
            _ if averaging == Some(Averaging::Epoch) => {
                let options = dist_online::Options {
                    local_steps: self.local_steps.unwrap_or_default(),
                    per_epoch: self.averages_per_epoch.unwrap_or(1),
                };
                dist::online::fit_from(data, algorithm, &config, start, &options, reducer, monitor)?
            }
            // An L1 term's truncation runs on one thread: a thread count of 1 is that run.
            Some(threads) if parallel && (threads > 1 || config.l1 == 0.0) => {
                let options = hogwild::Options {
                    scalars: self.scalars.unwrap_or_default(),
                    hot_features: self.hot_features,
                    pin: self.pin_workers,
                    ..hogwild::Options::new(threads)
                };
                hogwild::fit_from(data, algorithm, &config, start, &options, monitor)?
            }
            Some(threads) if threads > 1 => {
                return Err(Error::Config(format!(
                    "{algorithm} runs on one thread only (threads = 1)"
                )));
            }
            _ => online::fit_from(data, algorithm, &config, start, monitor)?,
        };
        let mut snapshot = fit.snapshot;
        if averaging == Some(Averaging::End) {
            dist::online::average_at_end(reducer, data.n_rows(), [&mut snapshot]);
        }
        let mut details = self.online_details(&fit.schedule, fit.steps, data.n_rows());
        self.distributed_details(&mut details, ranks, averaging);
        details["threads"] = json!(self.threads.unwrap_or(1));
        details["averaged"] = json!(snapshot.averaged.is_some());
        if let Some(t) = resumed_at {
            details["resumed_at"] = json!(t);
        } else if start.is_some() {
            details["initial_model"] = json!(true);
        }
        // The output moves into the run, and the last iterate beside an average into the
        // resume state: neither is copied.
        let (output, last) = match snapshot.averaged {
            Some(averaged) => (averaged, Some(snapshot.last)),
            None => (snapshot.last, None),
        };
        let resume = (self.save_resume || resumed_at.is_some()).then(|| ResumeState {
            steps: resumed_at.unwrap_or(0) + fit.steps,
            rows: data.n_rows() as u64,
            t0: fit.schedule.t0,
            average_start: fit.schedule.average_start,
            bias_rate: fit.schedule.bias_rate,
            last,
        });
        let run = Run {
            weights: output.weights,
            bias: output.bias,
            seconds: fit.seconds,
            examples: fit.steps,
            resume,
        };
        Ok((run, details))
    }

    /// The online run these settings make, with the loss `loss` and no class weights.
    fn online_config(&self, loss: Loss) -> online::Config {
        online::Config {
            loss,
            class_weights: ClassWeights::UNIT,
            lambda: self.lambda,
            l1: self.l1,
            t0: self.t0,
            average_start: self.average_start.unwrap_or(1),
            regularize_bias: self.regularize_bias,
            bias_rate: self.bias_rate.unwrap_or(1.0),
            sampling: self.sampling,
            seed: self.seed,
            stop: self.stop.unwrap_or(Stop::Epochs(DEFAULT_EPOCHS)),
        }
    }

    /// Sets in an online run's `details` how it ran across `ranks` ranks, averaging as
    /// `averaging` says (`None` on one).
    fn distributed_details(
        &self,
        details: &mut serde_json::Value,
        ranks: usize,
        averaging: Option<Averaging>,
    ) {
        details["ranks"] = json!(ranks);
        details["averaging"] = json!(averaging.map(|a| a.to_string()));
        if averaging == Some(Averaging::Epoch) {
            details["local_steps"] = json!(self.local_steps.unwrap_or_default().to_string());
            details["averages_per_epoch"] = json!(self.averages_per_epoch.unwrap_or(1));
        }
    }

    /// The details an online run of `steps` steps over `rows` rows with `schedule` records,
    /// for a single-process run on one thread.
    fn online_details(
        &self,
        schedule: &online::Schedule,
        steps: u64,
        rows: usize,
    ) -> serde_json::Value {
        json!({
            "ranks": 1,
            "averaging": null,
            "local_steps": null,
            "averages_per_epoch": null,
            "t0": schedule.t0,
            "bias_rate": schedule.bias_rate,
            "average_start": schedule.average_start,
            "sampling": self.sampling.to_string(),
            "seed": self.seed,
            "steps": steps,
            "threads": 1,
            "epochs": steps as f64 / rows as f64,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn train_batch<M: Monitor, E: Examples>(
        &self,
        algorithm: batch::Algorithm,
        weighted: WeightedLoss,
        data: &E,
        permutation: Option<&[u32]>,
        columns: Option<&Arc<ColumnMajor>>,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<(Run, serde_json::Value), Error> {
        let started = std::time::Instant::now();
        let warm = match (self.warm_start, &self.initial_model) {
            (Some(_), Some(_)) => {
                return Err(Error::Config(
                    "start from an initial model or from ASGD epochs, not both".into(),
                ));
            }
            (None, Some(_)) => self
                .initial_iterate(data.n_features(), permutation)
                .map(|start| {
                    let mut w0 = start.weights;
                    w0.push(start.bias);
                    w0
                }),
            (Some(epochs), None) => {
                let config = online::Config {
                    loss: weighted.loss(),
                    class_weights: weighted.class_weights(),
                    lambda: self.lambda,
                    l1: 0.0,
                    t0: None,
                    average_start: 1,
                    regularize_bias: true,
                    bias_rate: 1.0,
                    sampling: Sampling::default(),
                    seed: self.seed,
                    stop: Stop::Epochs(epochs),
                };
                let asgd = online::Algorithm::Asgd;
                let options = dist_online::Options::default();
                let fit = dist::online::fit(data, asgd, &config, &options, reducer, &mut ())
                    .map_err(|e| {
                        Error::Config(format!(
                            "the ASGD warm start (--warm-start-epochs {epochs}) cannot run ({e}); \
                             train without it"
                        ))
                    })?;
                let output = fit.snapshot.output();
                let mut w0 = output.weights.clone();
                w0.push(output.bias);
                Some(w0)
            }
            (None, None) => None,
        };
        let options = batch::Options {
            w0: warm,
            columns: columns.cloned(),
            ..self.batch_options()
        };
        let objective =
            Objective::distributed(data, weighted, self.lambda, true, reducer).with_l1(self.l1);
        let (mut passes, mut gap) = (0.0, f64::NAN);
        let solution = self.on_threads(|| {
            batch::solve(algorithm, &objective, &options, &mut |p| {
                (passes, gap) = (p.passes, p.gap);
                monitor.iteration(p);
            })
        })??;
        let seconds = started.elapsed().as_secs_f64();
        let n = data.n_features();
        let mut details = self.solver_details(&solution, passes, &options);
        // The certificate of the returned w: J(w) − J* ≤ gap.
        details["gap"] = json!(gap);
        // Settings of the solvers that use them.
        if algorithm.has_memory() {
            details["memory"] = json!(options.memory);
        }
        if algorithm == batch::Algorithm::SubLbfgs {
            details["first_descent"] = json!(options.first_descent);
        }
        // Dual coordinate descent iterates on the dual variables, from 0.
        if algorithm.is_primal() {
            // The warm start's time is part of the run's seconds, and kept out of the model,
            // which the same command writes byte for byte again.
            details["warm_start"] = match (self.warm_start, &self.initial_model) {
                (Some(epochs), _) => json!({ "asgd_epochs": epochs }),
                (None, Some(_)) => json!({ "initial_model": true }),
                (None, None) => json!(null),
            };
        }
        let run = Run {
            weights: solution.w[..n].to_vec(),
            bias: solution.w[n],
            seconds,
            examples: (passes * objective.total_rows() as f64).round() as u64,
            resume: None,
        };
        Ok((run, details))
    }

    /// The batch solvers' settings from this trainer's, starting from zero.
    fn batch_options(&self) -> batch::Options {
        let defaults = batch::Options::default();
        batch::Options {
            max_iter: self.max_iterations.unwrap_or(defaults.max_iter),
            tol: self.tolerance.unwrap_or(if self.l1 != 0.0 {
                batch::owlqn::DEFAULT_TOL
            } else {
                defaults.tol
            }),
            memory: self.memory.unwrap_or(defaults.memory),
            first_descent: !self.exact_direction,
            ..defaults
        }
    }

    /// What a batch solve records in the model: its iterations, threads, stop, objective,
    /// passes and tolerance.
    fn solver_details(
        &self,
        solution: &batch::Solution,
        passes: f64,
        options: &batch::Options,
    ) -> serde_json::Value {
        json!({
            "iterations": solution.iterations,
            "threads": self.threads.unwrap_or_else(rayon::current_num_threads),
            "stop": solution.stop,
            "objective": solution.objective,
            "passes": passes,
            "tol": options.tol,
        })
    }

    /// `solve` run in a pool of the threads set, if set (else in the current pool).
    fn on_threads<T: Send>(&self, solve: impl FnOnce() -> T + Send) -> Result<T, Error> {
        match self.threads {
            Some(threads) => Ok(thread_pool(threads)?.install(solve)),
            None => Ok(solve()),
        }
    }

    fn train_lao(
        &self,
        algo: lao::Algo,
        loss: Loss,
        data: &ExampleSet,
    ) -> Result<(Run, serde_json::Value), Error> {
        let insensitivity = match (algo, loss) {
            (lao::Algo::Aesvr, Loss::EpsilonInsensitive(eps)) => eps,
            (lao::Algo::Aerr | lao::Algo::Aelr, Loss::Squared) => 0.0,
            _ => {
                return Err(Error::Config(format!(
                    "{algo} learns with {} loss, not {loss}",
                    Learner::AttributeEfficient(algo).default_loss()
                )));
            }
        };
        if data.n_rows() == 0 {
            return Err(online::ConfigError::NoRows.into());
        }
        if data.n_features() == 0 {
            return Err(Error::Config(format!(
                "{algo} reads attributes of the examples, and the data have no features"
            )));
        }
        let default_k = lao::DEFAULT_ATTRIBUTES.min(data.n_features());
        let (k, radius) = (
            self.attributes.unwrap_or(default_k),
            self.radius.unwrap_or(1.0),
        );
        if k == 0 || k > data.n_features() {
            return Err(Error::Config(format!(
                "{algo} reads k attributes per example: k = {k} is not within 1..={}",
                data.n_features()
            )));
        }
        let positive = |name: &str, value: f64| {
            if value > 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "{name} must be positive and finite, got {value}"
                )))
            }
        };
        positive("the radius B", radius)?;
        if algo != lao::Algo::Aelr && radius > lao::MAX_L2_RADIUS {
            return Err(Error::Config(format!(
                "{algo} holds weights up to the radius B = {radius:e}, whose squares would \
                 overflow: B must be at most {:e}",
                lao::MAX_L2_RADIUS
            )));
        }
        if let Some(eta) = self.eta {
            positive("the step size η", eta)?;
        }
        let smoothing = self.smoothing.unwrap_or(lao::DEFAULT_SMOOTHING);
        positive("the smoothing width ε", smoothing)?;
        let config = LaoConfig {
            algo,
            k,
            radius,
            eta: self.eta,
            svr: SmoothedInsensitive {
                smoothing,
                insensitivity,
            },
            seed: self.seed,
        };
        let started = std::time::Instant::now();
        let fit = lao::train(data, &config)?;
        let seconds = started.elapsed().as_secs_f64();
        let details = json!({
            "attributes_per_example": k,
            "radius": radius,
            "eta": fit.eta,
            "smoothing": (algo == lao::Algo::Aesvr).then_some(smoothing),
            "seed": self.seed,
            "examples": fit.examples,
            "attributes_observed": fit.attributes_observed,
            "attributes_observed_per_example":
                fit.attributes_observed as f64 / fit.examples.max(1) as f64,
        });
        let run = Run {
            weights: fit.weights,
            bias: 0.0,
            seconds,
            examples: fit.examples,
            resume: None,
        };
        Ok((run, details))
    }
}

/// The learner a fast online algorithm or its O(Tn) baseline runs: the two take the same
/// steps, so either may resume the other's run.
fn single_step_rule(algorithm: online::Algorithm) -> online::Algorithm {
    use online::Algorithm::*;
    match algorithm {
        Sgd | NaiveSgd => Sgd,
        Asgd | NaiveAsgd => Asgd,
        Casgd | NaiveCasgd => Casgd,
    }
}

/// Where a run over m rows of `n` features (columns numbered by `permutation`) resumes
/// `model`'s: its iterates in the data's columns, features it lacks at 0.
fn resumed_start(
    model: &Model,
    state: &ResumeState,
    (m, n): (usize, usize),
    permutation: Option<&[u32]>,
) -> online::Start {
    let columns = |weights: &[f64], bias| iterate_in_columns(weights, bias, n, permutation);
    let output = columns(&model.weights, model.bias);
    let snapshot = match &state.last {
        Some(last) => online::Snapshot {
            last: columns(&last.weights, last.bias),
            averaged: Some(output),
        },
        None => online::Snapshot {
            last: output,
            averaged: None,
        },
    };
    // Its own rows again (as many of them): on in their order; other data: a new order.
    let same_rows = state.rows == m as u64;
    online::Start {
        snapshot,
        steps: state.steps,
        drawn: if same_rows { state.steps } else { 0 },
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

/// What one family's run hands back before the weights are mapped to original ids.
struct Run {
    weights: Vec<f64>,
    bias: f64,
    seconds: f64,
    examples: u64,
    /// An online run's resume state, in the data's column numbering.
    resume: Option<ResumeState>,
}

/// `job(0)`, …, `job(count − 1)` in that order, computed on `at_once` threads of their own,
/// never more at once: each job (a class's training) runs in a pool of its own, and a rayon
/// worker waiting on another pool would take up further jobs of its own pool meanwhile (on
/// mc10 with `cd` and two threads: a 1.48 GB peak, 425 MB with the jobs bounded).
fn at_most_at_once<T: Send>(
    at_once: usize,
    count: usize,
    job: impl Fn(usize) -> T + Sync,
) -> Result<Vec<T>, Error> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if k >= count {
                return done;
            }
            done.push((k, job(k)));
        }
    };
    let mut results: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers = (0..at_once.min(count))
            .map(|_| std::thread::Builder::new().spawn_scoped(scope, worker))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Config(format!("cannot start {at_once} threads: {e}")))?;
        let mut results = Vec::with_capacity(count);
        for handle in workers {
            match handle.join() {
                Ok(done) => results.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok::<_, Error>(results)
    })?;
    results.sort_by_key(|(k, _)| *k);
    Ok(results.into_iter().map(|(_, result)| result).collect())
}

/// A rayon pool of `threads` threads.
fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("cannot start {threads} threads: {e}")))
}

/// The most classes one-vs-rest trains (each a model of its own).
pub const MAX_CLASSES: usize = 1 << 16;

/// The classes of one-vs-rest training: the distinct labels of every rank's `data`,
/// increasing, and the number of rows of each. An error on every rank unless they are whole
/// numbers (real-valued labels are a regression's), at least two and at most
/// [`MAX_CLASSES`].
pub(super) fn class_labels_across(
    data: &ExampleSet,
    reducer: &dyn Reducer,
) -> Result<(Vec<f64>, Vec<u64>), Error> {
    let whole = |y: f64| y.is_finite() && y.fract() == 0.0;
    let mut labels = crate::metrics::labels(data);
    // A rank with a label that is no class number passes on that one label, which every
    // rank then refuses.
    let local: Vec<(f64, u64)> = match labels.iter().find(|&&y| !whole(y)) {
        Some(&y) => vec![(y, 1)],
        None => {
            labels.sort_unstable_by(f64::total_cmp);
            // -0 sorts just before 0, which it equals: one class.
            (labels.chunk_by(|a, b| a == b))
                .map(|run| (run[0], run.len() as u64))
                .collect()
        }
    };
    let pairs = dist::value_counts(reducer, &local, MAX_CLASSES).map_err(|widest| {
        Error::Config(format!(
            "one-vs-rest trains at most {MAX_CLASSES} classes, and the labels take {widest} \
             distinct values (on one rank, if several)"
        ))
    })?;
    if let Some((y, _)) = pairs.iter().find(|&&(y, _)| !whole(y)) {
        return Err(Error::Config(format!(
            "one-vs-rest takes class numbers as labels, and {y} is not a whole number (a \
             real-valued label calls for a regression loss)"
        )));
    }
    let (classes, rows): (Vec<f64>, Vec<u64>) = pairs.into_iter().unzip();
    if classes.len() < 2 {
        return Err(Error::Config(format!(
            "one-vs-rest needs at least two classes, and every label is {}",
            classes
                .first()
                .map_or("absent (no rows)".into(), |c| c.to_string())
        )));
    }
    Ok((classes, rows))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs start in order of their index, never more than `at_once` at a time (a loaded
    /// machine may run fewer), each result in its job's place, even where each job runs a
    /// rayon pool of its own (a parallel iterator on a pool of 3 ran 30 at once here).
    #[test]
    fn at_most_at_once_bounds_the_jobs_in_flight() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let results = at_most_at_once(3, 40, |k| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            let pool = thread_pool(2).unwrap();
            let square = pool.install(|| {
                std::thread::sleep(std::time::Duration::from_millis(2));
                k * k
            });
            running.fetch_sub(1, Ordering::SeqCst);
            square
        })
        .unwrap();
        assert_eq!(results, (0..40).map(|k| k * k).collect::<Vec<_>>());
        assert!((1..=3).contains(&most.load(Ordering::SeqCst)), "{most:?}");
        assert_eq!(at_most_at_once(4, 0, |k| k).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn classes_at_once_share_the_threads_and_leave_their_workers_unpinned() {
        let plan = |trainer: Trainer, classes| {
            let (at_once, each) = trainer.class_trainer(classes);
            (at_once, each.threads, each.pin_workers)
        };
        let asgd = || Trainer::new(Learner::ASGD);
        assert_eq!(plan(asgd().threads(8), 5), (5, Some(1), false));
        assert_eq!(plan(asgd().threads(8), 2), (2, Some(4), false));
        assert_eq!(plan(asgd().threads(1), 5), (1, Some(1), true));
        assert_eq!(plan(asgd().threads(4), 1), (1, Some(4), true));
        let naive = Trainer::new(Learner::Online(online::Algorithm::NaiveAsgd)).threads(4);
        assert_eq!(plan(naive, 3), (3, Some(1), false));
        let dcd = Trainer::new(Learner::Batch(batch::Algorithm::Dcd)).threads(6);
        assert_eq!(plan(dcd, 4), (4, Some(1), false));
        let (at_once, each) = asgd().class_trainer(3);
        assert_eq!(at_once, rayon::current_num_threads().clamp(1, 3));
        assert_eq!((each.threads, each.pin_workers), (None, at_once == 1));
    }
}
