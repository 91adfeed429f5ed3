//! LIBSVM / SVMlight text: `label idx:val idx:val ... # comment`.
//!
//! Labels are ±1, 0/1 or real and are kept as written (`f64`). `qid:` tokens and `#` comments
//! are accepted and ignored, blank lines are skipped. Indices are 1-based unless
//! [`ParseOptions::zero_based`]. Values are read in the storage precision
//! ([`ValueType`]): each is exactly `str::parse::<f32>` or `str::parse::<f64>` of its text,
//! and a number that precision cannot hold (`1e39` or `1e-50` as `f32`: it would round to
//! infinity, or to 0 and be dropped) is an error that says so.
//! Within a row indices are sorted, duplicates merged (values added in that precision, in
//! order of appearance) and zero values dropped, so every parsed row satisfies the
//! invariants of [`Row`](super::Row).
//!
//! [`read_file`] is the reader for real use (the chunk-parallel parser of
//! [`stream`](super::stream)); [`read`] and [`parse_line`] are the simple, line-at-a-time
//! reference that the fast parser is tested against and asks to describe malformed lines.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::csr::CsrMatrix;
use super::error::DataError;
use super::number::{TextValue, is_zero_text};

/// Precision the parsed values are stored in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValueType {
    /// `f32`, the shard format's default.
    #[default]
    F32,
    /// `f64`, exact for references computed in double precision.
    F64,
}

/// How to read the text.
#[derive(Clone, Copy, Debug, Default)]
pub struct ParseOptions {
    /// Indices in the file start at 0 instead of 1.
    pub zero_based: bool,
    /// Storage precision of the values.
    pub value_type: ValueType,
    /// Declared feature count; `None` takes the largest index seen plus one.
    pub n_features: Option<usize>,
}

/// A malformed input, located as `file:line:column` (1-based line and column).
#[derive(Debug, thiserror::Error)]
pub enum LibsvmError {
    /// The text itself is malformed.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// The file's name.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// An index at or beyond the declared feature count (`--features`, a `meta.json`, a
    /// model's dimension), located where it is written. A variant of its own so that a
    /// caller can say where the declared count came from.
    #[error("{file}:{line}:{column}: index {index} is beyond the declared {declared} features")]
    BeyondDeclared {
        /// The file's name.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column of the `index:value` token.
        column: usize,
        /// The index as written (1-based unless the file is zero-based).
        index: u64,
        /// The declared feature count.
        declared: usize,
    },
    /// The file could not be read.
    #[error("{file}: {reason}")]
    Io {
        /// The file's name.
        file: String,
        /// What the system said (part of the message, so not also a `source()`).
        reason: std::io::Error,
    },
}

/// Read a whole LIBSVM file (`-` for standard input; gzip recognized by its magic bytes)
/// into memory with the chunk-parallel parser that `sparselin convert` uses.
pub fn read_file(path: &Path, options: ParseOptions) -> Result<CsrMatrix, DataError> {
    super::stream::read_matrix(path, options)
}

/// Read LIBSVM text from any reader, one line at a time: the reference reader (`name` is
/// used in error messages).
pub fn read<R: Read>(
    reader: R,
    name: &str,
    options: ParseOptions,
) -> Result<CsrMatrix, LibsvmError> {
    match options.value_type {
        ValueType::F32 => read_typed::<f32, R>(reader, name, options),
        ValueType::F64 => read_typed::<f64, R>(reader, name, options),
    }
}

fn read_typed<V: TextValue, R: Read>(
    reader: R,
    name: &str,
    options: ParseOptions,
) -> Result<CsrMatrix, LibsvmError> {
    let mut reader = BufReader::new(reader);
    let mut labels = Vec::new();
    let mut offsets = vec![0u64];
    let mut indices = Vec::new();
    let mut values = Vec::new();
    let mut entries = Vec::new();
    let mut line = String::new();
    let mut line_no = 0u64;
    loop {
        line.clear();
        let read = reader
            .read_line(&mut line)
            .map_err(|reason| LibsvmError::Io {
                file: name.to_string(),
                reason,
            })?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let Some(label) = parse_line::<V>(&line, options.zero_based, &mut entries).map_err(
            |(column, message)| LibsvmError::Syntax {
                file: name.to_string(),
                line: line_no,
                column,
                message,
            },
        )?
        else {
            continue;
        };
        // Entries are sorted: the last one has the largest index of the line.
        let beyond = options
            .n_features
            .filter(|&n| entries.last().is_some_and(|e| e.0 as usize >= n))
            .and_then(|n| Some((n, find_beyond(line.as_bytes(), options.zero_based, n)?)));
        if let Some((declared, (_, column, index))) = beyond {
            return Err(LibsvmError::BeyondDeclared {
                file: name.to_string(),
                line: line_no,
                column,
                index,
                declared,
            });
        }
        labels.push(label);
        for &(index, value) in &entries {
            indices.push(index);
            values.push(value);
        }
        offsets.push(indices.len() as u64);
    }
    let seen = indices.iter().max().map_or(0, |&m| m as usize + 1);
    let n_features = options.n_features.unwrap_or(seen);
    Ok(
        CsrMatrix::new(labels, offsets, indices, V::value_vec(values), n_features)
            .expect("parser output satisfies CSR invariants"),
    )
}

