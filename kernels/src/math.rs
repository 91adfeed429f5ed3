//! The elementary functions of the log loss, its conjugate and the softmax: `exp`,
//! `softplus`, `logistic` and `entropy`, written to be vectorized by the dense kernel
//! [`crate::dense::map`] instead of calls into the C library one value at a time.
//!
//! A batch pass of logistic regression evaluates one exponential and one `ln(1 + e^t)` per row
//! for J and another exponential for ∇J; on rows of 13 non-zeros glibc's `log1p` and `exp`
//! (with its error-handling wrapper) took 38% of an L-BFGS solve, more than either sparse
//! kernel, and the duality gap of an L1 solve two logarithms per row (PERF.md `## Batch
//! solvers`, "The log loss's exp and log1p, vectorized"). The functions here have no branch (a
//! NaN or an infinity flows through the same steps) and use only additions, multiplications
//! and divisions, no fused multiply-add, so that every target, vectorized or not, computes the
//! same bits. Their errors, measured against exact values (Python, 50 digits): `exp` at most
//! 0.70 ulp over 100,000 random arguments in [−700, 700] and 0.73 over 200,000 in [−40, 40]
//! (glibc 0.50), the `ln(1 + e)` inside `softplus` at most 1.02 ulp over 200,000 e in (0, 1]
//! (glibc's `log1p` 0.76). The tests hold `exp` and the logarithm within 1 ulp of glibc's
//! `exp` and `ln`, `softplus` and `entropy` within 2 of glibc's formulas.

/// ln 2 rounded to 32 significant bits, so that n·LN2_HI is exact for |n| < 2^21.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// ln 2 − [`LN2_HI`], rounded.
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// ln 2 rounded to a double, and what it leaves out.
const LN2: f64 = core::f64::consts::LN_2;
const LN2_REST: f64 = 2.319_046_813_846_299_6e-17;

/// 1.5·2^52: added to a double of magnitude below 2^51, it rounds that double to the nearest
/// integer (ties to even), which the low bits of the sum then hold.
const ROUND: f64 = 6_755_399_441_055_744.0;

/// Beyond these arguments e^x is +∞, or rounds to 0; between them n stays in range.
const EXP_ABOVE: f64 = 710.0;
const EXP_BELOW: f64 = -746.0;

/// 1/(i + 2)! for i = 0..12: the Taylor coefficients of (e^r − 1 − r)/r².
const EXP_TAIL: [f64; 12] = {
    let mut c = [0.0; 12];
    let mut factorial = 1.0;
    let mut i = 0;
    while i < 12 {
        factorial *= (i + 2) as f64;
        c[i] = 1.0 / factorial;
        i += 1;
    }
    c
};

/// 2/(2j + 3) for j = 0..12: the coefficients of (2·atanh(s) − 2s)/s³ in z = s².
const ATANH_SERIES: [f64; 12] = {
    let mut c = [0.0; 12];
    let mut j = 0;
    while j < 12 {
        c[j] = 2.0 / (2 * j + 3) as f64;
        j += 1;
    }
    c
};

/// Σ_i c_i·x^i for twelve coefficients by Estrin's scheme: pairs, then pairs of pairs, in
/// powers x², x⁴, x⁸, so that the longest chain of dependent operations is 8 instead of
/// Horner's 22 (the rows of a pass overlap only as far as the core's reorder window reaches,
/// and with Horner's rule this chain set the pace: PERF.md `## Batch solvers`).
#[inline(always)]
fn estrin(c: &[f64; 12], x: f64) -> f64 {
    let x2 = x * x;
    let x4 = x2 * x2;
    let pair = |i: usize| c[i] + c[i + 1] * x;
    let quad = |i: usize| pair(i) + pair(i + 2) * x2;
    (quad(0) + quad(4) * x4) + quad(8) * (x4 * x4)
}

/// 2^k for −1022 ≤ k ≤ 1023, from its exponent bits (a meaningless double for other k, which
/// [`exp`] discards).
#[inline(always)]
fn two_to(k: i64) -> f64 {
    f64::from_bits((k.wrapping_add(1023) as u64) << 52)
}

