//! Vowpal Wabbit text: `label [importance] ['tag]|namespace[:scale] feature[:value] ...`.
//!
//! What a linear learner needs of VW's input format, read as VW reads it, so that a file
//! written for `vw` trains here unchanged:
//! * **Labels**: before the first `|`, a label, then optionally an importance weight (the
//!   row's sample weight, 1 when absent). A tag — the last token when it starts with `'`, or
//!   one written right against the `|` — is skipped. A third number (VW's initial
//!   prediction) is refused: a dataset has no place for it. So is a line without a label.
//! * **Namespaces**: each `|` opens one. `|name` names it (its features are hashed with the
//!   name's hash as seed), `|name:s` also scales its values by `s`, and `|` followed by a
//!   space is the default namespace (seed 0).
//! * **Features**: `name` (value 1) or `name:value`. A name is hashed to a column as VW
//!   hashes it by default (`--hash strings`): a name of decimal digits is its number plus the
//!   namespace's seed, any other is MurmurHash3 (x86, 32 bits) seeded by it; the hash keeps
//!   its low `bits` bits (VW's `-b`). So column j of a dataset is the weight VW's `--audit`
//!   shows at index j, and models can be compared weight by weight.
//!
//! Values are read and scaled in the storage precision (VW reads `f32`). A zero value is
//! dropped, as VW drops it; features hashed to one column are summed (a linear model sees
//! their sum either way). Rows then satisfy the invariants of [`Row`](super::Row). Not
//! supported: quadratic and cubic interactions (`-q`, `--cubic`), which are formed while
//! learning, not written in the file, and multi-line examples.

use super::chunk::{ChunkError, ChunkRows};
use super::libsvm::merge_duplicates;
use super::number::TextValue;

/// The most hash bits: columns are `u32`.
pub const MAX_BITS: u32 = 32;
/// VW's default `-b`.
pub const DEFAULT_BITS: u32 = 18;

/// The column count of `bits` hash bits, or why there is none.
pub fn columns_of_bits(bits: u32) -> Result<usize, String> {
    if (1..=MAX_BITS).contains(&bits) {
        Ok(1usize << bits)
    } else {
        Err(format!(
            "{bits} hash bits: give 1 to {MAX_BITS} (Vowpal Wabbit's -b; its default is {DEFAULT_BITS})"
        ))
    }
}

/// VW's hash of a feature or namespace name under `seed` (its `hashstring`): the name
/// trimmed of spaces; all decimal digits, its number (wrapping) plus the seed; otherwise
/// MurmurHash3 x86-32 of the bytes seeded with the seed's low 32 bits.
pub fn feature_hash(name: &[u8], seed: u64) -> u64 {
    let name = name.trim_ascii();
    let mut number = 0u64;
    for &b in name {
        if !b.is_ascii_digit() {
            return u64::from(mur3::murmurhash3_x86_32(name, seed as u32));
        }
        number = number.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
    }
    number.wrapping_add(seed)
}

/// A parsed line's label and importance weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VwLabel {
    /// The label as written.
    pub label: f64,
    /// The importance weight (1 when the line gives none).
    pub weight: f64,
}

/// A malformed line: 1-based byte column and what is wrong there.
pub type LineError = (usize, String);

#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0c)
}

/// Whitespace-separated tokens of `text[from..to]` as (offset in `text`, token).
fn tokens(text: &[u8], from: usize, to: usize) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = from;
    std::iter::from_fn(move || {
        while pos < to && is_space(text[pos]) {
            pos += 1;
        }
        if pos == to {
            return None;
        }
        let start = pos;
        while pos < to && !is_space(text[pos]) {
            pos += 1;
        }
        Some((start, &text[start..pos]))
    })
}

/// A token as error messages quote it: lossy UTF-8, invisible characters escaped, at most 40
/// characters.
fn quoted(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(token);
    let mut shown: String = text.chars().take(40).flat_map(char::escape_debug).collect();
    if text.chars().nth(40).is_some() {
        shown.push('…');
    }
    format!("'{shown}'")
}

