//! [`HugeArray`]: the zero-initialized, fixed-length arrays that sparse kernels update at random
//! positions (a learner's weights or gradient sums), in 2 MiB pages once they are large.
//!
//! A sparse step touches entries scattered over the whole array. Past the reach of the
//! second-level TLB (3,072 entries of 4 KiB, 12 MiB, on AMD Zen 4) nearly every entry then costs
//! a page walk as well as a cache miss, and under virtualisation the walk is two-level. Backed by
//! 2 MiB pages the same array needs a few hundred TLB entries at most: with 2^20 features the
//! fused pair update ran 1.9x faster and file-order ASGD training 1.15x faster (6.18 → 5.38 ns
//! per non-zero; PERF.md `## Kernels`). Small arrays gain nothing from it and stay on the heap.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicU64;

use memmap2::MmapMut;

/// The size of a huge page, and the length in bytes from which an array asks for them.
pub const HUGE_PAGE: usize = 2 << 20;

/// Element types whose all-zero bytes are a valid value (0.0 for floats), so that an array of
/// them can start as zeroed memory fresh from the kernel.
///
/// # Safety
///
/// An implementor must be a type for which every bit of zeroes is a valid value, with no drop
/// glue, and whose alignment is at most a page (4096 bytes: maps start on a page boundary).
pub unsafe trait Zeroed: Sized {
    /// The zero value (all bits clear).
    fn zero() -> Self;
}

// SAFETY: 0.0f64 is all zero bits; f64 has no drop glue.
unsafe impl Zeroed for f64 {
    fn zero() -> Self {
        0.0
    }
}

// SAFETY: a pair of all-zero f64 is all zero bits; no drop glue.
unsafe impl Zeroed for [f64; 2] {
    fn zero() -> Self {
        [0.0; 2]
    }
}

// SAFETY: `AtomicU64` has the in-memory representation of `u64` (documented in std), so all
// zero bits is `AtomicU64::new(0)`, the bits of 0.0f64; no drop glue.
unsafe impl Zeroed for AtomicU64 {
    fn zero() -> Self {
        AtomicU64::new(0)
    }
}

// SAFETY: as for `AtomicU64`, twice.
unsafe impl Zeroed for [AtomicU64; 2] {
    fn zero() -> Self {
        [AtomicU64::new(0), AtomicU64::new(0)]
    }
}

/// A fixed-length array of `T`, zero-initialized; arrays of [`HUGE_PAGE`] bytes or more live in
/// an anonymous memory map that asks for 2 MiB pages (`MADV_HUGEPAGE`, honoured under Linux's
/// `madvise` and `always` THP settings), smaller ones in a `Vec`.
///
/// The map is rounded up to whole huge pages; its pages are zeroed by the kernel when first
/// touched.
pub struct HugeArray<T: Zeroed> {
    backing: Backing<T>,
}

enum Backing<T> {
    Heap(Vec<T>),
    /// The map and the number of `T` it holds.
    Map(MmapMut, usize, PhantomData<T>),
}

