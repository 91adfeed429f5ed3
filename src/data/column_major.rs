//! The data by columns (compressed sparse columns): what a solver that steps one feature at a
//! time reads, each feature's non-zeros together with the rows they sit in
//! ([`crate::batch::cd`]). Built once per training run from the rows, in memory: four bytes of
//! row index per non-zero and the values in the rows' own precision (none for binary data;
//! eight bytes where the rows mix precisions), so that every product with a column is the
//! product with the rows' values, widened exactly to double precision.

use std::ops::Range;

use sparselin_kernels::{BoundedIndices, IndexVec, Values};

use super::csr::{Examples, ValueVec};

/// The columns of a data set.
#[derive(Clone, Debug)]
pub struct ColumnMajor {
    /// Column j's entries are `starts[j]..starts[j + 1]`.
    starts: Vec<usize>,
    /// The row of each entry, increasing within a column.
    rows: IndexVec,
    /// The value of each entry.
    values: ValueVec,
    n_rows: usize,
}

/// One column: its rows and values.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    /// The rows where the column is stored, increasing, each below the row count.
    pub rows: BoundedIndices<'a>,
    /// The values, parallel to `rows`.
    pub values: Values<'a>,
}

/// Why the columns of a data set cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TransposeError {
    /// Row indices are stored in 32 bits.
    #[error("{0} rows are more than the 2^32 a column-major copy can index")]
    TooManyRows(usize),
    /// The copy does not fit in memory.
    #[error(
        "cannot allocate the column-major copy of the data: {nnz} non-zeros (up to {:.1} GB)",
        *.nnz as f64 * 12e-9
    )]
    Memory {
        /// Non-zeros of the data.
        nnz: u64,
    },
}

impl ColumnMajor {
    /// The columns of `data`: two passes over its rows (count, then place), O(nnz + n).
    pub fn of(data: &impl Examples) -> Result<ColumnMajor, TransposeError> {
        let (m, n) = (data.n_rows(), data.n_features());
        if m > 1 << 32 {
            return Err(TransposeError::TooManyRows(m));
        }
        let nnz = data.nnz();
        let too_big = || TransposeError::Memory { nnz };
        let entries = usize::try_from(nnz).map_err(|_| too_big())?;
        let mut starts = try_filled(n + 1, 0usize).ok_or_else(too_big)?;
        let mut precision = Precision::Ones;
        for i in 0..m {
            let row = data.row(i);
            precision = precision.and(row.values);
            for &j in row.indices.iter() {
                starts[j as usize + 1] += 1;
            }
        }
        for j in 0..n {
            starts[j + 1] += starts[j];
        }
        let mut next = starts.clone();
        let mut rows = try_filled(entries, 0u32).ok_or_else(too_big)?;
        let mut values = match precision {
            Precision::Ones => ValueVec::Ones,
            Precision::F32 => ValueVec::F32(try_filled(entries, 0.0).ok_or_else(too_big)?),
            Precision::F64 => ValueVec::F64(try_filled(entries, 0.0).ok_or_else(too_big)?),
        };
        for i in 0..m {
            let row = data.row(i);
            for (k, &j) in row.indices.iter().enumerate() {
                let at = &mut next[j as usize];
                rows[*at] = i as u32;
                match (&mut values, row.values) {
                    (ValueVec::F32(to), Values::F32(from)) => to[*at] = from[k],
                    (ValueVec::F64(to), from) => to[*at] = from.get(k),
                    // Binary rows into binary columns (F32 columns hold F32 rows only).
                    _ => {}
                }
                *at += 1;
            }
        }
        Ok(ColumnMajor {
            starts,
            rows: IndexVec::new(rows),
            values,
            n_rows: m,
        })
    }

    /// Number of columns (n).
    pub fn n_columns(&self) -> usize {
        self.starts.len() - 1
    }

    /// Number of rows of the data (every row index is below it).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.rows.as_slice().len()
    }

    /// Where column `j`'s entries sit among all entries (the columns one after the other),
    /// for arrays kept parallel to them.
    #[inline]
    pub fn range(&self, j: usize) -> Range<usize> {
        self.starts[j]..self.starts[j + 1]
    }

    /// Column `j`.
    #[inline]
    pub fn column(&self, j: usize) -> Column<'_> {
        let range = self.range(j);
        Column {
            rows: self.rows.bounded().slice(range.clone()),
            values: self.values.slice(range.start, range.end),
        }
    }

    /// One zero per entry, for values kept parallel to the entries (an error where they do
    /// not fit).
    pub fn zeroed_entries(&self) -> Result<Vec<f64>, TransposeError> {
        try_filled(self.nnz(), 0.0).ok_or(TransposeError::Memory {
            nnz: self.nnz() as u64,
        })
    }
}

/// The narrowest storage that holds every row's values exactly.
#[derive(Clone, Copy)]
enum Precision {
    Ones,
    F32,
    F64,
}

