//! In-memory compressed sparse rows, and the [`Examples`] trait every learner reads through.

use std::ops::Range;

use sparselin_kernels::{BoundedIndices, IndexVec, RowBlock, Values, sparse};

use super::row_checks::{all_finite, increasing_below};

/// How far past the current row [`Row::prefetch_following`] asks for the indices, as far as
/// the row-block kernels do.
pub use sparselin_kernels::STREAM_AHEAD_BYTES;

/// The most features a dataset or matrix can have: indices are `u32`, so 2^32.
pub const MAX_FEATURES: u64 = 1 << 32;

/// One labeled example: strictly increasing column indices and their values.
///
/// The indices carry a proven bound (see [`BoundedIndices`]): rows of a [`CsrMatrix`] or a
/// dataset are cut from an index array scanned once, so the sparse kernels check them in
/// O(1); a row built from a plain slice (`BoundedIndices::scan`, or `.into()`) is scanned
/// when built.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    /// The label y (±1 for classification, real for regression).
    pub label: f64,
    /// Column indices, 0-based, strictly increasing, each `< n_features`.
    pub indices: BoundedIndices<'a>,
    /// Values parallel to `indices`.
    pub values: Values<'a>,
}

impl<'a> Row<'a> {
    /// Number of stored entries (k).
    #[inline]
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// ‖x‖², the sum of the squared values. Four partial sums, so that the loop is not one
    /// chain of dependent additions (the default t₀ of squared and squared-hinge loss takes it
    /// of every row before training: on rcv1-like, ≈ 0.06 s of one core with a single sum,
    /// ≈ 0.04 s with four).
    #[inline]
    pub fn norm2(&self) -> f64 {
        fn partial_sums<T: Copy>(v: &[T], widen: impl Fn(T) -> f64) -> f64 {
            let mut sums = [0.0f64; 4];
            let mut chunks = v.chunks_exact(4);
            for chunk in &mut chunks {
                for (sum, &x) in sums.iter_mut().zip(chunk) {
                    let x = widen(x);
                    *sum += x * x;
                }
            }
            let tail: f64 = chunks.remainder().iter().map(|&x| widen(x).powi(2)).sum();
            (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
        }
        match self.values {
            Values::Ones => self.nnz() as f64,
            Values::F32(v) => partial_sums(v, f64::from),
            Values::F64(v) => partial_sums(v, |x| x),
        }
    }

    /// Hints that the rows stored after this one are read next: asks for the indices (and the
    /// values as many entries ahead) [`STREAM_AHEAD_BYTES`] past this row's. Loops that walk
    /// the rows in storage order (file-order training, batch passes, scoring) call it on each
    /// row, where the hardware prefetcher alone left them waiting on memory. Never changes a
    /// result; the hint is wasted past the end of a shard.
    #[inline(always)]
    pub fn prefetch_following(&self) {
        sparse::prefetch_ahead(self.indices.as_slice(), STREAM_AHEAD_BYTES);
        match self.values {
            Values::F32(v) => sparse::prefetch_ahead(v, STREAM_AHEAD_BYTES),
            Values::F64(v) => sparse::prefetch_ahead(v, 2 * STREAM_AHEAD_BYTES),
            Values::Ones => {}
        }
    }

    /// The entries with index below `column` and the rest, as two rows with this row's label
    /// (indices are increasing, so the first part is a prefix, found by binary search). The
    /// rest keeps this row's bound; the prefix is scanned for its own, so that kernels accept
    /// it on weights of length `column`.
    #[inline]
    pub fn split_below(&self, column: usize) -> (Row<'a>, Row<'a>) {
        let k = self.indices.partition_point(|&j| (j as usize) < column);
        let low = BoundedIndices::scan(&self.indices.as_slice()[..k]);
        let high = self.indices.slice(k..self.indices.len());
        let (low_values, high_values) = match self.values {
            Values::Ones => (Values::Ones, Values::Ones),
            Values::F32(v) => (Values::F32(&v[..k]), Values::F32(&v[k..])),
            Values::F64(v) => (Values::F64(&v[..k]), Values::F64(&v[k..])),
        };
        let part = |indices, values| Row {
            label: self.label,
            indices,
            values,
        };
        (part(low, low_values), part(high, high_values))
    }
}

/// Random access to validated rows: what every learner and evaluator consumes.
///
/// Implementations guarantee the invariants of [`Row`] for every `i < n_rows()`, so that
/// consumers never see an out-of-range index.
pub trait Examples: Sync {
    /// Number of rows (m).
    fn n_rows(&self) -> usize;
    /// Number of features (n); every index is below it.
    fn n_features(&self) -> usize;
    /// Row `i`; panics if `i >= n_rows()`.
    fn row(&self, i: usize) -> Row<'_>;
    /// Total stored entries.
    fn nnz(&self) -> u64;
    /// A hint that row `i` will be read soon: bring into cache what locating it reads (its
    /// offsets and label), so that a later [`Examples::row`] does not wait on memory. Never
    /// changes a result; the default does nothing.
    #[inline]
    fn prefetch_extent(&self, _i: usize) {}

