//! Time per step of the O(k) learners and their O(n) baselines as the feature count n grows
//! (PERF.md, "Online learners"): a fixed random problem with k non-zeros per row and T steps,
//! n from 10³ to 10⁷, the step loop timed apart from the once-only O(n) part (set-up and the
//! final recovery of w). Prints a Markdown table; with an argument, also an SVG plot there;
//! with a second, n stops at 10^MAX_EXPONENT (benches/run.py --quick uses 4). The
//! O(k) learners warm up until every page of their weights has been touched (the first touch
//! of a lazily zeroed page faults), so the table shows the steady-state step.
//!
//!     cargo run --release --example online_step_cost [plot.svg [MAX_EXPONENT]]

use std::time::Instant;

use plotters::prelude::*;
use sparselin::data::Examples;
use sparselin::data::{CsrMatrix, ValueVec};
use sparselin::loss::Loss;
use sparselin::online::{
    Adagrad, AdagradRule, Algorithm, Asgd, Casgd, Learner, Naive, NaiveAdagrad, NaiveKind, Sampler,
    Sampling, Schedule, Sgd,
};

const K: usize = 64;
const M: usize = 1000;
const T: u64 = 300;

/// m rows of k random features in [0, n) with values ~ 1/√k, labels ±1.
fn problem(n: usize) -> CsrMatrix {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for _ in 0..M {
        let mut row: Vec<u32> = (0..K).map(|_| (next() % n as u64) as u32).collect();
        row.sort_unstable();
        row.dedup();
        values.extend(row.iter().map(|_| 0.125f32));
        indices.extend(row);
        offsets.push(indices.len() as u64);
        labels.push(if next() % 2 == 0 { 1.0 } else { -1.0 });
    }
    CsrMatrix::new(labels, offsets, indices, ValueVec::F32(values), n).unwrap()
}

/// A fresh learner of the given kind.
fn learner(data: &CsrMatrix, algorithm: Algorithm) -> Box<dyn Learner> {
    let schedule = Schedule {
        lambda: 1e-4,
        t0: 1e4,
        average_start: 1,
        bias_rate: 1.0,
    };
    let (n, loss) = (data.n_features(), Loss::Hinge);
    let naive = |kind| Naive::new(data, kind, loss, schedule, true).map(|l| Box::new(l) as _);
    let rule = AdagradRule {
        lambda: 1e-4,
        l1: 0.0,
        eta: AdagradRule::DEFAULT_ETA,
        regularize_bias: true,
    };
    let learner: Result<Box<dyn Learner>, _> = match algorithm {
        Algorithm::Sgd => Sgd::new(n, loss, schedule, true).map(|l| Box::new(l) as _),
        Algorithm::Asgd => Asgd::new(n, loss, schedule, true).map(|l| Box::new(l) as _),
        Algorithm::Casgd => Casgd::new(data, loss, schedule, true).map(|l| Box::new(l) as _),
        Algorithm::NaiveSgd => naive(NaiveKind::Sgd),
        Algorithm::NaiveAsgd => naive(NaiveKind::Asgd),
        Algorithm::NaiveCasgd => naive(NaiveKind::Casgd),
        Algorithm::Adagrad => Adagrad::new(n, loss, rule, None).map(|l| Box::new(l) as _),
        Algorithm::NaiveAdagrad => NaiveAdagrad::new(n, loss, rule, None).map(|l| Box::new(l) as _),
    };
    learner.expect("the learner's state fits in memory")
}

/// (median seconds per step over `repeats` runs of `steps` uniformly sampled steps after
/// `warm_up` others, median seconds of the once-only O(n) part: set-up plus the final recovery
/// of the weights).
fn timings(
    data: &CsrMatrix,
    algorithm: Algorithm,
    repeats: usize,
    warm_up: u64,
    steps: u64,
) -> (f64, f64) {
    let mut per_step = Vec::new();
    let mut once = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        let mut l = learner(data, algorithm);
        let setup = start.elapsed().as_secs_f64();
        let mut sampler = Sampler::new(Sampling::Uniform, data.n_rows(), 1);
        // The warm-up steps absorb the first touch of each page of the lazily zeroed weights,
        // which faults; the next `steps` are timed.
        let mut start = Instant::now();
        for t in 1..=warm_up + steps {
            if t == warm_up + 1 {
                start = Instant::now();
            }
            let i = sampler.next();
            let row = data.row(i);
            l.step(i, row, row.label, 1.0, t);
        }
        per_step.push(start.elapsed().as_secs_f64() / steps as f64);
        let start = Instant::now();
        std::hint::black_box(
            l.snapshot(warm_up + steps)
                .expect("the iterates fit in memory"),
        );
        once.push(setup + start.elapsed().as_secs_f64());
    }
    per_step.sort_by(f64::total_cmp);
    once.sort_by(f64::total_cmp);
    (per_step[repeats / 2], once[repeats / 2])
}

