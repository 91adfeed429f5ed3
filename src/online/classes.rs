//! One-vs-rest in one pass: the binary SGD, ASGD or CASGD learners of K classes step together
//! over each example, as Vowpal Wabbit's `--oaa` does.
//!
//! Trained one at a time, K classes read every row K times and keep K weight vectors apart, so
//! that a row's feature costs K random accesses to K arrays. Yet nothing in a step of these
//! learners but the loss derivative depends on the class: the schedule η_t, the divisor
//! λ(t + t₀) of Lemma 1, the harmonic sum h' of the average and CASGD's centre x̄ (the mean
//! row, whatever the labels) are the same for every class taking step t on the same row. So
//! the K classes keep their sums of a feature side by side (`[v⁽¹⁾ … v⁽ᴷ⁾]` for SGD,
//! `[v⁽¹⁾ … v⁽ᴷ⁾, u⁽¹⁾ … u⁽ᴷ⁾]` for ASGD and CASGD, whose dot products read the v's only), and
//! a step reads the row once and each of its features' K sums from a few adjacent cache lines
//! ([`sparse::block_dot`], [`sparse::block_axpy`]).
//!
//! Each class takes exactly the steps of its own run on the relabelled rows ([`Sgd`],
//! [`Asgd`], [`Casgd`] on [`crate::data::ClassVsRest`] with the same config): on the scalar
//! kernel path the iterates are the same bits; on a vectorized path the classes' dot products
//! are summed in another order than the single-class kernels sum them, a rounding difference.
//! A class's result does not depend on which other classes share its pass.

use std::time::Instant;

use sparselin_kernels::{HugeArray, sparse};

use super::casgd::{Centering, CenteringSums};
use super::driver::plan;
use super::lookahead::prefetch_upcoming;
use super::{
    Algorithm, Asgd, BiasTerm, Casgd, Config, ConfigError, Learner, Mixing, Observer,
    RunningHarmonic, Sampler, Schedule, Sgd, Snapshot,
};
use crate::data::Examples;
use crate::loss::{ClassWeights, WeightedLoss};
use crate::memory::{self, AllocError};

/// A finished run of K classes in one pass.
#[derive(Clone, Debug)]
pub struct ClassesFit {
    /// Each class's final iterates, in the order of the classes given.
    pub snapshots: Vec<Snapshot>,
    /// The schedule every class used (t₀ resolved).
    pub schedule: Schedule,
    /// Steps taken: each class took all of them.
    pub steps: u64,
    /// Wall-clock seconds of the steps, the mixes and the final recovery of every class's
    /// iterates.
    pub seconds: f64,
}

/// Whether [`fit_classes`] runs `algorithm`: the O(k) learners (SGD, ASGD and CASGD); the
/// O(n) baselines train one class at a time.
pub fn trains_classes_in_one_pass(algorithm: Algorithm) -> bool {
    matches!(
        algorithm,
        Algorithm::Sgd | Algorithm::Asgd | Algorithm::Casgd
    )
}

/// Trains `classes[k]` against the rest with the class weights `weights[k]`, for every k, in
/// one pass over `data` per epoch: row i is a positive example of the class equal to its label
/// and a negative one of every other. `config` is each class's run (its own `class_weights`
/// are not used: `weights` are). Every class goes through the same T steps on the same rows,
/// drawn by `config`'s sampler. The observer hears of progress, with the mean over the classes
/// of the sampled losses; epoch ends are not reported.
///
/// Errors: what [`super::fit`] refuses, an algorithm [`trains_classes_in_one_pass`] does not
/// take, and class weights the loss refuses.
///
/// # Panics
///
/// Without classes, or with another number of weights than of classes.
pub fn fit_classes<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    classes: &[f64],
    weights: &[ClassWeights],
    observer: &mut dyn Observer,
) -> Result<ClassesFit, ConfigError> {
    fit_classes_mixing(data, algorithm, config, classes, weights, observer, None)
}

