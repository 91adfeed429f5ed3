//! The vector paths read nothing outside a row: a row flush against memory the process may
//! not touch, on either side, gives the scalar oracle's results without a fault. The AVX-512
//! dot's tail loads the row's last eight positions under a mask, reaching before the start of
//! a shorter row, and masked-off lanes must neither fault nor be read.

use memmap2::MmapMut;
use sparselin_kernels::dispatch::Isa;
use sparselin_kernels::{KernelSet, RowBlock, Values};

/// Bytes of each inaccessible region and of the accessible one between: a multiple of every
/// page size in use (4 KiB to 64 KiB), so that `mprotect` takes the boundaries.
const REGION: usize = 1 << 16;

/// An anonymous map of three regions, the first and last made inaccessible: reading either
/// ends the test process with SIGSEGV.
struct Guarded {
    map: MmapMut,
}

impl Guarded {
    fn new() -> Guarded {
        let mut map = MmapMut::map_anon(3 * REGION).expect("anonymous map");
        for region in [0, 2] {
            let start = map[region * REGION..].as_mut_ptr();
            // SAFETY: the region is one of this map's own, page-aligned (the map is, and REGION
            // is a multiple of the page size), and no reference into it is held or made later:
            // `middle` only ever borrows the accessible region.
            let status = unsafe { libc::mprotect(start.cast(), REGION, libc::PROT_NONE) };
            assert_eq!(status, 0, "mprotect");
        }
        Guarded { map }
    }

    /// The accessible region as `T`s.
    fn middle<T: bytemuck::Pod>(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(&mut self.map[REGION..2 * REGION])
    }
}

/// The positions of a row of `len` entries flush against each end of a region of `capacity`
/// entries.
fn flush_rows(len: usize, capacity: usize) -> [std::ops::Range<usize>; 2] {
    [0..len, capacity - len..capacity]
}

#[test]
fn rows_flush_against_inaccessible_memory_read_only_themselves() {
    let features = 97;
    let w: Vec<f64> = (0..features).map(|j| (j % 7) as f64 - 3.0).collect();
    let vu: Vec<[f64; 2]> = w.iter().map(|&x| [x, -x]).collect();
    let (mut idx_map, mut f32_map, mut f64_map) = (Guarded::new(), Guarded::new(), Guarded::new());
    for (k, value) in f32_map.middle::<f32>().iter_mut().enumerate() {
        *value = (k % 5) as f32 + 1.0;
    }
    for (k, value) in f64_map.middle::<f64>().iter_mut().enumerate() {
        *value = (k % 5) as f64 + 1.0;
    }
    let (f32s, f64s) = (
        f32_map.middle::<f32>() as &[f32],
        f64_map.middle::<f64>() as &[f64],
    );
    let scalar = KernelSet::for_isa(Isa::Scalar).unwrap();
    for len in 1..=40 {
        let idx = idx_map.middle::<u32>();
        let capacity = idx.len();
        for row in flush_rows(len, capacity) {
            for (k, i) in idx[row].iter_mut().enumerate() {
                *i = ((k * 31 + len) % features) as u32;
            }
        }
        let idx = idx as &[u32];
        let [start32, end32] = flush_rows(len, capacity);
        let [start64, end64] = flush_rows(len, f64s.len());
        for (row32, row64) in [(start32, start64), (end32, end64)] {
            let row_idx = &idx[row32.clone()];
            for values in [
                Values::Ones,
                Values::F32(&f32s[row32.clone()]),
                Values::F64(&f64s[row64.clone()]),
            ] {
                // Small integers: every path's sum is exact, whatever its order.
                let expected = scalar.dot(&w, row_idx, values);
                for set in KernelSet::available() {
                    let isa = set.isa();
                    assert_eq!(set.dot(&w, row_idx, values), expected, "{isa} dot, {len}");
                    assert_eq!(set.dot_first(&vu, row_idx, values), expected, "{isa} {len}");
                    let offsets = [0, len as u64];
                    let block = RowBlock::new(&offsets, row_idx.into(), values);
                    let mut out = [0.0];
                    set.dot_rows(&w, block, &mut out);
                    assert_eq!(out[0], expected, "{isa} dot_rows, {len}");
                    let mut updated = w.clone();
                    set.axpy(1.0, row_idx, values, &mut updated);
                    let mut oracle = w.clone();
                    scalar.axpy(1.0, row_idx, values, &mut oracle);
                    assert_eq!(updated, oracle, "{isa} axpy, {len}");
                    let mut pairs = vu.clone();
                    set.axpy2(1.0, 2.0, row_idx, values, &mut pairs);
                    let mut oracle = vu.clone();
                    scalar.axpy2(1.0, 2.0, row_idx, values, &mut oracle);
                    assert_eq!(pairs, oracle, "{isa} axpy2, {len}");
                }
            }
        }
    }
}
