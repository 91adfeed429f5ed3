/* sparselin C ABI. Generated from src/ffi.rs by cbindgen (build.rs): do not edit. */

#ifndef SPARSELIN_H
#define SPARSELIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/**
 * What a call did.
 */
typedef enum SlStatus {
  /**
   * Success.
   */
  SL_STATUS_OK = 0,
  /**
   * A required pointer was NULL, a string was not UTF-8, a buffer was too short, or the
   * model cannot give what was asked (probabilities of a model not trained with log loss).
   */
  SL_STATUS_INVALID_ARGUMENT = 1,
  /**
   * The data could not be read or is malformed.
   */
  SL_STATUS_DATA = 2,
  /**
   * The training configuration was refused, or training with it diverged.
   */
  SL_STATUS_CONFIG = 3,
  /**
   * A model file could not be read or written.
   */
  SL_STATUS_MODEL = 4,
  /**
   * A bug: the library panicked (the message is the panic's).
   */
  SL_STATUS_PANIC = 5,
} SlStatus;

/**
 * A one-vs-rest classifier: a linear model per class.
 */
typedef struct SlClassifier SlClassifier;

/**
 * Training data: a dataset directory, a LIBSVM or Vowpal Wabbit text file, or arrays given
 * in memory.
 */
typedef struct SlDataset SlDataset;

/**
 * A trained linear model.
 */
typedef struct SlModel SlModel;

/**
 * How [`sl_dataset_open_vw`] reads Vowpal Wabbit text: the flags of `vw` (and of
 * `sparselin convert --format vw`) that decide its columns. Start from
 * [`sl_vw_options_default`]; text a model scores must be read with the options its training
 * text was read with.
 */
typedef struct SlVwOptions {
  /**
   * Hash bits, 1 to 32, for 2^bits columns (VW's `-b`); 0 means VW's default, 18.
   */
  uint32_t bits;
  /**
   * `n_interactions` interactions, each a NUL-terminated string of namespace letters
   * (`"ab"`: VW's `-q ab`; `"abc"`: `--cubic abc`; `"::"`: `-q ::`, every pair of
   * namespaces, `:` standing for any); NULL when there are none.
   */
  const char *const *interactions;
  /**
   * How many strings `interactions` holds.
   */
  size_t n_interactions;
  /**
   * Letters of namespaces dropped (VW's `--ignore`); NULL or "" for none.
   */
  const char *ignore;
  /**
   * Letters of the only namespaces kept (VW's `--keep`); NULL or "" for all.
   */
  const char *keep;
  /**
   * Letters of namespaces that enter only the interactions (VW's `--ignore_linear`); NULL
   * or "" for none.
   */
  const char *ignore_linear;
  /**
   * Non-zero: names of digits are hashed as other names (VW's `--hash all`).
   */
  uint8_t hash_all;
  /**
   * Non-zero: a line without a label is a row of label 0 (text to predict on), not an
   * error.
   */
  uint8_t unlabeled;
} SlVwOptions;

/**
 * Training settings. Start from [`sl_train_config_default`] and change fields. The counts
 * and limits documented with "0: default" (and the NULL strings) take the learner's
 * defaults when 0; `lambda`, `seed`, `regularize_bias` and `early_stop_tolerance` are always
 * taken as given, so a zeroed struct is refused (λ must be positive).
 */
