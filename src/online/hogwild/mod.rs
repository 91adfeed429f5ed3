//! Hogwild: SGD, ASGD and CASGD on several threads, lock-free (MATH.md §6).
//!
//! # Design
//!
//! * **Shared sums.** The workers share the gradient sums v (SGD) or the interleaved pairs
//!   [v_i, u_i] (ASGD, CASGD) as `AtomicU64` holding `f64` bits, read and written with relaxed
//!   loads and stores through the kernels crate's `_atomic` kernels: no locks, no
//!   read-modify-write on the weights, no data race; two workers updating one feature at once
//!   may lose one of the two updates, which is the Hogwild bargain (rare for sparse data).
//! * **Step numbers.** A global atomic counter hands out step numbers in blocks of up to
//!   `worker::BLOCK`, smaller while t + t₀ is small (`worker::block_size`: the steps
//!   workers run side by side must stay few next to t + t₀, or the averaged bias of a run
//!   keeps the mark of its first blocks); each update takes its own t, hence its own divisor λ(t − 1 + t₀) and
//!   its own h'_{t−1}. h' is a running sum within a block and restarts from the closed form
//!   ([`crate::online::harmonic`]) at each block a worker claims.
//! * **Hot features.** The first [`Options::hot_features`] features (by default
//!   [`DEFAULT_HOT_FEATURES`], 256; the most frequent on data numbered by descending frequency, as
//!   `gen` corpora and `convert --renumber` are) are kept by each worker in a private plain
//!   copy, read and updated with the SIMD kernels, and merged into the shared sums every
//!   `sums::MERGE_STEPS` of the worker's own steps and when it stops (`sums::HotSplit`).
//!   A merge adds the copy's change since the last merge to each shared entry with a
//!   compare-and-swap loop and takes the shared value as the new copy, so no update of a hot
//!   feature is ever lost (tested to the last bit with racing workers); the others see them up
//!   to one merge late. Without it the lines holding the hot weights move between the cores
//!   at nearly every step. The merge interval counts steps, not claimed blocks: blocks are a
//!   single step early in a run (`worker::block_size`), and merging 256 entries after each
//!   would cost more than the steps.
//! * **Per-step scalars.** a (and CASGD's z̃, a free bias b) are read by every prediction; see
//!   [`ScalarSharing`] for the two ways to share them. Measured on this machine (PERF.md
//!   `## Hogwild`): per-thread slots summed per prediction are the default. Sums no
//!   prediction reads (ā, ζ̃, the free bias's average) are private to each worker and added
//!   up at the end.
//! * **Threads.** Each worker draws its examples from its own stream (the run's seed advanced
//!   by j xoshiro jumps, [`crate::online::Sampler::for_thread`]), except with permutation
//!   sampling: there one permutation per epoch, worker 0's stream, is drawn before the epoch
//!   and step t visits its t-th row, so every row comes once per epoch whichever worker
//!   claims the step. Each worker runs in a `crossbeam` scope
//!   and, where there are several, is pinned to core j with `core_affinity` when the OS reports
//!   at least as many cores as workers ([`Options::pin`]). Workers join at every epoch end
//!   (m steps), where the observer may take a snapshot.
//! * **Recovery.** After the last step the sums are read back once and handed to the
//!   single-threaded learner's own O(n) recovery ([`crate::online::Sgd`] etc.): the sparse
//!   identities (Lemma 1, w̄ = −(h'v − u)/(λ(T − t_a + 1)), CASGD's centering) are applied to
//!   the final shared sums exactly as for one thread.
//!
//! # What is deterministic
//!
//! * One thread: exactly the single-threaded learner's run ([`crate::online::fit`]), bit for
//!   bit (it owns plain `f64` sums and uses the same kernels, sampler stream, running h' and
//!   arithmetic). Tested.
//! * Several threads: the examples visited are fixed by the seed (each worker's sampler
//!   stream, or the shared permutation of each epoch, whose steps go to whichever worker
//!   claims them), and so is every step's divisor; the *interleaving* is not: which block a worker
//!   claims, which updates of other workers a prediction sees, and which racing updates are
//!   lost all depend on timing. Two runs with the same seed give different models, within
//!   the statistical spread of SGD (tested: the objective lands within 0.5% of the
//!   single-threaded run's).
//!
//! # At 16–64 cores
//!
//! The counter is touched once per `worker::BLOCK` steps, so it stays cold. Per-thread
//! scalar slots are on separate cache lines (no false sharing), but a prediction reads all of
//! them: the cost grows with the thread count, one line per worker (the shared slot instead
//! makes every step move one line between all cores, and loses updates). Frequent features
//! are the real limit: in a plain Hogwild their weights' lines bounce between all cores at
//! every step. With the hot features private, each worker instead moves the 4 KiB of hot
//! [v, u] pairs (64 lines) once per merge, i.e. a quarter of a line per step whatever the core
//! count, against one line per hot entry of each row (~23 on rcv1-like) without. What grows
//! with the cores is the staleness of the hot weights (up to one merge, 256 steps, of every
//! other worker: ~16k steps at 64 cores, small next to t + t₀ after the first epoch) and the
//! compare-and-swap retries when two merges meet on a line (rare: a merge takes ~1/256 of
//! a worker's time).
//! Features that are frequent but beyond the private prefix still bounce; on several NUMA
//! nodes the same merge would suit one replica of the hot weights per node. See PERF.md.

