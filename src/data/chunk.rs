//! The fast LIBSVM parser: one newline-aligned chunk of text at a time, no allocation per
//! token or per line, numbers parsed straight from bytes ([`number`](super::number)): an
//! `index:value` token in its common form is scanned in one pass of 8-byte loads
//! ([`scan_entry`]) and rounded by Clinger's fast path, any other token goes through the
//! general readers (SWAR digits for indices, `fast-float2` for values); every value is
//! bit-identical to `str::parse`.
//!
//! It accepts exactly what [`libsvm::parse_line`](super::libsvm::parse_line) — the simple
//! reference parser — accepts and produces the same rows (the property tests hold the two
//! together). On a malformed line it stops and asks the reference parser to describe the
//! problem, so both report the same `line:column: message`.

use super::libsvm::{merge_duplicates, parse_line};
use super::number::{TextValue, is_zero_text, parse_u64_prefix, scan_entry};

/// Rows parsed from one chunk, in CSR form, values in the storage precision `V`.
#[derive(Clone, Debug, Default)]
pub struct ChunkRows<V> {
    /// One label per row.
    pub labels: Vec<f64>,
    /// Row offsets into `indices`, `labels.len() + 1` of them, starting at 0.
    pub offsets: Vec<u64>,
    /// Column indices (0-based), strictly increasing within each row.
    pub indices: Vec<u32>,
    /// Values parallel to `indices`, never zero.
    pub values: Vec<V>,
    /// One importance weight per row when the format has them (Vowpal Wabbit text), else
    /// empty.
    pub weights: Vec<f64>,
    /// Newlines in the chunk (lines consumed, including blank and comment lines).
    pub lines: u64,
    /// Every stored value equals 1.0.
    pub all_ones: bool,
    /// Largest index seen plus one (0 when there are no entries).
    pub columns: usize,
}

impl<V> ChunkRows<V> {
    /// Empty, keeping the buffers: no rows, offsets `[0]`, all ones, no columns.
    pub fn clear(&mut self) {
        self.labels.clear();
        self.offsets.clear();
        self.indices.clear();
        self.values.clear();
        self.weights.clear();
        self.offsets.push(0);
        self.lines = 0;
        self.all_ones = true;
        self.columns = 0;
    }
}

/// A malformed line inside a chunk: 1-based line within the chunk, column and message.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkError {
    /// Line number counted from the chunk's first line (1-based).
    pub line: u64,
    /// 1-based byte column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// Parse every line of `text` (which should end at a line boundary; a final line without a
/// newline is parsed too).
pub fn parse_chunk<V: TextValue>(
    text: &[u8],
    zero_based: bool,
) -> Result<ChunkRows<V>, ChunkError> {
    let mut out = ChunkRows::default();
    parse_chunk_into(text, zero_based, &mut out)?;
    Ok(out)
}

/// [`parse_chunk`] into a reused `out` (cleared first): converting a large file recycles the
/// same buffers instead of allocating (and page-faulting in) fresh ones per chunk.
pub fn parse_chunk_into<V: TextValue>(
    text: &[u8],
    zero_based: bool,
    out: &mut ChunkRows<V>,
) -> Result<(), ChunkError> {
    out.clear();
    // About 15 bytes of text per entry in typical files: reserve once instead of growing.
    out.indices.reserve(text.len() / 12);
    out.values.reserve(text.len() / 12);
    let mut scratch: Vec<(u32, V)> = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |k| start + k);
        out.lines += 1;
        if parse_one(text, start, end, zero_based, out, &mut scratch).is_none() {
            return Err(describe::<V>(&text[start..end], zero_based, out.lines));
        }
        start = end + 1;
    }
    Ok(())
}

/// Ask the reference parser what is wrong with `line`.
fn describe<V: TextValue>(line: &[u8], zero_based: bool, line_no: u64) -> ChunkError {
    let (column, message) = match std::str::from_utf8(line) {
        Ok(text) => match parse_line::<V>(text, zero_based, &mut Vec::new()) {
            Err(e) => e,
            Ok(_) => (1, "malformed line".to_string()),
        },
        Err(e) => (e.valid_up_to() + 1, "invalid UTF-8".to_string()),
    };
    ChunkError {
        line: line_no,
        column,
        message,
    }
}

/// Index of the first separator at or after `pos`, before `end` (or `end`).
#[inline]
fn token_end(bytes: &[u8], mut pos: usize, end: usize) -> usize {
    while pos < end && !is_space(bytes[pos]) {
        pos += 1;
    }
    pos
}

/// Index of the first non-separator at or after `pos`, before `end` (or `end`).
#[inline]
fn skip_spaces(bytes: &[u8], mut pos: usize, end: usize) -> usize {
    // Every separator is at most b' ': one comparison settles the common non-space byte.
    while pos < end && bytes[pos] <= b' ' && is_space(bytes[pos]) {
        pos += 1;
    }
    pos
}

/// Whether a token that ends at `at` (exclusive) ends at a separator or the end of the line's
/// content `end`.
#[inline]
fn ends_token(bytes: &[u8], at: usize, end: usize) -> bool {
    at == end || (at < end && is_space(bytes[at]))
}

