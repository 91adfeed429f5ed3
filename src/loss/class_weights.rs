//! Per-class multipliers of the loss: liblinear's `-w1 W -w-1 W`, scikit-learn's
//! `class_weight`, for data whose classes are unbalanced or whose errors cost unequally.
//!
//! With weights c₊ and c₋ the objective is (λ/2)‖w‖² + (1/m) Σ_i c_{y_i} ℓ(w·x_i + b, y_i):
//! each row of class y counts as c_y rows, so that an integer weight trains exactly as copies of
//! the rows would with λ scaled to keep λm (tested so). liblinear's C_i = c_{y_i}·C is the same
//! objective. The unit weights (1, 1) leave every result unchanged, bit for bit.

use std::fmt;
use std::str::FromStr;

use super::Loss;

/// The weights c₊ (labels > 0) and c₋ (the others) of the two classes' losses.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClassWeights {
    /// c₊, the weight of a row labelled +1.
    pub positive: f64,
    /// c₋, the weight of a row labelled −1 (or 0).
    pub negative: f64,
}

impl Default for ClassWeights {
    fn default() -> Self {
        ClassWeights::UNIT
    }
}

/// Weights that cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClassWeightError {
    /// A weight is zero, negative, infinite or NaN.
    #[error("a class weight must be a positive finite number, got {0}")]
    NotPositive(f64),
    /// Balanced weights of data without rows of both classes.
    #[error(
        "balanced class weights need rows of both classes, got {positives} labelled +1 and \
         {negatives} labelled -1"
    )]
    MissingClass {
        /// Rows labelled +1.
        positives: u64,
        /// Rows labelled −1.
        negatives: u64,
    },
    /// Weights other than (1, 1) for a regression loss, whose labels have no class.
    #[error("class weights apply to the classification losses, not to {0} loss")]
    Regression(Loss),
    /// A weight for a label that is not a class of the data.
    #[error("a class weight names the label {label}, which is not a class of the data ({classes})")]
    UnknownClass {
        /// The label named.
        label: f64,
        /// The data's classes, as the message shows them.
        classes: String,
    },
    /// Two weights for one class (as −1 and 0 of binary data).
    #[error("the class of label {0} is weighted twice")]
    WeightedTwice(f64),
    /// Weights of the classes +1 and −1 for a one-vs-rest classifier, whose classes are labels.
    #[error(
        "one-vs-rest weighs each class by its label (e.g. 3=2,7=0.5) or 'balanced', not by \
         {0} (weights of the classes +1 and −1)"
    )]
    NotPerClass(ClassWeights),
}

impl ClassWeights {
    /// (1, 1): the unweighted objective.
    pub const UNIT: ClassWeights = ClassWeights {
        positive: 1.0,
        negative: 1.0,
    };

    /// The weights (c₊, c₋), each a positive finite number.
    pub fn new(positive: f64, negative: f64) -> Result<ClassWeights, ClassWeightError> {
        for c in [positive, negative] {
            if !(c > 0.0 && c.is_finite()) {
                return Err(ClassWeightError::NotPositive(c));
            }
        }
        Ok(ClassWeights { positive, negative })
    }

    /// scikit-learn's `class_weight="balanced"`: c_y = m/(2m_y) for m_y rows of class y among
    /// m, so that either class weighs m/2 in all.
    pub fn balanced(positives: u64, negatives: u64) -> Result<ClassWeights, ClassWeightError> {
        if positives == 0 || negatives == 0 {
            return Err(ClassWeightError::MissingClass {
                positives,
                negatives,
            });
        }
        let m = (positives + negatives) as f64;
        ClassWeights::new(m / (2.0 * positives as f64), m / (2.0 * negatives as f64))
    }

    /// c_y for a target y = ±1 ([`Loss::target`]).
    #[inline]
    pub fn of(self, y: f64) -> f64 {
        if y > 0.0 {
            self.positive
        } else {
            self.negative
        }
    }

