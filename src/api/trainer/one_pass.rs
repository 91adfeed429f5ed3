//! One-vs-rest's online classes trained in one pass over the data ([`online::fit_classes`]),
//! as [`Trainer::train_one_vs_rest`] runs SGD, ASGD and CASGD unless told otherwise
//! ([`Trainer::classes_in_one_pass`]), on one process or across ranks
//! ([`crate::dist::online::fit_classes`]).

use super::one_vs_rest::at_most_at_once;
use super::*;

/// The most bytes of sums a pass keeps for its classes (unless one class alone needs more):
/// classes beyond it go in further groups, trained after the others, so that one pass needs no
/// more memory than a few classes' separate passes would where the feature space is huge
/// (a thousand classes of ASGD over 2^20 features would be 16.8 GB of sums in one pass).
const GROUP_BYTES: usize = 1 << 30;

/// Classes per group of one pass: `classes` split evenly over `at_once` groups, fewer where a
/// group's sums (`class_bytes` each) would pass `budget`; at least 1.
fn group_size(classes: usize, at_once: usize, class_bytes: usize, budget: usize) -> usize {
    let by_threads = classes.div_ceil(at_once.max(1));
    let by_memory = budget / class_bytes.max(1);
    by_threads.min(by_memory).max(1)
}

impl Trainer {
    /// The online algorithm that trains `classes` classes in one pass, if these settings let
    /// it: SGD, ASGD or CASGD, one pass allowed, no early stopping, and one thread per class
    /// (with at least twice as many threads as classes, each class runs Hogwild workers of its
    /// own instead).
    pub(super) fn one_pass_algorithm(&self, classes: usize) -> Option<online::Algorithm> {
        let Learner::Online(algorithm) = self.learner else {
            return None;
        };
        let (_, per_class) = self.class_threads(classes);
        let threads = per_class.or(self.threads).unwrap_or(1);
        // An L1 term's lazy truncation runs one class at a time.
        (self.classes_in_one_pass
            && self.early_stopping.is_none()
            && online::trains_classes_in_one_pass(algorithm)
            && threads == 1
            && self.l1 == 0.0)
            .then_some(algorithm)
    }