typedef struct SlTrainConfig {
  /**
   * Learner name: `sgd`, `asgd`, `casgd`, `adagrad`, `naive-*`, `lbfgs`, `sublbfgs`, `subgd`,
   * `bfgs`, `dcd`, `cd`, `tron`, `newton`, `aerr`, `aelr`, `aesvr`; NULL means `asgd`.
   */
  const char *learner;
  /**
   * Loss name as on the command line (`hinge`, `log`, `squared`, `epsilon-insensitive:0.1`,
   * …); NULL means the learner's default.
   */
  const char *loss;
  /**
   * λ > 0 (λ ≥ 0 for `adagrad`; unused by `aerr`, `aelr` and `aesvr`, which have none).
   */
  double lambda;
  /**
   * Seed: same seed, same data, same model.
   */
  uint64_t seed;
  /**
   * Online learners: passes over the data (0: the default, 5).
   */
  uint64_t epochs;
  /**
   * Online learners: exact step count instead of epochs (0: use epochs).
   */
  uint64_t steps;
  /**
   * Non-zero: (λ/2)b² is in the objective (batch learners require it).
   */
  uint8_t regularize_bias;
  /**
   * Batch learners: iteration limit (0: default).
   */
  uint64_t max_iterations;
  /**
   * Batch learners: relative suboptimality at which to stop (0: default).
   */
  double tolerance;
  /**
   * Attribute-efficient learners: attributes read per example (0: default, 4, or the
   * feature count if smaller).
   */
  uint64_t attributes;
  /**
   * Attribute-efficient learners: radius of the weight ball (0: default, 1).
   */
  double radius;
  /**
   * Online and batch learners with a classification loss: the classes' loss weights as on
   * the command line (`+1=5,-1=1`; for one-vs-rest by class label, `3=2,7=0.5`; or
   * `balanced`); NULL means unweighted.
   */
  const char *class_weights;
  /**
   * Online learners and batch solvers but dcd: a model handle to start from (its weights
   * and bias, matched by feature id; copied, so the handle may be freed after the call);
   * NULL starts from zero.
   */
  const struct SlModel *initial_model;
  /**
   * Online and batch learners: the weight of each training row's loss (liblinear's `-W`,
   * scikit-learn's `sample_weight`), `n_sample_weights` doubles, one per row, each finite
   * and ≥ 0 (copied); NULL with 0 means unweighted.
   */
  const double *sample_weights;
  /**
   * The number of doubles at `sample_weights`: the training data's row count.
   */
  uint64_t n_sample_weights;
  /**
   * Online learners: non-zero keeps in the model where the run stopped, so that a later
   * call can resume it (Vowpal Wabbit's `--save_resume`; saved with f64 weights only).
   */
  uint8_t save_resume;
  /**
   * Online learners: a model handle saved with `save_resume` whose run this one goes on
   * from, at the step size and with the average it had reached (scikit-learn's
   * `partial_fit`); its learner, loss, λ and bias setting must be this config's (`epochs`
   * and `steps` count this call's). Copied; NULL starts a new run.
   */
  const struct SlModel *resume;
  /**
   * `lbfgs` with `log` loss in [`sl_train_one_vs_rest`]: non-zero fits the classes'
   * models together by multinomial logistic regression (softmax; scikit-learn's
   * `LogisticRegression`) instead of each against the rest.
   */
  uint8_t multinomial;
  /**
   * `sgd`, `asgd` and `casgd` in [`sl_train_one_vs_rest`]: non-zero trains each class in passes of
   * its own over the data instead of every class in one pass (the default; each class's
   * model is then the binary model of its relabelled rows bit for bit, not to rounding).
   */
  uint8_t separate_class_passes;
  /**
   * λ₁ ≥ 0 of an L1 term λ₁(‖w‖₁ + |b|) in the objective (0: none), for a sparse model:
   * `cd` or `lbfgs` with a smooth loss (λ = 0: L1 alone, liblinear's `-s 6`; λ > 0: the
   * elastic net), `sgd` and `naive-sgd` (truncated gradient; on one thread), or `adagrad`
   * and `naive-adagrad`.
   */
  double l1;
  /**
   * Non-zero trains on the features scaled as `sparselin train --scale max-abs` scales
   * them: each divided by the power of two at or above its largest |value| (by the
   * resumed model's scales when it has them, or the initial model's). The model returned
   * is of the original features, exactly, and keeps the scales; the dataset handle is left
   * as it is (the run reads a scaled copy: a dataset's values, or rows given in memory
   * whole).
   */
  uint8_t scale;
  /**
   * liblinear's and scikit-learn's C in place of `lambda` when positive: λ = 1/(C·m), m
   * the rows given (each fold's own in [`sl_cross_validate`]; with `early_stop`, the rows
   * held out too); 0 leaves `lambda` as set.
   */
  double cost;
  /**
   * Batch solvers: non-zero fits no bias (b = 0), as liblinear does without `-B` (its
   * default) and scikit-learn with `fit_intercept=False`.
   */
  uint8_t no_bias;
  /**
   * Online learners: N > 0 holds out a share of the rows (`holdout`), scores them after
   * every epoch, and stops once N epochs in a row have not lowered their mean loss by more
   * than `early_stop_tolerance` of its best; the model is the best epoch's (`sparselin
   * train --early-stop N`; Vowpal Wabbit's `--early_terminate`, scikit-learn's
   * `early_stopping`). Without `epochs` or `steps`, at most 100 epochs. 0: no early
   * stopping.
   */
  uint32_t early_stop;
  /**
   * With `early_stop`: the share of the rows held out, between 0 and 1 (0: the default,
   * 0.1).
   */
  double holdout;
  /**
   * With `early_stop`: the relative improvement an epoch must make, at least 0, taken as
   * given (0: any lower loss improves); [`sl_train_config_default`] sets 1e-3.
   */
  double early_stop_tolerance;
  /**
   * `dcd` with `hinge` loss in [`sl_train_one_vs_rest`]: non-zero fits the classes' models
   * together by Crammer and Singer's multiclass SVM (liblinear's `-s 4`) instead of each
   * against the rest.
   */
  uint8_t crammer_singer;
  /**
   * `adagrad`, `naive-adagrad` and the attribute-efficient learners: the step η > 0
   * (`sparselin train --eta`); 0: the learner's default.
   */
  double eta;
} SlTrainConfig;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * The message of the last failed call on this thread ("" if none, or while the thread's
 * storage is being torn down). The pointer stays valid until the next failing call on the
 * same thread.
 */
