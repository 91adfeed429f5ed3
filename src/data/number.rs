//! Numbers straight from bytes, for the text parsers: no `&str`, no allocation.
//!
//! [`TextValue::parse_prefix`] reads the longest number at the start of a byte slice and
//! gives exactly the bits `str::parse::<f32>` / `str::parse::<f64>` gives for that text
//! (both are correctly rounded, so "exactly" means "the correctly rounded value").
//!
//! The fast path covers the forms LIBSVM files are made of — `[+-]digits[.digits][e[+-]digits]`
//! with at most 19 significant digits — by Clinger's exact case: when the decimal mantissa
//! `m ≤ 2^53` and the power `|e| ≤ 22`, both `m` and `10^|e|` are exact `f64`s and one IEEE
//! multiplication or division rounds the exact quotient correctly. For `f32` that `f64`
//! result `q` is rounded again, which is exact unless `q` lies exactly halfway between two
//! `f32`s (rounding is monotone and every `f32` midpoint is an `f64`, so a `q` that is not a
//! midpoint is on the same side of every midpoint as the exact value). Midpoints, the `f32`
//! subnormal range, long mantissas, large exponents, `inf`/`nan` and anything unusual go to
//! `fast-float2` (Eisel–Lemire with its exact fallback, correctly rounded).

use sparselin_kernels::Values;

use super::csr::ValueVec;

/// `10^k` for `k ≤ 22`: every one is exact in `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A plain decimal read by [`scan_decimal`]: `±mantissa × 10^exponent`.
struct Decimal {
    negative: bool,
    mantissa: u64,
    exponent: i32,
    /// Bytes the number spans.
    used: usize,
}

/// The value of the eight ASCII digits at `bytes[p..p + 8]`, if there are eight digits
/// there (SWAR: one load, a digit test and three multiplications instead of eight steps).
#[inline]
fn eight_digits(bytes: &[u8], p: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(p..p + 8)?.try_into().ok()?;
    let v = u64::from_le_bytes(chunk);
    let all_digits = (v & 0xF0F0_F0F0_F0F0_F0F0)
        | ((v.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4)
        == 0x3333_3333_3333_3333;
    if !all_digits {
        return None;
    }
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v = v.wrapping_sub(0x3030_3030_3030_3030);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let v = (v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2));
    Some(v >> 32)
}

/// Append the digits at `bytes[p..]` to `mantissa` (wrapping: the caller bounds the count);
/// returns the position after them.
#[inline]
fn digits(bytes: &[u8], mut p: usize, mantissa: &mut u64) -> usize {
    while let Some(eight) = eight_digits(bytes, p) {
        *mantissa = mantissa.wrapping_mul(100_000_000).wrapping_add(eight);
        p += 8;
    }
    while let Some(&b) = bytes.get(p) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d));
        p += 1;
    }
    p
}

/// Position of the first byte at or after `p` that is not `b'0'`.
#[inline]
fn skip_zeros(bytes: &[u8], mut p: usize) -> usize {
    while bytes.get(p) == Some(&b'0') {
        p += 1;
    }
    p
}

/// Read `[+-]digits[.digits][(e|E)[+-]digits]` at the start of `bytes`, with at least one
/// mantissa digit. `None` when the text is anything else or has more than 19 significant
/// digits or a long exponent (the caller then uses the general parser, which also decides
/// whether the text is a number at all).
#[inline]
fn scan_decimal(bytes: &[u8]) -> Option<Decimal> {
    let negative = bytes.first() == Some(&b'-');
    let start = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    // Leading zeros carry no significant digit; skip them before counting.
    let mut p = skip_zeros(bytes, start);
    let mut any_digit = p > start;
    let mut mantissa = 0u64;
    let int_start = p;
    p = digits(bytes, p, &mut mantissa);
    let int_digits = p - int_start;
    any_digit |= int_digits > 0;
    let (mut significant, mut exponent) = (int_digits, 0i64);
    if bytes.get(p) == Some(&b'.') {
        p += 1;
        if int_digits == 0 {
            let zeros = p;
            p = skip_zeros(bytes, p);
            exponent -= (p - zeros) as i64;
            any_digit |= p > zeros;
        }
        let frac_start = p;
        p = digits(bytes, p, &mut mantissa);
        let frac_digits = p - frac_start;
        any_digit |= frac_digits > 0;
        significant += frac_digits;
        exponent -= frac_digits as i64;
    }
    if !any_digit || significant > 19 {
        return None;
    }
    if let Some(b'e' | b'E') = bytes.get(p) {
        p += 1;
        let negative_exponent = bytes.get(p) == Some(&b'-');
        p += usize::from(matches!(bytes.get(p), Some(b'-' | b'+')));
        let (mut e, start) = (0i64, p);
        while let Some(&b) = bytes.get(p) {
            let d = b.wrapping_sub(b'0');
            if d > 9 || p - start == 4 {
                break;
            }
            e = e * 10 + i64::from(d);
            p += 1;
        }
        if p == start || bytes.get(p).is_some_and(u8::is_ascii_digit) {
            return None; // no exponent digits, or more than four
        }
        exponent += if negative_exponent { -e } else { e };
    }
    Some(Decimal {
        negative,
        mantissa,
        exponent: exponent.clamp(-10_000, 10_000) as i32,
        used: p,
    })
}

