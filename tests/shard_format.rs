//! Binary shards and datasets: round trips, and refusal of truncated, corrupted or
//! wrong-version files (never a panic, never an out-of-bounds read; the error names the file).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sparselin::data::shard::{self, HEADER_LEN};
use sparselin::data::{
    CsrMatrix, Dataset, DatasetWriter, Examples, FinishOptions, Shard, ShardParts, ValueKind,
    ValueVec, Values,
};

/// A random valid CSR matrix with values of the given kind.
fn csr(kind: ValueKind) -> impl Strategy<Value = CsrMatrix> {
    (1usize..40, 0usize..25).prop_flat_map(move |(n_features, n_rows)| {
        let row = (
            -3i32..4,
            proptest::collection::btree_map(0..n_features as u32, -4.0f64..4.0, 0..8),
        );
        proptest::collection::vec(row, n_rows).prop_map(move |rows| {
            let (mut labels, mut offsets, mut indices, mut values) =
                (vec![], vec![0u64], vec![], vec![]);
            for (label, entries) in rows {
                labels.push(f64::from(label));
                for (j, v) in entries {
                    indices.push(j);
                    values.push(if v == 0.0 { 0.5 } else { v });
                }
                offsets.push(indices.len() as u64);
            }
            let values = match kind {
                ValueKind::Ones => ValueVec::Ones,
                ValueKind::F32 => ValueVec::F32(values.iter().map(|&v| v as f32).collect()),
                ValueKind::F64 => ValueVec::F64(values),
            };
            CsrMatrix::new(labels, offsets, indices, values, n_features).unwrap()
        })
    })
}

fn kind_and_csr() -> impl Strategy<Value = (ValueKind, CsrMatrix)> {
    prop_oneof![
        Just(ValueKind::Ones),
        Just(ValueKind::F32),
        Just(ValueKind::F64)
    ]
    .prop_flat_map(|k| (Just(k), csr(k)))
}

/// Write `m` as a dataset with `rows_per_shard` (one empty shard when `m` has no rows).
fn write_dataset(m: &CsrMatrix, dir: &Path, rows_per_shard: usize, kind: ValueKind) {
    let n = m.n_rows();
    let mut sizes: Vec<usize> = (0..n)
        .step_by(rows_per_shard)
        .map(|start| rows_per_shard.min(n - start))
        .collect();
    if sizes.is_empty() {
        sizes.push(0);
    }
    write_shards(m, dir, &sizes, kind);
}

fn assert_same(a: &dyn Examples, b: &dyn Examples) {
    assert_eq!(a.n_rows(), b.n_rows());
    assert_eq!(a.n_features(), b.n_features());
    assert_eq!(a.nnz(), b.nnz());
    for i in 0..a.n_rows() {
        let (x, y) = (a.row(i), b.row(i));
        assert_eq!(x.label, y.label, "row {i}");
        assert_eq!(x.indices, y.indices, "row {i}");
        assert_eq!(x.values, y.values, "row {i}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dataset_round_trip((kind, m) in kind_and_csr(), rows_per_shard in 1usize..9) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ds");
        write_dataset(&m, &dir, rows_per_shard, kind);
        let dataset = Dataset::open(&dir).unwrap();
        dataset.verify().unwrap();
        let examples = dataset.into_examples().unwrap();
        assert_same(&examples, &m);
    }
}

/// A fixed matrix of `n_rows` rows over 64 columns, with empty rows and values of `kind`.
fn fixed_csr(n_rows: usize, kind: ValueKind) -> CsrMatrix {
    let (mut labels, mut offsets, mut indices, mut values) = (vec![], vec![0u64], vec![], vec![]);
    for r in 0..n_rows {
        labels.push(if r % 3 == 0 { 1.0 } else { -0.25 * r as f64 });
        // Row r holds r % 7 entries (row 0, 7, 14, … are empty), increasing, below 63.
        for k in 0..(r % 7) as u32 {
            indices.push(k * 9 + r as u32 % 9);
            values.push(0.5 + r as f64 / 8.0 - f64::from(k));
        }
        offsets.push(indices.len() as u64);
    }
    let values = match kind {
        ValueKind::Ones => ValueVec::Ones,
        ValueKind::F32 => ValueVec::F32(values.iter().map(|&v| v as f32).collect()),
        ValueKind::F64 => ValueVec::F64(values),
    };
    CsrMatrix::new(labels, offsets, indices, values, 64).unwrap()
}

