//! One-vs-rest's online classes trained in one pass over the data ([`online::fit_classes`]),
//! as [`Trainer::train_one_vs_rest`] runs SGD, ASGD and CASGD unless told otherwise
//! ([`Trainer::classes_in_one_pass`]).

use super::*;

impl Trainer {
    /// The online algorithm that trains `classes` classes in one pass on a single process, if
    /// these settings let it: SGD or ASGD, one pass allowed, and one thread per class (with
    /// more threads than classes, each class runs Hogwild workers of its own instead).
    pub(super) fn one_pass_algorithm(&self, classes: usize) -> Option<online::Algorithm> {
        let Learner::Online(algorithm) = self.learner else {
            return None;
        };
        let (_, trainer) = self.class_trainer(classes);
        (self.classes_in_one_pass
            && online::trains_classes_in_one_pass(algorithm)
            && trainer.threads.unwrap_or(1) == 1)
            .then_some(algorithm)
    }

    /// `classes` against the rest with the class weights `weights`, in passes shared by the
    /// classes: split into as many groups as classes train at once
    /// ([`Trainer::class_trainer`]), each group a run of [`online::fit_classes`] on a thread
    /// of its own. Each class's model records the size of its group as `one_pass_classes`.
    pub(super) fn train_classes_in_one_pass<M: Monitor>(
        &self,
        data: &ExampleSet,
        algorithm: online::Algorithm,
        classes: &[f64],
        weights: &[ClassWeights],
        monitor: &mut M,
    ) -> Result<OneVsRestTraining, Error> {
        let (groups, _) = self.class_trainer(classes.len());
        let size = classes.len().div_ceil(groups);
        let group_of = |g: usize| g * size..((g + 1) * size).min(classes.len());
        let groups = classes.len().div_ceil(size);
        let started = std::time::Instant::now();
        let trainings: Vec<Result<Vec<Training>, Error>> = if groups == 1 {
            for (k, &class) in classes.iter().enumerate() {
                monitor.class_start(class, k, classes.len());
            }
            vec![self.train_group(data, algorithm, classes, weights, monitor)]
        } else {
            let monitor = std::sync::Mutex::new(monitor);
            thread_pool(groups)?.install(|| {
                (0..groups)
                    .into_par_iter()
                    .map(|g| {
                        let range = group_of(g);
                        if let Ok(mut monitor) = monitor.lock() {
                            for k in range.clone() {
                                monitor.class_start(classes[k], k, classes.len());
                            }
                        }
                        let (classes, weights) = (&classes[range.clone()], &weights[range]);
                        self.train_group(data, algorithm, classes, weights, &mut ())
                    })
                    .collect()
            })
        };
        let seconds = started.elapsed().as_secs_f64();
        let (mut models, mut examples) = (Vec::with_capacity(classes.len()), 0);
        for group in trainings {
            for training in group? {
                examples += training.examples;
                models.push(training.model);
            }
        }
        let classifier = OneVsRest::new(classes.to_vec(), models).map_err(Error::Config)?;
        Ok(OneVsRestTraining {
            classifier,
            seconds,
            examples,
        })
    }

    /// One group of classes in one pass: a training per class, in the order of `classes`.
    fn train_group<M: Monitor>(
        &self,
        data: &ExampleSet,
        algorithm: online::Algorithm,
        classes: &[f64],
        weights: &[ClassWeights],
        monitor: &mut M,
    ) -> Result<Vec<Training>, Error> {
        let weighted = self.sample_weights.as_ref().map(|weights| {
            SampleWeighted::new(data, weights).map_err(|e| Error::Config(e.to_string()))
        });
        let config = online::Config {
            class_weights: ClassWeights::UNIT,
            ..self.online_config(self.training_loss())
        };
        let fit = match weighted.transpose()? {
            Some(rows) => online::fit_classes(&rows, algorithm, &config, classes, weights, monitor),
            None => online::fit_classes(data, algorithm, &config, classes, weights, monitor),
        }?;
        let permutation = data.feature_permutation();
        (fit.snapshots.into_iter().zip(weights))
            .map(|(snapshot, &class_weights)| {
                let mut details = self.online_details(&fit.schedule, fit.steps, data.n_rows());
                details["averaged"] = json!(snapshot.averaged.is_some());
                details["one_pass_classes"] = json!(classes.len());
                let output = snapshot.averaged.unwrap_or(snapshot.last);
                let run = Run {
                    weights: output.weights,
                    bias: output.bias,
                    seconds: fit.seconds,
                    examples: fit.steps,
                    resume: None,
                };
                let weighted = WeightedLoss::new(self.training_loss(), class_weights)
                    .map_err(|e| Error::Config(e.to_string()))?;
                self.finish(run, details, weighted, permutation, &Local)
            })
            .collect()
    }
}
