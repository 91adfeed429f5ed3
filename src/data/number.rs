//! Numbers straight from bytes, for the text parsers: no `&str`, no allocation.
//!
//! [`TextValue::parse_prefix`] reads the longest number at the start of a byte slice and
//! gives exactly the bits `str::parse::<f32>` / `str::parse::<f64>` gives for that text
//! (both are correctly rounded, so "exactly" means "the correctly rounded value"; the
//! property tests below hold them together). The common case — at most 19 digits, a decimal
//! exponent within ±22 — is scanned eight digits at a time ([`scan_decimal`], SWAR) and
//! rounded by Clinger's fast path in `f64` (exact: the mantissa and the power of ten are both
//! exact doubles, so one correctly rounded multiplication or division). An `f32` is that
//! double rounded again, which is correct unless the double lands exactly on a midpoint
//! between two floats (then the true value may lie on either side); that case, subnormal or
//! overflowing `f32`s and every other form go to `fast-float2` (Eisel–Lemire with an exact
//! fallback). Indices are read by [`parse_u64_prefix`], one 8-byte word for up to 7 digits.

use sparselin_kernels::Values;

use super::csr::ValueVec;

/// A value type the text parsers produce: `f64` (labels, f64 storage) or `f32` (f32
/// storage, parsed directly in single precision rather than rounded twice through `f64`).
pub trait TextValue: Copy + PartialEq + Send + Sync + Default + std::fmt::Debug + 'static {
    /// The value 1 (all-ones detection).
    const ONE: Self;
    /// The value 0 (explicit zeros are dropped).
    const ZERO: Self;
    /// The precision's name, as `--values` spells it (error messages).
    const NAME: &'static str;

    /// The longest number at the start of `bytes` and the bytes it spans, as
    /// `str::parse::<Self>` would read that text; `None` if no number starts there.
    fn parse_prefix(bytes: &[u8]) -> Option<(Self, usize)>;

    /// Parse a whole `&str` as the standard library does (the reference parser's path).
    fn parse_str(text: &str) -> Option<Self>;

    /// The correctly rounded value of a scanned decimal, when a fast path gives it
    /// ([`Decimal::to_f64`], [`Decimal::to_f32`]); `None` sends the text to the full parser.
    fn from_decimal(decimal: Decimal) -> Option<Self>;

    /// Whether the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;

    /// Sum of two values in this precision (duplicates are merged with it).
    fn add(self, other: Self) -> Self;

    /// Product of two values in this precision (Vowpal Wabbit's namespace scaling).
    fn mul(self, other: Self) -> Self;

    /// View a slice of these values as the kernels' [`Values`].
    fn values(slice: &[Self]) -> Values<'_>;

    /// Own a vector of these values as a [`ValueVec`].
    fn value_vec(values: Vec<Self>) -> ValueVec;
}

impl TextValue for f64 {
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;
    const NAME: &'static str = "f64";

    #[inline]
    fn parse_prefix(bytes: &[u8]) -> Option<(f64, usize)> {
        match scan_decimal(bytes).and_then(|(d, used)| Some((d.to_f64()?, used))) {
            Some(fast) => Some(fast),
            None => fast_float2::parse_partial::<f64, _>(bytes).ok(),
        }
    }

    #[inline]
    fn from_decimal(decimal: Decimal) -> Option<f64> {
        decimal.to_f64()
    }

    fn parse_str(text: &str) -> Option<f64> {
        text.parse().ok()
    }

    #[inline]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }

    #[inline]
    fn add(self, other: f64) -> f64 {
        self + other
    }

    #[inline]
    fn mul(self, other: f64) -> f64 {
        self * other
    }

    fn values(slice: &[f64]) -> Values<'_> {
        Values::F64(slice)
    }

    fn value_vec(values: Vec<f64>) -> ValueVec {
        ValueVec::F64(values)
    }
}

impl TextValue for f32 {
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
    const NAME: &'static str = "f32";

