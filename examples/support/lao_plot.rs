//! A line chart written as SVG with plotters, shared by the attribute-efficient regression
//! example programs.

use std::path::Path;

use plotters::prelude::*;

/// One named curve of (x, y) points.
pub struct Curve {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Draw `curves` into `path` (written under a temporary name, then renamed into place).
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    log_axes: bool,
    curves: &[Curve],
) -> anyhow::Result<()> {
    let tmp = path.with_extension("svg.tmp");
    {
        let all = curves.iter().flat_map(|c| c.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        let root = SVGBackend::new(&tmp, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70);
        let colors = [BLUE, RED, BLACK, GREEN, MAGENTA, CYAN];
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(x_label)
                    .y_desc(y_label)
                    .draw()?;
                for (c, curve) in curves.iter().enumerate() {
                    let color = colors[c % colors.len()];
                    chart
                        .draw_series(LineSeries::new(
                            curve.points.iter().copied(),
                            color.stroke_width(2),
                        ))?
                        .label(curve.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                    chart.draw_series(
                        curve
                            .points
                            .iter()
                            .map(|&p| Circle::new(p, 3, color.filled())),
                    )?;
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .draw()?;
            }};
        }
        if log_axes {
            draw!(builder.build_cartesian_2d(
                (x0 * 0.8..x1 * 1.25).log_scale(),
                (y0 * 0.8..y1 * 1.25).log_scale()
            )?);
        } else {
            let pad = 0.05 * (y1 - y0).max(1e-12);
            draw!(builder.build_cartesian_2d(0.0..x1 * 1.02, (y0 - pad).max(0.0)..y1 + pad)?);
        }
        root.present()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}