    /// Whether rows are found through a map, so that [`Examples::prefetch_mapping`] does
    /// something: the online learners' lookahead asks for the map's entries only then (a
    /// constant once inlined, so that the other sets' steps compile as without it).
    #[inline(always)]
    fn maps_rows(&self) -> bool {
        false
    }

    /// A hint, issued before [`Examples::prefetch_extent`], that row `i` will be located soon:
    /// bring into cache what tells a view which stored row its row `i` is (a [`RowSubset`]'s
    /// map), so that locating it then does not wait on memory. Never changes a result; the
    /// default, for sets that store their rows in their own order, does nothing.
    ///
    /// [`RowSubset`]: super::RowSubset
    #[inline]
    fn prefetch_mapping(&self, _i: usize) {}

    /// The rows' sample weights s_i, one per row, if they have any
    /// ([`super::sample_weights`]); the default, `None`, weighs every row 1.
    #[inline]
    fn sample_weights(&self) -> Option<&[f64]> {
        None
    }

    /// s_i, the weight of row `i`'s loss: 1 for unweighted rows (a constant the learners'
    /// multiplications by it fold away).
    #[inline(always)]
    fn sample_weight(&self, i: usize) -> f64 {
        match self.sample_weights() {
            Some(weights) => weights[i],
            None => 1.0,
        }
    }

    /// Rows `rows` as runs of consecutive stored rows ([`RowBlock`]), in order, each handed to
    /// `visit` with the index of its first row: what the row-block kernels
    /// ([`sparse::dot_rows`], [`sparse::axpy_rows`]) take, one call per run instead of one per
    /// row. A set that stores its rows contiguously hands out whole runs (one per shard); the
    /// default, one row at a time. Panics if `rows` ends past [`n_rows`](Examples::n_rows).
    #[inline]
    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        for i in rows {
            let row = self.row(i);
            visit(
                i,
                RowBlock::new(&[0, row.nnz() as u64], row.indices, row.values),
            );
        }
    }

    /// The same rows through a view built for hot loops: what can be worked out once (typed
    /// views of every shard's sections, how to find a row's shard) is, so that each
    /// [`Examples::row`] of the view is a few slice operations. Build it once per pass or
    /// training run, outside the loop over rows; its rows equal this set's bit for bit.
    type Rows<'a>: Examples
    where
        Self: Sized + 'a;

    /// The view of [`Examples::Rows`] (for in-memory sets, the set itself).
    fn rows(&self) -> Self::Rows<'_>
    where
        Self: Sized;
}

/// A borrowed set is a set: what lets a set be its own [`Examples::Rows`].
impl<E: Examples> Examples for &E {
    fn n_rows(&self) -> usize {
        (**self).n_rows()
    }

    fn n_features(&self) -> usize {
        (**self).n_features()
    }

    #[inline]
    fn row(&self, i: usize) -> Row<'_> {
        (**self).row(i)
    }

    fn nnz(&self) -> u64 {
        (**self).nnz()
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        (**self).prefetch_extent(i);
    }

    #[inline(always)]
    fn maps_rows(&self) -> bool {
        (**self).maps_rows()
    }

    #[inline]
    fn prefetch_mapping(&self, i: usize) {
        (**self).prefetch_mapping(i);
    }

    #[inline]
    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        (**self).for_each_block(rows, visit);
    }

    #[inline]
    fn sample_weights(&self) -> Option<&[f64]> {
        (**self).sample_weights()
    }

    type Rows<'a>
        = E::Rows<'a>
    where
        Self: 'a;

    fn rows(&self) -> E::Rows<'_> {
        (**self).rows()
    }
}

/// Owned value storage of a [`CsrMatrix`].
#[derive(Clone, Debug, PartialEq)]
pub enum ValueVec {
    /// Binary data: every stored entry is 1.0.
    Ones,
    /// Single precision.
    F32(Vec<f32>),
    /// Double precision.
    F64(Vec<f64>),
}

