#!/usr/bin/env python3
"""Multinomial logistic regression against scikit-learn's LogisticRegression (PERF.md
"One-vs-rest (multiclass)", multinomial).

    python3 benches/multinomial_peers.py SPARSELIN TRAIN.svm TEST.svm N_FEATURES LAMBDA [ROUNDS]

Both minimize J(W) = (λ/2)‖W‖² + (1/m) Σ_i (log Σ_k e^(z_ik) − z_(i,y_i)), the bias a column
of ones inside W (sparselin's regularized bias; scikit-learn with fit_intercept=False on the
matrix with that column, C = 1/(λm)). Each round runs, alternated:
  * `sparselin train --algo lbfgs --loss log --multinomial` at `--tol` 1e-4 and its default
    1e-9 (the certificate ‖∇J‖²/(2λ) ≤ tol·J), every core; seconds = the summary's training
    seconds (parsing excluded);
  * LogisticRegression(solver='lbfgs') at its default tol (1e-4, on the projected gradient)
    and at tol=1e-8, max_iter=10000; seconds = fit() alone (the matrix loaded beforehand).
Prints per run: the median seconds, J's relative excess over the lowest J any run reached
(sparselin's J from its summary, scikit-learn's computed here), and the test error.
"""
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression


def main():
    sparselin, train, test, n, lam = sys.argv[1:6]
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    n, lam = int(n), float(lam)
    x, y = load_svmlight_file(train, n_features=n)
    xt, yt = load_svmlight_file(test, n_features=n)
    m = x.shape[0]
    ones = lambda a: sp.hstack([a, np.ones((a.shape[0], 1))]).tocsr()
    xb, xtb = ones(x), ones(xt)
    model = tempfile.mkdtemp(prefix="multinomial_peers_") + "/m"

    def ours(tol):
        cmd = [sparselin, "train", train, "--features", str(n), "--algo", "lbfgs", "--loss",
               "log", "--multinomial", "--lambda", str(lam), "--tol", str(tol), "--test", test,
               "--json", "--quiet", "-o", model]
        s = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        objective = s["details"][0]["objective"]
        return s["seconds"], objective, s["test"]["error_rate"]

    def sklearn(tol):
        fit = LogisticRegression(C=1.0 / (lam * m), fit_intercept=False, tol=tol,
                                 max_iter=10000)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit.fit(xb, y)
        seconds = time.perf_counter() - started
        w = fit.coef_
        z = xb @ w.T
        index = np.searchsorted(fit.classes_, y)
        objective = lam / 2 * np.sum(w * w) + np.mean(logsumexp(z, axis=1) - z[np.arange(m), index])
        error = float((fit.classes_[(xtb @ w.T).argmax(axis=1)] != yt).mean())
        return seconds, float(objective), error

    runs = {
        "sparselin lbfgs --multinomial --tol 1e-4": lambda: ours(1e-4),
        "sparselin lbfgs --multinomial (tol 1e-9)": lambda: ours(1e-9),
        "scikit-learn LogisticRegression (tol 1e-4)": lambda: sklearn(1e-4),
        "scikit-learn LogisticRegression tol=1e-8": lambda: sklearn(1e-8),
    }
    seen = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            seen[name].append(run())
    best = min(r[1] for results in seen.values() for r in results)
    print(f"{train}: {m} rows, {n} features, {len(np.unique(y))} classes; λ = {lam}, "
          f"{rounds} rounds; lowest J {best!r}\n")
    print("| run | median s (runs) | J excess | test error |")
    print("|---|---|---|---|")
    for name, results in seen.items():
        seconds = statistics.median(r[0] for r in results)
        times = ", ".join(f"{r[0]:.3f}" for r in results)
        _, objective, error = results[-1]
        print(f"| {name} | {seconds:.3f} ({times}) | {(objective - best) / best:.1e} | "
              f"{error:.4f} |")


if __name__ == "__main__":
    main()
