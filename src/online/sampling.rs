//! The order in which the online learners visit examples: π_1, π_2, … (MATH.md §2).
//!
//! Every order is a pure function of (kind, m, seed), so the O(k) learners and the O(Tn)
//! baselines given the same seed take the same steps, and reruns are bit-for-bit identical.
//! The sampler always knows the next [`LOOKAHEAD`] indices in advance ([`Sampler::peek_at`]),
//! which lets a learner fetch upcoming rows from memory while it works on the current one.

use std::fmt;
use std::str::FromStr;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// How the next example is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sampling {
    /// Uniformly from the m examples with replacement (the seed's).
    #[default]
    Uniform,
    /// A fresh uniform permutation of the m examples every epoch (each example once per epoch).
    Permutation,
    /// 0, 1, …, m − 1, then again: the file's order (fastest: rows stream from memory).
    FileOrder,
}

impl fmt::Display for Sampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sampling::Uniform => "uniform",
            Sampling::Permutation => "permutation",
            Sampling::FileOrder => "file-order",
        })
    }
}

impl FromStr for Sampling {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "uniform" => Ok(Sampling::Uniform),
            "permutation" => Ok(Sampling::Permutation),
            "file-order" => Ok(Sampling::FileOrder),
            _ => Err(format!(
                "unknown sampling '{s}' (uniform, permutation, file-order)"
            )),
        }
    }
}

/// A deterministic stream of example indices in [0, m).
pub struct Sampler {
    kind: Sampling,
    m: usize,
    rng: Xoshiro256PlusPlus,
    /// The current epoch's order ([`Sampling::Permutation`] only).
    order: Vec<u32>,
    /// Position of the next index to draw within the epoch.
    position: usize,
    /// The next [`LOOKAHEAD`] indices, drawn in advance: a ring starting at `head`.
    upcoming: [usize; LOOKAHEAD],
    head: usize,
}

/// How many upcoming indices the sampler knows: enough for a row to travel from DRAM to the
/// cache while the steps before it run, after its entry in a map of rows has (16 since
/// early stopping's holdout map; the rows themselves need 8: PERF.md `### Early stopping`).
pub const LOOKAHEAD: usize = 16;

/// A uniform integer in [0, m) from 64 random bits by multiply-shift (Lemire). The bias,
/// at most m/2⁶⁴ per value, is far below anything a learner could notice.
#[inline]
pub(crate) fn bounded(rng: &mut Xoshiro256PlusPlus, m: usize) -> usize {
    ((u128::from(rng.next_u64()) * m as u128) >> 64) as usize
}

/// Put `items` in a uniformly random order (Fisher–Yates).
pub(crate) fn shuffle<T>(rng: &mut Xoshiro256PlusPlus, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = bounded(rng, i + 1);
        items.swap(i, j);
    }
}

impl Sampler {
    /// A sampler over `m ≥ 1` examples. Panics if `m == 0` or (for permutations) m ≥ 2³².
    pub fn new(kind: Sampling, m: usize, seed: u64) -> Sampler {
        Sampler::start(kind, m, Xoshiro256PlusPlus::seed_from_u64(seed), 0)
    }

    /// The sampler of worker `thread` of `threads` in a parallel run (MATH.md §6).
    ///
    /// Worker j draws from the seed's stream advanced by j xoshiro jumps (2¹²⁸ draws apart, so
    /// the streams never overlap); in file order it starts at row ⌊j·m/threads⌋. Worker 0 is
    /// exactly [`Sampler::new`], so a one-thread run takes the single-threaded learner's steps.
    pub fn for_thread(
        kind: Sampling,
        m: usize,
        seed: u64,
        thread: usize,
        threads: usize,
    ) -> Sampler {
        assert!(thread < threads, "worker {thread} of {threads}");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for _ in 0..thread {
            rng.jump();
        }
        let position = (thread as u128 * m as u128 / threads as u128) as usize;
        let position = if kind == Sampling::FileOrder {
            position
        } else {
            0
        };
        Sampler::start(kind, m, rng, position)
    }

    fn start(kind: Sampling, m: usize, rng: Xoshiro256PlusPlus, position: usize) -> Sampler {
        assert!(m > 0, "cannot sample from zero examples");
        let mut sampler = Sampler {
            kind,
            m,
            rng,
            order: Vec::new(),
            position,
            upcoming: [0; LOOKAHEAD],
            head: 0,
        };
        if kind == Sampling::Permutation {
            let m32 = u32::try_from(m).expect("permutation sampling needs m < 2^32");
            sampler.order = (0..m32).collect();
        }
        for k in 0..LOOKAHEAD {
            sampler.upcoming[k] = sampler.draw();
        }
        sampler
    }

    /// The visiting order this sampler follows.
    pub fn kind(&self) -> Sampling {
        self.kind
    }

    /// The index the (`ahead` + 1)-th call to [`Sampler::next`] from now will return
    /// (`peek_at(0)`: the next one, without consuming it). Panics unless `ahead < LOOKAHEAD`.
    #[inline]
    pub fn peek_at(&self, ahead: usize) -> usize {
        assert!(
            ahead < LOOKAHEAD,
            "the sampler sees {LOOKAHEAD} indices ahead"
        );
        self.upcoming[(self.head + ahead) % LOOKAHEAD]
    }

    /// The next example index.
    #[inline]
    #[allow(clippy::should_implement_trait)] // an endless stream: Iterator's Option is noise
    pub fn next(&mut self) -> usize {
        let current = self.upcoming[self.head];
        self.upcoming[self.head] = self.draw();
        self.head = (self.head + 1) % LOOKAHEAD;
        current
    }

