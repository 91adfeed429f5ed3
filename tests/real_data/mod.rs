//! Where the real data sets of `../shared/data` are, for the test binaries that read them
//! (included with `mod real_data;`).

use std::path::PathBuf;

/// The shared data directory: `SPARSELIN_DATA` if set, else the usual places beside the
/// checkout. Panics with how to point at it when none holds the data.
pub fn data_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("SPARSELIN_DATA").map(PathBuf::from),
        Some(manifest.join("shared/data")),
        Some(manifest.join("../shared/data")),
        Some(manifest.join("../../shared/data")),
        Some(PathBuf::from("/work/shared/data")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("heart_scale").is_dir())
        .expect("real data not found: set SPARSELIN_DATA to the shared data directory")
}
