//! One binary CSR shard: a fixed little-endian header and 64-byte-aligned sections, opened
//! in O(1) by memory-mapping the file and viewing the sections zero-copy.
//!
//! Layout (all integers little-endian; byte offsets from the start of the file, see FORMAT.md):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `SPLNSHRD` |
//! | 8 | 4 | format version (u32, [`VERSION`]) |
//! | 12 | 4 | header length (u32, [`HEADER_LEN`]) |
//! | 16 | 4 | value type (u32: 0 all-ones, no value section; 1 f32; 2 f64) |
//! | 20 | 4 | flags (u32, must be 0) |
//! | 24 | 8 | rows (u64) |
//! | 32 | 8 | columns (u64) |
//! | 40 | 8 | non-zeros (u64) |
//! | 48 | 8 | file length in bytes (u64) |
//! | 56 | 4 × 24 | sections labels, row offsets, indices, values: offset u64, length u64, CRC-32 u32, 0 u32 |
//! | 152 | 4 | CRC-32 of bytes 0..152 |
//! | 156 | 36 | zero |
//!
//! Sections: labels `f64 × rows`, row offsets `u64 × (rows + 1)`, column indices
//! `u32 × nnz` (strictly increasing within a row), values `f32 | f64 × nnz` (empty for
//! all-ones data). Each starts at a multiple of 64 and they follow each other in that order.
//!
//! Opening checks the header (magic, version, header checksum, counts, and that every section
//! lies inside the file where its count says it should) and reads nothing else except the
//! first and last row offset. [`Shard::check_rows`] checks the row invariants (O(nnz)), proves
//! the bound of the index section that rows hand to the kernels (see
//! [`Shard::bounded_indices`]), and
//! [`Shard::verify`] adds the section checksums. The CRC-32 is `crc32fast` (already a
//! dependency, hardware-accelerated, and a standard checksum another tool can recompute).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use sparselin_kernels::BoundedIndices;
use sparselin_kernels::mmap::{IndexedMap, map_read_only};
use sparselin_kernels::{RowBlock, Values, sparse};

use super::csr::Row;
use super::error::DataError;
use super::row_checks::{all_finite, increasing_below};

/// First eight bytes of every shard.
pub const MAGIC: [u8; 8] = *b"SPLNSHRD";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;
/// Length of the fixed header; the first section starts here.
pub const HEADER_LEN: usize = 192;
/// Every section starts at a multiple of this.
pub const ALIGN: usize = 64;
const HEADER_CRC_AT: usize = 152;
const SECTIONS_AT: usize = 56;

/// How the values of a shard (and of a dataset) are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// Binary data: every stored entry is 1.0, no value section.
    Ones,
    /// `f32` values (the default).
    F32,
    /// `f64` values (exact for double-precision references).
    F64,
}

impl ValueKind {
    fn code(self) -> u32 {
        match self {
            ValueKind::Ones => 0,
            ValueKind::F32 => 1,
            ValueKind::F64 => 2,
        }
    }

    fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(ValueKind::Ones),
            1 => Some(ValueKind::F32),
            2 => Some(ValueKind::F64),
            _ => None,
        }
    }

    /// Bytes per stored value (0 for all-ones).
    pub fn width(self) -> usize {
        match self {
            ValueKind::Ones => 0,
            ValueKind::F32 => 4,
            ValueKind::F64 => 8,
        }
    }

    /// The kind of a borrowed value slice.
    pub fn of(values: &Values<'_>) -> Self {
        match values {
            Values::Ones => ValueKind::Ones,
            Values::F32(_) => ValueKind::F32,
            Values::F64(_) => ValueKind::F64,
        }
    }
}

impl std::fmt::Display for ValueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ValueKind::Ones => "ones",
            ValueKind::F32 => "f32",
            ValueKind::F64 => "f64",
        })
    }
}