impl Precision {
    /// This precision widened to hold `values` too.
    fn and(self, values: Values<'_>) -> Precision {
        match (self, values) {
            (Precision::F64, _) | (_, Values::F64(_)) => Precision::F64,
            (Precision::F32, _) | (_, Values::F32(_)) => Precision::F32,
            (Precision::Ones, Values::Ones) => Precision::Ones,
        }
    }
}

/// `count` copies of `value`, or `None` where they do not fit.
fn try_filled<T: Clone>(count: usize, value: T) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(count).ok()?;
    v.resize(count, value);
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};

    #[test]
    fn columns_hold_every_entry_of_the_rows_in_row_order() {
        // Rows: {0: 1.5, 3: -2}, {}, {3: 4, 1: 0.25 sorted as 1, 3}, {0: 7}; column 2 empty.
        let data = CsrMatrix::new(
            vec![1.0, -1.0, 1.0, -1.0],
            vec![0, 2, 2, 4, 5],
            vec![0, 3, 1, 3, 0],
            ValueVec::F32(vec![1.5, -2.0, 0.25, 4.0, 7.0]),
            5,
        )
        .unwrap();
        let columns = ColumnMajor::of(&data).unwrap();
        assert_eq!(
            (columns.n_columns(), columns.n_rows(), columns.nnz()),
            (5, 4, 5)
        );
        let column = |j| {
            let c = columns.column(j);
            let values: Vec<f64> = (0..c.rows.len()).map(|k| c.values.get(k)).collect();
            (c.rows.as_slice().to_vec(), values)
        };
        assert!(matches!(columns.column(0).values, Values::F32(_)));
        assert_eq!(column(0), (vec![0, 3], vec![1.5, 7.0]));
        assert_eq!(column(1), (vec![2], vec![0.25]));
        assert_eq!(column(2), (vec![], vec![]));
        assert_eq!(column(3), (vec![0, 2], vec![-2.0, 4.0]));
        assert_eq!(column(4), (vec![], vec![]));
        assert_eq!(columns.range(3), 3..5);
    }

    #[test]
    fn a_random_matrix_transposes_to_its_dense_transpose() {
        let data = crate::batch::objective::tests::random_matrix(37, 11, 5);
        let columns = ColumnMajor::of(&data).unwrap();
        // The transpose, dense: one vector per column.
        let mut dense = vec![vec![0.0; 37]; 11];
        for (i, r) in (0..data.n_rows()).map(|i| (i, data.row(i))) {
            for (k, &j) in r.indices.iter().enumerate() {
                dense[j as usize][i] = r.values.get(k);
            }
        }
        let mut seen = 0;
        for (j, expected) in dense.iter().enumerate() {
            let c = columns.column(j);
            assert!(c.rows.windows(2).all(|p| p[0] < p[1]), "column {j}");
            let mut found = vec![0.0; 37];
            for (k, &i) in c.rows.iter().enumerate() {
                let v = c.values.get(k);
                assert_ne!(v, 0.0);
                found[i as usize] = v;
            }
            assert_eq!(&found, expected, "column {j}");
            seen += c.rows.len();
        }
        assert_eq!(seen as u64, data.nnz());
        assert!(matches!(columns.column(0).values, Values::F64(_)));
    }

    /// Binary rows give binary columns, and rows of two precisions double precision.
    #[test]
    fn columns_keep_the_rows_precision() {
        let binary = CsrMatrix::new(
            vec![1.0, -1.0],
            vec![0, 1, 3],
            vec![2, 0, 2],
            ValueVec::Ones,
            3,
        )
        .unwrap();
        let columns = ColumnMajor::of(&binary).unwrap();
        assert_eq!(columns.column(2).values, Values::Ones);
        assert_eq!(columns.column(2).rows.as_slice(), &[0, 1]);
        let single =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F32(vec![0.1]), 1).unwrap();
        let double =
            CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], ValueVec::F64(vec![0.1]), 1).unwrap();
        let mixed = Mixed([&single, &double]);
        let columns = ColumnMajor::of(&mixed).unwrap();
        assert_eq!(
            columns.column(0).values,
            Values::F64(&[f64::from(0.1f32), 0.1])
        );
    }

    /// Two one-row sets one after the other.
    struct Mixed<'a>([&'a CsrMatrix; 2]);

    impl Examples for Mixed<'_> {
        fn n_rows(&self) -> usize {
            2
        }

        fn n_features(&self) -> usize {
            1
        }

        fn row(&self, i: usize) -> crate::data::Row<'_> {
            self.0[i].row(0)
        }

        fn nnz(&self) -> u64 {
            2
        }

        type Rows<'b>
            = &'b Self
        where
            Self: 'b;

        fn rows(&self) -> &Self {
            self
        }
    }
}
