//! The gradient sums v (SGD) or the interleaved pairs [v_i, u_i] (ASGD, CASGD) as the workers
//! see them.
//!
//! Several workers share storage of `f64` bits in `AtomicU64`, read and written with relaxed
//! loads and stores by the kernels crate's `_atomic` kernels (a racing update may be lost, as
//! Hogwild accepts; there is no data race: each access is one plain move on x86_64 and aarch64). A run on one thread owns plain `f64`
//! storage instead and uses the ordinary dispatched kernels, so that it computes exactly what the
//! single-threaded learners compute (the atomic dot sums in a different order than a SIMD dot).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use sparselin_kernels::huge::Zeroed;
use sparselin_kernels::{HugeArray, sparse};

use crate::data::Row;
use crate::memory::{self, AllocError};

/// One worker's access to the gradient sums.
pub(super) trait Sums {
    /// v·x.
    fn dot(&mut self, x: &Row<'_>) -> f64;
    /// v += g·x and, for pairs, u += gh·x (`gh` is ignored by a lone v); called once per
    /// step. With g = 0 (hinge past the margin, ε-insensitive inside the tube; then gh = 0
    /// too) nothing moves and the entries are not touched, as in the single-threaded learners.
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>);
    /// Publish what this worker holds privately and take in what the others published (see
    /// [`HotSplit`]); a no-op for sums without a private part. Called when the worker stops.
    fn merge(&mut self) {}
}

impl Sums for &mut [f64] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, _gh: f64, x: &Row<'_>) {
        if g != 0.0 {
            sparse::axpy(g, x.indices, x.values, self)
        }
    }
}

impl Sums for &mut [[f64; 2]] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot_first(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>) {
        if g != 0.0 {
            sparse::axpy2(g, gh, x.indices, x.values, self)
        }
    }
}

impl Sums for &[AtomicU64] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot_atomic(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, _gh: f64, x: &Row<'_>) {
        if g != 0.0 {
            sparse::axpy_atomic(g, x.indices, x.values, self)
        }
    }
}

impl Sums for &[[AtomicU64; 2]] {
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        sparse::dot_first_atomic(self, x.indices, x.values)
    }

    #[inline]
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>) {
        if g != 0.0 {
            sparse::axpy2_atomic(g, gh, x.indices, x.values, self)
        }
    }
}

/// Storage of the sums for a run: owned by one worker, or shared by several (in 2 MiB pages
/// once large: [`HugeArray`]).
pub(super) enum Storage {
    /// v, one thread.
    Single(HugeArray<f64>),
    /// [v, u], one thread.
    Pairs(HugeArray<[f64; 2]>),
    /// v, shared.
    SharedSingle(HugeArray<AtomicU64>),
    /// [v, u], shared.
    SharedPairs(HugeArray<[AtomicU64; 2]>),
}

/// The sums read back, once the workers have joined.
pub(super) enum Final {
    /// v.
    Single(HugeArray<f64>),
    /// [v, u].
    Pairs(HugeArray<[f64; 2]>),
}