/// [`fit_classes`], each class's iterates passed through `mixing.mix` k times an epoch and
/// after the last step, as [`super::fit_mixing`] does for one class (a data-parallel run
/// averages them across the ranks: [`crate::dist::online::fit_classes`]); CASGD centres
/// on `mixing.x_bar` where given. Without `mixing` this is [`fit_classes`].
pub fn fit_classes_mixing<E: Examples>(
    data: &E,
    algorithm: Algorithm,
    config: &Config,
    classes: &[f64],
    weights: &[ClassWeights],
    observer: &mut dyn Observer,
    mixing: Option<Mixing<'_>>,
) -> Result<ClassesFit, ConfigError> {
    assert!(!classes.is_empty(), "one-vs-rest in one pass needs a class");
    assert_eq!(classes.len(), weights.len(), "one weight pair per class");
    if !trains_classes_in_one_pass(algorithm) {
        return Err(ConfigError::NotInOnePass(algorithm));
    }
    if config.l1 != 0.0 {
        return Err(ConfigError::L1Here(
            "classes in one pass run without it (train each class on its own)",
        ));
    }
    let (schedule, steps) = plan(data, algorithm, config, 0)?;
    let losses = (weights.iter())
        .map(|&w| WeightedLoss::new(config.loss, w))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut mix, per_epoch, x_bar) = Mixing::parts(mixing);
    let mut learner = Classes::new(data, algorithm, losses, classes, schedule, config, x_bar)?;
    let rows = data.rows();
    let data = &rows;
    let m = data.n_rows() as u64;
    let mut sampler = Sampler::new(config.sampling, data.n_rows(), config.seed);
    let started = Instant::now();
    let (mut loss_sum, mut loss_count) = (0.0, 0u64);
    let (mut t, mut interval) = (0, 0);
    while t < steps {
        interval += 1;
        let interval_end = (interval * m).div_ceil(per_epoch).min(steps);
        while t < interval_end {
            t += 1;
            let i = sampler.next();
            let row = data.row(i);
            let s = data.sample_weight(i);
            learner.step(i, &row, s, t);
            prefetch_upcoming(data, &sampler, &row);
            if t % 64 == 0 {
                loss_sum += s * learner.mean_loss(row.label);
                loss_count += 1;
            }
            if t % super::driver::PROGRESS_INTERVAL == 0 {
                observer.progress(t, loss_sum / loss_count.max(1) as f64);
                (loss_sum, loss_count) = (0.0, 0);
            }
        }
        if let Some(mix) = mix.as_deref_mut()
            && t < steps
        {
            let mut snapshots = learner.snapshots(t)?;
            snapshots.iter_mut().for_each(mix);
            learner.restart(&snapshots, t)?;
        }
    }
    let mut snapshots = learner.snapshots(steps)?;
    if let Some(mix) = mix {
        snapshots.iter_mut().for_each(mix);
    }
    Ok(ClassesFit {
        snapshots,
        schedule,
        steps,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Class `class`'s pairs [v, u] of the blocks `[v⁽¹⁾ … v⁽ᴷ⁾, u⁽¹⁾ … u⁽ᴷ⁾]` of K classes.
fn pairs_of(vu: &[f64], k: usize, class: usize) -> Result<HugeArray<[f64; 2]>, AllocError> {
    let mut own: HugeArray<[f64; 2]> = memory::zeroed("weights", vu.len() / (2 * k))?;
    for (o, block) in own.iter_mut().zip(vu.chunks_exact(2 * k)) {
        *o = [block[class], block[k + class]];
    }
    Ok(own)
}

/// Writes class `class`'s pairs [v, u] back into the blocks of K classes ([`pairs_of`]).
fn put_pairs(vu: &mut [f64], k: usize, class: usize, own: &[[f64; 2]]) {
    for (block, pair) in vu.chunks_exact_mut(2 * k).zip(own) {
        [block[class], block[k + class]] = *pair;
    }
}

/// The target of the class `class` on a row labelled `label`, given the loss's targets
/// `[for a class's rows, for the others]`.
#[inline]
fn class_target(targets: [f64; 2], class: f64, label: f64) -> f64 {
    targets[usize::from(label != class)]
}

/// The K classes' sums, feature by feature, and what else their learner keeps.
enum Sums {
    /// SGD: v⁽¹⁾ … v⁽ᴷ⁾ of each feature.
    Sgd(HugeArray<f64>),
    /// ASGD: v⁽¹⁾ … v⁽ᴷ⁾, u⁽¹⁾ … u⁽ᴷ⁾ of each feature, and the classes' common h'_{t−1}.
    Asgd(HugeArray<f64>, RunningHarmonic),
    /// CASGD: ASGD's, the classes' common centring (x̄, ‖x̄‖² and each row's x·x̄), and each
    /// class's centring sums.
    Casgd(
        HugeArray<f64>,
        RunningHarmonic,
        Centering,
        Vec<CenteringSums>,
    ),
}

/// The state of K learners stepping together.
struct Classes<'c> {
    losses: Vec<WeightedLoss>,
    classes: &'c [f64],
    /// The loss's target for a row of a class and for any other row (the classes share the
    /// loss; their weights do not change its targets).
    targets: [f64; 2],
    schedule: Schedule,
    sums: Sums,
    biases: Vec<BiasTerm>,
    /// A step's block dot: each class's v·x.
    dots: Vec<f64>,
    /// A step's block update, one entry per sum of a feature's block: each class's g (and
    /// after them, for ASGD, each class's h'·g).
    coefficients: Vec<f64>,
    /// Each class's prediction at the last step.
    predictions: Vec<f64>,
}

impl<'c> Classes<'c> {
    fn new<E: Examples>(
        data: &E,
        algorithm: Algorithm,
        losses: Vec<WeightedLoss>,
        classes: &'c [f64],
        schedule: Schedule,
        config: &Config,
        x_bar: Option<Vec<f64>>,
    ) -> Result<Classes<'c>, AllocError> {
        let (n_features, k) = (data.n_features(), classes.len());
        let width = if algorithm.averages() { 2 * k } else { k };
        let too_many = || AllocError {
            what: "weights of every class",
            count: n_features,
            bytes: n_features as u128 * width as u128 * size_of::<f64>() as u128,
        };
        let entries = n_features.checked_mul(width).ok_or_else(too_many)?;
        let array = memory::zeroed("weights of every class", entries).map_err(|_| too_many())?;
        let h = RunningHarmonic::new(&schedule);
        let sums = match algorithm {
            Algorithm::Asgd => Sums::Asgd(array, h),
            Algorithm::Casgd => {
                let centering = match x_bar {
                    Some(x_bar) => Centering::around(data, x_bar),
                    None => Centering::new(data)?,
                };
                Sums::Casgd(array, h, centering, vec![CenteringSums::default(); k])
            }
            _ => Sums::Sgd(array),
        };
        let targets = [config.loss.target(1.0), config.loss.target(-1.0)];
        Ok(Classes {
            losses,
            classes,
            targets,
            schedule,
            sums,
            biases: vec![BiasTerm::new(config.regularize_bias); k],
            dots: vec![0.0; k],
            coefficients: vec![0.0; width],
            predictions: vec![0.0; k],
        })
    }

    /// Step t on row `i` (= `row`) with sample weight `s`, for every class: the step of
    /// [`Sgd`], [`Asgd`] or [`Casgd`], the dot products and the updates of all classes each in
    /// one pass over the row.
    fn step(&mut self, i: usize, row: &crate::data::Row<'_>, s: f64, t: u64) {
        let divisor = self.schedule.divisor(t - 1);
        let bias_eta = self.schedule.bias_eta(t);
        let (array, harmonic, mut centring) = match &mut self.sums {
            Sums::Sgd(v) => (v, None, None),
            Sums::Asgd(vu, h) => (vu, Some(h), None),
            Sums::Casgd(vu, h, centering, sums) => {
                let q = centering.q[i];
                (vu, Some(h), Some((q, q - centering.x_bar_norm2, sums)))
            }
        };
        let width = self.coefficients.len();
        self.dots.fill(0.0);
        sparse::block_dot(array, width, row.indices, row.values, &mut self.dots);
        let h = harmonic.as_ref().map_or(0.0, |h| h.value());
        let (mut any, classes) = (false, self.classes.len());
        for k in 0..classes {
            let bias = &mut self.biases[k];
            let vx = self.dots[k];
            let p = match &centring {
                None => (if divisor == 0.0 { 0.0 } else { -vx / divisor }) + bias.value(divisor),
                // CASGD's prediction, as `Casgd::step` makes it.
                Some((q, _, sums)) => {
                    let (r, free_bias) = match *bias {
                        BiasTerm::Regularized { .. } => (1.0, 0.0),
                        BiasTerm::Free { b, .. } => (0.0, b),
                    };
                    sums[k].prediction(vx, *q, r, divisor) + free_bias
                }
            };
            let y = class_target(self.targets, self.classes[k], row.label);
            let g = s * self.losses[k].derivative(p, y);
            any |= g != 0.0;
            self.predictions[k] = p;
            self.coefficients[k] = g;
            match &harmonic {
                None => bias.update(g, bias_eta),
                Some(running) => {
                    self.coefficients[classes + k] = h * g;
                    if let Some((_, q_centered, sums)) = &mut centring {
                        sums[k].update(g, h, *q_centered);
                    }
                    bias.update_averaged(g, bias_eta, h, running.count(t));
                }
            }
        }
        // A class with g = 0 adds 0·x, which leaves its sums as they are, bit for bit.
        if any {
            sparse::block_axpy(&self.coefficients, row.indices, row.values, array);
        }
        if let Some(h) = harmonic {
            h.advance(t);
        }
    }

    /// The mean over the classes of their losses at the last step, on a row labelled `label`.
    fn mean_loss(&self, label: f64) -> f64 {
        let total: f64 = (0..self.classes.len())
            .map(|k| {
                let y = class_target(self.targets, self.classes[k], label);
                self.losses[k].value(self.predictions[k], y)
            })
            .sum();
        total / self.classes.len() as f64
    }

    /// Every class's iterates after `t` steps, recovered by its own learner from its sums.
    fn snapshots(&mut self, t: u64) -> Result<Vec<Snapshot>, AllocError> {
        (0..self.classes.len())
            .map(|class| self.with_class(class, |learner| learner.snapshot(t))?)
            .collect()
    }

    /// Every class restarted at its iterates `snapshots[k]` after `t` steps, as its own
    /// learner restarts ([`Learner::restart`]).
    fn restart(&mut self, snapshots: &[Snapshot], t: u64) -> Result<(), AllocError> {
        for (class, snapshot) in snapshots.iter().enumerate() {
            self.with_class(class, |learner| learner.restart(snapshot, t))?;
        }
        if let Sums::Asgd(_, h) | Sums::Casgd(_, h, ..) = &mut self.sums {
            *h = RunningHarmonic::at_step(&self.schedule, t);
        }
        Ok(())
    }

    /// `act` on class `class`'s own learner ([`Sgd`], [`Asgd`] or [`Casgd`]), made from the
    /// class's sums and given them back afterwards.
    fn with_class<R>(
        &mut self,
        class: usize,
        act: impl FnOnce(&mut dyn Learner) -> R,
    ) -> Result<R, AllocError> {
        let (k, loss, bias) = (self.classes.len(), self.losses[class], self.biases[class]);
        let schedule = self.schedule;
        let (result, bias) = match &mut self.sums {
            Sums::Sgd(v) => {
                let mut own: HugeArray<f64> = memory::zeroed("weights", v.len() / k)?;
                for (o, block) in own.iter_mut().zip(v.chunks_exact(k)) {
                    *o = block[class];
                }
                let mut learner = Sgd::from_sums(loss, schedule, own, bias);
                let result = act(&mut learner);
                let (own, bias) = learner.into_sums();
                for (block, o) in v.chunks_exact_mut(k).zip(own.iter()) {
                    block[class] = *o;
                }
                (result, bias)
            }
            Sums::Asgd(vu, h) => {
                let own = pairs_of(vu, k, class)?;
                let mut learner = Asgd::from_sums(loss, schedule, own, bias, *h);
                let result = act(&mut learner);
                let (own, bias) = learner.into_sums();
                put_pairs(vu, k, class, &own);
                (result, bias)
            }
            Sums::Casgd(vu, h, centering, sums) => {
                let own = pairs_of(vu, k, class)?;
                let lent = std::mem::take(centering);
                let mut learner =
                    Casgd::from_sums(loss, schedule, lent, own, sums[class], bias, *h);
                let result = act(&mut learner);
                let (lent, own, class_sums, bias) = learner.into_sums();
                (*centering, sums[class]) = (lent, class_sums);
                put_pairs(vu, k, class, &own);
                (result, bias)
            }
        };
        self.biases[class] = bias;
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{ClassVsRest, CsrMatrix, ValueVec};
    use crate::loss::Loss;
    use crate::online::{Sampling, Stop, fit};

    /// Three classes (labels 0, 1, 2) of 90 rows over 4 features, each class around its own
    /// feature, feature 3 shared.
    fn three_classes() -> CsrMatrix {
        let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0], vec![], vec![]);
        for i in 0..90u32 {
            let class = i % 3;
            labels.push(f64::from(class));
            indices.extend([class, 3]);
            values.extend([1.0 + f64::from(i % 7) / 10.0, 0.5]);
            offsets.push(indices.len() as u64);
        }
        CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), 4).unwrap()
    }

    fn config(loss: Loss, stop: Stop) -> Config {
        Config {
            loss,
            class_weights: ClassWeights::UNIT,
            lambda: 1e-2,
            l1: 0.0,
            t0: None,
            average_start: 1,
            regularize_bias: true,
            bias_rate: 1.0,
            eta: None,
            sampling: Sampling::Uniform,
            seed: 7,
            stop,
        }
    }

    /// Counts the progress reports and keeps the last mean loss.
    #[derive(Default)]
    struct Reports(u64, f64);

    impl Observer for Reports {
        fn progress(&mut self, _steps: u64, mean_loss: f64) {
            (self.0, self.1) = (self.0 + 1, mean_loss);
        }
    }

    #[test]
    fn each_class_is_its_own_run_and_progress_is_the_mean_of_the_classes_losses() {
        let data = three_classes();
        let classes = [0.0, 1.0, 2.0];
        let weights = [ClassWeights::UNIT; 3];
        // Enough steps for one progress report.
        let steps = super::super::driver::PROGRESS_INTERVAL + 10;
        let config = config(Loss::Log, Stop::Steps(steps));
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let mut reports = Reports::default();
            let joint =
                fit_classes(&data, algorithm, &config, &classes, &weights, &mut reports).unwrap();
            assert_eq!((joint.steps, joint.snapshots.len()), (steps, 3));
            assert_eq!(reports.0, 1, "{algorithm}");
            // A log loss per class, sampled: positive, below that of w = 0 (ln 2) once learned.
            assert!(
                reports.1 > 0.0 && reports.1 < 2f64.ln(),
                "{algorithm}: {}",
                reports.1
            );
            for (class, snapshot) in classes.iter().zip(&joint.snapshots) {
                let alone = fit(
                    &ClassVsRest::new(&data, *class),
                    algorithm,
                    &config,
                    &mut (),
                );
                let alone = alone.unwrap().snapshot;
                let (a, b) = (snapshot.output(), alone.output());
                let scale = b.weights.iter().fold(b.bias.abs(), |m, w| m.max(w.abs()));
                let pairs = a.weights.iter().zip(&b.weights).chain([(&a.bias, &b.bias)]);
                for (x, y) in pairs {
                    assert!((x - y).abs() <= 1e-12 * scale, "{algorithm}, class {class}");
                }
                assert_eq!(snapshot.averaged.is_some(), algorithm.averages());
            }
        }
    }

    #[test]
    fn the_o_n_baselines_and_bad_settings_are_refused() {
        let data = three_classes();
        let (classes, weights) = ([0.0, 1.0], [ClassWeights::UNIT; 2]);
        let run = |algorithm, config: &Config| {
            fit_classes(&data, algorithm, config, &classes, &weights, &mut ()).unwrap_err()
        };
        let hinge = config(Loss::Hinge, Stop::Epochs(1));
        let naive = run(Algorithm::NaiveAsgd, &hinge);
        assert_eq!(naive, ConfigError::NotInOnePass(Algorithm::NaiveAsgd));
        assert!(naive.to_string().contains("sgd, asgd and casgd do"));
        let no_steps = config(Loss::Hinge, Stop::Steps(0));
        assert_eq!(run(Algorithm::Sgd, &no_steps), ConfigError::NoSteps);
        let squared = config(Loss::Squared, Stop::Epochs(1));
        let weights = [ClassWeights::new(2.0, 1.0).unwrap(); 2];
        let error = fit_classes(
            &data,
            Algorithm::Asgd,
            &squared,
            &classes,
            &weights,
            &mut (),
        );
        assert!(matches!(error, Err(ConfigError::ClassWeights(_))));
    }
}