const char *sl_last_error(void);

/**
 * The library's version, e.g. "0.1.0" (static storage).
 */
const char *sl_version(void);

/**
 * Open a dataset directory or a LIBSVM text file (gzip ok; `-` reads standard input) into
 * `*out`. A text file's values are stored as `float`, as `sparselin convert` stores them by
 * default (a value that `float` cannot hold is an error naming it); for `double` values,
 * convert the file with `--values f64` and open the dataset directory, or build the dataset
 * with `sl_dataset_from_csr`.
 *
 * # Safety
 * `path` is a NUL-terminated string; `out` is valid for one pointer write.
 */
enum SlStatus sl_dataset_open(const char *path, struct SlDataset **out);

/**
 * Build a dataset from CSR arrays (copied): `labels[n_rows]` (finite), `offsets[n_rows + 1]`
 * (from 0 to `nnz`, non-decreasing), `indices[nnz]` (0-based, strictly increasing within a
 * row, below `n_features` ≤ 2³²) and `values[nnz]` (finite), or `values` NULL for binary
 * data (every value 1). `nnz` is passed on its own, as the length of the two arrays, and
 * must equal `offsets[n_rows]`: a wrong last offset is then an error, not a read past the
 * arrays.
 *
 * # Safety
 * Each array is NULL or holds the stated number of elements; `offsets` must not be NULL;
 * `out` is valid for one pointer write.
 */
enum SlStatus sl_dataset_from_csr(size_t n_rows,
                                  size_t n_features,
                                  size_t nnz,
                                  const double *labels,
                                  const uint64_t *offsets,
                                  const uint32_t *indices,
                                  const double *values,
                                  struct SlDataset **out);

/**
 * VW's defaults: 18 bits, no interactions, nothing dropped, names of digits read as
 * numbers, labels required.
 */
