#!/usr/bin/env python3
"""One-thread averaged SGD per epoch against scikit-learn and Vowpal Wabbit (PERF.md, "Online
learners"; issue: time per epoch at matched objective and test error, parsing excluded).

    python3 benches/online_peers.py CORPUS [LAMBDA] [EPOCHS]

CORPUS is a prefix as `sparselin gen CORPUS --text CORPUS` writes it (CORPUS/train,
CORPUS/test, CORPUS.train.svm, CORPUS.test.svm). Hinge loss, λ = 1e-4, one epoch by default,
the bias unregularized for all three (scikit-learn cannot regularize its intercept), so that
every objective below is J(w, b) = (1/m) Σ max(0, 1 − y(w·x + b)) + (λ/2)‖w‖² on the training
set, computed by this script from each model's own training-set scores.

* sparselin: `train --algo asgd|sgd --threads 1 --free-bias` in file order and with uniform
  sampling, and in file order with `--bias-rate 0.01` (the bias's step of Bottou's sgd and of
  scikit-learn on sparse data); `--algo adagrad` (its default η = 1) in both orders; time =
  the summary's `cpu_seconds` (process CPU time of the training call: the default t₀'s sample
  of rows, the steps and the final O(n) recovery), so that every learner is timed in CPU
  seconds, as a loaded machine needs.
* scikit-learn: SGDClassifier(loss='hinge', alpha=λ, average=True, max_iter=EPOCHS, tol=None,
  shuffle=False) on the CSR matrix loaded beforehand; time = CPU seconds of fit() alone.
* Vowpal Wabbit: `--sgd` (plain SGD, VW's default rate schedule) with `--l2 λ`, and its default
  update (adaptive, normalized and invariant: no flag) and `--adaptive` alone (AdaGrad) without
  it (their `--l2` shrinks the weights at every update of an adaptive step: `--l2 1e-4` gave
  J = 0.958 and 1.120 on rcv1-like, test error 0.49 and 0.44), hinge, -b 18; a first run
  writes VW's binary cache (the parse), the timed run trains from the cache; time = CPU
  seconds of that run (it still decodes the cache) less those of a run on an empty file (the
  Python interpreter and VW's start-up).
* Bottou's svmasgd and svmsgd (sgd-2.1, not on any package registry), when the environment
  names their binaries built with `-DLOSS=HingeLoss` (bias unregularized, their default):
  `SVMASGD=/path/svmasgd SVMSGD=/path/svmsgd`. Run as `-lambda λ -epochs EPOCHS
  -dontnormalize` in file order, their own schedules (η₀ searched on the first 1,001 rows;
  svmasgd averages from its second epoch); time = their own "Total training time" (CPU
  seconds by clock(), parsing excluded, η₀'s search included); J = their printed training
  loss + (λ/2) times the printed norm of the model they test (svmasgd: aNorm, svmsgd: wNorm);
  test error = their printed test misclassification (4 digits).

Prints a Markdown table. Medians of three runs each.
"""
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier

ROOT = Path(__file__).resolve().parent.parent
SPARSELIN = ROOT / "target" / "release" / "sparselin"
REPEATS = 3