    /// Whether these are (1, 1).
    pub fn is_unit(&self) -> bool {
        *self == ClassWeights::UNIT
    }
}

impl fmt::Display for ClassWeights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+1={},-1={}", self.positive, self.negative)
    }
}

/// How a trainer weighs the classes: given weights, weights by label, or weights balanced on
/// the training data.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassWeighting {
    /// These weights of the classes +1 and −1.
    Fixed(ClassWeights),
    /// (label, weight) pairs, each label named once, as liblinear's `-wi` and scikit-learn's
    /// `class_weight={label: weight}` give them; a class not named weighs 1. On binary data
    /// the label 1 names the class +1, and −1 or 0 the class −1 ([`ClassWeighting::binary`]);
    /// one-vs-rest weighs the named class's rows in its own problem
    /// ([`ClassWeighting::one_vs_rest`]).
    ByLabel(Vec<(f64, f64)>),
    /// [`ClassWeights::balanced`] on the rows trained on (each fold's own in cross-validation,
    /// as scikit-learn computes them).
    Balanced,
}

impl ClassWeighting {
    /// The weights of the classes +1 and −1 of binary data with `positives` and `negatives`
    /// rows of each.
    pub fn binary(&self, positives: u64, negatives: u64) -> Result<ClassWeights, ClassWeightError> {
        match self {
            ClassWeighting::Fixed(weights) => Ok(*weights),
            ClassWeighting::Balanced => ClassWeights::balanced(positives, negatives),
            ClassWeighting::ByLabel(pairs) => {
                let (mut positive, mut negative) = (None, None);
                for &(label, weight) in pairs {
                    let slot = if label == 1.0 {
                        &mut positive
                    } else if label == -1.0 || label == 0.0 {
                        &mut negative
                    } else {
                        return Err(ClassWeightError::UnknownClass {
                            label,
                            classes: "+1 or 1, -1 or 0".into(),
                        });
                    };
                    if slot.replace(weight).is_some() {
                        return Err(ClassWeightError::WeightedTwice(label));
                    }
                }
                ClassWeights::new(positive.unwrap_or(1.0), negative.unwrap_or(1.0))
            }
        }
    }

    /// Each class's weights in its problem against the rest, for the classes `classes`
    /// (ascending) with `rows[k]` rows of class k: (c_k, 1), c_k the weight named for the
    /// class's label (1 if none), or scikit-learn's balanced m/(K·m_k) for m_k of m rows in
    /// class k of K. liblinear and scikit-learn weigh a one-vs-rest problem so: the class at
    /// its own weight, the rest at 1. Labels named that are not classes are refused, unless
    /// `absent_ok` (a cross-validation fold may lack a class of the data).
    pub fn one_vs_rest(
        &self,
        classes: &[f64],
        rows: &[u64],
        absent_ok: bool,
    ) -> Result<Vec<ClassWeights>, ClassWeightError> {
        match self {
            ClassWeighting::Fixed(weights) => Err(ClassWeightError::NotPerClass(*weights)),
            ClassWeighting::Balanced => {
                let (m, k) = (rows.iter().sum::<u64>() as f64, rows.len() as f64);
                (rows.iter())
                    .map(|&rows| ClassWeights::new(m / (k * rows as f64), 1.0))
                    .collect()
            }
            ClassWeighting::ByLabel(pairs) => {
                let mut weights = vec![ClassWeights::UNIT; classes.len()];
                for &(label, weight) in pairs {
                    let own = ClassWeights::new(weight, 1.0)?;
                    match classes.iter().position(|&class| class == label) {
                        Some(k) => weights[k] = own,
                        None if absent_ok => {}
                        None => {
                            return Err(ClassWeightError::UnknownClass {
                                label,
                                classes: class_list(classes),
                            });
                        }
                    }
                }
                Ok(weights)
            }
        }
    }
}

