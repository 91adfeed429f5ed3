//! Vowpal Wabbit text: `label [importance] ['tag]|namespace[:scale] feature[:value] ...`.
//!
//! What a linear learner needs of VW's input format, read as VW reads it, so that a file
//! written for `vw` trains here unchanged:
//! * **Labels**: before the first `|`, a label, then optionally an importance weight (the
//!   row's sample weight, 1 when absent). A tag — the last token when it starts with `'`, or
//!   one written right against the `|` — is skipped. A third number (VW's initial
//!   prediction) is refused: a dataset has no place for it. So is a line without a label,
//!   except where labels are not read (predictions: [`LineParser::new`]).
//! * **Namespaces**: each `|` opens one. `|name` names it (its features are hashed with the
//!   name's hash as seed), `|name:s` also scales its values by `s`, and `|` followed by a
//!   space is the default namespace (seed 0).
//! * **Features**: `name` (value 1) or `name:value`. A name is hashed to a column as VW
//!   hashes it by default (`--hash strings`): a name of decimal digits is its number plus the
//!   namespace's seed, any other is MurmurHash3 (x86, 32 bits) seeded by it; the hash keeps
//!   its low `bits` bits (VW's `-b`). So column j of a dataset is the weight VW's `--audit`
//!   shows at index j, and models can be compared weight by weight.
//!
//! * **Interactions** ([`Hashing`]; VW's `-q ab`, `--cubic abc`, `--interactions abcd`):
//!   every feature of the namespaces whose names start with `a` times every one of those
//!   starting with `b` (and so on), hashed as VW hashes them (the first feature's hash times
//!   the 32-bit FNV prime, xor the next's, …), valued the product of their values. As in
//!   VW, a namespace letter repeated within an interaction gives each combination of its
//!   features once (`-q aa`: x·y but not also y·x, and x·x), and interactions of the same
//!   letters are formed once. The wildcard `:` stands for every namespace of the line with
//!   features (`-q ::`, `-q a:`, `--cubic :::`), filled as VW 9 fills it.
//!
//! * **Namespaces dropped, digits hashed** ([`FeatureRules`]; VW's `--ignore`, `--keep`,
//!   `--ignore_linear`, `--hash all`): the features of namespaces of some letters are dropped,
//!   from the rows and the interactions, or from the rows alone; names of digits may be
//!   hashed as other names are.
//!
//! Values are read and scaled in the storage precision (VW reads `f32`). A zero value is
//! dropped, as VW drops it; features hashed to one column are summed (a linear model sees
//! their sum either way). Rows then satisfy the invariants of [`Row`](super::Row). Not
//! supported: multi-line examples. Unlike VW 9.11.9, `--ignore_linear` holds with a wildcard.

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

/// How the features of VW text are chosen and hashed beside the bits (VW's `-q`, `--cubic`,
/// `--interactions`, `--ignore`, `--keep`, `--ignore_linear`, `--hash`): what a dataset and the models trained
/// on it record, so that text they score is read alike. Normalized by [`Hashing::new`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureRules {
    /// Interactions, each a string of two or more namespace letters (a namespace's letter is
    /// its name's first character, ASCII here; the default namespace's is a space; `:` is
    /// any namespace of the line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interactions: Vec<String>,
    /// Letters of namespaces whose features are dropped, from the rows and from the
    /// interactions (VW's `--ignore`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ignore: String,
    /// Letters of the only namespaces whose features are kept (VW's `--keep`); empty: all.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub keep: String,
    /// Letters of namespaces whose features enter only the interactions, not the rows as
    /// they are (VW's `--ignore_linear`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ignore_linear: String,
    /// Names of digits are hashed as other names are, not read as numbers (VW's `--hash
    /// all`; its default is `--hash strings`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hash_all: bool,
}

impl FeatureRules {
    /// No interactions, nothing dropped, VW's default hash: VW text as read without flags.
    pub fn is_default(&self) -> bool {
        *self == FeatureRules::default()
    }