mod scalars;
mod sums;
mod worker;

pub use scalars::ScalarSharing;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use core_affinity::CoreId;
use sparselin_kernels::HugeArray;

use self::scalars::{A, B, LiveScalars, Z, sum};
use self::sums::{Final, HotSplit, Storage, Sums};
use self::worker::{Context, Rule, WorkerState, work};
use super::casgd::{Centering, CenteringSums};
use super::driver::{check_start, plan};
use super::{
    Algorithm, Asgd, BiasTerm, Casgd, Config, ConfigError, EpochEnd, Fit, Learner, Observer,
    RunningHarmonic, Sampler, Sampling, Schedule, Sgd, Snapshot, Start,
};
use crate::data::Examples;
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// How to run in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// How the per-step scalars are shared.
    pub scalars: ScalarSharing,
    /// Pin worker j to core j, when there are several workers and at least as many cores. A
    /// lone worker is never pinned: it gains nothing, and runs that share the process (the
    /// classes of one-vs-rest) would all land on core 0. Such runs of several workers each
    /// turn it off.
    pub pin: bool,
    /// How many of the first features each worker keeps in a private copy, merged into the
    /// shared sums every few hundred steps (the hottest ones on data numbered by descending
    /// frequency; 0 shares every feature directly); `None` picks [`DEFAULT_HOT_FEATURES`].
    /// Not used by a single worker.
    pub hot_features: Option<usize>,
}

impl Options {
    /// `threads` workers, default scalar sharing, pinned, hot features chosen by sampling.
    pub fn new(threads: usize) -> Options {
        Options {
            threads,
            scalars: ScalarSharing::default(),
            pin: true,
            hot_features: None,
        }
    }
}

/// [`Options::hot_features`] by default: the first 256 features, 4 KiB of [v, u] pairs per
/// worker. Measured idle, ASGD hinge at 2 threads against 1 (PERF.md `## Hogwild`): in file
/// order both workers walk rows with the same hot features at the same time, and sharing
/// them directly ran at 0.33–0.39× one thread, private copies at 0.96–1.07×; with uniform
/// sampling private copies ran at 1.66× against 1.51× shared directly on rcv1-like (medians
/// of 7, AMD Zen 4; 1.63× against 1.84× on a Zen 3 machine) and at 1.44× against 1.02× on the
/// contention corpus (`gen --zipf 1.5`), so they are the default whatever the sampling.
pub const DEFAULT_HOT_FEATURES: usize = 256;

/// The cores workers 0, 1, … are pinned to, out of those the OS lets this process use
/// (`available`), if they are pinned ([`Options::pin`]).
fn pinned_cores(options: &Options, available: Option<Vec<CoreId>>) -> Option<Vec<CoreId>> {
    let threads = options.threads;
    available.filter(|cores| options.pin && threads > 1 && cores.len() >= threads)
}

/// The number of cores the OS lets this process use (1 if it cannot tell).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Train SGD, ASGD or CASGD with `options.threads` lock-free workers.
///
/// Same [`Config`] as [`crate::online::fit`]; with one thread the result is identical to it.
/// The observer gets [`Observer::progress`] and (if it wants them) [`Observer::epoch_end`] at
/// every epoch end.
pub fn fit<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    options: &Options,
    observer: &mut dyn Observer,
) -> Result<Fit, ConfigError> {
    fit_from(data, algorithm, config, None, options, observer)
}

