//! Hogwild (`sparselin::online::hogwild`) against the single-threaded learners on real data
//! (`../shared/data`): one thread is the same run bit for bit; two and four threads land
//! within 0.5% of its objective.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use sparselin::data::libsvm::{ParseOptions, read_file};
use sparselin::data::{CsrMatrix, Examples, SampleWeighted, ValueVec};
use sparselin::loss::{ClassWeights, Loss};
use sparselin::metrics;
use sparselin::online::hogwild::{self, Options, ScalarSharing};
use sparselin::online::{
    self, Algorithm, Config, EpochEnd, Iterate, Observer, Sampling, Snapshot, Start, Stop,
};

/// `../shared/data/NAME/train.svm.gz` (as CI lays the shared directory out).
/// Held by every test that trains: libtest runs a binary's tests on parallel threads, and a
/// second test's learner taking a core preempts Hogwild workers mid-update, which is what the
/// 0.5% bounds are not about (CASGD is the sensitive one: see the test below).
static ONE_TRAINING_AT_A_TIME: Mutex<()> = Mutex::new(());

fn training_slot() -> MutexGuard<'static, ()> {
    ONE_TRAINING_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn train_set(name: &str) -> CsrMatrix {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(name)
        .join("train.svm.gz");
    read_file(&path, ParseOptions::default()).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the shared data sets must be checked out beside the repository)",
            path.display()
        )
    })
}

/// Every epoch's snapshot.
#[derive(Default)]
struct Epochs(Vec<Snapshot>);

impl Observer for Epochs {
    fn wants_epochs(&self) -> bool {
        true
    }

    fn epoch_end(&mut self, end: &EpochEnd<'_>) {
        self.0.push(end.snapshot.clone());
    }
}

/// Every epoch's snapshot, asking the run to stop once it has seen `stop_after` of them.
struct StopAfter {
    seen: Epochs,
    stop_after: usize,
}

impl Observer for StopAfter {
    fn wants_epochs(&self) -> bool {
        true
    }

    fn epoch_end(&mut self, end: &EpochEnd<'_>) {
        self.seen.epoch_end(end);
    }

    fn stop_requested(&self) -> bool {
        self.seen.0.len() >= self.stop_after
    }
}

/// Every number of a snapshot as raw bits (so that −0.0 ≠ 0.0 and NaN = NaN).
fn bits(s: &Snapshot) -> Vec<u64> {
    let mut out = Vec::new();
    for it in std::iter::once(&s.last).chain(&s.averaged) {
        out.extend(it.weights.iter().map(|w| w.to_bits()));
        out.push(it.bias.to_bits());
    }
    out.push(s.averaged.is_some() as u64);
    out
}

fn config(
    loss: Loss,
    lambda: f64,
    regularize_bias: bool,
    sampling: Sampling,
    epochs: u64,
) -> Config {
    Config {
        loss,
        class_weights: Default::default(),
        lambda,
        l1: 0.0,
        t0: None,
        average_start: 1,
        regularize_bias,
        bias_rate: 1.0,
        eta: None,
        sampling,
        seed: 7,
        stop: Stop::Epochs(epochs),
    }
}