impl ValueVec {
    fn len(&self) -> Option<usize> {
        match self {
            ValueVec::Ones => None,
            ValueVec::F32(v) => Some(v.len()),
            ValueVec::F64(v) => Some(v.len()),
        }
    }

    /// Borrow entries `start..end`.
    #[inline]
    pub fn slice(&self, start: usize, end: usize) -> Values<'_> {
        match self {
            ValueVec::Ones => Values::Ones,
            ValueVec::F32(v) => Values::F32(&v[start..end]),
            ValueVec::F64(v) => Values::F64(&v[start..end]),
        }
    }
}

/// Why a set of CSR arrays was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CsrError {
    /// `offsets` must have `labels.len() + 1` entries.
    #[error("{offsets} row offsets for {rows} rows (expected rows + 1)")]
    OffsetCount {
        /// Rows (labels).
        rows: usize,
        /// Offsets given.
        offsets: usize,
    },
    /// Offsets must start at 0, never decrease, and end at the number of entries.
    #[error("row {row}: offsets {start}..{end} are not within 0..={nnz} and increasing")]
    BadOffsets {
        /// The first row whose offsets are wrong.
        row: usize,
        /// Its start offset.
        start: u64,
        /// Its end offset.
        end: u64,
        /// Stored entries (the length of `indices`).
        nnz: usize,
    },
    /// Values must be parallel to indices.
    #[error("{values} values for {indices} indices")]
    ValueCount {
        /// Indices given.
        indices: usize,
        /// Values given.
        values: usize,
    },
    /// Indices must be strictly increasing within a row and below the feature count.
    #[error("row {row}: index {index} is out of order or not below {n_features}")]
    BadIndex {
        /// The row holding it.
        row: usize,
        /// The offending index.
        index: u32,
        /// The declared feature count.
        n_features: usize,
    },
    /// Indices are 32-bit, so there are at most 2³² features.
    #[error("{n_features} features declared: indices are 32-bit, so at most 2^32")]
    TooManyFeatures {
        /// The declared feature count.
        n_features: usize,
    },
    /// Labels and values must be finite numbers (as the text parser requires).
    #[error("row {row}: the {what} is {value}, not a finite number")]
    NotFinite {
        /// The row holding it.
        row: usize,
        /// "label", or "value of index i".
        what: String,
        /// The offending number.
        value: f64,
    },
}

/// An owned, validated CSR matrix with labels.
#[derive(Clone, Debug, PartialEq)]
pub struct CsrMatrix {
    labels: Vec<f64>,
    offsets: Vec<u64>,
    /// Scanned once for its bound, so that rows are proven slices of it.
    indices: IndexVec,
    values: ValueVec,
    n_features: usize,
}

impl CsrMatrix {
    /// Build from raw arrays, checking every invariant of [`Row`] (O(nnz)).
    pub fn new(
        labels: Vec<f64>,
        offsets: Vec<u64>,
        indices: Vec<u32>,
        values: ValueVec,
        n_features: usize,
    ) -> Result<Self, CsrError> {
        validate(&labels, &offsets, &indices, &values, n_features)?;
        Ok(CsrMatrix {
            labels,
            offsets,
            indices: IndexVec::new(indices),
            values,
            n_features,
        })
    }

    /// Labels, one per row.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// Row offsets (`n_rows + 1` entries).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// All column indices, row after row.
    pub fn indices(&self) -> &[u32] {
        self.indices.as_slice()
    }

    /// All values, row after row.
    pub fn values(&self) -> &ValueVec {
        &self.values
    }

    /// The same rows with their values changed by `change(indices, values)` (which must leave
    /// one value per entry, or binary rows), checked again as [`CsrMatrix::new`] checks them.
    pub(crate) fn map_values(
        mut self,
        change: impl FnOnce(&[u32], &mut ValueVec),
    ) -> Result<CsrMatrix, CsrError> {
        change(self.indices.as_slice(), &mut self.values);
        validate(
            &self.labels,
            &self.offsets,
            self.indices.as_slice(),
            &self.values,
            self.n_features,
        )?;
        Ok(self)
    }

    /// The same rows with a larger declared feature count (e.g. from a dataset's metadata,
    /// when the largest index seen in a file is below the true dimension).
    pub fn with_n_features(self, n_features: usize) -> Result<Self, CsrError> {
        CsrMatrix::new(
            self.labels,
            self.offsets,
            self.indices.into_vec(),
            self.values,
            n_features,
        )
    }
}