impl Storage {
    /// The pairs [v_i, u_i] as plain numbers, in feature order (while no worker runs); `None`
    /// for a lone v.
    pub fn pairs(&self) -> Option<Box<dyn Iterator<Item = [f64; 2]> + '_>> {
        let read = |a: &AtomicU64| f64::from_bits(a.load(Relaxed));
        match self {
            Storage::Single(_) | Storage::SharedSingle(_) => None,
            Storage::Pairs(vu) => Some(Box::new(vu.iter().copied())),
            Storage::SharedPairs(vu) => {
                Some(Box::new(vu.iter().map(move |[v, u]| [read(v), read(u)])))
            }
        }
    }

    /// Zeroed sums over `n` features: pairs if `averaged`, shared if `threads > 1`; an error
    /// if they cannot be allocated.
    pub fn new(n: usize, averaged: bool, threads: usize) -> Result<Storage, AllocError> {
        let what = "weights";
        Ok(match (averaged, threads > 1) {
            (false, false) => Storage::Single(memory::zeroed(what, n)?),
            (true, false) => Storage::Pairs(memory::zeroed(what, n)?),
            (false, true) => Storage::SharedSingle(memory::zeroed(what, n)?),
            (true, true) => Storage::SharedPairs(memory::zeroed(what, n)?),
        })
    }

    /// Replaces the sums by `sums` (while no worker runs): moved in for one thread, stored
    /// entry by entry into the shared ones.
    pub fn load(&mut self, sums: Final) {
        let store = |cell: &AtomicU64, x: f64| cell.store(x.to_bits(), Relaxed);
        match (self, sums) {
            (Storage::Single(v), Final::Single(new)) => *v = new,
            (Storage::Pairs(vu), Final::Pairs(new)) => *vu = new,
            (Storage::SharedSingle(v), Final::Single(new)) => {
                v.iter()
                    .zip(new.iter())
                    .for_each(|(cell, &x)| store(cell, x));
            }
            (Storage::SharedPairs(vu), Final::Pairs(new)) => {
                for ([v, u], &[x, y]) in vu.iter().zip(new.iter()) {
                    store(v, x);
                    store(u, y);
                }
            }
            _ => unreachable!("the sums and the storage are chosen by the same rule"),
        }
    }

    /// The sums as plain numbers, once no worker runs; no copy is made.
    pub fn into_final(self) -> Final {
        match self {
            Storage::Single(v) => Final::Single(v),
            Storage::Pairs(vu) => Final::Pairs(vu),
            Storage::SharedSingle(v) => Final::Single(v.into_f64()),
            Storage::SharedPairs(vu) => Final::Pairs(vu.into_f64_pairs()),
        }
    }

    /// A copy of the sums as plain numbers (O(n), while no worker runs), or an error if it
    /// cannot be allocated.
    pub fn read(&self) -> Result<Final, AllocError> {
        let read = |a: &AtomicU64| f64::from_bits(a.load(Relaxed));
        Ok(match self {
            Storage::Single(v) => Final::Single(copy(v.iter().copied())?),
            Storage::Pairs(vu) => Final::Pairs(copy(vu.iter().copied())?),
            Storage::SharedSingle(v) => Final::Single(copy(v.iter().map(read))?),
            Storage::SharedPairs(vu) => {
                Final::Pairs(copy(vu.iter().map(|[v, u]| [read(v), read(u)]))?)
            }
        })
    }
}

/// The values of `values` in a new array of their length, or an error naming the weights.
fn copy<T: Zeroed>(values: impl ExactSizeIterator<Item = T>) -> Result<HugeArray<T>, AllocError> {
    let count = values.len();
    HugeArray::try_from_exact(values).map_err(|_| AllocError::of::<T>("weights", count))
}

/// One entry of the shared sums: v_i, or the pair [v_i, u_i].
pub(super) trait SharedEntry: Sync {
    /// The same entry as plain numbers.
    type Plain: Copy + PartialEq;
    /// Reads the entry (relaxed).
    fn read(&self) -> Self::Plain;
    /// entry += `now` − `before`, without losing a racing worker's addition (a relaxed
    /// compare-and-swap loop); returns the entry after the addition.
    fn add_difference(&self, now: Self::Plain, before: Self::Plain) -> Self::Plain;
}

impl SharedEntry for AtomicU64 {
    type Plain = f64;

    #[inline]
    fn read(&self) -> f64 {
        f64::from_bits(self.load(Relaxed))
    }

    #[inline]
    fn add_difference(&self, now: f64, before: f64) -> f64 {
        let delta = now - before;
        let add = |bits| Some((f64::from_bits(bits) + delta).to_bits());
        match self.fetch_update(Relaxed, Relaxed, add) {
            Ok(old) | Err(old) => f64::from_bits(old) + delta,
        }
    }
}

impl SharedEntry for [AtomicU64; 2] {
    type Plain = [f64; 2];

    #[inline]
    fn read(&self) -> [f64; 2] {
        [self[0].read(), self[1].read()]
    }

    #[inline]
    fn add_difference(&self, now: [f64; 2], before: [f64; 2]) -> [f64; 2] {
        [
            self[0].add_difference(now[0], before[0]),
            self[1].add_difference(now[1], before[1]),
        ]
    }
}

/// How many steps a worker takes between two merges of its private hot entries.
pub(super) const MERGE_STEPS: u32 = 256;