/// e^x (error at most 0.73 ulp measured, module doc): +∞ above ln(f64::MAX), 0 below about
/// −745.13, NaN for NaN.
///
/// x = n·ln 2 + r with |r| ≤ ln 2/2 (Cody and Waite's two-part ln 2, exact in the first part,
/// and r's own rounding error carried into the sum), e^r by its Taylor series to r^13 (the
/// first term left out is below 2^−57 of the sum), and 2^n applied as two factors, so that n
/// from −1076 to 1025 needs no branch. No branch at all: the dense kernels vectorize it.
///
/// Arguments out of range go through the same steps and are replaced at the end, not clamped
/// at the start, where the clamp lay on the path of a caller that waits for one value: an
/// online step's ℓ′ (log loss, SGD on rcv1-like: an epoch 0.98× as long). The replacements are
/// `select_unpredictable`, so that a loop of them stays vectorized on the baseline target (as
/// plain selects, LLVM sank the steps into a branch: the scalar path's `map` of `exp` took
/// 1.6× as long).
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    let shifted = x * core::f64::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let k = (shifted.to_bits() as i64).wrapping_sub(ROUND.to_bits() as i64);
    let (high, low) = (x - n * LN2_HI, n * LN2_LO);
    let r = high - low;
    // What rounding r lost: e^(r + lost) = e^r·(1 + lost) to far below an ulp.
    let lost = (high - r) - low;
    // e^r − 1 − r = r²·(1/2! + r/3! + … + r^11/13!).
    let tail = estrin(&EXP_TAIL, r);
    // 1 + r exactly as a sum and its rounding error (|r| < 1), the rest added to the error.
    let one_r = 1.0 + r;
    let one_r_error = (1.0 - one_r) + r;
    let e_r = one_r + ((one_r_error + lost) + r * r * tail);
    let half = k >> 1;
    let e = e_r * two_to(half) * two_to(k - half);
    // Out of range the steps above compute nothing of use (and a NaN spoils every one).
    let e = core::hint::select_unpredictable(x > EXP_ABOVE, f64::INFINITY, e);
    core::hint::select_unpredictable(x < EXP_BELOW, 0.0, e)
}

/// ln(1 + e^t), the softplus: t + ln(1 + e^−t) for t > 0, so that e^−|t| cannot overflow; t
/// for t above about 37 and e^t below about −37 follow by rounding. NaN for NaN.
#[inline(always)]
pub fn softplus(t: f64) -> f64 {
    softplus_from(t, exp(-t.abs()))
}

/// σ(s) = 1/(1 + e^−s), from e^−|s|, which cannot overflow, so that it is exact to rounding at
/// both ends (σ(−720) is e^−720, not 1/(1 + e^720) = 1/∞ = 0). NaN for NaN.
#[inline(always)]
pub fn logistic(s: f64) -> f64 {
    logistic_from(s, exp(-s.abs()))
}

/// ([`softplus`]\(t\), [`logistic`]\(t\)) from one exponential e^−|t|, bit for bit the two
/// functions: the log loss's value ln(1 + e^t) and its derivative's σ(t) at t = −y·p, which a
/// line search needs together at every trial point.
#[inline(always)]
pub fn softplus_and_logistic(t: f64) -> (f64, f64) {
    let e = exp(-t.abs());
    (softplus_from(t, e), logistic_from(t, e))
}

/// [`softplus`] from e = e^−|t|.
#[inline(always)]
fn softplus_from(t: f64, e: f64) -> f64 {
    // A select, not `max`, whose NaN rule costs instructions once vectorized (a NaN t gives
    // a NaN through e either way).
    let positive = if t > 0.0 { t } else { 0.0 };
    positive + ln_1p_unit(e)
}

/// [`logistic`] from e = e^−|s|.
#[inline(always)]
fn logistic_from(s: f64, e: f64) -> f64 {
    if s >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    }
}

/// A function the dense kernel [`crate::dense::map`] applies to every element of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elementwise {
    /// [`exp`].
    Exp,
    /// [`softplus`].
    Softplus,
    /// [`logistic`].
    Logistic,
    /// [`entropy`].
    Entropy,
}

