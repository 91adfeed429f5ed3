//! `sparselin train` on data of more than two classes: one model per class against the rest
//! ([`Trainer::train_one_vs_rest`]), saved as one classifier file, and its summary.

use std::path::Path;

use anyhow::Context;
use serde_json::json;
use sparselin::api::{self, Monitor, OneVsRest, Trainer};
use sparselin::data::{ExampleSet, Examples};
use sparselin::metrics::{ClassMetrics, MulticlassEvaluation};
use sparselin::model::Precision;
use sparselin::online::Observer;

use crate::number::decimal;
use crate::scaling;
use crate::train::{
    Args, WeightType, early_stopping_line, eval_tail, scale_name, title_notes, warn_if_unconverged,
};

/// Train, save and report a one-vs-rest classifier on `data` (read, and its outputs checked,
/// by [`crate::train::run`]).
pub fn run(
    args: &Args,
    trainer: &Trainer,
    data: &ExampleSet,
    test: Option<&ExampleSet>,
) -> anyhow::Result<()> {
    refuse_binary_flags(args)?;
    let mut monitor = ClassProgress { quiet: args.quiet };
    let cpu = cpu_time::ProcessTime::try_now().ok();
    let training = trainer
        .train_one_vs_rest(data, &mut monitor)
        .with_context(|| format!("training on {}", args.data.display()))?;
    let cpu_seconds = cpu
        .and_then(|start| start.try_elapsed().ok())
        .map(|d| d.as_secs_f64());
    let classifier = write_classifier(args, training.classifier)?;
    let weights = trainer.sample_weights_given();
    let train = api::evaluate_one_vs_rest(&classifier, data, weights)?;
    let test = match test {
        Some(test) => Some(api::evaluate_one_vs_rest(&classifier, test, None)?),
        None => None,
    };
    let model = &classifier.models()[0];
    let per_second = training.examples as f64 / training.seconds.max(1e-12);
    if args.json {
        let summary = json!({
            "algorithm": model.info.algorithm,
            "loss": model.loss.to_string(),
            "lambda": model.info.lambda,
            "l1": model.info.l1,
            "regularize_bias": model.info.regularize_bias,
            "classes": classifier.classes(),
            "class_weights": (classifier.models().iter())
                .map(|m| m.info.class_weights)
                .collect::<Vec<_>>(),
            "sample_weights": args.weights_origin(),
            "cost": args.cost,
            "scale": scale_name(args),
            "details": classifier.models().iter().map(|m| &m.info.details).collect::<Vec<_>>(),
            "rows": data.n_rows(),
            "features": data.n_features(),
            "nnz": data.nnz(),
            "seconds": training.seconds,
            "cpu_seconds": cpu_seconds,
            "examples_per_second": per_second,
            "train": train,
            "test": test,
            "model": args.output,
        });
        outln!("{}", serde_json::to_string_pretty(&summary)?)?;
        return Ok(());
    }
    outln!(
        "{}: {} examples in {:.3} s ({:.0}/s)",
        title(args, &classifier),
        training.examples,
        training.seconds,
        per_second
    )?;
    // A multinomial or Crammer–Singer classifier's models minimized one objective together,
    // not one each.
    let joint = classifier.is_joint();
    if joint {
        let objective = model.info.details["objective"].as_f64().unwrap_or(f64::NAN);
        outln!("train objective {}", decimal(objective, 10))?;
    }
    for (class, model) in train.classes.iter().zip(classifier.models()) {
        let e = &class.one_vs_rest;
        match joint {
            true => outln!(
                "class {}: {} rows{}",
                class.class,
                class.rows,
                f1_tail(class)
            )?,
            false => outln!(
                "class {}: {} rows, train objective {}{}",
                class.class,
                class.rows,
                decimal(e.objective, 10),
                eval_tail(e)
            )?,
        }
        if let Some(line) = early_stopping_line(model) {
            outln!("  {line}")?;
        }
    }
    outln!("train {}", headline(&train))?;
    if let Some(test) = &test {
        outln!("test {}", headline(test))?;
    }
    if let Some(path) = &args.output {
        outln!("model written to {}", path.display())?;
    }
    Ok(())
}