fn validate(
    labels: &[f64],
    offsets: &[u64],
    indices: &[u32],
    values: &ValueVec,
    n_features: usize,
) -> Result<(), CsrError> {
    if offsets.len() != labels.len() + 1 {
        return Err(CsrError::OffsetCount {
            rows: labels.len(),
            offsets: offsets.len(),
        });
    }
    if let Some(n) = values.len() {
        if n != indices.len() {
            return Err(CsrError::ValueCount {
                indices: indices.len(),
                values: n,
            });
        }
    }
    if n_features as u64 > MAX_FEATURES {
        return Err(CsrError::TooManyFeatures { n_features });
    }
    if let Some(row) = labels.iter().position(|y| !y.is_finite()) {
        return Err(CsrError::NotFinite {
            row,
            what: "label".into(),
            value: labels[row],
        });
    }
    let nnz = indices.len();
    if offsets[0] != 0 || offsets[labels.len()] != nnz as u64 {
        return Err(CsrError::BadOffsets {
            row: 0,
            start: offsets[0],
            end: offsets[labels.len()],
            nnz,
        });
    }
    for (row, pair) in offsets.windows(2).enumerate() {
        let (start, end) = (pair[0], pair[1]);
        if start > end || end > nnz as u64 {
            return Err(CsrError::BadOffsets {
                row,
                start,
                end,
                nnz,
            });
        }
        let row_indices = &indices[start as usize..end as usize];
        if !increasing_below(row_indices, n_features) {
            return Err(first_bad_index(row, row_indices, n_features));
        }
    }
    // The vectorized check first; the search for the first bad value only once it failed.
    let first_not_finite = match values {
        ValueVec::Ones => None,
        ValueVec::F32(v) if !all_finite(v, f32::is_finite) => v
            .iter()
            .position(|x| !x.is_finite())
            .map(|k| (k, f64::from(v[k]))),
        ValueVec::F64(v) if !all_finite(v, f64::is_finite) => {
            v.iter().position(|x| !x.is_finite()).map(|k| (k, v[k]))
        }
        ValueVec::F32(_) | ValueVec::F64(_) => None,
    };
    if let Some((k, value)) = first_not_finite {
        let row = offsets.partition_point(|&start| start <= k as u64) - 1;
        return Err(CsrError::NotFinite {
            row,
            what: format!("value of index {}", indices[k]),
            value,
        });
    }
    Ok(())
}

/// The error for the first index of `row_indices` (row `row`) that is out of order or not
/// below `n_features`: the slow search, run once the vectorized check has failed.
fn first_bad_index(row: usize, row_indices: &[u32], n_features: usize) -> CsrError {
    let bad = row_indices.iter().enumerate().find(|&(k, &index)| {
        index as usize >= n_features || (k > 0 && row_indices[k - 1] >= index)
    });
    let (_, &index) = bad.expect("the vectorized check failed on this row");
    CsrError::BadIndex {
        row,
        index,
        n_features,
    }
}

impl Examples for CsrMatrix {
    fn n_rows(&self) -> usize {
        self.labels.len()
    }

    fn n_features(&self) -> usize {
        self.n_features
    }