    #[inline]
    fn parse_prefix(bytes: &[u8]) -> Option<(f32, usize)> {
        match scan_decimal(bytes).and_then(|(d, used)| Some((d.to_f32()?, used))) {
            Some(fast) => Some(fast),
            None => fast_float2::parse_partial::<f32, _>(bytes).ok(),
        }
    }

    #[inline]
    fn from_decimal(decimal: Decimal) -> Option<f32> {
        decimal.to_f32()
    }

    fn parse_str(text: &str) -> Option<f32> {
        text.parse().ok()
    }

    #[inline]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }

    #[inline]
    fn add(self, other: f32) -> f32 {
        self + other
    }

    #[inline]
    fn mul(self, other: f32) -> f32 {
        self * other
    }

    fn values(slice: &[f32]) -> Values<'_> {
        Values::F32(slice)
    }

    fn value_vec(values: Vec<f32>) -> ValueVec {
        ValueVec::F32(values)
    }
}

/// Whether the text of a number the parsers accepted is zero as written: no non-zero digit
/// before its exponent. A value that parsed to zero from any other text has underflowed
/// (`1e-50` as `f32`), which the parsers refuse rather than drop the entry as a zero.
pub fn is_zero_text(text: &[u8]) -> bool {
    !text
        .iter()
        .take_while(|&&b| b != b'e' && b != b'E')
        .any(|b| (b'1'..=b'9').contains(b))
}

/// Read decimal digits (after an optional `+`, as `u64::from_str` allows) at the start of
/// `bytes`: the value and the bytes used, `None` without digits or on overflow.
#[inline]
pub fn parse_u64_prefix(bytes: &[u8]) -> Option<(u64, usize)> {
    let (n, value) = leading_digits(load8(bytes, 0));
    if (1..8).contains(&n) {
        return Some((value, n));
    }
    parse_u64_slow(bytes)
}

/// [`parse_u64_prefix`] one digit at a time: a sign, eight or more digits, or none.
fn parse_u64_slow(bytes: &[u8]) -> Option<(u64, usize)> {
    let start = usize::from(bytes.first() == Some(&b'+'));
    let mut p = start;
    let mut value: u64 = 0;
    while let Some(&b) = bytes.get(p) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        value = value.wrapping_mul(10).wrapping_add(u64::from(d));
        p += 1;
    }
    match p - start {
        0 => None,
        // Up to 19 digits cannot overflow; longer ones (leading zeros, say) are redone checked.
        1..=19 => Some((value, p)),
        _ => bytes[start..p]
            .iter()
            .try_fold(0u64, |v, &b| {
                v.checked_mul(10)?.checked_add(u64::from(b - b'0'))
            })
            .map(|v| (v, p)),
    }
}

/// A decimal number `±mantissa · 10^exponent`, as read by [`scan_decimal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// A leading `-`.
    pub negative: bool,
    /// All digits of the number, the decimal point removed (at most 19 of them).
    pub mantissa: u64,
    /// The power of ten the mantissa is scaled by.
    pub exponent: i32,
}

/// Powers of ten exactly representable as `f64` (10^0 … 10^22).
const POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Powers of ten 10^0 … 10^8 as integers.
const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

impl Decimal {
    /// The correctly rounded `f64` when Clinger's fast path applies (mantissa ≤ 2^53,
    /// |exponent| ≤ 22: one exact-operand multiplication or division), else `None`.
    #[inline]
    pub fn to_f64(self) -> Option<f64> {
        if self.mantissa > 1 << 53 || self.exponent.unsigned_abs() > 22 {
            return None;
        }
        let m = self.mantissa as f64;
        let scale = POW10_F64[self.exponent.unsigned_abs() as usize];
        let v = if self.exponent < 0 {
            m / scale
        } else {
            m * scale
        };
        Some(if self.negative { -v } else { v })
    }

