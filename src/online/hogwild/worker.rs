//! One Hogwild worker: claims blocks of step numbers from the global counter and takes each
//! step exactly as the single-threaded learner would, on the shared sums.
//!
//! The arithmetic of a step is written to match `Sgd::step`, `Asgd::step` and `Casgd::step`
//! operation for operation: with one worker, consecutive t and plain storage, the run is the
//! single-threaded run bit for bit (tested in `tests/hogwild.rs`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::scalars::{A, B, Live, Z};
use super::sums::Sums;
use crate::data::Examples;
use crate::loss::WeightedLoss;
use crate::online::casgd::Centering;
use crate::online::lookahead::{prefetch_in_order, prefetch_upcoming};
use crate::online::{RunningHarmonic, Sampler, Schedule};

/// The most step numbers a worker claims at once: one shared read-modify-write per block
/// instead of per step, so the counter's cache line moves once per block, not per step.
pub(super) const BLOCK: u64 = 256;

/// How far out of order a step may run, as a fraction of t + t₀: blocks are kept small enough
/// that threads·block ≤ (t + t₀)/`REORDER_DIVISOR`.
///
/// Workers run their blocks side by side, so a step runs up to ~threads·block steps out of
/// order: it is labelled t (its divisor, its h'_{t−1}, its place in the average) but computed
/// on a model that has seen more or fewer steps. That is harmless once threads·block ≪ t + t₀,
/// and not before: with a fixed block of 256 at t₀ ≈ 2·10³ (spamassassin, λ = 10⁻³) the first
/// blocks of two workers ran 25% out of order, and the averaged bias of a 40-epoch hinge run
/// kept the mark, −0.455 against −0.486 on one thread (+0.3% to +1% objective). Growing the
/// block with t + t₀ removes it (blocks of 8 there: −0.487) and costs a few extra claims at
/// the start of a run only.
const REORDER_DIVISOR: f64 = 256.0;

/// The block a worker claims when the counter stands at `t` (between 1 and [`BLOCK`]).
pub(super) fn block_size(t: u64, t0: f64, threads: usize) -> u64 {
    let fitting = (t as f64 + t0) / (REORDER_DIVISOR * threads as f64);
    (fitting as u64).clamp(1, BLOCK)
}

/// Which update rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// Algorithm 1.
    Sgd,
    /// Algorithm 2.
    Asgd,
    /// Algorithm 3.
    Casgd,
}

/// What every worker reads and nobody writes (besides the counter).
pub(super) struct Context<'a, E> {
    pub data: &'a E,
    pub loss: WeightedLoss,
    pub schedule: Schedule,
    pub rule: Rule,
    /// Whether (λ/2)b² is in the objective.
    pub regularized: bool,
    /// CASGD's x̄ and q.
    pub centering: Option<&'a Centering>,
    /// Steps claimed so far (may overshoot `limit` by the last claims).
    pub counter: &'a AtomicU64,
    /// The last step of this epoch.
    pub limit: u64,
    /// Workers in the run (for [`block_size`]).
    pub threads: usize,
    /// The rows of this epoch's steps, `first_step + 1` onwards, for workers without a sampler
    /// of their own (permutation sampling, where every row comes once per epoch whichever
    /// worker takes its step); empty otherwise.
    pub order: &'a [u32],
    /// Steps taken before this epoch.
    pub first_step: u64,
    /// Steps taken before the run began (0 unless it resumed a stopped run).
    pub run_start: u64,
}

/// A worker's private state, kept across epochs.
pub(super) struct WorkerState {
    /// The worker's own stream of rows; `None` when it takes them from the epoch's shared
    /// order ([`Context::order`]).
    pub sampler: Option<Sampler>,
    /// Own totals of the live scalars [a, z̃, b] (per-thread sharing).
    pub own: [f64; 3],
    /// Own part of ā = Σ h'_{t−1} g_t.
    pub a_bar: f64,
    /// Own part of ζ̃ = Σ h'_{t−1} g_t (q − ‖x̄‖²).
    pub zeta: f64,
    /// Mean of the free bias b after this worker's steps t ≥ t_a, and their number.
    pub b_bar: f64,
    pub averaged: u64,
    /// h'_{t−1} for step `next_t`: advanced as a running sum over consecutive steps, restarted
    /// from the closed form after a jump.
    pub h: RunningHarmonic,
    pub next_t: u64,
    /// Loss ℓ(p_t, y) summed over the steps with t % 64 == 0, and their number.
    pub loss_sum: f64,
    pub loss_count: u64,
}