/// The four sections, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `f64` per row.
    Labels,
    /// `u64` per row, plus one.
    Offsets,
    /// `u32` per stored entry.
    Indices,
    /// `f32`/`f64` per stored entry, or empty.
    Values,
}

const SECTIONS: [Section; 4] = [
    Section::Labels,
    Section::Offsets,
    Section::Indices,
    Section::Values,
];

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Section::Labels => "labels",
            Section::Offsets => "row offsets",
            Section::Indices => "indices",
            Section::Values => "values",
        })
    }
}

#[derive(Clone, Copy, Debug)]
struct SectionEntry {
    offset: usize,
    len: usize,
    crc: u32,
}

/// The decoded, validated header of a shard.
#[derive(Clone, Debug)]
pub struct Header {
    /// Rows in this shard.
    pub n_rows: usize,
    /// Column count of the dataset the shard belongs to; every index is below it.
    pub n_features: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Storage of the values.
    pub value_kind: ValueKind,
    sections: [SectionEntry; 4],
    checksum: u32,
}

impl Header {
    /// The header's own CRC-32 (bytes 152..156, over bytes 0..152: counts, length and every
    /// section checksum), which a version-3 manifest records to bind each entry to its file.
    pub fn checksum(&self) -> u32 {
        self.checksum
    }
}

/// An open, memory-mapped shard whose header and bounds have been validated.
#[derive(Debug)]
pub struct Shard {
    path: PathBuf,
    /// The file, with its index section's bound proven on first use.
    map: IndexedMap,
    header: Header,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Round `n` up to a multiple of [`ALIGN`].
fn align_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

impl Shard {
    /// Map `path` and validate its header and section bounds (O(1): the data is not read).
    pub fn open(path: &Path) -> Result<Shard, DataError> {
        let file = File::open(path).map_err(|e| DataError::io(path, e))?;
        let len = file.metadata().map_err(|e| DataError::io(path, e))?.len();
        if len < HEADER_LEN as u64 {
            return Err(DataError::invalid(
                path,
                format!("truncated shard: {len} bytes, shorter than the {HEADER_LEN}-byte header"),
            ));
        }
        let map = map_read_only(&file).map_err(|e| DataError::io(path, e))?;
        let header = parse_header(&map).map_err(|m| DataError::invalid(path, m))?;
        let e = header.sections[Section::Indices as usize];
        // `parse_header` checked that the section lies in the file at a multiple of 64.
        let map = IndexedMap::new(map, e.offset..e.offset + e.len).ok_or_else(|| {
            DataError::invalid(path, "index section is not aligned u32s inside the file")
        })?;
        let shard = Shard {
            path: path.to_path_buf(),
            map,
            header,
        };
        let offsets = shard.offsets();
        let (first, last) = (offsets[0], offsets[shard.header.n_rows]);
        if first != 0 || last != shard.header.nnz as u64 {
            return Err(DataError::invalid(
                path,
                format!(
                    "row offsets run {first}..{last}, expected 0..{} (corrupted shard)",
                    shard.header.nnz
                ),
            ));
        }
        Ok(shard)
    }

    /// The file this shard was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The validated header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> usize {
        self.map.bytes().len()
    }

    fn section_bytes(&self, section: Section) -> &[u8] {
        let e = self.header.sections[section as usize];
        &self.map.bytes()[e.offset..e.offset + e.len]
    }

    /// Labels, one per row.
    pub fn labels(&self) -> &[f64] {
        // Alignment (64-byte section in a page-aligned map) and length were checked at open.
        bytemuck::cast_slice(self.section_bytes(Section::Labels))
    }

    /// Row offsets, `rows + 1` of them.
    pub fn offsets(&self) -> &[u64] {
        bytemuck::cast_slice(self.section_bytes(Section::Offsets))
    }

    /// All column indices.
    pub fn indices(&self) -> &[u32] {
        self.map.indices()
    }