impl<T: Zeroed> HugeArray<T> {
    /// `len` zeros.
    ///
    /// Panics if the memory cannot be mapped (as `Vec` aborts when it cannot allocate); use
    /// [`HugeArray::try_zeroed`] where the input chooses `len`.
    pub fn zeroed(len: usize) -> HugeArray<T> {
        HugeArray::try_zeroed(len).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `len` zeros, or an error when they cannot be allocated (the byte count overflows
    /// `usize` or the system refuses the map): for lengths the input chooses, such as a
    /// feature count, which must fail cleanly rather than abort.
    pub fn try_zeroed(len: usize) -> Result<HugeArray<T>, AllocError> {
        let Some(bytes) = len.checked_mul(size_of::<T>()) else {
            return Err(AllocError { bytes: None });
        };
        let backing = if bytes < HUGE_PAGE {
            let mut values = Vec::new();
            values
                .try_reserve_exact(len)
                .map_err(|_| AllocError { bytes: Some(bytes) })?;
            values.extend((0..len).map(|_| T::zero()));
            Backing::Heap(values)
        } else {
            let rounded = bytes
                .checked_next_multiple_of(HUGE_PAGE)
                .ok_or(AllocError { bytes: None })?;
            let map = MmapMut::map_anon(rounded).map_err(|_| AllocError { bytes: Some(bytes) })?;
            ask_for_huge_pages(&map);
            Backing::Map(map, len, PhantomData)
        };
        Ok(HugeArray { backing })
    }

    /// An array holding the values `values` yields, in order, or an error when it cannot be
    /// allocated (as [`HugeArray::try_zeroed`]).
    pub fn try_from_exact(
        values: impl ExactSizeIterator<Item = T>,
    ) -> Result<HugeArray<T>, AllocError> {
        let mut array = HugeArray::try_zeroed(values.len())?;
        array.iter_mut().zip(values).for_each(|(a, v)| *a = v);
        Ok(array)
    }

    /// Whether the array lives in a map that asked for huge pages.
    pub fn is_mapped(&self) -> bool {
        matches!(self.backing, Backing::Map(..))
    }
}

impl HugeArray<AtomicU64> {
    /// The values read as `f64` bits, for sums that threads wrote atomically and that are
    /// read plainly once they have all joined: a mapped array changes type in place (no copy
    /// of up to 2^32 entries), a small one on the heap is copied.
    pub fn into_f64(self) -> HugeArray<f64> {
        let backing = match self.backing {
            Backing::Heap(values) => Backing::Heap(
                values
                    .into_iter()
                    .map(|x| f64::from_bits(x.into_inner()))
                    .collect(),
            ),
            Backing::Map(map, len, _) => Backing::Map(map, len, PhantomData),
        };
        HugeArray { backing }
    }
}

impl HugeArray<[AtomicU64; 2]> {
    /// The pairs read as `f64` bits, as [`HugeArray::into_f64`].
    pub fn into_f64_pairs(self) -> HugeArray<[f64; 2]> {
        let backing = match self.backing {
            Backing::Heap(pairs) => Backing::Heap(
                pairs
                    .into_iter()
                    .map(|pair| pair.map(|x| f64::from_bits(x.into_inner())))
                    .collect(),
            ),
            Backing::Map(map, len, _) => Backing::Map(map, len, PhantomData),
        };
        HugeArray { backing }
    }
}

/// Why [`HugeArray::try_zeroed`] failed: the array's size in bytes could not be mapped, or
/// (`bytes: None`) does not fit in `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocError {
    /// The bytes asked for, when they fit in `usize`.
    pub bytes: Option<usize>,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bytes {
            Some(bytes) => write!(f, "cannot map {bytes} bytes of memory"),
            None => write!(f, "array size overflows the address space"),
        }
    }
}

impl std::error::Error for AllocError {}

/// Asks the kernel to back `map` with 2 MiB pages; only a hint, whose failure changes nothing
/// but speed.
fn ask_for_huge_pages(map: &MmapMut) {
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

impl<T: Zeroed> Deref for HugeArray<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match &self.backing {
            Backing::Heap(v) => v,
            // SAFETY: the map is page-aligned (so aligned for any `T` here), at least
            // `len * size_of::<T>()` bytes long (`try_zeroed` mapped that many, so the size
            // also fits in `isize`), and was zero-filled by the kernel; zero bytes are a valid
            // `T` (`Zeroed`), and it is only ever written through `&mut self` or through `T`'s
            // own interior mutability (atomics), so every byte stays a valid `T`. The slice
            // borrows `self`, which owns the map.
            Backing::Map(map, len, _) => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<T>(), *len)
            },
        }
    }
}

impl<T: Zeroed> DerefMut for HugeArray<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.backing {
            Backing::Heap(v) => v,
            // SAFETY: as in `deref`; `&mut self` makes this the only live reference into the
            // map.
            Backing::Map(map, len, _) => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), *len)
            },
        }
    }
}