impl WorkerState {
    /// A fresh worker.
    pub fn new(sampler: Option<Sampler>, schedule: &Schedule) -> WorkerState {
        WorkerState {
            sampler,
            own: [0.0; 3],
            a_bar: 0.0,
            zeta: 0.0,
            b_bar: 0.0,
            averaged: 0,
            h: RunningHarmonic::new(schedule),
            next_t: 1,
            loss_sum: 0.0,
            loss_count: 0,
        }
    }
}

/// Runs one worker until the epoch's steps are all claimed, then merges what it holds privately
/// ([`Sums::merge`]).
pub(super) fn work<E: Examples, S: Sums>(
    ctx: &Context<'_, E>,
    mut sums: S,
    live: &mut Live<'_>,
    state: &mut WorkerState,
) {
    loop {
        // A stale read only makes the block a little smaller or larger than it should be.
        let block = block_size(ctx.counter.load(Relaxed), ctx.schedule.t0, ctx.threads);
        let claimed = ctx.counter.fetch_add(block, Relaxed);
        if claimed >= ctx.limit {
            sums.merge();
            return;
        }
        for t in claimed + 1..=(claimed + block).min(ctx.limit) {
            step(ctx, &mut sums, live, state, t);
        }
    }
}

/// Step t.
#[inline]
fn step<E: Examples, S: Sums>(
    ctx: &Context<'_, E>,
    sums: &mut S,
    live: &mut Live<'_>,
    state: &mut WorkerState,
    t: u64,
) {
    let schedule = &ctx.schedule;
    if t != state.next_t {
        state.h = RunningHarmonic::at_step(schedule, t - 1);
    }
    state.next_t = t + 1;
    let i = match &mut state.sampler {
        Some(sampler) => sampler.next(),
        None => ctx.order[(t - 1 - ctx.first_step) as usize] as usize,
    };
    let x = ctx.data.row(i);
    let y = ctx.loss.target(x.label);
    let divisor = schedule.divisor(t - 1);
    let vx = sums.dot(&x);
    // After the dot, where a prefetch that waits on a page walk overlaps the step's own
    // latency chain (see `prefetch_upcoming`).
    match &state.sampler {
        Some(sampler) => prefetch_upcoming(ctx.data, sampler, &x),
        None => prefetch_in_order(ctx.data, ctx.order, (t - ctx.first_step) as usize),
    }
    let free_bias = if ctx.regularized { 0.0 } else { live.get(B) };
    let p = match ctx.rule {
        Rule::Sgd | Rule::Asgd => {
            let bias = if !ctx.regularized {
                free_bias
            } else if divisor == 0.0 {
                0.0
            } else {
                -live.get(A) / divisor
            };
            (if divisor == 0.0 { 0.0 } else { -vx / divisor }) + bias
        }
        Rule::Casgd => {
            let q = centering(ctx).q[i];
            let (a, z) = (live.get(A), live.get(Z));
            let r = if ctx.regularized { 1.0 } else { 0.0 };
            (if divisor == 0.0 {
                0.0
            } else {
                -(vx - a * q + a * r - z) / divisor
            }) + free_bias
        }
    };
    let s = ctx.data.sample_weight(i);
    let g = s * ctx.loss.derivative(p, y);
    if t % 64 == 0 {
        state.loss_sum += s * ctx.loss.value(p, y);
        state.loss_count += 1;
    }
    if ctx.rule == Rule::Sgd {
        sums.add(g, 0.0, &x);
        if ctx.regularized {
            live.add(A, g);
        } else {
            live.add(B, -(schedule.bias_eta(t) * g));
        }
        return;
    }
    let h = state.h.value();
    sums.add(g, h * g, &x);
    if ctx.rule == Rule::Casgd {
        let centering = centering(ctx);
        let q_centered = centering.q[i] - centering.x_bar_norm2;
        live.add(Z, g * q_centered);
        state.zeta += h * g * q_centered;
    }
    if ctx.regularized || ctx.rule == Rule::Casgd {
        live.add(A, g);
        state.a_bar += h * g;
    }
    if !ctx.regularized {
        live.add(B, -(schedule.bias_eta(t) * g));
        if state.h.count(t) > 0 {
            state.averaged += 1;
            state.b_bar += (live.get(B) - state.b_bar) / state.averaged as f64;
        }
    }
    state.h.advance(t);
}

#[inline(always)]
fn centering<'a, E>(ctx: &Context<'a, E>) -> &'a Centering {
    ctx.centering.expect("CASGD runs with its centering")
}
