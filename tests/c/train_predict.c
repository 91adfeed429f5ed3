/* Trains through the C ABI and prints what the Rust side checks (tests/ffi_c.rs).
 *
 * usage: train_predict DATA.svm MODEL_PATH DATASET_DIR
 *
 * 1. Builds a toy dataset from CSR arrays, trains ASGD on it and checks it classifies its
 *    own four examples correctly; that a cost C trains lbfgs's model of lambda = 1/(C m),
 *    and no_bias one of bias 0;
 *    with log loss, that its probabilities are the logistic of its scores (and that the
 *    hinge model has none), and that 2-fold cross-validation scores each row with the sign
 *    of its label.
 * 2. Opens DATA.svm, trains ASGD (lambda 1e-3, 3 epochs, seed 7) and prints one raw score per
 *    row ("%.17g", exact for doubles); saves the model to MODEL_PATH, loads it back and
 *    checks the loaded model's scores are identical.
 * 3. Checks that bad input comes back as a status and a message: a missing file, CSR arrays
 *    with an out-of-range index, an unknown learner, a too-short output buffer.
 * 4. Trains a one-vs-rest classifier on three classes from CSR arrays, checks its classes,
 *    predictions and per-class scores, and that it saves and loads (to MODEL_PATH.ovr) while
 *    neither file kind loads as the other.
 * 5. Writes Vowpal Wabbit text (MODEL_PATH.vw), opens it with 10 hash bits and the
 *    interaction "ab", checks its shape, trains on it and predicts its labels; and that bad
 *    options come back as a status and a message.
 * 6. Trains L1-regularized logistic regression (lbfgs, lambda 0, l1 0.05) on CSR arrays whose
 *    label is the sign of one feature and checks that the noise features weigh exactly 0,
 *    and that an averaging learner refuses the L1 term.
 * 7. Trains on CSR arrays of features of very different scales with `scale` set, and checks
 *    that the model is the one trained on the rows scaled by hand, each weight divided by its
 *    column's scale, exactly; that it scores the unscaled rows as that one scores the scaled
 *    rows, and cross-validates alike; and that DATASET_DIR (DATA.svm converted) trains scaled
 *    to the model of DATA.svm.
 *
 * Exits 0 on success, 1 with a message on stderr otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparselin.h"

static int failures = 0;

#define CHECK(cond, what)                                                       \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "FAILED: %s (last error: %s)\n", what, sl_last_error());  \
      failures++;                                                               \
    }                                                                           \
  } while (0)

static void toy(void) {
  const double labels[] = {1.0, -1.0, 1.0, -1.0};
  const uint64_t offsets[] = {0, 1, 2, 4, 5};
  const uint32_t indices[] = {0, 1, 0, 1, 1};
  const double values[] = {1.0, 1.0, 2.0, 0.5, 3.0};
  SlDataset *data = NULL;
  CHECK(sl_dataset_from_csr(4, 2, 5, labels, offsets, indices, values, &data) == SL_STATUS_OK,
        "toy dataset from CSR arrays");
  CHECK(sl_dataset_rows(data) == 4 && sl_dataset_features(data) == 2, "toy dataset shape");
  SlTrainConfig config = sl_train_config_default();
  config.lambda = 1e-3;
  config.epochs = 20;
  SlModel *model = NULL;
  CHECK(sl_train(data, &config, &model) == SL_STATUS_OK, "train on the toy");
  double predictions[4];
  CHECK(sl_predict(model, data, 0, predictions, 4) == SL_STATUS_OK, "predict the toy");
  for (int i = 0; i < 4; i++) CHECK(predictions[i] == labels[i], "toy prediction = label");
  CHECK(sl_predict(model, data, 0, predictions, 3) == SL_STATUS_INVALID_ARGUMENT,
        "a too-short buffer is refused");
  CHECK(strstr(sl_last_error(), "4 rows") != NULL, "the message says why");
  CHECK(sl_predict(model, data, 0, NULL, 4) == SL_STATUS_INVALID_ARGUMENT,
        "a NULL buffer is refused");
  CHECK(strstr(sl_last_error(), "NULL") != NULL, "the message says the buffer is NULL");
  double raw[4], one = 0.0, beyond = 0.0, label = 0.0;
  CHECK(sl_predict(model, data, 1, raw, 4) == SL_STATUS_OK, "raw scores of the toy");
  const uint32_t row_indices[] = {0, 1}, with_unseen[] = {1, 9, 0};
  const double row_values[] = {2.0, 0.5}, unseen_values[] = {0.5, 7.0, 2.0};
  CHECK(sl_model_score_row(model, 2, row_indices, row_values, 1, &one) == SL_STATUS_OK,
        "score one row");
  CHECK(one == raw[2], "one row scores as sl_predict scores it");
  CHECK(sl_model_score_row(model, 3, with_unseen, unseen_values, 1, &beyond) == SL_STATUS_OK &&
            beyond == raw[2],
        "an index beyond the model weighs 0, in any order");
  CHECK(sl_model_score_row(model, 2, row_indices, row_values, 0, &label) == SL_STATUS_OK &&
            label == labels[2],
        "one row's prediction");
  CHECK(sl_model_score_row(model, 2, NULL, row_values, 1, &one) == SL_STATUS_INVALID_ARGUMENT,
        "NULL indices with nnz > 0");
  double probabilities[4];
  CHECK(sl_predict_probabilities(model, data, probabilities, 4) == SL_STATUS_INVALID_ARGUMENT,
        "a hinge model has no probabilities");
  CHECK(strstr(sl_last_error(), "hinge") != NULL, "the message names the model's loss");
  sl_model_free(model);

  SlTrainConfig by_cost = sl_train_config_default(), by_lambda = sl_train_config_default();
  by_cost.learner = by_lambda.learner = "lbfgs";
  by_cost.cost = 2.0;
  by_lambda.lambda = 1.0 / (2.0 * 4.0);
  SlModel *with_cost = NULL, *with_lambda = NULL;
  CHECK(sl_train(data, &by_cost, &with_cost) == SL_STATUS_OK &&
            sl_train(data, &by_lambda, &with_lambda) == SL_STATUS_OK,
        "train with a cost and with its lambda");
  double wc[2], wl[2];
  CHECK(sl_model_weights(with_cost, wc, 2, NULL) == SL_STATUS_OK &&
            sl_model_weights(with_lambda, wl, 2, NULL) == SL_STATUS_OK &&
            memcmp(wc, wl, sizeof wc) == 0,
        "cost C trains the model of lambda = 1/(C m)");
  by_cost.cost = -1.0;
  CHECK(sl_train(data, &by_cost, &model) == SL_STATUS_CONFIG, "a negative cost is refused");
  SlTrainConfig unbiased = by_lambda;
  unbiased.no_bias = 1;
  double b = 1.0;
  CHECK(sl_train(data, &unbiased, &model) == SL_STATUS_OK &&
            sl_model_weights(model, NULL, 0, &b) == SL_STATUS_OK && b == 0.0,
        "no_bias trains a model of bias 0");
  sl_model_free(model);
  unbiased.learner = "asgd";
  CHECK(sl_train(data, &unbiased, &model) == SL_STATUS_CONFIG, "no_bias is for batch solvers");
  sl_model_free(with_cost);
  sl_model_free(with_lambda);

  config.loss = "log";
  CHECK(sl_train(data, &config, &model) == SL_STATUS_OK, "train the toy with log loss");
  CHECK(sl_predict(model, data, 1, raw, 4) == SL_STATUS_OK, "log-odds of the toy");
  CHECK(sl_predict_probabilities(model, data, probabilities, 3) == SL_STATUS_INVALID_ARGUMENT,
        "a too-short buffer is refused for probabilities too");
  CHECK(sl_predict_probabilities(model, data, probabilities, 4) == SL_STATUS_OK,
        "probabilities of the toy");
  for (int i = 0; i < 4; i++) {
    CHECK(fabs(probabilities[i] - 1.0 / (1.0 + exp(-raw[i]))) <= 1e-15,
          "probability = 1/(1 + e^-score)");
    CHECK((probabilities[i] > 0.5) == (labels[i] > 0), "the likelier class is the label");
  }
  sl_model_free(model);

  /* Early stopping: half of each class held out here, scored every epoch. */
  SlTrainConfig stopping = config;
  stopping.epochs = 0;
  stopping.early_stop = 2;
  stopping.holdout = 0.5;
  CHECK(sl_train(data, &stopping, &model) == SL_STATUS_OK, "train with early stopping");
  sl_model_free(model);
  stopping.holdout = 1.0;
  CHECK(sl_train(data, &stopping, &model) == SL_STATUS_CONFIG &&
            strstr(sl_last_error(), "share held out") != NULL,
        "a holdout of every row is refused");
  stopping.holdout = 0.3;
  stopping.early_stop = 0;
  CHECK(sl_train(data, &stopping, &model) == SL_STATUS_CONFIG &&
            strstr(sl_last_error(), "set early_stop too") != NULL,
        "a holdout without early stopping is refused");
  stopping.holdout = 0.0;
  stopping.early_stop = 2;
  stopping.learner = "lbfgs";
  CHECK(sl_train(data, &stopping, &model) == SL_STATUS_CONFIG &&
            strstr(sl_last_error(), "early_stopping does not apply") != NULL,
        "early stopping is for the online learners");

  double held_out[4];
  CHECK(sl_cross_validate(data, &config, 2, held_out, 4) == SL_STATUS_OK, "2-fold cross-validation");
  for (int i = 0; i < 4; i++)
    CHECK((held_out[i] > 0) == (labels[i] > 0), "each row's held-out score has its label's sign");
  CHECK(sl_cross_validate(data, &config, 2, held_out, 3) == SL_STATUS_INVALID_ARGUMENT,
        "a too-short buffer is refused for cross-validation");
  CHECK(sl_cross_validate(data, &config, 5, held_out, 4) == SL_STATUS_CONFIG,
        "more folds than rows");
  CHECK(strstr(sl_last_error(), "from 2 folds") != NULL, "the message says how many folds");
  sl_dataset_free(data);
}

