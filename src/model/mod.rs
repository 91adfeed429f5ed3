//! A trained linear model w·x + b: prediction, and the model file.
//!
//! File format (version 2, little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `SPLNMODL` |
//! | 4 | format version (u32) |
//! | 4 | weight precision: 0 = f64, 1 = f32 |
//! | 8 | feature count n (u64) |
//! | 8 | bias b (f64) |
//! | 4 | header length L (u32) |
//! | L | header: JSON with the loss, the [`TrainingInfo`] and, in a resumable model, the [`ResumeState`]'s numbers |
//! | 8n or 4n | the weights w_0 … w_{n−1} |
//! | 0 or 8n | a resumable model's last iterate w_t (f64), when its weights are an average |
//! | 0 or 2n | a model of scaled columns: the exponents k_j of its columns' scales 2^k_j (i16) |
//! | 4 | CRC-32 (crc32fast) of every byte before it |
//!
//! Version 2 added the resume state; a model without one is written as version 1 (the same
//! bytes), so that earlier builds still read it. Version 3 is a one-vs-rest classifier, a file
//! of such files ([`one_vs_rest`]); version 4 added the column scales, and is written only
//! for a model trained with them. [`SavedModel::load`] reads any version.
//!
//! Files are written to a temporary name in the target directory and renamed into place, so a
//! reader never sees a half-written model. Weights are indexed by the feature ids of the data
//! they were trained on (0-based; the LIBSVM text's ids minus one).

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sparselin_kernels::sparse;

use crate::data::Row;
use crate::data::column_scales::{ColumnScales, MAX_ABS};
use crate::loss::{ClassWeightError, ClassWeights, Loss, WeightedLoss};
use crate::memory::{self, AllocError};
use crate::online::Iterate;

pub mod one_vs_rest;

pub use one_vs_rest::{ONE_VS_REST_VERSION, OneVsRest, SavedModel};

/// The first bytes of every model file.
pub const MAGIC: &[u8; 8] = b"SPLNMODL";
/// The model file format version this build writes for a resumable model without column
/// scales.
pub const FORMAT_VERSION: u32 = 2;
/// The version of a model without a resume state or column scales: version 2's bytes without
/// it.
const PLAIN_VERSION: u32 = 1;
/// The version of a model trained on scaled columns (with or without a resume state), and
/// the newest this build reads.
pub const SCALED_VERSION: u32 = 4;
const FIXED_HEADER: usize = 8 + 4 + 4 + 8 + 8 + 4;

/// How the weights are stored on disk (in memory they are always f64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// Exact.
    #[default]
    F64,
    /// Half the size; weights rounded to the nearest f32.
    F32,
}

/// How a model was trained: enough to reproduce it and to compute its objective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// The algorithm's name (`asgd`, `sublbfgs`, …).
    pub algorithm: String,
    /// λ of the objective.
    pub lambda: f64,
    /// λ₁ of the objective's L1 term λ₁(‖w‖₁ + |b|) (0, absent from the file: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub l1: f64,
    /// Whether (λ/2)b² (and λ₁|b|) is in the objective.
    pub regularize_bias: bool,
    /// The weights of the classes' losses in the objective (absent from the file when unit).
    #[serde(default, skip_serializing_if = "ClassWeights::is_unit")]
    pub class_weights: ClassWeights,
    /// Algorithm-specific settings and results (steps, t₀, seed, iterations, …).
    #[serde(default)]
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl TrainingInfo {
    /// The objective's regularization term.
    pub fn penalty(&self) -> crate::metrics::Penalty {
        crate::metrics::Penalty {
            lambda: self.lambda,
            l1: self.l1,
            regularize_bias: self.regularize_bias,
        }
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Where an online run stopped (`train --save-resume`), so that a later run can go on as
/// this one would have: step t + 1 with η_{t+1}, the average of the steps so far kept
/// ([`crate::online::Start`]; Vowpal Wabbit's `--save_resume`, scikit-learn's `partial_fit`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResumeState {
    /// Steps taken, t ≥ 1.
    pub steps: u64,
    /// Rows of the data the last of those steps were drawn from: a resumed run on as many
    /// rows draws on in the order the run drew them in (its own rows again), one on other
    /// data begins the order anew ([`crate::online::Start::drawn`]).
    pub rows: u64,
    /// The schedule's t₀.
    pub t0: f64,
    /// The first averaged step t_a.
    pub average_start: u64,
    /// The free bias's step multiplier (1 for a regularized bias).
    pub bias_rate: f64,
    /// The last iterate (w_t, b_t) in original feature ids, where the model's weights and
    /// bias are the averaged iterate; `None` where they are the last iterate itself (SGD, or
    /// t < t_a).
    pub last: Option<Iterate>,
}

impl ResumeState {
    /// Why these numbers cannot be a stopped run's, if they cannot: a run stops after at
    /// least one step, with t₀ ≥ 0, t_a ≥ 1, a positive bias rate and finite iterates.
    pub fn check(&self) -> Result<(), String> {
        if self.steps == 0 {
            return Err("0 steps".into());
        }
        if self.rows == 0 {
            return Err("0 rows".into());
        }
        if !(self.t0 >= 0.0 && self.t0.is_finite()) {
            return Err(format!("t0 = {}", self.t0));
        }
        if self.average_start == 0 {
            return Err("average start 0".into());
        }
        if !(self.bias_rate > 0.0 && self.bias_rate.is_finite()) {
            return Err(format!("bias rate {}", self.bias_rate));
        }
        if let Some(last) = &self.last {
            if let Some(j) = last.weights.iter().position(|w| !w.is_finite()) {
                return Err(format!("last weight {} is {}", j + 1, last.weights[j]));
            }
            if !last.bias.is_finite() {
                return Err(format!("the last bias is {}", last.bias));
            }
        }
        Ok(())
    }
}

/// The JSON header of a model file.
#[derive(Serialize, Deserialize)]
struct Header {
    loss: String,
    info: TrainingInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resume: Option<ResumeHeader>,
    /// How the column scales that follow were chosen (`max-abs`), present exactly when they
    /// do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    column_scales: Option<String>,
}

/// A [`ResumeState`]'s numbers in the header; the last iterate's weights follow the model's.
#[derive(Serialize, Deserialize)]
struct ResumeHeader {
    steps: u64,
    rows: u64,
    t0: f64,
    average_start: u64,
    bias_rate: f64,
    /// b_t, present exactly when w_t follows the weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_bias: Option<f64>,
}

/// A linear model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// w, one weight per feature.
    pub weights: Vec<f64>,
    /// b.
    pub bias: f64,
    /// The loss it was trained with (decides whether predictions are labels or values).
    pub loss: Loss,
    /// How it was trained.
    pub info: TrainingInfo,
    /// Where its online run stopped, if it was saved to be resumed.
    pub resume: Option<ResumeState>,
    /// The scales 2^k_j its columns were divided by in training, in original feature ids
    /// ([`crate::data::column_scales`]), if they were: the weights are those of the
    /// original columns all the same (w_j = v_j / 2^k_j of the scaled problem's v), and
    /// the scales serve its objective, whose regularization is of v.
    pub column_scales: Option<ColumnScales>,
}

