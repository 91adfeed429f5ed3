//! `sparselin show MODEL`: what a model file holds, and its weights of largest magnitude,
//! named when given the feature names (Vowpal Wabbit's `--readable_model` with its
//! `--invert_hash` names; the `features.tsv.gz` of `../shared/data`'s text sets).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::json;
use sparselin::data::column_scales::MAX_ABS;
use sparselin::data::stream::open_text;
use sparselin::kernels::dense;
use sparselin::model::{Model, OneVsRest, SavedModel};

use crate::number::decimal;

/// A model's settings, size, norms and largest weights.
#[derive(clap::Args)]
pub struct Args {
    /// The model file.
    model: PathBuf,
    /// How many of the largest weights (by magnitude) to list.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Feature names: tab-separated text (gzip ok), a line per feature, its 1-based id in the
    /// first column and its name in the second; a first line whose id is not a number (a
    /// header) is skipped.
    #[arg(long, value_name = "TSV")]
    names: Option<PathBuf>,
    /// Print it as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let model = match SavedModel::load(&args.model)? {
        SavedModel::Single(model) => model,
        SavedModel::OneVsRest(classifier) => return show_classes(&args, &classifier),
    };
    let top = model.largest_weights(args.top);
    let names = match &args.names {
        Some(path) => read_names(path, &top.iter().map(|&(j, _)| j + 1).collect())?,
        None => HashMap::new(),
    };
    let Summary { nonzero, l1, l2 } = Summary::of(&model);
    let info = &model.info;
    if args.json {
        let largest = largest_json(&top, &names);
        let summary = json!({
            "model": args.model,
            "loss": model.loss.to_string(),
            "algorithm": info.algorithm,
            "lambda": info.lambda,
            "l1": info.l1,
            "regularize_bias": info.regularize_bias,
            "scale": scale_json(&model),
            "class_weights": info.class_weights,
            "details": info.details,
            "features": model.weights.len(),
            "nonzero_weights": nonzero,
            "l1_norm": l1,
            "l2_norm": l2,
            "bias": model.bias,
            "resume": model.resume.as_ref().map(|r| json!({
                "steps": r.steps,
                "rows": r.rows,
                "t0": r.t0,
                "average_start": r.average_start,
                "bias_rate": r.bias_rate,
                "last_iterate_stored": r.last.is_some(),
            })),
            "largest": largest,
        });
        outln!("{}", serde_json::to_string_pretty(&summary)?)?;
        return Ok(());
    }
    outln!("model            {}", args.model.display())?;
    outln!("loss             {}", model.loss)?;
    outln!("algorithm        {}", info.algorithm)?;
    outln!("lambda           {:e}", info.lambda)?;
    if info.l1 != 0.0 {
        outln!("l1               {:e}", info.l1)?;
    }
    outln!("regularize_bias  {}", info.regularize_bias)?;
    if let Some(line) = scale_line(&model) {
        outln!("{line}")?;
    }
    if !info.class_weights.is_unit() {
        outln!("class_weights    {}", info.class_weights)?;
    }
    for (key, value) in &info.details {
        outln!("{key:<16} {value}")?;
    }
    outln!(
        "features         {} ({nonzero} non-zero weights)",
        model.weights.len()
    )?;
    outln!(
        "norms            |w|_1 {}, |w|_2 {}",
        decimal(l1, 6),
        decimal(l2, 6)
    )?;
    outln!("bias             {}", decimal(model.bias, 6))?;
    if let Some(r) = &model.resume {
        outln!(
            "resumable        after step {} over {} rows (t0 {}, average start {}, bias rate {})",
            r.steps,
            r.rows,
            r.t0,
            r.average_start,
            r.bias_rate
        )?;
    }
    print_largest(&top, &names, "")
}

/// The exponents k of the scales 2^k a model's columns were divided by in training, smallest
/// and largest, if they were.
fn scale_range(model: &Model) -> Option<(i16, i16)> {
    let k = model.column_scales.as_ref()?.exponents();
    Some((
        k.iter().copied().min().unwrap_or(0),
        k.iter().copied().max().unwrap_or(0),
    ))
}

/// "scale  max-abs (…)" for a model trained on scaled columns.
fn scale_line(model: &Model) -> Option<String> {
    let (low, high) = scale_range(model)?;
    Some(format!(
        "scale            {MAX_ABS} (features divided by 2^k, k from {low} to {high}, in \
         training; the weights are of the unscaled features)"
    ))
}

/// The JSON of [`scale_line`]: `null` for a model of unscaled columns.
fn scale_json(model: &Model) -> serde_json::Value {
    match scale_range(model) {
        Some((low, high)) => json!({ "how": MAX_ABS, "min_exponent": low, "max_exponent": high }),
        None => serde_json::Value::Null,
    }
}

