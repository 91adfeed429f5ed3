//! Proven index slices: no way of building a [`BoundedIndices`] yields a bound that some
//! entry reaches, the kernels refuse weights shorter than the bound, and a proven row gives
//! exactly what the per-row-checked slice gives on every path (which equals scalar within
//! the documented bound).

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use common::{abs_dot, cases, scalar, sum_bound};
use proptest::prelude::*;
use sparselin_kernels::mmap::{IndexedMap, map_read_only};
use sparselin_kernels::{BoundedIndices, IndexVec, KernelSet, Values, sparse};

fn panics(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// Largest entry plus one, 0 for none: the tight bound, computed the obvious way.
fn tight(idx: &[u32]) -> usize {
    idx.iter().map(|&i| i as usize + 1).max().unwrap_or(0)
}

/// Indices of every magnitude: small, near 2³¹ and near u32::MAX (where +1 must not wrap).
fn any_indices() -> impl Strategy<Value = Vec<u32>> {
    let entry = prop_oneof![
        0u32..64,
        (1u32 << 31) - 4..(1u32 << 31) + 4,
        u32::MAX - 4..=u32::MAX
    ];
    prop::collection::vec(entry, 0..200)
}

/// Writes `prefix` junk bytes then `idx` as little-endian u32 to a fresh file and maps it.
fn mapped(idx: &[u32], prefix: usize, name: &str) -> IndexedMap {
    let path =
        std::env::temp_dir().join(format!("sparselin-bounded-{}-{name}", std::process::id()));
    let mut bytes = vec![0xAB; prefix];
    bytes.extend(idx.iter().flat_map(|i| i.to_le_bytes()));
    std::fs::write(&path, &bytes).unwrap();
    let map = map_read_only(&std::fs::File::open(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    IndexedMap::new(map, prefix..bytes.len()).unwrap()
}

proptest! {
    /// Every constructor's bound exceeds every entry (and is tight), and every sub-slice keeps
    /// a bound that exceeds each of its entries.
    #[test]
    fn every_entry_is_below_the_bound(idx in any_indices(), a in 0usize..200, b in 0usize..200) {
        let want = tight(&idx);
        let (a, b) = (a.min(idx.len()), b.min(idx.len()));
        let (a, b) = (a.min(b), a.max(b));
        let owned = IndexVec::new(idx.clone());
        let built = [
            BoundedIndices::scan(&idx),
            BoundedIndices::from(&idx),
            BoundedIndices::from(idx.as_slice()),
            owned.bounded(),
        ];
        for proven in built {
            prop_assert_eq!(proven.bound(), want);
            prop_assert_eq!(proven, idx.as_slice());
            let part = proven.slice(a..b);
            prop_assert!(part.iter().all(|&i| (i as usize) < part.bound()));
            prop_assert_eq!(part, &idx[a..b]);
        }
        let past_end = panics(|| {
            BoundedIndices::scan(&idx).slice(a..idx.len() + 1);
        });
        prop_assert!(past_end, "slicing past the end must panic");
    }

    /// A proven row cut from a larger array gives, on every path, bit for bit what the same
    /// row as a plain slice gives, for every kernel (plain and atomic), and equals scalar
    /// within the bound.
    #[test]
    fn proven_rows_equal_checked_rows(case in cases(), kind in 0u8..3, pad in 0usize..40) {
        let (w, idx, val) = (case.w(), case.idx(), case.values(kind));
        // The row sits inside a larger array whose other entries are valid weights too
        // (none when there are no weights), up to the last one.
        let n = w.len() as u32;
        let pad = if n == 0 { 0 } else { pad as u32 };
        let mut all: Vec<u32> = (0..pad).map(|k| k % n).collect();
        all.extend_from_slice(idx);
        all.extend((0..pad).map(|k| n - 1 - k % n));
        let owned = IndexVec::new(all);
        let row = owned.bounded().slice(pad as usize..pad as usize + idx.len());
        prop_assert_eq!(row, idx);
        let vu = case.pairs();
        let want = scalar().dot(w, idx, val);
        let bound = sum_bound(idx.len(), abs_dot(w, idx, val));
        for set in KernelSet::available() {
            let isa = set.isa();
            let got = set.dot(w, row, val);
            prop_assert_eq!(got.to_bits(), set.dot(w, idx, val).to_bits(), "{} dot", isa);
            prop_assert!((got - want).abs() <= bound, "{}: {:e} vs {:e}", isa, got, want);
            prop_assert_eq!(
                set.dot_first(&vu, row, val).to_bits(),
                set.dot_first(&vu, idx, val).to_bits(),
                "{} dot_first", isa
            );
            let (mut p, mut c) = (w.to_vec(), w.to_vec());
            set.axpy(case.a, row, val, &mut p);
            set.axpy(case.a, idx, val, &mut c);
            prop_assert_eq!(&p, &c, "{} axpy", isa);
            let (mut p, mut c) = (vu.clone(), vu.clone());
            set.axpy2(case.a, case.b, row, val, &mut p);
            set.axpy2(case.a, case.b, idx, val, &mut c);
            prop_assert_eq!(&p, &c, "{} axpy2", isa);
        }
        prop_assert_eq!(sparse::dot(w, row, val).to_bits(), sparse::dot(w, idx, val).to_bits());
        let shared = |x: &[f64]| x.iter().map(|v| AtomicU64::new(v.to_bits())).collect::<Vec<_>>();
        let bits = |x: &[AtomicU64]| x.iter().map(|a| a.load(Relaxed)).collect::<Vec<_>>();
        let pair_bits = |x: &[[AtomicU64; 2]]| x.iter().flatten().map(|a| a.load(Relaxed)).collect::<Vec<_>>();
        let (p, c) = (shared(w), shared(w));
        prop_assert_eq!(
            sparse::dot_atomic(&p, row, val).to_bits(),
            sparse::dot_atomic(&p, idx, val).to_bits()
        );
        sparse::axpy_atomic(case.a, row, val, &p);
        sparse::axpy_atomic(case.a, idx, val, &c);
        prop_assert_eq!(bits(&p), bits(&c));
        let pairs = |x: &[[f64; 2]]| {
            x.iter().map(|q| [AtomicU64::new(q[0].to_bits()), AtomicU64::new(q[1].to_bits())]).collect::<Vec<_>>()
        };
        let (p, c) = (pairs(&vu), pairs(&vu));
        prop_assert_eq!(
            sparse::dot_first_atomic(&p, row, val).to_bits(),
            sparse::dot_first_atomic(&p, idx, val).to_bits()
        );
        sparse::axpy2_atomic(case.a, case.b, row, val, &p);
        sparse::axpy2_atomic(case.a, case.b, idx, val, &c);
        prop_assert_eq!(pair_bits(&p), pair_bits(&c));
    }
}

/// Weights shorter than the bound are refused before any write, on every path and by the
/// atomic kernels, even when the row's own entries would fit (the bound is the array's).
#[test]
fn weights_shorter_than_the_bound_are_refused() {
    let owned = IndexVec::new(vec![0, 2, 5, 1, 3, 9]);
    let row = owned.bounded().slice(0..3); // [0, 2, 5], bound 10
    assert_eq!(row.bound(), 10);
    for len in [0, 6, 9] {
        for set in KernelSet::available() {
            let mut w = vec![0.5; len];
            let mut vu = vec![[0.5; 2]; len];
            assert!(panics(|| {
                set.dot(&w, row, Values::Ones);
            }));
            assert!(panics(|| set.axpy(1.0, row, Values::Ones, &mut w)));
            assert!(panics(|| {
                set.dot_first(&vu, row, Values::Ones);
            }));
            assert!(panics(|| set.axpy2(1.0, 1.0, row, Values::Ones, &mut vu)));
            assert!(w.iter().chain(vu.iter().flatten()).all(|&x| x == 0.5));
        }
        let w: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(0)).collect();
        assert!(panics(|| sparse::axpy_atomic(1.0, row, Values::Ones, &w)));
        assert!(w.iter().all(|a| a.load(Relaxed) == 0));
    }
    let mut w = vec![0.0; 10];
    sparse::axpy(1.0, row, Values::F32(&[1.0, 2.0, 3.0]), &mut w);
    assert_eq!(w[5], 3.0);
    assert!(panics(|| {
        sparse::dot(&w, row, Values::F32(&[1.0]));
    }));
}

/// A mapped index section is scanned once and sub-slices carry its bound; a section outside
/// the map or not made of aligned `u32`s is refused.
#[test]
fn mapped_sections_prove_their_bound() {
    let idx = [4u32, 1, 77, 0, u32::MAX - 1, 3];
    let map = mapped(&idx, 64, "ok");
    assert_eq!(map.indices(), &idx);
    let all = map.bounded();
    assert_eq!(all.bound(), u32::MAX as usize);
    assert_eq!(map.bounded().bound(), all.bound());
    assert_eq!(all.slice(1..3), &[1, 77]);
    assert_eq!(mapped(&[], 64, "empty").bounded().bound(), 0);
    let path = std::env::temp_dir().join(format!("sparselin-bounded-{}-bad", std::process::id()));
    std::fs::write(&path, [0u8; 64]).unwrap();
    let open = || map_read_only(&std::fs::File::open(&path).unwrap()).unwrap();
    assert!(IndexedMap::new(open(), 1..9).is_none(), "misaligned");
    assert!(IndexedMap::new(open(), 0..6).is_none(), "not whole u32s");
    assert!(IndexedMap::new(open(), 32..68).is_none(), "past the end");
    assert!(IndexedMap::new(open(), 8..64).is_some());
    std::fs::remove_file(&path).unwrap();
}