/// Write `m` as a dataset of shards of `sizes` rows (they must add up to `m`'s rows).
fn write_shards(m: &CsrMatrix, dir: &Path, sizes: &[usize], kind: ValueKind) {
    let mut writer = DatasetWriter::create(dir, kind).unwrap();
    let mut start = 0;
    for &size in sizes {
        let end = start + size;
        let (a, b) = (m.offsets()[start] as usize, m.offsets()[end] as usize);
        let offsets: Vec<u64> = m.offsets()[start..=end]
            .iter()
            .map(|o| o - a as u64)
            .collect();
        writer
            .write_shard(&ShardParts {
                labels: &m.labels()[start..end],
                offsets: &offsets,
                indices: &m.indices()[a..b],
                values: m.values().slice(a, b),
                n_features: m.n_features(),
            })
            .unwrap();
        start = end;
    }
    assert_eq!(start, m.n_rows());
    writer
        .finish(FinishOptions {
            columns: Some(m.n_features()),
            column_statistics: true,
            ..FinishOptions::default()
        })
        .unwrap();
}

/// The view hot loops read through (`Examples::rows`) must hand out exactly the rows of the
/// plain path, bound included, whatever the shard layout: shards of 5 rows (found by
/// division) or 4 (by a shift) with a shorter last one, a single shard, and uneven shards
/// (by search); binary, f32 and f64 values.
#[test]
fn the_row_view_equals_the_plain_rows() {
    let layouts: [&[usize]; 4] = [&[5, 5, 5, 5, 3], &[4, 4, 4, 4, 4, 3], &[23], &[3, 7, 2, 11]];
    for kind in [ValueKind::Ones, ValueKind::F32, ValueKind::F64] {
        let m = fixed_csr(23, kind);
        for sizes in layouts {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("ds");
            write_shards(&m, &dir, sizes, kind);
            let examples = Dataset::open(&dir).unwrap().into_examples().unwrap();
            let view = examples.rows();
            assert_same(&view, &examples);
            assert_same(&view, &m);
            let plain: Vec<usize> = (0..m.n_rows())
                .map(|i| examples.row(i).indices.bound())
                .collect();
            let fast: Vec<usize> = (0..m.n_rows())
                .map(|i| view.row(i).indices.bound())
                .collect();
            assert_eq!(fast, plain, "{kind} {sizes:?}");
            for shard in examples.dataset().shards() {
                let rows = shard.rows();
                for i in 0..shard.header().n_rows {
                    let (x, y) = (rows.row(i), shard.row(i));
                    assert_eq!(x.label.to_bits(), y.label.to_bits());
                    assert_eq!((x.indices, x.values), (y.indices, y.values));
                    assert_eq!(ValueKind::of(&x.values), kind);
                }
            }
        }
    }
}

/// `for_each_block` hands out exactly rows `range` of `data`, in order, each block's rows the
/// set's rows.
fn assert_blocks_are_the_rows(data: &dyn Examples, range: std::ops::Range<usize>) {
    let mut next = range.start;
    data.for_each_block(range.clone(), &mut |first, block| {
        assert_eq!(first, next, "blocks of {range:?}");
        let (indices, values) = (block.indices(), block.values());
        for (r, ends) in block.offsets().windows(2).enumerate() {
            let entries = ends[0] as usize..ends[1] as usize;
            let row = data.row(first + r);
            assert_eq!(
                indices.slice(entries.clone()),
                row.indices,
                "row {}",
                first + r
            );
            assert_eq!(values.slice(entries), row.values, "row {}", first + r);
        }
        next = first + block.len();
    });
    assert_eq!(next, range.end.max(range.start), "blocks of {range:?}");
}

/// Rows through `Examples::row` only: the default `for_each_block`, a row at a time.
struct RowByRow<'a>(&'a CsrMatrix);

impl Examples for RowByRow<'_> {
    fn n_rows(&self) -> usize {
        self.0.n_rows()
    }
    fn n_features(&self) -> usize {
        self.0.n_features()
    }
    fn row(&self, i: usize) -> sparselin::data::Row<'_> {
        self.0.row(i)
    }
    fn nnz(&self) -> u64 {
        self.0.nnz()
    }
    type Rows<'b>
        = &'b Self
    where
        Self: 'b;
    fn rows(&self) -> &Self {
        self
    }
}