static void errors(void) {
  SlDataset *data = NULL;
  CHECK(sl_dataset_open("/no/such/file.svm", &data) == SL_STATUS_DATA, "missing file");
  CHECK(strstr(sl_last_error(), "/no/such/file.svm") != NULL, "the message names the file");
  CHECK(data == NULL, "no handle on failure");
  const double labels[] = {1.0};
  const uint64_t offsets[] = {0, 1};
  const uint32_t indices[] = {5};
  CHECK(sl_dataset_from_csr(1, 3, 1, labels, offsets, indices, NULL, &data) == SL_STATUS_DATA,
        "an index beyond n_features");
  const uint64_t long_offsets[] = {0, 100000000};
  const uint32_t ok[] = {2};
  CHECK(sl_dataset_from_csr(1, 3, 1, labels, long_offsets, ok, NULL, &data) == SL_STATUS_DATA,
        "a last offset other than nnz, refused before the arrays are read");
  CHECK(strstr(sl_last_error(), "nnz = 1") != NULL, "the message names both counts");
  const double nan_label[] = {0.0 / 0.0};
  CHECK(sl_dataset_from_csr(1, 3, 1, nan_label, offsets, ok, NULL, &data) == SL_STATUS_DATA,
        "a NaN label");
  CHECK(sl_dataset_from_csr(1, 3, 1, labels, offsets, ok, NULL, &data) == SL_STATUS_OK,
        "binary CSR (values NULL)");
  SlTrainConfig config = sl_train_config_default();
  config.learner = "no-such-learner";
  SlModel *model = NULL;
  CHECK(sl_train(data, &config, &model) == SL_STATUS_CONFIG, "unknown learner");
  CHECK(strstr(sl_last_error(), "no-such-learner") != NULL, "the message names it");
  CHECK(sl_train(NULL, NULL, &model) == SL_STATUS_INVALID_ARGUMENT, "NULL dataset");
  sl_dataset_free(data);
  sl_dataset_free(NULL);
  sl_model_free(NULL);
}

