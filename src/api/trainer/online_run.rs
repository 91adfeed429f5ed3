//! The online learners' runs ([`crate::online`], across ranks [`crate::dist::online`]):
//! their settings from the trainer's, a resumed run's checks and start, and what the model
//! records of the run.

use serde_json::json;

use super::early_stopping::{EarlyStopping, Holdout, Watch};
use super::{DEFAULT_EPOCHS, Monitor, Run, Trainer, iterate_in_columns};
use crate::api::{Error, Examples, Learner, Loss, Model};
use crate::dist::online::{self as dist_online, Averaging};
use crate::dist::{self, Reducer};
use crate::loss::{ClassWeights, WeightedLoss};
use crate::model::ResumeState;
use crate::online::{self, Observer, Stop, hogwild};

impl Trainer {
    /// The resume state of `model` if this trainer can go on from it with `algorithm` and
    /// `loss` on `ranks` ranks over `features` features, else an error naming what differs.
    pub(super) fn check_resumable<'m>(
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

    /// The online run on `data`, or under early stopping on the rows it does not hold out,
    /// with the model of its best epoch.
    pub(super) fn train_online<M: Monitor, E: Examples>(
        &self,
        algorithm: online::Algorithm,
        weighted: WeightedLoss,
        data: &E,
        permutation: Option<&[u32]>,
        reducer: &dyn Reducer,
        monitor: &mut M,
    ) -> Result<(Run, serde_json::Value), Error> {
        let Some(settings) = self.early_stopping else {
            return self.train_online_rows(
                algorithm,
                weighted,
                data,
                permutation,
                reducer,
                monitor,
            );
        };
        if reducer.size() > 1 {
            return Err(Error::Config(
                "early stopping needs a single-process run: each rank would stop at an epoch \
                 of its own"
                    .into(),
            ));
        }
        let classification = weighted.loss().is_classification();
        let holdout = Holdout::deal(data, classification, settings.holdout, self.seed_used())?;
        let held_out = holdout.held_out(data);
        let held_out_rows = held_out.n_rows();
        let mut watch = Watch::new(monitor, held_out, weighted, settings);
        let train = holdout.train(data);
        let (mut run, mut details) = self.train_online_rows(
            algorithm,
            weighted,
            &train,
            permutation,
            reducer,
            &mut watch,
        )?;
        let epochs_run = watch.epochs_seen;
        let stopped = watch.stop_requested();
        let best = watch.best.take();
        let kept = best.as_ref().map(|best| (best.epochs, best.loss));
        if let Some(best) = best {
            // The run as if it had stopped after the best epoch (its details and resume state
            // too; `Run::examples` still counts every step taken).
            details["steps"] = json!(best.steps);
            details["epochs"] = json!(best.epochs);
            let (output, last) = output_and_last(best.snapshot);
            (run.weights, run.bias) = (output.weights, output.bias);
            if let Some(state) = &mut run.resume {
                state.steps -= run.examples - best.steps;
                state.last = last;
            }
        }
        details["early_stopping"] = json!({
            "patience": settings.patience,
            "holdout": settings.holdout,
            "tolerance": settings.tolerance,
            "held_out_rows": held_out_rows,
            "epochs_run": epochs_run,
            "stopped": stopped,
            "best_epoch": kept.map(|(epochs, _)| epochs),
            "best_held_out_loss": kept.map(|(_, loss)| loss),
        });
        Ok((run, details))
    }

    /// The online run on every row of `data`, reporting to `monitor`.
    fn train_online_rows<M: Monitor, E: Examples>(
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
            config = dist::online::end_config(&config, algorithm, data, reducer);
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
        let (output, last) = output_and_last(snapshot);
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
            dual: None,
        };
        Ok((run, details))
    }

    /// The online run these settings make, with the loss `loss` and no class weights.
    pub(super) fn online_config(&self, loss: Loss) -> online::Config {
        online::Config {
            loss,
            class_weights: ClassWeights::UNIT,
            lambda: self.lambda,
            l1: self.l1,
            t0: self.t0,
            average_start: self.average_start.unwrap_or(1),
            regularize_bias: self.regularize_bias,
            bias_rate: self.bias_rate.unwrap_or(1.0),
            eta: match self.learner {
                Learner::Online(algorithm) if algorithm.is_adagrad() => self.eta,
                _ => None,
            },
            sampling: self.sampling,
            seed: self.seed,
            stop: self.stop.unwrap_or(Stop::Epochs(match self.early_stopping {
                Some(_) => EarlyStopping::DEFAULT_MAX_EPOCHS,
                None => DEFAULT_EPOCHS,
            })),
        }
    }

    /// Sets in an online run's `details` how it ran across `ranks` ranks, averaging as
    /// `averaging` says (`None` on one).
    pub(super) fn distributed_details(
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
    pub(super) fn online_details(
        &self,
        schedule: &online::Schedule,
        steps: u64,
        rows: usize,
    ) -> serde_json::Value {
        // AdaGrad steps by its η; the others by the schedule.
        let eta = match self.learner {
            Learner::Online(algorithm) if algorithm.is_adagrad() => {
                Some(self.eta.unwrap_or(online::AdagradRule::DEFAULT_ETA))
            }
            _ => None,
        };
        let scheduled = |value: serde_json::Value| if eta.is_some() { json!(null) } else { value };
        json!({
            "ranks": 1,
            "averaging": null,
            "local_steps": null,
            "averages_per_epoch": null,
            "eta": eta,
            "t0": scheduled(json!(schedule.t0)),
            "bias_rate": scheduled(json!(schedule.bias_rate)),
            "average_start": scheduled(json!(schedule.average_start)),
            "sampling": self.sampling.to_string(),
            "seed": self.seed,
            "steps": steps,
            "threads": 1,
            "epochs": steps as f64 / rows as f64,
        })
    }
}

/// A run's output (the averaged iterate, if it averages, else the last) and, beside an
/// average, the last iterate its resume state keeps.
fn output_and_last(snapshot: online::Snapshot) -> (online::Iterate, Option<online::Iterate>) {
    match snapshot.averaged {
        Some(averaged) => (averaged, Some(snapshot.last)),
        None => (snapshot.last, None),
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
        Adagrad | NaiveAdagrad => Adagrad,
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
