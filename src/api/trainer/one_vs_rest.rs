//! One-vs-rest training: a binary model per class against the rest, the classes trained at
//! once on the threads set, each on its own (SGD, ASGD and CASGD: in one pass, [`super::one_pass`]).

use std::borrow::Cow;
use std::sync::Arc;

use super::{Monitor, Trainer, Training};
use crate::api::{Error, ExampleSet, Examples, Learner, Model};
use crate::batch;
use crate::data::ClassVsRest;
use crate::data::column_major::ColumnMajor;
use crate::dist::{self, Local, Reducer};
use crate::loss::{ClassWeights, WeightedLoss};
use crate::model::OneVsRest;

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
    /// Each class's [`Training::dual`] (dcd's dual variables), in the order of the classes.
    pub(super) duals: Vec<Option<Vec<f64>>>,
}

impl OneVsRestTraining {
    /// The classifier of the classes' trainings, one per class in the order of `classes`,
    /// which started at `started`.
    pub(super) fn of(
        classes: Vec<f64>,
        trainings: Vec<Training>,
        started: std::time::Instant,
    ) -> Result<OneVsRestTraining, Error> {
        let seconds = started.elapsed().as_secs_f64();
        let examples = trainings.iter().map(|t| t.examples).sum();
        let (models, duals) = trainings.into_iter().map(|t| (t.model, t.dual)).unzip();
        Ok(OneVsRestTraining {
            classifier: OneVsRest::new(classes, models).map_err(Error::Config)?,
            seconds,
            examples,
            duals,
        })
    }

    /// This training's model of class `class` and its dual variables (dcd's), if it has the
    /// class.
    pub(super) fn run_of(&self, class: f64) -> Option<(&Model, Option<&Vec<f64>>)> {
        let k = self.classifier.classes().iter().position(|&c| c == class)?;
        let dual = self.duals.get(k).and_then(Option::as_ref);
        Some((&self.classifier.models()[k], dual))
    }

    /// `trainer` started from this training's run of class `class`, if it has one
    /// ([`Trainer::continued_from`]).
    fn start_class(&self, trainer: &Trainer, class: f64) -> Option<Trainer> {
        let (model, dual) = self.run_of(class)?;
        Some(trainer.continued_from(model.clone(), dual.cloned()))
    }
}

impl Trainer {
    /// One binary model per class of `data`, each trained with these settings on the class
    /// against the rest ([`ClassVsRest`]): liblinear's multiclass `-s 0..3`, scikit-learn's
    /// `OneVsRestClassifier`. The classes are the labels' distinct values, which must be whole
    /// numbers, at least two. For a classification loss of an online learner or batch solver,
    /// without an initial model or a resume state (each refused). Class
    /// weights are given by label or balanced ([`ClassWeighting::one_vs_rest`](crate::loss::ClassWeighting::one_vs_rest)): class k's
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
        self.train_classes(data, &Local, monitor, false, None)
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
        self.train_classes(data, reducer, monitor, false, None)
    }

    /// [`Trainer::train_one_vs_rest_across`], with class weights named for labels that are
    /// not classes of `data` skipped if `absent_ok` (as a fold of cross-validation may lack a
    /// class), else refused; each class's batch solve started from its run in `start`, a
    /// training on the same rows at another strength, if it has one.
    pub(in crate::api) fn train_classes<M: Monitor>(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
        monitor: &mut M,
        absent_ok: bool,
        start: Option<&OneVsRestTraining>,
    ) -> Result<OneVsRestTraining, Error> {
        self.check_settings()?;
        let mut training = (self.with_lambda_of_cost(data.n_rows(), reducer)?)
            .train_classes_at_lambda(data, reducer, monitor, absent_ok, start)?;
        if let Some(cost) = self.cost {
            training
                .classifier
                .insert_detail("cost", serde_json::json!(cost));
        }
        Ok(training)
    }

    /// [`Trainer::train_classes`] at the trainer's λ.
    fn train_classes_at_lambda<M: Monitor>(
        &self,
        data: &ExampleSet,
        reducer: &dyn Reducer,
        monitor: &mut M,
        absent_ok: bool,
        start: Option<&OneVsRestTraining>,
    ) -> Result<OneVsRestTraining, Error> {
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
            (self.initial_dual.is_some(), "initial dual variables"),
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
            return self.train_multinomial(data, &classes, &weights, reducer, monitor, start);
        }
        if self.crammer_singer {
            return self.train_crammer_singer(data, &classes, &weights, reducer, monitor);
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
        // Class k's trainer: started from its run in `start`, if any.
        let class_trainer = |class: f64| match start.and_then(|s| s.start_class(&trainer, class)) {
            Some(started) => Cow::Owned(started),
            None => Cow::Borrowed(&trainer),
        };
        let trainings: Vec<Result<Training, Error>> = if at_once == 1 {
            let mut trainings = Vec::with_capacity(classes.len());
            for (k, &class) in classes.iter().enumerate() {
                monitor.class_start(class, k, classes.len());
                let weights = weights[k];
                let training = class_trainer(class)
                    .train_class(data, class, weights, columns, reducer, monitor);
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
                class_trainer(class).train_class(data, class, weights[k], columns, &Local, &mut ())
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
    pub(super) fn class_threads(&self, classes: usize) -> (usize, Option<usize>) {
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

    /// Each class's weights against the rest ([`ClassWeighting::one_vs_rest`](crate::loss::ClassWeighting::one_vs_rest); unit without
    /// class weights) for the classes `classes` with `rows[k]` rows of class k.
    pub(in crate::api) fn one_vs_rest_weights(
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
}

/// `job(0)`, …, `job(count − 1)` in that order, computed on `at_once` threads of their own,
/// never more at once: each job (a class's training) runs in a pool of its own, and a rayon
/// worker waiting on another pool would take up further jobs of its own pool meanwhile (on
/// mc10 with `cd` and two threads: a 1.48 GB peak, 425 MB with the jobs bounded).
pub(super) fn at_most_at_once<T: Send>(
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

/// The most classes one-vs-rest trains (each a model of its own).
pub const MAX_CLASSES: usize = 1 << 16;

/// The classes of one-vs-rest training: the distinct labels of every rank's `data`,
/// increasing, and the number of rows of each. An error on every rank unless they are whole
/// numbers (real-valued labels are a regression's), at least two and at most
/// [`MAX_CLASSES`].
pub(in crate::api) fn class_labels_across(
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

#[cfg(test)]
mod tests {
    use super::super::thread_pool;
    use super::*;
    use crate::online;

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