/// The whole of `text` as a finite `V`, or `None`.
fn finite<V: TextValue>(text: &[u8]) -> Option<V> {
    match V::parse_prefix(text) {
        Some((value, used)) if used == text.len() && value.is_finite() => Some(value),
        _ => None,
    }
}

/// Why `text` is not a value of precision `V`: a finite number `V` cannot hold, or no number.
fn not_a_value<V: TextValue>(what: &str, text: &[u8]) -> String {
    let wider = std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .is_some_and(f64::is_finite);
    if wider && V::NAME == "f32" {
        format!(
            "{what} {} is outside what f32 storage holds; convert with --values f64 to keep it",
            quoted(text)
        )
    } else {
        format!("{what} {} is not a finite number", quoted(text))
    }
}

/// Parse one line (without its newline) into `entries` (columns of `mask + 1`, sorted,
/// merged, zeros dropped) and return its label and weight, or `None` for a blank line.
pub fn parse_line<V: TextValue>(
    line: &[u8],
    mask: u64,
    entries: &mut Vec<(u32, V)>,
) -> Result<Option<VwLabel>, LineError> {
    entries.clear();
    if line.iter().all(|&b| is_space(b)) {
        return Ok(None);
    }
    let bar = memchr::memchr(b'|', line);
    let head_end = bar.unwrap_or(line.len());
    let label = parse_label(line, head_end, bar.is_some())?;
    if let Some(bar) = bar {
        parse_namespaces(line, bar, mask, entries)?;
    }
    merge_duplicates(entries);
    if let Some(e) = entries.iter().find(|e| !e.1.is_finite()) {
        return Err((
            1,
            format!(
                "the values hashed to column {} sum to a non-finite number",
                e.0
            ),
        ));
    }
    entries.retain(|e| e.1 != V::ZERO);
    Ok(Some(label))
}

/// The label and importance weight from `line[..end]`, the text before the first `|`
/// (`before_bar`: there is one).
fn parse_label(line: &[u8], end: usize, before_bar: bool) -> Result<VwLabel, LineError> {
    // The label, the importance weight, the first token after them (refused) and the last
    // token (a tag, perhaps): four are kept, so a line allocates nothing.
    let mut words: [(usize, &[u8]); 4] = [(0, &[]); 4];
    let mut count = 0;
    for word in tokens(line, 0, end) {
        words[count.min(3)] = word;
        count = (count + 1).min(4);
    }
    // A tag written against the bar ("1 2 tag|f") is the last token, whatever it starts with.
    let tag_at_bar = before_bar && end > 0 && !is_space(line[end - 1]);
    let tag = match count.checked_sub(1).map(|last| words[last]) {
        Some((at, word)) if tag_at_bar || word.starts_with(b"'") => {
            count -= 1;
            Some((at, word))
        }
        _ => None,
    };
    let number = |&(at, word): &(usize, &[u8]), what: &str| -> Result<f64, LineError> {
        finite::<f64>(word).ok_or_else(|| (at + 1, not_a_value::<f64>(what, word)))
    };
    match &words[..count] {
        [] => Err((
            1,
            match tag {
                Some((_, tag)) => format!(
                    "no label before the tag {}: a row needs a label (a tag is the token \
                     right against the '|' or the one starting with ')",
                    quoted(tag)
                ),
                None => {
                    "no label: a row needs one (unlabeled examples cannot be stored)".to_string()
                }
            },
        )),
        [label] => Ok(VwLabel {
            label: number(label, "label")?,
            weight: 1.0,
        }),
        [label, weight] => {
            let label = number(label, "label")?;
            let at = weight.0 + 1;
            let weight = number(weight, "importance weight")?;
            if weight < 0.0 {
                return Err((at, format!("importance weight {weight} is negative")));
            }
            Ok(VwLabel { label, weight })
        }
        [_, _, extra, ..] => Err((
            extra.0 + 1,
            format!(
                "{} after the label and importance weight: an initial prediction is not \
                 supported, nor anything else there",
                quoted(extra.1)
            ),
        )),
    }
}

