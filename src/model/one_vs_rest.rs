//! A one-vs-rest classifier: one binary [`Model`] per class, and its file.
//!
//! File format (version 3, little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `SPLNMODL` |
//! | 4 | format version 3 (u32) |
//! | 4 | class count K (u32) |
//! | 8K | the class labels (f64), increasing |
//! | K × (8 + L_k) | per class, in the labels' order: L_k (u64), then the class's binary model as a model file of L_k bytes (version 1, its own checksum) |
//! | 4 | CRC-32 (crc32fast) of every byte before it |
//!
//! Builds that read versions 1 and 2 only refuse it by its version, never misread it.
//!
//! A multinomial classifier ([`crate::api::Trainer::multinomial`]) is the same container,
//! each class's model recording `"multinomial": true` in its details
//! ([`OneVsRest::is_multinomial`]): its probabilities are the softmax of the scores. So is a
//! Crammer–Singer multiclass SVM ([`crate::api::Trainer::crammer_singer`], `"crammer_singer":
//! true`), which predicts the class of highest score as the others do.

use std::path::Path;

use sparselin_kernels::math;

use super::{MAGIC, Model, ModelError, Precision, SCALED_VERSION, read, write_atomically};
use crate::data::column_scales::ColumnScales;

/// The file format version of a one-vs-rest classifier.
pub const ONE_VS_REST_VERSION: u32 = 3;

/// K binary models, one per class: model k scores class k against the rest, and a row is
/// predicted to be the class of highest score (liblinear's and scikit-learn's one-vs-rest).
#[derive(Clone, Debug, PartialEq)]
pub struct OneVsRest {
    classes: Vec<f64>,
    models: Vec<Model>,
}

impl OneVsRest {
    /// The classifier of `models[k]`, trained to score `classes[k]` (as +1) against the rest.
    /// An error unless there are at least two classes, as many models, the labels finite and
    /// increasing, and the models of one classification loss over one feature count.
    pub fn new(classes: Vec<f64>, models: Vec<Model>) -> Result<Self, String> {
        if classes.len() < 2 {
            return Err(format!(
                "a one-vs-rest classifier needs at least two classes, got {}",
                classes.len()
            ));
        }
        if models.len() != classes.len() {
            return Err(format!(
                "{} models for {} classes",
                models.len(),
                classes.len()
            ));
        }
        if let Some(c) = classes.iter().find(|c| !c.is_finite()) {
            return Err(format!("the class label {c} is not a finite number"));
        }
        if let Some(pair) = classes.windows(2).find(|pair| pair[0] >= pair[1]) {
            return Err(format!(
                "the class labels are not increasing ({} then {})",
                pair[0], pair[1]
            ));
        }
        let first = &models[0];
        if !first.loss.is_classification() {
            return Err(format!("{} loss is not a classification loss", first.loss));
        }
        for (class, model) in classes.iter().zip(&models) {
            if model.loss != first.loss {
                return Err(format!(
                    "class {class}'s model has {} loss, class {}'s {}",
                    model.loss, classes[0], first.loss
                ));
            }
            if model.n_features() != first.n_features() {
                return Err(format!(
                    "class {class}'s model has {} features, class {}'s {}",
                    model.n_features(),
                    classes[0],
                    first.n_features()
                ));
            }
            if model.resume.is_some() {
                return Err(format!(
                    "class {class}'s model holds a resume state, which a one-vs-rest \
                     classifier does not keep"
                ));
            }
        }
        Ok(OneVsRest { classes, models })
    }

    /// The class labels, increasing.
    pub fn classes(&self) -> &[f64] {
        &self.classes
    }

    /// The binary models, one per class in the order of [`OneVsRest::classes`].
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// Number of features n (every class's model has as many).
    pub fn n_features(&self) -> usize {
        self.models[0].n_features()
    }

    /// Every class's model as the model of the original columns
    /// ([`Model::of_original_columns`]), for a classifier trained on columns divided by
    /// `scales` (in original feature ids).
    pub fn of_original_columns(mut self, scales: &ColumnScales) -> OneVsRest {
        self.models = (self.models.into_iter())
            .map(|model| model.of_original_columns(scales.clone()))
            .collect();
        self
    }

    /// Every class's model's weights as weights of the columns divided by `scales`
    /// ([`Model::in_scaled_columns`]).
    pub fn in_scaled_columns(mut self, scales: &ColumnScales) -> OneVsRest {
        self.models = (self.models.into_iter())
            .map(|model| model.in_scaled_columns(scales))
            .collect();
        self
    }

    /// Record `key: value` in every class's model's training details
    /// ([`crate::model::TrainingInfo::details`]).
    pub fn insert_detail(&mut self, key: &str, value: serde_json::Value) {
        for model in &mut self.models {
            model.info.details.insert(key.to_string(), value.clone());
        }
    }

