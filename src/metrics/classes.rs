//! Metrics of a multiclass classifier's predictions: error rate, and precision, recall and F1
//! of each class with their macro average (scikit-learn's `classification_report`).

use serde::Serialize;

use super::Evaluation;
use crate::dist::Reducer;

/// How a one-vs-rest classifier does on one data set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MulticlassEvaluation {
    /// Rows evaluated.
    pub rows: usize,
    /// Fraction of rows predicted another class than their label (a label that is none of
    /// the classifier's classes is always an error).
    pub error_rate: f64,
    /// The mean of the classes' F1 over the classes present or predicted.
    pub macro_f1: Option<f64>,
    /// Rows whose label is none of the classifier's classes.
    pub unknown_labels: usize,
    /// Each class, in the classifier's order.
    pub classes: Vec<ClassMetrics>,
}

/// One class of a [`MulticlassEvaluation`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassMetrics {
    /// The class label.
    pub class: f64,
    /// Rows of this label.
    pub rows: usize,
    /// Rows predicted to be of this class.
    pub predicted: usize,
    /// Of the rows predicted this class, the fraction that are (absent when none is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Of the rows of this class, the fraction predicted so (absent when there are none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
    /// Harmonic mean of precision and recall, 2TP/(2TP + FP + FN): 0 when either is
    /// absent or 0; absent when the class is neither present nor predicted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f1: Option<f64>,
    /// The binary metrics of this class's model on the class against the rest: its
    /// objective, AUC, … (as `sparselin eval` reports for a binary model).
    pub one_vs_rest: Evaluation,
}

/// The error rate, per-class metrics and macro F1 of `predictions` against `labels`, for a
/// classifier of `classes` (increasing, as a classifier holds them); `one_vs_rest[k]` is
/// class k's binary evaluation.
pub fn evaluate_classes(
    classes: &[f64],
    predictions: &[f64],
    labels: &[f64],
    one_vs_rest: Vec<Evaluation>,
) -> MulticlassEvaluation {
    ClassTally::new(classes, predictions, labels).evaluation(classes, one_vs_rest)
}

/// What the multiclass metrics are computed from: per class, its rows, the rows predicted it
/// and those rightly so; and the rows wrong and of unknown labels. Counts add up over parts
/// of the rows ([`ClassTally::add_across`]), so that the metrics of every rank's rows come
/// from one sum.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassTally {
    actual: Vec<u64>,
    predicted: Vec<u64>,
    right: Vec<u64>,
    wrong: u64,
    unknown: u64,
    rows: u64,
}

impl ClassTally {
    /// The counts of `predictions` against `labels` for a classifier of `classes`
    /// (increasing).
    pub fn new(classes: &[f64], predictions: &[f64], labels: &[f64]) -> ClassTally {
        assert_eq!(predictions.len(), labels.len(), "one prediction per label");
        debug_assert!(classes.windows(2).all(|pair| pair[0] < pair[1]));
        // O(log K) per row, for classifiers of many classes.
        let index = |y: f64| {
            let at = classes.partition_point(|&c| c < y);
            (classes.get(at) == Some(&y)).then_some(at)
        };
        let k = classes.len();
        let mut tally = ClassTally {
            actual: vec![0; k],
            predicted: vec![0; k],
            right: vec![0; k],
            wrong: 0,
            unknown: 0,
            rows: labels.len() as u64,
        };
        for (&p, &y) in predictions.iter().zip(labels) {
            let guess = index(p);
            if let Some(g) = guess {
                tally.predicted[g] += 1;
            }
            match index(y) {
                Some(c) => {
                    tally.actual[c] += 1;
                    if guess == Some(c) {
                        tally.right[c] += 1;
                    } else {
                        tally.wrong += 1;
                    }
                }
                None => {
                    tally.unknown += 1;
                    tally.wrong += 1;
                }
            }
        }
        tally
    }

    /// Every rank's counts added up (one sum, which every rank makes).
    pub fn add_across(&mut self, reducer: &dyn Reducer) {
        let mut sums: Vec<f64> = self.counts_mut().map(|&mut n| n as f64).collect();
        reducer.sum(&mut sums);
        for (count, sum) in self.counts_mut().zip(sums) {
            *count = sum as u64;
        }
    }