/// The classes as an error names them: all of a few, the first and last of many.
fn class_list(classes: &[f64]) -> String {
    let names: Vec<String> = classes.iter().map(f64::to_string).collect();
    match names.len() {
        0..=12 => names.join(", "),
        n => format!(
            "{}, …, {} ({n} classes)",
            names[..6].join(", "),
            names[n - 1]
        ),
    }
}

impl fmt::Display for ClassWeighting {
    /// As the parser reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClassWeighting::Fixed(weights) => weights.fmt(f),
            ClassWeighting::ByLabel(pairs) => {
                for (i, (label, weight)) in pairs.iter().enumerate() {
                    let comma = if i > 0 { "," } else { "" };
                    write!(f, "{comma}{label}={weight}")?;
                }
                Ok(())
            }
            ClassWeighting::Balanced => f.write_str("balanced"),
        }
    }
}

impl FromStr for ClassWeighting {
    type Err = String;

    /// `balanced`, or `LABEL=W` pairs separated by commas, each label a whole number named
    /// once (`+1=5,-1=0.5`, `3=2,7=0.5`); what a label names depends on the data
    /// ([`ClassWeighting::ByLabel`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "balanced" {
            return Ok(ClassWeighting::Balanced);
        }
        let mut pairs: Vec<(f64, f64)> = Vec::new();
        for pair in s.split(',') {
            let (label, weight) = pair.split_once('=').ok_or_else(|| {
                format!("'{pair}' is not LABEL=WEIGHT (e.g. +1=5,-1=1 or 3=2) nor 'balanced'")
            })?;
            let label = label.trim();
            let class = (label.parse::<f64>().ok())
                .filter(|c| c.is_finite() && c.fract() == 0.0)
                // -0 is the class 0.
                .map(|c| c + 0.0)
                .ok_or_else(|| format!("class '{label}' is not a whole number"))?;
            if pairs.iter().any(|&(named, _)| named == class) {
                return Err(format!("class '{label}' is weighted twice"));
            }
            let weight = weight.trim();
            let weight = (weight.parse::<f64>())
                .map_err(|_| format!("weight '{weight}' is not a number"))
                .and_then(|w| ClassWeights::new(w, 1.0).map_err(|e| e.to_string()))?;
            pairs.push((class, weight.positive));
        }
        Ok(ClassWeighting::ByLabel(pairs))
    }
}

/// A loss with its class weights: ℓ scaled by c_y, the term each row adds to the objective.
/// What the learners and solvers evaluate; from a plain [`Loss`] it is that loss, unweighted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightedLoss {
    loss: Loss,
    class_weights: ClassWeights,
}

impl WeightedLoss {
    /// `loss` weighted by `class_weights`, checked here whatever built them (their fields are
    /// public, and a model file holds them): each positive and finite, and other than (1, 1)
    /// only for a classification loss.
    pub fn new(loss: Loss, class_weights: ClassWeights) -> Result<WeightedLoss, ClassWeightError> {
        ClassWeights::new(class_weights.positive, class_weights.negative)?;
        if !loss.is_classification() && !class_weights.is_unit() {
            return Err(ClassWeightError::Regression(loss));
        }
        Ok(WeightedLoss {
            loss,
            class_weights,
        })
    }

    /// The loss ℓ, unweighted.
    pub fn loss(self) -> Loss {
        self.loss
    }

    /// The weights (unit for a regression loss).
    pub fn class_weights(self) -> ClassWeights {
        self.class_weights
    }

    /// The y the loss works with for a stored label ([`Loss::target`]).
    #[inline]
    pub fn target(self, label: f64) -> f64 {
        self.loss.target(label)
    }

    /// c_y, the weight of a row with target y (1 for every row of a regression loss).
    #[inline]
    pub fn weight(self, y: f64) -> f64 {
        self.class_weights.of(y)
    }

