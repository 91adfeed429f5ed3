//! The C ABI over [`crate::api`]: opaque handles, status codes, caller-owned buffers.
//!
//! The header `include/sparselin.h` is generated from this file by cbindgen in `build.rs`.
//! Conventions:
//!
//! * Every function that can fail returns an [`SlStatus`]; on failure a message naming the
//!   cause is kept per thread and returned by [`sl_last_error`].
//! * Handles ([`SlDataset`], [`SlModel`], [`SlClassifier`]) are created by `sl_*` functions, written through an
//!   out-pointer, and released with the matching `*_free`, which accepts NULL.
//! * Arrays passed in are only read during the call (the data is copied); output arrays are
//!   owned by the caller, with their length passed alongside.
//! * Not fork-safe: the pool threads of the parallel work (rayon) are not in a child forked
//!   after the first parallel call, whose first parallel call then waits forever (README).
//! * No panic crosses the boundary: each entry point runs under `catch_unwind` and turns a
//!   panic into [`SlStatus::Panic`]; the per-thread message is reached with `try_with`, so a
//!   call made while the thread's storage is being torn down (an `atexit` handler, a
//!   thread-key destructor) still returns instead of aborting.
//!
//! This is the one module of the `sparselin` crate allowed `unsafe` (the crate root denies it
//! everywhere else): taking raw pointers from C cannot be done in safe Rust. Every `unsafe`
//! block reads a pointer after checking it is not null, under the contract each function's
//! `# Safety` section states, and carries a `// SAFETY:` comment.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use crate::api::{
    self, ClassWeighting, EarlyStopping, Error, ExampleSet, Examples, Learner, Loss, Model,
    OneVsRest, PathStarts, Precision, Strength, Trainer,
};
use crate::data::ValueVec;
use crate::data::column_scales::ColumnScales;
use crate::data::vw::{DEFAULT_BITS, FeatureRules, Hashing};
use crate::dist::Local;

/// What a call did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlStatus {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL, a string was not UTF-8, a buffer was too short, or the
    /// model cannot give what was asked (probabilities of a model not trained with log loss).
    InvalidArgument = 1,
    /// The data could not be read or is malformed.
    Data = 2,
    /// The training configuration was refused, or training with it diverged.
    Config = 3,
    /// A model file could not be read or written.
    Model = 4,
    /// A bug: the library panicked (the message is the panic's).
    Panic = 5,
}

/// Training data: a dataset directory, a LIBSVM or Vowpal Wabbit text file, or arrays given
/// in memory.
pub struct SlDataset {
    examples: ExampleSet,
    /// The importance weights of Vowpal Wabbit text read in memory, when not all 1: the rows'
    /// sample weights, as a dataset converted from the text stores them.
    importance_weights: Option<Vec<f64>>,
}

impl SlDataset {
    fn new(examples: ExampleSet) -> SlDataset {
        SlDataset {
            examples,
            importance_weights: None,
        }
    }
}

/// How [`sl_dataset_open_vw`] reads Vowpal Wabbit text: the flags of `vw` (and of
/// `sparselin convert --format vw`) that decide its columns. Start from
/// [`sl_vw_options_default`]; text a model scores must be read with the options its training
/// text was read with.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SlVwOptions {
    /// Hash bits, 1 to 32, for 2^bits columns (VW's `-b`); 0 means VW's default, 18.
    pub bits: u32,
    /// `n_interactions` interactions, each a NUL-terminated string of namespace letters
    /// (`"ab"`: VW's `-q ab`; `"abc"`: `--cubic abc`; `"::"`: `-q ::`, every pair of
    /// namespaces, `:` standing for any); NULL when there are none.
    pub interactions: *const *const c_char,
    /// How many strings `interactions` holds.
    pub n_interactions: usize,
    /// Letters of namespaces dropped (VW's `--ignore`); NULL or "" for none.
    pub ignore: *const c_char,
    /// Letters of the only namespaces kept (VW's `--keep`); NULL or "" for all.
    pub keep: *const c_char,
    /// Letters of namespaces that enter only the interactions (VW's `--ignore_linear`); NULL
    /// or "" for none.
    pub ignore_linear: *const c_char,
    /// Non-zero: names of digits are hashed as other names (VW's `--hash all`).
    pub hash_all: u8,
    /// Non-zero: a line without a label is a row of label 0 (text to predict on), not an
    /// error.
    pub unlabeled: u8,
}

/// A trained linear model.
pub struct SlModel(Model);

/// A one-vs-rest classifier: a linear model per class.
pub struct SlClassifier(OneVsRest);

/// Training settings. Start from [`sl_train_config_default`] and change fields. The counts
/// and limits documented with "0: default" (and the NULL strings) take the learner's
/// defaults when 0; `lambda`, `seed`, `regularize_bias` and `early_stop_tolerance` are always
/// taken as given, so a zeroed struct is refused (λ must be positive).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SlTrainConfig {
    /// Learner name: `sgd`, `asgd`, `casgd`, `adagrad`, `naive-*`, `lbfgs`, `sublbfgs`, `subgd`,
    /// `bfgs`, `dcd`, `cd`, `tron`, `newton`, `aerr`, `aelr`, `aesvr`; NULL means `asgd`.
    pub learner: *const c_char,
    /// Loss name as on the command line (`hinge`, `log`, `squared`, `epsilon-insensitive:0.1`,
    /// …); NULL means the learner's default.
    pub loss: *const c_char,
    /// λ > 0 (λ ≥ 0 for `adagrad`; unused by `aerr`, `aelr` and `aesvr`, which have none).
    pub lambda: f64,
    /// Seed: same seed, same data, same model.
    pub seed: u64,
    /// Online learners: passes over the data (0: the default, 5).
    pub epochs: u64,
    /// Online learners: exact step count instead of epochs (0: use epochs).
    pub steps: u64,
    /// Non-zero: (λ/2)b² is in the objective (batch learners require it).
    pub regularize_bias: u8,
    /// Batch learners: iteration limit (0: default).
    pub max_iterations: u64,
    /// Batch learners: relative suboptimality at which to stop (0: default).
    pub tolerance: f64,
    /// Attribute-efficient learners: attributes read per example (0: default, 4, or the
    /// feature count if smaller).
    pub attributes: u64,
    /// Attribute-efficient learners: radius of the weight ball (0: default, 1).
    pub radius: f64,
    /// Online and batch learners with a classification loss: the classes' loss weights as on
    /// the command line (`+1=5,-1=1`; for one-vs-rest by class label, `3=2,7=0.5`; or
    /// `balanced`); NULL means unweighted.
    pub class_weights: *const c_char,
    /// Online learners and batch solvers but dcd: a model handle to start from (its weights
    /// and bias, matched by feature id; copied, so the handle may be freed after the call);
    /// NULL starts from zero.
    pub initial_model: *const SlModel,
    /// Online and batch learners: the weight of each training row's loss (liblinear's `-W`,
    /// scikit-learn's `sample_weight`), `n_sample_weights` doubles, one per row, each finite
    /// and ≥ 0 (copied); NULL with 0 means unweighted.
    pub sample_weights: *const f64,
    /// The number of doubles at `sample_weights`: the training data's row count.
    pub n_sample_weights: u64,
    /// Online learners: non-zero keeps in the model where the run stopped, so that a later
    /// call can resume it (Vowpal Wabbit's `--save_resume`; saved with f64 weights only).
    pub save_resume: u8,
    /// Online learners: a model handle saved with `save_resume` whose run this one goes on
    /// from, at the step size and with the average it had reached (scikit-learn's
    /// `partial_fit`); its learner, loss, λ and bias setting must be this config's (`epochs`
    /// and `steps` count this call's). Copied; NULL starts a new run.
    pub resume: *const SlModel,
    /// `lbfgs` with `log` loss in [`sl_train_one_vs_rest`]: non-zero fits the classes'
    /// models together by multinomial logistic regression (softmax; scikit-learn's
    /// `LogisticRegression`) instead of each against the rest.
    pub multinomial: u8,
    /// `sgd`, `asgd` and `casgd` in [`sl_train_one_vs_rest`]: non-zero trains each class in passes of
    /// its own over the data instead of every class in one pass (the default; each class's
    /// model is then the binary model of its relabelled rows bit for bit, not to rounding).
    pub separate_class_passes: u8,
    /// λ₁ ≥ 0 of an L1 term λ₁(‖w‖₁ + |b|) in the objective (0: none), for a sparse model:
    /// `cd` or `lbfgs` with a smooth loss (λ = 0: L1 alone, liblinear's `-s 6`; λ > 0: the
    /// elastic net), `sgd` and `naive-sgd` (truncated gradient; on one thread), or `adagrad`
    /// and `naive-adagrad`.
    pub l1: f64,
    /// Non-zero trains on the features scaled as `sparselin train --scale max-abs` scales
    /// them: each divided by the power of two at or above its largest |value| (by the
    /// resumed model's scales when it has them, or the initial model's). The model returned
    /// is of the original features, exactly, and keeps the scales; the dataset handle is left
    /// as it is (the run reads a scaled copy: a dataset's values, or rows given in memory
    /// whole).
    pub scale: u8,
    /// liblinear's and scikit-learn's C in place of `lambda` when positive: λ = 1/(C·m), m
    /// the rows given (each fold's own in [`sl_cross_validate`]; with `early_stop`, the rows
    /// held out too); 0 leaves `lambda` as set.
    pub cost: f64,
    /// Batch solvers: non-zero fits no bias (b = 0), as liblinear does without `-B` (its
    /// default) and scikit-learn with `fit_intercept=False`.
    pub no_bias: u8,
    /// Online learners: N > 0 holds out a share of the rows (`holdout`), scores them after
    /// every epoch, and stops once N epochs in a row have not lowered their mean loss by more
    /// than `early_stop_tolerance` of its best; the model is the best epoch's (`sparselin
    /// train --early-stop N`; Vowpal Wabbit's `--early_terminate`, scikit-learn's
    /// `early_stopping`). Without `epochs` or `steps`, at most 100 epochs. 0: no early
    /// stopping.
    pub early_stop: u32,
    /// With `early_stop`: the share of the rows held out, between 0 and 1 (0: the default,
    /// 0.1).
    pub holdout: f64,
    /// With `early_stop`: the relative improvement an epoch must make, at least 0, taken as
    /// given (0: any lower loss improves); [`sl_train_config_default`] sets 1e-3.
    pub early_stop_tolerance: f64,
    /// `dcd` with `hinge` loss in [`sl_train_one_vs_rest`]: non-zero fits the classes' models
    /// together by Crammer and Singer's multiclass SVM (liblinear's `-s 4`) instead of each
    /// against the rest.
    pub crammer_singer: u8,
    /// `adagrad`, `naive-adagrad` and the attribute-efficient learners: the step η > 0
    /// (`sparselin train --eta`); 0: the learner's default.
    pub eta: f64,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keep `message` as the thread's last error (dropped if the thread's storage is already