    /// All column indices with their proven bound (the largest index plus one). The first
    /// call scans the index section once (O(nnz), SIMD); later calls, and every [`Shard::row`]
    /// after it, cost O(1).
    pub fn bounded_indices(&self) -> BoundedIndices<'_> {
        self.map.bounded()
    }

    /// All values.
    pub fn values(&self) -> Values<'_> {
        let bytes = self.section_bytes(Section::Values);
        match self.header.value_kind {
            ValueKind::Ones => Values::Ones,
            ValueKind::F32 => Values::F32(bytemuck::cast_slice(bytes)),
            ValueKind::F64 => Values::F64(bytemuck::cast_slice(bytes)),
        }
    }

    /// Row `i` of this shard. The invariants of [`Row`] hold only after [`Shard::check_rows`]
    /// succeeded; before that the slices are in bounds but may be out of order. Panics if the
    /// offsets of row `i` are out of bounds, which `check_rows` rules out. The indices are a
    /// sub-slice of [`Shard::bounded_indices`] (whose first call scans the section). Views
    /// every section for this one row: [`Shard::rows`] views them once for many rows.
    #[inline]
    pub fn row(&self, i: usize) -> Row<'_> {
        self.rows().row(i)
    }

    /// Typed views of the sections rows are cut from, to cut many rows cheaply (see
    /// [`ShardRows`]).
    #[inline]
    pub fn rows(&self) -> ShardRows<'_> {
        ShardRows {
            labels: self.labels(),
            offsets: self.offsets(),
            indices: self.bounded_indices(),
            values: self.values(),
        }
    }

    /// A hint that row `i` will be read soon: fetches its offsets and label (see
    /// [`crate::data::Examples::prefetch_extent`]).
    #[inline]
    pub fn prefetch_extent(&self, i: usize) {
        sparse::prefetch(self.offsets(), &[i as u32]);
        sparse::prefetch(self.labels(), &[i as u32]);
    }

    /// Check the row invariants (O(nnz)): offsets non-decreasing and within the index section,
    /// indices strictly increasing within each row and below the column count, labels and
    /// values finite. Also proves the index section's bound once ([`Shard::bounded_indices`]),
    /// so that the kernels check each row of this shard in O(1).
    pub fn check_rows(&self) -> Result<(), DataError> {
        let bad = |message: String| DataError::invalid(&self.path, message);
        let (offsets, indices, n) = (self.offsets(), self.indices(), self.header.n_features);
        for (row, pair) in offsets.windows(2).enumerate() {
            let (start, end) = (pair[0], pair[1]);
            if start > end || end > indices.len() as u64 {
                return Err(bad(format!(
                    "row {row}: offsets {start}..{end} are decreasing or past {} entries",
                    indices.len()
                )));
            }
            let row_indices = &indices[start as usize..end as usize];
            if !increasing_below(row_indices, n) {
                return Err(bad(format!(
                    "row {row}: indices are not strictly increasing and below {n}"
                )));
            }
        }
        // Proves the bound the kernels rely on (one scan, kept for every later row). Rows
        // cover the whole section (offsets run 0..nnz, checked at open), so after the loop
        // above this cannot fail; it is reported like the loop's errors all the same.
        let bound = self.bounded_indices().bound();
        if bound > n {
            return Err(bad(format!(
                "index {} is not below the column count {n}",
                bound - 1
            )));
        }
        if let Some(row) = self.labels().iter().position(|l| !l.is_finite()) {
            return Err(bad(format!("row {row}: label is not finite")));
        }
        let finite = match self.values() {
            Values::Ones => true,
            Values::F32(v) => all_finite(v, f32::is_finite),
            Values::F64(v) => all_finite(v, f64::is_finite),
        };
        if !finite {
            return Err(bad("a stored value is not finite".to_string()));
        }
        Ok(())
    }

    /// Recompute every section checksum, then check the row invariants: the full, explicit
    /// integrity pass (`sparselin verify`).
    pub fn verify(&self) -> Result<(), DataError> {
        let mut gap_start = HEADER_LEN;
        for entry in &self.header.sections {
            if self.map.bytes()[gap_start..entry.offset]
                .iter()
                .any(|&b| b != 0)
            {
                return Err(DataError::invalid(
                    &self.path,
                    format!(
                        "padding bytes {gap_start}..{} are not zero: corrupted shard",
                        entry.offset
                    ),
                ));
            }
            gap_start = entry.offset + entry.len;
        }
        for section in SECTIONS {
            self.check_checksum(section)?;
        }
        self.check_rows()
    }

    /// Recompute the checksum of one section and compare it with the header's.
    pub fn check_checksum(&self, section: Section) -> Result<(), DataError> {
        let expected = self.header.sections[section as usize].crc;
        let actual = crc32fast::hash(self.section_bytes(section));
        if actual != expected {
            return Err(DataError::invalid(
                &self.path,
                format!(
                    "{section} section checksum mismatch (stored {expected:08x}, computed {actual:08x}): corrupted shard"
                ),
            ));
        }
        Ok(())
    }

    /// Check what a summary of the rows reads without the indices and values (`sparselin
    /// info`): the checksums of the labels and row offsets, offsets non-decreasing and within
    /// the entries (so that their differences are row lengths) and labels finite. O(rows), far cheaper than
    /// [`Shard::verify`]; the errors are `verify`'s.
    pub fn check_labels_and_offsets(&self) -> Result<(), DataError> {
        self.check_checksum(Section::Labels)?;
        self.check_checksum(Section::Offsets)?;
        let (offsets, nnz) = (self.offsets(), self.header.nnz as u64);
        let bad = |pair: &[u64]| pair[0] > pair[1] || pair[1] > nnz;
        if let Some(row) = offsets.windows(2).position(bad) {
            return Err(DataError::invalid(
                &self.path,
                format!(
                    "row {row}: offsets {}..{} are decreasing or past {} entries",
                    offsets[row],
                    offsets[row + 1],
                    self.header.nnz
                ),
            ));
        }
        if let Some(row) = self.labels().iter().position(|l| !l.is_finite()) {
            return Err(DataError::invalid(
                &self.path,
                format!("row {row}: label is not finite"),
            ));
        }
        Ok(())
    }
}

