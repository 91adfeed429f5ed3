//! Numbers straight from bytes, for the text parsers: no `&str`, no allocation.
//!
//! [`TextValue::parse_prefix`] reads the longest number at the start of a byte slice and
//! gives exactly the bits `str::parse::<f32>` / `str::parse::<f64>` gives for that text
//! (both are correctly rounded, so "exactly" means "the correctly rounded value"; the
//! property tests below hold them together). It is `fast-float2` (Eisel–Lemire with an exact
//! fallback, eight digits at a time): a hand-written Clinger fast path with SWAR digit steps
//! measured slower than it on the rcv1-like text (PERF.md, "Data"). Indices are read by
//! [`parse_u64_prefix`], a plain digit loop.

use sparselin_kernels::Values;

use super::csr::ValueVec;

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
            .try_fold(0u64, |v, &b| {
                v.checked_mul(10)?.checked_add(u64::from(b - b'0'))
            })
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