/// being torn down: there is no later call on this thread to read it).
fn set_error(message: String) {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = message);
}

/// A failure: its status and message.
struct Failure(SlStatus, String);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure(status(&e), e.to_string())
    }
}

/// The status of an error: that of its cause for an error in one fold.
fn status(e: &Error) -> SlStatus {
    match e {
        Error::Data(_) | Error::Csr(_) => SlStatus::Data,
        Error::Online(_)
        | Error::Batch(_)
        | Error::Config(_)
        | Error::Memory(_)
        | Error::Diverged { .. } => SlStatus::Config,
        Error::Model(_) => SlStatus::Model,
        Error::Fold { error, .. } => status(error),
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure(SlStatus::InvalidArgument, message.into())
}

/// Run `body`, turning an error or a panic into a status and the thread's last error. The
/// kernel path is chosen first, so that a bad `SPARSELIN_ISA` is a configuration error.
fn guard(body: impl FnOnce() -> Result<(), Failure>) -> SlStatus {
    let checked = || {
        sparselin_kernels::dispatch::try_selected()
            .map_err(|e| Failure(SlStatus::Config, format!("choosing the kernel path: {e}")))?;
        body()
    };
    match catch_unwind(AssertUnwindSafe(checked)) {
        Ok(Ok(())) => SlStatus::Ok,
        Ok(Err(Failure(status, message))) => {
            set_error(message);
            status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_error(format!("internal error (panic): {what}"));
            SlStatus::Panic
        }
    }
}

/// A NUL-terminated UTF-8 string, or `None` for NULL.
///
/// # Safety
/// `s` is NULL or points to a NUL-terminated string valid for the call.
unsafe fn string<'a>(s: *const c_char, what: &str) -> Result<Option<&'a str>, Failure> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, and the caller promises a NUL-terminated string alive for the call.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map(Some)
        .map_err(|_| invalid(format!("{what} is not UTF-8")))
}

/// `len` elements at `p` (NULL allowed when `len` is 0).
///
/// # Safety
/// `p` is NULL with `len` 0, or points to `len` initialized, aligned elements valid for the
/// call.
unsafe fn slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    if len
        .checked_mul(size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(invalid(format!(
            "{what}: {len} elements exceed the address space"
        )));
    }
    // SAFETY: non-null, at most isize::MAX bytes (checked above), and the caller promises
    // `len` valid, aligned elements.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Store `value` through the out-pointer `out` as a new handle.
///
/// # Safety
/// `out` is NULL or valid for one pointer write.
unsafe fn put<T>(out: *mut *mut T, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(invalid("the output pointer is NULL"));
    }
    // SAFETY: non-null and writable, as the caller promises.
    unsafe { *out = Box::into_raw(Box::new(value)) };
    Ok(())
}

/// Borrow a handle.
///
/// # Safety
/// `p` is NULL or a live handle from this library.
unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller promises a live handle (or NULL, refused here).
    unsafe { p.as_ref() }.ok_or_else(|| invalid(format!("the {what} is NULL")))
}

/// The message of the last failed call on this thread ("" if none, or while the thread's
/// storage is being torn down). The pointer stays valid until the next failing call on the
/// same thread.
#[unsafe(no_mangle)]
pub extern "C" fn sl_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// The library's version, e.g. "0.1.0" (static storage).
#[unsafe(no_mangle)]
pub extern "C" fn sl_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Open a dataset directory or a LIBSVM text file (gzip ok; `-` reads standard input) into
/// `*out`. A text file's values are stored as `float`, as `sparselin convert` stores them by
/// default (a value that `float` cannot hold is an error naming it); for `double` values,
/// convert the file with `--values f64` and open the dataset directory, or build the dataset
/// with `sl_dataset_from_csr`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_dataset_open(
    path: *const c_char,
    out: *mut *mut SlDataset,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { string(path, "path") }?.ok_or_else(|| invalid("path is NULL"))?;
        let data = api::open(Path::new(path))?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, SlDataset::new(data)) }
    })
}

