//! Each column divided by a power of two near its largest magnitude (`train --scale max-abs`),
//! so that features of very different scales (counts next to rates) weigh alike in the
//! regularizer and in the learners' steps — what svm-scale and scikit-learn's `MaxAbsScaler`
//! do before training.
//!
//! Column j is divided by s_j = 2^k_j, the power of two at or above its largest |value|: its
//! values then lie in [−1, 1], the largest above ½. Dividing by a power of two changes only a
//! number's exponent, so every scaled value is exact (unless it falls below its type's normal
//! range, 2^-126 for f32) and a model v trained on the scaled columns becomes the model of
//! the original ones, w_j = v_j / s_j, exactly: each product w_j·x_j equals v_j·x̃_j, so w
//! scores the original rows bit for bit as v scores the scaled ones. scikit-learn's scaler
//! divides by the largest |value| itself, which puts it at exactly 1 but rounds the values
//! and the weights.

use rayon::prelude::*;
use sparselin_kernels::Values;

use super::csr::Examples;
use super::{CsrError, CsrMatrix, ValueVec};
use crate::memory::{self, AllocError};

/// The name of this scaling, as `train --scale` takes it and model files record it.
pub const MAX_ABS: &str = "max-abs";

/// The smallest and largest exponent k of a scale 2^k: both 2^k and 2^-k are normal f64
/// numbers, so multiplying by either is exact wherever the result is normal.
const EXPONENTS: std::ops::RangeInclusive<i32> = -1022..=1022;

/// Entries scaled by one task of [`ColumnScales::scaled_values`]: enough to outweigh a
/// task's start, few enough to share a shard among the threads.
const ENTRIES_PER_TASK: usize = 1 << 16;

/// Per-column divisors 2^k_j, by their exponents k_j, in some column numbering: a data set's
/// (what it is scaled by) or original feature ids (what a model stores). A column past the
/// end is not scaled (k = 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnScales {
    exponents: Vec<i16>,
}

impl ColumnScales {
    /// The scales of columns whose largest |value| is `max_abs[j]` (see
    /// [`column_max_abs`]): the power of two at or above it; 1 for a column that is all
    /// zeros.
    pub fn from_max_abs(max_abs: &[f64]) -> Result<ColumnScales, AllocError> {
        let exponents = memory::collected(
            "column scales",
            max_abs.len(),
            max_abs.iter().map(|&m| exponent_at_or_above(m)),
        )?;
        Ok(ColumnScales { exponents })
    }

    /// Scales given by their exponents, as a model file stores them; an error naming the
    /// first exponent outside -1022..=1022.
    pub fn from_exponents(exponents: Vec<i16>) -> Result<ColumnScales, String> {
        match exponents
            .iter()
            .position(|&k| !EXPONENTS.contains(&i32::from(k)))
        {
            Some(j) => Err(format!(
                "the scale exponent of feature {} is {}, outside {}..={}",
                j + 1,
                exponents[j],
                EXPONENTS.start(),
                EXPONENTS.end()
            )),
            None => Ok(ColumnScales { exponents }),
        }
    }

    /// k_j of every column: column j is divided by 2^k_j.
    pub fn exponents(&self) -> &[i16] {
        &self.exponents
    }

    /// Whether every column keeps its values (all k_j = 0).
    pub fn is_identity(&self) -> bool {
        self.exponents.iter().all(|&k| k == 0)
    }

    /// k_j (0 past the end).
    #[inline]
    fn exponent(&self, j: usize) -> i32 {
        self.exponents.get(j).map_or(0, |&k| i32::from(k))
    }

    /// The same scales in a data set's column numbering, from scales in original feature ids:
    /// column j of the data is feature `permutation[j]` (`None`: the identity), and a column
    /// these scales lack is not scaled.
    pub fn in_columns(
        &self,
        n_columns: usize,
        permutation: Option<&[u32]>,
    ) -> Result<ColumnScales, AllocError> {
        let exponent = |id: usize| self.exponents.get(id).copied().unwrap_or(0);
        let exponents = match permutation {
            None => memory::collected("column scales", n_columns, (0..n_columns).map(exponent)),
            Some(p) => memory::collected(
                "column scales",
                n_columns,
                (0..n_columns).map(|j| p.get(j).map_or(0, |&id| exponent(id as usize))),
            ),
        }?;
        Ok(ColumnScales { exponents })
    }

    /// The same scales in original feature ids, from scales in the column numbering whose
    /// column j is feature `permutation[j]` (a permutation of 0..n; `None`: the identity).
    pub fn to_original(&self, permutation: Option<&[u32]>) -> Result<ColumnScales, AllocError> {
        let Some(p) = permutation else {
            return Ok(ColumnScales {
                exponents: memory::copied("column scales", &self.exponents)?,
            });
        };
        let mut exponents = memory::filled("column scales", p.len().max(self.exponents.len()), 0)?;
        for (&k, &id) in self.exponents.iter().zip(p) {
            exponents[id as usize] = k;
        }
        Ok(ColumnScales { exponents })
    }

