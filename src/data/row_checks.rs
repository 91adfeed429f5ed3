//! The O(nnz) checks of a matrix's rows that every dataset passes when it is opened or built
//! (indices strictly increasing, values finite), written to vectorize: they read every entry
//! of a corpus each time it is opened for training or read from text.

/// Whether `row` is strictly increasing. Written as one pass without early exit, which the
/// compiler vectorizes: validation reads every index of a dataset each time it is opened for
/// training, and the short-circuiting form ran one comparison per cycle at best.
fn strictly_increasing(row: &[u32]) -> bool {
    row.iter()
        .zip(row.iter().skip(1))
        .fold(true, |ordered, (a, b)| ordered & (a < b))
}

/// Whether the indices of `row` are strictly increasing and below `n`: the order and range
/// every row of a matrix keeps.
pub(crate) fn increasing_below(row: &[u32], n: usize) -> bool {
    strictly_increasing(row) && row.last().is_none_or(|&last| (last as usize) < n)
}

/// Whether every value passes `finite`, in blocks checked without early exit (vectorized), so
/// that a bad value still stops the scan within a block.
pub(crate) fn all_finite<T: Copy>(values: &[T], finite: fn(T) -> bool) -> bool {
    values
        .chunks(1024)
        .all(|block| block.iter().fold(true, |ok, &x| ok & finite(x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_check_finds_a_tie_or_a_drop_anywhere_in_a_row() {
        assert!(strictly_increasing(&[]));
        assert!(strictly_increasing(&[7]));
        let row: Vec<u32> = (0..100).map(|i| 3 * i + 1).collect();
        assert!(strictly_increasing(&row));
        for at in 1..row.len() {
            let mut tie = row.clone();
            tie[at] = tie[at - 1];
            assert!(!strictly_increasing(&tie), "tie at {at}");
            let mut drop = row.clone();
            drop[at] = 0;
            assert!(!strictly_increasing(&drop), "drop at {at}");
        }
        assert!(!strictly_increasing(&[u32::MAX, 0]));
    }

    #[test]
    fn finite_check_finds_a_nan_or_an_infinity_in_any_block() {
        let values = vec![0.5f32; 3000];
        assert!(all_finite(&values, f32::is_finite));
        for at in [0, 1023, 1024, 2999] {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut v = values.clone();
                v[at] = bad;
                assert!(!all_finite(&v, f32::is_finite), "{bad} at {at}");
            }
        }
        let mut wide = vec![f64::MAX; 2000];
        assert!(all_finite(&wide, f64::is_finite));
        wide[1500] = f64::NAN;
        assert!(!all_finite(&wide, f64::is_finite));
    }
}
