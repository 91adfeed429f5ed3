//! Data-parallel online learning by iterative parameter mixing (McDonald, Hall & Mann, NAACL
//! 2010): every rank runs the single-process learner ([`online::fit_mixing`]) on its share of
//! the rows with its own sampler stream (seed + rank); after every epoch (m_r steps on rank
//! r: one pass over its share) the ranks' last iterates (w, b) and averaged iterates (w̄, b̄)
//! are replaced by their row-weighted average Σ_r (m_r/m)·(…) and every rank continues from
//! it ([`online::Learner::restart`]). After the last epoch that average is the model, the
//! same bits on every rank. [`Averaging::End`] averages once, after the last step instead
//! (Zinkevich, Weimer, Smola & Li, NIPS 2010): one sum for the whole run, but biased when the
//! shares differ.
//!
//! # The step schedule
//!
//! Rank r counts its own steps, t = e·m_r + j at step j of epoch e, and runs with the offset
//! t₀·m_r/m. By Lemma 1 its iterate after t steps is the mean of −g_i/λ over its t steps and
//! t₀·m_r/m zero ones, so every epoch's gradients, and t₀, weigh in each rank's iterate (hence
//! in their average) exactly as much as in a single run over all m rows, where step e·m + j·m/m_r
//! has the iterate −Σ g_i/(λ(e·m + j·m/m_r + t₀)): the step-size schedule of a single run that
//! took all ranks' steps (each rank's steps standing for m/m_r of them). Two other choices
//! measured worse on a 400-row log-loss problem (λ = 10⁻², 10 epochs, objective above the
//! single run's): the rank's own schedule with the whole t₀ weighs t₀ p times too much (+0.8% at
//! 2 ranks, +1.9% at 4, against +0.16% and −0.07% with t₀·m_r/m), and a counter of all ranks'
//! steps without scaling the gradients makes every local step p times too short.
//!
//! Squared and squared-hinge loss need t₀ ≥ (max‖x‖² + 1)/λ for every step to contract
//! (MATH.md §2, [`online::default_t0`]), squared ε-insensitive loss twice that; for them the scaled offset is raised to that bound
//! (of the whole data, so alike on every rank), which makes their first epochs weigh t₀ up to
//! p times too much. t₀ itself is the given one, or by default the [`online::default_t0`] of
//! the whole data ([`whole_norms`]: the ranks' measured row norms summed and maximized), not of the
//! rank's share: with the share's own default, ranks whose rows differ in norm would run
//! schedules that no longer scale together.
//!
//! # Choosing the local steps
//!
//! The schedule above makes the *average* consistent with a single run, but each rank's own
//! steps are m/m_r times a single run's: one step moves the margin of its example by up to
//! p·η(‖x‖² + 1)·|g| where the default t₀ caps a single run's at |g|. That is the same
//! trajectory, to first order, only while a rank's iterate does not depend much on where
//! its own recent steps took it. With hinge loss on small dense shares it does: heart_scale
//! (270 rows, 13 dense features), 20 epochs, hinge λ = 10⁻³ lands +18% above the single run
//! at 4 ranks, and a *single* run with t₀/4 lands +15% (PERF.md "Distributed (MPI)"): the
//! longer steps alone account for it. [`LocalSteps::Full`] runs every rank with the whole t₀
//! instead (steps as long as a single run's, t₀ weighing p times as much in the average):
//! there −0.01% at 4 ranks; but on rcv1-100k (25,000 rows a rank, sparse), log λ = 10⁻⁶, 5
//! epochs, it lands +25% against +0.9% scaled, since t₀ dominates t there and the average
//! then moves p times slower. Neither choice is better everywhere, so the scaled one stays
//! the default and the full one is a setting.
//!
//! # Global settings on local shares
//!
//! A step count T of the whole run becomes ⌈T·m_r/m⌉ steps on rank r, and the averaging
//! start t_a becomes ⌈t_a·m_r/m⌉. Then every rank ends the same number of epochs (⌈T/m⌉), and
//! at each epoch end either every rank has an averaged iterate or none has, since for integers
//! e·m_r ≥ ⌈t_a·m_r/m⌉ ⟺ e·m ≥ t_a: the vectors the ranks sum have the same length.

use std::fmt;
use std::str::FromStr;