/// The features of every namespace of `line`, from its first `|` at `bar`, into `entries`.
fn parse_namespaces<V: TextValue>(
    line: &[u8],
    bar: usize,
    mask: u64,
    entries: &mut Vec<(u32, V)>,
) -> Result<(), LineError> {
    let mut start = bar + 1;
    loop {
        let end = memchr::memchr(b'|', &line[start..]).map_or(line.len(), |k| start + k);
        let (seed, scale, features_at) = match line.get(start) {
            Some(&b) if start < end && !is_space(b) => {
                let name_end = (start..end).find(|&k| is_space(line[k])).unwrap_or(end);
                let name = &line[start..name_end];
                let (name, scale) = match memchr::memchr(b':', name) {
                    Some(colon) => {
                        let text = &name[colon + 1..];
                        let scale = finite::<V>(text).ok_or_else(|| {
                            (start + colon + 2, not_a_value::<V>("namespace scale", text))
                        })?;
                        (&name[..colon], Some(scale))
                    }
                    None => (name, None),
                };
                (feature_hash(name, 0), scale, name_end)
            }
            _ => (0, None, start),
        };
        for (at, token) in tokens(line, features_at, end) {
            let (name, value) = match memchr::memchr(b':', token) {
                Some(colon) => {
                    let text = &token[colon + 1..];
                    let value = finite::<V>(text)
                        .ok_or_else(|| (at + colon + 2, not_a_value::<V>("feature value", text)))?;
                    (&token[..colon], value)
                }
                None => (token, V::ONE),
            };
            let value = match scale {
                Some(scale) => value.mul(scale),
                None => value,
            };
            if !value.is_finite() {
                return Err((
                    at + 1,
                    format!(
                        "feature {} times its namespace's scale is outside what {} storage holds",
                        quoted(token),
                        V::NAME
                    ),
                ));
            }
            entries.push(((feature_hash(name, seed) & mask) as u32, value));
        }
        if end == line.len() {
            return Ok(());
        }
        start = end + 1;
    }
}

