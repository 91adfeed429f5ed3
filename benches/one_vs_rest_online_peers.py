#!/usr/bin/env python3
"""Online one-vs-rest training against Vowpal Wabbit's --oaa and scikit-learn (PERF.md
"One-vs-rest (multiclass)", online learners at scale).

    python3 benches/one_vs_rest_online_peers.py CORPUS CLASSES [LAMBDA] [EPOCHS] [ROUNDS]

CORPUS is a prefix as `sparselin gen CORPUS --classes K --text CORPUS/NAME` writes it:
CORPUS/train and CORPUS/test (datasets), and the LIBSVM text CORPUS/NAME.train.svm and
CORPUS/NAME.test.svm found beside them. Hinge loss, λ = 1e-5 and 5 epochs by default, the bias
unregularized for all (scikit-learn cannot regularize its intercept). Each round runs every
learner once, alternated:

* sparselin `train --algo asgd|sgd --free-bias` on the dataset, on every core (two groups of
  classes, each group in one pass, here) and with `--threads 1` (every class in one pass), and
  ASGD with `--separate-class-passes` (each class in passes of its own, two at a time on every
  core, one after the other with `--threads 1`); wall = the summary's `seconds` (training
  alone), CPU = its `cpu_seconds`.
* scikit-learn SGDClassifier(loss='hinge', alpha=λ, average=True|False, max_iter=EPOCHS,
  tol=None), n_jobs=-1 and 1, on the CSR matrix loaded beforehand; wall and process CPU of
  fit() alone.
* Vowpal Wabbit `--oaa K` (one pass updates every class), hinge, `--sgd --l2 λ` (plain SGD) and
  its defaults (adaptive, normalized, invariant steps, no --l2), `-b 20`, from its binary cache
  (written by an untimed first run: the parse excluded, as it is for the others); wall and CPU
  of the child less a run on an empty file (the interpreter and VW's start-up). One thread.

Prints a Markdown table: median wall and CPU seconds over the rounds, and the test error of the
last round (every learner here is deterministic but sparselin on more than one thread per class,
which it does not use here).
"""
import json
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


def child(cmd):
    """Runs cmd; returns (stdout, wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, wall, cpu


def main():
    corpus, classes = Path(sys.argv[1]), int(sys.argv[2])
    lam = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    text = {split: next(corpus.glob(f"*.{split}.svm")) for split in ("train", "test")}
    x, y = load_svmlight_file(str(text["train"]))
    n = x.shape[1]
    x_test, y_test = load_svmlight_file(str(text["test"]), n_features=n)
    for m in (x, x_test):
        m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    tmp = Path(tempfile.mkdtemp(prefix="one_vs_rest_online_"))

    def ours(algo, threads):
        cmd = [SPARSELIN, "train", corpus / "train", "--test", corpus / "test", "--algo", algo,
               "--loss", "hinge", "--lambda", lam, "--epochs", epochs, "--free-bias", "--json",
               "--quiet", "-o", tmp / "ours.model", *threads]
        summary = json.loads(child(cmd)[0])
        return summary["seconds"], summary["cpu_seconds"], summary["test"]["error_rate"]

    def sklearn(average, jobs):
        model = SGDClassifier(loss="hinge", alpha=lam, average=average, max_iter=epochs,
                              tol=None, n_jobs=jobs, random_state=1)
        wall, cpu = time.perf_counter(), time.process_time()
        model.fit(x, y)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return wall, cpu, float((model.predict(x_test) != y_test).mean())

    vw_text = {}
    for split, svm in text.items():
        vw_text[split] = tmp / f"{split}.vw"
        with open(svm) as source, open(vw_text[split], "w") as target:
            for line in source:
                label, _, rest = line.partition(" ")
                target.write(f"{int(float(label))} | {rest}")
    vw = [sys.executable, "-m", "vowpalwabbit", "--quiet"]
    empty = tmp / "empty.vw"
    empty.write_text("")
    startup = [statistics.median(r) for r in zip(*(child(vw + ["-d", empty])[1:]
                                                   for _ in range(3)))]

    def vw_oaa(name, *options):
        cache, model = tmp / f"{name}.cache", tmp / f"{name}.model"
        learn = vw + ["--oaa", classes, "--loss_function", "hinge", "-b", 20, "--passes", epochs,
                      "--holdout_off", "--cache_file", cache, "-f", model, *options]
        if not cache.exists():
            child(learn + ["-d", vw_text["train"]])
        _, wall, cpu = child(learn)
        predictions = tmp / f"{name}.p"
        child(vw + ["-t", "-i", model, "-d", vw_text["test"], "-p", predictions])
        predicted = np.loadtxt(predictions)
        return wall - startup[0], cpu - startup[1], float((predicted != y_test).mean())

    runs = {
        "sparselin asgd, every core": lambda: ours("asgd", []),
        "sparselin asgd, --threads 1": lambda: ours("asgd", ["--threads", 1]),
        "sparselin asgd, every core, --separate-class-passes":
            lambda: ours("asgd", ["--separate-class-passes"]),
        "sparselin asgd, --threads 1 --separate-class-passes":
            lambda: ours("asgd", ["--threads", 1, "--separate-class-passes"]),
        "sparselin sgd, every core": lambda: ours("sgd", []),
        "sparselin sgd, --threads 1": lambda: ours("sgd", ["--threads", 1]),
        "scikit-learn SGDClassifier(average=True), n_jobs=-1": lambda: sklearn(True, -1),
        "scikit-learn SGDClassifier(average=True), n_jobs=1": lambda: sklearn(True, 1),
        "scikit-learn SGDClassifier, n_jobs=-1": lambda: sklearn(False, -1),
        "Vowpal Wabbit --oaa --sgd --l2 λ": lambda: vw_oaa("sgd", "--sgd", "--l2", lam),
        "Vowpal Wabbit --oaa (defaults)": lambda: vw_oaa("adaptive"),
    }
    seen = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            seen[name].append(run())
    print(f"{corpus}: {x.shape[0]} rows, {n} features, {x.nnz} non-zeros, {classes} classes; "
          f"hinge, λ = {lam}, {epochs} epochs, {rounds} rounds\n")
    print("| learner | wall s (runs) | CPU s | test error |")
    print("|---|---|---|---|")
    for name, results in seen.items():
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        runs_text = ", ".join(f"{r[0]:.2f}" for r in results)
        print(f"| {name} | {wall:.2f} ({runs_text}) | {cpu:.2f} | {results[-1][2]:.4f} |")


if __name__ == "__main__":
    main()