/// Why a model could not be used, read or written.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Reading or writing failed.
    #[error("{path}: {reason}")]
    Io {
        /// The model file.
        path: PathBuf,
        /// What the system said (part of the message, so not also a `source()`).
        reason: std::io::Error,
    },
    /// The file is not a model, is damaged, or is from an incompatible version.
    #[error("{path}: {message}")]
    Format {
        /// The model file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The model's weights do not fit in this machine's memory.
    #[error("{path}: {reason}")]
    Memory {
        /// The model file.
        path: PathBuf,
        /// What could not be allocated (part of the message, so not also a `source()`).
        reason: AllocError,
    },
}

impl Model {
    /// Number of features n.
    pub fn n_features(&self) -> usize {
        self.weights.len()
    }

    /// The weights in the column numbering of data with `n_features` columns and the given
    /// feature permutation (internal column → original id; `None` = identity). Models are
    /// stored in original feature ids. A column the model has no weight for (a feature never
    /// seen in training, e.g. one that appears only in a test file) weighs 0, as liblinear's
    /// `predict` treats it: training would have left it at 0. In the identity numbering those
    /// columns are past the end of the weights, which are lent as they are (the scorer,
    /// [`crate::metrics::scores`], reads no weight past the end); a permutation gets a weight
    /// for each of its columns.
    pub fn weights_for(&self, n_features: usize, permutation: Option<&[u32]>) -> Cow<'_, [f64]> {
        weights_in_columns(&self.weights, n_features, permutation)
    }

    /// The `k` weights of largest magnitude, as (0-based feature id, weight), largest first
    /// (ties by id); zero weights are never among them. O(n + k log k).
    pub fn largest_weights(&self, k: usize) -> Vec<(usize, f64)> {
        let mut nonzero: Vec<(usize, f64)> = (self.weights.iter().copied().enumerate())
            .filter(|&(_, w)| w != 0.0)
            .collect();
        let order = |a: &(usize, f64), b: &(usize, f64)| {
            b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0))
        };
        if k < nonzero.len() {
            nonzero.select_nth_unstable_by(k, order);
            nonzero.truncate(k);
        }
        nonzero.sort_unstable_by(order);
        nonzero
    }

    /// The score w·x + b (panics on an index ≥ n: see [`Model::weights_for`] for wider data).
    #[inline]
    pub fn score(&self, x: Row<'_>) -> f64 {
        sparse::dot(&self.weights, x.indices, x.values) + self.bias
    }

    /// The score w·x + b of one row given as parallel `indices` and `values` (`None`: every
    /// value 1), in any order: an index the model has no weight for weighs 0, as in
    /// [`Model::weights_for`]. For scoring single rows from a host program; whole datasets go
    /// through [`crate::api::scores`]. Indices in increasing order (a dataset row's order) are
    /// summed by the same kernel, so the score is that of the row in a dataset of the same
    /// `f64` values, bit for bit; in any other order they are summed as given, which can
    /// differ from it by rounding.
    ///
    /// # Panics
    /// If `values` and `indices` differ in length.
    pub fn score_entries(&self, indices: &[u32], values: Option<&[f64]>) -> f64 {
        if let Some(values) = values {
            assert_eq!(
                values.len(),
                indices.len(),
                "index and value slices differ in length"
            );
        }
        if indices.windows(2).all(|pair| pair[0] < pair[1]) {
            let values = values.map_or(crate::data::Values::Ones, crate::data::Values::F64);
            return crate::metrics::known_prefix_dot(&self.weights, indices, values) + self.bias;
        }
        let weight = |i: u32| self.weights.get(i as usize).copied().unwrap_or(0.0);
        let dot: f64 = match values {
            Some(values) => indices
                .iter()
                .zip(values)
                .map(|(&i, &x)| weight(i) * x)
                .sum(),
            None => indices.iter().map(|&i| weight(i)).sum(),
        };
        dot + self.bias
    }

    /// What the model predicts for a score: the class ±1 for classification losses
    /// ([`metrics::predicts_plus_one`](crate::metrics::predicts_plus_one): +1 for a score > 0),
    /// the value the loss predicts from it for regression ([`Loss::predicted_value`]: the
    /// score itself, or the mean e^score of a Poisson model). A NaN score (weights a program
    /// built by hand; saved models cannot hold NaN) predicts NaN, not a class.
    pub fn prediction(&self, score: f64) -> f64 {
        if self.loss.is_classification() && !score.is_nan() {
            if crate::metrics::predicts_plus_one(score) {
                1.0
            } else {
                -1.0
            }
        } else {
            self.loss.predicted_value(score)
        }
    }

    /// The loss with the class weights it was trained with: the terms of its objective.
    /// An error only for weights a file cannot hold ([`Model::load`] refuses them), put in
    /// [`TrainingInfo::class_weights`] by hand.
    pub fn weighted_loss(&self) -> Result<WeightedLoss, ClassWeightError> {
        WeightedLoss::new(self.loss, self.info.class_weights)
    }

    /// P(label = +1 | score) = 1/(1 + e^(−score)) for a model trained with log loss, whose
    /// scores are log-odds; `None` for every other loss, whose scores are margins or values
    /// and carry no calibrated probability (liblinear's `-b 1` and scikit-learn's
    /// `predict_proba` likewise serve logistic regression only).
    pub fn probability(&self, score: f64) -> Option<f64> {
        self.loss
            .gives_probabilities()
            .then(|| crate::loss::logistic(score))
    }

    /// The version its file has: [`SCALED_VERSION`] with column scales, else
    /// [`FORMAT_VERSION`] with a resume state, the version before it without one (whose
    /// readers then read it too).
    fn format_version(&self) -> u32 {
        if self.column_scales.is_some() {
            SCALED_VERSION
        } else if self.resume.is_some() {
            FORMAT_VERSION
        } else {
            PLAIN_VERSION
        }
    }

    /// This model, trained on columns divided by `scales` (in original feature ids; see
    /// [`ColumnScales`]), as the model of the original columns: w_j = v_j / 2^k_j, and the
    /// last iterate of a resume state likewise, exactly; the scales are kept for its
    /// objective. For a model whose weights are of the scaled columns (one just trained on
    /// them, without scales of its own).
    pub fn of_original_columns(mut self, scales: ColumnScales) -> Model {
        debug_assert!(
            self.column_scales.is_none(),
            "already of the original columns"
        );
        scales.to_original_units(&mut self.weights);
        if let Some(last) = self.resume.as_mut().and_then(|r| r.last.as_mut()) {
            scales.to_original_units(&mut last.weights);
        }
        self.column_scales = Some(scales);
        self
    }

    /// This model's weights as weights of the columns divided by `scales` (in original
    /// feature ids): v_j = w_j·2^k_j, and the last iterate of a resume state likewise; the
    /// start of a run on those columns (the inverse of [`Model::of_original_columns`]).
    pub fn in_scaled_columns(mut self, scales: &ColumnScales) -> Model {
        scales.to_scaled_units(&mut self.weights);
        if let Some(last) = self.resume.as_mut().and_then(|r| r.last.as_mut()) {
            scales.to_scaled_units(&mut last.weights);
        }
        self.column_scales = None;
        self
    }

    /// The weights of the problem it was trained on: v_j = w_j·2^k_j for a model of scaled
    /// columns, w itself otherwise.
    pub fn trained_weights(&self) -> Cow<'_, [f64]> {
        match &self.column_scales {
            Some(scales) => {
                let mut v = self.weights.clone();
                scales.to_scaled_units(&mut v);
                Cow::Owned(v)
            }
            None => Cow::Borrowed(&self.weights),
        }
    }

    /// The value of its objective's regularization term (λ/2)(‖v‖² + b²) + λ₁(‖v‖₁ + |b|),
    /// for v its [`Model::trained_weights`]: the term of the objective it minimized.
    pub fn penalty_value(&self) -> f64 {
        self.info
            .penalty()
            .value(&self.trained_weights(), self.bias)
    }

    /// The file's bytes (see the module documentation).
    pub fn to_bytes(&self, precision: Precision) -> Vec<u8> {
        let resume = self.resume.as_ref().map(|r| ResumeHeader {
            steps: r.steps,
            rows: r.rows,
            t0: r.t0,
            average_start: r.average_start,
            bias_rate: r.bias_rate,
            last_bias: r.last.as_ref().map(|last| last.bias),
        });
        let header = serde_json::to_vec(&Header {
            loss: self.loss.to_string(),
            info: self.info.clone(),
            resume,
            column_scales: self.column_scales.as_ref().map(|_| MAX_ABS.to_string()),
        })
        .expect("the header is plain data");
        let width = match precision {
            Precision::F64 => 8,
            Precision::F32 => 4,
        };
        let last = self.resume.as_ref().and_then(|r| r.last.as_ref());
        let last_len = last.map_or(0, |last| 8 * last.weights.len());
        let scales_len = self
            .column_scales
            .as_ref()
            .map_or(0, |_| 2 * self.weights.len());
        let mut out = Vec::with_capacity(
            FIXED_HEADER + header.len() + width * self.weights.len() + last_len + scales_len + 4,
        );
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.format_version().to_le_bytes());
        out.extend_from_slice(&u32::from(precision == Precision::F32).to_le_bytes());
        out.extend_from_slice(&(self.weights.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.bias.to_le_bytes());
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        for &w in &self.weights {
            match precision {
                Precision::F64 => out.extend_from_slice(&w.to_le_bytes()),
                Precision::F32 => out.extend_from_slice(&(w as f32).to_le_bytes()),
            }
        }
        for &w in last.map_or(&[][..], |last| &last.weights[..]) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        if let Some(scales) = &self.column_scales {
            let k = scales.exponents();
            for j in 0..self.weights.len() {
                out.extend_from_slice(&k.get(j).copied().unwrap_or(0).to_le_bytes());
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parse a model file's bytes; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Model, ModelError> {
        let bad = |message: String| ModelError::Format {
            path: path.to_path_buf(),
            message,
        };
        if bytes.len() < FIXED_HEADER + 4 || &bytes[..8] != MAGIC {
            return Err(bad("not a sparselin model file".into()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let version = u32_at(8);
        if version == ONE_VS_REST_VERSION {
            return Err(bad(format!(
                "holds a one-vs-rest classifier of {} classes, not one model (sparselin \
                 predict, eval and show read it; from Rust, SavedModel::load)",
                u32_at(12)
            )));
        }
        if !(PLAIN_VERSION..=SCALED_VERSION).contains(&version) {
            return Err(bad(format!(
                "model format version {version}, this build reads versions \
                 {PLAIN_VERSION} to {SCALED_VERSION}"
            )));
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().unwrap()) {
            return Err(bad(
                "checksum mismatch: the file is damaged or truncated".into()
            ));
        }
        let width = match u32_at(12) {
            0 => 8,
            1 => 4,
            p => return Err(bad(format!("unknown weight precision code {p}"))),
        };
        let n = u64_at(16);
        let bias = f64::from_bits(u64_at(24));
        let header_len = u32_at(32) as usize;
        let weights_at = FIXED_HEADER + header_len;
        let header: Header = match body.get(FIXED_HEADER..weights_at) {
            Some(header) => {
                serde_json::from_slice(header).map_err(|e| bad(format!("bad header: {e}")))?
            }
            None => return Err(bad(format!("a header of {header_len} bytes past the end"))),
        };
        if header.resume.is_some() && version == PLAIN_VERSION {
            return Err(bad(format!(
                "bad header: a resume state in a version {PLAIN_VERSION} file"
            )));
        }
        if header.column_scales.is_some() && version != SCALED_VERSION {
            return Err(bad(format!(
                "bad header: column scales in a version {version} file"
            )));
        }
        if let Some(how) = header
            .column_scales
            .as_deref()
            .filter(|&how| how != MAX_ABS)
        {
            return Err(bad(format!("bad header: unknown column scaling {how:?}")));
        }
        if header.resume.is_some() && width != 8 {
            return Err(bad("a resume state with f32 weights".into()));
        }
        let has_last = header
            .resume
            .as_ref()
            .is_some_and(|r| r.last_bias.is_some());
        let last_width = if has_last { 8 } else { 0 };
        let scales_width = if header.column_scales.is_some() { 2 } else { 0 };
        let expected =
            (n as u128) * (width + last_width + scales_width) as u128 + weights_at as u128;
        if expected != body.len() as u128 {
            return Err(bad(format!(
                "{} bytes of header and weights, expected {expected} for {n} features",
                body.len()
            )));
        }
        let loss = header
            .loss
            .parse::<Loss>()
            .map_err(|e| bad(format!("bad header: {e}")))?;
        WeightedLoss::new(loss, header.info.class_weights)
            .map_err(|e| bad(format!("bad header: {e}")))?;
        let weights_end = weights_at + width * n as usize;
        let stored = body[weights_at..weights_end].chunks_exact(width);
        let memory_error = |reason| ModelError::Memory {
            path: path.to_path_buf(),
            reason,
        };
        let weights = memory::collected(
            "weights",
            stored.len(),
            stored.map(|c| match width {
                8 => f64::from_le_bytes(c.try_into().unwrap()),
                _ => f64::from(f32::from_le_bytes(c.try_into().unwrap())),
            }),
        )
        .map_err(memory_error)?;
        // Training never writes a NaN or infinite weight (it is an error: `Error::Diverged`),
        // so one here was put there by something else, and every score would be NaN.
        if let Some(j) = weights.iter().position(|w| !w.is_finite()) {
            return Err(bad(format!("weight {} is {}", j + 1, weights[j])));
        }
        if !bias.is_finite() {
            return Err(bad(format!("the bias is {bias}")));
        }
        let last_end = weights_end + last_width * n as usize;
        let resume = match header.resume {
            None => None,
            Some(r) => {
                let last = match r.last_bias {
                    None => None,
                    Some(last_bias) => {
                        let stored = body[weights_end..last_end].chunks_exact(8);
                        let weights = memory::collected(
                            "last iterate",
                            stored.len(),
                            stored.map(|c| f64::from_le_bytes(c.try_into().unwrap())),
                        )
                        .map_err(memory_error)?;
                        Some(Iterate {
                            weights,
                            bias: last_bias,
                        })
                    }
                };
                let state = ResumeState {
                    steps: r.steps,
                    rows: r.rows,
                    t0: r.t0,
                    average_start: r.average_start,
                    bias_rate: r.bias_rate,
                    last,
                };
                state
                    .check()
                    .map_err(|e| bad(format!("bad resume state: {e}")))?;
                Some(state)
            }
        };
        let column_scales = match header.column_scales {
            None => None,
            Some(_) => {
                let stored = body[last_end..].chunks_exact(2);
                let exponents = memory::collected(
                    "column scales",
                    stored.len(),
                    stored.map(|c| i16::from_le_bytes(c.try_into().unwrap())),
                )
                .map_err(memory_error)?;
                Some(ColumnScales::from_exponents(exponents).map_err(bad)?)
            }
        };
        Ok(Model {
            weights,
            bias,
            loss,
            info: header.info,
            resume,
            column_scales,
        })
    }

    /// Write the model file atomically.
    pub fn save(&self, path: &Path, precision: Precision) -> Result<(), ModelError> {
        write_atomically(path, &self.encode(precision, path)?)
    }

    /// The bytes of the model file for `path` at `precision`, or an error when a weight or
    /// the bias is beyond what f32 holds: that file would store an infinity, which
    /// [`Model::load`] refuses.
    pub fn encode(&self, precision: Precision, path: &Path) -> Result<Vec<u8>, ModelError> {
        if precision == Precision::F32 && self.resume.is_some() {
            return Err(ModelError::Format {
                path: path.to_path_buf(),
                message: "a resumable model keeps its weights in f64: its average goes on \
                          being updated"
                    .into(),
            });
        }
        if let Some(last) = self.resume.as_ref().and_then(|r| r.last.as_ref())
            && last.weights.len() != self.weights.len()
        {
            return Err(ModelError::Format {
                path: path.to_path_buf(),
                message: format!(
                    "the resume state's last iterate has {} weights for {} features",
                    last.weights.len(),
                    self.weights.len()
                ),
            });
        }
        if precision == Precision::F32 {
            let too_large = |x: f64| x.abs() > f64::from(f32::MAX);
            let what = match self.weights.iter().position(|&w| too_large(w)) {
                Some(j) => Some(format!("weight {} = {:e}", j + 1, self.weights[j])),
                None => too_large(self.bias).then(|| format!("the bias {:e}", self.bias)),
            };
            if let Some(what) = what {
                return Err(ModelError::Format {
                    path: path.to_path_buf(),
                    message: format!("{what} is beyond the range of f32 weights: save in f64"),
                });
            }
        }
        Ok(self.to_bytes(precision))
    }

    /// Read a model file, checking magic, version, size and checksum.
    pub fn load(path: &Path) -> Result<Model, ModelError> {
        Model::from_bytes(&read(path)?, path)
    }

    /// A human-readable text form: settings, then `feature weight` lines for the non-zero
    /// weights with 1-based feature ids, as in LIBSVM text.
    pub fn to_readable(&self) -> String {
        let mut out = String::new();
        let version = self.format_version();
        out.push_str(&format!("# sparselin model (format version {version})\n"));
        out.push_str(&format!("loss {}\n", self.loss));
        out.push_str(&format!("algorithm {}\n", self.info.algorithm));
        out.push_str(&format!("lambda {:e}\n", self.info.lambda));
        if self.info.l1 != 0.0 {
            out.push_str(&format!("l1 {:e}\n", self.info.l1));
        }
        out.push_str(&format!("regularize_bias {}\n", self.info.regularize_bias));
        if !self.info.class_weights.is_unit() {
            out.push_str(&format!("class_weights {}\n", self.info.class_weights));
        }
        for (key, value) in &self.info.details {
            out.push_str(&format!("{key} {value}\n"));
        }
        out.push_str(&format!("n_features {}\n", self.weights.len()));
        out.push_str(&format!("bias {:e}\n", self.bias));
        if self.column_scales.is_some() {
            out.push_str(&format!(
                "column_scales {MAX_ABS} (the weights are of the original columns; the scales \
                 are in the binary model only)\n"
            ));
        }
        if let Some(r) = &self.resume {
            out.push_str(&format!(
                "resume steps={} rows={} t0={:e} average_start={} bias_rate={} last_iterate={}\n",
                r.steps,
                r.rows,
                r.t0,
                r.average_start,
                r.bias_rate,
                if r.last.is_some() {
                    "stored (binary model only)"
                } else {
                    "the weights"
                }
            ));
        }
        out.push_str("# feature weight (1-based ids, non-zero weights only)\n");
        for (j, &w) in self.weights.iter().enumerate() {
            if w != 0.0 {
                out.push_str(&format!("{} {w:e}\n", j + 1));
            }
        }
        out
    }

    /// Write [`Model::to_readable`] atomically.
    pub fn save_readable(&self, path: &Path) -> Result<(), ModelError> {
        write_atomically(path, self.to_readable().as_bytes())
    }
}

/// [`Model::weights_for`] of any weights in original feature ids (a resume state's last
/// iterate too).
pub fn weights_in_columns<'w>(
    weights: &'w [f64],
    n_features: usize,
    permutation: Option<&[u32]>,
) -> Cow<'w, [f64]> {
    let weight = |original: usize| weights.get(original).copied().unwrap_or(0.0);
    match permutation {
        None => Cow::Borrowed(weights),
        Some(p) => Cow::Owned(
            (0..n_features)
                .map(|j| p.get(j).map_or(0.0, |&original| weight(original as usize)))
                .collect(),
        ),
    }
}

/// Weights indexed by a dataset's internal columns, re-indexed by original feature ids
/// (`permutation[j]` = original id of column j, a permutation of 0..n).
pub fn weights_to_original(weights: &[f64], permutation: &[u32]) -> Vec<f64> {
    let mut out = vec![0.0; weights.len()];
    for (j, &original) in permutation.iter().enumerate() {
        out[original as usize] = weights[j];
    }
    out
}

/// The bytes of the file at `path`.
fn read(path: &Path) -> Result<Vec<u8>, ModelError> {
    fs::read(path).map_err(|reason| ModelError::Io {
        path: path.to_path_buf(),
        reason,
    })
}

/// Write `bytes` to `path` through [`crate::output::OutputFile`] (whole or not at all).
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    crate::output::write_file(path, bytes).map_err(|reason| ModelError::Io {
        path: path.to_path_buf(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, Examples, ValueVec};

    fn model() -> Model {
        let mut details = serde_json::Map::new();
        details.insert("steps".into(), 1234.into());
        Model {
            weights: vec![0.5, 0.0, -1.0 / 3.0, 1e-300],
            bias: -0.25,
            loss: Loss::EpsilonInsensitive(0.2),
            info: TrainingInfo {
                algorithm: "asgd".into(),
                lambda: 1e-4,
                l1: 0.0,
                regularize_bias: true,
                class_weights: ClassWeights::UNIT,
                details,
            },
            resume: None,
            column_scales: None,
        }
    }

    #[test]
    fn class_weights_round_trip_and_a_file_with_weights_it_cannot_use_is_refused() {
        let path = Path::new("weighted.model");
        let mut m = model();
        m.loss = Loss::Hinge;
        m.info.class_weights = ClassWeights::new(3.0, 0.25).unwrap();
        let back = Model::from_bytes(&m.to_bytes(Precision::F64), path).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.weighted_loss().unwrap().weight(-1.0), 0.25);
        assert!(m.to_readable().contains("class_weights +1=3,-1=0.25\n"));
        // Unit weights are left out of the header: files without them read as unit.
        let plain = model().to_bytes(Precision::F64);
        assert!(!String::from_utf8_lossy(&plain).contains("class_weights"));
        // A negative weight, or weights on a regression loss, are a format error naming the file.
        let negative = Model {
            info: TrainingInfo {
                class_weights: ClassWeights {
                    positive: -1.0,
                    negative: 1.0,
                },
                ..m.info.clone()
            },
            ..m.clone()
        };
        let regression = Model {
            loss: Loss::Squared,
            ..m.clone()
        };
        for bad in [negative, regression] {
            let error = Model::from_bytes(&bad.to_bytes(Precision::F64), path).unwrap_err();
            let message = error.to_string();
            assert!(
                message.contains("weighted.model") && message.contains("class weight"),
                "{message}"
            );
            assert!(bad.weighted_loss().is_err());
        }
    }

    #[test]
    fn largest_weights_are_by_magnitude_then_id_without_zeros() {
        let mut m = model();
        m.weights = vec![0.5, 0.0, -2.0, 0.5, -0.5, 1e-300, 0.0];
        let ids = |k| {
            m.largest_weights(k)
                .iter()
                .map(|&(j, _)| j)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(1), [2]);
        assert_eq!(ids(3), [2, 0, 3]);
        assert_eq!(ids(4), [2, 0, 3, 4]);
        assert_eq!(ids(100), [2, 0, 3, 4, 5]);
        assert_eq!(ids(0), Vec::<usize>::new());
        assert_eq!(m.largest_weights(2)[0], (2, -2.0));
    }

    #[test]
    fn round_trips_exactly_in_f64_and_rounded_in_f32() {
        let m = model();
        let path = Path::new("m");
        assert_eq!(
            Model::from_bytes(&m.to_bytes(Precision::F64), path).unwrap(),
            m
        );
        let back = Model::from_bytes(&m.to_bytes(Precision::F32), path).unwrap();
        assert_eq!(back.weights[2], f64::from(-1.0f32 / 3.0));
        assert_eq!(back.weights[3], 0.0);
        assert_eq!(back.bias, m.bias);
    }

    fn resumable(last: bool) -> Model {
        Model {
            resume: Some(ResumeState {
                steps: 4321,
                rows: 17,
                t0: 1.0 / 3.0,
                average_start: 7,
                bias_rate: 0.01,
                last: last.then(|| Iterate {
                    weights: vec![0.25, -1e-300, 2.0, 0.0],
                    bias: 0.125,
                }),
            }),
            ..model()
        }
    }

    /// The bytes with their checksum recomputed (a damaged file that passes it).
    fn with_crc(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes.truncate(bytes.len() - 4);
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn a_resume_state_round_trips_in_version_2_and_a_plain_model_stays_version_1() {
        let path = Path::new("r.model");
        let version = |bytes: &[u8]| u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        let plain = model().to_bytes(Precision::F64);
        assert_eq!(version(&plain), 1);
        for last in [true, false] {
            let m = resumable(last);
            let bytes = m.encode(Precision::F64, path).unwrap();
            assert_eq!(version(&bytes), 2);
            assert_eq!(Model::from_bytes(&bytes, path).unwrap(), m);
            let readable = m.to_readable();
            assert!(readable.starts_with("# sparselin model (format version 2)\n"));
            let line = "resume steps=4321 rows=17 t0=3.333333333333333e-1 average_start=7";
            assert!(readable.contains(line), "{readable}");
        }
        let err = |bytes: Vec<u8>| Model::from_bytes(&bytes, path).unwrap_err().to_string();
        // The last iterate cut off, or claimed by a version 1 file.
        let bytes = resumable(true).to_bytes(Precision::F64);
        let mut cut = bytes.clone();
        cut.drain(bytes.len() - 4 - 8..bytes.len() - 4);
        assert!(err(with_crc(cut)).contains("expected"));
        let mut old = bytes.clone();
        old[8] = 1;
        assert!(err(with_crc(old)).ends_with("a resume state in a version 1 file"));
        // Numbers no stopped run has.
        let mut zero = resumable(true);
        zero.resume.as_mut().unwrap().steps = 0;
        assert!(err(zero.to_bytes(Precision::F64)).ends_with("bad resume state: 0 steps"));
        let mut nan = resumable(true);
        let last = nan.resume.as_mut().unwrap().last.as_mut().unwrap();
        last.weights[1] = f64::NAN;
        assert!(err(nan.to_bytes(Precision::F64)).ends_with("last weight 2 is NaN"));
        // Saved in f64 only, and as wide as the model.
        let e = resumable(false).encode(Precision::F32, path).unwrap_err();
        assert!(e.to_string().contains("keeps its weights in f64"), "{e}");
        let mut narrow = resumable(true);
        let last = narrow.resume.as_mut().unwrap().last.as_mut().unwrap();
        last.weights.pop();
        let e = narrow.encode(Precision::F64, path).unwrap_err();
        assert!(
            e.to_string().ends_with("has 3 weights for 4 features"),
            "{e}"
        );
    }

    #[test]
    fn column_scales_round_trip_in_version_4_and_serve_the_objective_of_the_scaled_weights() {
        let path = Path::new("s.model");
        let version = |bytes: &[u8]| u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        let scales = ColumnScales::from_exponents(vec![1, -3, 0, 2]).unwrap();
        for start in [model(), resumable(true), resumable(false)] {
            let trained = start.clone().of_original_columns(scales.clone());
            assert_eq!(trained.weights[0], start.weights[0] / 2.0);
            assert_eq!(trained.weights[1], start.weights[1] * 8.0);
            let last = |m: &Model| m.resume.as_ref().and_then(|r| r.last.clone());
            if let Some(last) = last(&trained) {
                assert_eq!(last.weights[0], last_weights(&start)[0] / 2.0);
            }
            for precision in [Precision::F64, Precision::F32] {
                if precision == Precision::F32 && trained.resume.is_some() {
                    continue;
                }
                let bytes = trained.encode(precision, path).unwrap();
                assert_eq!(version(&bytes), 4);
                let back = Model::from_bytes(&bytes, path).unwrap();
                assert_eq!(back.column_scales.as_ref(), Some(&scales));
                if precision == Precision::F64 {
                    assert_eq!(back, trained);
                }
            }
            // Back to the scaled columns: the weights trained, bit for bit.
            assert_eq!(trained.trained_weights().as_ref(), start.weights.as_slice());
            assert_eq!(
                trained.clone().in_scaled_columns(&scales),
                Model {
                    column_scales: None,
                    ..start.clone()
                }
            );
            assert_eq!(
                trained.penalty_value(),
                start.info.penalty().value(&start.weights, start.bias)
            );
            assert!(trained.to_readable().contains("column_scales max-abs"));
        }
        let err = |bytes: Vec<u8>| Model::from_bytes(&bytes, path).unwrap_err().to_string();
        let bytes = model().of_original_columns(scales).to_bytes(Precision::F64);
        // Scales cut off, claimed by a version 1 or 2 file, out of range, of another kind.
        let mut cut = bytes.clone();
        cut.drain(bytes.len() - 4 - 2..bytes.len() - 4);
        assert!(err(with_crc(cut)).contains("expected"));
        for old in [1, 2] {
            let mut old_version = bytes.clone();
            old_version[8] = old;
            assert!(
                err(with_crc(old_version))
                    .ends_with(&format!("column scales in a version {old} file"))
            );
        }
        let mut far = bytes.clone();
        let at = bytes.len() - 4 - 2;
        far[at..at + 2].copy_from_slice(&2000i16.to_le_bytes());
        assert!(err(with_crc(far)).contains("scale exponent of feature 4 is 2000"));
        let mut other = bytes.clone();
        let at = (bytes.windows(9).position(|w| w == b"\"max-abs\"")).unwrap();
        other[at..at + 9].copy_from_slice(b"\"min-max\"");
        assert!(err(with_crc(other)).ends_with("unknown column scaling \"min-max\""));
    }

    fn last_weights(m: &Model) -> Vec<f64> {
        m.resume
            .as_ref()
            .unwrap()
            .last
            .as_ref()
            .unwrap()
            .weights
            .clone()
    }

    #[test]
    fn only_a_log_loss_model_gives_probabilities() {
        let mut m = model();
        for loss in [Loss::Hinge, Loss::SquaredHinge, Loss::Squared, Loss::Log] {
            m.loss = loss;
            let p = m.probability(-2.0);
            assert_eq!(p.is_some(), loss == Loss::Log);
            assert!(p.is_none_or(|p| (p - 1.0 / (1.0 + 2f64.exp())).abs() <= 1e-16));
        }
        let data = CsrMatrix::new(
            vec![1.0, -1.0],
            vec![0, 1, 1],
            vec![2],
            ValueVec::F64(vec![3.0]),
            4,
        )
        .unwrap();
        let data = crate::api::ExampleSet::Matrix(data);
        let got = crate::api::probabilities(&m, &data).unwrap();
        for (p, score) in got.iter().zip([-0.25 - 1.0, -0.25f64]) {
            assert!(
                (p - 1.0 / (1.0 + (-score).exp())).abs() <= 1e-16,
                "{p} at {score}"
            );
        }
        m.loss = Loss::Hinge;
        assert_eq!(crate::api::probabilities(&m, &data), None);
    }

    #[test]
    fn damaged_files_are_refused_with_a_reason() {
        let bytes = model().to_bytes(Precision::F64);
        let path = Path::new("m.model");
        let err = |b: &[u8]| Model::from_bytes(b, path).unwrap_err().to_string();
        let mut flipped = bytes.clone();
        flipped[FIXED_HEADER + 3] ^= 1;
        assert!(err(&flipped).contains("checksum"), "{}", err(&flipped));
        assert!(err(&bytes[..bytes.len() - 9]).contains("checksum"));
        assert!(err(b"hello world, not a model at all").contains("not a sparselin model"));
        let mut future = bytes.clone();
        future[8] = 9;
        assert!(err(&future).contains("version 9"));
        assert!(err(&future).starts_with("m.model: "));
        // Intact files whose numbers no training writes.
        let mut nan = model();
        nan.weights[1] = f64::NAN;
        assert!(err(&nan.to_bytes(Precision::F64)).ends_with("weight 2 is NaN"));
        let mut infinite = model();
        infinite.bias = f64::INFINITY;
        assert!(err(&infinite.to_bytes(Precision::F32)).ends_with("the bias is inf"));
    }

    #[test]
    fn weights_beyond_f32_are_refused_in_f32_and_kept_in_f64() {
        let mut m = model();
        m.weights[2] = -1e300;
        let path = Path::new("big.model");
        let e = m.encode(Precision::F32, path).unwrap_err().to_string();
        assert_eq!(
            e,
            "big.model: weight 3 = -1e300 is beyond the range of f32 weights: save in f64"
        );
        let bytes = m.encode(Precision::F64, path).unwrap();
        assert_eq!(Model::from_bytes(&bytes, path).unwrap(), m);
        m.weights[2] = 0.0;
        m.bias = 1e39;
        assert!(m.encode(Precision::F32, path).is_err());
    }

    #[test]
    fn save_is_atomic_and_readable_export_lists_nonzero_weights() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.model");
        let m = model();
        m.save(&path, Precision::F64).unwrap();
        assert_eq!(Model::load(&path).unwrap(), m);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
        let text = m.to_readable();
        assert!(
            text.contains("\n1 5e-1\n") && text.contains("\n3 -3.333"),
            "{text}"
        );
        assert!(!text.contains("\n2 "));
        assert!(text.contains("steps 1234"));
        let missing = dir.path().join("no/such/dir/x.model");
        assert!(m.save(&missing, Precision::F64).is_err());
    }

    #[test]
    fn one_row_scores_as_the_kernel_scores_it_and_unseen_features_weigh_zero() {
        let m = model();
        let (indices, values) = ([0u32, 2, 3], [0.5, -2.0, 4.0]);
        let row = Row {
            label: 1.0,
            indices: (&indices).into(),
            values: crate::data::Values::F64(&values),
        };
        assert_eq!(m.score_entries(&indices, Some(&values)), m.score(row));
        let shuffled = m.score_entries(&[3, 0, 2], Some(&[4.0, 0.5, -2.0]));
        assert!((shuffled - m.score(row)).abs() < 1e-12);
        let beyond = m.score_entries(&[0, 2, 3, 40], Some(&[0.5, -2.0, 4.0, 9.0]));
        assert_eq!(beyond, m.score_entries(&indices, Some(&values)));
        assert_eq!(
            m.score_entries(&[1], None),
            m.weights[1] + m.bias,
            "binary row"
        );
    }

    /// Where the order of the sum decides the result (1e16 − 1 − 1e16 − 1 is −1 summed in row
    /// order, −2 in the AVX2 kernel's four lanes), an increasing row scores as the dataset
    /// scorer scores it, bit for bit.
    #[test]
    fn an_increasing_row_scores_as_its_dataset_does() {
        let mut m = model();
        m.weights = vec![0.0; 16];
        (m.weights[0], m.weights[1], m.weights[4], m.bias) = (1e16, -1.0, -1e16, 0.0);
        m.weights[9] = -1.0;
        let indices: Vec<u32> = (0..16).collect();
        let values = vec![1.0; 16];
        let data = CsrMatrix::new(
            vec![1.0],
            vec![0, 16],
            indices.clone(),
            ValueVec::F64(values.clone()),
            16,
        )
        .unwrap();
        let dataset = crate::metrics::scores(&m.weights, m.bias, &data)[0];
        assert_eq!(
            m.score_entries(&indices, Some(&values)).to_bits(),
            dataset.to_bits()
        );
        assert_eq!(m.score_entries(&indices, None).to_bits(), dataset.to_bits());
    }

    #[test]
    fn features_beyond_the_model_weigh_zero() {
        let m = model();
        assert_eq!(*m.weights_for(2, None), m.weights[..]);
        assert_eq!(*m.weights_for(6, None), m.weights[..]);
        // Features 4, 5 and 2^32 − 1 are beyond the model's 4 weights.
        let data = CsrMatrix::new(
            vec![1.0, -1.0, 1.0],
            vec![0, 3, 4, 6],
            vec![0, 4, 5, 5, 0, u32::MAX],
            ValueVec::F64(vec![2.0, 7.0, 9.0, 1.0, 3.0, 8.0]),
            u32::MAX as usize + 1,
        )
        .unwrap();
        let scores = crate::metrics::scores(&m.weights_for(data.n_features(), None), m.bias, &data);
        assert_eq!(scores, [2.0 * 0.5 + m.bias, m.bias, 3.0 * 0.5 + m.bias]);
        assert_eq!(m.prediction(-0.1), -0.1);
    }

    #[test]
    fn a_classifier_predicts_classes_and_nan_for_a_nan_score() {
        let m = Model {
            loss: Loss::Hinge,
            ..model()
        };
        let at = [0.0, 1e-300, -1e-300].map(|s| m.prediction(s));
        assert_eq!(at, [-1.0, 1.0, -1.0]);
        assert!(m.prediction(f64::NAN).is_nan());
    }

    #[test]
    fn permuted_columns_map_to_and_from_original_ids() {
        let internal = [10.0, 20.0, 30.0];
        let permutation = [2u32, 0, 1]; // column 0 is original feature 2, ...
        let original = weights_to_original(&internal, &permutation);
        assert_eq!(original, [20.0, 30.0, 10.0]);
        let mut m = model();
        m.weights = original;
        assert_eq!(*m.weights_for(3, Some(&permutation)), internal);
        // Original feature 7 is beyond the model: weight 0.
        assert_eq!(*m.weights_for(3, Some(&[1, 0, 7])), [30.0, 20.0, 0.0]);
    }
}