/// Build a dataset from CSR arrays (copied): `labels[n_rows]` (finite), `offsets[n_rows + 1]`
/// (from 0 to `nnz`, non-decreasing), `indices[nnz]` (0-based, strictly increasing within a
/// row, below `n_features` ≤ 2³²) and `values[nnz]` (finite), or `values` NULL for binary
/// data (every value 1). `nnz` is passed on its own, as the length of the two arrays, and
/// must equal `offsets[n_rows]`: a wrong last offset is then an error, not a read past the
/// arrays.
///
/// # Safety
/// Each array is NULL or holds the stated number of elements; `offsets` must not be NULL;
/// `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_dataset_from_csr(
    n_rows: usize,
    n_features: usize,
    nnz: usize,
    labels: *const f64,
    offsets: *const u64,
    indices: *const u32,
    values: *const f64,
    out: *mut *mut SlDataset,
) -> SlStatus {
    guard(|| {
        let rows = n_rows
            .checked_add(1)
            .ok_or_else(|| invalid("n_rows overflows"))?;
        // SAFETY: forwarded from this function's contract (offsets has n_rows + 1 entries).
        let offsets = unsafe { slice(offsets, rows, "offsets") }?;
        if offsets[n_rows] != nnz as u64 {
            return Err(Failure(
                SlStatus::Data,
                format!(
                    "offsets[{n_rows}] = {} but nnz = {nnz}: the last offset must be the \
                     number of non-zeros",
                    offsets[n_rows]
                ),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let labels = unsafe { slice(labels, n_rows, "labels") }?;
        // SAFETY: forwarded from this function's contract.
        let indices = unsafe { slice(indices, nnz, "indices") }?;
        let values = if values.is_null() {
            ValueVec::Ones
        } else {
            // SAFETY: forwarded from this function's contract.
            ValueVec::F64(unsafe { slice(values, nnz, "values") }?.to_vec())
        };
        let data = api::from_csr(
            labels.to_vec(),
            offsets.to_vec(),
            indices.to_vec(),
            values,
            n_features,
        )?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, SlDataset::new(data)) }
    })
}

/// VW's defaults: 18 bits, no interactions, nothing dropped, names of digits read as
/// numbers, labels required.
#[unsafe(no_mangle)]
pub extern "C" fn sl_vw_options_default() -> SlVwOptions {
    SlVwOptions {
        bits: 0,
        interactions: std::ptr::null(),
        n_interactions: 0,
        ignore: std::ptr::null(),
        keep: std::ptr::null(),
        ignore_linear: std::ptr::null(),
        hash_all: 0,
        unlabeled: 0,
    }
}

/// Read Vowpal Wabbit text (gzip ok; `-` reads standard input) into `*out`, its names hashed
/// as `options` say (NULL: [`sl_vw_options_default`]) into 2^bits columns, exactly as
/// `sparselin convert --format vw` hashes them, values stored as `float`. Importance weights
/// other than 1 weigh the rows in [`sl_train`], [`sl_train_one_vs_rest`] and
/// [`sl_cross_validate`] (unless the configuration gives sample weights), as a dataset
/// converted from the text is weighed.
///
/// # Safety
/// `path` is a NUL-terminated string; `options` is NULL or points to options whose strings
/// are NULL or NUL-terminated and whose `interactions` is NULL with a count of 0 or holds
/// `n_interactions` such strings; `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_dataset_open_vw(
    path: *const c_char,
    options: *const SlVwOptions,
    out: *mut *mut SlDataset,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { string(path, "path") }?.ok_or_else(|| invalid("path is NULL"))?;
        // SAFETY: forwarded from this function's contract.
        let options = unsafe { options.as_ref() }
            .copied()
            .unwrap_or_else(|| sl_vw_options_default());
        // SAFETY: forwarded from this function's contract.
        let hashing = unsafe { vw_hashing(&options) }?;
        let text = api::open_vw(Path::new(path), &hashing, options.unlabeled != 0)?;
        let data = SlDataset {
            examples: text.examples,
            importance_weights: text.importance_weights,
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, data) }
    })
}

/// The [`Hashing`] that Vowpal Wabbit options describe.
///
/// # Safety
/// As [`sl_dataset_open_vw`]'s `options`.
unsafe fn vw_hashing(options: &SlVwOptions) -> Result<Hashing, Failure> {
    // SAFETY: forwarded from this function's contract.
    let letters =
        |s: *const c_char, what: &str| unsafe { string(s, what) }.map(Option::unwrap_or_default);
    // SAFETY: forwarded from this function's contract.
    let given = unsafe { slice(options.interactions, options.n_interactions, "interactions") }?;
    let interactions = given
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            // SAFETY: forwarded from this function's contract.
            let interaction = unsafe { string(s, "an interaction") }?;
            interaction
                .map(str::to_string)
                .ok_or_else(|| invalid(format!("interactions[{k}] is NULL")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let rules = FeatureRules {
        interactions,
        ignore: letters(options.ignore, "ignore")?.to_string(),
        keep: letters(options.keep, "keep")?.to_string(),
        ignore_linear: letters(options.ignore_linear, "ignore_linear")?.to_string(),
        hash_all: options.hash_all != 0,
    };
    let bits = match options.bits {
        0 => DEFAULT_BITS,
        bits => bits,
    };
    Hashing::new(bits, &rules).map_err(invalid)
}

/// Rows of a dataset (0 for NULL).
///
/// # Safety
/// `data` is NULL or a live dataset handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_dataset_rows(data: *const SlDataset) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { data.as_ref() }.map_or(0, |d| d.examples.n_rows())
}

/// Features (columns) of a dataset (0 for NULL).
///
/// # Safety
/// `data` is NULL or a live dataset handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_dataset_features(data: *const SlDataset) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { data.as_ref() }.map_or(0, |d| d.examples.n_features())
}

/// Release a dataset (NULL is ignored).
///
/// # Safety
/// `data` is NULL or a live dataset handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_dataset_free(data: *mut SlDataset) {
    if !data.is_null() {
        // SAFETY: a handle made by `put` (Box::into_raw), released once, as promised.
        drop(unsafe { Box::from_raw(data) });
    }
}

/// The defaults: ASGD, the learner's default loss, λ = 10⁻⁴, seed 1, a regularized bias.
#[unsafe(no_mangle)]
pub extern "C" fn sl_train_config_default() -> SlTrainConfig {
    SlTrainConfig {
        learner: std::ptr::null(),
        loss: std::ptr::null(),
        lambda: 1e-4,
        seed: 1,
        epochs: 0,
        steps: 0,
        regularize_bias: 1,
        max_iterations: 0,
        tolerance: 0.0,
        attributes: 0,
        radius: 0.0,
        class_weights: std::ptr::null(),
        initial_model: std::ptr::null(),
        sample_weights: std::ptr::null(),
        n_sample_weights: 0,
        save_resume: 0,
        resume: std::ptr::null(),
        multinomial: 0,
        separate_class_passes: 0,
        l1: 0.0,
        scale: 0,
        cost: 0.0,
        no_bias: 0,
        early_stop: 0,
        holdout: 0.0,
        early_stop_tolerance: EarlyStopping::DEFAULT_TOLERANCE,
        crammer_singer: 0,
        eta: 0.0,
    }
}

/// The [`Trainer`] a C configuration describes.
///
/// # Safety
/// The strings in `c` are NULL or NUL-terminated; its initial and resumed models are NULL or
/// live model handles; its sample weights are NULL with a count of 0 or `n_sample_weights` readable
/// doubles.
unsafe fn trainer(c: &SlTrainConfig, scales: Option<&ColumnScales>) -> Result<Trainer, Failure> {
    let start = |model: &Model| match scales {
        Some(scales) => model.clone().in_scaled_columns(scales),
        None => model.clone(),
    };
    let config = |e: String| Failure(SlStatus::Config, e);
    // SAFETY: forwarded from this function's contract.
    let learner: Learner = match unsafe { string(c.learner, "learner") }? {
        Some(name) => name.parse().map_err(config)?,
        None => Learner::ASGD,
    };
    let mut t = Trainer::new(learner)
        .lambda(c.lambda)
        .l1(c.l1)
        .seed(c.seed)
        .regularize_bias(c.regularize_bias != 0);
    if c.cost != 0.0 {
        t = t.cost(c.cost);
    }
    if c.no_bias != 0 {
        t = t.fit_bias(false);
    }
    // SAFETY: forwarded from this function's contract.
    if let Some(name) = unsafe { string(c.loss, "loss") }? {
        t = t.loss(name.parse::<Loss>().map_err(config)?);
    }
    if c.steps > 0 {
        t = t.steps(c.steps);
    } else if c.epochs > 0 {
        t = t.epochs(c.epochs);
    }
    if c.max_iterations > 0 {
        let n = usize::try_from(c.max_iterations).unwrap_or(usize::MAX);
        t = t.max_iterations(n);
    }
    if c.tolerance != 0.0 {
        t = t.tolerance(c.tolerance);
    }
    if c.attributes > 0 {
        t = t.attributes(usize::try_from(c.attributes).unwrap_or(usize::MAX));
    }
    if c.radius != 0.0 {
        t = t.radius(c.radius);
    }
    if c.eta != 0.0 {
        t = t.eta(c.eta);
    }
    // SAFETY: forwarded from this function's contract.
    if let Some(spec) = unsafe { string(c.class_weights, "class_weights") }? {
        t = t.class_weights(spec.parse::<ClassWeighting>().map_err(config)?);
    }
    // SAFETY: forwarded from this function's contract.
    if let Some(model) = unsafe { c.initial_model.as_ref() } {
        t = t.initial_model(start(&model.0));
    }
    if c.save_resume != 0 {
        t = t.save_resume(true);
    }
    if c.multinomial != 0 {
        t = t.multinomial(true);
    }
    if c.crammer_singer != 0 {
        t = t.crammer_singer(true);
    }
    if c.separate_class_passes != 0 {
        t = t.classes_in_one_pass(false);
    }
    if c.early_stop == 0 && c.holdout != 0.0 {
        return Err(config(
            "holdout is the share early stopping holds out: set early_stop too".into(),
        ));
    }
    if c.early_stop > 0 {
        t = t.early_stopping(EarlyStopping {
            patience: c.early_stop,
            holdout: match c.holdout {
                0.0 => EarlyStopping::DEFAULT_HOLDOUT,
                share => share,
            },
            tolerance: c.early_stop_tolerance,
        });
    }
    // SAFETY: forwarded from this function's contract.
    if let Some(model) = unsafe { c.resume.as_ref() } {
        t = t.resume(start(&model.0));
    }
    if !c.sample_weights.is_null() || c.n_sample_weights > 0 {
        let n = usize::try_from(c.n_sample_weights).unwrap_or(usize::MAX);
        // SAFETY: forwarded from this function's contract.
        let weights = unsafe { slice(c.sample_weights, n, "sample_weights") }?;
        t = t.sample_weights(weights.to_vec());
    }
    Ok(t)
}