/// Shared sums of which one worker keeps the first `hot` entries to itself between merges.
///
/// The most frequent features are in nearly every row: with every worker writing them at
/// every step, their cache lines would move between cores at every step (on rcv1-like the 100
/// most frequent features hold 31% of the non-zeros). Data numbered by descending frequency
/// (the generator numbers features so; `convert --renumber`) has them first. A worker reads
/// and updates its private copy of those entries with the plain kernels, and every
/// [`MERGE_STEPS`] steps (counted by [`Sums::add`], one per step) and when it stops
/// ([`Sums::merge`]) it adds the copy's change since the last merge into the shared entries by
/// compare-and-swap, so that none of these updates is lost, and takes the shared values as
/// its new copy. The others see them up to a merge late: a bounded staleness, which Hogwild's
/// analysis allows. Every other feature is read and written in the shared sums directly.
pub(super) struct HotSplit<'a, T: SharedEntry> {
    shared: &'a [T],
    /// The private copy of `shared[..hot]`, and its value at the last merge.
    private: Vec<T::Plain>,
    at_merge: Vec<T::Plain>,
    /// Steps since the last merge.
    unmerged: u32,
}

impl<'a, T: SharedEntry> HotSplit<'a, T> {
    /// A view of `shared` keeping its first `hot` entries (at most all of them) private.
    pub fn new(shared: &'a [T], hot: usize) -> Self {
        let private: Vec<T::Plain> = shared[..hot.min(shared.len())]
            .iter()
            .map(T::read)
            .collect();
        HotSplit {
            shared,
            at_merge: private.clone(),
            private,
            unmerged: 0,
        }
    }
}

impl<'a, T: SharedEntry> Sums for HotSplit<'a, T>
where
    for<'p> &'p mut [T::Plain]: Sums,
    &'a [T]: Sums,
{
    #[inline]
    fn dot(&mut self, x: &Row<'_>) -> f64 {
        let (hot, rest) = x.split_below(self.private.len());
        let mut shared = self.shared;
        (&mut self.private[..]).dot(&hot) + shared.dot(&rest)
    }

    #[inline]
    fn add(&mut self, g: f64, gh: f64, x: &Row<'_>) {
        if g != 0.0 {
            let (hot, rest) = x.split_below(self.private.len());
            let mut shared = self.shared;
            (&mut self.private[..]).add(g, gh, &hot);
            shared.add(g, gh, &rest);
        }
        // Every step counts, moving or not, so that merges keep their pace.
        self.unmerged += 1;
        if self.unmerged == MERGE_STEPS {
            self.merge();
        }
    }

    fn merge(&mut self) {
        let entries = self.private.iter_mut().zip(&mut self.at_merge);
        for ((now, before), cell) in entries.zip(self.shared) {
            *now = if *now == *before {
                cell.read()
            } else {
                cell.add_difference(*now, *before)
            };
            *before = *now;
        }
        self.unmerged = 0;
    }
}

#[cfg(test)]
mod tests {
    use sparselin_kernels::Values;

    use super::*;

    /// Sums over more features than any machine holds are an error, shared or not.
    #[test]
    fn storage_too_large_for_memory_is_an_error() {
        for threads in [1, 2] {
            let e = Storage::new(1 << 46, true, threads).err().unwrap();
            assert_eq!((e.what, e.bytes), ("weights", 1 << 50));
        }
    }

    fn shared(values: &[[f64; 2]]) -> Vec<[AtomicU64; 2]> {
        let cell = |x: f64| AtomicU64::new(x.to_bits());
        values.iter().map(|&[v, u]| [cell(v), cell(u)]).collect()
    }

    fn row<'a>(indices: &'a [u32], values: &'a [f32]) -> Row<'a> {
        Row {
            label: 1.0,
            indices: indices.into(),
            values: Values::F32(values),
        }
    }

    #[test]
    fn a_split_view_computes_what_the_plain_sums_compute() {
        let start: Vec<[f64; 2]> = (0..10).map(|i| [i as f64, -(i as f64) / 2.0]).collect();
        let storage = shared(&start);
        let mut plain = start.clone();
        let mut split = HotSplit::new(&storage[..], 4);
        let (indices, values) = ([1u32, 3, 4, 8], [0.5f32, 2.0, -1.0, 4.0]);
        let x = row(&indices, &values);
        assert_eq!(split.dot(&x), (&mut plain[..]).dot(&x));
        split.add(0.25, -3.0, &x);
        (&mut plain[..]).add(0.25, -3.0, &x);
        assert_eq!(split.dot(&x), (&mut plain[..]).dot(&x));
        // Before the merge the hot entries 1 and 3 are private; the others are shared at once.
        assert_eq!(storage[3].read(), start[3]);
        assert_eq!(storage[8].read(), plain[8]);
        split.merge();
        let read: Vec<[f64; 2]> = storage.iter().map(SharedEntry::read).collect();
        assert_eq!(read, plain);
    }