static void multiclass(const char *binary_model_path, const char *path) {
  /* Nine rows, three per class (labels 1, 2, 3), class c around feature c - 1. */
  const double labels[] = {1, 2, 3, 1, 2, 3, 1, 2, 3};
  const uint64_t offsets[] = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18};
  const uint32_t indices[] = {0, 3, 1, 3, 2, 3, 0, 3, 1, 3, 2, 3, 0, 3, 1, 3, 2, 3};
  const double values[] = {1.0, 0.1, 1.2, 0.2, 0.9, 0.3, 1.1, 0.2, 0.8, 0.1,
                           1.3, 0.2, 0.7, 0.3, 1.0, 0.3, 1.2, 0.1};
  SlDataset *data = NULL;
  CHECK(sl_dataset_from_csr(9, 4, 18, labels, offsets, indices, values, &data) == SL_STATUS_OK,
        "three classes from CSR arrays");
  SlTrainConfig config = sl_train_config_default();
  config.learner = "sublbfgs";
  config.lambda = 1e-2;
  SlModel *model = NULL;
  CHECK(sl_train(data, &config, &model) == SL_STATUS_CONFIG, "sl_train refuses three classes");
  CHECK(strstr(sl_last_error(), "sl_train_one_vs_rest") != NULL, "and names the way");
  SlClassifier *classifier = NULL;
  CHECK(sl_train_one_vs_rest(data, &config, &classifier) == SL_STATUS_OK, "one-vs-rest");
  CHECK(sl_classifier_class_count(classifier) == 3, "three classes");
  double classes[3], predicted[9], scores[27], loaded_predicted[9];
  CHECK(sl_classifier_classes(classifier, classes, 3) == SL_STATUS_OK &&
            classes[0] == 1 && classes[1] == 2 && classes[2] == 3,
        "the classes, increasing");
  CHECK(sl_classifier_classes(classifier, classes, 2) == SL_STATUS_INVALID_ARGUMENT,
        "a too-short class buffer");
  CHECK(sl_classifier_predict(classifier, data, predicted, 9) == SL_STATUS_OK, "predict");
  CHECK(sl_classifier_scores(classifier, data, scores, 26) == SL_STATUS_INVALID_ARGUMENT,
        "a score buffer short of rows x classes");
  CHECK(strstr(sl_last_error(), "need 3 each") != NULL, "the message says why");
  CHECK(sl_classifier_scores(classifier, data, scores, 27) == SL_STATUS_OK, "scores");
  for (int i = 0; i < 9; i++) {
    CHECK(predicted[i] == labels[i], "each row predicted its class");
    int best = 0;
    for (int k = 1; k < 3; k++)
      if (scores[3 * i + k] > scores[3 * i + best]) best = k;
    CHECK(classes[best] == predicted[i], "the prediction is the class of highest score");
  }
  /* Class weights name classes by label, as liblinear's -w2 3 does. */
  SlClassifier *weighted = NULL;
  config.class_weights = "4=2";
  CHECK(sl_train_one_vs_rest(data, &config, &weighted) == SL_STATUS_CONFIG,
        "a weight for a label no row has");
  CHECK(strstr(sl_last_error(), "label 4") != NULL, "names the label");
  config.class_weights = "2=3";
  double weighted_scores[27];
  CHECK(sl_train_one_vs_rest(data, &config, &weighted) == SL_STATUS_OK &&
            sl_classifier_scores(weighted, data, weighted_scores, 27) == SL_STATUS_OK,
        "one-vs-rest with class 2 weighted");
  CHECK(weighted_scores[0] == scores[0] && weighted_scores[1] != scores[1],
        "class 2's model changes, class 1's does not");
  sl_classifier_free(weighted);
  /* Multinomial logistic regression: the probabilities are the softmax of the scores. */
  SlTrainConfig softmax = sl_train_config_default();
  softmax.learner = "lbfgs";
  softmax.loss = "log";
  softmax.lambda = 1e-2;
  softmax.multinomial = 1;
  SlClassifier *multinomial = NULL;
  double multinomial_scores[27];
  CHECK(sl_train_one_vs_rest(data, &softmax, &multinomial) == SL_STATUS_OK &&
            sl_classifier_scores(multinomial, data, multinomial_scores, 27) == SL_STATUS_OK,
        "multinomial logistic regression");
  softmax.learner = "sublbfgs";
  SlClassifier *refused = NULL;
  CHECK(sl_train_one_vs_rest(data, &softmax, &refused) == SL_STATUS_CONFIG,
        "multinomial is for lbfgs");
  sl_classifier_free(multinomial);
  /* Crammer and Singer's multiclass SVM (liblinear's -s 4): dcd with hinge loss. */
  SlTrainConfig cs = sl_train_config_default();
  cs.learner = "dcd";
  cs.loss = "hinge";
  cs.lambda = 1e-1;
  cs.crammer_singer = 1;
  SlClassifier *crammer_singer = NULL, *each_against_rest = NULL;
  double cs_scores[27], ovr_scores[27];
  CHECK(sl_train_one_vs_rest(data, &cs, &crammer_singer) == SL_STATUS_OK &&
            sl_classifier_scores(crammer_singer, data, cs_scores, 27) == SL_STATUS_OK,
        "Crammer-Singer multiclass SVM");
  /* Not the classes each against the rest, which the same settings without the flag train. */
  cs.crammer_singer = 0;
  CHECK(sl_train_one_vs_rest(data, &cs, &each_against_rest) == SL_STATUS_OK &&
            sl_classifier_scores(each_against_rest, data, ovr_scores, 27) == SL_STATUS_OK,
        "dcd one-vs-rest");
  int scores_differ = 0;
  for (int i = 0; i < 27; i++) {
    scores_differ |= cs_scores[i] != ovr_scores[i];
  }
  CHECK(scores_differ, "crammer_singer fits the classes together, not each against the rest");
  sl_classifier_free(crammer_singer);
  sl_classifier_free(each_against_rest);
  cs.crammer_singer = 1;
  cs.learner = "lbfgs";
  CHECK(sl_train_one_vs_rest(data, &cs, &refused) == SL_STATUS_CONFIG,
        "crammer_singer is for dcd");
  /* ASGD trains the classes in one pass, or each in passes of its own: the same steps. */
  SlTrainConfig online = sl_train_config_default();
  online.learner = "asgd";
  online.lambda = 1e-2;
  SlClassifier *joint = NULL, *apart = NULL;
  double joint_scores[27], apart_scores[27];
  CHECK(sl_train_one_vs_rest(data, &online, &joint) == SL_STATUS_OK &&
            sl_classifier_scores(joint, data, joint_scores, 27) == SL_STATUS_OK,
        "asgd, the classes in one pass");
  online.separate_class_passes = 1;
  CHECK(sl_train_one_vs_rest(data, &online, &apart) == SL_STATUS_OK &&
            sl_classifier_scores(apart, data, apart_scores, 27) == SL_STATUS_OK,
        "asgd, each class in passes of its own");
  for (int i = 0; i < 27; i++) {
    double gap = joint_scores[i] - apart_scores[i];
    double scale = apart_scores[i] < 0 ? 1 - apart_scores[i] : 1 + apart_scores[i];
    CHECK(gap <= 1e-12 * scale && -gap <= 1e-12 * scale && apart_scores[i] != 0,
          "each class takes the same steps either way");
  }
  sl_classifier_free(joint);
  sl_classifier_free(apart);
  CHECK(sl_classifier_save(classifier, path) == SL_STATUS_OK, "save the classifier");
  SlClassifier *loaded = NULL;
  CHECK(sl_classifier_load(path, &loaded) == SL_STATUS_OK, "load the classifier");
  CHECK(sl_classifier_predict(loaded, data, loaded_predicted, 9) == SL_STATUS_OK &&
            memcmp(predicted, loaded_predicted, sizeof predicted) == 0,
        "the loaded classifier predicts the same");
  CHECK(sl_model_load(path, &model) == SL_STATUS_MODEL, "a classifier is no model");
  CHECK(strstr(sl_last_error(), "one-vs-rest classifier of 3 classes") != NULL, "it says so");
  SlClassifier *not_one = NULL;
  CHECK(sl_classifier_load(binary_model_path, &not_one) == SL_STATUS_MODEL,
        "a model is no classifier");
  sl_classifier_free(loaded);
  sl_classifier_free(classifier);
  sl_classifier_free(NULL);
  sl_dataset_free(data);
}