impl Elementwise {
    /// The function at one value: what every path's `map` computes for each element, bit for
    /// bit.
    #[inline(always)]
    pub fn at(self, x: f64) -> f64 {
        match self {
            Elementwise::Exp => exp(x),
            Elementwise::Softplus => softplus(x),
            Elementwise::Logistic => logistic(x),
            Elementwise::Entropy => entropy(x),
        }
    }

    /// x_i ← f(x_i) for every element, the function chosen once outside the loop. One plain
    /// loop per function, written out: an iterator adaptor's closure, or a shared helper
    /// taking the function, was compiled out of line for softplus and entropy, losing the
    /// calling path's target features (both then ran at the scalar path's speed on AVX2 and
    /// AVX-512: 61–62 and 56–57 million a second, `cargo bench ... -- elementwise`).
    #[inline(always)]
    pub(crate) fn apply(self, x: &mut [f64]) {
        match self {
            Elementwise::Exp => {
                for v in x {
                    *v = exp(*v);
                }
            }
            Elementwise::Softplus => {
                for v in x {
                    *v = softplus(*v);
                }
            }
            Elementwise::Logistic => {
                for v in x {
                    *v = logistic(*v);
                }
            }
            Elementwise::Entropy => {
                for v in x {
                    *v = entropy(*v);
                }
            }
        }
    }
}

/// ln(1 + e) for 0 ≤ e ≤ 1 (NaN for NaN): above 1/2, ln 2 + ln(1 + f) with f = (e − 1)/2
/// (exact) in (−1/4, 0], else ln(1 + e) itself ([`ln_1p_small`]).
#[inline(always)]
fn ln_1p_unit(e: f64) -> f64 {
    let high = e > 0.5;
    // f = e·scale − shift, both steps exact (e/2 − 1/2 by Sterbenz), rather than a select
    // between (e − 1)/2 and e: given the select, LLVM carried both arguments through the
    // division in `ln_1p_small`, two divisions an element (softplus 193–197 against 267–269
    // million a second on AVX-512, PERF.md `## Batch solvers`).
    let (scale, shift) = if high { (0.5, 0.5) } else { (1.0, 0.0) };
    let ln_1p_f = ln_1p_small(e * scale - shift);
    if high {
        LN2 + (ln_1p_f + LN2_REST)
    } else {
        ln_1p_f
    }
}

/// ln(1 + f) for −0.3 ≤ f ≤ 1/2: f − (f²/2 − s·(f²/2 + R)) with s = f/(2 + f) and R = Σ_j
/// 2s^(2j)/(2j + 1), the series of 2·atanh(s) = ln(1 + f): f, exact, carries the value, and
/// the rounding of s only reaches the small correction (|s| ≤ 1/5, the series to s^24).
#[inline(always)]
fn ln_1p_small(f: f64) -> f64 {
    let s = f / (2.0 + f);
    let z = s * s;
    let r = estrin(&ATANH_SERIES, z) * z;
    let half_square = 0.5 * f * f;
    f - (half_square - s * (half_square + r))
}

/// 2^54, which lifts a subnormal into the normal range.
const TWO_54: f64 = 18_014_398_509_481_984.0;

/// ln(x·(1 + δ)) ≈ ln x + δ for x ≥ 0 and a tiny relative change δ (`change`, the rounding
/// error of an x computed as a sum): k·ln 2 + ln(1 + f) with x = 2^k·(1 + f), √2/2 ≤ 1 + f <
/// √2 (f exact), subnormals scaled by 2^54 first. 0 gives −∞, +∞ gives +∞, a negative x or a
/// NaN gives NaN.
#[inline(always)]
fn ln_with(x: f64, change: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let bits = (if tiny { x * TWO_54 } else { x }).to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - if tiny { 1023 + 54 } else { 1023 };
    let mantissa = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    let big = mantissa > core::f64::consts::SQRT_2;
    let f = if big { mantissa * 0.5 } else { mantissa } - 1.0;
    let k = (exponent + i64::from(big)) as f64;
    let ln = k * LN2_HI + (ln_1p_small(f) + (k * LN2_LO + change));
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if x == f64::INFINITY {
        x
    } else if x > 0.0 {
        ln
    } else {
        f64::NAN
    }
}