/// A training run a C configuration describes on `data`: its [`Trainer`] and, with `scale`
/// set, the scaled copy of the rows it trains on and their scales (original feature ids).
struct Run {
    trainer: Trainer,
    scaled: Option<(ExampleSet, ColumnScales)>,
}

impl Run {
    /// The rows the run trains on: `data`'s, or their scaled copy.
    fn examples<'a>(&'a self, data: &'a SlDataset) -> &'a ExampleSet {
        self.scaled
            .as_ref()
            .map_or(&data.examples, |(rows, _)| rows)
    }

    /// A model trained on [`Run::examples`] as the model of `data`'s features.
    fn of_original_columns(&self, model: Model) -> Model {
        match &self.scaled {
            Some((_, scales)) => model.of_original_columns(scales.clone()),
            None => model,
        }
    }
}

/// The run a C configuration describes on `data`. When the configuration gives no sample
/// weights and the learner weighs rows, the importance weights of Vowpal Wabbit text read in
/// memory, or a dataset's stored weights (converted from Vowpal Wabbit text, or with
/// `convert --sample-weights`), weigh them, as on the command line.
///
/// # Safety
/// As [`trainer`].
unsafe fn run_for(c: &SlTrainConfig, data: &SlDataset) -> Result<Run, Failure> {
    let scaled = match c.scale {
        0 => None,
        // SAFETY: forwarded from this function's contract.
        _ => Some(unsafe { scaled_copy(c, data) }?),
    };
    // SAFETY: forwarded from this function's contract.
    let t = unsafe { trainer(c, scaled.as_ref().map(|(_, scales)| scales)) }?;
    let weighs_rows = !matches!(t.learner(), Learner::AttributeEfficient(_));
    if t.sample_weights_given().is_some() || !weighs_rows {
        return Ok(Run { trainer: t, scaled });
    }
    let weights = match &data.importance_weights {
        Some(weights) => Some(weights.clone()),
        None => data.examples.stored_sample_weights().map_err(Error::from)?,
    };
    let trainer = match weights {
        Some(weights) => t.sample_weights(weights),
        None => t,
    };
    Ok(Run { trainer, scaled })
}

/// `data`'s rows scaled for a run of `c`, and the scales: the resumed model's, else the
/// initial model's, else the rows' own ([`api::max_abs_scales`]). A dataset is opened again
/// (the page cache shares its maps; refused if it was replaced on disk since) and its values
/// copied and scaled; rows in memory are copied whole.
///
/// # Safety
/// As [`trainer`].
unsafe fn scaled_copy(
    c: &SlTrainConfig,
    data: &SlDataset,
) -> Result<(ExampleSet, ColumnScales), Failure> {
    // SAFETY: forwarded from this function's contract.
    let (resumed, initial) = unsafe { (c.resume.as_ref(), c.initial_model.as_ref()) };
    let own = [resumed, initial]
        .into_iter()
        .flatten()
        .find_map(|model| model.0.column_scales.clone());
    let scales = match own {
        Some(scales) => scales,
        None => api::max_abs_scales(&data.examples, &Local)?,
    };
    let (copy, name) = match &data.examples {
        ExampleSet::Dataset(d) => {
            let dir = d.dataset().dir();
            let reopened = d.dataset().reopen().and_then(|d| d.into_examples());
            let reopened = reopened.and_then(|r| r.with_n_features(d.n_features()));
            (ExampleSet::Dataset(reopened.map_err(Error::from)?), dir)
        }
        ExampleSet::Matrix(m) => (ExampleSet::Matrix(m.clone()), Path::new("(rows)")),
    };
    Ok((api::scaled(copy, &scales, name)?, scales))
}

/// Train on `data` as `config` says (NULL: [`sl_train_config_default`]) into `*out`. Without
/// sample weights in `config`, a dataset that stores weights (converted from Vowpal Wabbit
/// text, or with `sparselin convert --sample-weights`) is weighed by those, as
/// `sparselin train` weighs it; so are [`sl_train_one_vs_rest`] and [`sl_cross_validate`].
///
/// # Safety
/// `data` is a live dataset handle; `config` is NULL or points to a config whose strings are
/// NULL or NUL-terminated, whose initial and resumed models are NULL or live model handles
/// and whose sample weights are NULL or `n_sample_weights` readable doubles; `out` is valid for one pointer
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_train(
    data: *const SlDataset,
    config: *const SlTrainConfig,
    out: *mut *mut SlModel,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { handle(data, "dataset") }?;
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { config.as_ref() }
            .copied()
            .unwrap_or_else(|| sl_train_config_default());
        // SAFETY: forwarded from this function's contract.
        let run = unsafe { run_for(&config, data) }?;
        let model = run.of_original_columns(run.trainer.train(run.examples(data))?);
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, SlModel(model)) }
    })
}

/// Write one value per row of `data` into `out[0..rows]` (`out_len` ≥ rows): the raw score
/// w·x + b if `raw` is non-zero, else the prediction (±1 for classification losses, the mean
/// e^(w·x + b) for Poisson loss, the score for the other regressions; NaN for a NaN score).
///
/// # Safety
/// `model` and `data` are live handles; `out` holds `out_len` writable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_predict(
    model: *const SlModel,
    data: *const SlDataset,
    raw: u8,
    out: *mut f64,
    out_len: usize,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let model = unsafe { handle(model, "model") }?;
        // SAFETY: forwarded from this function's contract.
        unsafe {
            fill_rows(data, 1, out, out_len, |data| {
                Ok(if raw != 0 {
                    api::scores(&model.0, data)
                } else {
                    api::predict(&model.0, data)
                })
            })
        }
    })
}

/// Write P(label = +1) = 1/(1 + e^(−score)) for every row of `data` into `out[0..rows]`
/// (`out_len` ≥ rows), as liblinear's `predict_probability`. Only a model trained with log
/// loss has such probabilities: any other is refused with `SL_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
/// `model` and `data` are live handles; `out` holds `out_len` writable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_predict_probabilities(
    model: *const SlModel,
    data: *const SlDataset,
    out: *mut f64,
    out_len: usize,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let model = unsafe { handle(model, "model") }?;
        // SAFETY: forwarded from this function's contract.
        unsafe {
            fill_rows(data, 1, out, out_len, |data| {
                api::probabilities(&model.0, data).ok_or_else(|| {
                    invalid(format!(
                        "the model was trained with {} loss, whose scores are not log-odds: \
                         only a log-loss model gives probabilities",
                        model.0.loss
                    ))
                })
            })
        }
    })
}

/// k-fold cross-validation, as liblinear's `cross_validation`: train `folds` models as
/// `config` says (NULL: [`sl_train_config_default`]), each on all folds but one (rows shuffled
/// with the config's seed and dealt to the folds, stratified by class for the classification
/// losses), and write into `out[0..rows]` (`out_len` ≥ rows) each row's raw score w·x + b by
/// the model that did not see it: its sign is the held-out class, and for log loss
/// 1/(1 + e^(−score)) its probability. `folds` is from 2 to the number of rows.
///
/// # Safety
/// `data` is a live dataset handle; `config` is NULL or points to a config whose strings are
/// NULL or NUL-terminated, whose initial and resumed models are NULL or live model handles
/// and whose sample weights are NULL or `n_sample_weights` readable doubles; `out` holds `out_len` writable
/// doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_cross_validate(
    data: *const SlDataset,
    config: *const SlTrainConfig,
    folds: usize,
    out: *mut f64,
    out_len: usize,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { config.as_ref() }
            .copied()
            .unwrap_or_else(|| sl_train_config_default());
        // SAFETY: forwarded from this function's contract.
        let rows = unsafe { handle(data, "dataset") }?;
        // SAFETY: forwarded from this function's contract.
        let run = unsafe { run_for(&config, rows) }?;
        // SAFETY: forwarded from this function's contract.
        unsafe {
            fill_rows(data, 1, out, out_len, |_| {
                let validation = run.trainer.cross_validate(run.examples(rows), folds)?;
                Ok(validation.held_out_scores)
            })
        }
    })
}