static void vowpal_wabbit(const char *path) {
  FILE *text = fopen(path, "w");
  CHECK(text != NULL, "write the VW text");
  if (text == NULL) return;
  for (int i = 0; i < 40; i++)
    fprintf(text, "%s%s |a w%d |b v%d x:%d\n", i % 2 ? "1" : "-1", i % 4 == 1 ? " 2" : "",
            i % 2, i % 3, i % 5);
  fclose(text);
  const char *interactions[] = {"ab"};
  SlVwOptions options = sl_vw_options_default();
  options.bits = 10;
  options.interactions = interactions;
  options.n_interactions = 1;
  SlDataset *data = NULL;
  CHECK(sl_dataset_open_vw(path, &options, &data) == SL_STATUS_OK, "open VW text");
  CHECK(sl_dataset_rows(data) == 40 && sl_dataset_features(data) == 1024, "VW text's shape");
  SlTrainConfig config = sl_train_config_default();
  config.epochs = 10;
  SlModel *model = NULL;
  CHECK(sl_train(data, &config, &model) == SL_STATUS_OK, "train on VW text");
  double predictions[40];
  CHECK(sl_predict(model, data, 0, predictions, 40) == SL_STATUS_OK, "predict VW text");
  for (int i = 0; i < 40; i++)
    CHECK(predictions[i] == (i % 2 ? 1.0 : -1.0), "VW text's prediction = label");
  sl_model_free(model);
  sl_dataset_free(data);
  SlDataset *refused = NULL;
  options.bits = 40;
  CHECK(sl_dataset_open_vw(path, &options, &refused) == SL_STATUS_INVALID_ARGUMENT,
        "40 hash bits are refused");
  CHECK(strstr(sl_last_error(), "hash bits") != NULL, "the message says why");
  CHECK(refused == NULL, "no handle on failure");
}