/// a·ln a + (1 − a)·ln(1 − a) for 0 ≤ a ≤ 1, with 0·ln 0 = 0 (NaN outside [0, 1]): the log loss's convex conjugate
/// (the dual of an L1-regularized logistic regression is a sum of them). ln(1 − a) from the
/// rounded 1 − a and its rounding error, so that it keeps its digits for small a.
#[inline(always)]
pub fn entropy(a: f64) -> f64 {
    let rest = 1.0 - a;
    // 1 − a is exact from a = 1/2 on; below, rest − 1 is (Sterbenz), and so is the error.
    let error = (-a - (rest - 1.0)) / rest;
    let a_ln_a = if a > 0.0 { a * ln_with(a, 0.0) } else { 0.0 };
    let rest_ln = if rest > 0.0 {
        rest * ln_with(rest, error)
    } else {
        0.0
    };
    if (0.0..=1.0).contains(&a) {
        a_ln_a + rest_ln
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_at_its_ends_and_special_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert!(exp(f64::NAN).is_nan());
        assert_eq!(exp(709.79), f64::INFINITY);
        assert!(exp(709.78).is_finite() && exp(709.78) > 1.7e308);
        assert_eq!(exp(-745.2), 0.0);
        assert!(exp(-745.1) > 0.0 && exp(-745.1) < 1e-323);
        assert_eq!(exp(1.0), core::f64::consts::E);
        assert_eq!(exp(-1.0), 1.0 / core::f64::consts::E);
    }

    #[test]
    fn softplus_at_its_ends_and_special_values() {
        assert_eq!(softplus(0.0), LN2);
        assert_eq!(softplus(f64::INFINITY), f64::INFINITY);
        assert_eq!(softplus(f64::NEG_INFINITY), 0.0);
        assert!(softplus(f64::NAN).is_nan());
        assert_eq!(softplus(800.0), 800.0);
        assert_eq!(softplus(-800.0), 0.0);
        assert_eq!(softplus(-700.0), exp(-700.0));
        assert_eq!(softplus(40.0), 40.0);
    }

    #[test]
    fn ln_and_entropy_at_their_ends() {
        assert_eq!(ln_with(1.0, 0.0), 0.0);
        assert_eq!(ln_with(0.0, 0.0), f64::NEG_INFINITY);
        assert_eq!(ln_with(f64::INFINITY, 0.0), f64::INFINITY);
        assert!(ln_with(-1.0, 0.0).is_nan() && ln_with(f64::NAN, 0.0).is_nan());
        assert_eq!(ln_with(2.0, 0.0), LN2);
        assert_eq!(ln_with(f64::from_bits(1), 0.0), -1074.0 * LN2);
        assert_eq!(entropy(0.0), 0.0);
        assert_eq!(entropy(1.0), 0.0);
        assert_eq!(entropy(0.5), -LN2);
        assert!(entropy(1.5).is_nan() && entropy(-0.1).is_nan() && entropy(f64::NAN).is_nan());
    }

    /// Within 1 ulp of the C library's `ln` from subnormals to 10^300, at 200,000 arguments
    /// spread evenly over the exponents.
    #[test]
    fn ln_is_within_one_ulp_of_libm() {
        let mut worst = 0;
        for i in 0..200_000 {
            let x = 10f64.powf(-320.0 + 620.0 * i as f64 / 200_000.0);
            let (ours, theirs) = (ln_with(x, 0.0), x.ln());
            worst = worst.max(ours.to_bits().abs_diff(theirs.to_bits()));
        }
        assert!(worst <= 1, "{worst} ulps");
    }

    #[test]
    fn ln_1p_unit_at_zero_and_one() {
        assert_eq!(ln_1p_unit(0.0), 0.0);
        assert_eq!(ln_1p_unit(1.0), LN2);
        assert_eq!(ln_1p_unit(1e-300), 1e-300);
        assert!(ln_1p_unit(f64::NAN).is_nan());
    }
}