/// The blocks of a matrix, of a dataset and its view (one block per shard a range crosses,
/// whatever the layout) and of the default are the rows.
#[test]
fn blocks_are_the_rows_whatever_the_shards() {
    let layouts: [&[usize]; 4] = [&[5, 5, 5, 5, 3], &[4, 4, 4, 4, 4, 3], &[23], &[3, 7, 2, 11]];
    let ranges = [0..23, 0..0, 7..7, 2..19, 5..10, 4..5, 22..23, 10..23];
    for kind in [ValueKind::Ones, ValueKind::F32, ValueKind::F64] {
        let m = fixed_csr(23, kind);
        for range in ranges.clone() {
            assert_blocks_are_the_rows(&m, range.clone());
            assert_blocks_are_the_rows(&RowByRow(&m), range);
        }
        for sizes in layouts {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("ds");
            write_shards(&m, &dir, sizes, kind);
            let examples = Dataset::open(&dir).unwrap().into_examples().unwrap();
            for range in ranges.clone() {
                assert_blocks_are_the_rows(&examples, range.clone());
                assert_blocks_are_the_rows(&examples.rows(), range.clone());
            }
            let mut crossed = 0;
            examples
                .rows()
                .for_each_block(0..23, &mut |_, _| crossed += 1);
            assert_eq!(crossed, sizes.len(), "one block per shard: {sizes:?}");
        }
    }
}

#[test]
#[should_panic(expected = "rows to 24 of 23")]
fn blocks_past_the_last_row_panic() {
    let m = fixed_csr(23, ValueKind::F32);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    write_shards(&m, &dir, &[5, 5, 5, 5, 3], ValueKind::F32);
    let examples = Dataset::open(&dir).unwrap().into_examples().unwrap();
    examples.rows().for_each_block(20..24, &mut |_, _| {});
}

#[test]
#[should_panic(expected = "row 23 of 23")]
fn a_row_past_the_view_panics() {
    let m = fixed_csr(23, ValueKind::F32);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    write_shards(&m, &dir, &[5, 5, 5, 5, 3], ValueKind::F32);
    let examples = Dataset::open(&dir).unwrap().into_examples().unwrap();
    examples.rows().row(23);
}

fn sample_shard(dir: &Path) -> PathBuf {
    let path = dir.join("s.csr");
    shard::write_shard(
        &path,
        &ShardParts {
            labels: &[1.0, -1.0, 1.0],
            offsets: &[0, 2, 2, 5],
            indices: &[0, 3, 1, 2, 7],
            values: Values::F32(&[0.5, 1.5, 2.0, -1.0, 3.0]),
            n_features: 8,
        },
    )
    .unwrap();
    path
}

/// Open and fully verify; the error must name the file.
fn open_and_verify(path: &Path) -> Result<(), String> {
    let result = Shard::open(path).and_then(|s| s.verify());
    result.map_err(|e| {
        let message = e.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        message
    })
}

#[test]
fn every_flipped_byte_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let path = sample_shard(tmp.path());
    let good = std::fs::read(&path).unwrap();
    open_and_verify(&path).unwrap();
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        std::fs::write(&path, &bad).unwrap();
        assert!(
            open_and_verify(&path).is_err(),
            "flip at byte {at} undetected"
        );
    }
}

#[test]
fn every_truncation_is_refused_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    let path = sample_shard(tmp.path());
    let good = std::fs::read(&path).unwrap();
    for len in 0..good.len() {
        std::fs::write(&path, &good[..len]).unwrap();
        let err = Shard::open(&path).unwrap_err().to_string();
        assert!(err.contains("truncated"), "length {len}: {err}");
    }
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 64]);
    std::fs::write(&path, &longer).unwrap();
    assert!(Shard::open(&path).is_err());
}

#[test]
fn wrong_version_and_magic_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let path = sample_shard(tmp.path());
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    bad[8..12].copy_from_slice(&7u32.to_le_bytes());
    std::fs::write(&path, &bad).unwrap();
    let err = Shard::open(&path).unwrap_err().to_string();
    assert!(err.contains("unsupported shard format version 7"), "{err}");
    let mut bad = good.clone();
    bad[0] = b'X';
    std::fs::write(&path, &bad).unwrap();
    let err = Shard::open(&path).unwrap_err().to_string();
    assert!(err.contains("bad magic"), "{err}");
}

