//! The random draws of the limited-observation learners, from a seeded xoshiro256++ stream.
//!
//! The literal (O(d)) and the fast (O(k log d)) implementations call these in the same order
//! with the same seed, so they see the same attribute indices and the same uniforms and can be
//! compared iterate for iterate.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seeded source of the draws used by §8's estimators.
#[derive(Clone, Debug)]
pub struct Draws {
    rng: Xoshiro256PlusPlus,
}

impl Draws {
    /// A stream determined by `seed`.
    pub fn new(seed: u64) -> Self {
        Draws {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// Uniform index in `0..d` (d ≥ 1), by the multiply-high map of a 64-bit draw: its bias is
    /// below d / 2⁶⁴, far below anything a test or a run can see.
    #[inline]
    pub fn index(&mut self, d: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * d as u128) >> 64) as usize
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// n ≥ 0 with P(n) = 2^−(n+1) (GenEst's degree), exactly: the number of trailing zero bits
    /// of a uniform 64-bit word (capped at 64, probability 2⁻⁶⁴).
    #[inline]
    pub fn geometric_half(&mut self) -> usize {
        self.rng.next_u64().trailing_zeros() as usize
    }

    /// The k attribute indices i₁..i_k of one example, uniform in `0..d`, independent
    /// (repeats allowed), sorted so that repeats are adjacent.
    pub fn attributes(&mut self, k: usize, d: usize) -> Vec<usize> {
        let mut picked: Vec<usize> = (0..k).map(|_| self.index(d)).collect();
        picked.sort_unstable();
        picked
    }

    /// A uniformly random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.index(i + 1);
            order.swap(i, j);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_ranges_hold() {
        let mut a = Draws::new(7);
        let mut b = Draws::new(7);
        for _ in 0..1000 {
            let (i, j) = (a.index(13), b.index(13));
            assert_eq!(i, j);
            assert!(i < 13);
            let u = a.uniform();
            assert_eq!(u, b.uniform());
            assert!((0.0..1.0).contains(&u));
        }
        assert_ne!(Draws::new(8).index(1 << 40), Draws::new(7).index(1 << 40));
    }

    #[test]
    fn geometric_half_has_the_right_frequencies() {
        let mut draws = Draws::new(3);
        let n = 64_000;
        let mut counts = [0usize; 4];
        for _ in 0..n {
            let g = draws.geometric_half();
            if g < 4 {
                counts[g] += 1;
            }
        }
        // Binomial(n, 2^-(g+1)): within 4 standard deviations.
        for (g, &c) in counts.iter().enumerate() {
            let p = 0.5f64.powi(g as i32 + 1);
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((c as f64 - n as f64 * p).abs() <= 4.0 * sd, "g = {g}: {c}");
        }
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut p = Draws::new(1).permutation(100);
        assert_ne!(p, (0..100).collect::<Vec<_>>());
        p.sort_unstable();
        assert_eq!(p, (0..100).collect::<Vec<_>>());
    }
}