    /// c_y·ℓ(p, y).
    #[inline]
    pub fn value(self, p: f64, y: f64) -> f64 {
        self.weight(y) * self.loss.value(p, y)
    }

    /// c_y·ℓ'(p, y), the derivative in p (the one-sided value of [`Loss::derivative`] at a
    /// kink).
    #[inline]
    pub fn derivative(self, p: f64, y: f64) -> f64 {
        self.weight(y) * self.loss.derivative(p, y)
    }

    /// out_i = c_(y_i)·ℓ(p_i, y_i) for every i: [`value`](Self::value) row by row, bit for bit
    /// ([`Loss::values`]). Panics if the lengths differ.
    pub fn values(self, p: &[f64], y: &[f64], out: &mut [f64]) {
        self.loss.values(p, y, out);
        self.weigh(y, out);
    }

    /// out_i = c_(y_i)·ℓ'(p_i, y_i) for every i: [`derivative`](Self::derivative) row by row,
    /// bit for bit ([`Loss::derivatives`]). Panics if the lengths differ.
    pub fn derivatives(self, p: &[f64], y: &[f64], out: &mut [f64]) {
        self.loss.derivatives(p, y, out);
        self.weigh(y, out);
    }

    /// [`values`](Self::values) and [`derivatives`](Self::derivatives) at once, the same bits
    /// ([`Loss::values_and_derivatives`]). Panics if the lengths differ.
    pub fn values_and_derivatives(
        self,
        p: &[f64],
        y: &[f64],
        values: &mut [f64],
        derivatives: &mut [f64],
    ) {
        self.loss.values_and_derivatives(p, y, values, derivatives);
        self.weigh(y, values);
        self.weigh(y, derivatives);
    }

    /// out_i = c_(y_i)·ℓ''(p_i, y_i) for every i, as `c_y·ℓ''(p, y)` row by row, bit for bit
    /// ([`Loss::second_derivatives`]). Panics if the lengths differ.
    pub fn second_derivatives(self, p: &[f64], y: &[f64], out: &mut [f64]) {
        self.loss.second_derivatives(p, y, out);
        self.weigh(y, out);
    }

    /// out_i ← c_(y_i)·out_i, nothing to do under unit weights (whose factor 1 changes no bit).
    fn weigh(self, y: &[f64], out: &mut [f64]) {
        if !self.class_weights.is_unit() {
            for (o, &y) in out.iter_mut().zip(y) {
                *o *= self.weight(y);
            }
        }
    }
}