#[test]
fn one_thread_is_the_single_threaded_learner_bit_for_bit() {
    let _slot = training_slot();
    // (set, loss, regularized bias, sampling, t_a, free bias's rate, class weights)
    let cases = [
        (
            "reuters_grain",
            Loss::Hinge,
            true,
            Sampling::Uniform,
            1,
            1.0,
            ClassWeights::UNIT,
        ),
        (
            "reuters_grain",
            Loss::Log,
            false,
            Sampling::Permutation,
            600,
            1.0,
            ClassWeights::new(7.0, 0.6).unwrap(),
        ),
        (
            "spambase",
            Loss::Squared,
            true,
            Sampling::FileOrder,
            1000,
            1.0,
            ClassWeights::UNIT,
        ),
        (
            "spambase",
            Loss::SmoothHinge,
            false,
            Sampling::Uniform,
            1,
            0.01,
            ClassWeights::new(7.0, 0.6).unwrap(),
        ),
    ];
    for (name, loss, regularized, sampling, average_start, bias_rate, class_weights) in cases {
        let data = train_set(name);
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let config = Config {
                average_start,
                bias_rate,
                class_weights,
                ..config(loss, 1e-3, regularized, sampling, 3)
            };
            let (mut single, mut parallel) = (Epochs::default(), Epochs::default());
            let expected = online::fit(&data, algorithm, &config, &mut single).unwrap();
            // One worker owns all its sums and takes no private copies, so hot features
            // cannot change a bit.
            let options = Options {
                hot_features: Some(hogwild::DEFAULT_HOT_FEATURES),
                ..Options::new(1)
            };
            let got = hogwild::fit(&data, algorithm, &config, &options, &mut parallel).unwrap();
            let what = format!(
                "{name} {algorithm} {loss} regularized={regularized} rate={bias_rate} {sampling}"
            );
            assert_eq!(got.steps, expected.steps, "{what}");
            assert_eq!(parallel.0.len(), 3, "{what}: one snapshot per epoch");
            for (epoch, (g, e)) in parallel.0.iter().zip(&single.0).enumerate() {
                assert!(bits(g) == bits(e), "{what}: epoch {} differs", epoch + 1);
            }
            assert!(bits(&got.snapshot) == bits(&expected.snapshot), "{what}");
            assert!(
                got.snapshot.output().weights.iter().any(|&w| w != 0.0),
                "{what}: a model that learned something"
            );
        }
    }
}

/// An observer that stops a run at its second epoch end (of five) ends it there, on one
/// thread and on Hogwild workers: two epochs' steps, no further epoch end, and (one thread)
/// the model of a two-epoch run, bit for bit.
#[test]
fn a_run_stopped_at_an_epoch_end_ends_there() {
    let _slot = training_slot();
    let data = train_set("reuters_grain");
    let m = data.n_rows() as u64;
    for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
        let config = config(Loss::Hinge, 1e-3, true, Sampling::Uniform, 5);
        let two_epochs = Config {
            stop: Stop::Epochs(2),
            ..config
        };
        let expected = online::fit(&data, algorithm, &two_epochs, &mut ()).unwrap();
        for threads in [None, Some(1), Some(2)] {
            let mut observer = StopAfter {
                seen: Epochs::default(),
                stop_after: 2,
            };
            let fit = match threads {
                None => online::fit(&data, algorithm, &config, &mut observer),
                Some(threads) => {
                    let options = Options::new(threads);
                    hogwild::fit(&data, algorithm, &config, &options, &mut observer)
                }
            };
            let fit = fit.unwrap();
            let what = format!("{algorithm} on {threads:?} threads");
            assert_eq!(fit.steps, 2 * m, "{what}");
            assert_eq!(
                observer.seen.0.len(),
                2,
                "{what}: no epoch end after the stop"
            );
            assert!(bits(&fit.snapshot) == bits(&observer.seen.0[1]), "{what}");
            if threads != Some(2) {
                assert!(bits(&fit.snapshot) == bits(&expected.snapshot), "{what}");
            }
        }
    }
}

/// (loss, regularized bias, sampling): a run of each kind, for the tests of what a run may
/// be given (sample weights, a start).
const VARIED_RUNS: [(Loss, bool, Sampling); 3] = [
    (Loss::Hinge, true, Sampling::Uniform),
    (Loss::Log, false, Sampling::Permutation),
    (Loss::Squared, true, Sampling::FileOrder),
];

/// With sample weights (0 to 3, row by row), one worker still reproduces the single-threaded
/// learner bit for bit, in every visiting order, and the weights change the model.
#[test]
fn one_thread_is_the_single_threaded_learner_with_sample_weights() {
    let _slot = training_slot();
    let data = train_set("reuters_grain");
    let weights: Vec<f64> = (0..data.n_rows()).map(|i| (i % 7 % 4) as f64).collect();
    let rows = SampleWeighted::new(&data, &weights).unwrap();
    for (loss, regularized, sampling) in VARIED_RUNS {
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let config = config(loss, 1e-3, regularized, sampling, 2);
            let what = format!("{algorithm} {loss} {sampling}");
            let expected = online::fit(&rows, algorithm, &config, &mut ()).unwrap();
            let got = hogwild::fit(&rows, algorithm, &config, &Options::new(1), &mut ()).unwrap();
            assert!(bits(&got.snapshot) == bits(&expected.snapshot), "{what}");
            let plain = online::fit(&data, algorithm, &config, &mut ()).unwrap();
            assert!(bits(&plain.snapshot) != bits(&got.snapshot), "{what}");
        }
    }
}

