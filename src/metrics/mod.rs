//! How good a linear model is on a data set: the objective F(w, b) of MATH.md §1, and the
//! usual test metrics (error rate, AUC, precision, recall and F1, log loss, RMSE), and those
//! of a multiclass classifier ([`MulticlassEvaluation`]).
//!
//! Scores are computed row-parallel (rayon) into a vector and every sum is taken serially in
//! row order, so results do not depend on the thread count.

mod classes;

pub use classes::{ClassMetrics, ClassTally, MulticlassEvaluation, evaluate_classes};

use rayon::prelude::*;
use sparselin_kernels::{Values, dense, sparse};

use crate::batch::objective::CHUNK_ROWS;
use crate::data::{Examples, Row};
use crate::loss::{Loss, WeightedLoss};

/// w·x_i + b for every row. Features beyond `weights` (a model of fewer features than the
/// data has) weigh 0, as in `predict` and `eval`; nothing is allocated for them, so data of
/// any width (indices up to 2^32 − 1) is scored. Each stored run of rows whose indices fit the
/// weights goes to the row-block kernel in one call.
pub fn scores<E: Examples>(weights: &[f64], bias: f64, data: &E) -> Vec<f64> {
    let data = data.rows();
    let mut out = vec![0.0; data.n_rows()];
    out.par_chunks_mut(CHUNK_ROWS)
        .enumerate()
        .for_each(|(c, chunk)| {
            let first = c * CHUNK_ROWS;
            data.for_each_block(first..first + chunk.len(), &mut |row, block| {
                let out = &mut chunk[row - first..][..block.len()];
                if block.indices().bound() <= weights.len() {
                    sparse::dot_rows(weights, block, out);
                    return;
                }
                // A model narrower than the data: row by row, each row's known prefix.
                for (k, o) in out.iter_mut().enumerate() {
                    let x = data.row(row + k);
                    x.prefetch_following();
                    *o = known_prefix_dot(weights, x.indices.as_slice(), x.values);
                }
            });
            chunk.iter_mut().for_each(|o| *o += bias);
        });
    out
}

/// w·x + b of one row, features beyond `weights` weighing 0 (as [`scores`] scores each row).
pub(crate) fn row_score(weights: &[f64], bias: f64, row: &Row<'_>) -> f64 {
    known_features_dot(weights, row) + bias
}

/// w·x over the features `weights` holds (a row's bound, proven once for its dataset, usually
/// says that is all of them).
fn known_features_dot(weights: &[f64], row: &Row<'_>) -> f64 {
    if row.indices.bound() <= weights.len() {
        return sparse::dot(weights, row.indices, row.values);
    }
    known_prefix_dot(weights, row.indices.as_slice(), row.values)
}

/// w·x over the entries of a row in increasing index order that `weights` holds: a prefix of
/// it, the rest weighing 0. The kernel that scores datasets, for any width of row.
pub(crate) fn known_prefix_dot(weights: &[f64], indices: &[u32], values: Values<'_>) -> f64 {
    let known = indices.partition_point(|&j| (j as usize) < weights.len());
    sparse::dot(weights, &indices[..known], values.slice(0..known))
}

/// The stored labels, row by row.
pub fn labels<E: Examples>(data: &E) -> Vec<f64> {
    let data = data.rows();
    (0..data.n_rows()).map(|i| data.row(i).label).collect()
}

/// The first three distinct values of `labels` when they take more than two: labels a binary
/// classifier cannot be trained or scored on (labels 2 and 3 would both count as +1).
pub fn more_than_two_values(labels: &[f64]) -> Option<[f64; 3]> {
    match first_distinct(labels, 3)[..] {
        [a, b, c] => Some([a, b, c]),
        _ => None,
    }
}

/// The first `most` distinct values of `labels`, in the order they come (all of them if
/// fewer; -0 and 0 are one value).
pub fn first_distinct(labels: &[f64], most: usize) -> Vec<f64> {
    let mut distinct: Vec<f64> = Vec::with_capacity(most);
    for &y in labels {
        if distinct.len() == most {
            break;
        }
        if !distinct.contains(&y) {
            distinct.push(y);
        }
    }
    distinct
}