#[test]
fn out_of_order_rows_are_refused_before_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let mut writer = DatasetWriter::create(&dir, ValueKind::Ones).unwrap();
    let parts = ShardParts {
        labels: &[1.0],
        offsets: &[0, 2],
        indices: &[3, 1],
        values: Values::Ones,
        n_features: 4,
    };
    writer.write_shard(&parts).unwrap();
    writer.finish(FinishOptions::default()).unwrap();
    let err = Dataset::open(&dir).unwrap().into_examples().unwrap_err();
    assert!(err.to_string().contains("strictly increasing"), "{err}");
}

/// An index at or past the column count, written into a shard behind the writer's back, is
/// refused when the rows are first used (and by `verify`), naming the file, without a panic.
#[test]
fn index_past_the_columns_is_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let mut writer = DatasetWriter::create(&dir, ValueKind::Ones).unwrap();
    let parts = ShardParts {
        labels: &[1.0, -1.0],
        offsets: &[0, 2, 3],
        indices: &[1, 3, 2],
        values: Values::Ones,
        n_features: 4,
    };
    writer.write_shard(&parts).unwrap();
    writer.finish(FinishOptions::default()).unwrap();
    let path = Dataset::open(&dir).unwrap().shards()[0]
        .path()
        .to_path_buf();
    let mut bytes = std::fs::read(&path).unwrap();
    // The index section is the third section entry of the header (FORMAT.md): offset, length,
    // CRC-32. The checksums (the manifest's record of the header's included) are made to
    // match, as a faulty writer would: only the row check can tell.
    let at = u64::from_le_bytes(bytes[104..112].try_into().unwrap()) as usize;
    let len = u64::from_le_bytes(bytes[112..120].try_into().unwrap()) as usize;
    let manifest_path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    for bad in [4u32, u32::MAX] {
        bytes[at + 8..at + 12].copy_from_slice(&bad.to_le_bytes());
        let section_crc = crc32fast::hash(&bytes[at..at + len]);
        bytes[120..124].copy_from_slice(&section_crc.to_le_bytes());
        let header_crc = crc32fast::hash(&bytes[..152]);
        bytes[152..156].copy_from_slice(&header_crc.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        manifest["shards"][0]["header_crc32"] = header_crc.into();
        std::fs::write(&manifest_path, manifest.to_string()).unwrap();
        let err = Dataset::open(&dir)
            .unwrap()
            .into_examples()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("below 4"), "{err}");
        assert!(open_and_verify(&path).is_err());
    }
}

#[test]
fn manifest_and_shards_must_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let m = CsrMatrix::new(
        vec![1.0, -1.0, 1.0],
        vec![0, 1, 2, 3],
        vec![0, 1, 2],
        ValueVec::F32(vec![1.0, 2.0, 3.0]),
        3,
    )
    .unwrap();
    let dir = tmp.path().join("ds");
    write_dataset(&m, &dir, 2, ValueKind::F32);
    assert_eq!(HEADER_LEN % 64, 0);
    std::fs::remove_file(dir.join("shard-000001.csr")).unwrap();
    let err = Dataset::open(&dir).unwrap_err().to_string();
    assert!(err.contains("shard-000001.csr"), "{err}");
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"rows\":3", "\"rows\":4")).unwrap();
    let err = Dataset::open(&dir).unwrap_err().to_string();
    assert!(err.contains("manifest.json"), "{err}");
}

#[test]
fn dropped_writer_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let writer = DatasetWriter::create(&dir, ValueKind::F32).unwrap();
    let parts = ShardParts {
        labels: &[1.0],
        offsets: &[0, 1],
        indices: &[0],
        values: Values::F32(&[2.0]),
        n_features: 1,
    };
    let mut writer = writer;
    writer.write_shard(&parts).unwrap();
    drop(writer);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn renumbering_keeps_rows_up_to_the_permutation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let mut writer = DatasetWriter::create(&dir, ValueKind::F64).unwrap();
    writer
        .write_shard(&ShardParts {
            labels: &[1.0, -1.0],
            offsets: &[0, 2, 4],
            indices: &[0, 2, 1, 2],
            values: Values::F64(&[0.25, 0.5, 0.75, 1.25]),
            n_features: 3,
        })
        .unwrap();
    writer
        .finish(FinishOptions {
            renumber_by_frequency: true,
            column_statistics: true,
            ..FinishOptions::default()
        })
        .unwrap();
    let ds = Dataset::open(&dir).unwrap();
    ds.verify().unwrap();
    assert_eq!(ds.feature_permutation(), Some(&[2u32, 0, 1][..]));
    let stats = ds.column_statistics().unwrap().unwrap();
    assert_eq!(stats.frequencies, vec![2, 1, 1]);
    assert_eq!(
        stats.means,
        vec![(0.5 + 1.25) / 2.0, 0.25 / 2.0, 0.75 / 2.0]
    );
    column_arrays_are_checked_and_version_1_is_read(&dir, &stats);
    let ex = ds.into_examples().unwrap();
    let r = ex.row(0);
    assert_eq!(r.indices, &[0, 1]);
    assert_eq!(r.values, Values::F64(&[0.5, 0.25]));
    let r = ex.row(1);
    assert_eq!(r.indices, &[0, 2]);
    assert_eq!(r.values, Values::F64(&[1.25, 0.75]));
}

