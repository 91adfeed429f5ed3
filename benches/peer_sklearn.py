#!/usr/bin/env python3
"""scikit-learn's averaged SGD as a peer of `sparselin train --algo asgd` (benches/run.py).

Usage: peer_sklearn.py TRAIN.svm TEST.svm N_FEATURES LAMBDA EPOCHS

SGDClassifier(loss='hinge', alpha=LAMBDA, average=True, max_iter=EPOCHS, tol=None,
shuffle=False): EPOCHS passes in file order, like `--sampling file-order`. Prints one JSON
object: seconds to load both files, seconds of fit() alone, and the test error rate.
"""
import json
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier


def main():
    train, test, n_features, lam, epochs = sys.argv[1:6]
    n_features, lam, epochs = int(n_features), float(lam), int(epochs)
    started = time.perf_counter()
    x, y = load_svmlight_file(train, n_features=n_features)
    x_test, y_test = load_svmlight_file(test, n_features=n_features)
    for m in (x, x_test):
        # SGDClassifier accepts only 32-bit sparse indices; the loader may return 64-bit ones.
        m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    load = time.perf_counter() - started
    model = SGDClassifier(
        loss="hinge", alpha=lam, average=True, max_iter=epochs, tol=None, shuffle=False
    )
    started = time.perf_counter()
    with warnings.catch_warnings():
        # max_iter passes without a tolerance is what is asked for, not a failure.
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, y)
    fit = time.perf_counter() - started
    error = float((model.predict(x_test) != y_test).mean())
    print(json.dumps({"load_seconds": load, "fit_seconds": fit, "test_error": error}))


if __name__ == "__main__":
    main()
