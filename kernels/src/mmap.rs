//! Read-only memory maps of files, the one `unsafe` the data layer needs.
//!
//! It lives here because this crate is the project's only home for `unsafe`. The data layer
//! (`sparselin::data::shard`) validates everything it reads from the map; this module only
//! creates it.

use std::fs::File;
use std::io;

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