/// A search over a grid, as liblinear's `find_parameters` (`train -C`): cross-validate on
/// `folds` folds (dealt as [`sl_cross_validate`] deals them, the same folds for every value)
/// each of the `n_values` values at `values` of the strength named `strength` — `"lambda"`,
/// `"cost"` (liblinear's C: λ = 1/(C·m) of each fold's m rows) or `"l1"` (λ₁ of the L1 term)
/// — in place of the config's. The grid runs from the value that regularizes most, each
/// fold's batch solve starting from its solution at the value before (dcd from its dual
/// variables, the other solvers from the weights) unless `cold` is non-zero, which starts
/// each from zero. Writes into `scores[i]` (NULL: not written; else `n_values` doubles) the
/// mean held-out score of `values[i]` — the error rate of a classifier, the mean pinball loss
/// of a quantile model, the mean deviance of a Poisson model, else the RMSE — and into `*best` (NULL: not written) the value of the
/// lowest, the one that regularizes most of a tie. Binary classification and regression (for
/// more classes, the command line's `train --cv K --cost-grid ...`).
///
/// # Safety
/// As [`sl_cross_validate`]; `strength` is a NUL-terminated string; `values` holds
/// `n_values` readable doubles; `scores` is NULL or holds `n_values` writable doubles; `best`
/// is NULL or valid for one double write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sl_cross_validate_grid(
    data: *const SlDataset,
    config: *const SlTrainConfig,
    folds: usize,
    strength: *const c_char,
    values: *const f64,
    n_values: usize,
    cold: u8,
    scores: *mut f64,
    best: *mut f64,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { config.as_ref() }
            .copied()
            .unwrap_or_else(|| sl_train_config_default());
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { string(strength, "the strength") }?;
        let strength = match name {
            Some("lambda") => Strength::Lambda,
            Some("cost") => Strength::Cost,
            Some("l1") => Strength::L1,
            Some(other) => {
                return Err(invalid(format!(
                    "unknown strength {other:?}: \"lambda\", \"cost\" or \"l1\""
                )));
            }
            None => return Err(invalid("the strength is NULL")),
        };
        // SAFETY: forwarded from this function's contract.
        let values = unsafe { slice(values, n_values, "the values") }?;
        if values.is_empty() {
            return Err(invalid("the grid has no values"));
        }
        if let Some(bad) = values.iter().find(|v| !(**v > 0.0 && v.is_finite())) {
            return Err(invalid(format!(
                "the grid's values must be positive finite numbers, not {bad}"
            )));
        }
        // SAFETY: forwarded from this function's contract.
        let rows = unsafe { handle(data, "dataset") }?;
        // SAFETY: forwarded from this function's contract.
        let run = unsafe { run_for(&config, rows) }?;
        let starts = match cold {
            0 => PathStarts::Warm,
            _ => PathStarts::Cold,
        };
        let points = run.trainer.cross_validate_path(
            run.examples(rows),
            folds,
            strength,
            values,
            starts,
            |_, _| {},
        )?;
        let score_of = |value: f64| {
            (points.iter())
                .find(|p| p.value == value)
                .map(|p| p.validation.mean().search_score())
                .expect("every value is a point of the path")
        };
        let found: Vec<f64> = values.iter().map(|&v| score_of(v)).collect();
        if !scores.is_null() {
            // SAFETY: non-null, and the caller promises n_values writable doubles.
            unsafe { std::slice::from_raw_parts_mut(scores, n_values) }.copy_from_slice(&found);
        }
        if !best.is_null() {
            let lowest = strength.best(values.iter().copied().zip(found));
            // SAFETY: non-null, and the caller promises one writable double.
            unsafe { *best = lowest.expect("the grid has values") };
        }
        Ok(())
    })
}

/// Check the dataset handle and the buffer of a per-row output, then write `values(data)`
/// (one per row) into it.
///
/// # Safety
/// `data` is NULL or a live handle; `out` holds `out_len` writable doubles.
unsafe fn fill_rows(
    data: *const SlDataset,
    per_row: usize,
    out: *mut f64,
    out_len: usize,
    values: impl FnOnce(&ExampleSet) -> Result<Vec<f64>, Failure>,
) -> Result<(), Failure> {
    // SAFETY: forwarded from this function's contract.
    let data = unsafe { handle(data, "dataset") }?;
    let rows = data.examples.n_rows();
    let needed = rows.saturating_mul(per_row);
    if needed > 0 && out.is_null() {
        return Err(invalid(format!(
            "the output buffer is NULL, and the dataset has {rows} rows"
        )));
    }
    if out_len < needed {
        return Err(invalid(match per_row {
            1 => format!("the output buffer holds {out_len} values, the dataset has {rows} rows"),
            _ => format!(
                "the output buffer holds {out_len} values, the dataset's {rows} rows need \
                 {per_row} each"
            ),
        }));
    }
    let values = values(&data.examples)?;
    if needed > 0 {
        // SAFETY: non-null, and the caller promises out_len ≥ needed writable doubles.
        let out = unsafe { std::slice::from_raw_parts_mut(out, needed) };
        out.copy_from_slice(&values);
    }
    Ok(())
}

/// Save a model file atomically (f64 weights).
///
/// # Safety
/// `model` is a live handle; `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_model_save(model: *const SlModel, path: *const c_char) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let model = unsafe { handle(model, "model") }?;
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { string(path, "path") }?.ok_or_else(|| invalid("path is NULL"))?;
        model
            .0
            .save(Path::new(path), Precision::F64)
            .map_err(|e| Error::from(e).into())
    })
}

/// Load a model file into `*out`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_model_load(path: *const c_char, out: *mut *mut SlModel) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { string(path, "path") }?.ok_or_else(|| invalid("path is NULL"))?;
        let model = Model::load(Path::new(path)).map_err(Error::from)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, SlModel(model)) }
    })
}

/// Number of weights of a model (0 for NULL).
///
/// # Safety
/// `model` is NULL or a live model handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_model_features(model: *const SlModel) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { model.as_ref() }.map_or(0, |m| m.0.n_features())
}

/// Copy the weights into `weights[0..features]` (`len` ≥ features) and the bias into `*bias`
/// (either output may be NULL to skip it).
///
/// # Safety
/// `model` is a live handle; `weights` is NULL or holds `len` writable doubles; `bias` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_model_weights(
    model: *const SlModel,
    weights: *mut f64,
    len: usize,
    bias: *mut f64,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let model = unsafe { handle(model, "model") }?;
        let w = &model.0.weights;
        if !weights.is_null() {
            if len < w.len() {
                return Err(invalid(format!(
                    "the weight buffer holds {len} values, the model has {}",
                    w.len()
                )));
            }
            // SAFETY: non-null, and the caller promises len ≥ w.len() writable doubles.
            unsafe { std::slice::from_raw_parts_mut(weights, w.len()) }.copy_from_slice(w);
        }
        if !bias.is_null() {
            // SAFETY: non-null and writable, as the caller promises.
            unsafe { *bias = model.0.bias };
        }
        Ok(())
    })
}

/// Score one row, given as `nnz` parallel `indices` (0-based, any order) and `values` (NULL:
/// every value 1), into `*out`: the raw score w·x + b if `raw` is non-zero, else the
/// prediction (±1 for classification losses, e^score for Poisson loss; NaN for a NaN score).
/// An index the model has no weight for weighs 0. Indices in increasing order are summed as `sl_predict` sums a
/// dataset's row, so the two agree bit for bit on the same `double` values; in any other
/// order the sum may differ from it by rounding.
/// This is liblinear's `predict_values` for one `feature_node` array: no dataset to build.
///
/// # Safety
/// `model` is a live handle; `indices` and `values` are NULL or hold `nnz` elements (`indices`
/// may be NULL only when `nnz` is 0); `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_model_score_row(
    model: *const SlModel,
    nnz: usize,
    indices: *const u32,
    values: *const f64,
    raw: u8,
    out: *mut f64,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let model = unsafe { handle(model, "model") }?;
        // SAFETY: forwarded from this function's contract.
        let indices = unsafe { slice(indices, nnz, "indices") }?;
        let values = if values.is_null() {
            None
        } else {
            // SAFETY: forwarded from this function's contract.
            Some(unsafe { slice(values, nnz, "values") }?)
        };
        if out.is_null() {
            return Err(invalid("the output pointer is NULL"));
        }
        let score = model.0.score_entries(indices, values);
        let value = if raw != 0 {
            score
        } else {
            model.0.prediction(score)
        };
        // SAFETY: non-null and writable, as the caller promises.
        unsafe { *out = value };
        Ok(())
    })
}

