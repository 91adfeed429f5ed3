//! A [`Reducer`] over threads of one process, for testing the distributed code paths without
//! MPI: [`run`] starts one thread per rank, and their sums meet at a barrier.

use std::sync::{Barrier, Mutex};

use super::Reducer;

/// One rank of a [`run`].
pub(crate) struct Rank<'a> {
    rank: usize,
    size: usize,
    slots: &'a Mutex<Vec<Vec<f64>>>,
    barrier: &'a Barrier,
}

impl Reducer for Rank<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn sum(&self, values: &mut [f64]) {
        self.reduce(values, 0.0, |a, b| a + b);
    }

    fn max(&self, values: &mut [f64]) {
        self.reduce(values, f64::NEG_INFINITY, f64::max);
    }
}

impl Rank<'_> {
    /// Every rank posts its values, then folds all the posted vectors in rank order from
    /// `start` (the same bits everywhere), then waits until all have read before anyone
    /// posts again.
    fn reduce(&self, values: &mut [f64], start: f64, op: impl Fn(f64, f64) -> f64) {
        self.slots.lock().unwrap()[self.rank] = values.to_vec();
        self.barrier.wait();
        {
            let slots = self.slots.lock().unwrap();
            values.fill(start);
            for slot in slots.iter() {
                assert_eq!(slot.len(), values.len(), "ranks reduced different lengths");
                values
                    .iter_mut()
                    .zip(slot)
                    .for_each(|(v, &s)| *v = op(*v, s));
            }
        }
        self.barrier.wait();
    }
}

/// Run `job` on `size` threads, one rank each, and return their results in rank order.
pub(crate) fn run<T: Send>(size: usize, job: impl Fn(&Rank<'_>) -> T + Sync) -> Vec<T> {
    let slots = Mutex::new(vec![Vec::new(); size]);
    let barrier = Barrier::new(size);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let (slots, barrier, job) = (&slots, &barrier, &job);
                scope.spawn(move || {
                    job(&Rank {
                        rank,
                        size,
                        slots,
                        barrier,
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}