    #[test]
    fn merges_of_two_workers_lose_neither_update_and_count_none_twice() {
        let storage = shared(&[[1.0, 1.0]; 3]);
        let mut first = HotSplit::new(&storage[..], 2);
        let mut second = HotSplit::new(&storage[..], 2);
        let (indices, values) = ([0u32, 2], [1.0f32, 1.0]);
        let x = row(&indices, &values);
        first.add(2.0, 4.0, &x);
        second.add(8.0, 16.0, &x);
        first.merge();
        second.merge();
        // Entry 0 was private to both and merged by both; entry 2 was shared directly.
        assert_eq!(storage[0].read(), [11.0, 21.0]);
        assert_eq!(storage[1].read(), [1.0, 1.0]);
        assert_eq!(storage[2].read(), [11.0, 21.0]);
        // The second merge brought the first worker's update into the second's copy.
        assert_eq!(second.private[0], [11.0, 21.0]);
        // Merging again adds nothing, and refreshes the first worker's copy.
        first.merge();
        second.merge();
        assert_eq!(storage[0].read(), [11.0, 21.0]);
        assert_eq!(first.private[0], [11.0, 21.0]);
    }

    #[test]
    fn steps_with_a_zero_derivative_still_count_towards_the_merge() {
        let storage = shared(&[[1.0, 1.0]; 2]);
        let mut mover = HotSplit::new(&storage[..], 2);
        let mut idle = HotSplit::new(&storage[..], 2);
        let (indices, values) = ([0u32], [1.0f32]);
        let x = row(&indices, &values);
        mover.add(2.0, 4.0, &x);
        mover.merge();
        for _ in 1..MERGE_STEPS {
            idle.add(0.0, 0.0, &x);
        }
        assert_eq!(
            idle.private[0],
            [1.0, 1.0],
            "merged before MERGE_STEPS steps"
        );
        idle.add(0.0, 0.0, &x);
        assert_eq!(
            idle.private[0],
            [3.0, 5.0],
            "no merge after MERGE_STEPS steps"
        );
        assert_eq!(storage[0].read(), [3.0, 5.0]);
    }

    /// Four workers on threads started together, every feature private, merging every
    /// [`MERGE_STEPS`] steps and at the end: the shared sums are exactly the sum of every update (integers, so
    /// exact in f64), however the merges interleave. A merge that dropped a racing worker's
    /// change, or added one twice, would miss or overshoot.
    #[test]
    fn racing_merges_keep_every_update_of_a_private_feature() {
        const STEPS: u32 = 200 * MERGE_STEPS + 17;
        let storage = shared(&[[0.0, 0.0]; 5]);
        let (indices, values) = ([0u32, 1, 3], [1.0f32, 2.0, 3.0]);
        let start = std::sync::Barrier::new(4);
        std::thread::scope(|scope| {
            for worker in 1..=4 {
                let (storage, start) = (&storage[..], &start);
                scope.spawn(move || {
                    start.wait();
                    let mut sums = HotSplit::new(storage, 5);
                    let x = row(&indices, &values);
                    for step in 0..STEPS {
                        let g = f64::from(worker * (1 + step % 3));
                        sums.add(g, -g, &x);
                    }
                    sums.merge();
                });
            }
        });
        let g_total: f64 = (1..=4)
            .map(|worker| {
                (0..STEPS)
                    .map(|step| f64::from(worker * (1 + step % 3)))
                    .sum::<f64>()
            })
            .sum();
        let expected = |x: f64| [g_total * x, -g_total * x];
        let read: Vec<[f64; 2]> = storage.iter().map(SharedEntry::read).collect();
        let zero = [0.0, 0.0];
        assert_eq!(
            read,
            [expected(1.0), expected(2.0), zero, expected(3.0), zero]
        );
    }
}
