//! No path reads or writes out of bounds: an index past the weights panics like slice
//! indexing, wherever it sits in the row (unrolled body, 4- or 8-wide chunk, scalar tail).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicU64;

use sparselin_kernels::{KernelSet, Values, sparse};

/// Runs `f` and reports whether it panicked.
fn panics(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// Calls `f` on rows of every length 1..=40 over weights of length `n`, each holding one of
/// the out-of-range indices `bad` at its start, middle or end (unrolled body, chunk or tail).
fn rows_with_a_bad_index(n: usize, bad: &[u32], mut f: impl FnMut(&[u32])) {
    for len in 1..=40 {
        for pos in [0, len / 2, len - 1] {
            for &b in bad {
                let mut idx: Vec<u32> = (0..len as u32).map(|k| k % n as u32).collect();
                idx[pos] = b;
                f(&idx);
            }
        }
    }
}

#[test]
fn out_of_range_index_panics_on_every_path() {
    let n = 37usize;
    let vals = vec![1.5f32; 64];
    let vals64 = vec![1.5f64; 64];
    for set in KernelSet::available() {
        let bad = [n as u32, n as u32 + 1, u32::MAX, 1 << 31];
        rows_with_a_bad_index(n, &bad, |idx| {
            let len = idx.len();
            for val in [
                Values::Ones,
                Values::F32(&vals[..len]),
                Values::F64(&vals64[..len]),
            ] {
                let mut w = vec![0.5f64; n];
                let mut vu = vec![[0.5f64; 2]; n];
                let isa = set.isa();
                assert!(
                    panics(|| {
                        set.dot(&w, idx, val);
                    }),
                    "{isa} dot"
                );
                assert!(panics(|| set.axpy(1.0, idx, val, &mut w)), "{isa} axpy");
                assert!(
                    panics(|| {
                        set.dot_first(&vu, idx, val);
                    }),
                    "{isa} dot_first"
                );
                assert!(
                    panics(|| set.axpy2(1.0, 2.0, idx, val, &mut vu)),
                    "{isa} axpy2"
                );
                // Nothing was written before the check failed.
                assert!(w.iter().all(|&x| x == 0.5), "{isa} wrote before panicking");
                assert!(vu.iter().flatten().all(|&x| x == 0.5));
            }
        });
    }
}

#[test]
fn atomic_out_of_range_index_or_value_length_panics_before_any_write() {
    let n = 37usize;
    let vals = vec![1.5f32; 64];
    let vals64 = vec![1.5f64; 64];
    let half = || 0.5f64.to_bits();
    rows_with_a_bad_index(n, &[n as u32, u32::MAX], |idx| {
        let len = idx.len();
        for val in [
            Values::Ones,
            Values::F32(&vals[..len]),
            Values::F64(&vals64[..len]),
            Values::F32(&vals[..len - 1]),
        ] {
            let w: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(half())).collect();
            let vu: Vec<[AtomicU64; 2]> = (0..n)
                .map(|_| [AtomicU64::new(half()), AtomicU64::new(half())])
                .collect();
            assert!(panics(|| {
                sparse::dot_atomic(&w, idx, val);
            }));
            assert!(panics(|| sparse::axpy_atomic(1.0, idx, val, &w)));
            assert!(panics(|| {
                sparse::dot_first_atomic(&vu, idx, val);
            }));
            assert!(panics(|| sparse::axpy2_atomic(1.0, 1.0, idx, val, &vu)));
            let untouched = |a: &AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed) == half();
            assert!(w.iter().all(untouched) && vu.iter().flatten().all(untouched));
        }
    });
    let short = [0u32, 1, 2];
    let w: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
    assert!(panics(|| {
        sparse::dot_atomic(&w, &short, Values::F64(&[1.0, 2.0]));
    }));
}

#[test]
fn value_length_must_match_on_every_path() {
    let w = [1.0; 8];
    for set in KernelSet::available() {
        assert!(panics(|| {
            set.dot(&w, &[1, 2], Values::F32(&[1.0]));
        }));
        assert!(panics(|| {
            set.dot(&w, &[1], Values::F64(&[1.0, 2.0]));
        }));
    }
}