/// Refuse, naming it, a flag of binary training that one-vs-rest does not take.
pub fn refuse_binary_flags(args: &Args) -> anyhow::Result<()> {
    let refused = [
        (args.readable.is_some(), "--readable"),
        (args.trace.is_some(), "--trace"),
        (args.plot.is_some(), "--plot"),
        (args.initial_model.is_some(), "--initial-model"),
        (args.save_resume, "--save-resume"),
        (args.resumed.is_some(), "--resume"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        anyhow::bail!(
            "{}: the labels take more than two values, so this trains one model per class \
             (one-vs-rest), which {flag} does not apply to",
            args.data.display()
        );
    }
    Ok(())
}

/// Write `classifier` to --output, if given, at --weights precision, warn of each class whose
/// solver stopped early, and return the classifier as written (its weights rounded in f32).
pub fn write_classifier(args: &Args, mut classifier: OneVsRest) -> anyhow::Result<OneVsRest> {
    if let Some(rules) = args.vw_features_detail() {
        classifier.insert_detail(crate::input::VW_FEATURES, rules);
    }
    let precision = match args.weights {
        WeightType::F64 => Precision::F64,
        WeightType::F32 => Precision::F32,
    };
    let name = args.output.as_deref().unwrap_or(Path::new("(model)"));
    let classifier = scaling::classifier_to_write(classifier, args);
    let bytes = classifier.encode(precision, name)?;
    // The summary describes the classifier as written (in f32, its weights rounded), on
    // the columns the run saw.
    let classifier = match precision {
        Precision::F64 => classifier,
        Precision::F32 => OneVsRest::from_bytes(&bytes, name)?,
    };
    let classifier = scaling::classifier_as_trained(classifier, args);
    if let Some(path) = &args.output {
        sparselin::output::write_file(path, &bytes)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let scaled = args.column_scales.is_some();
    match classifier.is_joint() {
        // One solve fitted every class: its models record the same stop.
        true => warn_if_unconverged(
            &classifier.models()[0],
            &format!("{} ", classifier.kind()),
            scaled,
        ),
        false => {
            for (class, model) in classifier.classes().iter().zip(classifier.models()) {
                warn_if_unconverged(model, &format!("class {class}: "), scaled);
            }
        }
    }
    Ok(classifier)
}

/// ", precision 0.9, recall 0.8, F1 0.85" of a class (each that it has).
fn f1_tail(class: &ClassMetrics) -> String {
    [
        ("precision", class.precision),
        ("recall", class.recall),
        ("F1", class.f1),
    ]
    .iter()
    .filter_map(|(name, value)| value.map(|v| format!(", {name} {v:.5}")))
    .collect()
}

/// "asgd (hinge, λ = 1e-4, class weights …), one-vs-rest over K classes": what trained
/// (multinomial or crammer-singer instead of one-vs-rest for a classifier fitted jointly).
pub fn title(args: &Args, classifier: &OneVsRest) -> String {
    let model = &classifier.models()[0];
    format!(
        "{} ({}, {}{}{}{}), {} over {} classes",
        model.info.algorithm,
        model.loss,
        model.info.penalty(),
        title_notes(args),
        match &args.class_weight {
            Some(weighting) => format!(", class weights {weighting}"),
            None => String::new(),
        },
        match args.weights_origin() {
            Some(path) => format!(", sample weights {}", path.display()),
            None => String::new(),
        },
        classifier.kind(),
        classifier.classes().len(),
    )
}

/// "error 0.01234, macro F1 0.9812" (and the rows of labels no class has, if any).
pub fn headline(e: &MulticlassEvaluation) -> String {
    let mut line = format!("error {:.5}", e.error_rate);
    if let Some(f1) = e.macro_f1 {
        line.push_str(&format!(", macro F1 {f1:.5}"));
    }
    if e.unknown_labels > 0 {
        line.push_str(&format!(
            ", {} rows of labels no class has",
            e.unknown_labels
        ));
    }
    line
}

/// Names each class on standard error as its training starts.
struct ClassProgress {
    quiet: bool,
}

impl Observer for ClassProgress {}

impl Monitor for ClassProgress {
    fn class_start(&mut self, class: f64, index: usize, classes: usize) {
        announce_class(self.quiet, class, index, classes);
    }
}

/// "class 3 against the rest (2 of 5)" on standard error, unless `quiet`.
pub fn announce_class(quiet: bool, class: f64, index: usize, classes: usize) {
    if !quiet {
        errln!(
            "class {class} against the rest ({} of {classes})",
            index + 1
        );
    }
}