    /// These rules as VW normalizes them, or why they are not rules: interactions by
    /// [`normalize_interactions`] (the wildcard `:` sorted as the byte it is, as VW sorts it);
    /// letter sets sorted, without repeats. `ignore` and `keep` are not both given (VW lets
    /// `--keep` win, which would silently undo `--ignore`).
    fn normalized(&self) -> Result<FeatureRules, String> {
        for interaction in &self.interactions {
            let letters = interaction.as_bytes();
            let problem = if letters.len() < 2 {
                Some("has fewer than two namespaces")
            } else if !letters.is_ascii() {
                Some("is not ASCII: a namespace letter is one ASCII character here")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(format!("interaction {} {problem}", quoted(letters)));
            }
        }
        let kept = normalize_interactions(self.interactions.iter().map(|i| i.as_bytes().to_vec()));
        let letter_set = |what: &str, letters: &str| -> Result<String, String> {
            if !letters.is_ascii() {
                return Err(format!(
                    "{what} {}: a namespace letter is one ASCII character here",
                    quoted(letters.as_bytes())
                ));
            }
            let mut set = letters.as_bytes().to_vec();
            set.sort_unstable();
            set.dedup();
            Ok(String::from_utf8_lossy(&set).into_owned())
        };
        let (ignore, keep) = (
            letter_set("ignore", &self.ignore)?,
            letter_set("keep", &self.keep)?,
        );
        let ignore_linear = letter_set("ignore_linear", &self.ignore_linear)?;
        if !ignore.is_empty() && !keep.is_empty() {
            return Err(
                "namespaces both ignored and kept: give one of the two (VW lets --keep win)"
                    .to_string(),
            );
        }
        Ok(FeatureRules {
            // ASCII, checked above, so nothing is replaced.
            interactions: kept
                .iter()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect(),
            ignore,
            keep,
            ignore_linear,
            hash_all: self.hash_all,
        })
    }

    /// Whether the features of namespaces of `letter` are dropped.
    fn drops(&self, letter: u8) -> bool {
        self.ignore.as_bytes().contains(&letter)
            || !(self.keep.is_empty() || self.keep.as_bytes().contains(&letter))
    }
}

/// Interactions as VW normalizes them: one that repeats a letter has its letters sorted, and
/// of interactions of the same letters (in any order) only the least is kept, where the
/// first of them stood. VW does this to the interactions given and again to those its
/// wildcards expand to, with the others.
fn normalize_interactions(interactions: impl IntoIterator<Item = Vec<u8>>) -> Vec<Vec<u8>> {
    let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for mut letters in interactions {
        let mut sorted = letters.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            letters.clone_from(&sorted);
        }
        match kept.iter_mut().find(|(key, _)| *key == sorted) {
            Some((_, same)) => *same = letters.min(std::mem::take(same)),
            None => kept.push((sorted, letters)),
        }
    }
    kept.into_iter().map(|(_, letters)| letters).collect()
}

/// VW's wildcard in an interaction: every namespace of the line.
const WILDCARD: u8 = b':';

/// The letters of namespaces a wildcard stands for: the printable ASCII characters.
const WILDCARD_LETTERS: std::ops::RangeInclusive<u8> = b' '..=b'~';

/// The interactions `templates` (normalized) stand for on a line whose namespaces with
/// features have the letters `present` (ascending): the wildcards of a template filled, in
/// order, by every choice of letters from `present` up to order, as VW 9 fills them (two
/// wildcards by non-decreasing letters, any other number by non-increasing ones), and the
/// whole normalized again with the templates without wildcards.
fn expand_wildcards(templates: &[String], present: &[u8]) -> Vec<Vec<u8>> {
    let mut interactions = Vec::new();
    for template in templates.iter().map(|t| t.as_bytes()) {
        let wildcards = template.iter().filter(|&&l| l == WILDCARD).count();
        if wildcards == 0 {
            interactions.push(template.to_vec());
            continue;
        }
        if present.is_empty() {
            continue;
        }
        // Positions in `present` of the letters filling the wildcards, non-decreasing.
        let mut choice = vec![0usize; wildcards];
        loop {
            let mut letters: Vec<u8> = choice.iter().map(|&k| present[k]).collect();
            if wildcards != 2 {
                letters.reverse();
            }
            let mut filled = letters.into_iter();
            interactions.push(
                template
                    .iter()
                    .map(|&l| match l {
                        WILDCARD => filled.next().unwrap_or(l),
                        _ => l,
                    })
                    .collect(),
            );
            // The next choice: raise the last position that can rise, and set those after it
            // to it.
            let Some(rise) = choice.iter().rposition(|&k| k + 1 < present.len()) else {
                break;
            };
            choice[rise] += 1;
            let from = choice[rise];
            choice[rise..].iter_mut().for_each(|k| *k = from);
        }
    }
    normalize_interactions(interactions)
}

/// How names become columns: the hash bits and the [`FeatureRules`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashing {
    bits: u32,
    rules: FeatureRules,
}

/// The 32-bit FNV prime, VW's multiplier for interaction hashes.
const FNV_PRIME: u64 = 16_777_619;