/// [`fit`] from `start` instead of from zero, as [`crate::online::fit_from`] (with one
/// thread the result is identical to it). A resumed run's workers pass over their share of
/// the draws [`Start::drawn`]: ⌊drawn/threads⌋ each (all of them with one thread, and in the
/// one permutation order the workers share).
pub fn fit_from<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    start: Option<&Start>,
    options: &Options,
    observer: &mut dyn Observer,
) -> Result<Fit, ConfigError> {
    // Every worker reads rows through one view, built here once.
    let (trained, stopped_at) = train(&data.rows(), algorithm, config, start, options, observer)?;
    let (schedule, mut seconds) = (trained.schedule, trained.seconds);
    let steps = trained.steps - trained.first;
    let snapshot = match stopped_at {
        Some(snapshot) => snapshot,
        None => {
            let start = Instant::now();
            let snapshot = trained.into_snapshot()?;
            seconds += start.elapsed().as_secs_f64();
            if observer.wants_epochs() {
                observer.epoch_end(&EpochEnd {
                    epochs: steps as f64 / data.n_rows() as f64,
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
        schedule,
        steps,
        seconds,
    })
}

/// The state of a run once every worker has joined: the sums, before recovery.
struct Trained<'a> {
    rule: Rule,
    config: &'a Config,
    /// The config's loss with its class weights.
    loss: WeightedLoss,
    schedule: Schedule,
    centering: Option<Centering>,
    storage: Storage,
    live: LiveScalars,
    states: Vec<WorkerState>,
    /// The step the run began after (0 unless resumed) and the steps taken up to now: steps
    /// first + 1 ..= steps.
    first: u64,
    steps: u64,
    seconds: f64,
}

/// The epochs of [`fit`], up to (not including) the final recovery; beside them, the
/// iterates of the epoch end at which the observer stopped the run, if it did.
fn train<'a, E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &'a Config,
    start: Option<&Start>,
    options: &Options,
    observer: &mut dyn Observer,
) -> Result<(Trained<'a>, Option<Snapshot>), ConfigError> {
    let (mut run, steps) = Trained::prepare(data, algorithm, config, start, options)?;
    let (schedule, rule, threads, first) = (run.schedule, run.rule, options.threads, run.first);
    let m = data.n_rows() as u64;
    let drawn = start.map_or(0, |start| start.drawn);
    let mut epoch_sampler = shares_one_order(config).then(|| {
        let mut sampler = Sampler::new(config.sampling, data.n_rows(), config.seed);
        sampler.skip(drawn);
        sampler
    });
    let mut order: Vec<u32> = Vec::new();
    let cores = pinned_cores(options, core_affinity::get_core_ids());
    let counter = AtomicU64::new(0);
    let hot_features = options.hot_features.unwrap_or(DEFAULT_HOT_FEATURES);
    while run.steps < steps {
        let start = Instant::now();
        let limit = (run.steps + m).min(steps);
        if let Some(sampler) = &mut epoch_sampler {
            order.clear();
            // Below 2^32: the sampler refuses permutations of more rows.
            order.extend((run.steps..limit).map(|_| sampler.next() as u32));
        }
        counter.store(run.steps, Relaxed);
        let ctx = Context {
            data,
            loss: run.loss,
            schedule,
            rule,
            regularized: config.regularize_bias,
            centering: run.centering.as_ref(),
            counter: &counter,
            limit,
            threads,
            order: &order,
            first_step: run.steps,
            run_start: first,
        };
        run_epoch(
            &ctx,
            observer,
            hot_features,
            &mut run.storage,
            &run.live,
            &mut run.states,
            cores.as_deref(),
        );
        run.steps = limit;
        if threads > 1 {
            run.resync_projection_sums();
        }
        run.seconds += start.elapsed().as_secs_f64();
        let (mut loss_sum, mut loss_count) = (0.0, 0);
        for state in &mut run.states {
            loss_sum += std::mem::take(&mut state.loss_sum);
            loss_count += std::mem::take(&mut state.loss_count);
        }
        observer.progress(run.steps - first, loss_sum / loss_count.max(1) as f64);
        if observer.wants_epochs() && run.steps < steps {
            let snapshot = run.snapshot()?;
            observer.epoch_end(&EpochEnd {
                epochs: (run.steps - first) as f64 / m as f64,
                steps: run.steps - first,
                seconds: run.seconds,
                snapshot: &snapshot,
                held_out_loss: None,
            });
            if observer.stop_requested() {
                return Ok((run, Some(snapshot)));
            }
        }
    }
    Ok((run, None))
}

/// One epoch: every worker on its own thread until the counter reaches `ctx.limit`.
fn run_epoch<E: Examples>(
    ctx: &Context<'_, E>,
    observer: &mut dyn Observer,
    hot_features: usize,
    storage: &mut Storage,
    live: &LiveScalars,
    states: &mut [WorkerState],
    cores: Option<&[CoreId]>,
) {
    let n = states.len();
    match storage {
        Storage::Single(v) => spawn(ctx, observer, vec![&mut v[..]], live, states, cores),
        Storage::Pairs(vu) => spawn(ctx, observer, vec![&mut vu[..]], live, states, cores),
        Storage::SharedSingle(v) if hot_features == 0 => {
            spawn(ctx, observer, vec![&v[..]; n], live, states, cores)
        }
        Storage::SharedPairs(vu) if hot_features == 0 => {
            spawn(ctx, observer, vec![&vu[..]; n], live, states, cores)
        }
        Storage::SharedSingle(v) => {
            let views = (0..n).map(|_| HotSplit::new(&v[..], hot_features));
            spawn(ctx, observer, views.collect(), live, states, cores)
        }
        Storage::SharedPairs(vu) => {
            let views = (0..n).map(|_| HotSplit::new(&vu[..], hot_features));
            spawn(ctx, observer, views.collect(), live, states, cores)
        }
    }
}

/// Runs worker j on `handles[j]` in a crossbeam scope; a worker's panic is re-raised here.
/// Meanwhile this thread tells the observer the steps claimed so far, every
/// [`STEPS_REPORT_INTERVAL`], so that a long epoch's progress shows before it ends.
fn spawn<E: Examples, S: Sums + Send>(
    ctx: &Context<'_, E>,
    observer: &mut dyn Observer,
    handles: Vec<S>,
    live: &LiveScalars,
    states: &mut [WorkerState],
    cores: Option<&[CoreId]>,
) {
    let workers = handles.len();
    let finished = AtomicUsize::new(0);
    let this = std::thread::current();
    let result = crossbeam::scope(|scope| {
        for (j, (state, sums)) in states.iter_mut().zip(handles).enumerate() {
            let (finished, this) = (&finished, this.clone());
            scope.spawn(move |_| {
                // Counted on the way out, unwinding included, so the wait below always ends.
                let _done = Finished {
                    finished,
                    workers,
                    waiting: this,
                };
                if let Some(core) = cores.and_then(|cores| cores.get(j)) {
                    core_affinity::set_for_current(*core);
                }
                let mut view = live.view(j, state.own);
                work(ctx, sums, &mut view, state);
                state.own = view.own();
            });
        }
        while finished.load(Relaxed) < workers {
            std::thread::park_timeout(STEPS_REPORT_INTERVAL);
            if finished.load(Relaxed) < workers {
                observer.steps(ctx.counter.load(Relaxed).min(ctx.limit) - ctx.run_start);
            }
        }
    });
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// How often the observer hears of the steps claimed during an epoch.
const STEPS_REPORT_INTERVAL: Duration = Duration::from_millis(100);

/// Counts a worker as finished when dropped, and wakes the thread waiting for the last one.
struct Finished<'a> {
    finished: &'a AtomicUsize,
    workers: usize,
    waiting: std::thread::Thread,
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        if self.finished.fetch_add(1, Relaxed) + 1 == self.workers {
            self.waiting.unpark();
        }
    }
}

