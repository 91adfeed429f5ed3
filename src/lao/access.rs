//! Paid access to an example's attributes (MATH.md §8: "the observation budget must be
//! enforced and counted").
//!
//! A limited-observation learner never sees a [`Row`]: it gets an [`Attributes`], which hands out
//! the label for free and one attribute at a time, counting every read. The row itself is
//! private, so a learner cannot read what it did not pay for; the driver adds each example's
//! count to the total reported as "attributes observed".

use crate::data::Row;

/// One example seen through a counting window.
pub struct Attributes<'r> {
    row: Row<'r>,
    dimension: usize,
    observed: u64,
}

impl<'r> Attributes<'r> {
    /// Wrap `row` of a data set with `dimension` features (every index of `row` is below it).
    pub fn new(row: Row<'r>, dimension: usize) -> Self {
        Attributes {
            row,
            dimension,
            observed: 0,
        }
    }

    /// The label y: always visible (the LAO setting observes y and k attributes).
    #[inline]
    pub fn label(&self) -> f64 {
        self.row.label
    }

    /// The number of features d (public knowledge, not an observation).
    #[inline]
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// Attribute `x[i]`, paid for: counts one observation. Rows are sparse, so this is a binary
    /// search; an index the row does not store reads as 0 and still counts.
    #[inline]
    pub fn attribute(&mut self, i: usize) -> f64 {
        assert!(
            i < self.dimension,
            "attribute {i} out of range {}",
            self.dimension
        );
        self.observed += 1;
        match self.row.indices.binary_search(&(i as u32)) {
            Ok(pos) => self.row.values.get(pos),
            Err(_) => 0.0,
        }
    }

    /// Attributes read so far from this example.
    #[inline]
    pub fn observed(&self) -> u64 {
        self.observed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{BoundedIndices, Values};

    #[test]
    fn reads_count_and_missing_reads_zero() {
        let values = [0.5, -2.0];
        let row = Row {
            label: -1.0,
            indices: BoundedIndices::scan(&[1, 4]),
            values: Values::F64(&values),
        };
        let mut ex = Attributes::new(row, 6);
        assert_eq!(ex.label(), -1.0);
        assert_eq!(ex.observed(), 0);
        assert_eq!(ex.attribute(4), -2.0);
        assert_eq!(ex.attribute(0), 0.0);
        assert_eq!(ex.attribute(1), 0.5);
        assert_eq!(ex.attribute(4), -2.0);
        assert_eq!(ex.observed(), 4);
        assert_eq!(ex.dimension(), 6);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn reading_past_the_dimension_panics() {
        let row = Row {
            label: 1.0,
            indices: BoundedIndices::scan(&[0]),
            values: Values::Ones,
        };
        Attributes::new(row, 1).attribute(1);
    }
}
