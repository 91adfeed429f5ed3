#!/usr/bin/env python3
"""One-vs-rest multiclass training against liblinear and scikit-learn (PERF.md "One-vs-rest").

Usage: one_vs_rest_peers.py SPARSELIN TRAIN.svm TEST.svm N_FEATURES LAMBDA [ROUNDS]

Each round runs, alternated, on the same multiclass files and objective (MATH.md §1 per class,
C = 1/(λm), bias regularized as liblinear's -B 1):
  * `sparselin train --algo dcd` (hinge; relative duality gap 1e-6, the reference, then 1e-3
    and 1e-4) and `--algo lbfgs --loss log`, every core;
  * liblinear-train -s 3 and -s 0 (default -e, then -e 0.001), timing its train() alone with
    an LD_PRELOAD shim (parsing excluded, as sparselin's own seconds exclude loading);
  * `sparselin train --algo asgd` 5 epochs and scikit-learn's SGDClassifier(average=True,
    5 epochs, n_jobs=-1), fit() alone.
Prints, per run: the median wall seconds, the test error, and the largest relative gap of a
class's objective above the best any run reached for that class.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
void *train(const void *prob, const void *param) {
  void *(*real)(const void *, const void *) =
      (void *(*)(const void *, const void *))dlsym(RTLD_NEXT, "train");
  double t0 = now();
  void *model = real(prob, param);
  fprintf(stderr, "liblinear train() wall %.4f s\n", now() - t0);
  return model;
}
"""


def objectives(x, y, weights, biases, classes, lam, loss):
    """Each class's J = λ/2(‖w‖² + b²) + mean loss of the class against the rest."""
    out = {}
    for c, w, b in zip(classes, weights, biases):
        z = np.where(y == c, 1.0, -1.0) * (x @ w + b)
        terms = np.maximum(0.0, 1.0 - z) if loss == "hinge" else np.logaddexp(0.0, -z)
        out[c] = lam / 2 * (w @ w + b * b) + terms.mean()
    return out


def liblinear_model(path, n):
    """(classes, weights, biases) of a liblinear model file trained with -B 1."""
    lines = open(path).read().split("\n")
    at = lines.index("w")
    labels = [float(v) for v in next(l for l in lines if l.startswith("label")).split()[1:]]
    w = np.array([[float(v) for v in l.split()] for l in lines[at + 1:] if l.strip()])
    return labels, [w[:n, k] for k in range(len(labels))], [w[n, k] for k in range(len(labels))]


def main():
    sparselin, train, test, n, lam = sys.argv[1:6]
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    n, lam = int(n), float(lam)
    x, y = load_svmlight_file(train, n_features=n)
    xt, yt = load_svmlight_file(test, n_features=n)
    for m in (x, xt):
        m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    c = 1.0 / (lam * x.shape[0])
    work = tempfile.mkdtemp(prefix="one_vs_rest_peers_")
    shim = os.path.join(work, "shim.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, "-x", "c", "-", "-ldl"],
                   input=SHIM, text=True, check=True)
    model = os.path.join(work, "m")

    def ours(algo, loss, *extra):
        cmd = [sparselin, "train", train, "--features", str(n), "--algo", algo, "--loss", loss,
               "--lambda", str(lam), "--test", test, "--json", "--quiet", "-o", model, *extra]
        s = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        objective = {k["class"]: k["one_vs_rest"]["objective"] for k in s["train"]["classes"]}
        return s["seconds"], s["test"]["error_rate"], objective, loss

    def liblinear(solver, loss, *eps):
        cmd = ["liblinear-train", "-q", "-s", solver, "-c", repr(c), "-B", "1", *eps, train, model]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True,
                              env={**os.environ, "LD_PRELOAD": shim})
        seconds = float(done.stderr.split("wall ")[1].split()[0])
        classes, w, b = liblinear_model(model, n)
        scores = np.column_stack([xt @ wk + bk for wk, bk in zip(w, b)])
        predicted = np.array(classes)[scores.argmax(axis=1)]
        return seconds, float((predicted != yt).mean()), objectives(x, y, w, b, classes, lam, loss), loss

    def sgd_classifier():
        model = SGDClassifier(loss="hinge", alpha=lam, average=True, max_iter=5, tol=None,
                              n_jobs=-1, random_state=1)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x, y)
        seconds = time.perf_counter() - started
        error = float((model.predict(xt) != yt).mean())
        j = objectives(x, y, model.coef_, model.intercept_, model.classes_, lam, "hinge")
        return seconds, error, j, "hinge"

    runs = {
        "sparselin dcd --tol 1e-6 (hinge)": lambda: ours("dcd", "hinge", "--tol", "1e-6"),
        "sparselin dcd --tol 1e-3": lambda: ours("dcd", "hinge", "--tol", "1e-3"),
        "sparselin dcd --tol 1e-4": lambda: ours("dcd", "hinge", "--tol", "1e-4"),
        "liblinear -s 3": lambda: liblinear("3", "hinge"),
        "liblinear -s 3 -e 0.001": lambda: liblinear("3", "hinge", "-e", "0.001"),
        "sparselin lbfgs (log)": lambda: ours("lbfgs", "log"),
        "liblinear -s 0": lambda: liblinear("0", "log"),
        "liblinear -s 0 -e 0.0001": lambda: liblinear("0", "log", "-e", "0.0001"),
        "sparselin asgd (hinge, 5 epochs)": lambda: ours("asgd", "hinge", "--epochs", "5"),
        "sklearn SGDClassifier (5 epochs)": sgd_classifier,
    }
    seen = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            seen[name].append(run())
    best = {}
    for results in seen.values():
        for _, _, j, loss in results:
            for k, v in j.items():
                best[(loss, k)] = min(best.get((loss, k), np.inf), v)
    for name, results in seen.items():
        seconds = statistics.median(r[0] for r in results)
        _, error, j, loss = results[-1]
        gap = max((v - best[(loss, k)]) / best[(loss, k)] for k, v in j.items())
        times = ", ".join(f"{r[0]:.3f}" for r in results)
        print(f"{name:36s} {seconds:8.3f} s (runs {times})  test error {error:.4f}  "
              f"largest class gap {gap:.2e}")


if __name__ == "__main__":
    main()