/// max |a − b| relative to b's largest entry, the bias included.
fn apart(a: &Iterate, b: &Iterate) -> f64 {
    let scale = b.weights.iter().fold(b.bias.abs(), |s, w| s.max(w.abs()));
    let diff = a.weights.iter().zip(&b.weights).map(|(x, y)| (x - y).abs());
    diff.fold((a.bias - b.bias).abs(), f64::max) / scale
}

/// Resuming a stopped run: one worker takes the single-threaded learner's resumed steps bit
/// for bit, and both end where the uninterrupted run ends (to rounding). Two workers resume
/// at the step size and average the run had reached: ten racing steps move the averaged
/// iterate far less than ten steps of a warm start (which restarts the schedule) do.
#[test]
fn one_thread_resumed_is_the_single_threaded_learner_resumed() {
    let _slot = training_slot();
    let data = train_set("reuters_grain");
    for (loss, regularized, sampling) in VARIED_RUNS {
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let config = config(loss, 1e-3, regularized, sampling, 3);
            let what = format!("{algorithm} {loss} {sampling}");
            let whole = online::fit(&data, algorithm, &config, &mut ()).unwrap();
            let (first, rest) = (
                Config {
                    stop: Stop::Epochs(2),
                    ..config
                },
                Config {
                    stop: Stop::Epochs(1),
                    ..config
                },
            );
            let stopped = online::fit(&data, algorithm, &first, &mut ()).unwrap();
            let start = Start {
                snapshot: stopped.snapshot,
                steps: stopped.steps,
                drawn: stopped.steps,
            };
            let expected = online::fit_from(&data, algorithm, &rest, Some(&start), &mut ());
            let expected = expected.unwrap();
            let options = Options::new(1);
            let got = hogwild::fit_from(&data, algorithm, &rest, Some(&start), &options, &mut ());
            assert!(
                bits(&got.unwrap().snapshot) == bits(&expected.snapshot),
                "{what}"
            );
            let off = apart(expected.snapshot.output(), whole.snapshot.output());
            assert!(
                off < 1e-10,
                "{what}: the resumed run ends {off:e} from the whole run"
            );
            if !algorithm.averages() {
                continue;
            }
            let brief = Config {
                stop: Stop::Steps(10),
                ..config
            };
            let two = |start| {
                let fit = hogwild::fit_from(
                    &data,
                    algorithm,
                    &brief,
                    Some(start),
                    &Options::new(2),
                    &mut (),
                );
                fit.unwrap().snapshot
            };
            // Over 8 runs of the 6 cases (after the re-read) the ratio of the two was 0.0043 to
            // 0.058, and the resumed run's distance from the whole run at most 2.0e-15.
            let average = start.snapshot.averaged.as_ref().unwrap();
            let resumed = apart(two(&start).output(), average);
            let restarted = apart(two(&Start::warm(average.clone())).output(), average);
            assert!(
                resumed < 0.1 * restarted,
                "{what}: the average moved {resumed:e} resumed, {restarted:e} restarted"
            );
        }
    }
}