struct SlVwOptions sl_vw_options_default(void);

/**
 * Read Vowpal Wabbit text (gzip ok; `-` reads standard input) into `*out`, its names hashed
 * as `options` say (NULL: [`sl_vw_options_default`]) into 2^bits columns, exactly as
 * `sparselin convert --format vw` hashes them, values stored as `float`. Importance weights
 * other than 1 weigh the rows in [`sl_train`], [`sl_train_one_vs_rest`] and
 * [`sl_cross_validate`] (unless the configuration gives sample weights), as a dataset
 * converted from the text is weighed.
 *
 * # Safety
 * `path` is a NUL-terminated string; `options` is NULL or points to options whose strings
 * are NULL or NUL-terminated and whose `interactions` is NULL with a count of 0 or holds
 * `n_interactions` such strings; `out` is valid for one pointer write.
 */
enum SlStatus sl_dataset_open_vw(const char *path,
                                 const struct SlVwOptions *options,
                                 struct SlDataset **out);

/**
 * Rows of a dataset (0 for NULL).
 *
 * # Safety
 * `data` is NULL or a live dataset handle.
 */
size_t sl_dataset_rows(const struct SlDataset *data);

/**
 * Features (columns) of a dataset (0 for NULL).
 *
 * # Safety
 * `data` is NULL or a live dataset handle.
 */
size_t sl_dataset_features(const struct SlDataset *data);

/**
 * Release a dataset (NULL is ignored).
 *
 * # Safety
 * `data` is NULL or a live dataset handle, not used afterwards.
 */
void sl_dataset_free(struct SlDataset *data);

/**
 * The defaults: ASGD, the learner's default loss, λ = 10⁻⁴, seed 1, a regularized bias.
 */
struct SlTrainConfig sl_train_config_default(void);

/**
 * Train on `data` as `config` says (NULL: [`sl_train_config_default`]) into `*out`. Without
 * sample weights in `config`, a dataset that stores weights (converted from Vowpal Wabbit
 * text, or with `sparselin convert --sample-weights`) is weighed by those, as
 * `sparselin train` weighs it; so are [`sl_train_one_vs_rest`] and [`sl_cross_validate`].
 *
 * # Safety
 * `data` is a live dataset handle; `config` is NULL or points to a config whose strings are
 * NULL or NUL-terminated, whose initial and resumed models are NULL or live model handles
 * and whose sample weights are NULL or `n_sample_weights` readable doubles; `out` is valid for one pointer
 * write.
 */
enum SlStatus sl_train(const struct SlDataset *data,
                       const struct SlTrainConfig *config,
                       struct SlModel **out);

/**
 * Write one value per row of `data` into `out[0..rows]` (`out_len` ≥ rows): the raw score
 * w·x + b if `raw` is non-zero, else the prediction (±1 for classification losses, the mean
 * e^(w·x + b) for Poisson loss, the score for the other regressions; NaN for a NaN score).
 *
 * # Safety
 * `model` and `data` are live handles; `out` holds `out_len` writable doubles.
 */
enum SlStatus sl_predict(const struct SlModel *model,
                         const struct SlDataset *data,
                         uint8_t raw,
                         double *out,
                         size_t out_len);

/**
 * Write P(label = +1) = 1/(1 + e^(−score)) for every row of `data` into `out[0..rows]`
 * (`out_len` ≥ rows), as liblinear's `predict_probability`. Only a model trained with log
 * loss has such probabilities: any other is refused with `SL_STATUS_INVALID_ARGUMENT`.
 *
 * # Safety
 * `model` and `data` are live handles; `out` holds `out_len` writable doubles.
 */
enum SlStatus sl_predict_probabilities(const struct SlModel *model,
                                       const struct SlDataset *data,
                                       double *out,
                                       size_t out_len);

