//! The per-epoch training trace: a CSV file and an SVG plot of objective and test error
//! against training time.

use plotters::prelude::*;

/// The state after one epoch.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TraceRow {
    /// Epochs completed (fractional for a last partial epoch); for the batch solvers, passes
    /// over the data.
    pub epochs: f64,
    /// Steps taken; for the batch solvers, iterations.
    pub steps: u64,
    /// Training seconds so far (evaluation excluded).
    pub seconds: f64,
    /// F(w, b) on the training data.
    pub train_objective: f64,
    /// F(w, b) on the test data.
    pub test_objective: Option<f64>,
    /// Test error rate (classification) or RMSE (regression).
    pub test_error: Option<f64>,
    /// Batch solvers: the certificate ‖g‖²/(2λ) ≥ J − J* (`batch::Progress::gap`).
    pub gap: Option<f64>,
    /// Online learners under early stopping: the mean loss of the rows held out.
    pub held_out_loss: Option<f64>,
}

/// The trace as CSV (empty cells for absent values).
pub fn csv(rows: &[TraceRow]) -> String {
    let mut text = String::from(
        "epochs,steps,seconds,train_objective,test_objective,test_error,gap,held_out_loss\n",
    );
    let cell = |v: Option<f64>| v.map(|x| format!("{x:.12e}")).unwrap_or_default();
    for r in rows {
        text.push_str(&format!(
            "{},{},{:.6},{:.12e},{},{},{},{}\n",
            r.epochs,
            r.steps,
            r.seconds,
            r.train_objective,
            cell(r.test_objective),
            cell(r.test_error),
            cell(r.gap),
            cell(r.held_out_loss)
        ));
    }
    text
}

/// Objective (left) and test error (right, if any; else early stopping's held-out loss)
/// against seconds, as an SVG. Points that
/// are not finite (a diverging run's NaN objective) are left out.
pub fn plot(rows: &[TraceRow], error_name: &str) -> anyhow::Result<String> {
    let mut svg = String::new();
    draw(&mut svg, rows, error_name).map_err(|e| anyhow::anyhow!("plotting: {e}"))?;
    Ok(svg)
}

/// A named curve and its colour.
type Series<'a> = (&'a str, Vec<(f64, f64)>, RGBColor);

/// The right panel's curve: the test error, or without test data the held-out loss of early
/// stopping (empty without either).
fn right_panel<'a>(
    rows: &[TraceRow],
    error_name: &'a str,
    finite: impl Fn(&(f64, f64)) -> bool,
) -> Series<'a> {
    let curve = |value: fn(&TraceRow) -> Option<f64>| -> Vec<(f64, f64)> {
        (rows.iter())
            .filter_map(|r| value(r).map(|v| (r.seconds, v)))
            .filter(&finite)
            .collect()
    };
    let errors = curve(|r| r.test_error);
    if errors.is_empty() {
        ("held-out loss", curve(|r| r.held_out_loss), RED)
    } else {
        (error_name, errors, RED)
    }
}

fn draw(
    svg: &mut String,
    rows: &[TraceRow],
    error_name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, (1000, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 2));
    let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let t_max = rows
        .iter()
        .map(|r| r.seconds)
        .filter(|t| t.is_finite())
        .fold(1e-9, f64::max);
    let series: [Series<'_>; 2] = [
        (
            "objective (train)",
            rows.iter()
                .map(|r| (r.seconds, r.train_objective))
                .filter(finite)
                .collect(),
            BLUE,
        ),
        right_panel(rows, error_name, finite),
    ];
    for (panel, (name, points, color)) in panels.iter().zip(series) {
        if points.is_empty() {
            continue;
        }
        let lo = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-6).max(1e-12);
        let mut chart = ChartBuilder::on(panel)
            .caption(name, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max * 1.02, (lo - pad)..(hi + pad))?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc(name)
            .draw()?;
        chart.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?;
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    root.present()?;
    Ok(())
}
