//! The per-step scalars every prediction reads: a (the bias's gradient sum; CASGD's centering),
//! z̃ (CASGD's projection sum) and b (a free bias).
//!
//! Two ways to share them, chosen by [`ScalarSharing`] and measured in PERF.md `## Hogwild`:
//!
//! * [`ScalarSharing::PerThread`]: worker j alone writes slot j (a relaxed store of its own
//!   running total, never a read-modify-write); a prediction sums the slots. No update is ever
//!   lost, and the final value is exact; each read touches one cache line per worker.
//! * [`ScalarSharing::Shared`]: one slot, read and written by everyone with relaxed load + add +
//!   store. One cache line, but it moves between cores on every step and racing updates of it
//!   are lost (like the weights' under Hogwild).
//!
//! Every slot sits on its own cache line ([`CachePadded`]): without it, workers writing
//! neighbouring slots would invalidate one another's lines (false sharing). The sums that no
//! prediction reads (ā, ζ̃, the free bias's average) are private to each worker and added up at
//! the end.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crossbeam::utils::CachePadded;

/// How the workers share the scalars a, z̃, b.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScalarSharing {
    /// One slot per worker on its own cache line, summed by each prediction (the default:
    /// see PERF.md `## Hogwild` for the measurement).
    #[default]
    PerThread,
    /// One slot for all, updated by relaxed load + add + store.
    Shared,
}

impl fmt::Display for ScalarSharing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScalarSharing::PerThread => "per-thread",
            ScalarSharing::Shared => "shared",
        })
    }
}

impl FromStr for ScalarSharing {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "per-thread" => Ok(ScalarSharing::PerThread),
            "shared" => Ok(ScalarSharing::Shared),
            _ => Err(format!("unknown scalar sharing '{s}' (per-thread, shared)")),
        }
    }
}

/// Index of a in a slot.
pub(super) const A: usize = 0;
/// Index of z̃ in a slot.
pub(super) const Z: usize = 1;
/// Index of b in a slot.
pub(super) const B: usize = 2;

/// One cache line's worth of scalars: [a, z̃, b] as `f64` bits.
type Slot = CachePadded<[AtomicU64; 3]>;

/// The shared scalars of a run.
pub(super) struct LiveScalars {
    sharing: ScalarSharing,
    slots: Vec<Slot>,
}

impl LiveScalars {
    /// All zero, for `threads` workers.
    pub fn new(sharing: ScalarSharing, threads: usize) -> LiveScalars {
        let slots = match sharing {
            ScalarSharing::PerThread => threads,
            ScalarSharing::Shared => 1,
        };
        let zero = || AtomicU64::new(0f64.to_bits());
        LiveScalars {
            sharing,
            slots: (0..slots)
                .map(|_| CachePadded::new([zero(), zero(), zero()]))
                .collect(),
        }
    }

    /// Worker `me`'s handle; `own` is its running totals (per-thread sharing) from earlier
    /// epochs.
    pub fn view(&self, me: usize, own: [f64; 3]) -> Live<'_> {
        Live {
            sharing: self.sharing,
            slots: &self.slots,
            me,
            own,
        }
    }

    /// The final [a, z̃, b] (after the workers have joined).
    /// Replaces scalar k's total by `value` (while no worker runs): the first slot holds it,
    /// the others zero — as must the workers' own copies.
    pub fn reset(&self, k: usize, value: f64) {
        for (j, slot) in self.slots.iter().enumerate() {
            let own = if j == 0 { value } else { 0.0 };
            slot[k].store(own.to_bits(), Relaxed);
        }
    }

    pub fn total(&self) -> [f64; 3] {
        let mut total = [0.0; 3];
        for (k, t) in total.iter_mut().enumerate() {
            *t = sum(self.slots.iter().map(|slot| load(&slot[k])));
        }
        total
    }
}

#[inline(always)]
fn load(cell: &AtomicU64) -> f64 {
    f64::from_bits(cell.load(Relaxed))
}

/// Σ in slot order, starting from the first term (so a single slot is returned unchanged,
/// −0.0 included: a one-thread run stays bit-identical to the single-threaded learner).
#[inline(always)]
pub(super) fn sum(mut terms: impl Iterator<Item = f64>) -> f64 {
    let first = terms.next().unwrap_or(0.0);
    terms.fold(first, |s, x| s + x)
}

/// One worker's handle on the scalars.
pub(super) struct Live<'a> {
    sharing: ScalarSharing,
    slots: &'a [Slot],
    me: usize,
    /// This worker's own totals (per-thread sharing).
    own: [f64; 3],
}

impl Live<'_> {
    /// The current value of scalar `k` (all workers' contributions that are visible).
    #[inline]
    pub fn get(&self, k: usize) -> f64 {
        match self.sharing {
            ScalarSharing::PerThread => sum(self.slots.iter().enumerate().map(|(j, slot)| {
                if j == self.me {
                    self.own[k]
                } else {
                    load(&slot[k])
                }
            })),
            ScalarSharing::Shared => load(&self.slots[0][k]),
        }
    }

    /// Scalar `k` += `delta`.
    #[inline]
    pub fn add(&mut self, k: usize, delta: f64) {
        let cell = match self.sharing {
            ScalarSharing::PerThread => {
                self.own[k] += delta;
                self.slots[self.me][k].store(self.own[k].to_bits(), Relaxed);
                return;
            }
            ScalarSharing::Shared => &self.slots[0][k],
        };
        cell.store((load(cell) + delta).to_bits(), Relaxed);
    }

    /// This worker's own totals, to carry into the next epoch.
    pub fn own(&self) -> [f64; 3] {
        self.own
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_thread_slots_add_up_and_shared_is_one_value() {
        for sharing in [ScalarSharing::PerThread, ScalarSharing::Shared] {
            let live = LiveScalars::new(sharing, 3);
            let mut views: Vec<Live<'_>> = (0..3).map(|j| live.view(j, [0.0; 3])).collect();
            for (j, view) in views.iter_mut().enumerate() {
                view.add(A, 1.0 + j as f64);
                view.add(B, -0.5);
            }
            assert_eq!(views[0].get(A), 6.0, "{sharing}");
            assert_eq!(views[2].get(B), -1.5, "{sharing}");
            assert_eq!(views[1].get(Z), 0.0, "{sharing}");
            assert_eq!(live.total(), [6.0, 0.0, -1.5], "{sharing}");
            assert_eq!(sharing.to_string().parse::<ScalarSharing>(), Ok(sharing));
        }
        assert!("both".parse::<ScalarSharing>().is_err());
    }
}