impl<T: Zeroed + fmt::Debug> fmt::Debug for HugeArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HugeArray")
            .field("len", &self.len())
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use super::*;

    /// Lengths just below and at the size from which an array is mapped.
    fn lengths<T>() -> [usize; 4] {
        let at = HUGE_PAGE / size_of::<T>();
        [0, 5, at - 1, at + 3]
    }

    #[test]
    fn arrays_start_at_zero_on_the_heap_and_in_a_map() {
        for len in lengths::<f64>() {
            let a = HugeArray::<f64>::zeroed(len);
            assert_eq!(a.len(), len);
            assert_eq!(a.is_mapped(), len * 8 >= HUGE_PAGE);
            assert!(a.iter().all(|&x| x.to_bits() == 0));
        }
        for len in lengths::<[f64; 2]>() {
            let a = HugeArray::<[f64; 2]>::zeroed(len);
            assert_eq!(a.is_mapped(), len * 16 >= HUGE_PAGE);
            assert!(a.iter().all(|p| p[0].to_bits() == 0 && p[1].to_bits() == 0));
        }
        for len in lengths::<[AtomicU64; 2]>() {
            let a = HugeArray::<[AtomicU64; 2]>::zeroed(len);
            assert!(a.iter().flatten().all(|x| x.load(Relaxed) == 0));
        }
    }

    #[test]
    fn writes_stay_put_and_copies_are_equal() {
        for len in lengths::<f64>() {
            let mut a = HugeArray::<f64>::zeroed(len);
            for (i, x) in a.iter_mut().enumerate() {
                *x = i as f64 * 0.5;
            }
            let b = HugeArray::try_from_exact(a.iter().copied()).unwrap();
            assert_eq!(b.is_mapped(), a.is_mapped());
            assert_eq!(&a[..], &b[..]);
        }
        let shared = HugeArray::<AtomicU64>::zeroed(lengths::<AtomicU64>()[3]);
        std::thread::scope(|s| {
            s.spawn(|| shared[7].store(3, Relaxed));
        });
        assert_eq!(shared[7].load(Relaxed), 3);
    }

    #[test]
    fn atomic_arrays_read_as_floats_keep_every_value_and_their_map() {
        for len in lengths::<AtomicU64>() {
            let shared = HugeArray::<AtomicU64>::zeroed(len);
            for (i, x) in shared.iter().enumerate() {
                x.store((i as f64 * -0.25).to_bits(), Relaxed);
            }
            let mapped = shared.is_mapped();
            let plain = shared.into_f64();
            assert_eq!((plain.len(), plain.is_mapped()), (len, mapped));
            assert!(
                plain
                    .iter()
                    .enumerate()
                    .all(|(i, &x)| x == i as f64 * -0.25)
            );
        }
        for len in lengths::<[AtomicU64; 2]>() {
            let shared = HugeArray::<[AtomicU64; 2]>::zeroed(len);
            for (i, [v, u]) in shared.iter().enumerate() {
                v.store((i as f64).to_bits(), Relaxed);
                u.store((-(i as f64)).to_bits(), Relaxed);
            }
            let mapped = shared.is_mapped();
            let plain = shared.into_f64_pairs();
            assert_eq!((plain.len(), plain.is_mapped()), (len, mapped));
            assert!(
                plain
                    .iter()
                    .enumerate()
                    .all(|(i, &p)| p == [i as f64, -(i as f64)])
            );
        }
    }

    #[test]
    fn impossible_sizes_are_errors_not_panics() {
        // 2^46 pairs are 2^50 bytes (1 PiB): beyond any machine and any 47-bit address space.
        let e = HugeArray::<[f64; 2]>::try_zeroed(1 << 46).unwrap_err();
        assert_eq!(e.bytes, Some(1 << 50));
        assert_eq!(
            HugeArray::<f64>::try_zeroed(usize::MAX / 4)
                .unwrap_err()
                .bytes,
            None
        );
        assert_eq!(HugeArray::<f64>::try_zeroed(7).unwrap().len(), 7);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_arrays_ask_for_huge_pages() {
        let a = HugeArray::<f64>::zeroed(HUGE_PAGE / 8 + 1);
        let flags = crate::proc_maps::vm_flags_of(a.as_ptr() as usize);
        assert_eq!(
            flags.split_whitespace().any(|f| f == "hg"),
            crate::proc_maps::thp_available(),
            "{flags}"
        );
    }
}
