//! `sparselin show MODEL`: what a model file holds, and its weights of largest magnitude,
//! named when given the feature names (Vowpal Wabbit's `--readable_model` with its
//! `--invert_hash` names; the `features.tsv.gz` of `../shared/data`'s text sets).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::json;
use sparselin::data::stream::open_text;
use sparselin::kernels::dense;
use sparselin::model::Model;

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
    let model = Model::load(&args.model)?;
    let top = model.largest_weights(args.top);
    let names = match &args.names {
        Some(path) => read_names(path, &top.iter().map(|&(j, _)| j + 1).collect())?,
        None => HashMap::new(),
    };
    let nonzero = model.weights.iter().filter(|&&w| w != 0.0).count();
    let l1: f64 = model.weights.iter().map(|w| w.abs()).sum();
    let l2 = dense::norm2(&model.weights).sqrt();
    let info = &model.info;
    if args.json {
        let largest: Vec<_> = top
            .iter()
            .map(|&(j, w)| json!({ "feature": j + 1, "weight": w, "name": names.get(&(j + 1)) }))
            .collect();
        let summary = json!({
            "model": args.model,
            "loss": model.loss.to_string(),
            "algorithm": info.algorithm,
            "lambda": info.lambda,
            "regularize_bias": info.regularize_bias,
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
    outln!("regularize_bias  {}", info.regularize_bias)?;
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
    if !top.is_empty() {
        let name_column = if names.is_empty() { "" } else { "  name" };
        outln!("largest weights  (1-based feature id: weight{name_column})")?;
        for (j, w) in top {
            let name = names.get(&(j + 1)).map_or("", String::as_str);
            outln!("{:>10}: {:>14}  {name}", j + 1, decimal(w, 6))?;
        }
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
