//! Software prefetch of the rows of the steps ahead, so that a step rarely waits on memory.
//!
//! With uniform sampling (or a permutation) each step's row is anywhere in the dataset, and
//! fetching it from DRAM costs ~100 ns twice over — first its offsets, then its indices and
//! values — against ~3 ns of work per non-zero. The sampler knows the coming indices, so each
//! step asks for what later steps will read, in two stages, the second using the data the
//! first brought in: where row t + [`EXTENT_AHEAD`] lives (its offsets and label), and the
//! lines of row t + [`ROW_AHEAD`]; a view of some rows through a map
//! ([`crate::data::RowSubset`]) has a stage before them, its map's entry of row
//! t + [`MAPPING_AHEAD`]. In file order the rows are one stream through each shard's index and
//! value arrays; the hardware prefetcher alone left the steps waiting on it (a
//! file-order epoch of rcv1-like ran 15% faster once each step asked for the indices and
//! values 2 KiB past its own row, [`Row::prefetch_following`]: PERF.md `## Online learners`,
//! session 17).
//! Prefetching the learner's weight entries of the next row as well measured no better on
//! rcv1-like (its 0.75 MB of [v, u] pairs mostly sit in L2/L3).
//!
//! Where in a step the prefetches are issued matters: a prefetch into a page the TLB does not
//! hold waits for the page walk before it retires (under virtualisation, a two-level walk), and
//! issued before the step's dot it held up the dot. The Hogwild worker issues them right after
//! the dot, where the wait overlaps the step's own chain (reduction, loss derivative, update);
//! the generic driver, whose learners take a step as one call, after the step. Measured in
//! the worker on rcv1-like (uniform ASGD, one thread): issued after the dot, an epoch went
//! from 4.18 to 3.76 ns per non-zero; issued after the step, to 0.92× of the time (PERF.md
//! `## Online learners`).

use sparselin_kernels::{Values, sparse};

use super::Sampler;
use super::sampling::{LOOKAHEAD, Sampling};
use crate::data::{Examples, Row};

/// Steps ahead at which a row's place in a view that maps its rows elsewhere is fetched
/// ([`Examples::prefetch_mapping`]; nothing for the others).
const MAPPING_AHEAD: usize = LOOKAHEAD - 1;
/// Steps ahead at which a row's offsets and label are fetched.
const EXTENT_AHEAD: usize = 7;
/// Steps ahead at which a row's indices and values are fetched.
const ROW_AHEAD: usize = 3;

/// Issues the prefetches for the steps after the one the sampler just handed out, whose row
/// is `current`. Always inlined: left to the compiler it stayed a call in the Hogwild worker,
/// and inlining took file-order ASGD on rcv1-like from 1.515 to 1.473 ns per non-zero.
#[inline(always)]
pub(crate) fn prefetch_upcoming<E: Examples>(data: &E, sampler: &Sampler, current: &Row<'_>) {
    if sampler.kind() == Sampling::FileOrder {
        current.prefetch_following();
    } else {
        prefetch_rows_ahead(data, |ahead| Some(sampler.peek_at(ahead)));
    }
}

/// The same prefetches for a step whose successors' rows are `order[next..]` (a shared visiting
/// order; rows past its end are not asked for).
#[inline(always)]
pub(crate) fn prefetch_in_order<E: Examples>(data: &E, order: &[u32], next: usize) {
    prefetch_rows_ahead(data, |ahead| order.get(next + ahead).map(|&i| i as usize));
}

/// The two stages, given the row of the step `ahead` + 1 steps from now (`None`: none). Also
/// for the batch solvers that visit rows in a random order (dual coordinate descent).
#[inline(always)]
pub(crate) fn prefetch_rows_ahead<E: Examples>(data: &E, row: impl Fn(usize) -> Option<usize>) {
    if data.maps_rows()
        && let Some(i) = row(MAPPING_AHEAD)
    {
        data.prefetch_mapping(i);
    }
    if let Some(i) = row(EXTENT_AHEAD) {
        data.prefetch_extent(i);
    }
    if let Some(i) = row(ROW_AHEAD) {
        prefetch_lines(&data.row(i));
    }
}

/// Asks for every cache line the kernels will read of the row's indices and values.
#[inline]
fn prefetch_lines(row: &Row<'_>) {
    sparse::prefetch_row(row.indices.as_slice());
    match row.values {
        Values::F32(v) => sparse::prefetch_row(v),
        Values::F64(v) => sparse::prefetch_row(v),
        Values::Ones => {}
    }
}
