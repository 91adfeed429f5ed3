//! AdaGrad's per-feature state and the weights it gives, with the two sparse kernels its step
//! needs: the prediction [`dot`] over weights read from the state, and the state's update
//! [`accumulate`].
//!
//! A feature's state is the pair `[u, r]`: u the sum of its gradient components c = g·x, r
//! the root of the sum of their squares (sparselin's `online::Adagrad`, MATH.md §10). Its
//! weight after t steps is the regularized dual-averaging iterate
//!
//! w = −soft(u − h·c₀, tλ₁) / (tλ + h),  h = (δ + r)/η,
//!
//! centred on a starting weight c₀ (0 without a warm start): [`Weights::weight`]. Reading it
//! takes a division and updating r a square root, one per entry of a row; the vector paths
//! take four (two on NEON) at a time.
//!
//! Every path computes each weight and each updated pair with the same operations in the same
//! order as the scalar definitions here ([`Weights::weight`], [`add_gradient`]), none fused,
//! and IEEE division and square root are correctly rounded: the weights and the updated
//! state agree bit for bit across paths, for any input, except for the sign and payload of a
//! NaN (NaN where scalar gives NaN). Only the dot's sum of value × weight differs, within the
//! crate's error bound for a dot of k terms.

use crate::dispatch::selected;
use crate::{BoundedIndices, Values};

/// The weights after t steps of one kind of parameter (the features', or a bias's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// tλ, of the term (λ/2)‖w‖² summed over t steps (0 for a free bias).
    pub lambda_t: f64,
    /// tλ₁, of the term λ₁‖w‖₁ summed over t steps (0: no L1 term).
    pub l1_t: f64,
    /// δ of h = (δ + r)/η.
    pub delta: f64,
    /// 1/η.
    pub inverse_eta: f64,
}

impl Weights {
    /// h = (δ + r)/η, the proximal term's weight for a feature whose root is `root`.
    #[inline]
    pub fn proximal(&self, root: f64) -> f64 {
        (self.delta + root) * self.inverse_eta
    }

    /// The weight of a feature whose state is `[u, root]` and whose centre is `centre`:
    /// −soft(u − h·centre, tλ₁)/(tλ + h). A centre of 0 leaves u as it is (h·0 would be NaN
    /// where h is infinite). Where tλ₁ > 0 a sum that is not finite gives NaN, not the 0 the
    /// shrinkage would round it to: a sum that overflowed must reach the model as a divergence.
    #[inline]
    pub fn weight(&self, [u, root]: [f64; 2], centre: f64) -> f64 {
        let h = self.proximal(root);
        let shifted = if centre == 0.0 { u } else { u - h * centre };
        -shrunk(shifted, self.l1_t) / (self.lambda_t + h)
    }
}

/// soft(z, by) = sign(z)·max(|z| − by, 0), the L1 term's shrinkage, with z itself where by is
/// 0 and NaN where z is not finite and by is not 0 ([`Weights::weight`]).
#[inline]
fn shrunk(z: f64, by: f64) -> f64 {
    match by {
        0.0 => z,
        _ if !z.is_finite() => f64::NAN,
        by => (z.abs() - by).max(0.0).copysign(z),
    }
}

/// `[u, r] ← [u + c, √(r² + c²)]` for the gradient component c; a zero component changes
/// neither (√(r²) need not round back to r where r² underflows). Where r² + c² leaves the
/// normal range the root is taken without squaring (`hypot`), so that r does not overflow to
/// ∞ (which would freeze the weight at 0) or lose its digits below the normal range.
#[inline]
pub fn add_gradient(sums: &mut [f64; 2], c: f64) {
    if c != 0.0 {
        let [u, root] = *sums;
        let squares = root * root + c * c;
        let root = match squares.is_normal() {
            true => squares.sqrt(),
            false => root.hypot(c),
        };
        *sums = [u + c, root];
    }
}

/// `Σ_k val[k]·w_k`, w_k = `weights.weight(sums[idx[k]], centre[idx[k]])` (centre 0 where
/// `None`): a prediction over the weights AdaGrad's state gives. Panics where an index is past
/// `sums` or `centre` is not as long as `sums`.
#[inline]
pub fn dot<'a>(
    weights: Weights,
    sums: &[[f64; 2]],
    centre: Option<&[f64]>,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
) -> f64 {
    selected().adagrad_dot(weights, sums, centre, idx, val)
}

/// `add_gradient(&mut sums[idx[k]], g·val[k])` for every k. Panics where an index is past
/// `sums`. The indices must be distinct, as in a CSR row: with repeats the vector paths stay
/// memory-safe but may keep one of the repeated updates (as [`crate::sparse::axpy`] may).
#[inline]
pub fn accumulate<'a>(
    g: f64,
    idx: impl Into<BoundedIndices<'a>>,
    val: Values<'_>,
    sums: &mut [[f64; 2]],
) {
    selected().adagrad_accumulate(g, idx, val, sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gradient components whose squares overflow or underflow still add up to their root
    /// (a squared 1e160 is ∞, and r = ∞ would freeze the weight at 0).
    #[test]
    fn roots_of_huge_and_tiny_gradients_are_exact() {
        for c in [1e160, 1e-170, 3.0] {
            let mut sums = [0.0; 2];
            add_gradient(&mut sums, c);
            add_gradient(&mut sums, -c);
            let root = (2.0f64).sqrt() * c;
            assert_eq!(sums[0], 0.0);
            assert!((sums[1] - root).abs() <= 1e-15 * root, "{c}: {sums:?}");
        }
        let mut sums = [0.5, 2.0];
        add_gradient(&mut sums, 0.0);
        assert_eq!(sums, [0.5, 2.0]);
    }

    #[test]
    fn shrinkage_keeps_the_sign_and_turns_overflow_into_nan() {
        assert_eq!(shrunk(-3.0, 1.0), -2.0);
        assert_eq!(shrunk(0.5, 1.0), 0.0);
        assert_eq!(shrunk(f64::INFINITY, 0.0), f64::INFINITY);
        assert!(shrunk(f64::INFINITY, 1.0).is_nan());
        assert!(shrunk(f64::NAN, 1.0).is_nan());
    }
}