/// A block kernel's index must have a whole block: 5 blocks of 3 in 17 weights take indices
/// 0..5 only (the two weights past the last block belong to no feature); a dot reads at most
/// the block's width of lanes, and a width of 0 takes only empty rows.
#[test]
fn block_indices_past_the_last_whole_block_panic_on_every_path() {
    let (w, width) = (vec![1.0; 17], 3);
    for set in KernelSet::available() {
        let dot = |width: usize, idx: &[u32], val: Values<'_>, lanes: usize| {
            let mut acc = vec![0.0; lanes];
            set.block_dot(&w, width, idx, val, &mut acc);
            acc
        };
        let axpy =
            |coef: &[f64], idx: &[u32]| set.block_axpy(coef, idx, Values::Ones, &mut w.clone());
        assert_eq!(dot(width, &[4, 0], Values::Ones, 3), [2.0; 3]);
        assert_eq!(dot(width, &[4], Values::Ones, 2), [1.0; 2]);
        assert!(panics(|| drop(dot(width, &[0, 5], Values::Ones, 3))));
        assert!(panics(|| drop(dot(2, &[0], Values::Ones, 3))));
        assert!(panics(|| drop(dot(0, &[0], Values::Ones, 0))));
        assert!(panics(|| drop(dot(1, &[0], Values::F32(&[]), 1))));
        assert!(panics(|| axpy(&[1.0; 3], &[5])));
        axpy(&[], &[]);
        assert!(panics(|| axpy(&[], &[0])));
    }
}

#[test]
fn empty_rows_and_empty_weights() {
    for set in KernelSet::available() {
        assert_eq!(set.dot(&[], &[], Values::Ones), 0.0);
        assert_eq!(set.dot_first(&[], &[], Values::F32(&[])), 0.0);
        set.axpy(1.0, &[], Values::F64(&[]), &mut []);
        assert!(panics(|| {
            set.dot(&[], &[0], Values::Ones);
        }));
        assert_eq!(set.max_index(&[]), None);
        assert_eq!(set.max_index(&[3, 9, 1]), Some(9));
    }
}

/// The per-row bound scan, which every unproven row passes before a kernel trusts it, finds the
/// largest index on every path wherever it sits (unrolled body, chunk or tail), including
/// indices from 2^31 up, where a signed comparison would go wrong.
#[test]
fn max_index_finds_the_largest_index_anywhere_on_every_path() {
    for set in KernelSet::available() {
        for len in 1..200usize {
            for largest in [7, 1 << 31, u32::MAX - 1, u32::MAX] {
                // Filler below `largest`, with the top bit set in half of it where that fits.
                let filler = |k: usize| {
                    let low = (k as u32).wrapping_mul(2_654_435_761) % 7;
                    if largest > 1 << 31 && k.is_multiple_of(2) {
                        (1 << 31) | low
                    } else {
                        low.min(largest - 1)
                    }
                };
                for pos in 0..len {
                    let mut idx: Vec<u32> = (0..len).map(filler).collect();
                    idx[pos] = largest;
                    assert_eq!(
                        set.max_index(&idx),
                        Some(largest),
                        "{}: length {len}, largest {largest} at {pos}",
                        set.isa()
                    );
                }
            }
        }
    }
}

/// Indices past the end, up to `u32::MAX`: the test is that every call returns.
#[test]
fn prefetch_takes_indices_past_the_end() {
    let w = vec![2.0f64; 100];
    sparse::prefetch(&w, &[0, 99, 100, u32::MAX]);
    let vu = vec![[1.0f64; 2]; 10];
    sparse::prefetch(&vu, &[3, 1 << 31]);
}

/// What can go wrong here is a fault or an endless loop on a shifted span past the end of the
/// allocation, or wrapping past the top of the address space: the test is that every call
/// returns (the lines it covers are checked in `sparse::tests`).
#[test]
fn prefetch_ahead_takes_any_distance_past_the_end() {
    let w = vec![2.0f64; 100];
    for distance in [0, 1, 63, 64, 800, 4096, 1 << 40, usize::MAX] {
        sparse::prefetch_ahead(&w, distance);
        sparse::prefetch_ahead(&w[37..41], distance);
        sparse::prefetch_ahead(&w[..0], distance);
    }
}
