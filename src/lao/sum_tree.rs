//! A sum tree over non-negative weights: O(log d) update and O(log d) draw with probability
//! proportional to the weights (MATH.md §8, "Sample j from a sum tree").
//!
//! Leaves hold the weights; every parent is recomputed as left + right on the way up (never
//! `+= delta`), so the root is always exactly the sum of the current leaves, with no drift over
//! millions of updates. The AERR learner reads ‖ω‖² from the root; [`TreeSampler`] turns a draw
//! into the gradient estimator's (j, c_j).

use super::estimate::InnerProductSampler;
use crate::memory::{self, AllocError};

/// Complete binary tree in an array: node `n` has children `2n` and `2n + 1`, leaves start at
/// `leaves` (a power of two ≥ 2), padding leaves are 0 and are never drawn.
#[derive(Clone, Debug)]
pub struct SumTree {
    leaves: usize,
    len: usize,
    nodes: Vec<f64>,
}

impl SumTree {
    /// A tree over `weights` (each must be finite and ≥ 0), or an error when the machine cannot
    /// hold 2·2^⌈log₂ d⌉ nodes. O(d).
    pub fn new<I>(weights: I) -> Result<Self, AllocError>
    where
        I: IntoIterator<Item = f64>,
        I::IntoIter: ExactSizeIterator,
    {
        let weights = weights.into_iter();
        let len = weights.len();
        let leaves = len.next_power_of_two().max(2);
        let mut tree = SumTree {
            leaves,
            len,
            nodes: memory::filled("sampling tree", 2 * leaves, 0.0)
                .map_err(|e| AllocError { count: len, ..e })?,
        };
        tree.refill(weights);
        Ok(tree)
    }

    /// Replace every weight by the next of `weights` (exactly [`SumTree::len`] of them) and
    /// recompute every parent, in place. O(d).
    pub fn refill(&mut self, weights: impl IntoIterator<Item = f64>) {
        self.rewrite(|leaves| {
            let mut filled = 0;
            for (leaf, weight) in leaves.iter_mut().zip(weights) {
                *leaf = weight;
                filled += 1;
            }
            assert_eq!(
                filled,
                leaves.len(),
                "a sum tree of {} refilled with {filled} weights",
                leaves.len()
            );
        });
    }

    /// Let `write` set the weights (the slice of all [`SumTree::len`] of them, each finite and
    /// ≥ 0), then recompute every parent. O(d).
    pub fn rewrite(&mut self, write: impl FnOnce(&mut [f64])) {
        write(&mut self.nodes[self.leaves..self.leaves + self.len]);
        for n in (1..self.leaves).rev() {
            self.nodes[n] = self.nodes[2 * n] + self.nodes[2 * n + 1];
        }
    }

    /// Number of weights.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the tree holds no weights.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Weight `i`.
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        assert!(i < self.len, "sum tree index {i} out of range {}", self.len);
        self.nodes[self.leaves + i]
    }

    /// Set weight `i` (finite, ≥ 0) and recompute its ancestors as left + right. O(log d).
    #[inline]
    pub fn set(&mut self, i: usize, weight: f64) {
        assert!(i < self.len, "sum tree index {i} out of range {}", self.len);
        debug_assert!(weight >= 0.0 && weight.is_finite(), "bad weight {weight}");
        let mut n = self.leaves + i;
        self.nodes[n] = weight;
        n >>= 1;
        while n >= 1 {
            self.nodes[n] = self.nodes[2 * n] + self.nodes[2 * n + 1];
            n >>= 1;
        }
    }

    /// The sum of all weights (the root): exact for the current leaves.
    #[inline]
    pub fn total(&self) -> f64 {
        self.nodes[1]
    }

    /// Inverse CDF: the leaf where the running sum first exceeds `u · total` (`u` in [0, 1)),
    /// i.e. index `i` drawn with probability weight_i / total. Never returns a zero-weight leaf
    /// (the descent only enters subtrees with a positive sum). `None` when the total is 0.
    #[inline]
    pub fn find(&self, u: f64) -> Option<usize> {
        if self.nodes[1] <= 0.0 {
            return None;
        }
        let mut r = u * self.nodes[1];
        let mut n = 1;
        while n < self.leaves {
            let left = self.nodes[2 * n];
            if r < left || self.nodes[2 * n + 1] <= 0.0 {
                n *= 2;
            } else {
                r -= left;
                n = 2 * n + 1;
            }
        }
        Some(n - self.leaves)
    }
}

/// What a [`TreeSampler`]'s tree holds for each ω_j, which fixes the coefficient c_j.
enum Weighting {
    /// ω_j² (AERR, AESVR): c_j = s‖ω‖²/ω_j.
    Squares,
    /// |ω_j| (AELR): c_j = s‖ω‖₁·sign(ω_j).
    Magnitudes,
}

