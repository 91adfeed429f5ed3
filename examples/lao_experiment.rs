//! Hazan & Koren's experiment (seed `001_…`, §5, Figures 1 and 2) on real MNIST "3 vs 5":
//! test squared error against the number of attributes observed, averaged over 10 random
//! train/test splits, parameters tuned by 10-fold cross-validation.
//!
//! * Figure 1: AELR with k = 4 against offline lasso (‖w‖₁ ≤ B) and online projected gradient
//!   descent onto the ℓ₁ ball, the full-information learners seeing all d = 784 attributes of each
//!   example they use.
//! * Figure 2: AERR with k = 56 against offline ridge (‖w‖₂ ≤ B) and OGD onto the ℓ₂ ball.
//!
//! The limited-observation learners read k + 1 attributes per example (k for x̃, one for φ̃).
//! MNIST here has 1,895 digits (not the paper's ~12,000), so Figure 1's learner makes 6 passes
//! over its training set (fresh order each pass) to reach a budget like the paper's ~48,500
//! attributes; Figure 2's makes one. Labels ±1 as given, no bias term, as in the paper.
//!
//! Run: `cargo run --release --example lao_experiment` (writes docs/lao_fig1_lasso.svg,
//! docs/lao_fig2_ridge.svg and docs/lao_experiment.md).

#[path = "support/lao_plot.rs"]
mod lao_plot;

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use rayon::prelude::*;
use sparselin::data::libsvm::{ParseOptions, ValueType, read_file};
use sparselin::data::{CsrMatrix, Examples, ValueVec};
use sparselin::kernels::sparse;
use sparselin::lao::draws::Draws;
use sparselin::lao::full_info::{Ball, OfflineOptions, ProjectedOgd, least_squares};
use sparselin::lao::{Algo, LaoConfig, SmoothedInsensitive, default_eta, fast_learner, feed};

use lao_plot::{Curve, line_chart};

const DATA: &str = "/work/shared/data/mnist_3v5";
const SPLITS: usize = 10;
const FOLDS: usize = 10;
/// Test rows per split: the size of the distributed test file.
const TEST_ROWS: usize = 368;
/// Checkpoints along the limited-observation run, and prefixes for the baselines.
const CHECKPOINTS: usize = 20;
const PREFIXES: usize = 10;
/// Step-size multipliers of the default η tried by cross-validation.
const ETA_SCALES: [f64; 8] = [0.25, 1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0];
/// Step-size multipliers of OGD's default η (Zinkevich's, from max ‖x‖ and |y| ≤ 1).
const OGD_ETA_SCALES: [f64; 6] = [1.0 / 16.0, 0.25, 1.0, 4.0, 16.0, 64.0];

/// One of the two figures.
struct Figure {
    file: &'static str,
    title: &'static str,
    algo: Algo,
    k: usize,
    passes: usize,
    radii: [f64; 8],
    ball: fn(f64) -> Ball,
    offline_name: &'static str,
    ogd_name: &'static str,
}