/// The column arrays of the dataset at `dir` (renumbered, with statistics `stats`): a
/// corrupted array file is refused naming it; the same dataset with a version-1 manifest
/// (arrays inline as JSON, no header checksums) opens to the same permutation and
/// statistics; version 5 is refused.
fn column_arrays_are_checked_and_version_1_is_read(
    dir: &Path,
    stats: &sparselin::data::columns::ColumnStatistics,
) {
    use sparselin::data::columns::{FREQUENCIES_FILE, MEANS_FILE, PERMUTATION_FILE};
    let manifest_path = dir.join("manifest.json");
    let v3: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    assert_eq!(v3["version"], 3);
    assert_eq!(v3["feature_permutation"]["file"], PERMUTATION_FILE);

    let means = dir.join(MEANS_FILE);
    let good = std::fs::read(&means).unwrap();
    let mut bad = good.clone();
    bad[3] ^= 1;
    std::fs::write(&means, &bad).unwrap();
    let ds = Dataset::open(dir).unwrap(); // statistics are not read on open
    let err = ds.column_statistics().unwrap_err().to_string();
    assert!(
        err.contains(MEANS_FILE) && err.contains("checksum"),
        "{err}"
    );
    std::fs::write(&means, &good).unwrap();
    std::fs::write(dir.join(PERMUTATION_FILE), [0u8; 12]).unwrap();
    let err = Dataset::open(dir).unwrap_err().to_string();
    assert!(err.contains(PERMUTATION_FILE), "{err}");

    let mut v1 = v3.clone();
    v1["version"] = 1.into();
    for entry in v1["shards"].as_array_mut().unwrap() {
        entry
            .as_object_mut()
            .unwrap()
            .remove("header_crc32")
            .unwrap();
    }
    v1["feature_permutation"] = serde_json::json!([2, 0, 1]);
    v1["column_frequencies"] = serde_json::json!(stats.frequencies);
    v1["column_means"] = serde_json::json!(stats.means);
    std::fs::write(&manifest_path, serde_json::to_vec(&v1).unwrap()).unwrap();
    for file in [PERMUTATION_FILE, FREQUENCIES_FILE, MEANS_FILE] {
        std::fs::remove_file(dir.join(file)).unwrap();
    }
    let ds = Dataset::open(dir).unwrap();
    assert_eq!(ds.feature_permutation(), Some(&[2u32, 0, 1][..]));
    assert_eq!(ds.column_statistics().unwrap().as_ref(), Some(stats));

    v1["version"] = 5.into();
    std::fs::write(&manifest_path, serde_json::to_vec(&v1).unwrap()).unwrap();
    let err = Dataset::open(dir).unwrap_err().to_string();
    assert!(err.contains("unsupported manifest version 5"), "{err}");
}

/// Eight rows of two entries each, written as four shards of two rows: the shards differ in
/// content but not in shape (rows, entries, bytes), so only the header checksums the manifest
/// records tell them apart. Returns the dataset directory and its manifest as JSON.
fn same_shaped_shards(tmp: &Path) -> (PathBuf, serde_json::Value) {
    let labels: Vec<f64> = (0..8)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let m = eight_rows(labels);
    let dir = tmp.join("ds");
    write_shards(&m, &dir, &[2, 2, 2, 2], ValueKind::F32);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let shards = manifest["shards"].as_array().unwrap();
    let shape = |e: &serde_json::Value| (e["rows"].clone(), e["nnz"].clone(), e["bytes"].clone());
    assert!(
        shards.iter().all(|e| shape(e) == shape(&shards[0])),
        "{manifest}"
    );
    (dir, manifest)
}