/// (1/m) Σ c_{y_i}·ℓ(p_i, y_i), labels mapped by [`Loss::target`], c the class weights of a
/// [`WeightedLoss`] (1 for a plain [`Loss`]).
pub fn mean_loss(loss: impl Into<WeightedLoss>, scores: &[f64], labels: &[f64]) -> f64 {
    weighted_mean_loss(loss.into(), scores, labels, None)
}

/// [`mean_loss`] with row i's term times its sample weight s_i, if given (still divided by
/// the number of rows, as the objective is).
fn weighted_mean_loss(
    loss: WeightedLoss,
    scores: &[f64],
    labels: &[f64],
    sample_weights: Option<&[f64]>,
) -> f64 {
    // Each row's c_y·ℓ from the slice form, a chunk of rows at a time (the log loss's softplus
    // vectorized: a fifth of `eval`'s time as one call a row), summed in row order.
    let values = scores
        .chunks(CHUNK_ROWS)
        .zip(labels.chunks(CHUNK_ROWS))
        .flat_map(|(p, labels)| {
            let y: Vec<f64> = labels.iter().map(|&label| loss.target(label)).collect();
            let mut out = vec![0.0; p.len()];
            loss.values(p, &y, &mut out);
            out
        });
    let sum: f64 = match sample_weights {
        Some(s) => values.zip(s).map(|(value, s)| s * value).sum(),
        None => values.sum(),
    };
    sum / scores.len().max(1) as f64
}

/// The regularization term of an objective: (λ/2)(‖w‖² + b²) + λ₁(‖w‖₁ + |b|), without the
/// b terms when the bias is not regularized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penalty {
    /// λ of the squared norm.
    pub lambda: f64,
    /// λ₁ of the L1 norm (0: none).
    pub l1: f64,
    /// Whether the bias is regularized as a weight.
    pub regularize_bias: bool,
}

impl Penalty {
    /// (λ/2)(‖w‖² + b²) alone (MATH.md §1), b² only for a regularized bias.
    pub fn l2(lambda: f64, regularize_bias: bool) -> Penalty {
        Penalty {
            lambda,
            l1: 0.0,
            regularize_bias,
        }
    }

    /// The term's value at (w, b). Finite wherever the products are, even when ‖w‖² alone is
    /// not: under a tiny λ the weights grow like 1/λ (λ = 1e-200 gives weights near 1e198,
    /// whose squares overflow), so the squares are then summed scaled by the largest |w_j|.
    pub fn value(&self, weights: &[f64], bias: f64) -> f64 {
        let b = if self.regularize_bias { bias } else { 0.0 };
        let squares = dense::norm2(weights) + b * b;
        let l2 = if squares.is_finite() {
            0.5 * self.lambda * squares
        } else {
            let (largest, scaled) = rescaled_squares(weights.iter().chain([&b]));
            0.5 * self.lambda * largest * largest * scaled
        };
        if self.l1 > 0.0 {
            let norm1 = weights.iter().map(|w| w.abs()).sum::<f64>() + b.abs();
            l2 + self.l1 * norm1
        } else {
            l2
        }
    }
}

impl std::fmt::Display for Penalty {
    /// "λ = 1e-4" (or "λ = 0"), with ", λ₁ = 1e-3" where there is an L1 term.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.lambda {
            0.0 => write!(f, "λ = 0")?,
            lambda => write!(f, "λ = {lambda:e}")?,
        }
        if self.l1 != 0.0 {
            write!(f, ", λ₁ = {:e}", self.l1)?;
        }
        Ok(())
    }
}

/// F(w, b) = (1/m) Σ s_i·c_{y_i}·ℓ(w·x_i + b, y_i) + the penalty (MATH.md §1, with the class
/// weights c of a [`WeightedLoss`] and the sample weights s of `data`, if it has them).
pub fn objective<E: Examples>(
    loss: impl Into<WeightedLoss>,
    penalty: Penalty,
    weights: &[f64],
    bias: f64,
    data: &E,
) -> f64 {
    let p = scores(weights, bias, data);
    let mean = weighted_mean_loss(loss.into(), &p, &labels(data), data.sample_weights());
    mean + penalty.value(weights, bias)
}

