//! Time per example of the attribute-efficient learners as the dimension d grows from 10³ to
//! 10⁷ at fixed k: the O(k log d) learners (scale factor, sum trees, lazy average) against the
//! literal O(d) ones. Synthetic sparse rows are generated here; only the steps are timed (not
//! the O(d) construction or the final average). Median of 3 runs per cell.
//!
//! Run: `cargo run --release --example lao_scaling` (writes docs/lao_scaling.svg and
//! docs/lao_scaling.md).

#[path = "support/lao_plot.rs"]
mod lao_plot;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use sparselin::data::{CsrMatrix, Examples, ValueVec};
use sparselin::lao::draws::Draws;
use sparselin::lao::{
    Aelr, Aerr, Algo, AttributeLearner, Attributes, LiteralAelr, LiteralAerr, Phi, default_eta,
};
use sparselin::memory::AllocError;

use lao_plot::{Curve, line_chart};

const K: usize = 8;
const NNZ: usize = 20;
const POOL: usize = 1000;
const FAST_STEPS: usize = 20_000;
const RADIUS: f64 = 1.0;

/// POOL rows of NNZ random attributes in 0..d, labels from a planted sparse model.
fn rows(d: usize, seed: u64) -> CsrMatrix {
    let mut draws = Draws::new(seed);
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for _ in 0..POOL {
        let mut row: Vec<u32> = (0..NNZ).map(|_| draws.index(d) as u32).collect();
        row.sort_unstable();
        row.dedup();
        let mut y = 0.0;
        for &i in &row {
            let v = draws.uniform();
            if i % 7 == 0 {
                y += v;
            }
            values.push(v);
        }
        indices.extend_from_slice(&row);
        offsets.push(indices.len() as u64);
        labels.push(if y > 0.5 { 1.0 } else { -1.0 });
    }
    CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), d).expect("valid rows")
}

/// Seconds per example of `steps` steps of a fresh learner (construction not timed).
fn per_example(
    data: &CsrMatrix,
    steps: usize,
    make: &dyn Fn() -> Result<Box<dyn AttributeLearner>, AllocError>,
) -> f64 {
    let d = data.n_features();
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let mut learner = make().expect("the learner's state fits in memory");
            let start = Instant::now();
            for t in 0..steps {
                learner.step(&mut Attributes::new(data.row(t % POOL), d));
            }
            start.elapsed().as_secs_f64() / steps as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[1]
}

fn main() -> anyhow::Result<()> {
    let dims = [1_000usize, 10_000, 100_000, 1_000_000, 10_000_000];
    let names = [
        "AERR O(k log d)",
        "AELR O(k log d)",
        "AERR literal O(d)",
        "AELR literal O(d)",
    ];
    let mut table: Vec<[f64; 4]> = vec![];
    for &d in &dims {
        let data = rows(d, d as u64);
        let literal_steps = (20_000_000 / d).clamp(4, 5000);
        let eta_r = default_eta(Algo::Aerr, K, d, FAST_STEPS, RADIUS);
        let eta_l = default_eta(Algo::Aelr, K, d, FAST_STEPS, RADIUS);
        let cells = [
            per_example(&data, FAST_STEPS, &|| {
                Ok(Box::new(Aerr::new(d, K, RADIUS, eta_r, Phi::Squared, 1)?))
            }),
            per_example(&data, FAST_STEPS, &|| {
                Ok(Box::new(Aelr::new(d, K, RADIUS, eta_l, 1)?))
            }),
            per_example(&data, literal_steps, &|| {
                Ok(Box::new(LiteralAerr::new(
                    d,
                    K,
                    RADIUS,
                    eta_r,
                    Phi::Squared,
                    1,
                )?))
            }),
            per_example(&data, literal_steps, &|| {
                Ok(Box::new(LiteralAelr::new(d, K, RADIUS, eta_l, 1)?))
            }),
        ];
        eprintln!("d = {d}: {cells:?} s/example ({literal_steps} literal steps)");
        table.push(cells);
    }
    let mut report = format!(
        "# Time per example vs d (k = {K}, {NNZ} non-zeros per row; `cargo run --release --example lao_scaling`)\n\n\
         | d | {} | {} | {} | {} | literal/fast (AERR) | literal/fast (AELR) |\n|---:|---:|---:|---:|---:|---:|---:|\n",
        names[0], names[1], names[2], names[3]
    );
    for (d, c) in dims.iter().zip(&table) {
        let _ = writeln!(
            report,
            "| {d} | {:.2} µs | {:.2} µs | {:.1} µs | {:.1} µs | {:.0}× | {:.0}× |",
            c[0] * 1e6,
            c[1] * 1e6,
            c[2] * 1e6,
            c[3] * 1e6,
            c[2] / c[0],
            c[3] / c[1]
        );
    }
    let curves: Vec<Curve> = names
        .iter()
        .enumerate()
        .map(|(j, name)| Curve {
            name: name.to_string(),
            points: dims
                .iter()
                .zip(&table)
                .map(|(&d, c)| (d as f64, c[j] * 1e6))
                .collect(),
        })
        .collect();
    line_chart(
        Path::new("docs/lao_scaling.svg"),
        &format!("Time per example vs dimension d (k = {K})"),
        "d (features)",
        "microseconds per example",
        true,
        &curves,
    )?;
    let tmp = "docs/lao_scaling.md.tmp";
    std::fs::write(tmp, &report)?;
    std::fs::rename(tmp, "docs/lao_scaling.md")?;
    print!("{report}");
    Ok(())
}