/**
 * k-fold cross-validation, as liblinear's `cross_validation`: train `folds` models as
 * `config` says (NULL: [`sl_train_config_default`]), each on all folds but one (rows shuffled
 * with the config's seed and dealt to the folds, stratified by class for the classification
 * losses), and write into `out[0..rows]` (`out_len` ≥ rows) each row's raw score w·x + b by
 * the model that did not see it: its sign is the held-out class, and for log loss
 * 1/(1 + e^(−score)) its probability. `folds` is from 2 to the number of rows.
 *
 * # Safety
 * `data` is a live dataset handle; `config` is NULL or points to a config whose strings are
 * NULL or NUL-terminated, whose initial and resumed models are NULL or live model handles
 * and whose sample weights are NULL or `n_sample_weights` readable doubles; `out` holds `out_len` writable
 * doubles.
 */
enum SlStatus sl_cross_validate(const struct SlDataset *data,
                                const struct SlTrainConfig *config,
                                size_t folds,
                                double *out,
                                size_t out_len);

/**
 * A search over a grid, as liblinear's `find_parameters` (`train -C`): cross-validate on
 * `folds` folds (dealt as [`sl_cross_validate`] deals them, the same folds for every value)
 * each of the `n_values` values at `values` of the strength named `strength` — `"lambda"`,
 * `"cost"` (liblinear's C: λ = 1/(C·m) of each fold's m rows) or `"l1"` (λ₁ of the L1 term)
 * — in place of the config's. The grid runs from the value that regularizes most, each
 * fold's batch solve starting from its solution at the value before (dcd from its dual
 * variables, the other solvers from the weights) unless `cold` is non-zero, which starts
 * each from zero. Writes into `scores[i]` (NULL: not written; else `n_values` doubles) the
 * mean held-out score of `values[i]` — the error rate of a classifier, the mean pinball loss
 * of a quantile model, the mean deviance of a Poisson model, else the RMSE — and into `*best` (NULL: not written) the value of the
 * lowest, the one that regularizes most of a tie. Binary classification and regression (for
 * more classes, the command line's `train --cv K --cost-grid ...`).
 *
 * # Safety
 * As [`sl_cross_validate`]; `strength` is a NUL-terminated string; `values` holds
 * `n_values` readable doubles; `scores` is NULL or holds `n_values` writable doubles; `best`
 * is NULL or valid for one double write.
 */
enum SlStatus sl_cross_validate_grid(const struct SlDataset *data,
                                     const struct SlTrainConfig *config,
                                     size_t folds,
                                     const char *strength,
                                     const double *values,
                                     size_t n_values,
                                     uint8_t cold,
                                     double *scores,
                                     double *best);

/**
 * Save a model file atomically (f64 weights).
 *
 * # Safety
 * `model` is a live handle; `path` is a NUL-terminated string.
 */
enum SlStatus sl_model_save(const struct SlModel *model, const char *path);

/**
 * Load a model file into `*out`.
 *
 * # Safety
 * `path` is a NUL-terminated string; `out` is valid for one pointer write.
 */
enum SlStatus sl_model_load(const char *path, struct SlModel **out);

/**
 * Number of weights of a model (0 for NULL).
 *
 * # Safety
 * `model` is NULL or a live model handle.
 */
size_t sl_model_features(const struct SlModel *model);

/**
 * Copy the weights into `weights[0..features]` (`len` ≥ features) and the bias into `*bias`
 * (either output may be NULL to skip it).
 *
 * # Safety
 * `model` is a live handle; `weights` is NULL or holds `len` writable doubles; `bias` is
 * NULL or writable.
 */
enum SlStatus sl_model_weights(const struct SlModel *model,
                               double *weights,
                               size_t len,
                               double *bias);

