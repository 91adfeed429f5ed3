//! Per-row weights of the loss: scikit-learn's `sample_weight`, liblinear's `-W` weight file,
//! Vowpal Wabbit's importance weight.
//!
//! With weights s_i the objective is (λ/2)‖w‖² + (1/m) Σ_i s_i·c_{y_i}·ℓ(w·x_i + b, y_i): row i
//! counts as s_i rows (an integer weight trains exactly as copies of the row would with λ
//! scaled to keep λm, tested so), and a row of weight 0 as none. m stays the number of rows,
//! as in scikit-learn, and C_i = s_i·c_{y_i}·C is liblinear's form of the same objective.
//!
//! The weights belong to the training rows, not to the data's files: [`SampleWeighted`] pairs
//! a set of rows with them, and every learner reads a row's weight through
//! [`Examples::sample_weight`], which is 1 for unweighted data (so that their results do not
//! change by a bit).

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use sparselin_kernels::RowBlock;

use super::csr::{Examples, Row};
use super::error::DataError;
use super::stream::open_text;

/// Weights that cannot be used with a set of rows.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SampleWeightError {
    /// Not one weight per row.
    #[error("{weights} sample weights for {rows} rows: give one weight per row")]
    Count {
        /// Weights given.
        weights: usize,
        /// Rows of the data.
        rows: usize,
    },
    /// A weight that is negative, infinite or NaN.
    #[error("the sample weight of row {index} must be a non-negative finite number, got {value}")]
    Invalid {
        /// Its row, from 1.
        index: usize,
        /// The weight.
        value: f64,
    },
    /// Every weight is 0: there is nothing to learn from.
    #[error("every sample weight is 0: there is nothing to learn from")]
    AllZero,
}

/// Checks weights for `rows` rows: as many, each finite and at least 0, one of them positive.
pub fn check(weights: &[f64], rows: usize) -> Result<(), SampleWeightError> {
    if weights.len() != rows {
        return Err(SampleWeightError::Count {
            weights: weights.len(),
            rows,
        });
    }
    if let Some((i, &value)) = weights
        .iter()
        .enumerate()
        .find(|(_, s)| !(**s >= 0.0 && s.is_finite()))
    {
        return Err(SampleWeightError::Invalid {
            index: i + 1,
            value,
        });
    }
    if !weights.iter().any(|&s| s > 0.0) {
        return Err(SampleWeightError::AllZero);
    }
    Ok(())
}

/// Reads a weight file (gzip ok): one number per line, the weight of the row of the same line
/// (liblinear's `-W` format; blank lines at the end are ignored). An error names the file and
/// the line of a value that is not a non-negative finite number.
pub fn read(path: &Path) -> Result<Vec<f64>, DataError> {
    let mut text = String::new();
    open_text(path)?
        .read_to_string(&mut text)
        .map_err(|e| DataError::io(path, e))?;
    let mut weights = Vec::new();
    let mut blank_since = None;
    for (number, line) in text.lines().enumerate() {
        let text = line.trim();
        if text.is_empty() {
            blank_since.get_or_insert(number + 1);
            continue;
        }
        if let Some(blank) = blank_since {
            return Err(DataError::invalid(
                path,
                format!("line {blank} is blank: give one weight per line, one line per row"),
            ));
        }
        let at = |what: String| DataError::invalid(path, format!("line {}: {what}", number + 1));
        let value: f64 = text
            .parse()
            .map_err(|_| at(format!("'{text}' is not a number")))?;
        if !(value >= 0.0 && value.is_finite()) {
            return Err(at(format!(
                "a sample weight must be a non-negative finite number, got {text}"
            )));
        }
        weights.push(value);
    }
    if weights.is_empty() {
        return Err(DataError::invalid(
            path,
            "the file holds no weights: give one per line, one line per row",
        ));
    }
    Ok(weights)
}

/// A set of rows with a weight per row ([`Examples::sample_weight`]); everything else is the
/// rows'.
#[derive(Clone, Copy, Debug)]
pub struct SampleWeighted<'w, E> {
    data: E,
    weights: &'w [f64],
}