/// Parse every line of `text` (newline-aligned; a final line without a newline is parsed
/// too) as VW text hashed into `2^bits` columns, appending rows and their importance
/// weights to `out` (cleared first).
pub fn parse_chunk_into<V: TextValue>(
    text: &[u8],
    bits: u32,
    out: &mut ChunkRows<V>,
) -> Result<(), ChunkError> {
    out.clear();
    let mask = (1u64 << bits) - 1;
    let mut entries: Vec<(u32, V)> = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |k| start + k);
        out.lines += 1;
        let parsed = parse_line::<V>(&text[start..end], mask, &mut entries);
        let label = parsed.map_err(|(column, message)| ChunkError {
            line: out.lines,
            column,
            message,
        })?;
        if let Some(VwLabel { label, weight }) = label {
            out.labels.push(label);
            out.weights.push(weight);
            for &(index, value) in &entries {
                out.all_ones &= value == V::ONE;
                out.indices.push(index);
                out.values.push(value);
            }
            if let Some(&(last, _)) = entries.last() {
                out.columns = out.columns.max(last as usize + 1);
            }
            out.offsets.push(out.indices.len() as u64);
        }
        start = end + 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed row: its label and weight, and its entries.
    type Parsed = (VwLabel, Vec<(u32, f32)>);

    fn parse(line: &str, bits: u32) -> Result<Option<Parsed>, LineError> {
        let mut entries = Vec::new();
        let label = parse_line::<f32>(line.as_bytes(), (1u64 << bits) - 1, &mut entries)?;
        Ok(label.map(|l| (l, entries)))
    }

    /// Columns as `vw --audit -b 18 --noconstant` (Vowpal Wabbit 9.11.9) prints them for
    /// these two lines.
    #[test]
    fn hashes_as_vowpal_wabbit_audits() {
        let (label, entries) = parse("1 2.0 tagA|ns1 a b:2 123 |ns2:0.5 c:4 |  x 7", 18)
            .unwrap()
            .unwrap();
        assert_eq!(
            label,
            VwLabel {
                label: 1.0,
                weight: 2.0
            }
        );
        let mut expected = vec![
            (100403, 1.0),
            (20752, 2.0),
            (11365, 1.0),
            (119163, 2.0),
            (170779, 1.0),
            (7, 1.0),
        ];
        expected.sort_by_key(|e| e.0);
        assert_eq!(entries, expected);
        let (label, entries) = parse("-1 |n_s word:-1.5 99", 18).unwrap().unwrap();
        assert_eq!(
            label,
            VwLabel {
                label: -1.0,
                weight: 1.0
            }
        );
        assert_eq!(entries, vec![(23297, -1.5), (151989, 1.0)]);
    }

    #[test]
    fn digits_hash_to_their_number_plus_the_seed() {
        assert_eq!(feature_hash(b"007", 0), 7);
        assert_eq!(feature_hash(b"12", 100), 112);
        assert_eq!(
            feature_hash(b"-12", 0),
            u64::from(mur3::murmurhash3_x86_32(b"-12", 0))
        );
    }

    #[test]
    fn tags_and_weights() {
        let label = |line: &str| parse(line, 18).unwrap().unwrap().0;
        assert_eq!(
            label("-1 'id7 |f a"),
            VwLabel {
                label: -1.0,
                weight: 1.0
            }
        );
        assert_eq!(
            label("3 0.5 id7|f a"),
            VwLabel {
                label: 3.0,
                weight: 0.5
            }
        );
        assert_eq!(label("0.25 0 |f a").weight, 0.0);
        // A line with no '|' is a row without features.
        assert_eq!(parse("1", 18).unwrap().unwrap().1, vec![]);
        assert_eq!(parse(" \t\r", 18).unwrap(), None);
    }

    #[test]
    fn duplicates_merge_and_zeros_drop() {
        let (_, entries) = parse("1 | a:2 a:3 b:0 c:1 c:-1", 18).unwrap().unwrap();
        assert_eq!(entries, vec![(feature_hash(b"a", 0) as u32 & 0x3ffff, 5.0)]);
        // Low bits only: two names one column apart in 18 bits land in 1 bit's 2 columns.
        let (_, entries) = parse("1 | a b c d e", 1).unwrap().unwrap();
        assert!(entries.iter().all(|e| e.0 < 2) && !entries.is_empty());
        let sum: f32 = entries.iter().map(|e| e.1).sum();
        assert_eq!(sum, 5.0);
    }

    #[test]
    fn errors_name_the_column() {
        let error = |line: &str| parse(line, 18).unwrap_err();
        assert_eq!(error("1 |f a:x").0, 8);
        assert!(error("1 |f a:x").1.contains("feature value 'x'"));
        assert_eq!(error("1 -2 |f a").0, 3);
        assert!(error("1 -2 |f a").1.contains("negative"));
        assert!(error("1 1 0.5 |f a").1.contains("initial prediction"));
        assert_eq!(error("1 1 0.5 x y 'tag |f a"), error("1 1 0.5 |f a"));
        assert!(error("|f a").1.starts_with("no label"));
        assert!(error("1|f a").1.contains("tag '1'"));
        assert_eq!(error("1 |f:y a").0, 6);
        assert!(error("1 |f a:1e39").1.contains("--values f64"));
        assert!(error("x |f a").1.contains("label 'x'"));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Lines from VW's grammar with noise: labels, weights and values that may not be
        /// numbers, tags of both kinds, namespaces with and without names and scales.
        fn line() -> impl Strategy<Value = String> {
            let number = prop_oneof![
                (-1e3f64..1e3).prop_map(|x| x.to_string()),
                Just("0".to_string()),
                Just("x".to_string()),
                Just("1e40".to_string()),
            ];
            let feature =
                ("[a-c0-9]{0,3}", prop::option::of(number.clone())).prop_map(|(name, value)| {
                    match value {
                        Some(v) => format!("{name}:{v}"),
                        None => name,
                    }
                });
            let namespace = (
                prop::option::of("[a-z0-9]{1,3}(:0\\.5)?"),
                prop::collection::vec(feature, 0..5),
            )
                .prop_map(|(name, features)| {
                    format!("|{} {}", name.unwrap_or_default(), features.join(" "))
                });
            (
                prop::collection::vec(number, 0..4),
                prop::option::of("'?[a-z]{1,3}"),
                prop::collection::vec(namespace, 0..3),
            )
                .prop_map(|(head, tag, namespaces)| {
                    format!(
                        "{} {}{}",
                        head.join(" "),
                        tag.unwrap_or_default(),
                        namespaces.join(" ")
                    )
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            /// Any line parses to a row of the invariants (columns below 2^bits, strictly
            /// increasing, no zero) or to an error with a column on the line; never a panic.
            #[test]
            fn rows_keep_the_invariants(line in line(), bits in 1u32..=20) {
                let mut entries = Vec::new();
                let mask = (1u64 << bits) - 1;
                match parse_line::<f32>(line.as_bytes(), mask, &mut entries) {
                    Ok(_) => {
                        prop_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
                        prop_assert!(entries.iter().all(|e| u64::from(e.0) <= mask));
                        prop_assert!(entries.iter().all(|e| e.1 != 0.0 && e.1.is_finite()));
                    }
                    Err((column, _)) => prop_assert!((1..=line.len().max(1)).contains(&column)),
                }
            }

            /// A chunk of lines parses to the rows of its lines parsed one by one, or stops at
            /// the first bad line with its number.
            #[test]
            fn chunks_are_their_lines(lines in prop::collection::vec(line(), 0..8)) {
                let text = lines.join("\n");
                let mut chunk = ChunkRows::<f32>::default();
                let parsed = parse_chunk_into(text.as_bytes(), 10, &mut chunk);
                let (mut rows, mut entries) = (Vec::new(), Vec::new());
                let mut failed = None;
                for (k, line) in lines.iter().enumerate() {
                    match parse_line::<f32>(line.as_bytes(), 1023, &mut entries) {
                        Ok(Some(label)) => rows.push((label, entries.clone())),
                        Ok(None) => {}
                        Err(_) => {
                            failed = Some(k as u64 + 1);
                            break;
                        }
                    }
                }
                match (parsed, failed) {
                    (Err(e), Some(line)) => prop_assert_eq!(e.line, line),
                    (Ok(()), None) => {
                        prop_assert_eq!(chunk.labels.len(), rows.len());
                        for (i, (label, entries)) in rows.iter().enumerate() {
                            let span = chunk.offsets[i] as usize..chunk.offsets[i + 1] as usize;
                            prop_assert_eq!(chunk.labels[i], label.label);
                            prop_assert_eq!(chunk.weights[i], label.weight);
                            let row: Vec<(u32, f32)> = chunk.indices[span.clone()]
                                .iter()
                                .copied()
                                .zip(chunk.values[span].iter().copied())
                                .collect();
                            prop_assert_eq!(&row, entries);
                        }
                    }
                    (parsed, failed) => prop_assert!(false, "{parsed:?} vs line {failed:?}"),
                }
            }
        }
    }

    #[test]
    fn bits_outside_one_to_thirty_two_are_refused() {
        assert!(columns_of_bits(0).is_err());
        assert!(columns_of_bits(33).is_err());
        assert_eq!(columns_of_bits(18), Ok(1 << 18));
    }
}