impl Hashing {
    /// `bits` hash bits (1 to 32) and `rules`, normalized ([`FeatureRules`]).
    pub fn new(bits: u32, rules: &FeatureRules) -> Result<Hashing, String> {
        columns_of_bits(bits)?;
        Ok(Hashing {
            bits,
            rules: rules.normalized()?,
        })
    }

    /// `bits` hash bits, VW's defaults otherwise.
    pub fn plain(bits: u32) -> Result<Hashing, String> {
        Hashing::new(bits, &FeatureRules::default())
    }

    /// The hash bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The rules, normalized.
    pub fn rules(&self) -> &FeatureRules {
        &self.rules
    }

    /// The interactions formed, normalized.
    pub fn interactions(&self) -> &[String] {
        &self.rules.interactions
    }

    /// The column count, 2^bits.
    pub fn columns(&self) -> usize {
        1 << self.bits
    }

    fn mask(&self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// The hash of a feature or namespace name under `seed`, by [`FeatureRules::hash_all`].
    fn hash(&self, name: &[u8], seed: u64) -> u64 {
        match self.rules.hash_all {
            true => u64::from(mur3::murmurhash3_x86_32(name.trim_ascii(), seed as u32)),
            false => feature_hash(name, seed),
        }
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

/// Parses lines under one [`Hashing`], keeping the buffers interactions need between lines.
#[derive(Clone, Debug)]
pub struct LineParser<V> {
    hashing: Hashing,
    /// A line without a label is a row of label 0, not an error.
    unlabeled: bool,
    /// Each namespace letter's list in `features`, if an interaction uses the letter.
    slot: [Option<u8>; 256],
    /// Whether the namespace letter's features are dropped.
    dropped: [bool; 256],
    /// Whether the namespace letter's features enter the row as they are (not only the
    /// interactions).
    linear: [bool; 256],
    /// The features of each interacting namespace letter on the line (one list per letter,
    /// by `slot`): (hash, value) in the order written.
    features: Vec<Vec<(u64, V)>>,
    /// Whether an interaction has a wildcard, whose interactions depend on the line.
    wildcard: bool,
    /// With a wildcard: the interactions formed on the last line, and the letters of that
    /// line's namespaces with features (one bit per ASCII letter), which most lines share.
    expanded: Option<(u128, Vec<Vec<u8>>)>,
}

impl<V: TextValue> LineParser<V> {
    /// A parser of lines hashed by `hashing`, refusing a line without a label unless
    /// `unlabeled` (which reads it as a row of label 0 and weight 1: VW's unlabeled test
    /// examples, for predictions, which read no labels).
    pub fn new(hashing: &Hashing, unlabeled: bool) -> LineParser<V> {
        // Letters are ASCII, so fewer than 128 lists. A wildcard interacts every letter it
        // stands for.
        let mut slot = [None; 256];
        let mut lists = 0u8;
        let letters = hashing.interactions().iter().flat_map(|i| i.as_bytes());
        let wildcard = letters.clone().any(|&l| l == WILDCARD);
        let wildcard_letters = WILDCARD_LETTERS.filter(|_| wildcard);
        for letter in letters
            .copied()
            .filter(|&l| l != WILDCARD)
            .chain(wildcard_letters)
        {
            slot[usize::from(letter)].get_or_insert_with(|| {
                lists += 1;
                lists - 1
            });
        }
        LineParser {
            hashing: hashing.clone(),
            unlabeled,
            slot,
            dropped: std::array::from_fn(|letter| hashing.rules.drops(letter as u8)),
            linear: std::array::from_fn(|letter| {
                !hashing
                    .rules
                    .ignore_linear
                    .as_bytes()
                    .contains(&(letter as u8))
            }),
            features: vec![Vec::new(); usize::from(lists)],
            wildcard,
            expanded: None,
        }
    }

    /// The line's features of the interacting namespace letter `letter`.
    fn features_of(&self, letter: u8) -> &[(u64, V)] {
        match self.slot[usize::from(letter)] {
            Some(slot) => &self.features[usize::from(slot)],
            None => &[],
        }
    }

    /// Parse one line (without its newline) into `entries` (columns below 2^bits, sorted,
    /// merged, zeros dropped) and return its label and weight, or `None` for a blank line.
    pub fn parse_line(
        &mut self,
        line: &[u8],
        entries: &mut Vec<(u32, V)>,
    ) -> Result<Option<VwLabel>, LineError> {
        entries.clear();
        if line.iter().all(|&b| is_space(b)) {
            return Ok(None);
        }
        let bar = memchr::memchr(b'|', line);
        let head_end = bar.unwrap_or(line.len());
        let label = parse_label(line, head_end, bar.is_some(), self.unlabeled)?;
        if let Some(bar) = bar {
            self.features.iter_mut().for_each(Vec::clear);
            self.parse_namespaces(line, bar, entries)?;
            self.interact(entries)?;
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

    /// The features of every namespace of `line`, from its first `|` at `bar`, into
    /// `entries`, and those of interacting namespaces into their letters' lists too.
    fn parse_namespaces(
        &mut self,
        line: &[u8],
        bar: usize,
        entries: &mut Vec<(u32, V)>,
    ) -> Result<(), LineError> {
        let mask = self.hashing.mask();
        let mut start = bar + 1;
        loop {
            let end = memchr::memchr(b'|', &line[start..]).map_or(line.len(), |k| start + k);
            let (seed, scale, features_at, letter) = match line.get(start) {
                Some(&b) if start < end && !is_space(b) => {
                    let name_end = (start..end).find(|&k| is_space(line[k])).unwrap_or(end);
                    let name = &line[start..name_end];
                    let (name, scale) = name_and_value::<V>(name, start, "namespace scale")?;
                    (self.hashing.hash(name, 0), scale, name_end, b)
                }
                _ => (0, None, start, b' '),
            };
            // A dropped namespace's features are not read (nor, so, checked).
            let features = match self.dropped[usize::from(letter)] {
                true => tokens(line, end, end),
                false => tokens(line, features_at, end),
            };
            let linear = self.linear[usize::from(letter)];
            let mut interacting =
                self.slot[usize::from(letter)].map(|slot| &mut self.features[usize::from(slot)]);
            for (at, token) in features {
                let (name, value) = name_and_value::<V>(token, at, "feature value")?;
                let value = value.unwrap_or(V::ONE);
                let value = match scale {
                    Some(scale) => value.mul(scale),
                    None => value,
                };
                if !value.is_finite() {
                    return Err((
                        at + 1,
                        format!(
                            "feature {} times its namespace's scale is outside what {} storage \
                             holds",
                            quoted(token),
                            V::NAME
                        ),
                    ));
                }
                let hash = self.hashing.hash(name, seed);
                if linear {
                    entries.push(((hash & mask) as u32, value));
                }
                if let Some(list) = interacting.as_mut() {
                    list.push((hash, value));
                }
            }
            if end == line.len() {
                return Ok(());
            }
            start = end + 1;
        }
    }

    /// Every interaction's features of the line's namespaces, appended to `entries`.
    fn interact(&mut self, entries: &mut Vec<(u32, V)>) -> Result<(), LineError> {
        let templates = self.hashing.interactions();
        if !self.wildcard {
            return self.form(templates.iter().map(String::as_bytes), entries);
        }
        let last = self.expanded.take();
        let present = WILDCARD_LETTERS.filter(|&l| !self.features_of(l).is_empty());
        let key = present.clone().fold(0u128, |bits, l| bits | 1 << l);
        let expanded = match last {
            Some((seen, expanded)) if seen == key => expanded,
            _ => expand_wildcards(templates, &present.collect::<Vec<u8>>()),
        };
        let formed = self.form(expanded.iter().map(Vec::as_slice), entries);
        self.expanded = Some((key, expanded));
        formed
    }

    /// The features of each of `interactions` whose namespaces all have features on the
    /// line, appended to `entries`.
    fn form<'i>(
        &self,
        interactions: impl Iterator<Item = &'i [u8]>,
        entries: &mut Vec<(u32, V)>,
    ) -> Result<(), LineError> {
        interactions
            .filter(|letters| letters.iter().all(|&l| !self.features_of(l).is_empty()))
            .try_for_each(|letters| self.expand(letters, 0, 0, (0, V::ONE), entries))
    }

    /// The products of one feature from each namespace of `letters[depth..]` with `so_far`
    /// (the hash and value of the features chosen from the namespaces before), into
    /// `entries`. A letter the same as the one before starts at that one's feature (`from`),
    /// so that each combination of a repeated namespace's features is formed once.
    fn expand(
        &self,
        letters: &[u8],
        depth: usize,
        from: usize,
        so_far: (u64, V),
        entries: &mut Vec<(u32, V)>,
    ) -> Result<(), LineError> {
        let start = match depth > 0 && letters[depth] == letters[depth - 1] {
            true => from,
            false => 0,
        };
        let features = self.features_of(letters[depth]);
        for (k, &(hash, value)) in features.iter().enumerate().skip(start) {
            let (hash, value) = match depth {
                0 => (hash, value),
                _ => (so_far.0.wrapping_mul(FNV_PRIME) ^ hash, so_far.1.mul(value)),
            };
            if depth + 1 < letters.len() {
                self.expand(letters, depth + 1, k, (hash, value), entries)?;
            } else if !value.is_finite() {
                return Err((
                    1,
                    format!(
                        "a feature of interaction {} has a value outside what {} storage holds",
                        quoted(letters),
                        V::NAME
                    ),
                ));
            } else {
                entries.push(((hash & self.hashing.mask()) as u32, value));
            }
        }
        Ok(())
    }
}

/// A `name[:value]` token at offset `at` of its line split into its name and value; a value
/// that is not a finite `V` is an error at its column, naming it `what`.
fn name_and_value<'t, V: TextValue>(
    token: &'t [u8],
    at: usize,
    what: &str,
) -> Result<(&'t [u8], Option<V>), LineError> {
    let Some(colon) = memchr::memchr(b':', token) else {
        return Ok((token, None));
    };
    let text = &token[colon + 1..];
    let value = finite::<V>(text).ok_or_else(|| (at + colon + 2, not_a_value::<V>(what, text)))?;
    Ok((&token[..colon], Some(value)))
}

/// The label and importance weight from `line[..end]`, the text before the first `|`
/// (`before_bar`: there is one); for a line without them, label 0 and weight 1 if
/// `unlabeled`, else an error.
fn parse_label(
    line: &[u8],
    end: usize,
    before_bar: bool,
    unlabeled: bool,
) -> Result<VwLabel, LineError> {
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
        [] if unlabeled => Ok(VwLabel {
            label: 0.0,
            weight: 1.0,
        }),
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

/// Parse every line of `text` (newline-aligned; a final line without a newline is parsed
/// too) as VW text hashed by `hashing`, appending rows and their importance weights to `out`
/// (cleared first); a line without a label is an error unless `unlabeled`
/// ([`LineParser::new`]).
pub fn parse_chunk_into<V: TextValue>(
    text: &[u8],
    hashing: &Hashing,
    unlabeled: bool,
    out: &mut ChunkRows<V>,
) -> Result<(), ChunkError> {
    out.clear();
    let mut parser = LineParser::<V>::new(hashing, unlabeled);
    let mut entries: Vec<(u32, V)> = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |k| start + k);
        out.lines += 1;
        let parsed = parser.parse_line(&text[start..end], &mut entries);
        let label = parsed.map_err(|(column, message)| ChunkError {
            line: out.lines,
            column,
            message,
        })?;
        if let Some(VwLabel { label, weight }) = label {
            out.labels.push(label);
            out.weights.push(weight);
            out.all_ones &= entries.iter().fold(true, |ones, e| ones & (e.1 == V::ONE));
            out.indices.extend(entries.iter().map(|e| e.0));
            out.values.extend(entries.iter().map(|e| e.1));
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

    /// `bits` hash bits and `interactions`, VW's defaults otherwise.
    fn crossed<S: AsRef<str>>(bits: u32, interactions: &[S]) -> Result<Hashing, String> {
        let rules = FeatureRules {
            interactions: interactions
                .iter()
                .map(|i| i.as_ref().to_string())
                .collect(),
            ..FeatureRules::default()
        };
        Hashing::new(bits, &rules)
    }

    /// A parsed row: its label and weight, and its entries.
    type Parsed = (VwLabel, Vec<(u32, f32)>);

    fn parse(line: &str, bits: u32) -> Result<Option<Parsed>, LineError> {
        let mut entries = Vec::new();
        let mut parser = LineParser::<f32>::new(&Hashing::plain(bits).unwrap(), false);
        let label = parser.parse_line(line.as_bytes(), &mut entries)?;
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

    /// For predictions a line may have no label (VW's unlabeled test examples): it reads as
    /// label 0 and weight 1, tags skipped; a label given is read as ever.
    #[test]
    fn unlabeled_lines_for_predictions() {
        let mut parser = LineParser::<f32>::new(&Hashing::plain(18).unwrap(), true);
        let mut entries = Vec::new();
        let unlabeled = VwLabel {
            label: 0.0,
            weight: 1.0,
        };
        for line in ["|f a", "'id7 |f a", " | a"] {
            let label = parser.parse_line(line.as_bytes(), &mut entries).unwrap();
            assert_eq!(label, Some(unlabeled), "{line}");
            assert_eq!(entries.len(), 1);
        }
        let label = parser.parse_line(b"-1 2 |f a", &mut entries).unwrap();
        assert_eq!(
            label,
            Some(VwLabel {
                label: -1.0,
                weight: 2.0
            })
        );
        assert!(parse("|f a", 18).unwrap_err().1.starts_with("no label"));
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
            fn rows_keep_the_invariants(
                line in line(),
                bits in 1u32..=20,
                interactions in prop::collection::vec("[a-c0-9 ]{2,3}", 0..3),
                unlabeled: bool,
            ) {
                let mut entries = Vec::new();
                let mask = (1u64 << bits) - 1;
                let hashing = crossed(bits, &interactions).unwrap();
                match LineParser::<f32>::new(&hashing, unlabeled).parse_line(line.as_bytes(), &mut entries) {
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
                let hashing = crossed(10, &["ab", "aa0"]).unwrap();
                let parsed = parse_chunk_into(text.as_bytes(), &hashing, false, &mut chunk);
                let (mut rows, mut entries) = (Vec::new(), Vec::new());
                let mut failed = None;
                // One parser for every line: what a line leaves in its buffers changes no other.
                let mut parser = LineParser::<f32>::new(&hashing, false);
                for (k, line) in lines.iter().enumerate() {
                    match parser.parse_line(line.as_bytes(), &mut entries) {
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

    /// Columns and values as `vw --audit -b 18 --noconstant -q ba -q aa --cubic 'ab '
    /// --interactions bab` (Vowpal Wabbit 9.11.9) prints them: two namespaces of letter a
    /// (their features in one list, in line order), a scaled one, the default namespace's
    /// letter (a space), a repeated letter (`aa`: each pair once, and the squares), and one
    /// repeated out of order (`bab`, formed as `abb`).
    #[test]
    fn interactions_hash_as_vowpal_wabbit_audits() {
        let hashing = crossed(18, &["ba", "aa", "ab ", "bab"]).unwrap();
        assert_eq!(hashing.interactions(), ["ba", "aa", "ab ", "abb"]);
        let mut entries = Vec::new();
        LineParser::<f32>::new(&hashing, false)
            .parse_line(
                b"1 |alpha x:2 y 5 |beta:0.5 z w:3 |axe q | 7 x",
                &mut entries,
            )
            .unwrap();
        #[rustfmt::skip]
        let audited: [(u32, f32); 54] = [
            (7, 1.0), (3116, 0.75), (3527, 3.0), (4930, 1.0), (11171, 1.5), (17104, 1.0),
            (20610, 0.5), (23721, 1.5), (28604, 1.5), (31078, 2.0), (35098, 1.0),
            (41240, 1.5), (42373, 1.0), (44926, 0.5), (60257, 0.5), (63787, 1.5),
            (75869, 2.25), (80795, 0.5), (81140, 2.25), (84372, 0.5), (90202, 1.5),
            (91957, 0.75), (95475, 1.5), (99166, 4.5), (102489, 0.5), (106380, 2.0),
            (111031, 1.0), (113128, 4.0), (118007, 0.75), (118089, 1.5), (119756, 2.0),
            (121747, 2.0), (122864, 3.0), (128424, 1.0), (145924, 1.5), (147097, 1.0),
            (148388, 1.0), (157354, 2.25), (160272, 0.5), (165655, 0.25), (170779, 1.0),
            (183198, 0.5), (184407, 1.0), (186258, 0.5), (199493, 0.5), (210621, 1.0),
            (214252, 3.0), (214988, 0.25), (225954, 1.0), (237703, 0.5), (238926, 1.0),
            (257038, 0.25), (258031, 1.5), (260934, 1.5),
        ];
        assert_eq!(entries, audited);
    }

    /// Interactions of the same letters are formed once, in the least of their forms, as
    /// `vw -q ba -q ab` forms only `ab` (and `-q cb -q bc` only `bc`).
    #[test]
    fn interactions_of_the_same_letters_are_formed_once() {
        let hashing = crossed(18, &["ba", "ab", "cb", "bc", "bca", "cab"]).unwrap();
        assert_eq!(hashing.interactions(), ["ab", "bc", "bca"]);
        let twice = crossed(18, &["cb", "cb"]).unwrap();
        assert_eq!(twice.interactions(), ["cb"]);
        assert!(crossed(18, &["a"]).unwrap_err().contains("fewer than two"));
        assert!(crossed(18, &["aé"]).unwrap_err().contains("not ASCII"));
        assert!(crossed(0, &["ab"]).is_err());
        // A namespace with no features on a line forms nothing with it.
        let mut entries = Vec::new();
        LineParser::<f32>::new(&hashing, false)
            .parse_line(b"1 |a x |c y", &mut entries)
            .unwrap();
        assert_eq!(entries.len(), 2);
        // Products that f32 cannot hold are an error on the line.
        let error = LineParser::<f32>::new(&hashing, false)
            .parse_line(b"1 |a x:1e30 |b y:1e30", &mut entries)
            .unwrap_err();
        assert!(error.1.contains("interaction 'ab'"), "{error:?}");
    }

    /// Columns and values as `vw --audit -b 18 --noconstant` (9.11.9) prints them for one line
    /// of four namespaces (one scaled, one the default) under wildcards: `-q ::` (every pair,
    /// each once, letters ascending), `--cubic :::` (every triple, letters descending),
    /// `--cubic a::` (which VW sorts to `::a` before it fills it) and `-q ba -q a:` (`ba` is
    /// one of the pairs `a:` stands for, formed once, as `ab`).
    #[test]
    fn wildcards_expand_as_vowpal_wabbit_audits() {
        let audited = |interactions: &[&str]| {
            let hashing = crossed(18, interactions).unwrap();
            let mut entries = Vec::new();
            LineParser::<f32>::new(&hashing, false)
                .parse_line(b"1 |alpha x:2 y |beta:0.5 z |c q | 7", &mut entries)
                .unwrap();
            entries
        };
        #[rustfmt::skip]
        let pairs = [
            (7, 1.0), (2818, 1.0), (5255, 0.5), (35908, 1.0), (63175, 1.0), (111031, 1.0),
            (113128, 4.0), (113330, 1.0), (119756, 2.0), (121033, 2.0), (121747, 2.0),
            (144850, 1.0), (147159, 1.0), (155638, 2.0), (179638, 1.0), (186258, 0.5),
            (187543, 0.5), (225028, 0.5), (225954, 1.0), (232772, 0.25),
        ];
        assert_eq!(audited(&["::"]), pairs);
        #[rustfmt::skip]
        let triples = [
            (7, 1.0), (27561, 2.0), (33275, 0.5), (34794, 2.0), (50353, 1.0), (58240, 1.0),
            (58769, 1.0), (72158, 2.0), (77899, 0.5), (87073, 1.0), (87937, 1.0),
            (88030, 0.25), (98218, 2.0), (104359, 4.0), (105962, 4.0), (111031, 1.0),
            (112030, 0.125), (117748, 1.0), (119756, 2.0), (128476, 2.0), (128670, 0.5),
            (137615, 4.0), (144850, 1.0), (151191, 1.0), (160272, 0.5), (162804, 8.0),
            (163835, 1.0), (165655, 0.25), (166324, 0.5), (171451, 2.0), (186258, 0.5),
            (186791, 1.0), (195294, 1.0), (206224, 2.0), (213204, 1.0), (221684, 1.0),
            (230324, 0.5), (235047, 0.25), (238228, 0.5), (250857, 1.0),
        ];
        assert_eq!(audited(&[":::"]), triples);
        #[rustfmt::skip]
        let with_a = [
            (7, 1.0), (34794, 2.0), (37497, 1.0), (50353, 1.0), (58769, 1.0), (61442, 0.5),
            (72158, 2.0), (81849, 2.0), (87937, 1.0), (89538, 1.0), (98218, 2.0),
            (104359, 4.0), (105962, 4.0), (111031, 1.0), (119756, 2.0), (128476, 2.0),
            (135296, 1.0), (137615, 4.0), (144850, 1.0), (151191, 1.0), (160272, 0.5),
            (160507, 0.5), (162804, 8.0), (163835, 1.0), (165655, 0.25), (171451, 2.0),
            (186258, 0.5), (206224, 2.0), (213204, 1.0), (238228, 0.5),
        ];
        assert_eq!(crossed(18, &["a::"]).unwrap().interactions(), ["::a"]);
        assert_eq!(audited(&["a::"]), with_a);
        #[rustfmt::skip]
        let a_with_each = [
            (7, 1.0), (5255, 0.5), (27171, 2.0), (63175, 1.0), (111031, 1.0), (113128, 4.0),
            (119756, 2.0), (121747, 2.0), (144850, 1.0), (155638, 2.0), (179638, 1.0),
            (181010, 1.0), (186258, 0.5), (225954, 1.0),
        ];
        assert_eq!(audited(&["ba", "a:"]), a_with_each);
    }

    /// A wildcard stands for the namespaces of each line, with features: lines of other
    /// namespaces form other interactions, and a line without features forms none.
    #[test]
    fn wildcards_follow_the_namespaces_of_each_line() {
        let hashing = crossed(18, &["::"]).unwrap();
        let mut parser = LineParser::<f32>::new(&hashing, false);
        let mut formed = |line: &[u8]| {
            let mut entries = Vec::new();
            parser.parse_line(line, &mut entries).unwrap();
            entries
        };
        let explicit = |interactions: &[&str], line: &[u8]| {
            let mut entries = Vec::new();
            LineParser::<f32>::new(&crossed(18, interactions).unwrap(), false)
                .parse_line(line, &mut entries)
                .unwrap();
            entries
        };
        for _ in 0..2 {
            let ab = b"1 |a x y |b z";
            assert_eq!(formed(ab), explicit(&["aa", "ab", "bb"], ab));
            let ac = b"-1 |a x |c w:2 |b";
            assert_eq!(formed(ac), explicit(&["aa", "ac", "cc"], ac));
            assert_eq!(formed(b"1 |a"), []);
            let default = b"1 | 3 |c w";
            assert_eq!(formed(default), explicit(&["  ", " c", "cc"], default));
        }
    }

    /// Columns and values as `vw --audit -b 18 --noconstant` (9.11.9) prints them for one line
    /// under `--hash all`, `--ignore`, `--keep`, an interaction with an ignored namespace, and
    /// `--ignore_linear`.
    #[test]
    fn dropped_namespaces_and_hashed_digits_as_vowpal_wabbit_audits() {
        let line = b"1 |alpha x:2 5 |beta z 7 |c q | 9";
        let audited = |rules: FeatureRules| {
            let hashing = Hashing::new(18, &rules).unwrap();
            let mut entries = Vec::new();
            LineParser::<f32>::new(&hashing, false)
                .parse_line(line, &mut entries)
                .unwrap();
            entries
        };
        let rules =
            |interactions: &[&str], ignore: &str, keep: &str, hash_all: bool| FeatureRules {
                interactions: interactions.iter().map(|i| i.to_string()).collect(),
                ignore: ignore.to_string(),
                keep: keep.to_string(),
                hash_all,
                ..FeatureRules::default()
            };
        let sorted = |mut e: Vec<(u32, f32)>| {
            e.sort_by_key(|e| e.0);
            e
        };
        assert_eq!(
            audited(rules(&[], "", "", true)),
            sorted(vec![
                (119756, 2.0),
                (163510, 1.0),
                (186258, 1.0),
                (157781, 1.0),
                (144850, 1.0),
                (255649, 1.0)
            ])
        );
        let without_a = sorted(vec![(186258, 1.0), (27056, 1.0), (144850, 1.0), (9, 1.0)]);
        assert_eq!(audited(rules(&[], "a", "", false)), without_a);
        assert_eq!(audited(rules(&["ab"], "a", "", false)), without_a);
        assert_eq!(
            audited(rules(&[], "", "ca", false)),
            sorted(vec![(119756, 2.0), (4930, 1.0), (144850, 1.0)])
        );
        assert_eq!(
            audited(rules(&[], " ", "", false)),
            sorted(vec![
                (119756, 2.0),
                (4930, 1.0),
                (186258, 1.0),
                (27056, 1.0),
                (144850, 1.0)
            ])
        );
        // `--ignore_linear a -q ab`: a's features only in the interactions (the weights of
        // `vw --readable_model` after one example: none at a's own columns).
        let only_crossed = FeatureRules {
            ignore_linear: "a".to_string(),
            ..rules(&["ab"], "", "", false)
        };
        assert_eq!(
            audited(only_crossed),
            sorted(vec![
                (186258, 1.0),
                (27056, 1.0),
                (144850, 1.0),
                (9, 1.0),
                (179638, 2.0),
                (916, 2.0),
                (34676, 1.0),
                (145750, 1.0)
            ])
        );
        // Letter sets are normalized; ignoring and keeping at once is refused.
        let hashing = Hashing::new(18, &rules(&[], "cac", "", false)).unwrap();
        assert_eq!(hashing.rules().ignore, "ac");
        let both = Hashing::new(18, &rules(&[], "a", "b", false)).unwrap_err();
        assert!(both.contains("both ignored and kept"), "{both}");
        assert!(rules(&[], "", "", false).is_default());
    }

    #[test]
    fn bits_outside_one_to_thirty_two_are_refused() {
        assert!(columns_of_bits(0).is_err());
        assert!(columns_of_bits(33).is_err());
        assert_eq!(columns_of_bits(18), Ok(1 << 18));
    }
}