impl From<Loss> for WeightedLoss {
    fn from(loss: Loss) -> Self {
        WeightedLoss {
            loss,
            class_weights: ClassWeights::UNIT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_weights_change_no_bit() {
        for loss in [Loss::Hinge, Loss::Log, Loss::Squared, Loss::Absolute] {
            let weighted = WeightedLoss::from(loss);
            for (p, y) in [(0.3, 1.0), (-2.5, -1.0), (1e-300, 1.0), (7.25, 0.4)] {
                assert_eq!(weighted.value(p, y).to_bits(), loss.value(p, y).to_bits());
                assert_eq!(
                    weighted.derivative(p, y).to_bits(),
                    loss.derivative(p, y).to_bits()
                );
            }
        }
    }

    #[test]
    fn slice_forms_are_the_row_functions_bit_for_bit() {
        let weights = ClassWeights::new(5.0, 0.3).unwrap();
        let (p, y) = ([-3.0, 0.2, 0.9, 12.0], [1.0, -1.0, 1.0, -1.0]);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut out = [0.0; 4];
        for loss in [Loss::Log, Loss::Hinge, Loss::SquaredHinge] {
            let weighted = WeightedLoss::new(loss, weights).unwrap();
            fn row(p: &[f64], y: &[f64], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
                p.iter().zip(y).map(|(&p, &y)| f(p, y)).collect()
            }
            weighted.values(&p, &y, &mut out);
            assert_eq!(bits(&out), bits(&row(&p, &y, |p, y| weighted.value(p, y))));
            weighted.derivatives(&p, &y, &mut out);
            assert_eq!(
                bits(&out),
                bits(&row(&p, &y, |p, y| weighted.derivative(p, y)))
            );
            let mut values = [0.0; 4];
            weighted.values_and_derivatives(&p, &y, &mut values, &mut out);
            assert_eq!(
                bits(&values),
                bits(&row(&p, &y, |p, y| weighted.value(p, y)))
            );
            assert_eq!(
                bits(&out),
                bits(&row(&p, &y, |p, y| weighted.derivative(p, y)))
            );
            weighted.second_derivatives(&p, &y, &mut out);
            let curvature = |p, y| weighted.weight(y) * loss.second_derivative(p, y);
            assert_eq!(bits(&out), bits(&row(&p, &y, curvature)));
        }
    }

    #[test]
    fn each_class_is_scaled_by_its_own_weight() {
        let weights = ClassWeights::new(5.0, 0.5).unwrap();
        let hinge = WeightedLoss::new(Loss::Hinge, weights).unwrap();
        assert_eq!(hinge.value(0.0, 1.0), 5.0);
        assert_eq!(hinge.value(0.0, -1.0), 0.5);
        assert_eq!(hinge.derivative(0.0, 1.0), -5.0);
        assert_eq!(hinge.derivative(0.0, -1.0), 0.5);
        assert_eq!(hinge.weight(1.0), 5.0);
        assert_eq!(hinge.weight(-1.0), 0.5);
    }

    #[test]
    fn regression_losses_refuse_weights_but_take_unit_ones() {
        let weights = ClassWeights::new(2.0, 1.0).unwrap();
        assert_eq!(
            WeightedLoss::new(Loss::Squared, weights),
            Err(ClassWeightError::Regression(Loss::Squared))
        );
        assert!(WeightedLoss::new(Loss::Squared, ClassWeights::UNIT).is_ok());
    }

    #[test]
    fn balanced_weights_give_each_class_half_the_total() {
        let w = ClassWeights::balanced(10, 90).unwrap();
        assert_eq!(w.positive, 5.0);
        assert!((w.negative - 100.0 / 180.0).abs() < 1e-15);
        assert!((10.0 * w.positive + 90.0 * w.negative - 100.0).abs() < 1e-12);
        assert!(matches!(
            ClassWeights::balanced(0, 3),
            Err(ClassWeightError::MissingClass { .. })
        ));
    }

    #[test]
    fn weights_must_be_positive_and_finite() {
        for bad in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            assert!(ClassWeights::new(bad, 1.0).is_err(), "{bad}");
            assert!(ClassWeights::new(1.0, bad).is_err(), "{bad}");
            // Built field by field, they are caught where they would be used.
            let built = ClassWeights {
                positive: bad,
                negative: 1.0,
            };
            assert!(WeightedLoss::new(Loss::Hinge, built).is_err(), "{bad}");
        }
    }

    #[test]
    fn weightings_parse_like_their_documentation() {
        let labels = |pairs: &[(f64, f64)]| Ok(ClassWeighting::ByLabel(pairs.to_vec()));
        assert_eq!("balanced".parse(), Ok(ClassWeighting::Balanced));
        assert_eq!("+1=5,-1=0.5".parse(), labels(&[(1.0, 5.0), (-1.0, 0.5)]));
        assert_eq!("1=3".parse(), labels(&[(1.0, 3.0)]));
        assert_eq!("0=2, 1=4".parse(), labels(&[(0.0, 2.0), (1.0, 4.0)]));
        assert_eq!("3=2,-0=0.25".parse(), labels(&[(3.0, 2.0), (0.0, 0.25)]));
        for bad in [
            "", "+1=x", "+1=5,1=2", "0=1,-0=2", "+1=-3", "+1=0", "1.5=2", "x=1", "weird",
        ] {
            assert!(bad.parse::<ClassWeighting>().is_err(), "{bad}");
        }
    }

    #[test]
    fn labels_name_the_binary_classes_as_the_labels_of_binary_data_do() {
        let weights = |spec: &str| spec.parse::<ClassWeighting>().unwrap().binary(1, 3);
        let fixed = |p, n| Ok(ClassWeights::new(p, n).unwrap());
        assert_eq!(weights("+1=5,-1=0.5"), fixed(5.0, 0.5));
        assert_eq!(weights("1=3"), fixed(3.0, 1.0));
        assert_eq!(weights("0=2, 1=4"), fixed(4.0, 2.0));
        assert_eq!(weights("-1=2"), fixed(1.0, 2.0));
        assert_eq!(weights("balanced"), fixed(2.0, 4.0 / 6.0));
        assert_eq!(
            weights("-1=2,0=3"),
            Err(ClassWeightError::WeightedTwice(0.0))
        );
        assert!(matches!(
            weights("2=1"),
            Err(ClassWeightError::UnknownClass { label, .. }) if label == 2.0
        ));
        let given = ClassWeights::new(7.0, 0.5).unwrap();
        assert_eq!(ClassWeighting::Fixed(given).binary(1, 3), Ok(given));
    }

    #[test]
    fn one_vs_rest_weighs_each_named_class_in_its_own_problem() {
        let (classes, rows) = ([-2.0, 0.0, 3.0, 7.0], [10, 20, 30, 40]);
        let weighting: ClassWeighting = "7=0.5,-2=4".parse().unwrap();
        let own = |c| ClassWeights::new(c, 1.0).unwrap();
        let expected = vec![own(4.0), own(1.0), own(1.0), own(0.5)];
        assert_eq!(weighting.one_vs_rest(&classes, &rows, false), Ok(expected));
        let balanced = ClassWeighting::Balanced.one_vs_rest(&classes, &rows, false);
        let expected: Vec<_> = rows
            .iter()
            .map(|&r| own(100.0 / (4.0 * r as f64)))
            .collect();
        assert_eq!(balanced, Ok(expected));
        // A label that is no class: refused, but where a fold may lack it, skipped.
        let absent: ClassWeighting = "5=2,3=3".parse().unwrap();
        let message = absent
            .one_vs_rest(&classes, &rows, false)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("label 5") && message.contains("-2, 0, 3, 7"),
            "{message}"
        );
        let skipped = absent.one_vs_rest(&classes, &rows, true).unwrap();
        assert_eq!(skipped, vec![own(1.0), own(1.0), own(3.0), own(1.0)]);
        let fixed = ClassWeighting::Fixed(ClassWeights::new(2.0, 1.0).unwrap());
        assert!(matches!(
            fixed.one_vs_rest(&classes, &rows, false),
            Err(ClassWeightError::NotPerClass(_))
        ));
        let many: Vec<f64> = (0..40).map(f64::from).collect();
        let message = absent.one_vs_rest(&many[6..], &[1; 34], false).unwrap_err();
        assert!(
            message
                .to_string()
                .contains("6, 7, 8, 9, 10, 11, …, 39 (34 classes)")
        );
    }

    #[test]
    fn display_round_trips_through_the_parser() {
        let w = ClassWeights::new(2.5, 0.125).unwrap();
        let parsed: ClassWeighting = w.to_string().parse().unwrap();
        assert_eq!(parsed.binary(1, 1), Ok(w));
        for spec in ["balanced", "1=2.5,-1=0.125", "3=2,0=0.5,-4=8"] {
            let weighting: ClassWeighting = spec.parse().unwrap();
            assert_eq!(weighting.to_string(), spec);
            assert_eq!(weighting.to_string().parse(), Ok(weighting));
        }
    }
}