/// A one-vs-rest classifier: its classes and shared settings, then each class's model as
/// [`run`] shows one (its training details, size, norms, bias and largest weights).
fn show_classes(args: &Args, classifier: &OneVsRest) -> anyhow::Result<()> {
    let tops: Vec<_> = (classifier.models().iter())
        .map(|model| model.largest_weights(args.top))
        .collect();
    let names = match &args.names {
        Some(path) => {
            let wanted = tops.iter().flatten().map(|&(j, _)| j + 1).collect();
            read_names(path, &wanted)?
        }
        None => HashMap::new(),
    };
    let first = &classifier.models()[0];
    let info = &first.info;
    let summaries: Vec<_> = (classifier.classes().iter())
        .zip(classifier.models())
        .zip(&tops)
        .map(|((&class, model), top)| (class, Summary::of(model), model, top))
        .collect();
    if args.json {
        let classes: Vec<_> = summaries
            .iter()
            .map(|(class, summary, model, top)| {
                json!({
                    "class": class,
                    "class_weights": model.info.class_weights,
                    "details": model.info.details,
                    "nonzero_weights": summary.nonzero,
                    "l1_norm": summary.l1,
                    "l2_norm": summary.l2,
                    "bias": model.bias,
                    "largest": largest_json(top, &names),
                })
            })
            .collect();
        let summary = json!({
            "model": args.model,
            "one_vs_rest": true,
            "multinomial": classifier.is_multinomial(),
            "crammer_singer": classifier.is_crammer_singer(),
            "loss": first.loss.to_string(),
            "algorithm": info.algorithm,
            "lambda": info.lambda,
            "l1": info.l1,
            "regularize_bias": info.regularize_bias,
            "scale": scale_json(first),
            "features": classifier.n_features(),
            "classes": classes,
        });
        outln!("{}", serde_json::to_string_pretty(&summary)?)?;
        return Ok(());
    }
    outln!("model            {}", args.model.display())?;
    outln!(
        "{:<16} {} classes: {}",
        classifier.kind(),
        classifier.classes().len(),
        (classifier.classes().iter())
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    )?;
    outln!("loss             {}", first.loss)?;
    outln!("algorithm        {}", info.algorithm)?;
    outln!("lambda           {:e}", info.lambda)?;
    if info.l1 != 0.0 {
        outln!("l1               {:e}", info.l1)?;
    }
    outln!("regularize_bias  {}", info.regularize_bias)?;
    if let Some(line) = scale_line(first) {
        outln!("{line}")?;
    }
    outln!("features         {}", classifier.n_features())?;
    // The details every class shares (the settings) once; each class's own (its iterations,
    // its stop) under it.
    let shared = |key: &String, value: &serde_json::Value| {
        (classifier.models().iter()).all(|m| m.info.details.get(key) == Some(value))
    };
    for (key, value) in info.details.iter().filter(|(k, v)| shared(k, v)) {
        outln!("{key:<16} {value}")?;
    }
    for (class, summary, model, top) in summaries {
        outln!("class {class}")?;
        if !model.info.class_weights.is_unit() {
            outln!("  class_weights    {}", model.info.class_weights)?;
        }
        for (key, value) in (model.info.details.iter()).filter(|(k, v)| !shared(k, v)) {
            outln!("  {key:<16} {value}")?;
        }
        outln!("  non-zero         {}", summary.nonzero)?;
        outln!(
            "  norms            |w|_1 {}, |w|_2 {}",
            decimal(summary.l1, 6),
            decimal(summary.l2, 6)
        )?;
        outln!("  bias             {}", decimal(model.bias, 6))?;
        print_largest(top, &names, "  ")?;
    }
    Ok(())
}

/// A model's count of non-zero weights and its norms.
struct Summary {
    nonzero: usize,
    l1: f64,
    l2: f64,
}

impl Summary {
    fn of(model: &Model) -> Summary {
        Summary {
            nonzero: model.weights.iter().filter(|&&w| w != 0.0).count(),
            l1: model.weights.iter().map(|w| w.abs()).sum(),
            l2: dense::norm2(&model.weights).sqrt(),
        }
    }
}

/// The largest weights as JSON objects: 1-based feature id, weight, and name if known.
fn largest_json(top: &[(usize, f64)], names: &HashMap<usize, String>) -> Vec<serde_json::Value> {
    top.iter()
        .map(|&(j, w)| json!({ "feature": j + 1, "weight": w, "name": names.get(&(j + 1)) }))
        .collect()
}

/// The largest weights as lines of `id: weight  name`, under a heading, each `indent`ed.
fn print_largest(
    top: &[(usize, f64)],
    names: &HashMap<usize, String>,
    indent: &str,
) -> anyhow::Result<()> {
    if top.is_empty() {
        return Ok(());
    }
    let name_column = if names.is_empty() { "" } else { "  name" };
    outln!("{indent}largest weights  (1-based feature id: weight{name_column})")?;
    for &(j, w) in top {
        let name = names.get(&(j + 1)).map_or("", String::as_str);
        outln!("{indent}{:>10}: {:>14}  {name}", j + 1, decimal(w, 6))?;
    }
    Ok(())
}

/// The names of the 1-based feature ids `wanted` in the TSV at `path`; an error naming the
/// file and line for a line that is not `ID<TAB>NAME`.
fn read_names(path: &Path, wanted: &HashSet<usize>) -> anyhow::Result<HashMap<usize, String>> {
    let place = |line: usize| format!("{}:{line}", path.display());
    let reader = BufReader::new(open_text(path)?);
    let mut names = HashMap::new();
    for (number, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| anyhow::anyhow!("{}: {e}", place(number + 1)))?;
        let mut fields = line.split('\t');
        let id = fields.next().unwrap_or_default().trim();
        let Ok(id) = id.parse::<usize>() else {
            anyhow::ensure!(
                number == 0,
                "{}: '{id}' is not a feature id (a line is ID<TAB>NAME)",
                place(number + 1)
            );
            continue;
        };
        let Some(name) = fields.next() else {
            anyhow::bail!(
                "{}: feature {id} has no name (a line is ID<TAB>NAME)",
                place(number + 1)
            );
        };
        if wanted.contains(&id) {
            names.insert(id, name.to_string());
        }
    }
    Ok(names)
}