use super::Reducer;
use crate::data::Examples;
use crate::loss::{ClassWeights, Loss};
use crate::memory::AllocError;
use crate::online::{
    self, Algorithm, Config, ConfigError, Fit, Observer, RowNorms, Snapshot, Start, Stop,
};

/// When the ranks' online models are averaged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Averaging {
    /// After every epoch, and every rank continues from the average (the default).
    #[default]
    Epoch,
    /// Once, after the last step.
    End,
}

impl fmt::Display for Averaging {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Averaging::Epoch => "epoch",
            Averaging::End => "end",
        })
    }
}

impl FromStr for Averaging {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "epoch" => Ok(Averaging::Epoch),
            "end" => Ok(Averaging::End),
            _ => Err(format!("unknown averaging '{s}' (epoch or end)")),
        }
    }
}

/// How long each rank's steps are when the ranks average every epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocalSteps {
    /// t₀·m_r/m (the default): every epoch's gradients weigh in the average as in a single
    /// run over all rows (module documentation), and each of rank r's steps is about m/m_r
    /// times as long as a single run's.
    #[default]
    Scaled,
    /// The whole t₀ on every rank: no step longer than a single run's, but t₀ weighs about
    /// p times as much in the average (the average moves about p times slower while t₀
    /// dominates t). Better for hinge loss on small, dense shares, where the scaled steps
    /// overshoot the kink (module documentation, "Choosing the local steps").
    Full,
}

impl fmt::Display for LocalSteps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LocalSteps::Scaled => "scaled",
            LocalSteps::Full => "full",
        })
    }
}

impl FromStr for LocalSteps {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "scaled" => Ok(LocalSteps::Scaled),
            "full" => Ok(LocalSteps::Full),
            _ => Err(format!("unknown local steps '{s}' (scaled or full)")),
        }
    }
}

/// How the ranks mix when they average every epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// How long each rank's steps are.
    pub local_steps: LocalSteps,
    /// Averages per epoch k ≥ 1 (after steps ⌈j·m_r/k⌉ on rank r); needs [`Stop::Epochs`]
    /// when k > 1. More averages bring the run closer to a single one at k sums of 2(n + 1)
    /// values an epoch (PERF.md "Distributed (MPI)").
    pub per_epoch: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            local_steps: LocalSteps::default(),
            per_epoch: 1,
        }
    }
}

/// The whole data's [`RowNorms`] for the default t₀ of `loss`: each rank measures its share
/// as [`RowNorms::for_t0`] does; the ranks' row counts and summed norms are added, their
/// largest norms' maximum taken (two collectives). A rank that measured a sample of its rows
/// counts as its rows times its sample's mean (`measured` = its row count), so that shares of
/// any size weigh in by their rows, as in the single run's mean.
pub fn whole_norms<E: Examples>(reducer: &dyn Reducer, share: &E, loss: Loss) -> RowNorms {
    let local = RowNorms::for_t0(share, loss);
    let (measured, sum) = if local.measured == local.rows {
        (local.measured, local.sum)
    } else {
        (local.rows, local.sum / local.measured * local.rows)
    };
    let mut sums = [local.rows, measured, sum];
    let mut max = [local.max];
    reducer.sum(&mut sums);
    reducer.max(&mut max);
    RowNorms {
        rows: sums[0],
        measured: sums[1],
        max: max[0],
        sum: sums[2],
    }
}