    #[inline]
    fn row(&self, i: usize) -> Row<'_> {
        let (start, end) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        Row {
            label: self.labels[i],
            indices: self.indices.bounded().slice(start..end),
            values: self.values.slice(start, end),
        }
    }

    fn nnz(&self) -> u64 {
        self.indices.as_slice().len() as u64
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        sparse::prefetch(&self.offsets, &[i as u32]);
        sparse::prefetch(&self.labels, &[i as u32]);
    }

    #[inline]
    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        let offsets = &self.offsets[rows.start..rows.end + 1];
        if rows.is_empty() {
            return;
        }
        let values = self.values.slice(0, self.indices.as_slice().len());
        visit(
            rows.start,
            RowBlock::new(offsets, self.indices.bounded(), values),
        );
    }

    /// In memory, rows are already plain slices: the matrix is its own view.
    type Rows<'a> = &'a CsrMatrix;

    fn rows(&self) -> &CsrMatrix {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm2_is_the_sum_of_squares_for_every_length_and_value_kind() {
        let idx: Vec<u32> = (0..11).collect();
        let f64s: Vec<f64> = (0..11).map(|k| (k as f64 - 4.3) * 0.7).collect();
        let f32s: Vec<f32> = f64s.iter().map(|&x| x as f32).collect();
        for len in 0..=11 {
            let row = |values| Row {
                label: 1.0,
                indices: BoundedIndices::scan(&idx[..len]),
                values,
            };
            let naive = |v: &mut dyn Iterator<Item = f64>| v.map(|x| x * x).sum::<f64>();
            let cases = [
                (Values::Ones, len as f64),
                (
                    Values::F64(&f64s[..len]),
                    naive(&mut f64s[..len].iter().copied()),
                ),
                (
                    Values::F32(&f32s[..len]),
                    naive(&mut f32s[..len].iter().map(|&x| f64::from(x))),
                ),
            ];
            for (values, want) in cases {
                let got = row(values).norm2();
                assert!((got - want).abs() <= 1e-14 * want, "{len}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn a_row_splits_below_a_column_into_prefix_and_rest() {
        let (indices, values) = ([2u32, 5, 9], [1.0f32, 2.0, 3.0]);
        let x = Row {
            label: -1.0,
            indices: (&indices).into(),
            values: Values::F32(&values),
        };
        for (column, k, low_bound) in [(0, 0, 0), (2, 0, 0), (3, 1, 3), (9, 2, 6), (10, 3, 10)] {
            let (low, high) = x.split_below(column);
            assert_eq!((low.label, high.label), (-1.0, -1.0));
            assert_eq!(
                (low.indices.as_slice(), high.indices.as_slice()),
                indices.split_at(k)
            );
            assert_eq!(low.values, Values::F32(&values[..k]));
            assert_eq!(high.values, Values::F32(&values[k..]));
            // The prefix's bound fits weights of length `column`; the rest keeps the row's.
            assert_eq!(low.indices.bound(), low_bound);
            assert_eq!(high.indices.bound(), 10);
        }
        let ones = Row {
            values: Values::Ones,
            ..x
        };
        let (low, high) = ones.split_below(6);
        assert_eq!((low.values, high.values), (Values::Ones, Values::Ones));
        assert_eq!((low.nnz(), high.nnz()), (2, 1));
    }

    #[test]
    fn a_bad_index_is_named_with_its_row_wherever_it_is() {
        // Three rows of 40 increasing indices below 200; one index spoiled at a time.
        let row: Vec<u32> = (0..40).map(|k| 5 * k + 2).collect();
        let good = [row.clone(), row.clone(), row].concat();
        let matrix = |indices: Vec<u32>| {
            let values = ValueVec::F32(vec![1.0; indices.len()]);
            CsrMatrix::new(vec![1.0; 3], vec![0, 40, 80, 120], indices, values, 200)
        };
        assert!(matrix(good.clone()).is_ok());
        for at in [0, 1, 39, 40, 41, 79, 80, 119] {
            let (row, k) = (at / 40, at % 40);
            let mut cases = vec![(200, 200), (u32::MAX, u32::MAX)];
            if k > 0 {
                // A tie with the index before, and a drop below it.
                cases.extend([(good[at - 1], good[at - 1]), (0, 0)]);
            }
            for (put, named) in cases {
                let mut indices = good.clone();
                indices[at] = put;
                let e = matrix(indices).unwrap_err();
                assert!(
                    matches!(e, CsrError::BadIndex { row: r, index, n_features: 200 }
                        if r == row && index == named),
                    "{put} at {at}: {e}"
                );
            }
        }
    }

    #[test]
    fn labels_and_values_must_be_finite_and_features_at_most_two_to_the_32() {
        let matrix = |labels: Vec<f64>, values: ValueVec, n_features: usize| {
            CsrMatrix::new(labels, vec![0, 0, 2], vec![1, 3], values, n_features)
        };
        let ok = matrix(vec![1.0, -1.0], ValueVec::F32(vec![0.5, 2.0]), 4);
        assert!(ok.is_ok());
        let e = matrix(vec![1.0, f64::NAN], ValueVec::Ones, 4).unwrap_err();
        assert!(matches!(&e, CsrError::NotFinite { row: 1, .. }), "{e}");
        assert!(e.to_string().contains("the label is NaN"), "{e}");
        let e = matrix(vec![1.0, -1.0], ValueVec::F64(vec![1.0, f64::INFINITY]), 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "row 1: the value of index 3 is inf, not a finite number"
        );
        let e = matrix(vec![1.0, -1.0], ValueVec::F32(vec![f32::NAN, 1.0]), 4).unwrap_err();
        assert!(matches!(e, CsrError::NotFinite { row: 1, .. }), "{e}");
        assert!(matrix(vec![1.0, -1.0], ValueVec::Ones, 1 << 32).is_ok());
        let e = matrix(vec![1.0, -1.0], ValueVec::Ones, (1 << 32) + 1).unwrap_err();
        assert!(matches!(e, CsrError::TooManyFeatures { .. }), "{e}");
    }
}
