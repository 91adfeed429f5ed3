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
pub fn map_read_only(file: &File) -> io::Result<Mmap> {
    // SAFETY: `Mmap::map` is unsafe only because another process could change or truncate
    // the file while it is mapped, which would change memory behind a shared reference.
    // The map is read-only (no writes through it) and the contract above — shards are
    // immutable once renamed into place — rules out concurrent modification by sparselin.
    unsafe { Mmap::map(file) }
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
