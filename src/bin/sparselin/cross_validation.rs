//! `sparselin train DATA --cv K [--lambda-grid L1,L2,... | --l1-grid L1,L2,...]`: k-fold
//! cross-validation of the training settings, as liblinear's `-v K` (and, over a grid of λ,
//! its `-C`; over one of λ₁, scikit-learn's `LogisticRegressionCV(penalty='l1')`). Trains K
//! models per grid value and writes none; prints the held-out metrics as each fold or value
//! finishes.

use anyhow::Context;
use serde_json::json;

use sparselin::api::{
    ClassesCrossValidation, ClassesFold, ExampleSet, Examples, Fold, Learner, PathStarts, Strength,
    Trainer,
};
use sparselin::data::stream::TextFormat;
use sparselin::dist::Local;
use sparselin::metrics::Evaluation;

use crate::input::{Input, read_examples};
use crate::number::decimal;
use crate::progress::{self, Unit};
use crate::scaling;
use crate::train::{
    Args, epoch_count, eval_tail, positive, scale_name, title_notes, trainer, trains_one_vs_rest,
    weighted_rows, with_row_weights,
};

/// The values of one strength to cross-validate (none: the settings as given).
struct Grid {
    strength: Strength,
    values: Vec<f64>,
    starts: PathStarts,
}

impl Grid {
    /// The strength's symbol in the printed lines.
    fn symbol(&self) -> &'static str {
        match self.strength {
            Strength::Lambda => "λ",
            Strength::L1 => "λ₁",
            Strength::Cost => "C",
        }
    }

    /// The strength's key in the JSON report.
    fn key(&self) -> &'static str {
        match self.strength {
            Strength::Lambda => "lambda",
            Strength::L1 => "l1",
            Strength::Cost => "cost",
        }
    }
}

