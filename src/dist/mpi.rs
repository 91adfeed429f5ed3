//! The MPI reducer (cargo feature `mpi`): sums over `MPI_COMM_WORLD` through rsmpi.
//!
//! [`World`] borrows the [`Universe`] (MPI stays initialized while it lives) and keeps only
//! the rank and the size, fetching the world communicator at each call, which makes it
//! `Sync` as [`Reducer`] requires. MPI is initialized single-threaded: only the thread that
//! runs the solver calls into MPI.

use std::marker::PhantomData;

use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};

use super::Reducer;

/// Every process of the job (`MPI_COMM_WORLD`).
pub struct World<'u> {
    rank: usize,
    size: usize,
    universe: PhantomData<&'u ()>,
}

impl<'u> World<'u> {
    /// The world of an initialized `universe`.
    pub fn new(universe: &'u Universe) -> Self {
        let world = universe.world();
        World {
            rank: world.rank() as usize,
            size: world.size() as usize,
            universe: PhantomData,
        }
    }

    /// End the whole job with `code` (`MPI_Abort`): what a rank does when it cannot go on,
    /// so that the others do not wait forever in their next sum.
    pub fn abort(&self, code: i32) -> ! {
        SimpleCommunicator::world().abort(code)
    }

    /// Wait until every rank has arrived here.
    pub fn barrier(&self) {
        SimpleCommunicator::world().barrier();
    }
}

impl Reducer for World<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    /// `MPI_Allreduce` with `MPI_SUM`. Open MPI's algorithms give every rank the same bits
    /// (recursive doubling adds the same pairs in commuted order; ring and tree variants
    /// compute each element once and pass it on).
    fn sum(&self, values: &mut [f64]) {
        self.all_reduce(values, SystemOperation::sum());
    }

    /// `MPI_Allreduce` with `MPI_MAX`.
    fn max(&self, values: &mut [f64]) {
        self.all_reduce(values, SystemOperation::max());
    }
}

/// Entries reduced per `MPI_Allreduce` (1 MiB of f64): a vector of one entry per feature
/// (up to 2^32 of them) is reduced in pieces through one send buffer of this size, not
/// copied whole.
const PIECE: usize = 1 << 17;

impl World<'_> {
    /// `MPI_Allreduce` of `values` in place with `operation`, [`PIECE`] entries at a time
    /// (every rank cuts the same pieces, so every rank still gets the same bits).
    fn all_reduce(&self, values: &mut [f64], operation: SystemOperation) {
        if self.size == 1 || values.is_empty() {
            return;
        }
        let world = SimpleCommunicator::world();
        let mut send = vec![0.0; values.len().min(PIECE)];
        for piece in values.chunks_mut(PIECE) {
            let send = &mut send[..piece.len()];
            send.copy_from_slice(piece);
            world.all_reduce_into(&send[..], piece, operation);
        }
    }
}