/// Whether the workers take their rows from one order drawn per epoch (permutations), not
/// from samplers of their own (see "Threads" above): per-worker permutations, each cut short,
/// would visit some rows twice and others not at all.
fn shares_one_order(config: &Config) -> bool {
    config.sampling == Sampling::Permutation
}

impl<'a> Trained<'a> {
    /// The run before its first step, at `start` if given, and the step it ends after
    /// (T, or a resumed run's t + T).
    fn prepare<E: Examples>(
        data: &E,
        algorithm: Algorithm,
        config: &'a Config,
        start: Option<&Start>,
        options: &Options,
    ) -> Result<(Trained<'a>, u64), ConfigError> {
        let rule = match algorithm {
            Algorithm::Sgd => Rule::Sgd,
            Algorithm::Asgd => Rule::Asgd,
            Algorithm::Casgd => Rule::Casgd,
            other => return Err(ConfigError::NotParallel(other)),
        };
        let threads = options.threads;
        if threads == 0 {
            return Err(ConfigError::Threads);
        }
        let (first, drawn) = start.map_or((0, 0), |start| (start.steps, start.drawn));
        if config.l1 != 0.0 {
            return Err(ConfigError::L1Here("Hogwild workers run without it"));
        }
        let (schedule, steps) = plan(data, algorithm, config, first)?;
        if let Some(start) = start {
            check_start(start, algorithm, data.n_features(), &schedule)?;
        }
        let shared = shares_one_order(config);
        let states = (0..threads)
            .map(|j| {
                let sampler = (!shared).then(|| {
                    let (m, seed) = (data.n_rows(), config.seed);
                    let mut sampler = Sampler::for_thread(config.sampling, m, seed, j, threads);
                    sampler.skip(drawn / threads as u64);
                    sampler
                });
                WorkerState::new(sampler, &schedule)
            })
            .collect();
        let mut run = Trained {
            rule,
            config,
            loss: config.weighted_loss()?,
            schedule,
            centering: (rule == Rule::Casgd)
                .then(|| Centering::new(data))
                .transpose()?,
            storage: Storage::new(data.n_features(), rule != Rule::Sgd, threads)?,
            live: LiveScalars::new(options.scalars, threads),
            states,
            first,
            steps: first,
            seconds: 0.0,
        };
        if let Some(start) = start {
            run.start_at(start)?;
        }
        Ok((run, first + steps))
    }
}

