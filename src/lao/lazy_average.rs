//! The lazy running sum Σ_t s_t·ω_t behind the averaged iterate w̄ = (1/m) Σ_t w_t when
//! w_t = s_t·ω_t changes in only k coordinates per step (MATH.md §8, "The average").
//!
//! S_t = Σ_{τ≤t} s_τ; S0_i is the S at which ω_i last changed. When a step changes ω_i,
//! A_i += ω_i·(S_t − S0_i) closes its interval and S0_i = S_t. S_t − S0_i loses digits once
//! S ≫ s (s only shrinks in AERR), so when S_t > 2²⁰·s_t the learner flushes every interval
//! (A += ω(S − S0), S = S0 = 0): O(d), rare.

use crate::memory::{self, AllocError};

/// S_t/s_t above which the learners flush (2²⁰).
pub const FLUSH_RATIO: f64 = 1_048_576.0;

/// A, S0, S and the step count of the lazy average.
#[derive(Clone, Debug)]
pub struct LazyAverage {
    closed: Vec<f64>,
    since: Vec<f64>,
    running: f64,
    steps: u64,
    flush_ratio: f64,
    flushes: u64,
}

impl LazyAverage {
    /// An empty sum over `d` coordinates, flushing when S > `flush_ratio`·s, or an error when
    /// the machine cannot hold its two arrays.
    pub fn new(d: usize, flush_ratio: f64) -> Result<Self, AllocError> {
        Ok(LazyAverage {
            closed: memory::filled("running average", d, 0.0)?,
            since: memory::filled("running average", d, 0.0)?,
            running: 0.0,
            steps: 0,
            flush_ratio,
            flushes: 0,
        })
    }

    /// True when S would lose digits against the next scale `s`.
    #[inline]
    pub fn needs_flush(&self, s: f64) -> bool {
        self.running > self.flush_ratio * s
    }

    /// Close every interval with the current ω and restart S at 0. O(d).
    pub fn flush(&mut self, omega: &[f64]) {
        for ((a, s0), &o) in self.closed.iter_mut().zip(&mut self.since).zip(omega) {
            *a += o * (self.running - *s0);
            *s0 = 0.0;
        }
        self.running = 0.0;
        self.flushes += 1;
    }

    /// Step t begins with w_t = s_t·ω: S_t = S_{t−1} + s_t.
    #[inline]
    pub fn begin(&mut self, s: f64) {
        self.running += s;
        self.steps += 1;
    }

    /// ω_i (value `omega_i`, in force since S0_i) is about to change after step t.
    #[inline]
    pub fn touch(&mut self, i: usize, omega_i: f64) {
        self.closed[i] += omega_i * (self.running - self.since[i]);
        self.since[i] = self.running;
    }

    /// w̄ = (A + ω(S − S0))/t over the steps so far (zeros before the first step), or an error
    /// when the machine cannot hold it. O(d).
    pub fn average(&self, omega: &[f64]) -> Result<Vec<f64>, AllocError> {
        let t = self.steps.max(1) as f64;
        let mut average = memory::reserved("average", omega.len())?;
        average.extend(
            self.closed
                .iter()
                .zip(&self.since)
                .zip(omega)
                .map(|((a, s0), o)| (a + o * (self.running - s0)) / t),
        );
        Ok(average)
    }

    /// Steps begun so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Flushes so far.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }
}