    /// Pass over the next `draws` indices: afterwards [`Sampler::next`] gives what it would
    /// have given after as many calls. A resumed run ([`crate::online::Start`]) continues
    /// its stream this way, so that stopping and resuming visits the rows an uninterrupted
    /// run visits. O(1) in file order; otherwise one random draw per index passed over
    /// (a permutation's epochs shuffle the one before, so none can be left out).
    pub fn skip(&mut self, draws: u64) {
        if draws < LOOKAHEAD as u64 {
            for _ in 0..draws {
                self.next();
            }
            return;
        }
        // Past the indices drawn ahead, then the rest, and the ring drawn anew.
        let rest = draws - LOOKAHEAD as u64;
        match self.kind {
            Sampling::FileOrder => {
                let m = self.m as u64;
                self.position = ((self.position as u64 + rest % m) % m) as usize;
            }
            _ => {
                for _ in 0..rest {
                    self.draw();
                }
            }
        }
        for k in 0..LOOKAHEAD {
            self.upcoming[k] = self.draw();
        }
        self.head = 0;
    }

    #[inline(always)]
    fn draw(&mut self) -> usize {
        match self.kind {
            Sampling::Uniform => bounded(&mut self.rng, self.m),
            Sampling::FileOrder => {
                let i = self.position;
                self.position = if i + 1 == self.m { 0 } else { i + 1 };
                i
            }
            Sampling::Permutation => {
                if self.position == 0 {
                    // One fresh permutation per epoch.
                    shuffle(&mut self.rng, &mut self.order);
                }
                let i = self.order[self.position] as usize;
                self.position = if self.position + 1 == self.m {
                    0
                } else {
                    self.position + 1
                };
                i
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(kind: Sampling, m: usize, seed: u64, n: usize) -> Vec<usize> {
        let mut s = Sampler::new(kind, m, seed);
        (0..n).map(|_| s.next()).collect()
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different_sequence() {
        for kind in [Sampling::Uniform, Sampling::Permutation] {
            assert_eq!(take(kind, 1000, 7, 5000), take(kind, 1000, 7, 5000));
            assert_ne!(take(kind, 1000, 7, 5000), take(kind, 1000, 8, 5000));
        }
    }

    #[test]
    fn permutation_visits_each_example_once_per_epoch() {
        let seq = take(Sampling::Permutation, 97, 3, 97 * 3);
        for epoch in seq.chunks(97) {
            let mut sorted = epoch.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..97).collect::<Vec<_>>());
        }
        assert_ne!(seq[..97], seq[97..194], "each epoch reshuffles");
    }

    #[test]
    fn file_order_cycles_and_peek_announces_next() {
        let mut s = Sampler::new(Sampling::FileOrder, 3, 0);
        let mut seen = Vec::new();
        for _ in 0..7 {
            let p = s.peek_at(0);
            let n = s.next();
            assert_eq!(p, n);
            seen.push(n);
        }
        assert_eq!(seen, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn peek_at_announces_the_coming_indices_for_every_kind() {
        for kind in [
            Sampling::Uniform,
            Sampling::Permutation,
            Sampling::FileOrder,
        ] {
            let expected = take(kind, 13, 5, 60);
            let mut s = Sampler::new(kind, 13, 5);
            for t in 0..60 - LOOKAHEAD {
                for ahead in 0..LOOKAHEAD {
                    assert_eq!(s.peek_at(ahead), expected[t + ahead], "{kind} t={t}");
                }
                assert_eq!(s.next(), expected[t]);
            }
        }
    }

    #[test]
    fn skipping_draws_continues_the_stream() {
        for kind in [
            Sampling::Uniform,
            Sampling::Permutation,
            Sampling::FileOrder,
        ] {
            let whole = take(kind, 13, 5, 1100);
            for (first, skipped) in [(0, 0), (0, 3), (2, 8), (5, 37), (3, 1000)] {
                let mut s = Sampler::new(kind, 13, 5);
                let mut got: Vec<usize> = (0..first).map(|_| s.next()).collect();
                s.skip(skipped);
                got.extend((0..50).map(|_| s.next()));
                let at = first + skipped as usize;
                let want = [&whole[..first], &whole[at..at + 50]].concat();
                assert_eq!(got, want, "{kind}: {first} then {skipped} skipped");
            }
        }
    }

    #[test]
    fn uniform_is_roughly_uniform() {
        let m = 10;
        let mut counts = [0usize; 10];
        for i in take(Sampling::Uniform, m, 11, 100_000) {
            counts[i] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn worker_zero_is_the_plain_sampler_and_workers_differ() {
        for kind in [
            Sampling::Uniform,
            Sampling::Permutation,
            Sampling::FileOrder,
        ] {
            let plain = take(kind, 100, 5, 300);
            let mut w0 = Sampler::for_thread(kind, 100, 5, 0, 2);
            let mut w1 = Sampler::for_thread(kind, 100, 5, 1, 2);
            let first: Vec<usize> = (0..300).map(|_| w0.next()).collect();
            let second: Vec<usize> = (0..300).map(|_| w1.next()).collect();
            assert_eq!(first, plain);
            assert_ne!(first, second);
        }
        let mut w1 = Sampler::for_thread(Sampling::FileOrder, 100, 5, 1, 4);
        assert_eq!(w1.next(), 25);
        let mut w1 = Sampler::for_thread(Sampling::Permutation, 10, 5, 1, 4);
        let mut epoch: Vec<usize> = (0..10).map(|_| w1.next()).collect();
        epoch.sort_unstable();
        assert_eq!(epoch, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn names_round_trip() {
        for kind in [
            Sampling::Uniform,
            Sampling::Permutation,
            Sampling::FileOrder,
        ] {
            assert_eq!(kind.to_string().parse::<Sampling>().unwrap(), kind);
        }
        assert!("random".parse::<Sampling>().is_err());
    }
}