/// The largest |v| of `values` and Σ (v/largest)² (both 0 for no value or only zeros): their
/// sum of squares as scaled · largest², without the overflow or underflow of the squares
/// themselves, for a caller to multiply back in an order that keeps its result finite.
pub(crate) fn rescaled_squares<'a>(values: impl Iterator<Item = &'a f64> + Clone) -> (f64, f64) {
    let largest = values.clone().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest == 0.0 {
        return (0.0, 0.0);
    }
    let scaled = values.map(|v| (v / largest) * (v / largest)).sum();
    (largest, scaled)
}

/// Whether a score predicts the class +1: when it is > 0, a score of 0 predicting −1, as
/// liblinear, scikit-learn and Vowpal Wabbit predict. Every prediction of a class follows it.
pub fn predicts_plus_one(score: f64) -> bool {
    score > 0.0
}

/// Fraction of rows whose predicted class ([`predicts_plus_one`]) differs from the class
/// (label > 0).
pub fn error_rate(scores: &[f64], labels: &[f64]) -> f64 {
    let wrong = scores
        .iter()
        .zip(labels)
        .filter(|&(&p, &y)| predicts_plus_one(p) != (y > 0.0))
        .count();
    wrong as f64 / scores.len().max(1) as f64
}

/// Precision, recall and F1 of the class +1 (label > 0), as [`predicts_plus_one`] predicts it (as
/// [`error_rate`] counts): TP/(TP + FP), TP/(TP + FN) and their harmonic mean. A ratio with
/// nothing to count is `None` (precision when nothing is predicted +1, recall when no label
/// is), and so is F1 without both; F1 is 0 when both are.
pub fn precision_recall_f1(scores: &[f64], labels: &[f64]) -> [Option<f64>; 3] {
    let (mut true_positives, mut predicted, mut actual) = (0usize, 0usize, 0usize);
    for (&p, &y) in scores.iter().zip(labels) {
        let (says, is) = (predicts_plus_one(p), y > 0.0);
        predicted += usize::from(says);
        actual += usize::from(is);
        true_positives += usize::from(says && is);
    }
    let ratio = |n: usize, d: usize| (d > 0).then(|| n as f64 / d as f64);
    let (precision, recall) = (
        ratio(true_positives, predicted),
        ratio(true_positives, actual),
    );
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    [precision, recall, f1]
}

/// Area under the ROC curve of the scores for classes label > 0 vs the rest (ties count half,
/// via average ranks); `None` if one class is absent.
pub fn auc(scores: &[f64], labels: &[f64]) -> Option<f64> {
    // (score, class) pairs sorted by score: the sort reads contiguous pairs rather than
    // scores scattered through an index array, and ties share their average rank, so the
    // order within a tie does not matter (an unstable sort will do, in parallel: the sort was
    // a fifth of `eval`'s time on one thread).
    let mut ranked: Vec<(f64, bool)> = scores
        .iter()
        .zip(labels)
        .map(|(&score, &y)| (score, y > 0.0))
        .collect();
    ranked.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let positives = ranked.iter().filter(|&&(_, positive)| positive).count() as f64;
    let negatives = ranked.len() as f64 - positives;
    if positives == 0.0 || negatives == 0.0 {
        return None;
    }
    let mut rank_sum = 0.0;
    let mut start = 0;
    while start < ranked.len() {
        let mut end = start + 1;
        while end < ranked.len() && ranked[end].0 == ranked[start].0 {
            end += 1;
        }
        // Ranks start+1..=end share their average.
        let rank = (start + 1 + end) as f64 / 2.0;
        let tied_positives = ranked[start..end].iter().filter(|r| r.1).count();
        rank_sum += rank * tied_positives as f64;
        start = end;
    }
    Some((rank_sum - positives * (positives + 1.0) / 2.0) / (positives * negatives))
}

/// Mean negative log-likelihood of the classes under P(y = +1) = 1/(1 + e^(−score)).
pub fn log_loss(scores: &[f64], labels: &[f64]) -> f64 {
    mean_loss(Loss::Log, scores, labels)
}

/// Root mean squared error of the scores against the labels.
pub fn rmse(scores: &[f64], labels: &[f64]) -> f64 {
    (2.0 * mean_loss(Loss::Squared, scores, labels)).sqrt()
}