    /// The correctly rounded `f32` when [`Decimal::to_f64`] applies and rounding that double
    /// to `f32` cannot differ from rounding the exact value: the double is zero or a normal
    /// `f32` magnitude, and not exactly halfway between two `f32`s (rounding the double is
    /// monotone and every such midpoint is a double, so a double off the midpoint lies on the
    /// exact value's side of it).
    #[inline]
    pub fn to_f32(self) -> Option<f32> {
        let v = self.to_f64()?;
        let magnitude = v.abs();
        let normal = (f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&magnitude);
        // The 29 bits a double has beyond an f32's 23: exactly one half ulp of f32.
        let midpoint = v.to_bits() & 0x1fff_ffff == 0x1000_0000;
        ((magnitude == 0.0 || normal) && !midpoint).then_some(v as f32)
    }
}

/// Eight bytes from `pos` as a little-endian word, padded with spaces past the end.
#[inline]
fn load8(bytes: &[u8], pos: usize) -> u64 {
    match bytes.get(pos..pos + 8) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("eight bytes")),
        None => {
            let mut word = [b' '; 8];
            let tail = bytes.get(pos..).unwrap_or_default();
            word[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(word)
        }
    }
}

/// How many of the word's bytes (first byte lowest) are ASCII digits before the first other
/// byte (0 to 8), and the value of those digits.
#[inline]
fn leading_digits(word: u64) -> (usize, u64) {
    let digits = word ^ 0x3030_3030_3030_3030;
    // A byte's top bit is set here iff it is not a digit (0..=9 after the xor); a carry can
    // only start at such a byte and only reaches later ones, so the first is found exactly.
    let non_digit = (digits.wrapping_add(0x7676_7676_7676_7676) | digits) & 0x8080_8080_8080_8080;
    let n = (non_digit.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // Move the n digits to the top bytes (zeros, i.e. leading zero digits, below them) and
    // combine them pairwise, then in fours, then all eight (the SWAR digit reduction).
    let d = digits << (64 - 8 * n);
    let d = d.wrapping_mul(10).wrapping_add(d >> 8);
    let d = ((d & 0x0000_00ff_0000_00ff).wrapping_mul(100 + (1_000_000 << 32)))
        .wrapping_add(((d >> 16) & 0x0000_00ff_0000_00ff).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    (n, d)
}

/// Append the digits at `pos` to `mantissa`: the new mantissa, digits read and position
/// after them; `None` if that makes more than `budget` digits.
#[inline]
fn digit_run(
    bytes: &[u8],
    mut pos: usize,
    mut mantissa: u64,
    budget: usize,
) -> Option<(u64, usize, usize)> {
    let mut read = 0;
    loop {
        let (n, value) = leading_digits(load8(bytes, pos));
        read += n;
        if read > budget {
            return None;
        }
        mantissa = mantissa * POW10_U64[n] + value;
        pos += n;
        if n < 8 {
            return Some((mantissa, read, pos));
        }
    }
}

/// Bytes [`scan_entry`] needs after the token's start: the longest entry it accepts
/// (7 index digits, `:`, `-`, 7 + 1 + 15 mantissa bytes, separator) with room for its last
/// 8-byte load.
pub const ENTRY_WINDOW: usize = 48;

/// Little-endian word of the eight bytes at `at` of a window at least `at + 8` long.
#[inline]
fn word(window: &[u8; ENTRY_WINDOW], at: usize) -> u64 {
    let at = at.min(ENTRY_WINDOW - 8);
    u64::from_le_bytes(window[at..at + 8].try_into().expect("eight bytes"))
}

/// Scan an `index:value` token at `pos` of `text` in its common form, in one pass of 8-byte
/// loads: 1 to 7 index digits, `:`, an optional `-`, 0 to 7 integer digits, then optionally
/// `.` and fraction digits (at least one mantissa digit, at most 19 in all), followed by a
/// separator (ASCII whitespace or `#`). Returns the raw index, the value as a [`Decimal`]
/// and the position of that separator. `None` — anything else, or fewer than
/// [`ENTRY_WINDOW`] bytes left in `text` — sends the token to the general readers
/// ([`parse_u64_prefix`], [`TextValue::parse_prefix`]), which accept the same texts.
/// Always inlined: it runs once per entry, and as a call convert took ~13% more
/// instructions (callgrind, PERF.md "Data").
#[inline(always)]
pub fn scan_entry(text: &[u8], pos: usize) -> Option<(u64, Decimal, usize)> {
    let window: &[u8; ENTRY_WINDOW] = text.get(pos..pos + ENTRY_WINDOW)?.try_into().ok()?;
    let (n, index) = leading_digits(word(window, 0));
    if n == 0 || n == 8 || window[n] != b':' {
        return None;
    }
    let mut at = n + 1;
    let negative = window[at] == b'-';
    at += usize::from(negative);
    // Values below one, "0.…", are the common case of normalized data: skip that word's scan.
    let (whole, mut mantissa) = if window[at] == b'0' && window[at + 1] == b'.' {
        (1, 0)
    } else {
        leading_digits(word(window, at))
    };
    if whole == 8 {
        return None;
    }
    at += whole;
    let mut fraction = 0;
    if window[at] == b'.' {
        at += 1;
        let (n, value) = leading_digits(word(window, at));
        (mantissa, fraction, at) = (mantissa * POW10_U64[n] + value, n, at + n);
        if n == 8 {
            let (n, value) = leading_digits(word(window, at));
            if whole + 8 + n > 19 {
                return None;
            }
            (mantissa, fraction, at) = (mantissa * POW10_U64[n] + value, 8 + n, at + n);
        }
    }
    let separator = matches!(window[at], b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'#');
    if whole + fraction == 0 || !separator {
        return None;
    }
    let decimal = Decimal {
        negative,
        mantissa,
        exponent: -(fraction as i32),
    };
    Some((index, decimal, pos + at))
}

/// Scan the common decimal forms at the start of `bytes` — `[+-]digits[.digits][(e|E)[+-]digits]`
/// with at least one mantissa digit, at most 19 digits in all and at most 4 exponent digits —
/// and return the number and the bytes it spans. `None` means "not this simple form": the
/// text may still be a number (`inf`, 25 digits, …) or nothing; callers then use the full
/// parser.
#[inline]
pub fn scan_decimal(bytes: &[u8]) -> Option<(Decimal, usize)> {
    let first = *bytes.first()?;
    let negative = first == b'-';
    let mut pos = usize::from(negative || first == b'+');
    let (mantissa, whole, after) = digit_run(bytes, pos, 0, 19)?;
    pos = after;
    let (mut mantissa, mut fraction) = (mantissa, 0);
    if bytes.get(pos) == Some(&b'.') {
        (mantissa, fraction, pos) = digit_run(bytes, pos + 1, mantissa, 19 - whole)?;
    }
    if whole + fraction == 0 {
        return None;
    }
    let mut exponent = -(fraction as i32);
    if let Some(b'e' | b'E') = bytes.get(pos) {
        pos += 1;
        let sign = bytes.get(pos).copied();
        pos += usize::from(matches!(sign, Some(b'+' | b'-')));
        let (n, value) = leading_digits(load8(bytes, pos));
        if !(1..=4).contains(&n) {
            return None;
        }
        pos += n;
        exponent += if sign == Some(b'-') {
            -(value as i32)
        } else {
            value as i32
        };
    }
    let decimal = Decimal {
        negative,
        mantissa,
        exponent,
    };
    Some((decimal, pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every prefix parse must equal the standard library on the same (whole) text.
    fn same_as_std(text: &str) {
        let bytes = text.as_bytes();
        match (text.parse::<f64>(), f64::parse_prefix(bytes)) {
            (Ok(v), Some((w, used))) if used == bytes.len() => {
                assert_eq!(v.to_bits(), w.to_bits(), "f64 {text}")
            }
            (Err(_), None) => {}
            (Err(_), Some((_, used))) => assert!(used < bytes.len(), "f64 accepts {text}"),
            (r, f) => panic!("f64 {text}: std {r:?}, fast {f:?}"),
        }
        match (text.parse::<f32>(), f32::parse_prefix(bytes)) {
            (Ok(v), Some((w, used))) if used == bytes.len() => {
                assert_eq!(v.to_bits(), w.to_bits(), "f32 {text}")
            }
            (Err(_), None) => {}
            (Err(_), Some((_, used))) => assert!(used < bytes.len(), "f32 accepts {text}"),
            (r, f) => panic!("f32 {text}: std {r:?}, fast {f:?}"),
        }
    }

    #[test]
    fn common_and_odd_forms() {
        for text in [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "0.5",
            ".5",
            "5.",
            "-.5",
            "1e3",
            "1E-3",
            "1e+22",
            "1e23",
            "0.007835584",
            "0.0155739235",
            "123456789012345678",
            "12345678901234567890",
            "9007199254740993",
            "1e-45",
            "1.4e-45",
            "3.4028235e38",
            "3.4028236e38",
            "1e39",
            "inf",
            "-infinity",
            "NaN",
            "",
            "-",
            "+",
            ".",
            "e5",
            "1e",
            "1e+",
            "1e-0",
            "0.0000000",
            "00000000000000000000000001",
            "1e00001",
            "12345678",
            "1234567890123456789",
            "0.12345678",
            "0.000000001234567890123",
            "1.2345678/9",
            "12345678:1",
            "0.1234567:8",
            "99999999.99999999",
            "10000000000000000000.5",
            "1e-99999",
            "0.1",
            "0.2",
            "0.3",
        ] {
            same_as_std(text);
        }
    }

    #[test]
    fn prefix_stops_at_the_first_foreign_byte() {
        assert_eq!(f64::parse_prefix(b"0.25 7:1"), Some((0.25, 4)));
        assert_eq!(f32::parse_prefix(b"-3#x"), Some((-3.0, 2)));
        assert_eq!(parse_u64_prefix(b"+17:0.5"), Some((17, 3)));
        assert_eq!(parse_u64_prefix(b":1"), None);
        assert_eq!(parse_u64_prefix(b"18446744073709551616"), None);
        assert_eq!(
            parse_u64_prefix(b"0000000000000000000000042"),
            Some((42, 25))
        );
    }

    #[test]
    fn simple_decimals_are_scanned_eight_digits_at_a_time() {
        let d = |negative, mantissa, exponent| Decimal {
            negative,
            mantissa,
            exponent,
        };
        assert_eq!(
            scan_decimal(b"0.0155739235 9:1"),
            Some((d(false, 155_739_235, -10), 12))
        );
        assert_eq!(scan_decimal(b"-1"), Some((d(true, 1, 0), 2)));
        assert_eq!(scan_decimal(b"+.5e-3#"), Some((d(false, 5, -4), 6)));
        assert_eq!(
            scan_decimal(b"12345678901.25E+2"),
            Some((d(false, 1_234_567_890_125, 0), 17))
        );
        assert_eq!(scan_decimal(b"5."), Some((d(false, 5, 0), 2)));
        // Not the simple form: the full parser decides.
        for text in [
            &b"inf"[..],
            b".",
            b"-",
            b"e5",
            b"1e",
            b"1e+",
            b"1e12345",
            b"12345678901234567890",
        ] {
            assert_eq!(
                scan_decimal(text),
                None,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(parse_u64_prefix(b"47236:0.5"), Some((47236, 5)));
        assert_eq!(parse_u64_prefix(b"7"), Some((7, 1)));
        assert_eq!(parse_u64_prefix(b"12345678:"), Some((12_345_678, 8)));
    }

    /// The `f32` shortcut declines exactly where rounding twice could go wrong.
    #[test]
    fn f32_shortcut_declines_midpoints_subnormals_and_overflow() {
        let decimal = |text: &str| scan_decimal(text.as_bytes()).unwrap().0;
        // 2^24 + 1 is halfway between two f32s: ties-to-even needs the exact value.
        assert_eq!(decimal("16777217").to_f32(), None);
        assert_eq!(f32::parse_prefix(b"16777217"), Some((16_777_216.0, 8)));
        assert_eq!(decimal("16777219").to_f32(), None);
        assert_eq!(decimal("16777218").to_f32(), Some(16_777_218.0));
        assert_eq!(decimal("1e-40").to_f32(), None);
        assert_eq!(decimal("4e38").to_f32(), None);
        assert_eq!(decimal("0.0").to_f32(), Some(0.0));
        assert_eq!(
            decimal("0.0155739235").to_f32(),
            "0.0155739235".parse::<f32>().ok()
        );
        assert_eq!(decimal("9007199254740993").to_f64(), None);
        assert_eq!(decimal("1e23").to_f64(), None);
    }

    /// A decimal exactly halfway between two f32s (and its neighbours) rounds like std.
    #[test]
    fn f32_midpoints_round_like_std() {
        for bits in [
            0x3f80_0000u32,
            0x3dcc_cccd,
            0x4b80_0001,
            0x0080_0000,
            0x7f7f_ffff,
        ] {
            let (a, b) = (f32::from_bits(bits), f32::from_bits(bits + 1));
            let mid = (f64::from(a) + f64::from(b)) / 2.0;
            for text in [
                format!("{mid:e}"),
                format!("{mid}"),
                format!("{:.17e}", mid),
            ] {
                same_as_std(&text);
            }
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Decimal text of many shapes: signs, long and short mantissas, exponents.
        fn decimal() -> impl Strategy<Value = String> {
            (
                prop::sample::select(vec!["", "-", "+"]),
                "[0-9]{0,12}",
                prop::option::of("[0-9]{0,14}"),
                prop::option::of((prop::sample::select(vec!["e", "E-", "e+"]), 0u32..60)),
            )
                .prop_map(|(sign, int, frac, exp)| {
                    let mut s = format!("{sign}{int}");
                    if let Some(f) = frac {
                        s.push('.');
                        s.push_str(&f);
                    }
                    if let Some((e, k)) = exp {
                        s.push_str(&format!("{e}{k}"));
                    }
                    s
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            #[test]
            fn decimals_match_std(text in decimal()) {
                same_as_std(&text);
            }

            /// Indices of any length, with what may follow them, read as `u64::from_str`.
            #[test]
            fn integers_match_std(digits in "[0-9]{0,22}", sign in "[+]?", tail in "[:# .a0-9]{0,3}") {
                let text = format!("{sign}{digits}");
                let expected = text.parse::<u64>().ok();
                let mut bytes = text.clone().into_bytes();
                bytes.extend_from_slice(tail.as_bytes());
                let parsed = parse_u64_prefix(&bytes);
                if tail.starts_with(|c: char| c.is_ascii_digit()) {
                    // The digits run on into the tail: compare with the longer number.
                    let run = bytes.iter().skip(sign.len()).take_while(|b| b.is_ascii_digit()).count();
                    let longer = std::str::from_utf8(&bytes[..sign.len() + run]).unwrap();
                    prop_assert_eq!(parsed.map(|p| p.0), longer.parse::<u64>().ok());
                } else {
                    prop_assert_eq!(parsed, expected.map(|v| (v, text.len())));
                }
            }

            /// Shortest and long forms of arbitrary f32 and f64 values, and f32 midpoints.
            #[test]
            fn printed_floats_match_std(bits in any::<u32>(), bits64 in any::<u64>()) {
                let a = f32::from_bits(bits);
                let x = f64::from_bits(bits64);
                prop_assume!(a.is_finite() && x.is_finite());
                let next = f32::from_bits(bits.wrapping_add(1));
                let mid = (f64::from(a) + f64::from(next)) / 2.0;
                for text in [
                    format!("{a}"), format!("{a:e}"), format!("{:.9}", a), format!("{x}"),
                    format!("{x:e}"), format!("{:.12e}", x), format!("{mid}"), format!("{mid:e}"),
                ] {
                    same_as_std(&text);
                }
            }
        }
    }
}
