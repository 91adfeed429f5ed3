//! Read-only memory maps of files, the one `unsafe` the data layer needs, and
//! [`IndexedMap`], a map whose index section carries a proven bound.
//!
//! It lives here because this crate is the project's only home for `unsafe`. The data layer
//! (`sparselin::data::shard`) validates everything it reads from the map; this module only
//! creates it.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::OnceLock;

use crate::bounded::BoundedIndices;

pub use memmap2::Mmap;

/// Map `file` read-only.
///
/// Contract with callers: the file must not be modified or truncated while the map lives.
/// sparselin honours it by never writing a shard in place: shards are written under a
/// temporary name and renamed into place, after which they are immutable.
///
/// What no reader of a shared map can rule out is a writer changing the file in place while
/// it is mapped: another program (`cp` over a shard of a dataset being trained on), or this
/// one through `std::fs`, which is safe code (replacing the file with
/// `mv`, or rewriting it with `sparselin convert`, is safe: the map keeps the old file). Such
/// a writer changes memory the process has already checked: a truncation ends it with
/// SIGBUS, and indices rewritten after their bound was proven ([`IndexedMap`]) can send a
/// kernel outside the weights. This is the assumption `memmap2` marks `Mmap::map` unsafe for;
/// sparselin documents it (README, "Limits") rather than copying every shard into memory.
pub fn map_read_only(file: &File) -> io::Result<Mmap> {
    // SAFETY: `Mmap::map` is unsafe only because a writer could change or truncate the file
    // while it is mapped, which would change memory behind a shared reference. The map is
    // read-only (no writes through it), and sparselin never writes a shard in place (the
    // contract above). That no other writer does so is an assumption about the environment,
    // not something this function can check: the one condition under which the crate's
    // bounds guarantee does not hold (crate docs, README "Limits").
    let map = unsafe { Mmap::map(file) }?;
    ask_for_huge_pages(&map);
    Ok(map)
}

/// Asks the kernel to back `map` with 2 MiB pages where it can.
///
/// A learner visiting rows in random order touches new 4 KiB pages for nearly every row (its
/// offsets, indices and values lie in three sections), and under virtualisation each TLB
/// miss is a two-level page walk: on rcv1-like with uniform sampling, the prefetches of
/// upcoming rows took 43% of the samples of a 5-epoch run, stalled there (PERF.md `## Online
/// learners`). With the hint, pages the kernel reads in for this map are cached as 2 MiB
/// folios and mapped whole, on filesystems with large folios (ext4, xfs on recent Linux);
/// pages already cached in 4 KiB folios stay as they are (shards written by sparselin are
/// cached in large folios, since they are written in large blocks). It is only a hint: where
/// the kernel lacks it or declines, nothing changes, so its result is ignored.
fn ask_for_huge_pages(map: &Mmap) {
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// A read-only map holding a section of `u32` indices, whose bound is proven once, by a
/// scan on first use, and then handed out with every sub-slice in O(1) (see
/// [`crate::bounded`]). The map's bytes stay readable as a whole for the other sections.
///
/// The cached bound stays true because the map is never written through and, by the
/// contract of [`map_read_only`], the file does not change while mapped.
#[derive(Debug)]
pub struct IndexedMap {
    map: Mmap,
    /// The index section, in bytes of the map.
    section: Range<usize>,
    /// Largest entry of the section plus one (0 when empty), once scanned.
    bound: OnceLock<usize>,
}

impl IndexedMap {
    /// Wraps `map`, whose bytes `section` hold the indices. `None` when the section lies
    /// outside the map or is not a whole number of 4-aligned `u32`s. O(1): nothing is read.
    pub fn new(map: Mmap, section: Range<usize>) -> Option<IndexedMap> {
        let bytes = map.get(section.clone())?;
        bytemuck::try_cast_slice::<u8, u32>(bytes).ok()?;
        Some(IndexedMap {
            map,
            section,
            bound: OnceLock::new(),
        })
    }

    /// The whole mapped file.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The index section.
    #[inline]
    pub fn indices(&self) -> &[u32] {
        // Length and alignment were checked by `new`, and the map does not move.
        bytemuck::cast_slice(&self.map[self.section.clone()])
    }

    /// The index section with its bound: the first call scans the section (O(len)), later
    /// calls are O(1).
    #[inline]
    pub fn bounded(&self) -> BoundedIndices<'_> {
        let idx = self.indices();
        let bound = *self.bound.get_or_init(|| BoundedIndices::scan(idx).bound());
        BoundedIndices::proven(idx, bound)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::proc_maps::{thp_available, vm_flags_of};
    use std::io::Write;

    #[test]
    fn maps_are_marked_for_huge_pages() {
        let path = std::env::temp_dir().join(format!("sparselin-mmap-{}", std::process::id()));
        let mut file = File::create(&path).unwrap();
        file.write_all(&[7u8; 3 << 20]).unwrap();
        drop(file);
        let map = map_read_only(&File::open(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(map[12345], 7);
        let flags = vm_flags_of(map.as_ptr() as usize);
        assert_eq!(
            flags.split_whitespace().any(|f| f == "hg"),
            thp_available(),
            "{flags}"
        );
    }
}