impl<'w, E: Examples> SampleWeighted<'w, E> {
    /// `data` with row i weighing `weights[i]` ([`check`]ed).
    pub fn new(data: E, weights: &'w [f64]) -> Result<Self, SampleWeightError> {
        check(weights, data.n_rows())?;
        Ok(SampleWeighted { data, weights })
    }
}

impl<E: Examples> Examples for SampleWeighted<'_, E> {
    fn n_rows(&self) -> usize {
        self.data.n_rows()
    }

    fn n_features(&self) -> usize {
        self.data.n_features()
    }

    #[inline(always)]
    fn row(&self, i: usize) -> Row<'_> {
        self.data.row(i)
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
        Some(self.weights)
    }

    type Rows<'a>
        = SampleWeighted<'a, E::Rows<'a>>
    where
        Self: 'a;

    fn rows(&self) -> SampleWeighted<'_, E::Rows<'_>> {
        SampleWeighted {
            data: self.data.rows(),
            weights: self.weights,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};

    fn three_rows() -> CsrMatrix {
        let values = ValueVec::F64(vec![1.0, 2.0]);
        CsrMatrix::new(
            vec![1.0, -1.0, 1.0],
            vec![0, 1, 2, 2],
            vec![0, 1],
            values,
            2,
        )
        .unwrap()
    }

    #[test]
    fn unweighted_rows_weigh_one_and_weighted_ones_their_weight() {
        let x = three_rows();
        assert_eq!(x.sample_weights(), None);
        assert_eq!(x.sample_weight(2), 1.0);
        let weights = [0.5, 0.0, 3.0];
        let weighted = SampleWeighted::new(&x, &weights).unwrap();
        assert_eq!(weighted.sample_weight(0), 0.5);
        assert_eq!(weighted.rows().sample_weight(2), 3.0);
        assert_eq!(weighted.rows().row(1).label, -1.0);
        assert_eq!(weighted.nnz(), 2);
    }

    #[test]
    fn weights_are_one_per_row_finite_non_negative_and_not_all_zero() {
        let x = three_rows();
        assert_eq!(
            SampleWeighted::new(&x, &[1.0, 2.0]).unwrap_err(),
            SampleWeightError::Count {
                weights: 2,
                rows: 3
            }
        );
        for bad in [-1.0, f64::INFINITY, f64::NAN] {
            let err = SampleWeighted::new(&x, &[1.0, bad, 1.0]).unwrap_err();
            assert!(
                matches!(err, SampleWeightError::Invalid { index: 2, .. }),
                "{err}"
            );
        }
        assert_eq!(
            SampleWeighted::new(&x, &[0.0; 3]).unwrap_err(),
            SampleWeightError::AllZero
        );
    }

    #[test]
    fn a_weight_file_is_read_line_by_line_and_its_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.txt");
        let read_text = |text: &str| {
            std::fs::write(&path, text).unwrap();
            read(&path)
        };
        assert_eq!(read_text("1\n0.5\n 2e0 \n\n").unwrap(), [1.0, 0.5, 2.0]);
        assert_eq!(read_text("3").unwrap(), [3.0]);
        let gzip = dir.path().join("w.txt.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, b"0.5\n2\n").unwrap();
        std::fs::write(&gzip, encoder.finish().unwrap()).unwrap();
        assert_eq!(read(&gzip).unwrap(), [0.5, 2.0]);
        for (text, wanted) in [
            ("1\nx\n", "line 2: 'x' is not a number"),
            ("1\n-2\n", "line 2: a sample weight must be a non-negative"),
            ("inf\n", "line 1: a sample weight must be"),
            ("1\n\n2\n", "line 2 is blank"),
            ("", "holds no weights"),
        ] {
            let message = read_text(text).unwrap_err().to_string();
            assert!(
                message.starts_with(&path.display().to_string()),
                "{message}"
            );
            assert!(message.contains(wanted), "{text:?}: {message}");
        }
        let missing = read(&dir.path().join("none")).unwrap_err().to_string();
        assert!(missing.contains("none"), "{missing}");
    }
}
