//! Scoring, predicting and evaluating with a one-vs-rest classifier ([`OneVsRest`]), the
//! multiclass counterparts of [`super::scores`], [`super::predict`] and the binary metrics.

use rayon::prelude::*;

use super::{ExampleSet, Examples, OneVsRest};
use crate::data::sample_weights;
use crate::dist::{self, Reducer};
use crate::metrics::{self, MulticlassEvaluation};

/// Whether the labels of every rank's `data` take more than two values: data that a
/// classification loss learns one class against the rest
/// ([`super::Trainer::train_one_vs_rest_across`]). A collective, which every rank calls.
pub fn more_than_two_labels_across(data: &ExampleSet, reducer: &dyn Reducer) -> bool {
    let distinct: Vec<(f64, u64)> = (metrics::first_distinct(&metrics::labels(data), 3))
        .into_iter()
        .map(|y| (y, 1))
        .collect();
    dist::value_counts(reducer, &distinct, 3).is_ok_and(|values| values.len() > 2)
}

/// Every row's score under each class's model: `scores[k][i]` is class k's w·x_i + b.
pub fn class_scores(classifier: &OneVsRest, data: &ExampleSet) -> Vec<Vec<f64>> {
    classifier
        .models()
        .iter()
        .map(|model| super::scores(model, data))
        .collect()
}

/// The class each row is predicted to be ([`OneVsRest::prediction`]), in row order. Each
/// row is read once and scored by every class's model, so memory stays one value per row
/// whatever the number of classes.
pub fn predict_classes(classifier: &OneVsRest, data: &ExampleSet) -> Vec<f64> {
    let weights: Vec<_> = (classifier.models().iter())
        .map(|model| model.weights_for(data.n_features(), data.feature_permutation()))
        .collect();
    let rows = data.rows();
    (0..rows.n_rows())
        .into_par_iter()
        .map_init(
            || Vec::with_capacity(weights.len()),
            |scores, i| {
                let row = rows.row(i);
                row.prefetch_following();
                scores.clear();
                scores.extend(
                    (weights.iter().zip(classifier.models()))
                        .map(|(w, model)| metrics::row_score(w, model.bias, &row)),
                );
                classifier.prediction(scores)
            },
        )
        .collect()
}

/// Each row's probability of each class ([`OneVsRest::probabilities`]), rows in order, the
/// classes' in the classifier's order; `None` unless its models were trained with log loss.
pub fn class_probabilities(classifier: &OneVsRest, data: &ExampleSet) -> Option<Vec<Vec<f64>>> {
    if !classifier.models()[0].loss.gives_probabilities() {
        return None;
    }
    let scores = class_scores(classifier, data);
    by_row(&scores, data.n_rows())
        .map(|row| classifier.probabilities(&row))
        .collect()
}

/// The classifier's metrics on `data`: error rate, each class's precision, recall and F1,
/// and each class's model evaluated on its class against the rest (the objective it
/// minimized: its class weights, and the rows weighed by `sample_weights` if given, one per
/// row).
pub fn evaluate_one_vs_rest(
    classifier: &OneVsRest,
    data: &ExampleSet,
    sample_weights: Option<&[f64]>,
) -> Result<MulticlassEvaluation, super::Error> {
    Ok(evaluate_and_predict(classifier, data, sample_weights)?.0)
}

/// [`evaluate_one_vs_rest`], and the class predicted for each row on the way.
pub(super) fn evaluate_and_predict(
    classifier: &OneVsRest,
    data: &ExampleSet,
    sample_weights: Option<&[f64]>,
) -> Result<(MulticlassEvaluation, Vec<f64>), super::Error> {
    let config = |e: String| super::Error::Config(e);
    if let Some(weights) = sample_weights {
        sample_weights::check(weights, data.n_rows()).map_err(|e| config(e.to_string()))?;
    }
    let scores = class_scores(classifier, data);
    let labels = metrics::labels(data);
    let mut one_vs_rest = Vec::with_capacity(scores.len());
    for ((&class, model), p) in (classifier.classes().iter())
        .zip(classifier.models())
        .zip(&scores)
    {
        let y: Vec<f64> = labels
            .iter()
            .map(|&label| if label == class { 1.0 } else { -1.0 })
            .collect();
        // The loss with the class weights training minimized.
        let loss = model.weighted_loss().map_err(|e| config(e.to_string()))?;
        one_vs_rest.push(metrics::evaluate_weighted_scores(
            loss,
            model.penalty_value(),
            p,
            &y,
            sample_weights,
        ));
    }
    let predictions: Vec<f64> = by_row(&scores, data.n_rows())
        .map(|row| classifier.prediction(&row))
        .collect();
    let evaluation =
        metrics::evaluate_classes(classifier.classes(), &predictions, &labels, one_vs_rest);
    Ok((evaluation, predictions))
}

/// Per-class score columns read row by row: row i's score under each class.
fn by_row(scores: &[Vec<f64>], rows: usize) -> impl Iterator<Item = Vec<f64>> + '_ {
    (0..rows).map(move |i| scores.iter().map(|column| column[i]).collect())
}