/// This rank's settings for a run that `config` describes over all ranks' rows (`whole`, of
/// which this rank holds `rows`): the seed advanced by the rank, t₀ (by default the whole
/// data's [`online::default_t0`]) scaled to the share or not as `local_steps` says, a step
/// count T and the averaging start t_a scaled likewise, checked against the whole run first
/// so that every rank accepts or refuses alike.
pub fn local_config(
    config: &Config,
    algorithm: Algorithm,
    rank: usize,
    rows: usize,
    whole: &RowNorms,
    local_steps: LocalSteps,
) -> Result<Config, ConfigError> {
    let total = whole.rows as usize;
    let steps = match config.stop {
        Stop::Steps(t) => t,
        Stop::Epochs(e) => e.saturating_mul(total as u64),
    };
    let averaged = algorithm.averages();
    if averaged && steps > 0 && !(1..=steps).contains(&config.average_start) {
        return Err(ConfigError::AverageStart {
            start: config.average_start,
            steps,
        });
    }
    // ⌈x·m_r/m⌉ in integers.
    let scale = |x: u64| (x as u128 * rows as u128).div_ceil(total.max(1) as u128) as u64;
    let stop = match config.stop {
        Stop::Steps(t) => Stop::Steps(scale(t)),
        epochs => epochs,
    };
    let seed = config.seed.wrapping_add(rank as u64);
    if algorithm.is_adagrad() {
        // No schedule: each rank's steps are sized by its own gradients.
        return Ok(Config {
            seed,
            stop,
            ..*config
        });
    }
    let fraction = rows as f64 / total.max(1) as f64;
    let default_t0 = whole.default_t0(config.loss, config.lambda);
    // The losses whose gradient grows with the residual raise any t₀ to the default (below),
    // the others only start from it when none is given.
    let needs_default = config.t0.is_none() || config.loss.grows_with_residual();
    if needs_default && !default_t0.is_finite() {
        return Err(ConfigError::DefaultT0(config.lambda));
    }
    let t0 = config.t0.unwrap_or(default_t0);
    let t0 = match local_steps {
        LocalSteps::Scaled => t0 * fraction,
        LocalSteps::Full => t0,
    };
    let t0 = if config.loss.grows_with_residual() && rows > 0 {
        t0.max(default_t0)
    } else {
        t0
    };
    Ok(Config {
        seed,
        t0: Some(t0),
        stop,
        average_start: scale(config.average_start).max(1),
        ..*config
    })
}

/// Train `algorithm` on this rank's `data` by iterative parameter mixing across the ranks of
/// `reducer` (module documentation). `config` describes the whole run; every rank calls this
/// with the same `config` and `options` and gets the same model.
pub fn fit<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    options: &Options,
    reducer: &dyn Reducer,
    observer: &mut dyn Observer,
) -> Result<Fit, ConfigError> {
    fit_from(data, algorithm, config, None, options, reducer, observer)
}

/// [`fit`] with every rank starting from `start` ([`online::fit_from`]; a resumed start's
/// step count is taken as each rank's own).
pub fn fit_from<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    start: Option<&Start>,
    options: &Options,
    reducer: &dyn Reducer,
    observer: &mut dyn Observer,
) -> Result<Fit, ConfigError> {
    let (local, mut mix, per_epoch, x_bar) = rank_run(data, algorithm, config, options, reducer)?;
    let mixing = online::Mixing {
        mix: &mut mix,
        per_epoch,
        x_bar,
    };
    online::fit_mixing(data, algorithm, &local, start, observer, Some(mixing))
}

/// This rank's part of a data-parallel run: its settings ([`local_config`]), the mixing of
/// iterates (their average across the ranks, weighted by the ranks' shares of the rows), the
/// mixes per epoch, and CASGD's centre (the whole data's mean).
#[allow(clippy::type_complexity)]
fn rank_run<'r, E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    options: &Options,
    reducer: &'r dyn Reducer,
) -> Result<
    (
        Config,
        impl FnMut(&mut Snapshot) + 'r,
        u64,
        Option<Vec<f64>>,
    ),
    ConfigError,
> {
    if options.per_epoch > 1 && matches!(config.stop, Stop::Steps(_)) {
        return Err(ConfigError::MixesNeedEpochs(options.per_epoch));
    }
    // AdaGrad has no t₀ to take from the row norms: the ranks' row count is all it needs.
    let whole = match algorithm.is_adagrad() {
        true => RowNorms {
            rows: super::total_rows(reducer, data.n_rows()) as f64,
            ..RowNorms::default()
        },
        false => whole_norms(reducer, data, config.loss),
    };
    let (rank, rows, steps) = (reducer.rank(), data.n_rows(), options.local_steps);
    let local = local_config(config, algorithm, rank, rows, &whole, steps)?;
    let share = data.n_rows() as f64 / whole.rows.max(1.0);
    let x_bar = matches!(algorithm, Algorithm::Casgd | Algorithm::NaiveCasgd)
        .then(|| whole_mean(reducer, data, whole.rows))
        .transpose()?;
    let mix = move |snapshot: &mut Snapshot| average_snapshot(reducer, snapshot, share);
    Ok((local, mix, options.per_epoch.max(1), x_bar))
}