/// Started from a model of an earlier run, one worker takes the single-threaded learner's
/// steps from it bit for bit; two workers (whose sums are shared) start there too: ten steps
/// later their iterates are nearer to it than ten steps from zero.
#[test]
fn one_thread_from_a_start_is_the_single_threaded_learner_from_it() {
    let _slot = training_slot();
    let data = train_set("reuters_grain");
    for (loss, regularized, sampling) in VARIED_RUNS {
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd, Algorithm::Casgd] {
            let config = config(loss, 1e-3, regularized, sampling, 2);
            let what = format!("{algorithm} {loss} {sampling}");
            let earlier = online::fit(&data, algorithm, &config, &mut ()).unwrap();
            let start = earlier.snapshot.output();
            let warm_start = Start::warm(start.clone());
            let expected = online::fit_from(&data, algorithm, &config, Some(&warm_start), &mut ());
            let expected = expected.unwrap();
            let options = Options::new(1);
            let got = hogwild::fit_from(
                &data,
                algorithm,
                &config,
                Some(&warm_start),
                &options,
                &mut (),
            );
            let got = got.unwrap();
            assert!(bits(&got.snapshot) == bits(&expected.snapshot), "{what}");
            assert!(bits(&got.snapshot) != bits(&earlier.snapshot), "{what}");
            let brief = Config {
                stop: Stop::Steps(10),
                ..config
            };
            let two = |start| {
                let fit =
                    hogwild::fit_from(&data, algorithm, &brief, start, &Options::new(2), &mut ());
                fit.unwrap().snapshot
            };
            let warm = two(Some(&warm_start));
            // Ten racing steps from the start end nearer to it than ten from zero. Over 15 runs
            // of every case (distances relative to the start's largest weight): from the start
            // 0.013 to 0.354, from zero 0.499 to 1.0, the largest ratio of the two 0.38.
            let cold = apart(&two(None).last, start);
            for iterate in std::iter::once(&warm.last).chain(&warm.averaged) {
                let moved = apart(iterate, start);
                assert!(
                    moved < 0.6 * cold,
                    "{what}: 2 threads moved {moved:e} from the start, {cold:e} from zero"
                );
            }
        }
    }
}

fn objective(data: &CsrMatrix, config: &Config, snapshot: &Snapshot) -> f64 {
    let w = snapshot.output();
    metrics::evaluate(
        config.loss,
        metrics::Penalty::l2(config.lambda, config.regularize_bias),
        &w.weights,
        w.bias,
        data,
    )
    .objective
}

#[test]
fn two_and_four_threads_land_within_half_a_percent_of_one() {
    let _slot = training_slot();
    // Runs long enough to be near the optimum, where the objective of a run no longer depends
    // on its sampling stream by more than ~0.05% (spamassassin; on spambase's raw features or
    // reuters_grain 40 epochs are still ~1% from it, and different streams differ by that).
    let data = train_set("spamassassin");
    let cases = [
        (Algorithm::Sgd, Loss::Log, true),
        (Algorithm::Asgd, Loss::Hinge, false),
        (Algorithm::Casgd, Loss::Hinge, true),
    ];
    for (algorithm, loss, regularized) in cases {
        let name = "spamassassin";
        let config = config(loss, 1e-3, regularized, Sampling::Uniform, 40);
        let single = online::fit(&data, algorithm, &config, &mut ()).unwrap();
        let reference = objective(&data, &config, &single.snapshot);
        // CASGD runs with at most one worker per core: oversubscribed (4 workers on this
        // machine's 2 cores, both cores also busy with other work) its workers are preempted
        // mid-step, and CASGD is the learner that feels it: measured with claim blocks that
        // grow with t + t₀ (`hogwild::worker::block_size`), 4 workers on 2 idle cores landed
        // within ±6e-4, on 2 busy cores at up to +5.1e-3; 2 workers at most −8.7e-4 either way.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Private copies of the first 256 features, merged every 256 steps (spamassassin is
        // numbered by frequency), and at 2 threads none.
        let hot = hogwild::DEFAULT_HOT_FEATURES;
        for (threads, hot_features) in [(2, hot), (2, 0), (4, hot)] {
            if algorithm == Algorithm::Casgd && threads > cores.max(2) {
                continue;
            }
            // The default scalar sharing; shared scalars lose updates of a and z̃ (PERF.md).
            let options = Options {
                scalars: ScalarSharing::PerThread,
                hot_features: Some(hot_features),
                ..Options::new(threads)
            };
            let fit = hogwild::fit(&data, algorithm, &config, &options, &mut ()).unwrap();
            assert_eq!(fit.steps, single.steps);
            let got = objective(&data, &config, &fit.snapshot);
            let relative = (got - reference) / reference;
            let what = format!("{name} {algorithm} {loss}, {threads} threads, {hot_features} hot");
            eprintln!("{what}: {relative:+.2e}");
            assert!(
                relative.abs() < 5e-3,
                "{what}: objective {got} vs {reference} on one thread ({relative:+.2e})"
            );
        }
    }
}