/// R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)², the coefficient of determination of the scores ŷ
/// (scikit-learn's `r2_score` and a regressor's `score`): 1 for a perfect fit, 0 for the
/// labels' mean, below 0 for worse. `None` where the labels do not vary (fewer than two
/// rows, or all the same), which leaves the ratio undefined.
pub fn r2(scores: &[f64], labels: &[f64]) -> Option<f64> {
    let m = labels.len() as f64;
    let mean = labels.iter().sum::<f64>() / m;
    let total: f64 = labels.iter().map(|y| (y - mean) * (y - mean)).sum();
    let residual: f64 = (scores.iter().zip(labels))
        .map(|(p, y)| (y - p) * (y - p))
        .sum();
    (total > 0.0 && total.is_finite()).then(|| 1.0 - residual / total)
}

/// The fraction of labels at or below their scores (0 for no rows).
pub fn coverage(scores: &[f64], labels: &[f64]) -> f64 {
    let covered = scores.iter().zip(labels).filter(|(p, y)| y <= p).count();
    covered as f64 / scores.len().max(1) as f64
}

/// The metrics that fit a loss, on one data set.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Evaluation {
    /// Rows evaluated.
    pub rows: usize,
    /// F(w, b) with the model's loss, class weights and λ.
    pub objective: f64,
    /// (1/m) Σ c_y·ℓ without the regularizer (c the class weights; 1 without them).
    pub mean_loss: f64,
    /// Classification: error rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    /// Classification: AUC (absent when one class is missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auc: Option<f64>,
    /// Classification: precision of the class +1 (absent when none is predicted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Classification: recall of the class +1 (absent when no label is +1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
    /// Classification: F1 of the class +1 (absent without precision and recall).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f1: Option<f64>,
    /// Log loss (only for models trained with it: other scores are not log-odds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_loss: Option<f64>,
    /// Regression: RMSE of the values predicted ([`Loss::predicted_value`]: the mean e^p of a
    /// Poisson model, the score of the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
    /// Regression, quantile regression aside (its model predicts no mean, which R² judges):
    /// R² of the values predicted ([`r2`]; absent where the labels do not vary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r2: Option<f64>,
    /// Quantile regression: the fraction of labels at or below their prediction, which is τ
    /// where the model predicts the τ-quantile (only for models trained with the quantile
    /// loss).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// Poisson regression: the mean Poisson deviance 2·(1/m)Σ(y·ln(y/μ) − y + μ) of the means
    /// μ = e^p predicted (scikit-learn's `mean_poisson_deviance`), every row once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poisson_deviance: Option<f64>,
}

impl Evaluation {
    /// The held-out score a search over a grid minimizes: the error rate of a classifier, the
    /// mean pinball loss of a quantile model (RMSE would judge a mean it does not predict),
    /// the mean deviance of a Poisson model (as scikit-learn scores one), the RMSE of other
    /// regressions.
    pub fn search_score(&self) -> f64 {
        let pinball = self.coverage.map(|_| self.mean_loss);
        let scores = [self.error_rate, pinball, self.poisson_deviance, self.rmse];
        scores
            .into_iter()
            .flatten()
            .next()
            .unwrap_or(self.mean_loss)
    }
}

/// Evaluate (w, b) on `data` with the metrics that fit `loss`. The objective and mean loss
/// weigh the classes as `loss` does, and the rows by `data`'s sample weights if it has them;
/// the error rate, AUC, precision, recall, log loss, RMSE, R² and coverage count every row
/// once.
pub fn evaluate<E: Examples>(
    loss: impl Into<WeightedLoss>,
    penalty: Penalty,
    weights: &[f64],
    bias: f64,
    data: &E,
) -> Evaluation {
    evaluate_with_penalty(loss, penalty.value(weights, bias), weights, bias, data)
}