/// Parse one `index:value` token starting at `pos` of `text`, within the line's content
/// ending at `end`: the index digits up to `:`, then a finite value that must end at a
/// separator, and zero only when written as zero (not a number that underflowed in `V`). The
/// number readers may look past `end` (at the `#` or newline there, or further), so each
/// result is checked to lie within it. Returns (raw index, value, position after the token).
/// (The fast path, [`scan_entry`] and [`TextValue::from_decimal`], gives zero only for a zero
/// mantissa.)
#[inline]
fn parse_entry<V: TextValue>(text: &[u8], pos: usize, end: usize) -> Option<(u64, V, usize)> {
    let (raw, used) = parse_u64_prefix(&text[pos..])?;
    let colon = pos + used;
    if colon >= end || text[colon] != b':' {
        return None;
    }
    let (value, used) = V::parse_prefix(&text[colon + 1..])?;
    let after = colon + 1 + used;
    let kept = value != V::ZERO || is_zero_text(&text[colon + 1..after]);
    (used > 0 && ends_token(text, after, end) && value.is_finite() && kept)
        .then_some((raw, value, after))
}

/// Parse the line `text[start..end]` (without its newline) into `out`; `None` if it is
/// malformed (nothing is appended then).
#[inline]
fn parse_one<V: TextValue>(
    text: &[u8],
    start: usize,
    end: usize,
    zero_based: bool,
    out: &mut ChunkRows<V>,
    scratch: &mut Vec<(u32, V)>,
) -> Option<()> {
    let end = memchr::memchr(b'#', &text[start..end]).map_or(end, |hash| start + hash);
    let first = skip_spaces(text, start, end);
    if first == end {
        return Some(()); // blank or comment-only line
    }
    let (label, used) = f64::parse_prefix(&text[first..])?;
    let mut pos = first + used;
    if !ends_token(text, pos, end) || !label.is_finite() {
        return None;
    }
    let row_start = out.indices.len();
    let one_based = u64::from(!zero_based);
    let (mut sorted, mut ones) = (true, true);
    // The previous index plus one (0 before the first), so "sorted" is `index >= next`.
    let mut next: u64 = 0;
    loop {
        pos = skip_spaces(text, pos, end);
        if pos == end {
            break;
        }
        let fast = scan_entry(text, pos).and_then(|(raw, decimal, after)| {
            Some((raw, V::from_decimal(decimal)?, after)).filter(|_| after <= end)
        });
        if fast.is_none() && text[pos] == b'q' && text[pos..end].starts_with(b"qid:") {
            pos = token_end(text, pos, end);
            continue;
        }
        let entry = fast
            .or_else(|| parse_entry(text, pos, end))
            .and_then(|(raw, value, after)| {
                let index = raw.checked_sub(one_based)?;
                (index <= u64::from(u32::MAX)).then_some((index, value, after))
            });
        let Some((index, value, after)) = entry else {
            out.indices.truncate(row_start);
            out.values.truncate(row_start);
            return None;
        };
        sorted &= index >= next;
        ones &= value == V::ONE;
        next = index + 1;
        out.indices.push(index as u32);
        out.values.push(value);
        pos = after;
    }
    if !sorted {
        normalize(out, row_start, scratch)?;
        ones = out.values[row_start..].iter().all(|&v| v == V::ONE);
    } else if !ones {
        drop_zeros(out, row_start);
    }
    out.all_ones &= ones;
    if let Some(&last) = out.indices[row_start..].last() {
        out.columns = out.columns.max(last as usize + 1);
    }
    out.labels.push(label);
    out.offsets.push(out.indices.len() as u64);
    Some(())
}

/// Remove explicit zeros from the row starting at `start` (already strictly increasing).
fn drop_zeros<V: TextValue>(out: &mut ChunkRows<V>, start: usize) {
    if out.values[start..].contains(&V::ZERO) {
        let mut kept = start;
        for k in start..out.values.len() {
            if out.values[k] != V::ZERO {
                out.indices[kept] = out.indices[k];
                out.values[kept] = out.values[k];
                kept += 1;
            }
        }
        out.indices.truncate(kept);
        out.values.truncate(kept);
    }
}

/// Sort the row starting at `start` (stable), merge duplicates by adding their values in
/// order and drop zeros: the reference parser's rules. `None` (row removed) if a merged
/// value is not finite.
fn normalize<V: TextValue>(
    out: &mut ChunkRows<V>,
    start: usize,
    scratch: &mut Vec<(u32, V)>,
) -> Option<()> {
    scratch.clear();
    scratch.extend(
        out.indices[start..]
            .iter()
            .copied()
            .zip(out.values[start..].iter().copied()),
    );
    merge_duplicates(scratch);
    out.indices.truncate(start);
    out.values.truncate(start);
    if scratch.iter().any(|e| !e.1.is_finite()) {
        return None;
    }
    for &(j, v) in scratch.iter().filter(|e| e.1 != V::ZERO) {
        out.indices.push(j);
        out.values.push(v);
    }
    Some(())
}

/// Split `text` into about `pieces` parts, each ending just after a newline (the last one
/// at the end of `text`).
pub fn split_at_newlines(text: &[u8], pieces: usize) -> Vec<&[u8]> {
    let target = text.len().div_ceil(pieces.max(1)).max(1);
    let mut parts = Vec::with_capacity(pieces);
    let mut rest = text;
    while rest.len() > target {
        match memchr::memchr(b'\n', &rest[target..]) {
            Some(k) => {
                let (head, tail) = rest.split_at(target + k + 1);
                parts.push(head);
                rest = tail;
            }
            None => break,
        }
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts
}