/// Where the first index at or beyond `declared` columns is in `text`, lines that parsed
/// (so every `index:value` token is well formed): its 1-based line and column, and the
/// index as written. Run only once such an index is known to be there, so it is kept simple
/// rather than fast.
pub(super) fn find_beyond(
    text: &[u8],
    zero_based: bool,
    declared: usize,
) -> Option<(u64, usize, u64)> {
    for (line_no, line) in (1..).zip(text.split(|&b| b == b'\n')) {
        let content = line.split(|&b| b == b'#').next().unwrap_or_default();
        let mut at = 0;
        // Whitespace-separated tokens with their offsets; the first is the label.
        let tokens = content.split(u8::is_ascii_whitespace).filter_map(|token| {
            let offset = at;
            at += token.len() + 1;
            (!token.is_empty()).then_some((offset, token))
        });
        for (offset, token) in tokens.skip(1) {
            let Some(colon) = token.iter().position(|&b| b == b':') else {
                continue;
            };
            let written = std::str::from_utf8(&token[..colon])
                .ok()
                .and_then(|digits| digits.parse::<u64>().ok());
            let beyond = |&index: &u64| {
                !token.starts_with(b"qid:")
                    && index.saturating_sub(u64::from(!zero_based)) >= declared as u64
            };
            if let Some(index) = written.filter(beyond) {
                return Some((line_no, offset + 1, index));
            }
        }
    }
    None
}

/// A token as an error message quotes it: invisible characters (a byte-order mark, NUL)
/// escaped, and cut after [`QUOTED_CHARS`] characters, so that a 50 MB token on a line
/// without spaces does not make a 50 MB message.
fn quoted(token: &str) -> String {
    let mut shown: String = token
        .chars()
        .take(QUOTED_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if token.chars().nth(QUOTED_CHARS).is_some() {
        shown.push('…');
    }
    format!("'{shown}'")
}

/// Characters of a token an error message quotes.
const QUOTED_CHARS: usize = 40;

/// Parse one line into `entries` (sorted, merged, zeros dropped) and return its label, or
/// `None` for a blank or comment-only line. Values are read as `V` (`f32` or `f64`).
/// Errors carry the 1-based column and a message.
pub fn parse_line<V: TextValue>(
    line: &str,
    zero_based: bool,
    entries: &mut Vec<(u32, V)>,
) -> Result<Option<f64>, (usize, String)> {
    entries.clear();
    let content = line.split('#').next().unwrap_or("");
    let mut tokens = tokens_with_columns(content);
    let Some((column, label_text)) = tokens.next() else {
        return Ok(None);
    };
    let label: f64 = parse_finite::<f64>(label_text).ok_or_else(|| {
        let why = match f64::parse_str(label_text) {
            Some(_) if has_digit(label_text) => "is beyond the range of f64",
            Some(_) => "is not a finite number",
            None => "is not a number",
        };
        (column, format!("label {} {why}", quoted(label_text)))
    })?;
    for (column, token) in tokens {
        if token.starts_with("qid:") {
            continue;
        }
        let (index_text, value_text) = token.split_once(':').ok_or_else(|| {
            // A namespace bar on the line: Vowpal Wabbit text given as LIBSVM.
            let hint = if content.contains('|') {
                " (Vowpal Wabbit text? `sparselin convert --format vw` reads it)"
            } else {
                ""
            };
            (
                column,
                format!("expected index:value, found {}{hint}", quoted(token)),
            )
        })?;
        let raw: u64 = index_text.parse().map_err(|_| {
            let digits = !index_text.is_empty() && index_text.bytes().all(|b| b.is_ascii_digit());
            let message = if digits {
                format!("index {} exceeds 2^32 − 1", quoted(index_text))
            } else {
                format!("index {} is not a non-negative integer", quoted(index_text))
            };
            (column, message)
        })?;
        let index = if zero_based {
            raw
        } else {
            raw.checked_sub(1).ok_or((
                column,
                "index 0 in a 1-based file (use --zero-based)".to_string(),
            ))?
        };
        let index =
            u32::try_from(index).map_err(|_| (column, format!("index {raw} exceeds 2^32 − 1")))?;
        let value = parse_value::<V>(value_text)
            .map_err(|message| (column + index_text.len() + 1, message))?;
        entries.push((index, value));
    }
    merge_duplicates(entries);
    if let Some(e) = entries.iter().find(|e| !e.1.is_finite()) {
        let id = u64::from(e.0) + u64::from(!zero_based);
        return Err((
            1,
            format!("the values of index {id} sum to a non-finite number"),
        ));
    }
    entries.retain(|e| e.1 != V::ZERO);
    Ok(Some(label))
}

/// Rows at least this long are sorted by a radix sort, shorter ones by comparisons: on
/// random 18-bit indices the radix sort took 1.17× the comparison sort's time at 64 entries,
/// 0.87× at 128 and 0.52× at 256 (PERF.md `### Vowpal Wabbit interactions`).
const RADIX_SORTED_ROW: usize = 128;

/// Sort a row's entries by index (stable) and merge each index's values into one, added in
/// order of appearance in `V`: the text formats' rule for an index given twice.
pub(super) fn merge_duplicates<V: TextValue>(entries: &mut Vec<(u32, V)>) {
    if !entries.is_sorted_by_key(|e| e.0) {
        match entries.len() >= RADIX_SORTED_ROW {
            true => radsort::sort_by_key(entries, |e| e.0),
            false => entries.sort_by_key(|e| e.0),
        }
    }
    entries.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            kept.1 = kept.1.add(later.1);
            true
        } else {
            false
        }
    });
}