/// Release a model (NULL is ignored).
///
/// # Safety
/// `model` is NULL or a live model handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_model_free(model: *mut SlModel) {
    if !model.is_null() {
        // SAFETY: a handle made by `put` (Box::into_raw), released once, as promised.
        drop(unsafe { Box::from_raw(model) });
    }
}

/// Train one model per class of `data` as `config` says (NULL: [`sl_train_config_default`])
/// into `*out`: liblinear's multiclass training, one class against the rest
/// ([`Trainer::train_one_vs_rest`]). The labels must be whole numbers, at least two of them;
/// class weights, if any, name classes by label (`3=2,7=0.5`) or are `balanced`; the config's
/// initial model and resume settings must be unset.
///
/// # Safety
/// As [`sl_train`], with `out` valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_train_one_vs_rest(
    data: *const SlDataset,
    config: *const SlTrainConfig,
    out: *mut *mut SlClassifier,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { handle(data, "dataset") }?;
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { config.as_ref() }
            .copied()
            .unwrap_or_else(|| sl_train_config_default());
        // SAFETY: forwarded from this function's contract.
        let run = unsafe { run_for(&config, data) }?;
        let training = run.trainer.train_one_vs_rest(run.examples(data), &mut ())?;
        let classifier = match &run.scaled {
            Some((_, scales)) => training.classifier.of_original_columns(scales),
            None => training.classifier,
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, SlClassifier(classifier)) }
    })
}

/// Number of classes of a classifier (0 for NULL).
///
/// # Safety
/// `classifier` is NULL or a live classifier handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_class_count(classifier: *const SlClassifier) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { classifier.as_ref() }.map_or(0, |c| c.0.classes().len())
}

/// Copy the class labels, increasing, into `out[0..classes]` (`out_len` ≥ classes): the
/// order of [`sl_classifier_scores`]'s columns.
///
/// # Safety
/// `classifier` is a live handle; `out` holds `out_len` writable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_classes(
    classifier: *const SlClassifier,
    out: *mut f64,
    out_len: usize,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let classes = unsafe { handle(classifier, "classifier") }?.0.classes();
        if out.is_null() || out_len < classes.len() {
            return Err(invalid(format!(
                "the output buffer holds {} values, the classifier has {} classes",
                if out.is_null() { 0 } else { out_len },
                classes.len()
            )));
        }
        // SAFETY: non-null, and the caller promises out_len ≥ classes writable doubles.
        unsafe { std::slice::from_raw_parts_mut(out, classes.len()) }.copy_from_slice(classes);
        Ok(())
    })
}

/// Write each row's predicted class (the class of highest score) into `out[0..rows]`
/// (`out_len` ≥ rows).
///
/// # Safety
/// `classifier` and `data` are live handles; `out` holds `out_len` writable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_predict(
    classifier: *const SlClassifier,
    data: *const SlDataset,
    out: *mut f64,
    out_len: usize,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let classifier = unsafe { handle(classifier, "classifier") }?;
        // SAFETY: forwarded from this function's contract.
        unsafe {
            fill_rows(data, 1, out, out_len, |data| {
                Ok(api::predict_classes(&classifier.0, data))
            })
        }
    })
}

/// Write every row's score under each class's model, row by row, into
/// `out[0..rows × classes]` (`out_len` ≥ rows × classes): `out[i × classes + k]` is row i's
/// w·x + b of class k, in the order of [`sl_classifier_classes`].
///
/// # Safety
/// `classifier` and `data` are live handles; `out` holds `out_len` writable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_scores(
    classifier: *const SlClassifier,
    data: *const SlDataset,
    out: *mut f64,
    out_len: usize,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let classifier = unsafe { handle(classifier, "classifier") }?;
        let classes = classifier.0.classes().len();
        // SAFETY: forwarded from this function's contract.
        unsafe {
            fill_rows(data, classes, out, out_len, |data| {
                let columns = api::class_scores(&classifier.0, data);
                let rows = data.n_rows();
                Ok((0..rows * classes)
                    .map(|at| columns[at % classes][at / classes])
                    .collect())
            })
        }
    })
}

/// Save a classifier file atomically (f64 weights).
///
/// # Safety
/// `classifier` is a live handle; `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_save(
    classifier: *const SlClassifier,
    path: *const c_char,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let classifier = unsafe { handle(classifier, "classifier") }?;
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { string(path, "path") }?.ok_or_else(|| invalid("path is NULL"))?;
        classifier
            .0
            .save(Path::new(path), Precision::F64)
            .map_err(|e| Error::from(e).into())
    })
}

/// Load a classifier file (written by [`sl_classifier_save`] or `sparselin train` on data of
/// more than two classes) into `*out`.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_load(
    path: *const c_char,
    out: *mut *mut SlClassifier,
) -> SlStatus {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { string(path, "path") }?.ok_or_else(|| invalid("path is NULL"))?;
        let classifier = OneVsRest::load(Path::new(path)).map_err(Error::from)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, SlClassifier(classifier)) }
    })
}