impl Trained<'_> {
    /// Puts the run at `start` before its first step: the sums, the live scalars and worker
    /// 0's shares become those of the single-threaded learner restarted there
    /// ([`Learner::restart`]), so that one worker takes that learner's steps bit for bit. An
    /// error when the learner's sums cannot be allocated.
    fn start_at(&mut self, start: &Start) -> Result<(), AllocError> {
        let (loss, schedule, t) = (self.loss, self.schedule, start.steps);
        let (n, snapshot) = (start.snapshot.last.weights.len(), &start.snapshot);
        let bias = BiasTerm::new(self.config.regularize_bias);
        let h = RunningHarmonic::at_step(&schedule, t);
        let (sums, bias, centering_sums) = match self.rule {
            Rule::Sgd => {
                let mut learner =
                    Sgd::from_sums(loss, schedule, memory::zeroed("weights", n)?, bias);
                learner.restart(snapshot, t);
                let (v, bias) = learner.into_sums();
                (Final::Single(v), bias, None)
            }
            Rule::Asgd => {
                let vu = memory::zeroed("weights", n)?;
                let mut learner = Asgd::from_sums(loss, schedule, vu, bias, h);
                learner.restart(snapshot, t);
                let (vu, bias) = learner.into_sums();
                (Final::Pairs(vu), bias, None)
            }
            Rule::Casgd => {
                let centering = self
                    .centering
                    .take()
                    .expect("CASGD runs with its centering");
                let vu = memory::zeroed("weights", n)?;
                let sums = CenteringSums::default();
                let mut learner = Casgd::from_sums(loss, schedule, centering, vu, sums, bias, h);
                learner.restart(snapshot, t);
                let (centering, vu, sums, bias) = learner.into_sums();
                self.centering = Some(centering);
                (Final::Pairs(vu), bias, Some(sums))
            }
        };
        self.storage.load(sums);
        let (mut a, mut a_bar, b, b_bar) = match bias {
            BiasTerm::Regularized { a, a_bar } => (a, a_bar, 0.0, 0.0),
            BiasTerm::Free { b, b_bar } => (0.0, 0.0, b, b_bar),
        };
        let (mut z, mut zeta) = (0.0, 0.0);
        if let Some(sums) = centering_sums {
            // CASGD keeps a and ā whatever the bias does.
            (a, a_bar, z, zeta) = (sums.a, sums.a_bar, sums.z, sums.zeta);
        }
        for (k, value) in [(A, a), (Z, z), (B, b)] {
            self.live.reset(k, value);
            for (j, state) in self.states.iter_mut().enumerate() {
                state.own[k] = if j == 0 { value } else { 0.0 };
            }
        }
        // Worker 0 carries the free bias's average of the steps before, and goes on from h'_t.
        let first = &mut self.states[0];
        (first.a_bar, first.zeta) = (a_bar, zeta);
        (first.b_bar, first.averaged) = (b_bar, h.count(t));
        (first.h, first.next_t) = (h, t + 1);
        Ok(())
    }

    /// The iterates now, recovered from a copy of the sums (training goes on); an error when
    /// the copies cannot be allocated.
    fn snapshot(&self) -> Result<Snapshot, AllocError> {
        let centering = self
            .centering
            .as_ref()
            .map(Centering::try_clone)
            .transpose()?;
        self.recover(self.storage.read()?, centering)
    }

    /// The final iterates, recovered from the sums themselves: no copy of them is made, so
    /// the peak memory is the sums and the iterates.
    fn into_snapshot(mut self) -> Result<Snapshot, AllocError> {
        let centering = self.centering.take();
        let storage = std::mem::replace(&mut self.storage, Storage::Single(HugeArray::zeroed(0)));
        self.recover(storage.into_final(), centering)
    }

    /// The iterates from the final `sums`, the scalars' totals and the workers' private
    /// sums by the single-threaded learners' own O(n) recovery.
    fn recover(&self, sums: Final, centering: Option<Centering>) -> Result<Snapshot, AllocError> {
        let (loss, schedule, t) = (self.loss, self.schedule, self.steps);
        let states = &self.states;
        let total = self.live.total();
        let a_bar = sum(states.iter().map(|s| s.a_bar));
        let bias = if self.config.regularize_bias {
            BiasTerm::Regularized { a: total[A], a_bar }
        } else {
            let count: u64 = states.iter().map(|s| s.averaged).sum();
            let weight = |s: &WorkerState| s.averaged as f64 / count.max(1) as f64;
            BiasTerm::Free {
                b: total[B],
                b_bar: sum(states.iter().map(|s| weight(s) * s.b_bar)),
            }
        };
        let h = self.final_harmonic();
        match (self.rule, sums) {
            (Rule::Sgd, Final::Single(v)) => Sgd::from_sums(loss, schedule, v, bias).snapshot(t),
            (Rule::Asgd, Final::Pairs(vu)) => {
                Asgd::from_sums(loss, schedule, vu, bias, h).snapshot(t)
            }
            (Rule::Casgd, Final::Pairs(vu)) => {
                let centering_sums = CenteringSums {
                    a: total[A],
                    a_bar,
                    z: total[Z],
                    zeta: sum(states.iter().map(|s| s.zeta)),
                };
                let centering = centering.expect("CASGD runs with its centering");
                Casgd::from_sums(loss, schedule, centering, vu, centering_sums, bias, h).snapshot(t)
            }
            _ => unreachable!("the storage is chosen by the rule"),
        }
    }

    /// CASGD: resets z̃ and ζ̃ to the values the shared [v, u] imply (see
    /// [`Centering::projection_sums`]). Racing workers lose some updates of v but none of the
    /// per-worker z̃, so the two drift apart (+3.7% objective measured with 4 workers on 2
    /// cores); resyncing once per epoch and before the recovery keeps the implicit bias that of
    /// the weights actually learned. A no-op for the other rules.
    fn resync_projection_sums(&mut self) {
        let (Some(centering), Some(pairs)) = (&self.centering, self.storage.pairs()) else {
            return;
        };
        let a = self.live.total()[A];
        let a_bar = sum(self.states.iter().map(|s| s.a_bar));
        let (z, zeta) = centering.projection_sums(pairs, a, a_bar);
        self.live.reset(Z, z);
        for (j, state) in self.states.iter_mut().enumerate() {
            state.own[Z] = if j == 0 { z } else { 0.0 };
            state.zeta = if j == 0 { zeta } else { 0.0 };
        }
    }

    /// h'_T: the running sum of the worker that took the last step (exactly the
    /// single-threaded learner's with one worker).
    fn final_harmonic(&self) -> RunningHarmonic {
        let t = self.steps;
        self.states
            .iter()
            .find(|s| s.next_t == t + 1)
            .map_or_else(|| RunningHarmonic::at_step(&self.schedule, t), |s| s.h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};
    use crate::loss::Loss;
    use crate::online::{Iterate, Stop, harmonic};

    /// 600 rows over 40 features, 6 entries each, two of them from the 4 most frequent
    /// features (so that workers do race on them).
    fn data() -> CsrMatrix {
        let (mut labels, mut offsets, mut indices, mut values) =
            (vec![], vec![0u64], vec![], vec![]);
        let mut state = 12345u64;
        let mut next = |k: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % k
        };
        for i in 0..600 {
            let mut row: Vec<u32> = vec![next(4) as u32];
            while row.len() < 6 {
                let j = 4 + next(36) as u32;
                if !row.contains(&j) {
                    row.push(j);
                }
            }
            row.sort_unstable();
            let x: Vec<f64> = row.iter().map(|_| 0.25 + next(100) as f64 / 50.0).collect();
            labels.push(if (row[1] + i) % 3 == 0 { 1.0 } else { -1.0 });
            indices.extend(row);
            values.extend(x);
            offsets.push(indices.len() as u64);
        }
        CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), 40).unwrap()
    }

    /// Before any step a run started at w₀ recovers w₀ (to rounding), whatever the rule,
    /// the bias, the number of workers (shared sums from 2 on) and the scalars' sharing: the
    /// sums, the live scalars and the workers' shares all start where the single-threaded
    /// learner's restart puts them. So does a run resumed after 50 steps, its averaged iterate
    /// (and with a free bias, worker 0's share of the bias's average) included.
    #[test]
    fn a_run_started_at_an_iterate_recovers_it_before_its_first_step() {
        let data = data();
        let iterate = |phase: f64, bias: f64| Iterate {
            weights: (0..40).map(|j| (j as f64 * 0.7 + phase).sin()).collect(),
            bias,
        };
        let warm = Start::warm(iterate(0.0, -0.6));
        let resumed = Start {
            snapshot: Snapshot {
                last: iterate(1.0, 0.3),
                averaged: Some(iterate(2.0, -0.2)),
            },
            steps: 50,
            drawn: 50,
        };
        let close = |got: &Iterate, want: &Iterate, what: &str| {
            assert!(
                (got.bias - want.bias).abs() <= 1e-12,
                "{what}: {}",
                got.bias
            );
            for (w, w0) in got.weights.iter().zip(&want.weights) {
                assert!((w - w0).abs() <= 1e-12, "{what}: {w} vs {w0}");
            }
        };
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            for regularize_bias in [true, false] {
                for (threads, scalars) in [
                    (1, ScalarSharing::PerThread),
                    (2, ScalarSharing::PerThread),
                    (3, ScalarSharing::Shared),
                ] {
                    let config = Config {
                        loss: Loss::Log,
                        class_weights: Default::default(),
                        lambda: 1e-2,
                        l1: 0.0,
                        t0: None,
                        average_start: 1,
                        regularize_bias,
                        bias_rate: 1.0,
                        eta: None,
                        sampling: Sampling::Uniform,
                        seed: 3,
                        stop: Stop::Epochs(1),
                    };
                    let options = Options {
                        scalars,
                        ..Options::new(threads)
                    };
                    for start in [&warm, &resumed] {
                        let prepared =
                            Trained::prepare(&data, algorithm, &config, Some(start), &options);
                        let snapshot = prepared.unwrap().0.snapshot().unwrap();
                        let what = format!(
                            "{algorithm} bias={regularize_bias} {threads} {scalars:?} at {}",
                            start.steps
                        );
                        close(&snapshot.last, &start.snapshot.last, &what);
                        if algorithm.averages() && start.steps > 0 {
                            let want = start.snapshot.averaged.as_ref().unwrap();
                            close(snapshot.averaged.as_ref().unwrap(), want, &what);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn only_several_workers_are_pinned_and_only_to_enough_cores() {
        let cores = |n: usize| Some((0..n).map(|id| CoreId { id }).collect::<Vec<_>>());
        let pinned = |threads, pin, available| {
            let options = Options {
                pin,
                ..Options::new(threads)
            };
            pinned_cores(&options, available).map(|cores| cores.len())
        };
        assert_eq!(pinned(2, true, cores(4)), Some(4));
        assert_eq!(pinned(4, true, cores(4)), Some(4));
        assert_eq!(pinned(1, true, cores(4)), None);
        assert_eq!(pinned(4, true, cores(2)), None);
        assert_eq!(pinned(2, false, cores(4)), None);
        assert_eq!(pinned(2, true, None), None);
    }

    #[test]
    fn blocks_grow_with_t_until_the_cap() {
        use worker::{BLOCK, block_size};
        assert_eq!(block_size(0, 0.0, 2), 1);
        assert_eq!(block_size(0, 2000.0, 2), 3);
        assert_eq!(block_size(10_000, 2000.0, 2), 23);
        assert_eq!(block_size(10_000, 2000.0, 4), 11);
        assert_eq!(block_size(u64::MAX / 2, 0.0, 64), BLOCK);
        assert_eq!(block_size(0, 1e12, 1), BLOCK);
    }

    /// The averaged iterate of ASGD and CASGD recomputed from the final shared sums by the
    /// formulas of MATH.md §3–§4 (h'_T from the closed form) equals the recovered model.
    #[test]
    fn recovered_model_satisfies_the_sparse_identities() {
        let data = data();
        for (algorithm, regularize_bias) in [
            (Algorithm::Asgd, true),
            (Algorithm::Casgd, true),
            (Algorithm::Casgd, false),
        ] {
            let config = Config {
                loss: Loss::Log,
                class_weights: Default::default(),
                lambda: 1e-2,
                l1: 0.0,
                t0: Some(50.0),
                average_start: 700,
                regularize_bias,
                bias_rate: 1.0,
                eta: None,
                sampling: Sampling::Uniform,
                seed: 3,
                stop: Stop::Epochs(4),
            };
            for scalars in [ScalarSharing::PerThread, ScalarSharing::Shared] {
                let options = Options {
                    scalars,
                    ..Options::new(3)
                };
                let (trained, _) =
                    train(&data, algorithm, &config, None, &options, &mut ()).unwrap();
                let model = trained.snapshot().unwrap();
                let averaged = model.averaged.as_ref().unwrap();
                let Final::Pairs(vu) = trained.storage.read().unwrap() else {
                    panic!("averaged learners keep pairs")
                };
                let [a, z, _] = trained.live.total();
                let a_bar: f64 = trained.states.iter().map(|s| s.a_bar).sum();
                let zeta: f64 = trained.states.iter().map(|s| s.zeta).sum();
                let (t, ta) = (2400u64, 700u64);
                let h = harmonic(t - ta + 1, 50.0 + ta as f64 - 1.0);
                let divisor = 1e-2 * (t - ta + 1) as f64;
                let x_bar = match &trained.centering {
                    Some(c) => c.x_bar.clone(),
                    None => vec![0.0; 40],
                };
                let centering = if algorithm == Algorithm::Casgd {
                    h * a - a_bar
                } else {
                    0.0
                };
                let scale = averaged.weights.iter().fold(0.0f64, |s, w| s.max(w.abs()));
                assert!(scale > 1e-3, "a model that learned something");
                for (j, w) in averaged.weights.iter().enumerate() {
                    let expected = -((h * vu[j][0] - vu[j][1]) - centering * x_bar[j]) / divisor;
                    assert!(
                        (w - expected).abs() <= 1e-12 * scale,
                        "{algorithm} {scalars} w̄[{j}]: {w} vs {expected}"
                    );
                }
                if regularize_bias {
                    let expected = match algorithm {
                        Algorithm::Casgd => -((h * a - a_bar) - (h * z - zeta)) / divisor,
                        _ => -(h * a - a_bar) / divisor,
                    };
                    assert!(
                        (averaged.bias - expected).abs() <= 1e-12 * scale,
                        "{algorithm} {scalars} b̄: {} vs {expected}",
                        averaged.bias
                    );
                }
                // The last iterate, Lemma 1 on the centered sums.
                let last_divisor = 1e-2 * (t as f64 + 50.0);
                for (j, w) in model.last.weights.iter().enumerate() {
                    let c = if algorithm == Algorithm::Casgd {
                        a
                    } else {
                        0.0
                    };
                    let expected = -(vu[j][0] - c * x_bar[j]) / last_divisor;
                    assert!((w - expected).abs() <= 1e-12 * scale);
                }
            }
        }
    }
}
