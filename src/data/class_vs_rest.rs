//! One class against the rest: a multiclass set seen as the binary problem a one-vs-rest
//! classifier trains for each class, without copying a row.

use std::ops::Range;

use sparselin_kernels::RowBlock;

use super::csr::{Examples, Row};

/// The rows of `data` labelled +1 where their label is `class` and −1 elsewhere; indices,
/// values and sample weights are `data`'s. A one-vs-rest classifier trains one binary model
/// on this view per class (liblinear's `-s 0..3` on more than two classes, scikit-learn's
/// `OneVsRestClassifier`).
#[derive(Clone, Copy, Debug)]
pub struct ClassVsRest<E> {
    data: E,
    class: f64,
}

impl<E: Examples> ClassVsRest<E> {
    /// `data` with the label `class` as +1 and every other as −1.
    pub fn new(data: E, class: f64) -> Self {
        ClassVsRest { data, class }
    }

    /// The class seen as +1.
    pub fn class(&self) -> f64 {
        self.class
    }
}

impl<E: Examples> Examples for ClassVsRest<E> {
    fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    fn n_features(&self) -> usize {
        self.data.n_features()
    }

    #[inline(always)]
    fn row(&self, i: usize) -> Row<'_> {
        let row = self.data.row(i);
        Row {
            label: if row.label == self.class { 1.0 } else { -1.0 },
            ..row
        }
    }

    fn nnz(&self) -> u64 {
        self.data.nnz()
    }

    #[inline]
    fn prefetch_extent(&self, i: usize) {
        self.data.prefetch_extent(i);
    }

    #[inline(always)]
    fn maps_rows(&self) -> bool {
        self.data.maps_rows()
    }

    #[inline]
    fn prefetch_mapping(&self, i: usize) {
        self.data.prefetch_mapping(i);
    }

    #[inline]
    fn for_each_block(&self, rows: Range<usize>, visit: &mut dyn FnMut(usize, RowBlock<'_>)) {
        self.data.for_each_block(rows, visit);
    }

    #[inline]
    fn sample_weights(&self) -> Option<&[f64]> {
        self.data.sample_weights()
    }

    type Rows<'a>
        = ClassVsRest<E::Rows<'a>>
    where
        Self: 'a;

    fn rows(&self) -> ClassVsRest<E::Rows<'_>> {
        ClassVsRest {
            data: self.data.rows(),
            class: self.class,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, SampleWeighted, ValueVec};

    #[test]
    fn the_class_is_positive_every_other_label_negative_and_the_rest_unchanged() {
        let data = CsrMatrix::new(
            vec![3.0, 1.0, 2.0, 3.0],
            vec![0, 1, 3, 3, 4],
            vec![0, 0, 1, 1],
            ValueVec::F64(vec![1.5, -2.0, 0.5, 4.0]),
            2,
        )
        .unwrap();
        let weights = [1.0, 0.0, 2.0, 3.0];
        let weighted = SampleWeighted::new(&data, &weights).unwrap();
        let view = ClassVsRest::new(weighted, 3.0);
        check(&view, &data, &weights);
        check(&view.rows(), &data, &weights);
        let labels: Vec<f64> = (0..4)
            .map(|i| ClassVsRest::new(&data, 1.0).row(i).label)
            .collect();
        assert_eq!(labels, [-1.0, 1.0, -1.0, -1.0]);
    }

    fn check(view: &impl Examples, data: &CsrMatrix, weights: &[f64]) {
        {
            let labels: Vec<f64> = (0..4).map(|i| view.row(i).label).collect();
            assert_eq!(labels, [1.0, -1.0, -1.0, 1.0]);
            for i in 0..4 {
                let (seen, stored) = (view.row(i), data.row(i));
                assert_eq!(seen.indices.as_slice(), stored.indices.as_slice());
                assert_eq!(seen.values, stored.values);
            }
            assert_eq!(view.sample_weights(), Some(weights));
            assert_eq!((view.n_rows(), view.n_features(), view.nnz()), (4, 2, 4));
        }
    }
}