/// Cross-validate the settings of `args` over `folds` folds: as given, printing every fold,
/// or at each value of `--lambda-grid` or `--l1-grid`, printing each value's mean and the
/// best.
pub fn run(args: Args, format: TextFormat, folds: usize) -> anyhow::Result<()> {
    let Input {
        examples: data,
        weights,
    } = read_examples(&args.data, args.features, &format)?;
    let mut args = with_row_weights(args, weights)?;
    // Scales of all the rows, as svm-scale's before liblinear's -v: every fold's model
    // trains and is evaluated on the columns so scaled.
    args.column_scales = scaling::run_scales(&args, &data, &Local)?;
    let data = scaling::scaled(data, &args, &args.data)?;
    let args = &args;
    let trainer = trainer(args)?;
    // Checks the sample weights against the rows, naming the weight file.
    weighted_rows(args, &trainer, &data)?;
    let (strength, flag, values) = if !args.l1_grid.is_empty() {
        (Strength::L1, "--l1-grid", &args.l1_grid)
    } else if !args.cost_grid.is_empty() {
        (Strength::Cost, "--cost-grid", &args.cost_grid)
    } else {
        (Strength::Lambda, "--lambda-grid", &args.lambda_grid)
    };
    let grid = Grid {
        strength,
        values: (values.iter())
            .map(
                |&value| match unregularized_adagrad(args, strength, value) {
                    true => Ok(value),
                    false => positive(flag, value),
                },
            )
            .collect::<anyhow::Result<Vec<f64>>>()?,
        starts: match args.cold_grid {
            true => PathStarts::Cold,
            false => PathStarts::Warm,
        },
    };
    let searched = |s: Strength| !grid.values.is_empty() && s == grid.strength;
    let loss = trainer.training_loss();
    let learner = args.algo.learner();
    let one_vs_rest = trains_one_vs_rest(args, &data);
    let header = format!(
        "{learner} ({loss}{}{}{}{}{}): {folds}-fold cross-validation of {} rows{}",
        match learner {
            // The attribute-efficient learners have no λ.
            Learner::AttributeEfficient(_) => String::new(),
            _ if searched(Strength::Lambda) || searched(Strength::Cost) => String::new(),
            // λ = 1/(C·m) of each fold's m: the header names C (title_notes).
            _ if args.cost.is_some() => String::new(),
            _ => format!(", λ = {}", grid_value(args.lambda)),
        },
        match args.l1 {
            0.0 => String::new(),
            l1 => format!(", λ₁ = {l1:e}"),
        },
        args.class_weight
            .as_ref()
            .map(|w| format!(", class weights {w}"))
            .unwrap_or_default(),
        args.weights_origin()
            .map(|path| format!(", sample weights {}", path.display()))
            .unwrap_or_default(),
        title_notes(args),
        data.n_rows(),
        match (one_vs_rest, loss.is_classification()) {
            (true, _) if args.multinomial => ", multinomial, folds stratified by class",
            (true, _) if args.crammer_singer => ", crammer-singer, folds stratified by class",
            (true, _) => ", one-vs-rest, folds stratified by class",
            (false, true) => ", folds stratified by class",
            (false, false) => "",
        }
    );
    // Lines go out as folds finish; the header only once the first has, so that settings
    // the library refuses print nothing.
    let mut lines = Lines::new(!args.json, header);
    let mut report = json!({
        "algorithm": learner.to_string(),
        "loss": loss.to_string(),
        "rows": data.n_rows(),
        "seed": args.seed,
        "class_weights": args.class_weight.as_ref().map(|w| w.to_string()),
        "sample_weights": args.weights_origin(),
        "scale": scale_name(args),
    });
    if one_vs_rest {
        report["one_vs_rest"] = json!(true);
        classes_report(args, &trainer, &grid, &data, folds, &mut lines, &mut report)?;
    } else {
        binary_report(args, &trainer, &grid, &data, folds, &mut lines, &mut report)?;
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

/// Cross-validate one model per fold (at `--lambda` or over the grid), into `lines` and
/// `report`.
fn binary_report(
    args: &Args,
    trainer: &Trainer,
    grid: &Grid,
    data: &ExampleSet,
    folds: usize,
    lines: &mut Lines,
    report: &mut serde_json::Value,
) -> anyhow::Result<()> {
    let validate = |trainer: &Trainer, each: &mut dyn FnMut(usize, &Fold)| {
        trainer
            .cross_validate_each(data, folds, each)
            .with_context(|| format!("cross-validating on {}", args.data.display()))
    };
    if grid.values.is_empty() {
        let validation = validate(trainer, &mut |i, fold| {
            lines.print(format!(
                "fold {}: {}, held out {}: {}",
                i + 1,
                trained_on(fold),
                fold.held_out.rows,
                summary(&fold.held_out)
            ));
        })?;
        let mean = validation.mean();
        lines.print(format!("mean over the folds: {}", summary(&mean)));
        lines.written()?;
        settings(args, None, report);
        report["folds"] = json!(validation.folds);
        report["mean"] = json!(mean);
    } else {
        let (symbol, key) = (grid.symbol(), grid.key());
        let (strength, values) = (grid.strength, &grid.values);
        let bar = fits_bar(args, folds, values.len());
        let progress = |done, _| bar.set_position(done as u64);
        let points =
            (trainer.cross_validate_path(data, folds, strength, values, grid.starts, progress))
                .with_context(|| format!("cross-validating on {}", args.data.display()))?;
        bar.finish_and_clear();
        let means: Vec<Evaluation> = points.iter().map(|p| p.validation.mean()).collect();
        for (point, mean) in points.iter().zip(&means) {
            lines.print(format!(
                "{symbol} = {}: {}",
                grid_value(point.value),
                summary(mean)
            ));
        }
        let scores = (points.iter().zip(&means)).map(|(p, mean)| (p.value, mean.search_score()));
        let best = grid.strength.best(scores).context("an empty grid")?;
        lines.print(format!("best: {symbol} = {}", grid_value(best)));
        lines.written()?;
        settings(args, Some(grid), report);
        report[format!("best_{key}")] = json!(best);
        report["grid"] = (points.iter().zip(&means))
            .map(|(p, mean)| json!({key: p.value, "folds": p.validation.folds, "mean": mean}))
            .collect();
    }
    Ok(())
}

/// The strengths cross-validated as given (all but the one a grid searches), and for a grid of
/// a batch solver whether it was warm-started (never the Crammer–Singer SVM's), into the report.
fn settings(args: &Args, searched: Option<&Grid>, report: &mut serde_json::Value) {
    if let Some(grid) = searched
        && matches!(args.algo.learner(), Learner::Batch(_))
    {
        report["warm_starts"] = json!(grid.starts == PathStarts::Warm && !args.crammer_singer);
    }
    let searched = searched.map(|grid| grid.strength);
    match (args.cost, searched) {
        (_, Some(Strength::Lambda | Strength::Cost)) => {}
        (Some(cost), _) => report["cost"] = json!(cost),
        (None, _) => report["lambda"] = json!(args.lambda),
    }
    if searched != Some(Strength::L1) {
        report["l1"] = json!(args.l1);
    }
}

/// Cross-validate a one-vs-rest classifier per fold (at `--lambda` or over the grid), into
/// `lines` and `report`; the grid's best λ is the one of lowest mean held-out error.
fn classes_report(
    args: &Args,
    trainer: &Trainer,
    grid: &Grid,
    data: &ExampleSet,
    folds: usize,
    lines: &mut Lines,
    report: &mut serde_json::Value,
) -> anyhow::Result<()> {
    let context = || format!("cross-validating on {}", args.data.display());
    let mean = |v: &ClassesCrossValidation| json!({"error_rate": v.mean_error_rate(), "macro_f1": v.mean_macro_f1()});
    if grid.values.is_empty() {
        let each = |i: usize, fold: &ClassesFold| {
            lines.print(format!(
                "fold {}: trained on {} rows, held out {}: {}",
                i + 1,
                fold.train_rows,
                fold.held_out.rows,
                crate::train_one_vs_rest::headline(&fold.held_out)
            ));
        };
        let validation =
            (trainer.cross_validate_one_vs_rest(data, folds, each)).with_context(context)?;
        lines.print(format!("mean over the folds: {}", mean_line(&validation)));
        lines.written()?;
        settings(args, None, report);
        report["folds"] = json!(validation.folds);
        report["mean"] = mean(&validation);
        return Ok(());
    }
    let (symbol, key) = (grid.symbol(), grid.key());
    let (strength, values) = (grid.strength, &grid.values);
    let bar = fits_bar(args, folds, values.len());
    let progress = |done, _| bar.set_position(done as u64);
    let path = trainer.cross_validate_one_vs_rest_path(
        data,
        folds,
        strength,
        values,
        grid.starts,
        progress,
    );
    let points = path.with_context(context)?;
    bar.finish_and_clear();
    for point in &points {
        let line = mean_line(&point.validation);
        lines.print(format!("{symbol} = {}: {line}", grid_value(point.value)));
    }
    let scores = (points.iter()).map(|p| (p.value, p.validation.mean_error_rate()));
    let best = grid.strength.best(scores).context("an empty grid")?;
    lines.print(format!("best: {symbol} = {}", grid_value(best)));
    lines.written()?;
    settings(args, Some(grid), report);
    report[format!("best_{key}")] = json!(best);
    report["grid"] = (points.iter())
        .map(|p| json!({key: p.value, "folds": p.validation.folds, "mean": mean(&p.validation)}))
        .collect();
    Ok(())
}

/// The progress bar of a grid's `folds` × `values` fits, on standard error (hidden with
/// `--quiet` or off a terminal).
fn fits_bar(args: &Args, folds: usize, values: usize) -> indicatif::ProgressBar {
    progress::bar(Some((folds * values) as u64), Unit::Fits, args.quiet)
}

/// "error 0.01234, macro F1 0.98765" averaged over the folds.
fn mean_line(v: &ClassesCrossValidation) -> String {
    let mut line = format!("error {:.5}", v.mean_error_rate());
    if let Some(f1) = v.mean_macro_f1() {
        line.push_str(&format!(", macro F1 {f1:.5}"));
    }
    line
}

/// Text lines printed as they come (when `enabled`), after a header; the first failure to
/// write is kept and ends the printing.
struct Lines {
    enabled: bool,
    header: Option<String>,
    result: anyhow::Result<()>,
}

impl Lines {
    fn new(enabled: bool, header: String) -> Lines {
        Lines {
            enabled,
            header: Some(header),
            result: Ok(()),
        }
    }

    /// The first failure to write, if any (taken: asked again, `Ok`).
    fn written(&mut self) -> anyhow::Result<()> {
        std::mem::replace(&mut self.result, Ok(()))
    }

    fn print(&mut self, line: String) {
        if !self.enabled || self.result.is_err() {
            return;
        }
        if let Some(header) = self.header.take() {
            self.result = outln!("{header}");
        }
        if self.result.is_ok() {
            self.result = outln!("{line}");
        }
    }
}

/// "objective 0.52, error 0.123, auc 0.91" (the metrics the loss has).
fn summary(e: &Evaluation) -> String {
    let mut s = format!("objective {}{}", decimal(e.objective, 10), eval_tail(e));
    if let Some(auc) = e.auc {
        s.push_str(&format!(", auc {auc:.5}"));
    }
    if let Some(log_loss) = e.log_loss {
        s.push_str(&format!(", log loss {}", decimal(log_loss, 6)));
    }
    s
}

/// The rows a fold's model was trained on and, under early stopping, the share of them held
/// out to stop on and the epoch kept.
fn trained_on(fold: &Fold) -> String {
    let Some(report) = &fold.early_stopping else {
        return format!("trained on {} rows", fold.train_rows);
    };
    let held = report["held_out_rows"].as_u64().unwrap_or_default();
    let kept = match report["best_epoch"].as_f64() {
        Some(epoch) => format!(
            "kept epoch {} of {}",
            epoch_count(epoch),
            report["epochs_run"]
        ),
        None => format!("no epoch of {} scored", report["epochs_run"]),
    };
    format!(
        "trained on {} rows of {} ({held} held out to stop early: {kept})",
        fold.train_rows as u64 - held,
        fold.train_rows
    )
}

/// Whether `value` is a λ of 0 in a grid for adagrad, which takes it (plain AdaGrad), where
/// every other value of a grid must be positive.
fn unregularized_adagrad(args: &Args, strength: Strength, value: f64) -> bool {
    let adagrad = matches!(args.algo.learner(), Learner::Online(a) if a.is_adagrad());
    strength == Strength::Lambda && value == 0.0 && adagrad
}

/// A grid value as printed: 1e-4, and 0 as 0 (not 0e0).
fn grid_value(value: f64) -> String {
    match value {
        0.0 => "0".into(),
        value => format!("{value:e}"),
    }
}
