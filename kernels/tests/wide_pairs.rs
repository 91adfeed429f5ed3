//! The fused pair kernels on more than 2^31 pairs, where the AVX2 and AVX-512 paths switch to
//! the pair offsets exact for every `u32` index (`x86_64::pair_offsets`): indices on both
//! sides of 2^31, each update landing on its own pair and nowhere else.
//!
//! 2^31 + 64 pairs are 32 GiB of address space, mapped without reserving swap; only the pages
//! the indices touch are ever backed.

use memmap2::MmapOptions;
use sparselin_kernels::{KernelSet, Values};

const PAIRS: usize = (1 << 31) + 64;

#[test]
fn every_path_updates_the_pairs_named_past_two_to_the_31() {
    let mut map = MmapOptions::new()
        .len(PAIRS * 16)
        .no_reserve_swap()
        .map_anon()
        .expect("a 32 GiB anonymous map without swap reserved");
    let vu: &mut [[f64; 2]] = bytemuck::cast_slice_mut(&mut map[..]);
    assert_eq!(vu.len(), PAIRS);
    let last = PAIRS as u32 - 1;
    // Increasing, as in a row; the first four go through the unrolled loop.
    let idx = [
        3,
        (1 << 30) + 5,
        (1 << 31) - 1,
        1 << 31,
        (1 << 31) + 1,
        (1 << 31) + 17,
        last - 8,
        last - 1,
        last,
    ];
    let x: Vec<f32> = (0..idx.len()).map(|k| k as f32 + 1.5).collect();
    // Where a dropped or doubled bit of an index would land instead.
    let strays: Vec<usize> = idx
        .iter()
        .flat_map(|&i| {
            let i = i as usize;
            [i ^ (1 << 31), i / 2, (2 * i) % PAIRS, i ^ 1]
        })
        .filter(|&j| j < PAIRS && !idx.contains(&(j as u32)))
        .collect();
    for set in KernelSet::available() {
        for &i in &idx {
            vu[i as usize] = [0.25, -0.5];
        }
        set.axpy2(2.0, 3.0, &idx[..], Values::F32(&x), vu);
        // Small dyadic numbers: every product and sum is exact on every path.
        for (&i, &xk) in idx.iter().zip(&x) {
            let xk = f64::from(xk);
            assert_eq!(
                vu[i as usize],
                [0.25 + 2.0 * xk, -0.5 + 3.0 * xk],
                "{}: pair {i}",
                set.isa()
            );
        }
        for &j in &strays {
            assert_eq!(vu[j], [0.0, 0.0], "{}: stray write to pair {j}", set.isa());
        }
        let want: f64 = x
            .iter()
            .map(|&xk| (0.25 + 2.0 * f64::from(xk)) * f64::from(xk))
            .sum();
        assert_eq!(
            set.dot_first(vu, &idx[..], Values::F32(&x)),
            want,
            "{} dot_first",
            set.isa()
        );
    }
}