/// The sections of a shard that rows are cut from, viewed (sliced from the map, cast, and
/// the index bound fetched) once: a row is then a few slice operations, where
/// [`Shard::row`] views every section again. Built by [`Shard::rows`].
#[derive(Clone, Copy, Debug)]
pub struct ShardRows<'a> {
    labels: &'a [f64],
    offsets: &'a [u64],
    indices: BoundedIndices<'a>,
    values: Values<'a>,
}

impl<'a> ShardRows<'a> {
    /// Row `i` of the shard, equal to [`Shard::row`]`(i)`; panics where it does.
    #[inline]
    pub fn row(&self, i: usize) -> Row<'a> {
        let (start, end) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        Row {
            label: self.labels[i],
            indices: self.indices.slice(start..end),
            values: self.values.slice(start..end),
        }
    }

    /// Rows `rows` of the shard as one block; panics past the last row.
    #[inline]
    pub fn block(&self, rows: Range<usize>) -> RowBlock<'a> {
        RowBlock::new(
            &self.offsets[rows.start..rows.end + 1],
            self.indices,
            self.values,
        )
    }

    /// The same rows with `values` (one per stored entry, or binary) in place of the
    /// shard's: its values scaled ([`crate::data::DatasetExamples::scaled`]).
    pub(crate) fn with_values(self, values: Values<'a>) -> ShardRows<'a> {
        ShardRows { values, ..self }
    }

    /// Every stored entry's column index, row after row.
    pub(crate) fn indices(&self) -> &'a [u32] {
        self.indices.as_slice()
    }

    /// Every stored entry's value, row after row.
    pub(crate) fn values(&self) -> Values<'a> {
        self.values
    }

    /// [`Shard::prefetch_extent`].
    #[inline]
    pub fn prefetch_extent(&self, i: usize) {
        sparse::prefetch(self.offsets, &[i as u32]);
        sparse::prefetch(self.labels, &[i as u32]);
    }
}