/// Release a classifier (NULL is ignored).
///
/// # Safety
/// `classifier` is NULL or a live classifier handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sl_classifier_free(classifier: *mut SlClassifier) {
    if !classifier.is_null() {
        // SAFETY: a handle made by `put` (Box::into_raw), released once, as promised.
        drop(unsafe { Box::from_raw(classifier) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ClassWeights;

    fn toy() -> *mut SlDataset {
        let labels = [1.0, -1.0, 1.0, -1.0];
        let offsets = [0u64, 1, 2, 4, 5];
        let indices = [0u32, 1, 0, 1, 1];
        let values = [1.0, 1.0, 2.0, 0.5, 3.0];
        let mut data = std::ptr::null_mut();
        // SAFETY: arrays of the stated lengths, a local out-pointer.
        let status = unsafe {
            sl_dataset_from_csr(
                4,
                2,
                5,
                labels.as_ptr(),
                offsets.as_ptr(),
                indices.as_ptr(),
                values.as_ptr(),
                &mut data,
            )
        };
        assert_eq!(status, SlStatus::Ok);
        data
    }

    /// The model `sl_train` makes of `data` with `config` (its handle released).
    ///
    /// # Safety
    /// As `sl_train`'s `data` and `config`.
    unsafe fn trained(data: *const SlDataset, config: &SlTrainConfig) -> Model {
        let mut model = std::ptr::null_mut();
        // SAFETY: the caller's contract, and a local out-pointer.
        let status = unsafe { sl_train(data, config, &mut model) };
        assert_eq!(status, SlStatus::Ok, "{}", last_error());
        // SAFETY: a live handle from above, released once.
        let trained = unsafe { (*model).0.clone() };
        // SAFETY: as above.
        unsafe { sl_model_free(model) };
        trained
    }

    fn last_error() -> String {
        // SAFETY: sl_last_error returns a live NUL-terminated string.
        unsafe { CStr::from_ptr(sl_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    /// VW text with importance weights and an interaction, read through the C ABI: the
    /// dataset is the Rust API's, its weights weigh training as given sample weights do (and
    /// give way to the configuration's), and bad options are refused with a message.
    #[test]
    fn vw_text_opens_and_trains_weighted_like_the_rust_api() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.vw");
        let mut text = String::new();
        for i in 0..60 {
            let (label, weight) = if i % 3 == 0 { ("1", " 3") } else { ("-1", "") };
            text += &format!("{label}{weight} |a x{} y |b z{}\n", i % 7, i % 5);
        }
        std::fs::write(&path, text).unwrap();
        let c_path = CString::new(path.to_str().unwrap()).unwrap();
        let ab = c"ab";
        let interactions = [ab.as_ptr()];
        let mut options = sl_vw_options_default();
        options.bits = 12;
        options.interactions = interactions.as_ptr();
        options.n_interactions = 1;
        let mut data = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path, options whose one interaction is live, an out-pointer.
        let status = unsafe { sl_dataset_open_vw(c_path.as_ptr(), &options, &mut data) };
        assert_eq!(status, SlStatus::Ok, "{}", last_error());
        let rules = FeatureRules {
            interactions: vec!["ab".into()],
            ..FeatureRules::default()
        };
        let expected = api::open_vw(&path, &Hashing::new(12, &rules).unwrap(), false).unwrap();
        let weights = expected.importance_weights.clone().unwrap();
        assert_eq!(weights.iter().filter(|&&w| w == 3.0).count(), 20);
        // SAFETY: a live handle from above.
        let d = unsafe { &*data };
        assert_eq!(d.importance_weights.as_ref(), Some(&weights));
        assert_eq!(d.examples.n_features(), 1 << 12);
        let mut config = sl_train_config_default();
        config.epochs = 3;
        // SAFETY (of each call): a live handle; the config's sample weights are 60 doubles.
        let train = |config: &SlTrainConfig| unsafe { trained(data, config) };
        let trainer = Trainer::new(Learner::ASGD).epochs(3);
        let weighted = trainer.clone().sample_weights(weights.clone());
        let weighted = weighted.train(&expected.examples).unwrap();
        assert_eq!(train(&config), weighted);
        let ones = vec![1.0; 60];
        config.sample_weights = ones.as_ptr();
        config.n_sample_weights = 60;
        let unweighted = trainer.sample_weights(ones.clone());
        let unweighted = unweighted.train(&expected.examples).unwrap();
        assert_eq!(train(&config), unweighted);
        assert_ne!(weighted, unweighted);
        // SAFETY: a live handle, released once.
        unsafe { sl_dataset_free(data) };
        let refused = |options: &SlVwOptions, message: &str| {
            let mut data = std::ptr::null_mut();
            // SAFETY: as above.
            let status = unsafe { sl_dataset_open_vw(c_path.as_ptr(), options, &mut data) };
            assert_eq!(status, SlStatus::InvalidArgument);
            assert!(last_error().contains(message), "{}", last_error());
            assert!(data.is_null());
        };
        refused(
            &SlVwOptions {
                bits: 33,
                ..options
            },
            "hash bits",
        );
        let null = [std::ptr::null()];
        let nulls = SlVwOptions {
            interactions: null.as_ptr(),
            ..options
        };
        refused(&nulls, "interactions[0] is NULL");
        let lone = [c"a".as_ptr()];
        let short = SlVwOptions {
            interactions: lone.as_ptr(),
            ..options
        };
        refused(&short, "fewer than two namespaces");
        let (ignore, keep) = (c"a", c"b");
        let both = SlVwOptions {
            ignore: ignore.as_ptr(),
            keep: keep.as_ptr(),
            ..options
        };
        refused(&both, "both ignored and kept");
    }

    #[test]
    fn trains_and_predicts_like_the_rust_api() {
        let data = toy();
        let mut config = sl_train_config_default();
        config.lambda = 1e-3;
        config.epochs = 20;
        let mut model = std::ptr::null_mut();
        // SAFETY: live handles and out-pointers.
        assert_eq!(unsafe { sl_train(data, &config, &mut model) }, SlStatus::Ok);
        let mut out = [0.0; 4];
        // SAFETY: live handles, a 4-element buffer.
        let status = unsafe { sl_predict(model, data, 0, out.as_mut_ptr(), 4) };
        assert_eq!(status, SlStatus::Ok);
        // SAFETY: live handles from above.
        let (m, d) = unsafe { (&(*model).0, &(*data).examples) };
        let expected = Trainer::new(Learner::ASGD).lambda(1e-3).epochs(20);
        assert_eq!(*m, expected.train(d).unwrap());
        assert_eq!(out.to_vec(), api::predict(m, d));
        // SAFETY: a too-short buffer is refused before any write.
        let short = unsafe { sl_predict(model, data, 1, out.as_mut_ptr(), 3) };
        assert_eq!(short, SlStatus::InvalidArgument);
        assert!(last_error().contains("4 rows"), "{}", last_error());
        // SAFETY: live handles, released once.
        unsafe {
            sl_model_free(model);
            sl_dataset_free(data);
        }
    }

    #[test]
    fn an_l1_term_is_read_from_the_config() {
        let data = toy();
        let mut config = sl_train_config_default();
        config.learner = c"lbfgs".as_ptr();
        config.loss = c"log".as_ptr();
        config.lambda = 0.0;
        config.l1 = 0.05;
        let mut model = std::ptr::null_mut();
        // SAFETY: live handles, NUL-terminated strings and an out-pointer.
        assert_eq!(unsafe { sl_train(data, &config, &mut model) }, SlStatus::Ok);
        // SAFETY: live handles from above.
        let (m, d) = unsafe { (&(*model).0, &(*data).examples) };
        let expected = Trainer::new(Learner::Batch(crate::batch::Algorithm::Lbfgs))
            .loss(Loss::Log)
            .lambda(0.0)
            .l1(0.05);
        assert_eq!(*m, expected.train(d).unwrap());
        assert_eq!(m.info.l1, 0.05);
        // An averaging learner has no L1 term.
        config.learner = c"asgd".as_ptr();
        let mut refused = std::ptr::null_mut();
        // SAFETY: live handles, NUL-terminated strings and an out-pointer.
        let status = unsafe { sl_train(data, &config, &mut refused) };
        assert_eq!(status, SlStatus::Config);
        assert!(last_error().contains("an L1 term"), "{}", last_error());
        // SAFETY: live handles, released once.
        unsafe {
            sl_model_free(model);
            sl_dataset_free(data);
        }
    }

    #[test]
    fn class_weights_and_an_initial_model_are_read_from_the_config() {
        let data = toy();
        let mut config = sl_train_config_default();
        config.learner = c"dcd".as_ptr();
        config.class_weights = c"+1=4,-1=0.5".as_ptr();
        let mut model = std::ptr::null_mut();
        // SAFETY: live handles, NUL-terminated strings and an out-pointer.
        assert_eq!(unsafe { sl_train(data, &config, &mut model) }, SlStatus::Ok);
        // SAFETY: live handles from above.
        let (m, d) = unsafe { (&(*model).0, &(*data).examples) };
        let weights = ClassWeights::new(4.0, 0.5).unwrap();
        let expected = Trainer::new(Learner::Batch(crate::batch::Algorithm::Dcd))
            .class_weights(ClassWeighting::Fixed(weights));
        assert_eq!(*m, expected.train(d).unwrap());
        assert_eq!(m.info.class_weights, weights);
        // Going on from it: a primal solver started from the dcd optimum.
        config.learner = c"lbfgs".as_ptr();
        config.loss = c"squared-hinge".as_ptr();
        config.class_weights = std::ptr::null();
        config.initial_model = model;
        let mut resumed = std::ptr::null_mut();
        // SAFETY: live handles, NUL-terminated strings and an out-pointer.
        assert_eq!(
            unsafe { sl_train(data, &config, &mut resumed) },
            SlStatus::Ok
        );
        // SAFETY: a live handle from above.
        let r = unsafe { &(*resumed).0 };
        assert_eq!(r.info.details["warm_start"]["initial_model"], true);
        config.learner = c"dcd".as_ptr();
        config.loss = std::ptr::null();
        config.initial_model = std::ptr::null();
        config.class_weights = c"+1=-4".as_ptr();
        let mut refused = std::ptr::null_mut();
        // SAFETY: as above.
        let status = unsafe { sl_train(data, &config, &mut refused) };
        assert_eq!(status, SlStatus::Config);
        assert!(last_error().contains("positive finite"), "{}", last_error());
        assert!(refused.is_null());
        // SAFETY: live handles, released once.
        unsafe {
            sl_model_free(model);
            sl_model_free(resumed);
            sl_dataset_free(data);
        }
    }

    /// A run saved to resume and resumed through the config ends where the Trainer's whole
    /// run ends; resuming a model without a resume state is a configuration error.
    #[test]
    fn a_run_saved_to_resume_is_resumed_from_the_config() {
        let data = toy();
        let mut config = sl_train_config_default();
        config.lambda = 1e-2;
        config.epochs = 3;
        config.save_resume = 1;
        let mut stopped = std::ptr::null_mut();
        // SAFETY: live handles and an out-pointer.
        assert_eq!(
            unsafe { sl_train(data, &config, &mut stopped) },
            SlStatus::Ok
        );
        config.save_resume = 0;
        config.epochs = 2;
        config.resume = stopped;
        let mut resumed = std::ptr::null_mut();
        // SAFETY: live handles and an out-pointer.
        assert_eq!(
            unsafe { sl_train(data, &config, &mut resumed) },
            SlStatus::Ok
        );
        // SAFETY: live handles from above.
        let (r, d) = unsafe { (&(*resumed).0, &(*data).examples) };
        let whole = Trainer::new(Learner::ASGD).lambda(1e-2).epochs(5);
        let whole = whole.train(d).unwrap();
        for (a, b) in r.weights.iter().zip(&whole.weights) {
            assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
        }
        assert_eq!(r.info.details["resumed_at"], 12);
        assert_eq!(r.resume.as_ref().unwrap().steps, 20);
        // A model without a resume state cannot be resumed.
        let mut plain = std::ptr::null_mut();
        config.resume = std::ptr::null();
        // SAFETY: as above.
        assert_eq!(unsafe { sl_train(data, &config, &mut plain) }, SlStatus::Ok);
        config.resume = plain;
        let mut refused = std::ptr::null_mut();
        // SAFETY: as above.
        let status = unsafe { sl_train(data, &config, &mut refused) };
        assert_eq!(status, SlStatus::Config);
        assert!(last_error().contains("no resume state"), "{}", last_error());
        assert!(refused.is_null());
        // SAFETY: live handles, released once.
        unsafe {
            sl_model_free(stopped);
            sl_model_free(resumed);
            sl_model_free(plain);
            sl_dataset_free(data);
        }
    }

    #[test]
    fn sample_weights_are_read_from_the_config() {
        let data = toy();
        let weights = [2.0, 0.0, 1.5, 1.0];
        let mut config = sl_train_config_default();
        config.learner = c"sublbfgs".as_ptr();
        config.sample_weights = weights.as_ptr();
        config.n_sample_weights = 4;
        let mut model = std::ptr::null_mut();
        // SAFETY: a live handle, four readable weights and an out-pointer.
        assert_eq!(unsafe { sl_train(data, &config, &mut model) }, SlStatus::Ok);
        // SAFETY: live handles from above.
        let (m, d) = unsafe { (&(*model).0, &(*data).examples) };
        let expected = Trainer::new(Learner::Batch(crate::batch::Algorithm::SubLbfgs))
            .sample_weights(weights.to_vec());
        assert_eq!(*m, expected.train(d).unwrap());
        // A count that is not the rows', and NULL with a count, are refused.
        for (pointer, count, message) in [
            (weights.as_ptr(), 3, "3 sample weights for 4 rows"),
            (std::ptr::null(), 4, "sample_weights is NULL"),
        ] {
            config.sample_weights = pointer;
            config.n_sample_weights = count;
            let mut refused = std::ptr::null_mut();
            // SAFETY: `count` readable weights, or NULL (refused before any read).
            let status = unsafe { sl_train(data, &config, &mut refused) };
            assert_ne!(status, SlStatus::Ok);
            assert!(last_error().contains(message), "{}", last_error());
            assert!(refused.is_null());
        }
        // SAFETY: live handles, released once.
        unsafe {
            sl_model_free(model);
            sl_dataset_free(data);
        }
    }

    #[test]
    fn a_datasets_stored_weights_weigh_its_rows_unless_the_config_gives_some() {
        use crate::data::convert::{ConvertOptions, convert};
        use crate::data::stream::TextFormat;
        let dir = tempfile::tempdir().unwrap();
        let (text, out) = (dir.path().join("t.vw"), dir.path().join("data"));
        // Two pairs of rows alike but for their labels: only the weights decide them.
        let lines = "1 2 |f a b:2\n-1 0.5 |f a b:2\n1 |f c\n-1 3 |f c\n";
        std::fs::write(&text, lines).unwrap();
        let options = ConvertOptions {
            format: TextFormat::Vw {
                hashing: crate::data::vw::Hashing::plain(4).unwrap(),
                unlabeled: false,
            },
            ..ConvertOptions::default()
        };
        convert(&text, &out, &options).unwrap();
        let path = std::ffi::CString::new(out.to_str().unwrap()).unwrap();
        let mut data = std::ptr::null_mut();
        // SAFETY: a valid string and out-pointer.
        assert_eq!(
            unsafe { sl_dataset_open(path.as_ptr(), &mut data) },
            SlStatus::Ok
        );
        let mut config = sl_train_config_default();
        config.learner = c"sublbfgs".as_ptr();
        // SAFETY (of each call): a live handle; the config's weights, if any, are four
        // readable doubles.
        let train = |config: &SlTrainConfig| unsafe { trained(data, config) };
        // SAFETY: a live handle.
        let d = unsafe { &(*data).examples };
        let sublbfgs = Trainer::new(Learner::Batch(crate::batch::Algorithm::SubLbfgs));
        let stored = vec![2.0, 0.5, 1.0, 3.0];
        let weighted = train(&config);
        assert_eq!(
            weighted,
            sublbfgs.clone().sample_weights(stored).train(d).unwrap()
        );
        let given = [1.0; 4];
        config.sample_weights = given.as_ptr();
        config.n_sample_weights = 4;
        // Weights of 1 train the unweighted model (whose record of the weights differs).
        let (ones, unweighted) = (train(&config), sublbfgs.train(d).unwrap());
        assert_eq!(
            (&ones.weights, ones.bias),
            (&unweighted.weights, unweighted.bias)
        );
        assert_ne!(weighted.weights, unweighted.weights);
        // SAFETY: a live handle, released once.
        unsafe { sl_dataset_free(data) };
    }

    #[test]
    fn bad_input_is_a_status_and_a_message_not_a_crash() {
        let mut data = std::ptr::null_mut();
        let path = c"/no/such/file.svm";
        // SAFETY: a valid string and out-pointer.
        let status = unsafe { sl_dataset_open(path.as_ptr(), &mut data) };
        assert_eq!(status, SlStatus::Data);
        assert!(last_error().contains("/no/such/file.svm"));
        assert!(data.is_null());
        // One row holding index 5 of 3 features, binary values.
        let indices = [5u32];
        let one_row = |labels: *const f64, offsets: &[u64; 2], data: &mut *mut SlDataset| {
            // SAFETY: `labels` is NULL or one label, `offsets` two, `indices` one (nnz = 1).
            unsafe {
                sl_dataset_from_csr(
                    1,
                    3,
                    1,
                    labels,
                    offsets.as_ptr(),
                    indices.as_ptr(),
                    std::ptr::null(),
                    data,
                )
            }
        };
        let status = one_row(std::ptr::null(), &[0, 1], &mut data);
        assert_eq!(status, SlStatus::InvalidArgument, "labels NULL");
        let labels = [1.0];
        assert_eq!(one_row(labels.as_ptr(), &[0, 1], &mut data), SlStatus::Data);
        assert!(last_error().contains("index 5"), "{}", last_error());
        // A last offset beyond the arrays is refused before they are read.
        let status = one_row(labels.as_ptr(), &[0, 1_000_000], &mut data);
        assert_eq!(status, SlStatus::Data);
        assert!(
            last_error().contains("offsets[1] = 1000000"),
            "{}",
            last_error()
        );
        assert!(data.is_null());
        let data = toy();
        let mut config = sl_train_config_default();
        config.learner = c"lbfgs".as_ptr();
        config.loss = c"hinge".as_ptr();
        let mut model = std::ptr::null_mut();
        // SAFETY: live handles and out-pointers.
        let status = unsafe { sl_train(data, &config, &mut model) };
        assert_eq!(status, SlStatus::Config);
        assert!(last_error().contains("smooth"), "{}", last_error());
        // SAFETY: NULL handles are refused, not dereferenced.
        let status = unsafe { sl_train(std::ptr::null(), &config, &mut model) };
        assert_eq!(status, SlStatus::InvalidArgument);
        // SAFETY: a live handle, released once.
        unsafe { sl_dataset_free(data) };
    }

    #[test]
    fn a_panic_becomes_a_status() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, SlStatus::Panic);
        assert!(last_error().contains("boom"));
    }
}