/// The O(log d) draw of the fast learners, w = s·ω: j with probability (tree weight of ω_j) /
/// (tree total), and c_j = w_j/p_j, so that c_j·x_j is unbiased for w·x. AERR and AELR differ
/// only in the weighting (as [`super::literal::DenseSampler`]'s two forms do), hence one type.
pub struct TreeSampler<'a> {
    tree: &'a SumTree,
    omega: &'a [f64],
    s: f64,
    weighting: Weighting,
}

impl<'a> TreeSampler<'a> {
    /// The sampler of w = s·ω for `tree` over ω_j²: p_j = w_j²/‖w‖², c_j = ‖w‖²/w_j (AERR).
    pub fn squares(tree: &'a SumTree, omega: &'a [f64], s: f64) -> Self {
        TreeSampler {
            tree,
            omega,
            s,
            weighting: Weighting::Squares,
        }
    }

    /// The sampler of w = s·ω for `tree` over |ω_j|: p_j = |w_j|/‖w‖₁, c_j = ‖w‖₁·sign(w_j)
    /// (AELR).
    pub fn magnitudes(tree: &'a SumTree, omega: &'a [f64], s: f64) -> Self {
        TreeSampler {
            tree,
            omega,
            s,
            weighting: Weighting::Magnitudes,
        }
    }
}

impl InnerProductSampler for TreeSampler<'_> {
    #[inline]
    fn draw(&self, u: f64) -> Option<(usize, f64)> {
        let j = self.tree.find(u)?;
        let scaled_total = self.s * self.tree.total();
        let c = match self.weighting {
            Weighting::Squares => scaled_total / self.omega[j],
            Weighting::Magnitudes => scaled_total * self.omega[j].signum(),
        };
        Some((j, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal O(d) inverse CDF the tree replaces.
    fn linear_find(w: &[f64], u: f64) -> Option<usize> {
        let total: f64 = w.iter().sum();
        let r = u * total;
        let mut acc = 0.0;
        for (i, &x) in w.iter().enumerate() {
            acc += x;
            if acc > r && x > 0.0 {
                return Some(i);
            }
        }
        w.iter().rposition(|&x| x > 0.0)
    }

    #[test]
    fn root_is_exact_sum_after_many_updates() {
        let d = 37;
        let mut w: Vec<f64> = (0..d).map(|i| (i % 5) as f64 * 0.37).collect();
        let mut tree = SumTree::new(w.iter().copied()).unwrap();
        let mut x = 0.123_f64;
        for step in 0..20_000 {
            let i = (step * 7919) % d;
            x = (x * 3.9 * (1.0 - x)).clamp(1e-9, 1.0 - 1e-9);
            w[i] = x * 10f64.powi((step % 7) as i32 - 3);
            tree.set(i, w[i]);
        }
        let rebuilt = SumTree::new(w.iter().copied()).unwrap();
        assert_eq!(tree.total(), rebuilt.total());
        let mut refilled = SumTree::new(std::iter::repeat_n(1.0, d)).unwrap();
        refilled.refill(w.iter().copied());
        assert_eq!(refilled.nodes, rebuilt.nodes);
        for (i, &wi) in w.iter().enumerate() {
            assert_eq!(tree.get(i), wi);
        }
    }

    #[test]
    fn find_matches_linear_inverse_cdf() {
        let w = [0.0, 1.0, 0.0, 0.0, 2.5, 0.5, 0.0];
        let tree = SumTree::new(w).unwrap();
        for q in 0..1000 {
            let u = (q as f64 + 0.5) / 1000.0;
            assert_eq!(tree.find(u), linear_find(&w, u), "u = {u}");
        }
        // u close to 1 must not fall into the zero padding or a zero leaf.
        assert_eq!(tree.find(1.0 - 1e-17), Some(5));
        assert_eq!(tree.find(0.0), Some(1));
    }

    #[test]
    fn empty_weights_draw_nothing() {
        let tree = SumTree::new([0.0; 5]).unwrap();
        assert_eq!(tree.find(0.3), None);
        let single = SumTree::new([2.0]).unwrap();
        assert_eq!(single.find(0.99), Some(0));
        assert_eq!(single.len(), 1);
    }

    #[test]
    fn draw_frequencies_follow_weights() {
        let w = [1.0, 3.0, 0.0, 4.0];
        let tree = SumTree::new(w).unwrap();
        let mut counts = [0usize; 4];
        let n = 8000;
        for q in 0..n {
            counts[tree.find((q as f64 + 0.5) / n as f64).unwrap()] += 1;
        }
        assert_eq!(counts, [1000, 3000, 0, 4000]);
    }
}