/// Decode and validate a header against the mapped file; the error is a message without
/// the file name (the caller adds it).
fn parse_header(bytes: &[u8]) -> Result<Header, String> {
    if cfg!(target_endian = "big") {
        return Err("shards are little-endian and this host is big-endian".to_string());
    }
    if bytes[..8] != MAGIC {
        return Err("not a sparselin shard (bad magic bytes)".to_string());
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(format!(
            "unsupported shard format version {version} (this build reads version {VERSION})"
        ));
    }
    let stored_crc = u32_at(bytes, HEADER_CRC_AT);
    if crc32fast::hash(&bytes[..HEADER_CRC_AT]) != stored_crc {
        return Err("header checksum mismatch: corrupted shard header".to_string());
    }
    if bytes[HEADER_CRC_AT + 4..HEADER_LEN].iter().any(|&b| b != 0) {
        return Err("reserved header bytes are not zero: corrupted shard header".to_string());
    }
    let header_len = u32_at(bytes, 12) as usize;
    if header_len != HEADER_LEN {
        return Err(format!("header length {header_len}, expected {HEADER_LEN}"));
    }
    let value_kind = ValueKind::from_code(u32_at(bytes, 16))
        .ok_or_else(|| format!("unknown value type code {}", u32_at(bytes, 16)))?;
    let flags = u32_at(bytes, 20);
    if flags != 0 {
        return Err(format!("unknown flags {flags:#x}"));
    }
    let count = |at: usize, what: &str| {
        usize::try_from(u64_at(bytes, at)).map_err(|_| format!("{what} count too large"))
    };
    let (n_rows, n_features, nnz) = (count(24, "row")?, count(32, "column")?, count(40, "nnz")?);
    let file_len = u64_at(bytes, 48);
    if file_len != bytes.len() as u64 {
        return Err(format!(
            "truncated or extended shard: header says {file_len} bytes, file has {}",
            bytes.len()
        ));
    }
    let too_large = || "counts too large".to_string();
    let expected_len = [
        n_rows.checked_mul(8).ok_or_else(too_large)?,
        n_rows
            .checked_add(1)
            .and_then(|r| r.checked_mul(8))
            .ok_or_else(too_large)?,
        nnz.checked_mul(4).ok_or_else(too_large)?,
        nnz.checked_mul(value_kind.width()).ok_or_else(too_large)?,
    ];
    let mut sections = [SectionEntry {
        offset: 0,
        len: 0,
        crc: 0,
    }; 4];
    let mut end_of_previous = HEADER_LEN;
    for (k, section) in SECTIONS.iter().enumerate() {
        let at = SECTIONS_AT + 24 * k;
        let offset = usize::try_from(u64_at(bytes, at)).map_err(|_| too_large())?;
        let len = usize::try_from(u64_at(bytes, at + 8)).map_err(|_| too_large())?;
        if len != expected_len[k] {
            return Err(format!(
                "{section} section is {len} bytes, expected {} for {n_rows} rows and {nnz} entries",
                expected_len[k]
            ));
        }
        if offset % ALIGN != 0 || offset < end_of_previous {
            return Err(format!(
                "{section} section offset {offset} is not 64-byte aligned after the previous section"
            ));
        }
        let end = offset.checked_add(len).ok_or_else(too_large)?;
        if end > bytes.len() {
            return Err(format!(
                "{section} section ends at byte {end}, past the end of the {}-byte file",
                bytes.len()
            ));
        }
        sections[k] = SectionEntry {
            offset,
            len,
            crc: u32_at(bytes, at + 16),
        };
        end_of_previous = end;
    }
    if end_of_previous != bytes.len() {
        return Err(format!(
            "{} bytes after the last section: corrupted shard",
            bytes.len() - end_of_previous
        ));
    }
    Ok(Header {
        n_rows,
        n_features,
        nnz,
        value_kind,
        sections,
        checksum: stored_crc,
    })
}