def child_cpu(cmd):
    """Runs cmd; returns (stdout, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def objective(scores, y, w_norm2, lam):
    return float(np.maximum(0.0, 1.0 - y * scores).mean() + 0.5 * lam * w_norm2)


def error_rate(scores, y):
    return float(((scores >= 0) != (y > 0)).mean())


def main():
    corpus = sys.argv[1]
    lam = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    x, y = load_svmlight_file(f"{corpus}.train.svm")
    n = x.shape[1]
    x_test, y_test = load_svmlight_file(f"{corpus}.test.svm", n_features=n)
    for m in (x, x_test):
        m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    nnz_epoch = x.nnz * epochs
    rows = []
    tmp = Path(tempfile.mkdtemp())

    def add(name, seconds, w, b):
        rows.append((name, statistics.median(seconds), objective(x @ w + b, y, w @ w, lam),
                     error_rate(x_test @ w + b, y_test)))

    # (algo, sampling, flags, the row's suffix); λ = 0 is plain AdaGrad, as Vowpal Wabbit's
    # adaptive updates without --l2 (its J is not comparable).
    slow_bias = (["--bias-rate", 0.01], ", bias rate 0.01")
    unregularized = (["--lambda", 0], ", λ = 0")
    plain = ([], "")
    for algo, sampling, (flags, suffix) in (
            ("asgd", "file-order", plain), ("asgd", "uniform", plain),
            ("sgd", "file-order", plain), ("sgd", "uniform", plain),
            ("asgd", "file-order", slow_bias), ("sgd", "file-order", slow_bias),
            ("adagrad", "file-order", plain), ("adagrad", "uniform", plain),
            ("adagrad", "file-order", unregularized)):
        given_lambda = [] if "--lambda" in flags else ["--lambda", lam]
        train = [SPARSELIN, "train", f"{corpus}/train", "--algo", algo, "--loss", "hinge",
                 "--sampling", sampling, "--threads", 1, "--free-bias", "--json", "--quiet",
                 "-o", tmp / "m.model"] + given_lambda + flags
        seconds = []
        for _ in range(REPEATS):
            out, _ = child_cpu(train + ["--epochs", epochs, "--readable", tmp / "w.txt"])
            cpu = json.loads(out)["cpu_seconds"]
            if cpu is None:
                sys.exit("sparselin could not read its CPU clock (cpu_seconds is null)")
            seconds.append(cpu)
        w, b = read_readable(tmp / "w.txt", n)
        add(f"sparselin {algo}, {sampling}{suffix}", seconds, w, b)

    seconds = []
    for _ in range(REPEATS):
        model = SGDClassifier(loss="hinge", alpha=lam, average=True, max_iter=epochs, tol=None,
                              shuffle=False)
        started = time.process_time()
        model.fit(x, y)
        seconds.append(time.process_time() - started)
    add("scikit-learn averaged SGD, file order", seconds, model.coef_.ravel(),
        float(model.intercept_[0]))

    vw_files = {}
    for split in ("train", "test"):
        vw_files[split] = Path(f"{corpus}.{split}.vw")
        if not vw_files[split].exists():
            with open(f"{corpus}.{split}.svm") as source, open(vw_files[split], "w") as target:
                for line in source:
                    label, _, rest = line.partition(" ")
                    target.write(f"{label} | {rest}")
    cache, model = tmp / "vw.cache", tmp / "vw.model"
    vw = [sys.executable, "-m", "vowpalwabbit", "--quiet"]
    # The Python interpreter and VW's start-up, measured on an empty file, are subtracted.
    empty = tmp / "empty.vw"
    empty.write_text("")
    startup = statistics.median(child_cpu(vw + ["-d", empty])[1] for _ in range(REPEATS))
    for update, name in ((["--sgd", "--l2", lam], "--sgd"),
                         ([], "default (adaptive, normalized, invariant), no --l2"),
                         (["--adaptive"], "--adaptive, no --l2")):
        learn = vw + update + ["--loss_function", "hinge", "-b", 18, "--passes", epochs,
                               "--holdout_off", "--cache_file", cache, "-f", model]
        if not cache.exists():
            child_cpu(learn + ["-d", vw_files["train"]])
        seconds = []
        for _ in range(REPEATS):
            seconds.append(child_cpu(learn)[1] - startup)
        child_cpu(vw + ["-i", model, "-t", "-d", vw_files["train"], "-p", tmp / "train.p",
                        "--readable_model", tmp / "vw.txt"])
        child_cpu(vw + ["-i", model, "-t", "-d", vw_files["test"], "-p", tmp / "test.p"])
        train_scores, test_scores = np.loadtxt(tmp / "train.p"), np.loadtxt(tmp / "test.p")
        rows.append((f"Vowpal Wabbit {name}, file order (from its cache)",
                     statistics.median(seconds),
                     objective(train_scores, y, vw_norm2(tmp / "vw.txt", 18), lam),
                     error_rate(test_scores, y_test)))

    for variable, norm in (("SVMASGD", "aNorm"), ("SVMSGD", "wNorm")):
        if os.environ.get(variable):
            rows.append(bottou(os.environ[variable], norm, corpus, lam, epochs, tmp))

    print(f"{corpus}: {x.shape[0]} rows, {n} features, {x.nnz} non-zeros; hinge, λ = {lam}, "
          f"{epochs} epoch(s), one thread\n")
    print("| learner | CPU s / epoch | ns / nnz | objective J | test error |")
    print("|---|---|---|---|---|")
    for name, s, j, e in rows:
        print(f"| {name} | {s / epochs:.3f} | {s * 1e9 / nnz_epoch:.1f} | {j:.5f} | {e:.4f} |")


def bottou(binary, norm, corpus, lam, epochs, tmp):
    """A row for Bottou's svmasgd or svmsgd: (name, median CPU seconds, J, test error)."""
    # sgd-2.1 reads text only from files named *.txt.
    for split in ("train", "test"):
        link = tmp / f"{split}.txt"
        if not link.exists():
            link.symlink_to(Path(f"{corpus}.{split}.svm").resolve())
    cmd = [binary, "-lambda", lam, "-epochs", epochs, "-dontnormalize", tmp / "train.txt",
           tmp / "test.txt"]
    seconds = []
    for _ in range(REPEATS):
        out, _ = child_cpu(cmd)
        seconds.append(float(re.findall(r"Total training time ([0-9.e+-]+) secs", out)[-1]))
    norm2 = float(re.findall(rf"{norm}=([0-9.e+-]+)", out)[-1])
    loss = float(re.findall(r"train: Loss=([0-9.e+-]+)", out)[-1])
    test_line = r"test: +Loss=\S+ Cost=\S+ Misclassification=([0-9.]+)%"
    test_error = float(re.findall(test_line, out)[-1])
    name = f"Bottou's {Path(binary).name}, file order"
    return name, statistics.median(seconds), loss + 0.5 * lam * norm2, test_error / 100


def read_readable(path, n):
    """Weights and bias from `sparselin train --readable` (lines `index weight`, `bias b`)."""
    w, b = np.zeros(n), 0.0
    for line in open(path):
        parts = line.split()
        if len(parts) != 2 or line.startswith("#"):
            continue
        if parts[0] == "bias":
            b = float(parts[1])
        elif parts[0].isdigit():
            w[int(parts[0]) - 1] = float(parts[1])
    return w, b


def vw_norm2(path, bits):
    """‖w‖² of a VW --readable_model, its constant (bias) feature left out."""
    constant = 11650396 & ((1 << bits) - 1)
    body = open(path).read().split(":0\n", 1)[-1]
    total = 0.0
    for line in body.splitlines():
        parts = line.split(":")
        if len(parts) >= 2 and parts[0].strip().isdigit() and int(parts[0]) != constant:
            total += float(parts[1]) ** 2
    return total


if __name__ == "__main__":
    main()
