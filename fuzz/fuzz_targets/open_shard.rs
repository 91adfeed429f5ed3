//! Opening, verifying and reading arbitrary bytes as a shard must never panic or read out of
//! bounds: either an error, or rows that satisfy the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sparselin::data::Shard;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.csr");
    std::fs::write(&path, data).unwrap();
    let Ok(shard) = Shard::open(&path) else {
        return;
    };
    let _ = shard.verify();
    if shard.check_rows().is_ok() {
        let n = shard.header().n_features;
        for i in 0..shard.header().n_rows {
            let row = shard.row(i);
            assert!(row.indices.iter().all(|&j| (j as usize) < n));
            assert_eq!(row.values.len().unwrap_or(row.indices.len()), row.indices.len());
        }
    }
});