    /// Weights of the scaled columns, v, turned into weights of the original ones:
    /// w_j = v_j / s_j (exact unless a result falls below the normal range).
    pub fn to_original_units(&self, weights: &mut [f64]) {
        self.multiply(weights, -1);
    }

    /// Weights of the original columns, w, turned into weights of the scaled ones:
    /// v_j = w_j · s_j (the inverse of [`ColumnScales::to_original_units`]).
    pub fn to_scaled_units(&self, weights: &mut [f64]) {
        self.multiply(weights, 1);
    }

    /// w_j times 2^(sign·k_j), for each weight a scale covers.
    fn multiply(&self, weights: &mut [f64], sign: i32) {
        for (w, &k) in weights.iter_mut().zip(&self.exponents) {
            *w *= power_of_two(sign * i32::from(k));
        }
    }

    /// The entries `indices`, `values` (a set's, in its column numbering) each divided by
    /// its column's scale, in parallel. f32 values stay f32 (exact, but for results below
    /// f32's normal range) unless one is beyond f32's range, which makes them all f64 (scales
    /// of other data, far larger values than theirs); the 1s of binary entries become f32
    /// values 2^-k once a column of them is scaled (f64 where 2^-k is not an f32).
    pub(crate) fn scaled_values(&self, indices: &[u32], values: Values<'_>) -> ValueVec {
        let factor = |j: u32| power_of_two(-self.exponent(j as usize));
        let scaled_f64 = |x: &(dyn Fn(usize) -> f64 + Sync)| -> Vec<f64> {
            (indices.par_iter().enumerate())
                .with_min_len(ENTRIES_PER_TASK)
                .map(|(k, &j)| x(k) * factor(j))
                .collect()
        };
        match values {
            Values::F64(v) => ValueVec::F64(scaled_f64(&|k| v[k])),
            Values::Ones if indices.par_iter().all(|&j| self.exponent(j as usize) == 0) => {
                ValueVec::Ones
            }
            Values::Ones => {
                let v = scaled_f64(&|_| 1.0);
                match v.par_iter().all(|&x| f64::from(x as f32) == x) {
                    true => ValueVec::F32(v.par_iter().map(|&x| x as f32).collect()),
                    false => ValueVec::F64(v),
                }
            }
            Values::F32(v) => {
                let scaled: Vec<f32> = (indices.par_iter().zip(v))
                    .with_min_len(ENTRIES_PER_TASK)
                    .map(|(&j, &x)| (f64::from(x) * factor(j)) as f32)
                    .collect();
                match scaled.par_iter().all(|x| x.is_finite()) {
                    true => ValueVec::F32(scaled),
                    false => ValueVec::F64(scaled_f64(&|k| f64::from(v[k]))),
                }
            }
        }
    }

    /// `matrix` with each column divided by its scale (the scales in its column numbering);
    /// an error if a value overflows (scales of other data, far larger values than theirs).
    pub fn scale_matrix(&self, matrix: CsrMatrix) -> Result<CsrMatrix, CsrError> {
        matrix.map_values(|indices, values| {
            let scaled = self.scaled_values(indices, values.slice(0, indices.len()));
            *values = scaled;
        })
    }
}

/// The largest |value| of each column of `data` (0 for a column without a non-zero), one
/// pass over the rows split among the current rayon pool's threads (each with its own
/// maxima: n values a thread).
pub fn column_max_abs<E: Examples>(data: &E) -> Result<Vec<f64>, AllocError> {
    let n = data.n_features();
    let m = data.n_rows();
    let rows = data.rows();
    let parts = rayon::current_num_threads().clamp(1, m.max(1));
    let part_max = |part: usize| -> Result<Vec<f64>, AllocError> {
        let mut max = memory::filled("largest magnitudes", n, 0.0f64)?;
        for i in part * m / parts..(part + 1) * m / parts {
            let row = rows.row(i);
            let mut widen = |j: u32, x: f64| {
                let slot = &mut max[j as usize];
                *slot = slot.max(x.abs());
            };
            match row.values {
                Values::Ones => row.indices.iter().for_each(|&j| widen(j, 1.0)),
                Values::F32(v) => {
                    (row.indices.iter().zip(v)).for_each(|(&j, &x)| widen(j, f64::from(x)))
                }
                Values::F64(v) => (row.indices.iter().zip(v)).for_each(|(&j, &x)| widen(j, x)),
            }
        }
        Ok(max)
    };
    (0..parts)
        .into_par_iter()
        .map(part_max)
        .reduce_with(|a, b| {
            let (mut a, b) = (a?, b?);
            for (a, b) in a.iter_mut().zip(b) {
                *a = a.max(b);
            }
            Ok(a)
        })
        .unwrap_or_else(|| memory::filled("largest magnitudes", n, 0.0))
}