/// The eight rows of [`same_shaped_shards`] with `labels`: two entries each, f32 values.
fn eight_rows(labels: Vec<f64>) -> CsrMatrix {
    let offsets: Vec<u64> = (0..=8).map(|i| 2 * i).collect();
    let indices: Vec<u32> = (0..8).flat_map(|i| [i, i + 3]).collect();
    let values = ValueVec::F32((0..16).map(|k| 0.25 + k as f32).collect());
    CsrMatrix::new(labels, offsets, indices, values, 12).unwrap()
}

/// Dataset::open of `dir` with `manifest` written over its manifest.json.
fn open_with(dir: &Path, manifest: &serde_json::Value) -> Result<Dataset, String> {
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    Dataset::open(dir).map_err(|e| e.to_string())
}

/// A version-3 manifest binds every shard entry to its file's header checksum: entries whose
/// file names were swapped, a file name whose last digit flipped to another shard's, or a
/// damaged checksum are refused on open (the path every command takes), naming the manifest,
/// the entry and the file; a rank's share names the entry by its index in the whole manifest.
#[test]
fn manifest_entries_are_bound_to_their_shard_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, good) = same_shaped_shards(tmp.path());
    assert_eq!(good["version"], 3);
    let manifest_path = dir.join("manifest.json").display().to_string();
    let recorded: Vec<u32> = (0..4)
        .map(|k| {
            let shard = Shard::open(&dir.join(format!("shard-{k:06}.csr"))).unwrap();
            let crc = shard.header().checksum();
            assert_eq!(good["shards"][k]["header_crc32"], crc);
            crc
        })
        .collect();
    let examples = open_with(&dir, &good).unwrap().into_examples().unwrap();
    assert_eq!(examples.n_rows(), 8);

    let mut swapped = good.clone();
    swapped["shards"][1]["file"] = "shard-000002.csr".into();
    swapped["shards"][2]["file"] = "shard-000001.csr".into();
    let err = open_with(&dir, &swapped).unwrap_err();
    let expected = format!(
        "{manifest_path}: shard entry 1 names shard-000002.csr, whose header checksum {:#010x} \
         is not the {:#010x} recorded for it",
        recorded[2], recorded[1]
    );
    assert!(err.starts_with(&expected), "{err}");

    // One bit: "shard-000001.csr" → "shard-000000.csr". The same shard named twice is refused
    // whatever the version; the checksum would refuse it too.
    let mut flipped = good.clone();
    flipped["shards"][1]["file"] = "shard-000000.csr".into();
    let err = open_with(&dir, &flipped).unwrap_err();
    assert!(
        err.starts_with(&manifest_path)
            && err.contains("shard entries 0 and 1 both name shard-000000.csr"),
        "{err}"
    );

    let mut damaged = good.clone();
    damaged["shards"][3]["header_crc32"] = (recorded[3] ^ 1).into();
    let err = open_with(&dir, &damaged).unwrap_err();
    assert!(
        err.contains("shard entry 3 names shard-000003.csr, whose header checksum"),
        "{err}"
    );

    // Rank 1 of 2 opens entries 2 and 3 only; their errors keep the manifest's numbering.
    let mut swapped = good.clone();
    swapped["shards"][2]["file"] = "shard-000003.csr".into();
    swapped["shards"][3]["file"] = "shard-000002.csr".into();
    open_with(&dir, &swapped).unwrap_err();
    let err = Dataset::open_share(&dir, 1, 2).unwrap_err().to_string();
    assert!(
        err.contains("shard entry 2 names shard-000003.csr"),
        "{err}"
    );

    // "version":3 → "version":2 is one bit too: checksums present are checked in any version.
    let mut downgraded = swapped.clone();
    downgraded["version"] = 2.into();
    let err = open_with(&dir, &downgraded).unwrap_err();
    assert!(
        err.contains("shard entry 2 names shard-000003.csr"),
        "{err}"
    );
}