/**
 * Score one row, given as `nnz` parallel `indices` (0-based, any order) and `values` (NULL:
 * every value 1), into `*out`: the raw score w·x + b if `raw` is non-zero, else the
 * prediction (±1 for classification losses, e^score for Poisson loss; NaN for a NaN score).
 * An index the model has no weight for weighs 0. Indices in increasing order are summed as `sl_predict` sums a
 * dataset's row, so the two agree bit for bit on the same `double` values; in any other
 * order the sum may differ from it by rounding.
 * This is liblinear's `predict_values` for one `feature_node` array: no dataset to build.
 *
 * # Safety
 * `model` is a live handle; `indices` and `values` are NULL or hold `nnz` elements (`indices`
 * may be NULL only when `nnz` is 0); `out` is writable.
 */
enum SlStatus sl_model_score_row(const struct SlModel *model,
                                 size_t nnz,
                                 const uint32_t *indices,
                                 const double *values,
                                 uint8_t raw,
                                 double *out);

/**
 * Release a model (NULL is ignored).
 *
 * # Safety
 * `model` is NULL or a live model handle, not used afterwards.
 */
void sl_model_free(struct SlModel *model);

/**
 * Train one model per class of `data` as `config` says (NULL: [`sl_train_config_default`])
 * into `*out`: liblinear's multiclass training, one class against the rest
 * ([`Trainer::train_one_vs_rest`]). The labels must be whole numbers, at least two of them;
 * class weights, if any, name classes by label (`3=2,7=0.5`) or are `balanced`; the config's
 * initial model and resume settings must be unset.
 *
 * # Safety
 * As [`sl_train`], with `out` valid for one pointer write.
 */
enum SlStatus sl_train_one_vs_rest(const struct SlDataset *data,
                                   const struct SlTrainConfig *config,
                                   struct SlClassifier **out);

/**
 * Number of classes of a classifier (0 for NULL).
 *
 * # Safety
 * `classifier` is NULL or a live classifier handle.
 */
size_t sl_classifier_class_count(const struct SlClassifier *classifier);

/**
 * Copy the class labels, increasing, into `out[0..classes]` (`out_len` ≥ classes): the
 * order of [`sl_classifier_scores`]'s columns.
 *
 * # Safety
 * `classifier` is a live handle; `out` holds `out_len` writable doubles.
 */
enum SlStatus sl_classifier_classes(const struct SlClassifier *classifier,
                                    double *out,
                                    size_t out_len);

/**
 * Write each row's predicted class (the class of highest score) into `out[0..rows]`
 * (`out_len` ≥ rows).
 *
 * # Safety
 * `classifier` and `data` are live handles; `out` holds `out_len` writable doubles.
 */
enum SlStatus sl_classifier_predict(const struct SlClassifier *classifier,
                                    const struct SlDataset *data,
                                    double *out,
                                    size_t out_len);

/**
 * Write every row's score under each class's model, row by row, into
 * `out[0..rows × classes]` (`out_len` ≥ rows × classes): `out[i × classes + k]` is row i's
 * w·x + b of class k, in the order of [`sl_classifier_classes`].
 *
 * # Safety
 * `classifier` and `data` are live handles; `out` holds `out_len` writable doubles.
 */
enum SlStatus sl_classifier_scores(const struct SlClassifier *classifier,
                                   const struct SlDataset *data,
                                   double *out,
                                   size_t out_len);

/**
 * Save a classifier file atomically (f64 weights).
 *
 * # Safety
 * `classifier` is a live handle; `path` is a NUL-terminated string.
 */
enum SlStatus sl_classifier_save(const struct SlClassifier *classifier, const char *path);

/**
 * Load a classifier file (written by [`sl_classifier_save`] or `sparselin train` on data of
 * more than two classes) into `*out`.
 *
 * # Safety
 * `path` is a NUL-terminated string; `out` is valid for one pointer write.
 */
enum SlStatus sl_classifier_load(const char *path, struct SlClassifier **out);

/**
 * Release a classifier (NULL is ignored).
 *
 * # Safety
 * `classifier` is NULL or a live classifier handle, not used afterwards.
 */
void sl_classifier_free(struct SlClassifier *classifier);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* SPARSELIN_H */