/// The smallest k with 2^k ≥ m, within [`EXPONENTS`] (0 for m = 0).
fn exponent_at_or_above(m: f64) -> i16 {
    if !(m > 0.0 && m.is_finite()) {
        return 0;
    }
    let (low, high) = (*EXPONENTS.start(), *EXPONENTS.end());
    let mut k = (m.log2().ceil() as i32).clamp(low, high);
    // log2 rounds: step to the exact boundary.
    while k > low && power_of_two(k - 1) >= m {
        k -= 1;
    }
    while k < high && power_of_two(k) < m {
        k += 1;
    }
    k as i16
}

/// 2^k for k within [`EXPONENTS`] ± 1, built from its bits (exact, unlike `powi`'s
/// repeated products for large |k|).
fn power_of_two(k: i32) -> f64 {
    let k = k.clamp(-1022, 1023);
    f64::from_bits(((k + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Row;

    fn matrix(values: ValueVec) -> CsrMatrix {
        // Rows: {0: a, 2: b}, {1: c}, {0: d, 1: e}; column 3 empty.
        CsrMatrix::new(
            vec![1.0, -1.0, 1.0],
            vec![0, 2, 3, 5],
            vec![0, 2, 1, 0, 1],
            values,
            4,
        )
        .unwrap()
    }

    #[test]
    fn each_scale_is_the_power_of_two_at_or_above_the_largest_magnitude() {
        let m = matrix(ValueVec::F64(vec![3.0, -0.001, 683.0, -4.0, 0.5]));
        let max = column_max_abs(&m).unwrap();
        assert_eq!(max, [4.0, 683.0, 0.001, 0.0]);
        let scales = ColumnScales::from_max_abs(&max).unwrap();
        assert_eq!(scales.exponents(), [2, 10, -9, 0]);
        for (&m, &k) in max.iter().zip(scales.exponents()).take(3) {
            let scaled = m / power_of_two(i32::from(k));
            assert!(scaled > 0.5 && scaled <= 1.0, "{m} / 2^{k}: {scaled}");
        }
        for m in [
            1.0,
            0.5,
            2f64.powi(-1022),
            1e-310,
            f64::MAX,
            0.75,
            1.0 + f64::EPSILON,
        ] {
            let k = exponent_at_or_above(m);
            let s = power_of_two(i32::from(k));
            assert!(s >= m || k == 1022, "{m:e}: 2^{k}");
            assert!(
                power_of_two(i32::from(k) - 1) < m || k == -1022,
                "{m:e}: 2^{k}"
            );
        }
    }

    #[test]
    fn scaled_rows_score_bit_for_bit_as_the_original_rows_with_unscaled_weights() {
        for values in [
            ValueVec::F64(vec![3.3, -0.0013, 683.7, -4.1, 0.51]),
            ValueVec::F32(vec![3.3, -0.0013, 683.7, -4.1, 0.51]),
        ] {
            let m = matrix(values);
            let scales = ColumnScales::from_max_abs(&column_max_abs(&m).unwrap()).unwrap();
            let scaled = scales.scale_matrix(m.clone()).unwrap();
            let v = [0.37, -1.9e-3, 12.25, 7.0];
            let mut w = v;
            scales.to_original_units(&mut w);
            let score = |row: Row<'_>, w: &[f64]| -> f64 {
                row.indices
                    .iter()
                    .enumerate()
                    .map(|(k, &j)| w[j as usize] * row.values.get(k))
                    .sum()
            };
            for i in 0..m.n_rows() {
                assert_eq!(
                    score(m.row(i), &w).to_bits(),
                    score(scaled.row(i), &v).to_bits()
                );
            }
            let mut back = w;
            scales.to_scaled_units(&mut back);
            assert_eq!(back, v);
            let largest = column_max_abs(&scaled).unwrap();
            assert!(
                largest[..3].iter().all(|&x| x > 0.5 && x <= 1.0),
                "{largest:?}"
            );
        }
    }

    #[test]
    fn binary_columns_stay_binary_unless_given_a_scale() {
        let m = matrix(ValueVec::Ones);
        let scales = ColumnScales::from_max_abs(&column_max_abs(&m).unwrap()).unwrap();
        assert!(scales.is_identity());
        assert_eq!(scales.scale_matrix(m.clone()).unwrap(), m);
        let halved = ColumnScales::from_exponents(vec![0, 1, 0, 0]).unwrap();
        let scaled = halved.scale_matrix(m).unwrap();
        assert_eq!(
            scaled.values(),
            &ValueVec::F32(vec![1.0, 1.0, 0.5, 1.0, 0.5])
        );
    }

    #[test]
    fn values_beyond_f32_become_f64_and_beyond_f64_are_refused() {
        let one =
            |values: ValueVec| CsrMatrix::new(vec![1.0], vec![0, 1], vec![0], values, 1).unwrap();
        let up = ColumnScales::from_exponents(vec![-200]).unwrap();
        let down = ColumnScales::from_exponents(vec![200]).unwrap();
        let big = up.scale_matrix(one(ValueVec::F32(vec![1e30]))).unwrap();
        assert_eq!(
            big.values(),
            &ValueVec::F64(vec![f64::from(1e30f32) * 2f64.powi(200)])
        );
        let tiny = down.scale_matrix(one(ValueVec::Ones)).unwrap();
        assert_eq!(tiny.values(), &ValueVec::F64(vec![2f64.powi(-200)]));
        let halved = ColumnScales::from_exponents(vec![1]).unwrap();
        let half = halved.scale_matrix(one(ValueVec::Ones)).unwrap();
        assert_eq!(half.values(), &ValueVec::F32(vec![0.5]));
        let far = ColumnScales::from_exponents(vec![-1000]).unwrap();
        let err = far
            .scale_matrix(one(ValueVec::F64(vec![1e100])))
            .unwrap_err();
        assert!(err.to_string().contains("not a finite number"), "{err}");
    }

    #[test]
    fn a_dataset_scales_shard_by_shard_as_its_rows_in_memory_do() {
        use crate::data::convert::{ConvertOptions, convert};
        use crate::data::{Dataset, ExampleSet, libsvm};
        let tmp = tempfile::tempdir().unwrap();
        let input = tmp.path().join("in.svm");
        let text: String = (0..40u32)
            .map(|i| {
                format!(
                    "{} 1:{} {}:0.25 7:{}\n",
                    2 * (i % 2) as i32 - 1,
                    i * 37,
                    i % 5 + 2,
                    -0.001 * f64::from(i)
                )
            })
            .collect();
        std::fs::write(&input, text).unwrap();
        let matrix = libsvm::read_file(&input, Default::default()).unwrap();
        let scales = ColumnScales::from_max_abs(&column_max_abs(&matrix).unwrap()).unwrap();
        assert_eq!(scales.exponents(), [11, -2, -2, -2, -2, -2, -4]);
        let scaled = scales.scale_matrix(matrix).unwrap();
        for renumber_by_frequency in [false, true] {
            let out = tmp.path().join(format!("ds{renumber_by_frequency}"));
            let options = ConvertOptions {
                rows_per_shard: 3,
                renumber_by_frequency,
                ..ConvertOptions::default()
            };
            convert(&input, &out, &options).unwrap();
            let dataset = Dataset::open(&out).unwrap().into_examples().unwrap();
            let permutation = dataset.dataset().feature_permutation().map(<[u32]>::to_vec);
            let in_columns = scales
                .in_columns(dataset.n_features(), permutation.as_deref())
                .unwrap();
            let max = column_max_abs(&dataset).unwrap();
            assert_eq!(ColumnScales::from_max_abs(&max).unwrap(), in_columns);
            let set = ExampleSet::Dataset(dataset)
                .scaled(&in_columns, &input)
                .unwrap();
            assert_eq!(set.feature_permutation().map(<[u32]>::to_vec), permutation);
            let view = set.rows();
            for i in 0..scaled.n_rows() {
                let expected = scaled.row(i);
                for row in [set.row(i), view.row(i)] {
                    let original = |k: usize| {
                        let j = row.indices[k] as usize;
                        permutation.as_ref().map_or(j, |p| p[j] as usize)
                    };
                    let mut entries: Vec<(usize, f64)> = (0..row.nnz())
                        .map(|k| (original(k), row.values.get(k)))
                        .collect();
                    entries.sort_by_key(|e| e.0);
                    let want: Vec<(usize, f64)> = (0..expected.nnz())
                        .map(|k| (expected.indices[k] as usize, expected.values.get(k)))
                        .collect();
                    assert_eq!(entries, want, "row {i}");
                }
            }
        }
    }

    #[test]
    fn scales_move_between_column_numberings() {
        let original = ColumnScales::from_exponents(vec![1, 2, 3]).unwrap();
        // Column j holds feature p[j].
        let p = [2, 0, 1];
        let columns = original.in_columns(4, Some(&p)).unwrap();
        assert_eq!(columns.exponents(), [3, 1, 2, 0]);
        assert_eq!(
            columns
                .to_original(Some(&[2, 0, 1, 3]))
                .unwrap()
                .exponents(),
            [1, 2, 3, 0]
        );
        assert_eq!(original.in_columns(2, None).unwrap().exponents(), [1, 2]);
        assert!(ColumnScales::from_exponents(vec![0, 1023]).is_err());
    }
}
