//! `train --scale max-abs`: the column scales of a run, the data divided by them, and the
//! models moved between the scaled columns (which training sees) and the original ones
//! (which model files hold). See [`sparselin::data::column_scales`].

use std::path::Path;

use anyhow::Context;
use sparselin::api;
use sparselin::data::ExampleSet;
use sparselin::data::column_scales::ColumnScales;
use sparselin::dist::Reducer;
use sparselin::model::{Model, OneVsRest};

use crate::train::Args;

/// How features are scaled before training.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scaling {
    /// Each feature divided by the power of two at or above its largest |value|.
    MaxAbs,
}

/// The column scales of a run of `args` on `data` (this rank's share, `reducer` joining the
/// ranks), in original feature ids, if it scales: a resumed model's own (the run goes on
/// with its objective), else with --scale an initial model's own (the same problem, warm
/// started), else those of the data's largest magnitudes over every rank.
pub fn run_scales(
    args: &Args,
    data: &ExampleSet,
    reducer: &dyn Reducer,
) -> anyhow::Result<Option<ColumnScales>> {
    if let Some(model) = &args.resumed {
        return Ok(model.column_scales.clone());
    }
    if args.scale.is_none() {
        return Ok(None);
    }
    if let Some(scales) = args.initial.as_ref().and_then(|m| m.column_scales.clone()) {
        return Ok(Some(scales));
    }
    let scales = api::max_abs_scales(data, reducer)
        .with_context(|| format!("scaling the features of {}", args.data.display()))?;
    Ok(Some(scales))
}

/// `data` with its columns divided by the run's scales (`args.column_scales`), if any; `path`
/// names it in errors.
pub fn scaled(data: ExampleSet, args: &Args, path: &Path) -> anyhow::Result<ExampleSet> {
    let Some(scales) = &args.column_scales else {
        return Ok(data);
    };
    api::scaled(data, scales, path)
        .with_context(|| format!("scaling the features of {}", path.display()))
}

/// A model of `args`' initial model or resumed run, as the start of a run on the scaled
/// columns (itself when the run does not scale).
pub fn as_start(model: Model, args: &Args) -> Model {
    match &args.column_scales {
        Some(scales) => model.in_scaled_columns(scales),
        None => model,
    }
}

/// A model trained on the scaled columns as the model file holds it: of the original
/// columns, with the scales (itself when the run does not scale).
pub fn to_write(model: Model, args: &Args) -> Model {
    match &args.column_scales {
        Some(scales) => model.of_original_columns(scales.clone()),
        None => model,
    }
}

/// [`to_write`] of every class's model.
pub fn classifier_to_write(classifier: OneVsRest, args: &Args) -> OneVsRest {
    match &args.column_scales {
        Some(scales) => classifier.of_original_columns(scales),
        None => classifier,
    }
}

/// A classifier as written back on the scaled columns, where the run evaluates it.
pub fn classifier_as_trained(classifier: OneVsRest, args: &Args) -> OneVsRest {
    match &args.column_scales {
        Some(scales) => classifier.in_scaled_columns(scales),
        None => classifier,
    }
}