/// One-vs-rest in one pass ([`online::fit_classes`]) across the ranks of `reducer`: every rank
/// trains `classes` against the rest (`weights[k]` for class k) in one pass over its share,
/// as [`fit`] trains one model, each class's iterates averaged across the ranks after every
/// epoch (`options`) and after the last step. Every rank calls this with the same arguments
/// but its own `data`, and gets the same models.
#[allow(clippy::too_many_arguments)]
pub fn fit_classes<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    classes: &[f64],
    weights: &[ClassWeights],
    options: &Options,
    reducer: &dyn Reducer,
    observer: &mut dyn Observer,
) -> Result<online::ClassesFit, ConfigError> {
    let (local, mut mix, per_epoch, x_bar) = rank_run(data, algorithm, config, options, reducer)?;
    let mixing = online::Mixing {
        mix: &mut mix,
        per_epoch,
        x_bar,
    };
    online::fit_classes_mixing(
        data,
        algorithm,
        &local,
        classes,
        weights,
        observer,
        Some(mixing),
    )
}

/// This rank's settings for a run averaged once, after the last step ([`Averaging::End`]): a
/// whole run on its share with its own sampler stream (the seed advanced by the rank), and by
/// default the whole data's t₀ ([`whole_norms`]), so that every rank follows one schedule
/// (AdaGrad has none).
pub fn end_config<E: Examples>(
    config: &Config,
    algorithm: Algorithm,
    data: &E,
    reducer: &dyn Reducer,
) -> Config {
    let seed = config.seed.wrapping_add(reducer.rank() as u64);
    if algorithm.is_adagrad() {
        return Config { seed, ..*config };
    }
    let t0 = config.t0.unwrap_or_else(|| {
        whole_norms(reducer, data, config.loss).default_t0(config.loss, config.lambda)
    });
    Config {
        seed,
        t0: Some(t0),
        ..*config
    }
}

/// The end of an [`Averaging::End`] run: every snapshot replaced on every rank by the ranks'
/// average, each weighted by its share of the rows (this rank holds `rows`).
pub fn average_at_end<'s>(
    reducer: &dyn Reducer,
    rows: usize,
    snapshots: impl IntoIterator<Item = &'s mut Snapshot>,
) {
    let share = rows as f64 / super::total_rows(reducer, rows) as f64;
    for snapshot in snapshots {
        average_snapshot(reducer, snapshot, share);
    }
}

/// x̄ of the whole data, the same bits on every rank: the ranks' row sums added (one sum of
/// n values), over all `rows`. CASGD centers every share on it, so that every rank runs the
/// learner a single run would (each share's own mean would give each rank another implicit
/// bias).
pub fn whole_mean<E: Examples>(
    reducer: &dyn Reducer,
    share: &E,
    rows: f64,
) -> Result<Vec<f64>, AllocError> {
    let mut x_bar = online::example_sum(share)?;
    reducer.sum(&mut x_bar);
    let scale = 1.0 / rows.max(1.0);
    x_bar.iter_mut().for_each(|x| *x *= scale);
    Ok(x_bar)
}

