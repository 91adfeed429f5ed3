//! Allocations whose size the input chooses — one entry per feature, up to 2^32 of them —
//! made fallibly: a feature count the machine cannot hold becomes an [`AllocError`] naming
//! what was being allocated and how much, instead of an abort or a panic.
//!
//! A feature count costs nothing in the file (one line can name feature 2^32 − 1), so every
//! vector of one entry per feature goes through here. Vectors of one entry per row do not:
//! they are of the size of the data already held.

use sparselin_kernels::HugeArray;
use sparselin_kernels::huge::Zeroed;

/// `count` features' worth of something could not be allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate the {what} of {count} features ({})", size(*.bytes))]
pub struct AllocError {
    /// What was being allocated ("weights", "column statistics", …).
    pub what: &'static str,
    /// The feature count that sized it.
    pub count: usize,
    /// The bytes it needs.
    pub bytes: u128,
}

impl AllocError {
    /// The error for `count` entries of `T` making up the `what`.
    pub fn of<T>(what: &'static str, count: usize) -> AllocError {
        AllocError {
            what,
            count,
            bytes: count as u128 * size_of::<T>() as u128,
        }
    }
}

/// `bytes` for a person: "16.0 GB", "3.2 MB", "512 bytes".
fn size(bytes: u128) -> String {
    match bytes {
        b if b >= 1_000_000_000 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b => format!("{b} bytes"),
    }
}

/// `count` zeros in a [`HugeArray`] (the learners' sums and weights), or an error naming
/// `what`.
pub fn zeroed<T: Zeroed>(what: &'static str, count: usize) -> Result<HugeArray<T>, AllocError> {
    HugeArray::try_zeroed(count).map_err(|_| AllocError::of::<T>(what, count))
}

/// `count` copies of `value` in a `Vec`, or an error naming `what`.
pub fn filled<T: Clone>(what: &'static str, count: usize, value: T) -> Result<Vec<T>, AllocError> {
    let mut v = reserved(what, count)?;
    v.resize(count, value);
    Ok(v)
}

/// An empty `Vec` with room for exactly `count` entries, or an error naming `what`.
pub fn reserved<T>(what: &'static str, count: usize) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(count)
        .map_err(|_| AllocError::of::<T>(what, count))?;
    Ok(v)
}

/// The `count` values of `values` in a `Vec`, or an error naming `what`.
pub fn collected<T>(
    what: &'static str,
    count: usize,
    values: impl Iterator<Item = T>,
) -> Result<Vec<T>, AllocError> {
    let mut v = reserved(what, count)?;
    v.extend(values);
    Ok(v)
}

/// A copy of `values` in a `Vec`, or an error naming `what`.
pub fn copied<T: Clone>(what: &'static str, values: &[T]) -> Result<Vec<T>, AllocError> {
    collected(what, values.len(), values.iter().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2^46 pairs of f64 are 1 PiB: no machine (and no 47-bit address space) has them.
    const IMPOSSIBLE: usize = 1 << 46;

    #[test]
    fn impossible_allocations_are_errors_naming_what_and_how_much() {
        let e = zeroed::<[f64; 2]>("weights", IMPOSSIBLE).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot allocate the weights of 70368744177664 features (1125899.9 GB)"
        );
        let e = filled("column statistics", IMPOSSIBLE, [0.0f64; 2]).unwrap_err();
        assert_eq!(e.bytes, 1 << 50);
        assert!(reserved::<u64>("x", usize::MAX).is_err());
    }

    #[test]
    fn possible_allocations_hold_what_was_asked() {
        assert_eq!(filled("x", 3, 7u64).unwrap(), [7, 7, 7]);
        assert_eq!(reserved::<f64>("x", 5).unwrap().capacity(), 5);
        assert!(zeroed::<f64>("x", 4).unwrap().iter().all(|&x| x == 0.0));
        assert_eq!(copied("x", &[1.5, -2.0]).unwrap(), [1.5, -2.0]);
        assert_eq!(
            AllocError::of::<f64>("weights", 2_000_000_000).to_string(),
            "cannot allocate the weights of 2000000000 features (16.0 GB)"
        );
    }
}