/// [`evaluate`] with the objective's regularization term given by its value, `penalty`: a
/// model's own ([`crate::model::Model::penalty_value`]), which for a model of scaled columns
/// is not the term of the weights that score the rows.
pub fn evaluate_with_penalty<E: Examples>(
    loss: impl Into<WeightedLoss>,
    penalty: f64,
    weights: &[f64],
    bias: f64,
    data: &E,
) -> Evaluation {
    let p = scores(weights, bias, data);
    let y = labels(data);
    evaluation(loss.into(), penalty, &p, &y, data.sample_weights())
}

/// The metrics [`evaluate`] gives of rows whose scores w·x + b are `p` and labels `y`, each
/// row weighing 1, the objective's regularization term being `penalty` (its value).
pub fn evaluate_scores(
    loss: impl Into<WeightedLoss>,
    penalty: f64,
    p: &[f64],
    y: &[f64],
) -> Evaluation {
    evaluate_weighted_scores(loss, penalty, p, y, None)
}

/// [`evaluate_scores`] with row i's loss weighed by `sample_weights[i]`, if given (as
/// [`evaluate`] weighs a set's rows): for scores already computed.
pub fn evaluate_weighted_scores(
    loss: impl Into<WeightedLoss>,
    penalty: f64,
    p: &[f64],
    y: &[f64],
    sample_weights: Option<&[f64]>,
) -> Evaluation {
    evaluation(loss.into(), penalty, p, y, sample_weights)
}