/// Replace `snapshot` on every rank by Σ_r share_r·snapshot_r (share_r = m_r/m): the last
/// iterate, and the averaged one where there is one (on every rank alike), in one sum.
pub fn average_snapshot(reducer: &dyn Reducer, snapshot: &mut Snapshot, share: f64) {
    let iterates: Vec<&mut online::Iterate> = std::iter::once(&mut snapshot.last)
        .chain(snapshot.averaged.as_mut())
        .collect();
    let mut values = Vec::with_capacity(iterates.len() * (iterates[0].weights.len() + 1));
    for iterate in &iterates {
        values.extend(iterate.weights.iter().map(|w| share * w));
        values.push(share * iterate.bias);
    }
    reducer.sum(&mut values);
    let mut chunks = values.chunks_exact(iterates[0].weights.len() + 1);
    for (iterate, chunk) in iterates.into_iter().zip(&mut chunks) {
        let (bias, weights) = chunk.split_last().expect("n + 1 values");
        iterate.weights.copy_from_slice(weights);
        iterate.bias = *bias;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};
    use crate::dist::threads;
    use crate::loss::Loss;
    use crate::metrics;
    use crate::online::{Iterate, Sampling};

    /// Rows `rows` of a seeded random sparse problem over 30 features (row i depends on i
    /// only, so shares are slices of the whole): ~6 non-zeros, a dense feature 0, and labels
    /// from a planted model with noise (so the shares' optima differ a little).
    fn problem(rows: std::ops::Range<usize>) -> CsrMatrix {
        let n = 30;
        let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0], vec![], vec![]);
        for i in rows {
            let mut state = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            };
            let mut row: Vec<u32> = (0..6).map(|_| 1 + (next() * 29.0) as u32).collect();
            row.push(0);
            row.sort_unstable();
            row.dedup();
            let mut score = next() - 0.5;
            for &j in &row {
                let x = if j == 0 { 0.7 } else { 2.0 * next() - 1.0 };
                score += x * ((j % 7) as f64 - 3.0);
                indices.push(j);
                values.push(x);
            }
            offsets.push(indices.len() as u64);
            labels.push(if score > 0.0 { 1.0 } else { -1.0 });
        }
        CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), n).unwrap()
    }

    fn config(loss: Loss, lambda: f64, average_start: u64, regularize_bias: bool) -> Config {
        Config {
            loss,
            class_weights: Default::default(),
            lambda,
            l1: 0.0,
            t0: None,
            average_start,
            regularize_bias,
            bias_rate: 1.0,
            eta: None,
            sampling: Sampling::Uniform,
            seed: 5,
            stop: Stop::Epochs(4),
        }
    }

    /// max |a − b| relative to b's largest entry.
    fn relative_difference(a: &Iterate, b: &Iterate) -> f64 {
        let scale = b.weights.iter().fold(b.bias.abs(), |s, w| s.max(w.abs()));
        let diff = a.weights.iter().zip(&b.weights).map(|(x, y)| (x - y).abs());
        diff.fold((a.bias - b.bias).abs(), f64::max) / scale
    }

    fn same_iterates(a: &Snapshot, b: &Snapshot, what: &str) {
        let last = relative_difference(&a.last, &b.last);
        assert!(last <= 1e-9, "{what}: last iterates differ by {last:e}");
        match (&a.averaged, &b.averaged) {
            (Some(x), Some(y)) => {
                let avg = relative_difference(x, y);
                assert!(avg <= 1e-9, "{what}: averaged iterates differ by {avg:e}");
            }
            (None, None) => {}
            _ => panic!("{what}: only one is averaged"),
        }
    }

    /// One rank "averages" with itself: the run is the single-process one, except that every
    /// learner restarts from its own snapshot k times an epoch, before and after t_a.
    #[test]
    fn restarting_from_its_own_snapshot_changes_nothing() {
        let data = problem(0..90);
        for algorithm in Algorithm::ALL {
            for loss in [Loss::Log, Loss::Squared, Loss::Hinge] {
                // 1, 3 and 200 mixes per epoch (200 > m: some without a step between).
                let cases = [
                    (1, true, 1),
                    (200, false, 3),
                    (200, true, 1),
                    (1, true, 200),
                ];
                for (average_start, regularize_bias, per_epoch) in cases {
                    let c = config(loss, 1e-2, average_start, regularize_bias);
                    let single = online::fit(&data, algorithm, &c, &mut ()).unwrap();
                    let options = Options {
                        per_epoch,
                        ..Options::default()
                    };
                    let restarted =
                        threads::run(1, |r| fit(&data, algorithm, &c, &options, r, &mut ()));
                    let restarted = restarted.into_iter().next().unwrap().unwrap();
                    assert_eq!(restarted.steps, single.steps);
                    let what = format!("{algorithm} {loss} t_a={average_start} k={per_epoch}");
                    same_iterates(&restarted.snapshot, &single.snapshot, &what);
                    assert!(single.snapshot.last.weights.iter().any(|&w| w != 0.0));
                }
            }
        }
    }

    /// Every rank starts from the given iterate: one rank is the single process from it, for
    /// every learner (and the start is not lost on the way), and on three ranks the fast
    /// learners take their baselines' steps from it.
    #[test]
    fn every_rank_starts_from_the_given_iterate() {
        let data = problem(0..90);
        let start = Start::warm(Iterate {
            weights: (0..30).map(|j| (j * 5 % 7) as f64 * 0.1 - 0.3).collect(),
            bias: 0.2,
        });
        for algorithm in Algorithm::ALL {
            let c = config(Loss::Log, 1e-2, 1, true);
            let single = online::fit_from(&data, algorithm, &c, Some(&start), &mut ()).unwrap();
            let options = Options::default();
            let ranked = threads::run(1, |r| {
                fit_from(&data, algorithm, &c, Some(&start), &options, r, &mut ())
            });
            let ranked = ranked.into_iter().next().unwrap().unwrap();
            same_iterates(&ranked.snapshot, &single.snapshot, &algorithm.to_string());
            let cold = online::fit(&data, algorithm, &c, &mut ()).unwrap();
            let moved = relative_difference(single.snapshot.output(), cold.snapshot.output());
            assert!(moved > 1e-3, "{algorithm}: {moved:e}");
        }
        // Three ranks on uneven shares, all from the start: each fast learner still takes its
        // baseline's steps.
        let bounds = [0, 20, 70, 90];
        let c = config(Loss::Hinge, 1e-2, 1, false);
        for (fast, naive) in [
            (Algorithm::Sgd, Algorithm::NaiveSgd),
            (Algorithm::Asgd, Algorithm::NaiveAsgd),
            (Algorithm::Casgd, Algorithm::NaiveCasgd),
        ] {
            let runs = threads::run(3, |r| {
                let share = problem(bounds[r.rank()]..bounds[r.rank() + 1]);
                let options = Options::default();
                let run = |algorithm| {
                    fit_from(&share, algorithm, &c, Some(&start), &options, r, &mut ())
                        .unwrap()
                        .snapshot
                };
                (run(fast), run(naive))
            });
            for (a, b) in &runs {
                same_iterates(a, b, &format!("{fast} from a start on 3 ranks"));
            }
        }
    }

    /// The O(Tn) baselines stay the oracle across ranks: on uneven shares each fast learner
    /// mixed every epoch takes the same steps as its baseline mixed every epoch.
    #[test]
    fn mixed_fast_learners_match_their_mixed_baselines() {
        let bounds = [0, 40, 110, 140];
        let pairs = [
            (Algorithm::Sgd, Algorithm::NaiveSgd),
            (Algorithm::Asgd, Algorithm::NaiveAsgd),
            (Algorithm::Casgd, Algorithm::NaiveCasgd),
        ];
        for (fast, naive) in pairs {
            let mut last_biases = vec![];
            for (average_start, regularize_bias, bias_rate) in
                [(1, true, 1.0), (300, false, 1.0), (1, false, 0.01)]
            {
                let c = Config {
                    stop: Stop::Steps(500),
                    bias_rate,
                    ..config(Loss::Log, 1e-2, average_start, regularize_bias)
                };
                let runs = threads::run(3, |r| {
                    let share = problem(bounds[r.rank()]..bounds[r.rank() + 1]);
                    let a = fit(&share, fast, &c, &Options::default(), r, &mut ()).unwrap();
                    let b = fit(&share, naive, &c, &Options::default(), r, &mut ()).unwrap();
                    (a.snapshot, b.snapshot)
                });
                for (a, b) in &runs {
                    same_iterates(
                        a,
                        b,
                        &format!("{fast} t_a={average_start} rate={bias_rate}"),
                    );
                    assert_eq!(a, &runs[0].0, "every rank holds the same model");
                }
                last_biases.push(runs[0].0.last.bias);
            }
            // The free bias's last iterate at rate 0.01 is elsewhere than at rate 1: the rate
            // reaches the ranks' learners.
            let [_, full, slow] = last_biases[..] else {
                unreachable!("three cases")
            };
            assert!((full - slow).abs() > 1e-6, "{fast}: {full} vs {slow}");
        }
    }

    #[test]
    fn global_step_counts_scale_to_the_shares() {
        let c = Config {
            stop: Stop::Steps(1000),
            ..config(Loss::Log, 1.0, 251, true)
        };
        let whole = RowNorms::of(&problem(0..100));
        let local = local_config(&c, Algorithm::Asgd, 2, 30, &whole, LocalSteps::Scaled).unwrap();
        assert_eq!(local.stop, Stop::Steps(300));
        assert_eq!(local.average_start, 76);
        assert_eq!(local.seed, 7);
        let t0 = online::default_t0(&problem(0..100), Loss::Log, 1.0);
        assert!((local.t0.unwrap() - 0.3 * t0).abs() <= 1e-12 * t0);
        let full = local_config(&c, Algorithm::Asgd, 2, 30, &whole, LocalSteps::Full).unwrap();
        assert_eq!(full.t0, Some(t0));
        // Squared loss: never below the whole data's bound for contracting steps.
        let squared = Config {
            loss: Loss::Squared,
            class_weights: Default::default(),
            t0: Some(1.0),
            ..c
        };
        let local =
            local_config(&squared, Algorithm::Asgd, 2, 30, &whole, LocalSteps::Scaled).unwrap();
        assert_eq!(
            local.t0,
            Some(online::default_t0(&problem(0..100), Loss::Squared, 1.0))
        );
        let late = Config {
            average_start: 1001,
            ..c
        };
        assert!(local_config(&late, Algorithm::Asgd, 0, 30, &whole, LocalSteps::Scaled).is_err());
        assert!(local_config(&late, Algorithm::Sgd, 0, 30, &whole, LocalSteps::Scaled).is_ok());
    }

    /// The default t₀ is the whole data's on every rank, even when the shares' rows differ in
    /// norm (here the last share's rows are scaled up): t₀·m_r/m with one t₀ for all.
    #[test]
    fn every_rank_scales_the_whole_datas_default_t0() {
        let bounds = [0, 40, 110, 140];
        let part = |rank: usize| {
            let rows = problem(bounds[rank]..bounds[rank + 1]);
            let scale = if rank == 2 { 3.0 } else { 1.0 };
            let values: Vec<f64> = (0..rows.nnz() as usize)
                .map(|k| scale * rows.values().slice(0, rows.nnz() as usize).get(k))
                .collect();
            let (labels, offsets) = (rows.labels().to_vec(), rows.offsets().to_vec());
            let indices = rows.indices().to_vec();
            CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), 30).unwrap()
        };
        let whole = {
            let parts: Vec<CsrMatrix> = (0..3).map(part).collect();
            let norms: Vec<RowNorms> = parts.iter().map(RowNorms::of).collect();
            RowNorms {
                rows: 140.0,
                measured: 140.0,
                max: norms.iter().map(|n| n.max).fold(0.0, f64::max),
                sum: norms.iter().map(|n| n.sum).sum(),
            }
        };
        for loss in [Loss::Log, Loss::Squared] {
            let c = config(loss, 1e-2, 1, true);
            let t0 = whole.default_t0(loss, c.lambda);
            let locals = threads::run(3, |r| {
                let share = part(r.rank());
                let norms = whole_norms(r, &share, loss);
                let steps = LocalSteps::Scaled;
                let local =
                    local_config(&c, Algorithm::Asgd, r.rank(), share.n_rows(), &norms, steps);
                (norms, share.n_rows(), local.unwrap().t0.unwrap())
            });
            for (norms, rows, local_t0) in locals {
                assert_eq!(norms.rows, whole.rows);
                assert_eq!(norms.max, whole.max);
                assert!((norms.sum - whole.sum).abs() <= 1e-12 * whole.sum);
                let expected = match loss {
                    Loss::Squared => t0,
                    _ => t0 * rows as f64 / 140.0,
                };
                assert!(
                    (local_t0 - expected).abs() <= 1e-9 * expected,
                    "{loss}: {local_t0} vs {expected}"
                );
            }
        }
    }

    /// CASGD on every rank centers on the whole data's x̄: the ranks' sums over uneven shares
    /// give the single process's mean.
    #[test]
    fn every_rank_centers_on_the_whole_datas_mean() {
        let bounds = [0, 40, 110, 140];
        let single = online::mean_example(&problem(0..140)).unwrap();
        let means = threads::run(3, |r| {
            let share = problem(bounds[r.rank()]..bounds[r.rank() + 1]);
            whole_mean(r, &share, 140.0).unwrap()
        });
        for mean in &means {
            assert_eq!(mean, &means[0], "every rank holds the same bits");
            let diff = mean.iter().zip(&single).map(|(a, b)| (a - b).abs());
            assert!(diff.fold(0.0, f64::max) <= 1e-12);
        }
        assert_ne!(online::mean_example(&problem(0..40)).unwrap(), single);
    }

    /// Averaging every epoch lands within 0.5% of the single-process objective on 2 and 4
    /// ranks, and closer than averaging once at the end.
    #[test]
    fn averaging_every_epoch_lands_near_the_single_process_objective() {
        let m = 400;
        let data = problem(0..m);
        let c = Config {
            stop: Stop::Epochs(10),
            ..config(Loss::Log, 1e-2, 1, true)
        };
        let objective = |it: &Iterate| {
            metrics::objective(
                c.loss,
                metrics::Penalty::l2(c.lambda, true),
                &it.weights,
                it.bias,
                &data,
            )
        };
        let single = objective(
            online::fit(&data, Algorithm::Asgd, &c, &mut ())
                .unwrap()
                .snapshot
                .output(),
        );
        for ranks in [2, 4] {
            let runs = threads::run(ranks, |r| {
                let (lo, hi) = (r.rank() * m / ranks, (r.rank() + 1) * m / ranks);
                let share = problem(lo..hi);
                let every =
                    fit(&share, Algorithm::Asgd, &c, &Options::default(), r, &mut ()).unwrap();
                // Once at the end: every rank a whole single run on its share.
                let local = Config {
                    seed: c.seed + r.rank() as u64,
                    ..c
                };
                let mut once = online::fit(&share, Algorithm::Asgd, &local, &mut ()).unwrap();
                average_snapshot(r, &mut once.snapshot, (hi - lo) as f64 / m as f64);
                (every.snapshot, once.snapshot)
            });
            let every = objective(runs[0].0.output()) / single - 1.0;
            let once = objective(runs[0].1.output()) / single - 1.0;
            println!("{ranks} ranks: every epoch {every:+e}, once {once:+e}");
            assert!(every.abs() <= 5e-3, "{ranks} ranks: {every:e}");
            assert!(
                every.abs() < once.abs(),
                "{ranks} ranks: {every:e} vs once {once:e}"
            );
        }
    }

    /// k > 1 averages an epoch need the length in epochs: with a step count the ranks'
    /// numbers of averages could differ.
    #[test]
    fn several_averages_an_epoch_refuse_a_step_count() {
        let data = problem(0..50);
        let options = Options {
            per_epoch: 2,
            ..Options::default()
        };
        let c = config(Loss::Log, 1e-2, 1, true);
        let steps = Config {
            stop: Stop::Steps(120),
            ..c
        };
        let results = threads::run(2, |r| {
            let refused = fit(&data, Algorithm::Asgd, &steps, &options, r, &mut ());
            let epochs = fit(&data, Algorithm::Asgd, &c, &options, r, &mut ());
            (refused.err(), epochs.map(|f| f.steps))
        });
        for (refused, epochs) in results {
            assert_eq!(refused, Some(ConfigError::MixesNeedEpochs(2)));
            assert_eq!(epochs, Ok(200));
        }
    }

    /// Shares above the sample size: each rank's sample mean weighs in by its rows (100,000
    /// rows of ‖x‖² = 1 and 10,000 of 4 have the mean 1.2727…, not the samples' 2.5).
    #[test]
    fn sampled_shares_weigh_in_by_their_rows() {
        let share = |rank: usize| {
            let (m, value) = if rank == 0 {
                (100_000, 1.0)
            } else {
                (10_000, 2.0)
            };
            let labels = (0..m)
                .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            let offsets = (0..=m as u64).collect();
            CsrMatrix::new(
                labels,
                offsets,
                vec![0; m],
                ValueVec::F64(vec![value; m]),
                1,
            )
            .unwrap()
        };
        let norms = threads::run(2, |r| whole_norms(r, &share(r.rank()), Loss::Log));
        let mean = (100_000.0 + 4.0 * 10_000.0) / 110_000.0;
        for whole in norms {
            assert_eq!((whole.rows, whole.measured), (110_000.0, 110_000.0));
            let t0 = whole.default_t0(Loss::Log, 1.0);
            assert!((t0 - (mean + 1.0)).abs() <= 1e-12 * t0, "t0 {t0}");
        }
    }
}