/// The arrays of one shard to be written.
#[derive(Clone, Copy, Debug)]
pub struct ShardParts<'a> {
    /// One label per row.
    pub labels: &'a [f64],
    /// `labels.len() + 1` offsets into `indices`, starting at 0.
    pub offsets: &'a [u64],
    /// Column indices, strictly increasing within each row.
    pub indices: &'a [u32],
    /// Values parallel to `indices`, or `Ones`.
    pub values: Values<'a>,
    /// Column count of the dataset.
    pub n_features: usize,
}

/// Write a shard to `path` (created or truncated) and return its length in bytes. The
/// caller is responsible for the invariants of the parts and for writing under a temporary
/// name (see [`DatasetWriter`](super::DatasetWriter)).
pub fn write_shard(path: &Path, parts: &ShardParts<'_>) -> Result<u64, DataError> {
    let io = |e| DataError::io(path, e);
    let value_bytes: &[u8] = match parts.values {
        Values::Ones => &[],
        Values::F32(v) => bytemuck::cast_slice(v),
        Values::F64(v) => bytemuck::cast_slice(v),
    };
    let payloads: [&[u8]; 4] = [
        bytemuck::cast_slice(parts.labels),
        bytemuck::cast_slice(parts.offsets),
        bytemuck::cast_slice(parts.indices),
        value_bytes,
    ];
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    header[16..20].copy_from_slice(&ValueKind::of(&parts.values).code().to_le_bytes());
    header[24..32].copy_from_slice(&(parts.labels.len() as u64).to_le_bytes());
    header[32..40].copy_from_slice(&(parts.n_features as u64).to_le_bytes());
    header[40..48].copy_from_slice(&(parts.indices.len() as u64).to_le_bytes());
    let mut offset = HEADER_LEN;
    for (k, payload) in payloads.iter().enumerate() {
        let at = SECTIONS_AT + 24 * k;
        header[at..at + 8].copy_from_slice(&(offset as u64).to_le_bytes());
        header[at + 8..at + 16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        header[at + 16..at + 20].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
        offset = align_up(offset + payload.len());
    }
    // The file ends right after the last section (no trailing padding).
    let last = SECTIONS_AT + 24 * 3;
    let file_len = u64_at(&header, last) + u64_at(&header, last + 8);
    header[48..56].copy_from_slice(&file_len.to_le_bytes());
    let crc = crc32fast::hash(&header[..HEADER_CRC_AT]);
    header[HEADER_CRC_AT..HEADER_CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());

    let file = File::create(path).map_err(io)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&header).map_err(io)?;
    let mut written = HEADER_LEN;
    let zeros = [0u8; ALIGN];
    for payload in payloads {
        let pad = align_up(written) - written;
        out.write_all(&zeros[..pad]).map_err(io)?;
        out.write_all(payload).map_err(io)?;
        written += pad + payload.len();
    }
    debug_assert_eq!(written as u64, file_len);
    out.flush().map_err(io)?;
    Ok(file_len)
}

/// Rewrite the column count in the header of the shard at `path` (and its header checksum),
/// in place. Used only on shards not yet published (inside a writer's temporary directory),
/// when the column count is known only after every shard was written.
pub fn set_columns(path: &Path, n_features: usize) -> Result<(), DataError> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |e| DataError::io(path, e);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    let mut header = [0u8; HEADER_LEN];
    file.read_exact(&mut header).map_err(io)?;
    if header[..8] != MAGIC {
        return Err(DataError::invalid(
            path,
            "not a sparselin shard (bad magic bytes)",
        ));
    }
    header[32..40].copy_from_slice(&(n_features as u64).to_le_bytes());
    let crc = crc32fast::hash(&header[..HEADER_CRC_AT]);
    header[HEADER_CRC_AT..HEADER_CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(&header).map_err(io)
}