const FIGURES: [Figure; 2] = [
    Figure {
        file: "lao_fig1_lasso",
        title: "MNIST 3 vs 5, lasso: AELR (k = 4) vs full information",
        algo: Algo::Aelr,
        k: 4,
        passes: 6,
        radii: [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
        ball: Ball::L1,
        offline_name: "offline lasso",
        ogd_name: "online projected GD (l1 ball)",
    },
    Figure {
        file: "lao_fig2_ridge",
        title: "MNIST 3 vs 5, ridge: AERR (k = 56) vs full information",
        algo: Algo::Aerr,
        k: 56,
        passes: 1,
        radii: [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
        ball: Ball::L2,
        offline_name: "offline ridge",
        ogd_name: "online projected GD (l2 ball)",
    },
];

/// The distributed train and test files pooled into one matrix (d from meta.json).
fn load() -> anyhow::Result<CsrMatrix> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/meta.json"))?)?;
    let d = meta["features"]
        .as_u64()
        .context("meta.json: no \"features\"")? as usize;
    let options = ParseOptions {
        value_type: ValueType::F64,
        n_features: Some(d),
        ..Default::default()
    };
    let parts = [
        read_file(Path::new(&format!("{DATA}/train.svm.gz")), options)?,
        read_file(Path::new(&format!("{DATA}/test.svm.gz")), options)?,
    ];
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for part in &parts {
        for r in 0..part.n_rows() {
            let row = part.row(r);
            labels.push(row.label);
            indices.extend_from_slice(&row.indices);
            values.extend((0..row.nnz()).map(|q| row.values.get(q)));
            offsets.push(indices.len() as u64);
        }
    }
    Ok(CsrMatrix::new(
        labels,
        offsets,
        indices,
        ValueVec::F64(values),
        d,
    )?)
}

/// Mean squared error (w·x − y)² over `rows`.
fn mse(data: &dyn Examples, rows: &[usize], w: &[f64]) -> f64 {
    let total: f64 = rows
        .iter()
        .map(|&r| {
            let row = data.row(r);
            (sparse::dot(w, row.indices, row.values) - row.label).powi(2)
        })
        .sum();
    total / rows.len() as f64
}

/// `passes` consecutive random permutations of `rows`.
fn stream(rows: &[usize], passes: usize, seed: u64) -> Vec<usize> {
    let mut draws = Draws::new(seed);
    (0..passes)
        .flat_map(|_| draws.permutation(rows.len()))
        .map(|i| rows[i])
        .collect::<Vec<_>>()
}

/// The limited-observation learner over `order`, evaluated on `eval` at `checkpoints` (numbers
/// of examples): (attributes observed so far, MSE of w̄).
fn online_curve(
    data: &dyn Examples,
    fig: &Figure,
    (radius, eta_scale): (f64, f64),
    order: &[usize],
    eval: &[usize],
    checkpoints: &[usize],
    seed: u64,
) -> Vec<(f64, f64)> {
    let d = data.n_features();
    let eta = eta_scale * default_eta(fig.algo, fig.k, d, order.len(), radius);
    let config = LaoConfig {
        algo: fig.algo,
        k: fig.k,
        radius,
        eta: Some(eta),
        svr: SmoothedInsensitive {
            smoothing: 1.0,
            insensitivity: 0.0,
        },
        seed,
    };
    let mut learner =
        fast_learner(&config, d, order.len()).expect("the learner's state fits in memory");
    let (mut done, mut observed) = (0, 0u64);
    checkpoints
        .iter()
        .map(|&c| {
            observed += feed(learner.as_mut(), data, &order[done..c]);
            done = c;
            let average = learner.average().expect("the average fits in memory");
            (observed as f64, mse(data, eval, &average))
        })
        .collect()
}

/// Projected OGD over `order`, evaluated at `checkpoints`: (d × examples, MSE of w̄).
fn ogd_curve(
    data: &dyn Examples,
    ball: Ball,
    eta_scale: f64,
    order: &[usize],
    eval: &[usize],
    checkpoints: &[usize],
) -> Vec<(f64, f64)> {
    let d = data.n_features();
    let dual = |r: usize| {
        let row = data.row(r);
        let it = (0..row.nnz()).map(|q| row.values.get(q));
        match ball {
            Ball::L2(_) => it.map(|v| v * v).sum::<f64>().sqrt(),
            Ball::L1(_) => it.fold(0.0f64, |m, v| m.max(v.abs())),
        }
    };
    let x_max = order.iter().map(|&r| dual(r)).fold(0.0, f64::max);
    let eta = eta_scale * ProjectedOgd::default_eta(ball, x_max, 1.0, order.len());
    let mut ogd = ProjectedOgd::new(d, ball, eta);
    let mut done = 0;
    checkpoints
        .iter()
        .map(|&c| {
            for &r in &order[done..c] {
                ogd.step(data.row(r));
            }
            done = c;
            ((c * d) as f64, mse(data, eval, &ogd.average()))
        })
        .collect()
}

/// The offline fit on `rows` (fewer iterations than the default: these are small problems
/// and a 1e-6 relative step is far below the differences between radii).
fn offline(data: &dyn Examples, rows: &[usize], ball: Ball) -> Vec<f64> {
    let options = OfflineOptions {
        max_iterations: 300,
        tolerance: 1e-6,
    };
    least_squares(data, rows, ball, options).weights
}

/// 10-fold cross-validation: the (parameter, MSE) with the least mean validation error, where
/// `score(train, validation, parameter)` trains on `train` and returns the validation MSE.
fn cross_validate<P: Copy>(
    rows: &[usize],
    grid: &[P],
    score: impl Fn(&[usize], &[usize], P) -> f64,
) -> P {
    let folds = FOLDS.min(rows.len());
    let mut best = (f64::INFINITY, grid[0]);
    for &p in grid {
        let mut total = 0.0;
        for f in 0..folds {
            let (lo, hi) = (f * rows.len() / folds, (f + 1) * rows.len() / folds);
            let validation = &rows[lo..hi];
            let train: Vec<usize> = rows[..lo].iter().chain(&rows[hi..]).copied().collect();
            total += score(&train, validation, p);
        }
        if total < best.0 {
            best = (total, p);
        }
    }
    best.1
}

/// One split: the three curves of a figure and the tuned parameters.
struct SplitResult {
    online: Vec<(f64, f64)>,
    offline: Vec<(f64, f64)>,
    ogd: Vec<(f64, f64)>,
    chosen: String,
}

fn run_split(data: &CsrMatrix, fig: &Figure, split: usize) -> SplitResult {
    let d = data.n_features();
    let perm = Draws::new(1000 + split as u64).permutation(data.n_rows());
    let (test, train) = perm.split_at(TEST_ROWS);
    let seed = 7 + split as u64;
    // Limited observation: tune (B, η scale) by CV, then one run over the training stream.
    let grid: Vec<(f64, f64)> = fig
        .radii
        .iter()
        .flat_map(|&b| ETA_SCALES.iter().map(move |&s| (b, s)))
        .collect();
    let clock = std::time::Instant::now();
    let (radius, scale) = cross_validate(train, &grid, |tr, va, (b, s)| {
        let order = stream(tr, fig.passes, seed);
        online_curve(data, fig, (b, s), &order, va, &[order.len()], seed)[0].1
    });
    let order = stream(train, fig.passes, seed);
    let checkpoints: Vec<usize> = (1..=CHECKPOINTS)
        .map(|c| c * order.len() / CHECKPOINTS)
        .collect();
    let online = online_curve(data, fig, (radius, scale), &order, test, &checkpoints, seed);
    // Full information within the same attribute budget: n_max examples of d attributes.
    let budget = online.last().map_or(0.0, |p| p.0);
    let n_max = ((budget / d as f64) as usize).clamp(1, train.len());
    let prefix = &train[..n_max];
    let prefixes: Vec<usize> = {
        let mut p: Vec<usize> = (1..=PREFIXES)
            .map(|c| (c * n_max / PREFIXES).max(1))
            .collect();
        p.dedup();
        p
    };
    let online_time = clock.elapsed().as_secs_f64();
    let offline_radius = cross_validate(prefix, &fig.radii, |tr, va, b| {
        mse(data, va, &offline(data, tr, (fig.ball)(b)))
    });
    let offline_curve = prefixes
        .iter()
        .map(|&n| {
            let w = offline(data, &train[..n], (fig.ball)(offline_radius));
            ((n * d) as f64, mse(data, test, &w))
        })
        .collect();
    let tuned = clock.elapsed().as_secs_f64();
    let ogd_grid: Vec<(f64, f64)> = fig
        .radii
        .iter()
        .flat_map(|&b| OGD_ETA_SCALES.iter().map(move |&s| (b, s)))
        .collect();
    let (ogd_radius, ogd_scale) = cross_validate(prefix, &ogd_grid, |tr, va, (b, s)| {
        ogd_curve(data, (fig.ball)(b), s, tr, va, &[tr.len()])[0].1
    });
    let ogd = ogd_curve(
        data,
        (fig.ball)(ogd_radius),
        ogd_scale,
        prefix,
        test,
        &prefixes,
    );
    SplitResult {
        online,
        offline: offline_curve,
        ogd,
        chosen: format!(
            "{}: B = {radius}, η×{scale}; offline B = {offline_radius}; OGD B = {ogd_radius}, \
             η×{ogd_scale} (seconds: {online_time:.1} limited observation, {:.1} offline, {:.1} OGD)",
            fig.algo,
            tuned - online_time,
            clock.elapsed().as_secs_f64() - tuned
        ),
    }
}

/// Pointwise mean of the splits' curves (same checkpoints in every split).
fn mean_curve(curves: &[&Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let n = curves.len() as f64;
    (0..curves[0].len())
        .map(|i| {
            let x = curves.iter().map(|c| c[i].0).sum::<f64>() / n;
            let y = curves.iter().map(|c| c[i].1).sum::<f64>() / n;
            (x, y)
        })
        .collect()
}

/// The baseline's error at `x` attributes, interpolated linearly (None beyond its range).
fn at(curve: &[(f64, f64)], x: f64) -> Option<f64> {
    curve
        .windows(2)
        .find(|w| w[0].0 <= x && x <= w[1].0)
        .map(|w| {
            let t = (x - w[0].0) / (w[1].0 - w[0].0);
            w[0].1 + t * (w[1].1 - w[0].1)
        })
}

fn main() -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let data = load()?;
    let mut report = String::from(
        "# Attribute-efficient regression on MNIST 3 vs 5 (generated by `cargo run --release --example lao_experiment`)\n",
    );
    for fig in &FIGURES {
        let results: Vec<SplitResult> = (0..SPLITS)
            .into_par_iter()
            .map(|s| run_split(&data, fig, s))
            .collect();
        let online = mean_curve(&results.iter().map(|r| &r.online).collect::<Vec<_>>());
        let offline = mean_curve(&results.iter().map(|r| &r.offline).collect::<Vec<_>>());
        let ogd = mean_curve(&results.iter().map(|r| &r.ogd).collect::<Vec<_>>());
        let curves = [
            Curve {
                name: format!(
                    "{} (k = {}, k + 1 attributes per example)",
                    fig.algo.to_string().to_uppercase(),
                    fig.k
                ),
                points: online.clone(),
            },
            Curve {
                name: fig.offline_name.to_string(),
                points: offline.clone(),
            },
            Curve {
                name: fig.ogd_name.to_string(),
                points: ogd.clone(),
            },
        ];
        let svg = format!("docs/{}.svg", fig.file);
        line_chart(
            Path::new(&svg),
            fig.title,
            "attributes observed (training)",
            "test squared error",
            false,
            &curves,
        )?;
        let _ = writeln!(
            report,
            "\n## {}\n\n{SPLITS} random splits ({TEST_ROWS} test rows), {FOLDS}-fold CV; plot `{svg}`.\n\n\
             | attributes | {} | {} (interp.) | {} (interp.) |\n|---:|---:|---:|---:|",
            fig.title, fig.algo, fig.offline_name, fig.ogd_name
        );
        for &(x, y) in online.iter().step_by(2).chain(online.last()) {
            let show = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.4}"));
            let _ = writeln!(
                report,
                "| {x:.0} | {y:.4} | {} | {} |",
                show(at(&offline, x)),
                show(at(&ogd, x))
            );
        }
        let _ = writeln!(
            report,
            "\nBaseline points (attributes, error): offline {:?}",
            offline
                .iter()
                .map(|&(x, y)| (x as u64, (y * 1e4).round() / 1e4))
                .collect::<Vec<_>>()
        );
        let _ = writeln!(report, "\nTuned parameters per split:\n");
        for r in &results {
            let _ = writeln!(report, "* {}", r.chosen);
        }
    }
    let _ = writeln!(
        report,
        "\nTotal time: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let tmp = "docs/lao_experiment.md.tmp";
    std::fs::write(tmp, &report)?;
    std::fs::rename(tmp, "docs/lao_experiment.md")?;
    print!("{report}");
    Ok(())
}