fn main() {
    let plot = std::env::args().nth(1);
    let max_exponent: u32 = match std::env::args().nth(2) {
        Some(e) => e.parse().expect("MAX_EXPONENT: an integer from 3 to 7"),
        None => 7,
    };
    let algorithms = Algorithm::ALL;
    println!(
        "k = {K}, T = {T} uniform steps timed after max(T, 20n/(256k)) warm-up steps (baselines past n = 10^5: T·10^5/n, after as many), m = {M} rows, hinge; median µs per step\n"
    );
    print!("| n |");
    for a in algorithms {
        print!(" {a} |");
    }
    println!(" naive-asgd / asgd | asgd once-only O(n) part (ms) |");
    println!("|---|{}---|---|", "---|".repeat(algorithms.len()));
    let position = |a: Algorithm| algorithms.iter().position(|&b| b == a).unwrap();
    let (asgd, naive_asgd) = (position(Algorithm::Asgd), position(Algorithm::NaiveAsgd));
    let mut curves: Vec<Vec<(f64, f64)>> = vec![Vec::new(); algorithms.len()];
    for exponent in 3..=max_exponent.clamp(3, 7) {
        let n = 10usize.pow(exponent);
        let data = problem(n);
        // An O(n) step is long enough to time alone: past n = 10⁵ the baselines take
        // T·10⁵/n steps (30 at 10⁶, 3 at 10⁷), which keeps each under a few seconds.
        let (repeats, naive_steps) = if n >= 1_000_000 {
            (1, (T * 100_000 / n as u64).max(3))
        } else {
            (3, T)
        };
        // Enough warm-up steps for the O(k) learners to have touched every 4 KiB page of their
        // weights (~20 touches per page of 256 pairs), so that the timed steps see the steady
        // state, not page faults.
        let warm_up = T.max(20 * n as u64 / (K as u64 * 256));
        let measured: Vec<(f64, f64)> = algorithms
            .iter()
            .map(|&a| {
                if a.name().starts_with("naive") {
                    timings(&data, a, repeats, naive_steps, naive_steps)
                } else {
                    timings(&data, a, 5, warm_up, T)
                }
            })
            .collect();
        let per_step: Vec<f64> = measured.iter().map(|m| m.0).collect();
        print!("| 10^{exponent} |");
        for (curve, &s) in curves.iter_mut().zip(&per_step) {
            print!(" {:.3} |", s * 1e6);
            curve.push((n as f64, s * 1e6));
        }
        println!(
            " {:.0}× | {:.2} |",
            per_step[naive_asgd] / per_step[asgd],
            measured[asgd].1 * 1e3
        );
    }
    if let Some(path) = plot {
        let root = SVGBackend::new(&path, (800, 500)).into_drawing_area();
        root.fill(&WHITE).unwrap();
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("time per step, k = {K}, T = {T}"),
                ("sans-serif", 20),
            )
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((1e3..1e7).log_scale(), (1e-2..1e5).log_scale())
            .unwrap();
        chart
            .configure_mesh()
            .x_desc("features n")
            .y_desc("µs per step")
            .draw()
            .unwrap();
        let colors = [
            BLUE,
            GREEN,
            MAGENTA,
            YELLOW,
            RED,
            BLACK,
            CYAN,
            RGBColor(128, 128, 0),
        ];
        for ((a, curve), color) in algorithms.iter().zip(curves).zip(colors) {
            chart
                .draw_series(LineSeries::new(curve, color.stroke_width(2)))
                .unwrap()
                .label(a.name())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .unwrap();
        root.present().unwrap();
    }
}