fn parse_finite<V: TextValue>(text: &str) -> Option<V> {
    V::parse_str(text).filter(|v| v.is_finite())
}

/// A value's text as `V`: a finite number that `V` holds. A finite non-zero number that
/// rounds to infinity or to zero in `V` is refused with a message naming the storage (the
/// default `f32` suggests `--values f64`), rather than called "not a finite number" or
/// silently dropped as a zero.
fn parse_value<V: TextValue>(text: &str) -> Result<V, String> {
    let out_of_range = |rounds_to: &str| {
        let wider_holds = text.parse::<f64>().is_ok_and(|v| v.is_finite() && v != 0.0);
        let hint = if V::NAME == "f32" && wider_holds {
            "; convert with --values f64 to keep it"
        } else {
            ""
        };
        format!(
            "value {} is outside what {} storage holds (it rounds to {rounds_to}{hint})",
            quoted(text),
            V::NAME
        )
    };
    match V::parse_str(text) {
        Some(v) if v.is_finite() && (v != V::ZERO || is_zero_text(text.as_bytes())) => Ok(v),
        Some(v) if v.is_finite() => Err(out_of_range("0")),
        Some(_) if has_digit(text) => Err(out_of_range("infinity")),
        _ => Err(format!("value {} is not a finite number", quoted(text))),
    }
}

/// Whether a number's text has a digit: a non-finite number parsed from such text is one
/// beyond the precision's range (only `inf`, `infinity` and `nan` parse to a non-finite value
/// without a digit).
fn has_digit(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit())
}

/// Whitespace-separated tokens with their 1-based byte column.
fn tokens_with_columns(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_ascii_whitespace()
        .map(move |token| (token.as_ptr() as usize - text.as_ptr() as usize + 1, token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Examples;

    #[test]
    fn sorts_merges_and_drops_zeros() {
        let text = "+1 3:1.5 1:2 3:0.5 qid:7 5:0 # comment\n\n# only a comment\n-1 2:1\n";
        let m = read(text.as_bytes(), "t", ParseOptions::default()).unwrap();
        assert_eq!(m.n_rows(), 2);
        let r = m.row(0);
        assert_eq!(r.label, 1.0);
        assert_eq!(r.indices, &[0, 2]);
        assert_eq!(r.values, crate::data::Values::F32(&[2.0, 2.0]));
        assert_eq!(m.n_features(), 3);
    }

    #[test]
    fn errors_name_line_and_column() {
        let err = read(
            "1 1:2\n-1 4:x\n".as_bytes(),
            "f.svm",
            ParseOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.svm:2:6: value 'x' is not a finite number"
        );
        let err = read("1 0:2\n".as_bytes(), "f.svm", ParseOptions::default()).unwrap_err();
        assert!(err.to_string().starts_with("f.svm:1:3: index 0"), "{err}");
    }

    #[test]
    fn errors_quote_tokens_short_and_visible() {
        let message = |text: String| {
            read(text.as_bytes(), "f.svm", ParseOptions::default())
                .unwrap_err()
                .to_string()
        };
        let long = format!("1 {}", "7".repeat(100_000));
        let shown = format!("'{}…'", "7".repeat(40));
        assert_eq!(
            message(long),
            format!("f.svm:1:3: expected index:value, found {shown}")
        );
        assert_eq!(
            message("\u{feff}1 1:2\n".into()),
            "f.svm:1:1: label '\\u{feff}1' is not a number"
        );
        assert_eq!(
            message("1e400 1:2\n".into()),
            "f.svm:1:1: label '1e400' is beyond the range of f64"
        );
        for label in ["nan", "-inf", "Infinity"] {
            assert_eq!(
                message(format!("{label} 1:2\n")),
                format!("f.svm:1:1: label '{label}' is not a finite number")
            );
        }
        assert_eq!(
            message("1 2 'tag |f a b:2\n".into()),
            "f.svm:1:3: expected index:value, found '2' (Vowpal Wabbit text? `sparselin \
             convert --format vw` reads it)"
        );
        assert_eq!(
            message("1 99999999999999999999:1\n".into()),
            "f.svm:1:3: index '99999999999999999999' exceeds 2^32 − 1"
        );
    }
}
