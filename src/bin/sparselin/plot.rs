//! `sparselin plot TRACE.csv... -o FIGURE.svg`: the slides' figure — the training objective
//! of several runs against seconds on shared log axes, e.g. subLBFGS, L-BFGS, subgradient
//! descent and ASGD on the same data and λ. Reads the CSV traces `sparselin train --trace`
//! writes; with `--optimum J*` it plots the relative suboptimality (J − J*)/J* instead.

use std::path::{Path, PathBuf};

use anyhow::Context;
use plotters::prelude::*;
use sparselin::output::write_file;

/// Arguments of `sparselin plot`.
#[derive(clap::Args)]
pub struct Args {
    /// Traces written by `sparselin train --trace`; each is one curve named after its file.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Where to write the SVG.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// The optimum J*: plot (J − J*)/J* instead of J.
    #[arg(long)]
    pub optimum: Option<f64>,
    /// Figure title.
    #[arg(long, default_value = "objective against time")]
    pub title: String,
}

/// One curve: its name and (seconds, value) points with positive, finite coordinates.
type Curve = (String, Vec<(f64, f64)>);

/// Read the traces, draw, write atomically.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(optimum) = args.optimum {
        anyhow::ensure!(
            optimum.is_finite() && optimum != 0.0,
            "--optimum must be a finite, non-zero J* (the suboptimality divides by it), got {optimum}"
        );
    }
    if let Some(trace) = args
        .traces
        .iter()
        .find(|trace| sparselin::output::would_replace(&args.output, trace))
    {
        anyhow::bail!(
            "-o {} would overwrite the trace {}: choose another output path",
            args.output.display(),
            trace.display()
        );
    }
    let plottable = |&(t, v): &(f64, f64)| t > 0.0 && v > 0.0 && t.is_finite() && v.is_finite();
    let mut curves = Vec::new();
    for path in &args.traces {
        let points = read_trace(path)?
            .into_iter()
            .map(|(t, j)| (t, args.optimum.map_or(j, |opt| (j - opt) / opt.abs())))
            .filter(plottable)
            .collect::<Vec<_>>();
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        curves.push((name, points));
    }
    if curves.iter().all(|(_, points)| points.is_empty()) {
        anyhow::bail!("no positive, finite (seconds, value) point to plot on log axes");
    }
    let y_name = if args.optimum.is_some() {
        "relative suboptimality (J − J*)/J*"
    } else {
        "objective J"
    };
    let mut svg = String::new();
    draw(&mut svg, &curves, &args.title, y_name)
        .map_err(|e| anyhow::anyhow!("{}: plotting: {e}", args.output.display()))?;
    write_file(&args.output, svg.as_bytes())
        .with_context(|| format!("writing {}", args.output.display()))?;
    outln!("plot written to {}", args.output.display())?;
    Ok(())
}

/// (seconds, train_objective) of every row of a trace CSV.
fn read_trace(path: &Path) -> anyhow::Result<Vec<(f64, f64)>> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .with_context(|| format!("{}:1: no '{name}' column", path.display()))
    };
    let (seconds, objective) = (column("seconds")?, column("train_objective")?);
    lines
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(k, line)| {
            let cells: Vec<&str> = line.split(',').collect();
            let cell = |c: usize| -> anyhow::Result<f64> {
                cells
                    .get(c)
                    .and_then(|v| v.parse::<f64>().ok())
                    .with_context(|| {
                        format!(
                            "{}:{}: column {} is not a number",
                            path.display(),
                            k + 2,
                            c + 1
                        )
                    })
            };
            Ok((cell(seconds)?, cell(objective)?))
        })
        .collect()
}

const COLORS: [RGBColor; 6] = [BLUE, RED, GREEN, MAGENTA, BLACK, CYAN];

/// Decades a log axis may span: wider ranges (a subnormal next to 1e308) are not a training
/// trace, and would have the axis labelled decade by decade for ever.
const MAX_DECADES: f64 = 60.0;

/// The range of a log axis over positive, finite values, with a margin on either side.
fn log_axis(
    values: impl Iterator<Item = f64>,
    what: &str,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = (lo * 0.8, hi * 1.25);
    if !(lo.is_normal() && hi.is_finite()) || (hi / lo).log10() > MAX_DECADES {
        return Err(format!("the {what} span {lo:e}..{hi:e}: too wide for a log axis").into());
    }
    Ok((lo, hi))
}

fn draw(
    svg: &mut String,
    curves: &[Curve],
    title: &str,
    y_name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let all = || curves.iter().flat_map(|(_, points)| points.iter());
    let (t_lo, t_hi) = log_axis(all().map(|p| p.0), "seconds")?;
    let (y_lo, y_hi) = log_axis(all().map(|p| p.1), "values")?;
    let root = SVGBackend::with_string(svg, (800, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d((t_lo..t_hi).log_scale(), (y_lo..y_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("seconds (wall clock)")
        .y_desc(y_name)
        .draw()?;
    for ((name, points), color) in curves.iter().zip(COLORS.iter().cycle()) {
        let color = *color;
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