/// The correctly rounded `f64` of `d` when Clinger's exact case applies.
#[inline]
fn exact_f64(d: &Decimal) -> Option<f64> {
    if d.mantissa > 1 << 53 || !(-22..=22).contains(&d.exponent) {
        return None;
    }
    let m = d.mantissa as f64;
    let v = if d.exponent < 0 {
        m / POW10[d.exponent.unsigned_abs() as usize]
    } else {
        m * POW10[d.exponent as usize]
    };
    Some(if d.negative { -v } else { v })
}

/// A value type the text parsers produce: `f64` (labels, f64 storage) or `f32` (f32
/// storage, parsed directly in single precision rather than rounded twice through `f64`).
pub trait TextValue: Copy + PartialEq + Send + Sync + Default + std::fmt::Debug + 'static {
    /// The value 1 (all-ones detection).
    const ONE: Self;
    /// The value 0 (explicit zeros are dropped).
    const ZERO: Self;

    /// The longest number at the start of `bytes` and the bytes it spans, as
    /// `str::parse::<Self>` would read that text; `None` if no number starts there.
    fn parse_prefix(bytes: &[u8]) -> Option<(Self, usize)>;

    /// Parse a whole `&str` as the standard library does (the reference parser's path).
    fn parse_str(text: &str) -> Option<Self>;

    /// Whether the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;

    /// Sum of two values in this precision (duplicates are merged with it).
    fn add(self, other: Self) -> Self;

    /// View a slice of these values as the kernels' [`Values`].
    fn values(slice: &[Self]) -> Values<'_>;

    /// Own a vector of these values as a [`ValueVec`].
    fn value_vec(values: Vec<Self>) -> ValueVec;
}

impl TextValue for f64 {
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;

    #[inline]
    fn parse_prefix(bytes: &[u8]) -> Option<(f64, usize)> {
        if let Some(d) = scan_decimal(bytes)
            && let Some(v) = exact_f64(&d)
        {
            return Some((v, d.used));
        }
        fast_float2::parse_partial::<f64, _>(bytes).ok()
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

    #[inline]
    fn parse_prefix(bytes: &[u8]) -> Option<(f32, usize)> {
        if let Some(d) = scan_decimal(bytes)
            && let Some(q) = exact_f64(&d)
        {
            // Bits of the f64 mantissa below f32 precision: exactly half means a midpoint.
            const BELOW: u64 = (1 << 29) - 1;
            let normal = q == 0.0 || q.abs() >= f64::from(f32::MIN_POSITIVE);
            if normal && q.to_bits() & BELOW != 1 << 28 {
                return Some((q as f32, d.used));
            }
        }
        fast_float2::parse_partial::<f32, _>(bytes).ok()
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

    fn values(slice: &[f32]) -> Values<'_> {
        Values::F32(slice)
    }

    fn value_vec(values: Vec<f32>) -> ValueVec {
        ValueVec::F32(values)
    }
}

/// Read decimal digits (after an optional `+`, as `u64::from_str` allows) at the start of
/// `bytes`: the value and the bytes used, `None` without digits or on overflow.
#[inline]
pub fn parse_u64_prefix(bytes: &[u8]) -> Option<(u64, usize)> {
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
            .try_fold(0u64, |v, &b| v.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .map(|v| (v, p)),
    }
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

    /// A decimal exactly halfway between two f32s (and its neighbours) goes the exact way.
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

        /// Decimal text of every shape the fast path handles and a few it does not.
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