    /// `classes` against the rest with the class weights `weights`, in passes shared by the
    /// classes: split into groups ([`group_size`]), as many as classes train at once
    /// ([`Trainer::class_threads`]) unless a group's sums would pass [`GROUP_BYTES`], each group
    /// a run of [`online::fit_classes`] on one thread. Each class's model records the size of
    /// its group as `one_pass_classes`.
    pub(super) fn train_classes_in_one_pass<M: Monitor>(
        &self,
        data: &ExampleSet,
        algorithm: online::Algorithm,
        classes: &[f64],
        weights: &[ClassWeights],
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<OneVsRestTraining, Error> {
        // Across ranks the groups go one after the other, in the same order on every rank.
        let at_once = match reducer.size() {
            1 => self.class_threads(classes.len()).0,
            _ => 1,
        };
        let sums_per_feature = if algorithm.averages() { 2 } else { 1 };
        let class_bytes = data.n_features() * sums_per_feature * size_of::<f64>();
        let size = group_size(classes.len(), at_once, class_bytes, GROUP_BYTES);
        let groups: Vec<_> = (0..classes.len())
            .step_by(size)
            .map(|first| first..(first + size).min(classes.len()))
            .collect();
        let started = std::time::Instant::now();
        let announce = |monitor: &mut M, range: std::ops::Range<usize>| {
            for k in range {
                monitor.class_start(classes[k], k, classes.len());
            }
        };
        let trainings: Vec<Result<Vec<Training>, Error>> = if at_once == 1 {
            (groups.iter().cloned())
                .map(|range| {
                    announce(monitor, range.clone());
                    let (classes, weights) = (&classes[range.clone()], &weights[range]);
                    self.train_group(data, algorithm, classes, weights, reducer, monitor)
                })
                .collect()
        } else {
            let monitor = std::sync::Mutex::new(monitor);
            at_most_at_once(at_once, groups.len(), |g| {
                let range = groups[g].clone();
                if let Ok(mut monitor) = monitor.lock() {
                    announce(&mut monitor, range.clone());
                }
                let (classes, weights) = (&classes[range.clone()], &weights[range]);
                self.train_group(data, algorithm, classes, weights, &Local, &mut ())
            })?
        };
        let groups = trainings.into_iter().collect::<Result<Vec<_>, _>>()?;
        OneVsRestTraining::of(
            classes.to_vec(),
            groups.into_iter().flatten().collect(),
            started,
        )
    }

    /// One group of classes in one pass, across the ranks of `reducer`: a training per
    /// class, in the order of `classes`.
    fn train_group<M: Monitor>(
        &self,
        data: &ExampleSet,
        algorithm: online::Algorithm,
        classes: &[f64],
        weights: &[ClassWeights],
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<Vec<Training>, Error> {
        let group = (algorithm, classes, weights);
        let (fit, averaging) = match &self.sample_weights {
            Some(s) => {
                let rows =
                    SampleWeighted::new(data, s).map_err(|e| Error::Config(e.to_string()))?;
                self.fit_group(&rows, group, reducer, monitor)
            }
            None => self.fit_group(data, group, reducer, monitor),
        }?;
        let permutation = data.feature_permutation();
        (fit.snapshots.into_iter().zip(weights))
            .map(|(snapshot, &class_weights)| {
                let mut details = self.online_details(&fit.schedule, fit.steps, data.n_rows());
                self.distributed_details(&mut details, reducer.size(), averaging);
                details["averaged"] = json!(snapshot.averaged.is_some());
                details["one_pass_classes"] = json!(classes.len());
                let output = snapshot.averaged.unwrap_or(snapshot.last);
                let run = Run {
                    weights: output.weights,
                    bias: output.bias,
                    seconds: fit.seconds,
                    examples: fit.steps,
                    resume: None,
                    dual: None,
                };
                let weighted = WeightedLoss::new(self.training_loss(), class_weights)
                    .map_err(|e| Error::Config(e.to_string()))?;
                self.finish(run, details, weighted, permutation, reducer)
            })
            .collect()
    }

    /// The run of [`Trainer::train_group`] on `rows` (`data`'s, weighted or not), and how it
    /// averaged across the ranks: as [`Trainer::train_across`] runs one online model, each
    /// class's iterates averaged after every epoch (the default) or once at the end.
    fn fit_group<E: Examples>(
        &self,
        rows: &E,
        (algorithm, classes, weights): (online::Algorithm, &[f64], &[ClassWeights]),
        reducer: &dyn Reducer,
        monitor: &mut dyn online::Observer,
    ) -> Result<(online::ClassesFit, Option<Averaging>), Error> {
        let config = self.online_config(self.training_loss());
        let averaging = (reducer.size() > 1).then(|| self.averaging.unwrap_or_default());
        let fit = match averaging {
            None => online::fit_classes(rows, algorithm, &config, classes, weights, monitor)?,
            Some(Averaging::Epoch) => {
                let options = dist_online::Options {
                    local_steps: self.local_steps.unwrap_or_default(),
                    per_epoch: self.averages_per_epoch.unwrap_or(1),
                };
                dist::online::fit_classes(
                    rows, algorithm, &config, classes, weights, &options, reducer, monitor,
                )?
            }
            Some(Averaging::End) => {
                // Every rank a whole run on its share, averaged once at the end.
                let config = dist::online::end_config(&config, algorithm, rows, reducer);
                let mut fit =
                    online::fit_classes(rows, algorithm, &config, classes, weights, monitor)?;
                dist::online::average_at_end(reducer, rows.n_rows(), &mut fit.snapshots);
                fit
            }
        };
        Ok((fit, averaging))
    }
}

#[cfg(test)]
mod tests {
    use super::group_size;

    #[test]
    fn groups_split_the_classes_over_the_threads_within_the_memory_budget() {
        // Ten classes on 2 threads: two groups of 5; on 3: groups of 4 (4, 4 and 2).
        assert_eq!(group_size(10, 2, 100, 10_000), 5);
        assert_eq!(group_size(10, 3, 100, 10_000), 4);
        assert_eq!(group_size(10, 1, 100, 10_000), 10);
        // A budget of 3 classes' sums: groups of 3, on any number of threads.
        assert_eq!(group_size(10, 1, 100, 300), 3);
        assert_eq!(group_size(10, 2, 100, 399), 3);
        // A class larger than the budget is a group of its own.
        assert_eq!(group_size(10, 1, 1000, 300), 1);
        assert_eq!(group_size(10, 0, 0, 0), 1);
    }
}