/// A dataset opened again (the C ABI's scaled copy of a handle's rows) is refused when what
/// its directory holds now is another dataset: a handle whose directory was replaced by
/// rename trained on the new rows, and cross-validation panicked on their other row count.
#[test]
fn a_dataset_reopened_after_its_directory_was_replaced_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = same_shaped_shards(tmp.path());
    let opened = Dataset::open(&dir).unwrap();
    let again = opened.reopen().unwrap();
    assert_eq!(again.manifest(), opened.manifest());
    // Another dataset of the same shape, in place of the first.
    let other = eight_rows(vec![-1.0; 8]);
    let replacement = tmp.path().join("other");
    write_shards(&other, &replacement, &[2, 2, 2, 2], ValueKind::F32);
    std::fs::rename(&dir, tmp.path().join("old")).unwrap();
    std::fs::rename(&replacement, &dir).unwrap();
    let err = opened.reopen().unwrap_err().to_string();
    assert!(
        err.contains("is not the dataset this one was opened from"),
        "{err}"
    );
    // The handle's own maps still read its own rows.
    let rows = opened.into_examples().unwrap();
    assert!((0..8).all(|i| rows.row(i).label == if i % 2 == 0 { 1.0 } else { -1.0 }));
}

/// A manifest member of a name this build does not know is refused, at every level: a bit
/// flipped in the name of an optional member would otherwise drop it unseen (the renumbered
/// dataset's permutation: models in the wrong feature ids, and `verify` passed).
#[test]
fn a_manifest_member_of_an_unknown_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, good) = same_shaped_shards(tmp.path());
    let rename = |value: &mut serde_json::Value, from: &str, to: &str| {
        let object = value.as_object_mut().unwrap();
        let member = object.remove(from).unwrap();
        object.insert(to.into(), member);
    };
    let mut top = good.clone();
    rename(&mut top, "column_means", "column_meant");
    let mut shard = good.clone();
    rename(&mut shard["shards"][1], "header_crc32", "header_crc22");
    for (manifest, unknown) in [(top, "column_meant"), (shard, "header_crc22")] {
        let err = open_with(&dir, &manifest).unwrap_err();
        assert!(
            err.contains("manifest.json: bad manifest: unknown field `") && err.contains(unknown),
            "{err}"
        );
    }
    open_with(&dir, &good).unwrap();
}

/// Version 2 (no header checksums) still opens and reads the same rows; version 3 without a
/// checksum, version 4 without the sample weights it is the version of (or version 3 with
/// them), and version 5, are refused.
#[test]
fn manifest_versions_2_and_3_are_read_and_4_only_with_weights() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, good) = same_shaped_shards(tmp.path());
    let expected = Dataset::open(&dir).unwrap().into_examples().unwrap();

    let mut v2 = good.clone();
    v2["version"] = 2.into();
    for entry in v2["shards"].as_array_mut().unwrap() {
        entry
            .as_object_mut()
            .unwrap()
            .remove("header_crc32")
            .unwrap();
    }
    let dataset = open_with(&dir, &v2).unwrap();
    dataset.verify().unwrap();
    assert_same(&dataset.into_examples().unwrap(), &expected);
    // The same shard named twice is refused in version 2 as well.
    let mut flipped = v2.clone();
    flipped["shards"][1]["file"] = "shard-000000.csr".into();
    let err = open_with(&dir, &flipped).unwrap_err();
    assert!(err.contains("shard entries 0 and 1 both name"), "{err}");

    let mut missing = good.clone();
    missing["shards"][2]
        .as_object_mut()
        .unwrap()
        .remove("header_crc32");
    let err = open_with(&dir, &missing).unwrap_err();
    assert!(
        err.contains("manifest.json: shard entry 2 (shard-000002.csr) has no header_crc32"),
        "{err}"
    );

    let mut v4 = good.clone();
    v4["version"] = 4.into();
    let err = open_with(&dir, &v4).unwrap_err();
    assert!(
        err.contains("manifest.json: manifest version 4 without sample weights"),
        "{err}"
    );
    let mut weighted_v3 = good.clone();
    weighted_v3["sample_weights"] =
        serde_json::json!({"file": "sample_weights.f64", "bytes": 8, "crc32": 0});
    let err = open_with(&dir, &weighted_v3).unwrap_err();
    assert!(
        err.contains("manifest.json: manifest version 3 with sample weights"),
        "{err}"
    );
    let mut v5 = good.clone();
    v5["version"] = 5.into();
    let err = open_with(&dir, &v5).unwrap_err();
    assert!(
        err.contains(
            "manifest.json: unsupported manifest version 5 (this build reads versions 1 to 4)"
        ),
        "{err}"
    );
}