    /// The class of a row whose per-class scores are `scores` (in class order): the one of
    /// highest score, the lowest label of a tie; NaN when a score is NaN.
    ///
    /// # Panics
    /// If `scores` has not one score per class.
    pub fn prediction(&self, scores: &[f64]) -> f64 {
        assert_eq!(scores.len(), self.classes.len(), "one score per class");
        if scores.iter().any(|s| s.is_nan()) {
            return f64::NAN;
        }
        let mut best = 0;
        for (k, &score) in scores.iter().enumerate().skip(1) {
            if score > scores[best] {
                best = k;
            }
        }
        self.classes[best]
    }

    /// Whether the models were fitted together by multinomial logistic regression
    /// ([`crate::api::Trainer::multinomial`]; their details say so), not each against the
    /// rest.
    pub fn is_multinomial(&self) -> bool {
        self.models[0].info.details.get("multinomial") == Some(&serde_json::Value::Bool(true))
    }

    /// Whether the models were fitted together by Crammer and Singer's multiclass SVM
    /// ([`crate::api::Trainer::crammer_singer`]; their details say so).
    pub fn is_crammer_singer(&self) -> bool {
        self.models[0].info.details.get("crammer_singer") == Some(&serde_json::Value::Bool(true))
    }

    /// Whether the models were fitted together, minimizing one objective, multinomial or
    /// Crammer–Singer, rather than one objective each against the rest.
    pub fn is_joint(&self) -> bool {
        self.is_multinomial() || self.is_crammer_singer()
    }

    /// "multinomial", "crammer-singer" or "one-vs-rest": how the models were fitted, as
    /// summaries name it.
    pub fn kind(&self) -> &'static str {
        match (self.is_multinomial(), self.is_crammer_singer()) {
            (true, _) => "multinomial",
            (_, true) => "crammer-singer",
            _ => "one-vs-rest",
        }
    }

    /// P(class k | row) for a log-loss classifier: for a multinomial one the softmax of the
    /// scores, e^(s_k) / Σ_j e^(s_j) (scikit-learn's `predict_proba`), for a one-vs-rest one
    /// each class's logistic probability against the rest, normalized to sum to 1
    /// (liblinear's `-b 1` and scikit-learn's one-vs-rest `predict_proba`); `None` for every
    /// other loss.
    pub fn probabilities(&self, scores: &[f64]) -> Option<Vec<f64>> {
        if self.is_multinomial() {
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut p: Vec<f64> = scores.iter().map(|&s| math::exp(s - max)).collect();
            let total: f64 = p.iter().sum();
            p.iter_mut().for_each(|x| *x /= total);
            return Some(p);
        }
        let mut p: Vec<f64> = scores
            .iter()
            .map(|&s| self.models[0].probability(s))
            .collect::<Option<_>>()?;
        let mut total: f64 = p.iter().sum();
        if total == 0.0 {
            // Every σ(s) underflowed (all scores below about −745), where σ(s) = e^s to
            // within rounding: their ratios are e^(s_k − max s).
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            p.iter_mut()
                .zip(scores)
                .for_each(|(x, &s)| *x = math::exp(s - max));
            total = p.iter().sum();
        }
        p.iter_mut().for_each(|x| *x /= total);
        Some(p)
    }

    /// The file's bytes (see the module documentation), each class's model at `precision`;
    /// an error when a weight is beyond what `precision` holds ([`Model::encode`]).
    pub fn encode(&self, precision: Precision, path: &Path) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&ONE_VS_REST_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.classes.len() as u32).to_le_bytes());
        for class in &self.classes {
            out.extend_from_slice(&class.to_le_bytes());
        }
        for (class, model) in self.classes.iter().zip(&self.models) {
            let bytes = model
                .encode(precision, path)
                .map_err(|e| in_class(e, *class))?;
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        Ok(out)
    }

    /// Parse a one-vs-rest file's bytes; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<OneVsRest, ModelError> {
        let bad = |message: String| ModelError::Format {
            path: path.to_path_buf(),
            message,
        };
        const FIXED: usize = 8 + 4 + 4;
        if bytes.len() < FIXED + 4 || &bytes[..8] != MAGIC {
            return Err(bad("not a sparselin model file".into()));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if version != ONE_VS_REST_VERSION {
            return Err(bad(if (1..=SCALED_VERSION).contains(&version) {
                format!(
                    "model format version {version} holds one model, not a one-vs-rest classifier"
                )
            } else {
                format!(
                    "model format version {version}, this build reads versions 1 to {SCALED_VERSION}"
                )
            }));
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().unwrap()) {
            return Err(bad(
                "checksum mismatch: the file is damaged or truncated".into()
            ));
        }
        let k = u32::from_le_bytes(body[12..16].try_into().unwrap()) as usize;
        let mut rest = &body[FIXED..];
        let mut take = |len: u64, what: &str| -> Result<&[u8], ModelError> {
            match usize::try_from(len).ok().filter(|&len| len <= rest.len()) {
                Some(len) => {
                    let (taken, after) = rest.split_at(len);
                    rest = after;
                    Ok(taken)
                }
                None => Err(bad(format!("{what} of {len} bytes past the end"))),
            }
        };
        let labels = take(8 * k as u64, &format!("{k} class labels"))?;
        let classes: Vec<f64> = labels
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // Not sized by the count read: a count no file holds must not allocate.
        let mut models = Vec::new();
        for &class in &classes {
            let what = format!("class {class}'s model");
            let len = u64::from_le_bytes(take(8, &what)?.try_into().unwrap());
            let model =
                Model::from_bytes(take(len, &what)?, path).map_err(|e| in_class(e, class))?;
            models.push(model);
        }
        if !rest.is_empty() {
            return Err(bad(format!(
                "{} bytes after the last class's model",
                rest.len()
            )));
        }
        OneVsRest::new(classes, models).map_err(|e| bad(format!("bad classifier: {e}")))
    }

    /// Write the classifier's file atomically.
    pub fn save(&self, path: &Path, precision: Precision) -> Result<(), ModelError> {
        write_atomically(path, &self.encode(precision, path)?)
    }

    /// Read a one-vs-rest file, checking magic, version, sizes and every checksum.
    pub fn load(path: &Path) -> Result<OneVsRest, ModelError> {
        OneVsRest::from_bytes(&read(path)?, path)
    }
}