    /// Every count, in a fixed order.
    fn counts_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        (self
            .actual
            .iter_mut()
            .chain(&mut self.predicted)
            .chain(&mut self.right))
        .chain([&mut self.wrong, &mut self.unknown, &mut self.rows])
    }

    /// Fraction of rows predicted another class than their label.
    pub fn error_rate(&self) -> f64 {
        self.wrong as f64 / self.rows.max(1) as f64
    }

    /// Class k's F1, 2TP/(2TP + FP + FN): 0 for a class present and never predicted, or
    /// predicted and never present (as scikit-learn counts it); absent for a class neither.
    fn f1(&self, k: usize) -> Option<f64> {
        ratio(2 * self.right[k], self.predicted[k] + self.actual[k])
    }

    /// The mean of the classes' F1 over the classes present or predicted.
    pub fn macro_f1(&self) -> Option<f64> {
        let f1s: Vec<f64> = (0..self.actual.len()).filter_map(|k| self.f1(k)).collect();
        (!f1s.is_empty()).then(|| f1s.iter().sum::<f64>() / f1s.len() as f64)
    }

    /// The evaluation of these counts, `one_vs_rest[k]` class k's binary evaluation.
    pub fn evaluation(
        &self,
        classes: &[f64],
        one_vs_rest: Vec<Evaluation>,
    ) -> MulticlassEvaluation {
        assert_eq!(one_vs_rest.len(), classes.len(), "one evaluation per class");
        let per_class: Vec<ClassMetrics> = (classes.iter().zip(one_vs_rest).enumerate())
            .map(|(k, (&class, one_vs_rest))| ClassMetrics {
                class,
                rows: self.actual[k] as usize,
                predicted: self.predicted[k] as usize,
                precision: ratio(self.right[k], self.predicted[k]),
                recall: ratio(self.right[k], self.actual[k]),
                f1: self.f1(k),
                one_vs_rest,
            })
            .collect();
        MulticlassEvaluation {
            rows: self.rows as usize,
            error_rate: self.error_rate(),
            macro_f1: self.macro_f1(),
            unknown_labels: self.unknown as usize,
            classes: per_class,
        }
    }
}

/// n/d, absent for d = 0.
fn ratio(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Evaluation {
        super::super::evaluate_scores(crate::loss::Loss::Hinge, 0.0, &[], &[])
    }

    #[test]
    fn counts_errors_per_class_metrics_and_unknown_labels() {
        let classes = [1.0, 2.0, 3.0];
        // labels:      1    1    2    2    3    7 (unknown)
        // predictions: 1    2    2    2    1    3
        let labels = [1.0, 1.0, 2.0, 2.0, 3.0, 7.0];
        let predictions = [1.0, 2.0, 2.0, 2.0, 1.0, 3.0];
        let e = evaluate_classes(&classes, &predictions, &labels, vec![blank(); 3]);
        assert_eq!((e.rows, e.unknown_labels), (6, 1));
        assert_eq!(e.error_rate, 3.0 / 6.0);
        let c: Vec<_> = e.classes.iter().map(|c| (c.rows, c.predicted)).collect();
        assert_eq!(c, [(2, 2), (2, 3), (1, 1)]);
        assert_eq!(e.classes[0].precision, Some(0.5));
        assert_eq!(e.classes[0].recall, Some(0.5));
        assert_eq!(e.classes[1].precision, Some(2.0 / 3.0));
        assert_eq!(e.classes[1].recall, Some(1.0));
        assert_eq!(e.classes[1].f1, Some(0.8));
        // Class 3: predicted once (wrongly, for the unknown label), its one row missed.
        assert_eq!(e.classes[2].f1, Some(0.0));
        let macro_f1 = (0.5 + 0.8 + 0.0) / 3.0;
        assert!((e.macro_f1.unwrap() - macro_f1).abs() < 1e-15);
    }

    #[test]
    fn a_class_present_and_never_predicted_scores_f1_0() {
        let e = evaluate_classes(&[1.0, 2.0], &[1.0, 1.0], &[1.0, 2.0], vec![blank(); 2]);
        assert_eq!(
            (e.classes[1].precision, e.classes[1].recall),
            (None, Some(0.0))
        );
        assert_eq!(e.classes[1].f1, Some(0.0));
        assert_eq!(e.macro_f1, Some((2.0 / 3.0 + 0.0) / 2.0));
    }

    #[test]
    fn a_class_neither_present_nor_predicted_has_no_f1_and_no_part_in_the_mean() {
        let e = evaluate_classes(&[1.0, 2.0, 3.0], &[1.0, 2.0], &[1.0, 2.0], vec![blank(); 3]);
        assert_eq!(e.error_rate, 0.0);
        assert_eq!(e.classes[0].f1, Some(1.0));
        assert_eq!(e.classes[2].f1, None);
        assert_eq!((e.classes[2].precision, e.classes[2].recall), (None, None));
        assert_eq!(e.macro_f1, Some(1.0));
    }

    #[test]
    fn tallies_of_parts_add_up_to_the_tally_of_the_whole() {
        let classes = [1.0, 2.0, 3.0];
        let labels = [1.0, 1.0, 2.0, 2.0, 3.0, 7.0, 3.0];
        let predictions = [1.0, 2.0, 2.0, 2.0, 1.0, 3.0, 3.0];
        let whole = ClassTally::new(&classes, &predictions, &labels);
        for cut in [0, 3, 7] {
            let parts = crate::dist::threads::run(2, |r| {
                let rows = if r.rank() == 0 { 0..cut } else { cut..7 };
                let mut tally =
                    ClassTally::new(&classes, &predictions[rows.clone()], &labels[rows]);
                tally.add_across(r);
                tally
            });
            assert!(parts.iter().all(|part| *part == whole), "cut at {cut}");
        }
        let e = whole.evaluation(&classes, vec![blank(); 3]);
        assert_eq!(
            (e.error_rate, e.macro_f1),
            (whole.error_rate(), whole.macro_f1())
        );
        assert_eq!(e.error_rate, 3.0 / 7.0);
    }
}
