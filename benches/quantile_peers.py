#!/usr/bin/env python3
"""Quantile regression against peers (PERF.md `### Quantile regression`).

    python3 benches/quantile_peers.py [--rows 5000] [--features 2000] [--tau 0.9] [--rounds 3]
        [--lambda 1e-8] [--max-iter 1000] [--data DIR --features N]

Generates a sparse regression corpus (`sparselin gen --preset small-regression`, ROWS training
rows, 2,000 held out), or reads DIR/train.svm.gz and DIR/test.svm.gz (a `../shared/data` set),
then, in ROUNDS interleaved rounds:

* exact: `sparselin train --algo sublbfgs|dcd --loss quantile:TAU --lambda LAMBDA` (dcd to a
  duality gap of 1e-9·J, subLBFGS for MAX_ITER iterations) against
  scikit-learn's `QuantileRegressor(quantile=TAU, alpha=0, solver="highs")`, the linear
  program of the unregularized problem. Both models' J = λ/2‖(w, b)‖² + mean pinball loss at
  LAMBDA is printed: the LP model's J is an upper bound on the optimum J*, and its pinball
  loss a lower bound on any model's. Each is timed in CPU seconds (sparselin: its JSON
  `cpu_seconds`, the whole process; scikit-learn: `time.process_time` around `fit`, the data
  already in memory);
* online: `sparselin train --algo asgd --loss quantile:TAU --lambda 1e-6 --epochs E` against
  Vowpal Wabbit `--loss_function quantile --quantile_tau TAU --passes E` (its default
  adaptive, normalized update, a cache, no holdout), for E = 5 and 20, with the held-out mean pinball loss and coverage (the
  fraction of held-out labels at or below their prediction) and CPU seconds (user + sys).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

BIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "sparselin")


def pinball(y, p, tau):
    r = y - p
    return float(np.mean(np.where(r > 0, tau * r, (tau - 1) * r)))


def child_cpu(command):
    """Run `command`; its stdout and the CPU seconds (user + sys) it took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def read_svm(path, n_features):
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(path, n_features=n_features)


def vw_text(svm_path, vw_path):
    with open(svm_path) as src, open(vw_path, "w") as dst:
        for line in src:
            label, *features = line.split()
            dst.write(label + " | " + " ".join(features) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--features", type=int, default=2000)
    ap.add_argument("--tau", type=float, default=0.9)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-8)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--data")
    args = ap.parse_args()
    from sklearn.linear_model import QuantileRegressor

    tau = args.tau
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus")
        if args.data:
            os.makedirs(corpus)
            for split in ("train", "test"):
                subprocess.run(f"gzip -dc {args.data}/{split}.svm.gz > {corpus}/q.{split}.svm",
                               shell=True, check=True)
        else:
            subprocess.run(
                [BIN, "gen", corpus, "--preset", "small-regression", "--train-rows",
                 str(args.rows), "--test-rows", "2000", "--features", str(args.features),
                 "--text", os.path.join(corpus, "q")],
                check=True, capture_output=True)
        train_svm, test_svm = (os.path.join(corpus, f"q.{s}.svm") for s in ("train", "test"))
        dataset = os.path.join(tmp, "train")
        subprocess.run([BIN, "convert", "-q", train_svm, dataset, "--values", "f64",
                        "--features", str(args.features)], check=True, capture_output=True)
        X, y = read_svm(train_svm, args.features)
        Xt, yt = read_svm(test_svm, args.features)
        train_vw, test_vw = os.path.join(tmp, "train.vw"), os.path.join(tmp, "test.vw")
        vw_text(train_svm, train_vw)
        vw_text(test_svm, test_vw)
        lam = args.lam
        print(f"{X.shape[0]} rows x {args.features} features, {X.nnz} non-zeros; tau {tau},"
              f" lambda {lam}")
        model = os.path.join(tmp, "m.model")
        for r in range(1, args.rounds + 1):
            for algo, tol in (("sublbfgs", "0"), ("dcd", "1e-9")):
                out, _ = child_cpu(
                    [BIN, "train", dataset, "--algo", algo, "--loss", f"quantile:{tau}",
                     "--lambda", str(lam), "--tol", tol, "--max-iter", str(args.max_iter),
                     "--threads", "1", "--json", "-o", model])
                summary = json.loads(out)
                train, details = summary["train"], summary["details"]
                print(f"round {r} exact: sparselin {algo} {summary['cpu_seconds']:.3f} CPU s,"
                      f" J {train['objective']:.9g}, pinball {train['mean_loss']:.9g}"
                      f" ({details.get('stop')}, {details.get('iterations')} iterations)")
            q = QuantileRegressor(quantile=tau, alpha=0, solver="highs")
            start = time.process_time()
            q.fit(X, y)
            cpu = time.process_time() - start
            loss = pinball(y, q.predict(X), tau)
            j = loss + 0.5 * lam * (float(np.sum(q.coef_ ** 2)) + q.intercept_ ** 2)
            print(f"round {r} exact: scikit-learn QuantileRegressor highs {cpu:.3f} CPU s,"
                  f" J {j:.9g}, pinball {loss:.9g}")

            for epochs in ("5", "20"):
                online(r, epochs, train_svm, test_svm, train_vw, test_vw, yt, tau, tmp)


def online(r, epochs, train_svm, test_svm, train_vw, test_vw, yt, tau, tmp):
    model = os.path.join(tmp, "online.model")
    _, cpu = child_cpu(
        [BIN, "train", train_svm, "--algo", "asgd", "--loss", f"quantile:{tau}",
         "--lambda", "1e-6", "--epochs", epochs, "--threads", "1", "--quiet", "-o", model])
    scores, _ = child_cpu([BIN, "predict", model, test_svm, "--scores"])
    p = np.array([float(v) for v in scores.split()])
    print(f"round {r} online: sparselin asgd {epochs} epochs {cpu:.3f} CPU s, held-out"
          f" pinball {pinball(yt, p, tau):.6f}, coverage {np.mean(yt <= p):.4f}")
    vw_model = os.path.join(tmp, "vw.model")
    cache = train_vw + ".cache"
    if os.path.exists(cache):
        os.remove(cache)
    _, cpu = child_cpu(
        [sys.executable, "-m", "vowpalwabbit", "-d", train_vw, "--loss_function",
         "quantile", "--quantile_tau", str(tau), "--passes", epochs, "-c",
         "--holdout_off", "--quiet", "-f", vw_model])
    preds = os.path.join(tmp, "vw.pred")
    child_cpu([sys.executable, "-m", "vowpalwabbit", "-d", test_vw, "-t", "-i",
               vw_model, "-p", preds, "--quiet"])
    p = np.loadtxt(preds)
    print(f"round {r} online: vw --passes {epochs} {cpu:.3f} CPU s, held-out pinball"
          f" {pinball(yt, p, tau):.6f}, coverage {np.mean(yt <= p):.4f}")


if __name__ == "__main__":
    main()