/// What a model file holds: one model, or a one-vs-rest classifier.
#[derive(Clone, Debug, PartialEq)]
pub enum SavedModel {
    /// A binary classifier or a regression (format versions 1 and 2).
    Single(Model),
    /// One binary model per class (format version 3).
    OneVsRest(OneVsRest),
}

impl SavedModel {
    /// Read a model file of any version, checking it as [`Model::load`] and
    /// [`OneVsRest::load`] do.
    pub fn load(path: &Path) -> Result<SavedModel, ModelError> {
        let bytes = read(path)?;
        if bytes.get(8..12) == Some(&ONE_VS_REST_VERSION.to_le_bytes()[..]) {
            OneVsRest::from_bytes(&bytes, path).map(SavedModel::OneVsRest)
        } else {
            Model::from_bytes(&bytes, path).map(SavedModel::Single)
        }
    }

    /// The feature count the model (each class's, for one-vs-rest) has weights for.
    pub fn n_features(&self) -> usize {
        match self {
            SavedModel::Single(model) => model.n_features(),
            SavedModel::OneVsRest(classifier) => classifier.n_features(),
        }
    }
}

/// A class's model's error, saying which class it is.
fn in_class(error: ModelError, class: f64) -> ModelError {
    match error {
        ModelError::Format { path, message } => ModelError::Format {
            path,
            message: format!("class {class}'s model: {message}"),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::{ClassWeights, Loss};
    use crate::model::TrainingInfo;

    fn binary(weights: Vec<f64>, bias: f64) -> Model {
        Model {
            weights,
            bias,
            loss: Loss::Log,
            info: TrainingInfo {
                algorithm: "lbfgs".into(),
                lambda: 1e-3,
                l1: 0.0,
                regularize_bias: true,
                class_weights: ClassWeights::UNIT,
                details: serde_json::Map::new(),
            },
            resume: None,
            column_scales: None,
        }
    }

    fn three() -> OneVsRest {
        let models = vec![
            binary(vec![1.0, -0.5, 0.0], 0.1),
            binary(vec![-1.0 / 3.0, 2.0, 0.25], -0.2),
            binary(vec![0.0, 0.0, 1e-300], 0.0),
        ];
        OneVsRest::new(vec![-1.0, 2.0, 7.0], models).unwrap()
    }

    /// `bytes` with the outer checksum made right again.
    fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
        let end = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..end]);
        bytes[end..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn round_trips_and_is_told_apart_from_one_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.model");
        let classifier = three();
        classifier.save(&path, Precision::F64).unwrap();
        assert_eq!(OneVsRest::load(&path).unwrap(), classifier);
        assert_eq!(
            SavedModel::load(&path).unwrap(),
            SavedModel::OneVsRest(classifier.clone())
        );
        let error = Model::load(&path).unwrap_err().to_string();
        assert!(
            error.contains("holds a one-vs-rest classifier of 3 classes"),
            "{error}"
        );
        // In f32 every weight is rounded, and the file says so to whoever reads it.
        classifier.save(&path, Precision::F32).unwrap();
        let rounded = OneVsRest::load(&path).unwrap();
        assert_eq!(rounded.models()[1].weights[0], f64::from(-1.0f32 / 3.0));
        let single = dir.path().join("one.model");
        let model = binary(vec![1.0], 0.0);
        model.save(&single, Precision::F64).unwrap();
        assert_eq!(
            SavedModel::load(&single).unwrap(),
            SavedModel::Single(model)
        );
        let error = OneVsRest::load(&single).unwrap_err().to_string();
        assert!(error.contains("version 1 holds one model"), "{error}");
    }

    #[test]
    fn predicts_the_class_of_highest_score_the_lowest_label_of_a_tie() {
        let classifier = three();
        assert_eq!(classifier.prediction(&[0.5, 1.5, -3.0]), 2.0);
        assert_eq!(classifier.prediction(&[-2.0, -1.0, -0.5]), 7.0);
        assert_eq!(classifier.prediction(&[1.0, 1.0, 0.0]), -1.0);
        assert!(classifier.prediction(&[1.0, f64::NAN, 0.0]).is_nan());
        let p = classifier.probabilities(&[0.0, 0.0, 0.0]).unwrap();
        assert_eq!(p, [1.0 / 3.0; 3]);
        let p = classifier.probabilities(&[2.0, -1.0, 0.0]).unwrap();
        let sigma = |s: f64| 1.0 / (1.0 + (-s).exp());
        let total = sigma(2.0) + sigma(-1.0) + sigma(0.0);
        assert!((p[0] - sigma(2.0) / total).abs() < 1e-15);
        // Where every σ underflows, their ratios e^(s_k − s_j) still hold.
        let p = classifier.probabilities(&[-800.0, -801.0, -900.0]).unwrap();
        let e = (-1.0f64).exp();
        assert!((p[0] - 1.0 / (1.0 + e)).abs() < 1e-15, "{p:?}");
        assert!((p[1] - e / (1.0 + e)).abs() < 1e-15, "{p:?}");
        assert!(p[2] > 0.0 && p[2] < 1e-40, "{p:?}");
    }

    #[test]
    fn damaged_files_and_inconsistent_classifiers_are_refused() {
        let path = Path::new("c.model");
        let bytes = three().encode(Precision::F64, path).unwrap();
        let err = |b: &[u8]| OneVsRest::from_bytes(b, path).unwrap_err().to_string();
        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert!(err(&flipped).contains("checksum"), "{}", err(&flipped));
        assert!(err(&bytes[..bytes.len() - 7]).contains("checksum"));
        // A damaged class model inside an intact container: named by its class.
        let first_model = 16 + 3 * 8 + 8;
        let mut inner = bytes.clone();
        inner[first_model + 40] ^= 1;
        let inner = resealed(inner);
        assert!(
            err(&inner).contains("class -1's model: checksum mismatch"),
            "{}",
            err(&inner)
        );
        // A class count or length past the end, and bytes after the last model.
        let mut many = bytes.clone();
        many[12..16].copy_from_slice(&1000u32.to_le_bytes());
        assert!(err(&resealed(many)).contains("past the end"));
        let mut long = bytes.clone();
        long[16 + 24..16 + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(err(&resealed(long)).contains("class -1's model of"));
        let mut trailing = bytes[..bytes.len() - 4].to_vec();
        trailing.extend_from_slice(&[0; 5 + 4]);
        assert!(err(&resealed(trailing)).contains("5 bytes after the last class's model"));
        let mut future = bytes.clone();
        future[8] = 9;
        assert!(err(&future).contains("version 9, this build reads versions 1 to 4"));
        // Labels out of order, too few classes, models that do not agree.
        let mut swapped = bytes.clone();
        swapped[16..24].copy_from_slice(&9.0f64.to_le_bytes());
        assert!(err(&resealed(swapped)).contains("not increasing (9 then 2)"));
        let models = three().models().to_vec();
        let one = OneVsRest::new(vec![1.0], models[..1].to_vec()).unwrap_err();
        assert!(one.contains("at least two classes, got 1"));
        let mut wide = models.clone();
        wide[2].weights.push(1.0);
        let error = OneVsRest::new(vec![1.0, 2.0, 3.0], wide).unwrap_err();
        assert!(
            error.contains("class 3's model has 4 features, class 1's 3"),
            "{error}"
        );
        let mut squared = models.clone();
        squared[0].loss = Loss::Squared;
        let error = OneVsRest::new(vec![1.0, 2.0, 3.0], squared).unwrap_err();
        assert!(error.contains("not a classification loss"), "{error}");
        let mut mixed = models;
        mixed[1].loss = Loss::Hinge;
        let error = OneVsRest::new(vec![1.0, 2.0, 3.0], mixed).unwrap_err();
        assert!(
            error.contains("class 2's model has hinge loss, class 1's log"),
            "{error}"
        );
    }
}
