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

/// How a trainer weighs the classes: given weights, or weights balanced on the training data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClassWeighting {
    /// These weights.
    Fixed(ClassWeights),
    /// [`ClassWeights::balanced`] on the rows trained on (each fold's own in cross-validation,
    /// as scikit-learn computes them).
    Balanced,
}

impl fmt::Display for ClassWeighting {
    /// As the parser reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClassWeighting::Fixed(weights) => weights.fmt(f),
            ClassWeighting::Balanced => f.write_str("balanced"),
        }
    }
}

impl FromStr for ClassWeighting {
    type Err = String;

    /// `balanced`, or `LABEL=W` pairs separated by commas, LABEL being `+1` or `1` for the
    /// class +1 and `-1` or `0` for the class −1; a class not named keeps weight 1.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "balanced" {
            return Ok(ClassWeighting::Balanced);
        }
        let (mut positive, mut negative) = (None, None);
        for pair in s.split(',') {
            let (label, weight) = pair.split_once('=').ok_or_else(|| {
                format!("'{pair}' is not LABEL=WEIGHT (e.g. +1=5,-1=1) nor 'balanced'")
            })?;
            let slot = match label.trim() {
                "+1" | "1" => &mut positive,
                "-1" | "0" => &mut negative,
                other => {
                    return Err(format!(
                        "unknown class '{other}': the classes are +1 (or 1) and -1 (or 0)"
                    ));
                }
            };
            if slot.is_some() {
                return Err(format!("class '{}' is weighted twice", label.trim()));
            }
            let weight = weight
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("weight '{weight}' is not a number"))?;
            *slot = Some(weight);
        }
        ClassWeights::new(positive.unwrap_or(1.0), negative.unwrap_or(1.0))
            .map(ClassWeighting::Fixed)
            .map_err(|e| e.to_string())
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
        let fixed = |p, n| Ok(ClassWeighting::Fixed(ClassWeights::new(p, n).unwrap()));
        assert_eq!("balanced".parse(), Ok(ClassWeighting::Balanced));
        assert_eq!("+1=5,-1=0.5".parse(), fixed(5.0, 0.5));
        assert_eq!("1=3".parse(), fixed(3.0, 1.0));
        assert_eq!("0=2, 1=4".parse(), fixed(4.0, 2.0));
        for bad in ["", "2=1", "+1=x", "+1=5,1=2", "+1=-3", "+1=0", "weird"] {
            assert!(bad.parse::<ClassWeighting>().is_err(), "{bad}");
        }
    }

    #[test]
    fn display_round_trips_through_the_parser() {
        let w = ClassWeights::new(2.5, 0.125).unwrap();
        assert_eq!(w.to_string().parse(), Ok(ClassWeighting::Fixed(w)));
        for weighting in [ClassWeighting::Fixed(w), ClassWeighting::Balanced] {
            assert_eq!(weighting.to_string().parse(), Ok(weighting));
        }
    }
}