/// The metrics of scores `p` against labels `y`, the objective's regularization term being
/// `penalty` and its mean loss weighted by `sample_weights`, if given.
fn evaluation(
    weighted: WeightedLoss,
    penalty: f64,
    p: &[f64],
    y: &[f64],
    sample_weights: Option<&[f64]>,
) -> Evaluation {
    let loss = weighted.loss();
    let mean = weighted_mean_loss(weighted, p, y, sample_weights);
    let predicted: std::borrow::Cow<[f64]> = match loss {
        Loss::Poisson => p.iter().map(|&p| loss.predicted_value(p)).collect(),
        _ => p.into(),
    };
    let classification = loss.is_classification();
    let [precision, recall, f1] = if classification {
        precision_recall_f1(p, y)
    } else {
        [None; 3]
    };
    Evaluation {
        rows: p.len(),
        objective: mean + penalty,
        mean_loss: mean,
        error_rate: classification.then(|| error_rate(p, y)),
        auc: if classification { auc(p, y) } else { None },
        precision,
        recall,
        f1,
        // Unweighted, the log loss's mean loss is this metric: the same sum, not taken twice.
        log_loss: loss.gives_probabilities().then(|| {
            if weighted.class_weights().is_unit() && sample_weights.is_none() {
                mean
            } else {
                log_loss(p, y)
            }
        }),
        rmse: (!classification).then(|| rmse(&predicted, y)),
        r2: match loss {
            Loss::Quantile(_) => None,
            _ if classification => None,
            _ => r2(&predicted, y),
        },
        coverage: matches!(loss, Loss::Quantile(_)).then(|| coverage(p, y)),
        // The mean loss is half this metric unweighted (a regression has no class weights).
        poisson_deviance: (loss == Loss::Poisson).then(|| match sample_weights {
            None => 2.0 * mean,
            Some(_) => 2.0 * mean_loss(Loss::Poisson, p, y),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_penalty_is_finite_where_the_squares_alone_overflow() {
        assert_eq!(Penalty::l2(0.5, false).value(&[3.0, 4.0], 0.0), 6.25);
        assert_eq!(Penalty::l2(0.5, true).value(&[3.0], 4.0), 6.25);
        // ‖w‖² = 2.5e397 overflows; (λ/2)‖w‖² = 1.25e197 does not.
        let p = Penalty::l2(1e-200, true).value(&[3e198, -4e198], 0.0);
        assert!((p / 1.25e197 - 1.0).abs() < 1e-12, "{p:e}");
        let p = Penalty::l2(1e-200, true).value(&[3e198], 4e198);
        assert!((p / 1.25e197 - 1.0).abs() < 1e-12, "{p:e}");
        assert_eq!(
            Penalty::l2(1.0, false).value(&[1e200, 1e200], 0.0),
            f64::INFINITY
        );
    }

    #[test]
    fn precision_recall_and_f1_count_the_class_plus_one() {
        // Scores > 0 predict +1: TP = 1 (row 0), FP = 1 (row 1), FN = 3 (rows 2, 5 and 4,
        // whose score of exactly 0 predicts −1), TN = 1 (row 3).
        let scores = [0.5, 2.0, -1.0, -0.5, 0.0, -3.0];
        let labels = [1.0, -1.0, 1.0, 0.0, 1.0, 1.0];
        let [p, r, f1] = precision_recall_f1(&scores, &labels);
        assert_eq!((p, r), (Some(0.5), Some(0.25)));
        assert!((f1.unwrap() - 1.0 / 3.0).abs() < 1e-15, "{f1:?}");
        assert_eq!(error_rate(&scores, &labels), 4.0 / 6.0);
        // Nothing predicted +1: no precision, so no F1; recall 0.
        assert_eq!(
            precision_recall_f1(&[-1.0, -1.0], &[1.0, -1.0]),
            [None, Some(0.0), None]
        );
        // No label +1: no recall.
        assert_eq!(
            precision_recall_f1(&[1.0, -1.0], &[-1.0, -1.0]),
            [Some(0.0), None, None]
        );
        // Both 0: F1 is 0.
        let none_right = precision_recall_f1(&[1.0, -1.0], &[-1.0, 1.0]);
        assert_eq!(none_right, [Some(0.0), Some(0.0), Some(0.0)]);
    }

    #[test]
    fn more_than_two_values_are_named_and_two_are_none() {
        assert_eq!(more_than_two_values(&[1.0, -1.0, 1.0, -1.0]), None);
        assert_eq!(more_than_two_values(&[]), None);
        assert_eq!(
            more_than_two_values(&[2.0, 2.0, 1.0, 2.0, 3.0, 4.0]),
            Some([2.0, 1.0, 3.0])
        );
    }
    use crate::data::{CsrMatrix, ValueVec};

    fn data() -> CsrMatrix {
        // rows: [1, 0], [0, 2], [1, 1] with labels +1, -1, +1
        CsrMatrix::new(
            vec![1.0, -1.0, 1.0],
            vec![0, 1, 2, 4],
            vec![0, 1, 0, 1],
            ValueVec::F64(vec![1.0, 2.0, 1.0, 1.0]),
            2,
        )
        .unwrap()
    }

    /// Rows of 0 to 39 entries over 50 features, f32 values.
    fn wide_data() -> CsrMatrix {
        let (mut offsets, mut indices, mut values) = (vec![0u64], Vec::new(), Vec::new());
        for r in 0..5000u32 {
            for j in (0..50).filter(|j| (r * 7 + j * 13) % 31 < r % 40 % 31) {
                indices.push(j);
                values.push(((r + j) % 9) as f32 - 4.0);
            }
            offsets.push(indices.len() as u64);
        }
        let labels = vec![1.0; offsets.len() - 1];
        CsrMatrix::new(labels, offsets, indices, ValueVec::F32(values), 50).unwrap()
    }

    /// The row-block scores are each row's own score bit for bit, with a model as wide as the
    /// data (the block kernel) and one narrower (row by row, the known prefix).
    #[test]
    fn block_scores_are_the_rows_scores() {
        let d = wide_data();
        let w: Vec<f64> = (0..50).map(|j| (j as f64 - 24.5) / 7.0).collect();
        for width in [50, 31, 0] {
            let got = scores(&w[..width], 0.25, &d);
            for (i, g) in got.iter().enumerate() {
                let want = row_score(&w[..width], 0.25, &d.row(i));
                assert_eq!(g.to_bits(), want.to_bits(), "row {i}, width {width}");
            }
        }
    }

    #[test]
    fn features_beyond_the_weights_weigh_zero() {
        let d = data();
        assert_eq!(scores(&[2.0], 0.5, &d), scores(&[2.0, 0.0], 0.5, &d));
        assert_eq!(scores(&[], 0.5, &d), [0.5; 3]);
    }

    /// The mean loss over more rows than a chunk, with class and sample weights, is the
    /// row-by-row mean bit for bit (rows, labels and weights kept together across chunks).
    #[test]
    fn the_mean_loss_is_the_row_by_row_mean() {
        let m = 2 * CHUNK_ROWS + 123;
        let p: Vec<f64> = (0..m).map(|i| (i as f64 * 0.37).sin() * 5.0).collect();
        let y: Vec<f64> = (0..m).map(|i| [1.0, 0.0, -1.0][i % 3]).collect();
        let s: Vec<f64> = (0..m).map(|i| 0.5 + (i % 7) as f64).collect();
        for loss in [Loss::Log, Loss::Hinge, Loss::Squared] {
            // Class weights for the classification losses; squared loss takes none.
            let class_weights = crate::loss::ClassWeights::new(2.0, 0.5).unwrap();
            let weighted = if loss.is_classification() {
                WeightedLoss::new(loss, class_weights).unwrap()
            } else {
                loss.into()
            };
            let value = |i: usize| weighted.value(p[i], weighted.target(y[i]));
            let plain: f64 = (0..m).map(value).sum();
            let weighed: f64 = (0..m).map(|i| s[i] * value(i)).sum();
            let mean = weighted_mean_loss(weighted, &p, &y, None);
            assert_eq!(mean.to_bits(), (plain / m as f64).to_bits(), "{loss:?}");
            let mean = weighted_mean_loss(weighted, &p, &y, Some(&s));
            assert_eq!(mean.to_bits(), (weighed / m as f64).to_bits(), "{loss:?}");
        }
    }

    #[test]
    fn objective_by_hand() {
        let d = data();
        // w = (1, -1), b = 0.5: scores 1.5, -1.5, 0.5; hinge 0, 0, 0.5 → mean 1/6.
        let f = objective(Loss::Hinge, Penalty::l2(0.1, true), &[1.0, -1.0], 0.5, &d);
        assert!((f - (0.5 / 3.0 + 0.05 * (2.0 + 0.25))).abs() < 1e-15);
        let f = objective(Loss::Hinge, Penalty::l2(0.1, false), &[1.0, -1.0], 0.5, &d);
        assert!((f - (0.5 / 3.0 + 0.05 * 2.0)).abs() < 1e-15);
        // The elastic net adds λ₁(‖w‖₁ + |b|): 0.2·(2 + 0.5).
        let net = Penalty {
            l1: 0.2,
            ..Penalty::l2(0.1, true)
        };
        let f = objective(Loss::Hinge, net, &[1.0, -1.0], 0.5, &d);
        assert!((f - (0.5 / 3.0 + 0.05 * (2.0 + 0.25) + 0.2 * 2.5)).abs() < 1e-15);
    }

    #[test]
    fn auc_counts_ties_half_and_error_rate_counts_signs() {
        let y = [1.0, -1.0, 1.0, -1.0];
        assert_eq!(auc(&[0.9, 0.1, 0.8, 0.2], &y), Some(1.0));
        assert_eq!(auc(&[0.1, 0.9, 0.2, 0.8], &y), Some(0.0));
        assert_eq!(auc(&[0.5, 0.5, 0.5, 0.5], &y), Some(0.5));
        assert_eq!(auc(&[0.5, 0.5, 0.9, 0.1], &y), Some(0.875));
        assert_eq!(auc(&[1.0, 2.0], &[1.0, 1.0]), None);
        // A score of exactly 0 predicts −1 (row 0, labelled +1: an error).
        assert_eq!(error_rate(&[0.0, -0.1, -3.0, 2.0], &y), 0.75);
    }

    /// Against the definition: the fraction of (positive, negative) pairs ranked right, ties
    /// counting half, on scores with many ties.
    #[test]
    fn auc_equals_the_pairwise_count() {
        use rand_core::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(12345);
        let mut next = |m: u64| rng.next_u64() % m;
        // More rows than the parallel sort sorts sequentially, with many ties.
        let scores: Vec<f64> = (0..6000).map(|_| next(40) as f64 / 8.0 - 2.0).collect();
        let labels: Vec<f64> = (0..6000)
            .map(|_| if next(3) == 0 { 1.0 } else { -1.0 })
            .collect();
        let (mut right, mut pairs) = (0.0, 0.0);
        for (p, _) in scores.iter().zip(&labels).filter(|(_, y)| **y > 0.0) {
            for (n, _) in scores.iter().zip(&labels).filter(|(_, y)| **y <= 0.0) {
                pairs += 1.0;
                right += if p > n {
                    1.0
                } else if p == n {
                    0.5
                } else {
                    0.0
                };
            }
        }
        let got = auc(&scores, &labels).unwrap();
        assert!(
            (got - right / pairs).abs() < 1e-12,
            "{got} vs {}",
            right / pairs
        );
    }

    /// The log-loss metric is the plain mean log loss whatever weighs the objective's mean
    /// loss, and that mean loss itself when nothing does.
    #[test]
    fn the_log_loss_metric_is_unweighted() {
        let (p, y) = ([0.5, -1.0, 2.0], [1.0, 1.0, -1.0]);
        let plain = log_loss(&p, &y);
        let e = evaluate_weighted_scores(Loss::Log, 0.0, &p, &y, None);
        assert_eq!((e.log_loss, e.mean_loss), (Some(plain), plain));
        let weights = crate::loss::ClassWeights::new(3.0, 1.0).unwrap();
        let weighted = WeightedLoss::new(Loss::Log, weights).unwrap();
        for (loss, rows) in [
            (weighted, None),
            (Loss::Log.into(), Some(&[2.0, 1.0, 1.0][..])),
        ] {
            let e = evaluate_weighted_scores(loss, 0.0, &p, &y, rows);
            assert_eq!(e.log_loss, Some(plain));
            assert_ne!(e.mean_loss, plain);
        }
    }

    #[test]
    fn regression_and_log_metrics() {
        assert!((rmse(&[1.0, 3.0], &[0.0, 0.0]) - 5f64.sqrt()).abs() < 1e-15);
        assert_eq!(coverage(&[1.0, 3.0, 2.0, 0.5], &[1.0, 4.0, 0.0, 0.4]), 0.75);
        assert_eq!(coverage(&[], &[]), 0.0);
        assert!((log_loss(&[0.0], &[1.0]) - 2f64.ln()).abs() < 1e-15);
        let e = evaluate(
            Loss::Squared,
            Penalty::l2(0.0, true),
            &[0.0, 0.0],
            0.0,
            &data(),
        );
        assert!(e.error_rate.is_none() && e.auc.is_none() && e.rmse.is_some());
        assert!(e.coverage.is_none());
        // Labels 1, −1, 1 (mean 1/3, Σ(y − ȳ)² = 8/3) and scores 0: R² = 1 − 3/(8/3).
        assert!(
            (e.r2.unwrap() - (1.0 - 9.0 / 8.0)).abs() < 1e-15,
            "{:?}",
            e.r2
        );
        let e = evaluate(
            Loss::Quantile(0.3),
            Penalty::l2(0.0, true),
            &[0.0, 0.0],
            0.0,
            &data(),
        );
        assert!(e.rmse.is_some() && e.coverage.is_some() && e.r2.is_none());
        let e = evaluate(
            Loss::Log,
            Penalty::l2(0.0, true),
            &[1.0, -1.0],
            0.5,
            &data(),
        );
        assert_eq!(e.error_rate, Some(0.0));
        assert_eq!(e.auc, Some(1.0));
        assert_eq!(e.log_loss, Some(e.mean_loss));
        assert!(e.rmse.is_none() && e.r2.is_none());
    }

    /// R² is 1 for a perfect fit, 0 for the labels' mean, negative for worse, and absent
    /// where the labels do not vary.
    #[test]
    fn r2_against_its_definition() {
        let y = [3.0, -0.5, 2.0, 7.0];
        assert_eq!(r2(&y, &y), Some(1.0));
        assert_eq!(r2(&[2.875; 4], &y), Some(0.0));
        // scikit-learn's r2_score([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]) = 0.9486081370449679.
        let got = r2(&[2.5, 0.0, 2.0, 8.0], &y).unwrap();
        assert!((got - 0.9486081370449679).abs() < 1e-15, "{got}");
        assert!(r2(&[0.0, 0.0], &[5.0, 5.0]).is_none());
        assert!(r2(&[1.0], &[2.0]).is_none());
        assert!(r2(&[], &[]).is_none());
        assert!(r2(&[10.0, -10.0], &[1.0, 2.0]).unwrap() < 0.0);
    }
}