static void l1(void) {
  /* Eight rows: the label is the sign of feature 0; features 1 and 2 are small noise. */
  const double labels[] = {1, -1, 1, -1, 1, -1, 1, -1};
  const uint64_t offsets[] = {0, 3, 6, 9, 12, 15, 18, 21, 24};
  const uint32_t indices[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2,
                              0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
  const double values[] = {0.9, 0.1, -0.2, -0.7, 0.2, 0.1, 1.0, -0.1, 0.1, -0.8, -0.2, -0.1,
                           0.6, 0.1, 0.2, -1.0, 0.1, -0.2, 0.8, -0.2, -0.1, -0.6, -0.1, 0.2};
  SlDataset *data = NULL;
  CHECK(sl_dataset_from_csr(8, 3, 24, labels, offsets, indices, values, &data) == SL_STATUS_OK,
        "L1 data from CSR arrays");
  SlTrainConfig config = sl_train_config_default();
  config.learner = "lbfgs";
  config.loss = "log";
  config.lambda = 0.0;
  config.l1 = 0.05;
  SlModel *model = NULL;
  CHECK(sl_train(data, &config, &model) == SL_STATUS_OK, "L1-regularized logistic regression");
  double weights[3], bias;
  CHECK(sl_model_weights(model, weights, 3, &bias) == SL_STATUS_OK, "its weights");
  CHECK(weights[0] > 0.0, "the informative feature weighs in");
  CHECK(weights[1] == 0.0 && weights[2] == 0.0, "the noise features weigh exactly 0");
  /* AdaGrad's dual averaging takes the L1 term too, and its step η. */
  config.learner = "adagrad";
  config.epochs = 20;
  SlModel *adagrad = NULL, *shorter = NULL;
  double adagrad_weights[3], shorter_weights[3];
  CHECK(sl_train(data, &config, &adagrad) == SL_STATUS_OK &&
            sl_model_weights(adagrad, adagrad_weights, 3, &bias) == SL_STATUS_OK,
        "adagrad with an L1 term");
  CHECK(adagrad_weights[0] > 0.0 && adagrad_weights[1] == 0.0 && adagrad_weights[2] == 0.0,
        "adagrad: the noise features weigh exactly 0");
  config.eta = 0.1;
  CHECK(sl_train(data, &config, &shorter) == SL_STATUS_OK &&
            sl_model_weights(shorter, shorter_weights, 3, &bias) == SL_STATUS_OK,
        "adagrad with a shorter step");
  CHECK(shorter_weights[0] != adagrad_weights[0], "eta changes the model");
  config.eta = -1.0;
  SlModel *refused = NULL;
  CHECK(sl_train(data, &config, &refused) == SL_STATUS_CONFIG, "a negative eta is refused");
  config.eta = 0.0;
  config.epochs = 0;
  sl_model_free(adagrad);
  sl_model_free(shorter);
  config.learner = "asgd";
  CHECK(sl_train(data, &config, &refused) == SL_STATUS_CONFIG, "asgd refuses an L1 term");
  CHECK(strstr(sl_last_error(), "L1") != NULL, "and says so");
  sl_model_free(model);
  sl_dataset_free(data);
}

static void scaled(const char *text_path, const char *dataset_dir) {
  /* Column 0: counts in the hundreds (largest 700, scale 2^10); column 1: rates in the
   * thousandths (largest 0.004, scale 2^-7). */
  const double labels[] = {1, -1, 1, -1, 1, -1};
  const uint64_t offsets[] = {0, 2, 4, 6, 8, 10, 12};
  const uint32_t indices[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  const double values[] = {700, 0.001, 120, 0.004, 650, 0.0015,
                           90,  0.003, 400, 0.0005, 300, 0.0035};
  const int exponent[] = {10, -7};
  double by_hand[12];
  for (int k = 0; k < 12; k++) by_hand[k] = ldexp(values[k], -exponent[indices[k]]);
  SlDataset *raw = NULL, *hand = NULL;
  CHECK(sl_dataset_from_csr(6, 2, 12, labels, offsets, indices, values, &raw) == SL_STATUS_OK &&
            sl_dataset_from_csr(6, 2, 12, labels, offsets, indices, by_hand, &hand) ==
                SL_STATUS_OK,
        "scaled: data from CSR arrays");
  SlTrainConfig config = sl_train_config_default();
  config.learner = "lbfgs";
  config.loss = "log";
  config.lambda = 1e-3;
  SlModel *flag = NULL, *manual = NULL;
  config.scale = 1;
  CHECK(sl_train(raw, &config, &flag) == SL_STATUS_OK, "train with scale set");
  config.scale = 0;
  CHECK(sl_train(hand, &config, &manual) == SL_STATUS_OK, "train on the rows scaled by hand");
  double w[2], v[2], b = 0.0, c = 1.0;
  CHECK(sl_model_weights(flag, w, 2, &b) == SL_STATUS_OK &&
            sl_model_weights(manual, v, 2, &c) == SL_STATUS_OK,
        "scaled: weights");
  CHECK(ldexp(w[0], exponent[0]) == v[0] && ldexp(w[1], exponent[1]) == v[1] && b == c,
        "the weights of the original features are the scaled ones divided by the scales");
  double p[6], q[6];
  CHECK(sl_predict(flag, raw, 1, p, 6) == SL_STATUS_OK &&
            sl_predict(manual, hand, 1, q, 6) == SL_STATUS_OK,
        "scaled: scores");
  CHECK(memcmp(p, q, sizeof p) == 0, "the model scores the unscaled rows as trained");
  config.scale = 1;
  CHECK(sl_cross_validate(raw, &config, 3, p, 6) == SL_STATUS_OK, "cross-validate scaled");
  config.scale = 0;
  CHECK(sl_cross_validate(hand, &config, 3, q, 6) == SL_STATUS_OK, "cross-validate by hand");
  CHECK(memcmp(p, q, sizeof p) == 0, "scaled cross-validation = by hand");
  sl_model_free(flag);
  sl_model_free(manual);
  sl_dataset_free(raw);
  sl_dataset_free(hand);

  SlDataset *text = NULL, *dataset = NULL;
  CHECK(sl_dataset_open(text_path, &text) == SL_STATUS_OK &&
            sl_dataset_open(dataset_dir, &dataset) == SL_STATUS_OK,
        "scaled: open the text and its dataset");
  config.scale = 1;
  SlModel *from_text = NULL, *from_dataset = NULL;
  CHECK(sl_train(text, &config, &from_text) == SL_STATUS_OK &&
            sl_train(dataset, &config, &from_dataset) == SL_STATUS_OK,
        "train the text and its dataset scaled");
  size_t n = sl_dataset_features(text);
  double *a = malloc(n * sizeof(double)), *d = malloc(n * sizeof(double));
  CHECK(sl_model_weights(from_text, a, n, NULL) == SL_STATUS_OK &&
            sl_model_weights(from_dataset, d, n, NULL) == SL_STATUS_OK,
        "scaled: weights of the text and dataset models");
  CHECK(memcmp(a, d, n * sizeof(double)) == 0, "a dataset trains scaled as its text does");
  free(a);
  free(d);
  sl_model_free(from_text);
  sl_model_free(from_dataset);
  sl_dataset_free(text);
  sl_dataset_free(dataset);
}

/* The labels of a LIBSVM file (the first number of each line); *rows of them, malloc'd. */
static double *labels_of(const char *path, size_t *rows) {
  FILE *file = fopen(path, "r");
  size_t capacity = 64, n = 0;
  double *labels = malloc(capacity * sizeof(double));
  char line[4096];
  while (file != NULL && fgets(line, sizeof line, file) != NULL) {
    if (n == capacity) labels = realloc(labels, (capacity *= 2) * sizeof(double));
    labels[n++] = strtod(line, NULL);
  }
  if (file != NULL) fclose(file);
  *rows = n;
  return labels;
}

static void grid(const char *path) {
  SlDataset *data = NULL;
  CHECK(sl_dataset_open(path, &data) == SL_STATUS_OK, "open the file for a grid");
  size_t rows = sl_dataset_rows(data), n_labels = 0;
  double *labels = labels_of(path, &n_labels);
  CHECK(n_labels == rows, "a label per row");
  SlTrainConfig config = sl_train_config_default();
  config.learner = "dcd";
  config.loss = "squared-hinge";
  /* One row per fold: each fold's error is 0 or 1, and their mean the error of the held-out
     scores of sl_cross_validate. */
  const double costs[] = {1.0, 0.001, 0.01};
  double cold[3], warm[3], best_cold = 0.0, best_warm = 0.0;
  CHECK(sl_cross_validate_grid(data, &config, rows, "cost", costs, 3, 1, cold, &best_cold) ==
            SL_STATUS_OK,
        "a grid of C, each from zero");
  CHECK(sl_cross_validate_grid(data, &config, rows, "cost", costs, 3, 0, warm, &best_warm) ==
            SL_STATUS_OK,
        "a grid of C, warm-started");
  double *held_out = malloc(rows * sizeof(double));
  double lowest = 2.0, named = 0.0;
  for (size_t i = 0; i < 3; i++) {
    config.cost = costs[i];
    CHECK(sl_cross_validate(data, &config, rows, held_out, rows) == SL_STATUS_OK,
          "cross-validate one C");
    size_t wrong = 0;
    for (size_t r = 0; r < rows; r++) wrong += (held_out[r] > 0.0) != (labels[r] > 0.0);
    double error = (double)wrong / (double)rows;
    CHECK(cold[i] == error, "each C's score is its own cross-validation's error");
    CHECK(warm[i] == cold[i], "warm starts reach the same errors");
    if (error < lowest || (error == lowest && costs[i] < named)) {
      lowest = error;
      named = costs[i];
    }
  }
  CHECK(cold[1] > cold[0], "the smallest C regularizes too much on this data");
  CHECK(best_cold == named && best_warm == named, "the best C: the smallest of the lowest error");
  config.cost = 0.0;
  CHECK(sl_cross_validate_grid(data, &config, 3, "gamma", costs, 3, 0, NULL, NULL) ==
            SL_STATUS_INVALID_ARGUMENT,
        "an unknown strength is refused");
  CHECK(strstr(sl_last_error(), "gamma") != NULL, "and named");
  const double zero[] = {1.0, 0.0};
  CHECK(sl_cross_validate_grid(data, &config, 3, "lambda", zero, 2, 0, NULL, NULL) ==
            SL_STATUS_INVALID_ARGUMENT,
        "a value of 0 is refused");
  CHECK(sl_cross_validate_grid(data, &config, 3, NULL, costs, 3, 0, NULL, NULL) ==
            SL_STATUS_INVALID_ARGUMENT,
        "a NULL strength is refused");
  free(held_out);
  free(labels);
  sl_dataset_free(data);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DATA.svm MODEL_PATH DATASET_DIR\n", argv[0]);
    return 2;
  }
  toy();
  errors();
  l1();
  scaled(argv[1], argv[3]);
  grid(argv[1]);

  SlDataset *data = NULL;
  if (sl_dataset_open(argv[1], &data) != SL_STATUS_OK) {
    fprintf(stderr, "FAILED: open %s: %s\n", argv[1], sl_last_error());
    return 1;
  }
  SlTrainConfig config = sl_train_config_default();
  config.learner = "asgd";
  config.loss = "hinge";
  config.lambda = 1e-3;
  config.epochs = 3;
  config.seed = 7;
  SlModel *model = NULL;
  CHECK(sl_train(data, &config, &model) == SL_STATUS_OK, "train on the file");
  size_t rows = sl_dataset_rows(data);
  double *scores = malloc(rows * sizeof(double));
  double *again = malloc(rows * sizeof(double));
  CHECK(sl_predict(model, data, 1, scores, rows) == SL_STATUS_OK, "scores");
  CHECK(sl_model_save(model, argv[2]) == SL_STATUS_OK, "save");
  SlModel *loaded = NULL;
  CHECK(sl_model_load(argv[2], &loaded) == SL_STATUS_OK, "load");
  CHECK(sl_model_features(loaded) == sl_dataset_features(data), "loaded model's width");
  CHECK(sl_predict(loaded, data, 1, again, rows) == SL_STATUS_OK, "scores of the loaded model");
  CHECK(memcmp(scores, again, rows * sizeof(double)) == 0, "loaded model scores the same");
  for (size_t i = 0; i < rows; i++) printf("%.17g\n", scores[i]);
  free(scores);
  free(again);
  sl_model_free(loaded);
  sl_model_free(model);
  sl_dataset_free(data);

  char classifier_path[4096];
  snprintf(classifier_path, sizeof classifier_path, "%s.ovr", argv[2]);
  multiclass(argv[2], classifier_path);
  char vw_path[4096];
  snprintf(vw_path, sizeof vw_path, "%s.vw", argv[2]);
  vowpal_wabbit(vw_path);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  return 0;
}