#[test]
fn configuration_errors() {
    let data = train_set("spambase");
    let config = config(Loss::Hinge, 1e-3, true, Sampling::Uniform, 1);
    let run = |algorithm, threads| {
        hogwild::fit(&data, algorithm, &config, &Options::new(threads), &mut ())
    };
    assert_eq!(
        run(Algorithm::Asgd, 0).unwrap_err(),
        online::ConfigError::Threads
    );
    assert_eq!(
        run(Algorithm::NaiveAsgd, 2).unwrap_err(),
        online::ConfigError::NotParallel(Algorithm::NaiveAsgd)
    );
    let bad = Config {
        lambda: -1.0,
        ..config
    };
    assert!(hogwild::fit(&data, Algorithm::Sgd, &bad, &Options::new(2), &mut ()).is_err());
}

fn shared_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(name)
        .join("train.svm.gz")
}

#[test]
fn cli_threads_flag() {
    let _slot = training_slot();
    let dir = tempfile::tempdir().unwrap();
    let data = shared_file("reuters_grain");
    let train = |threads: &str, algo: &str, model: &str| {
        Command::new(env!("CARGO_BIN_EXE_sparselin"))
            .args([
                "train",
                data.to_str().unwrap(),
                "--algo",
                algo,
                "--epochs",
                "2",
            ])
            .args(["--threads", threads, "--json", "--quiet", "-o"])
            .arg(dir.path().join(model))
            .output()
            .unwrap()
    };
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let one = train("1", "casgd", "one.model");
    let again = train("1", "casgd", "again.model");
    assert!(one.status.success(), "{}", text(&one));
    let read = |m: &str| std::fs::read(dir.path().join(m)).unwrap();
    assert_eq!(
        read("one.model"),
        read("again.model"),
        "one thread: same seed, same bytes"
    );
    let two = train("2", "casgd", "two.model");
    assert!(two.status.success(), "{}", text(&two));
    let summary: serde_json::Value = serde_json::from_slice(&two.stdout).unwrap();
    assert_eq!(summary["details"]["threads"], 2);
    assert!(again.status.success());
    let naive = train("2", "naive-sgd", "naive.model");
    assert!(!naive.status.success() && text(&naive).contains("one thread"));
    assert!(!dir.path().join("naive.model").exists());
    let zero = train("0", "sgd", "zero.model");
    assert!(!zero.status.success());
}

/// With permutation sampling every row comes once per epoch, however the workers share the
/// steps. Row i holds feature i alone, so its weight is non-zero exactly when row i was
/// visited: after one epoch on 2 and 4 workers, every weight is. (Each worker drawing its own
/// permutation, cut short at its share of the steps, left 25% of the rows unvisited at 2.)
#[test]
fn permutation_visits_every_row_once_per_epoch_on_every_worker_count() {
    let _slot = training_slot();
    let m = 5000;
    let labels = (0..m)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let offsets = (0..=m as u64).collect();
    let indices = (0..m as u32).collect();
    let data = CsrMatrix::new(labels, offsets, indices, ValueVec::Ones, m).unwrap();
    let config = config(Loss::Squared, 1e-3, true, Sampling::Permutation, 1);
    for threads in [1, 2, 4] {
        for algorithm in [Algorithm::Sgd, Algorithm::Asgd] {
            let fit =
                hogwild::fit(&data, algorithm, &config, &Options::new(threads), &mut ()).unwrap();
            let weights = &fit.snapshot.last.weights;
            let unvisited = weights.iter().filter(|&&w| w == 0.0).count();
            assert_eq!(
                unvisited, 0,
                "{algorithm} on {threads} threads: rows never visited"
            );
        }
    }
}
