#!/usr/bin/env python3
"""subLBFGS against liblinear -s 3 on every real classification set, to 1e-2, 1e-4, 1e-6.

For each set of `../shared/data` (or those named with --sets) and each λ of --lambdas:

* J* is the lowest objective J(w, b) = (λ/2)(‖w‖² + b²) + mean hinge (MATH.md §1, the bias
  regularized, as liblinear's -B 1 does) seen from liblinear at any -e of its ladder or from a
  reference subLBFGS run of --reference-iter iterations, whichever is lower (column "J* by").
* sparselin: `train SET --algo sublbfgs --loss hinge --lambda λ --tol 0 --trace` with
  `--threads 1` and with `--threads 2`; the time to a target is the trace's `seconds` (solver
  only, loading excluded) at the first iteration whose J is within the target of J*.
* liblinear: `liblinear-train -s 3 -B 1 -c 1/(λm) -e E` over a ladder of E; its `train()` call
  alone is timed in CPU seconds by an LD_PRELOAD shim (no parsing, no model writing; it is
  single-threaded, so CPU is its wall time), and J is computed here from its model file. Its
  time to a target is that of the first (largest) E whose model is within the target. A "cap"
  after its -e says that run stopped at liblinear's iteration limit, not at its tolerance.

Each run is repeated --rounds times, alternating the three programs; medians are reported.
Columns "÷ ll" are sparselin's time over liblinear's ("> 1" means liblinear got there first).

    python3 benches/sublbfgs_real_sets.py --sparselin target/release/sparselin --rounds 5
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

import numpy as np

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>
static double cpu(void) {
  struct rusage r; getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + 1e-6 * (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}
void *train(const void *prob, const void *param) {
  void *(*real)(const void *, const void *) =
      (void *(*)(const void *, const void *))dlsym(RTLD_NEXT, "train");
  double t0 = cpu();
  void *model = real(prob, param);
  fprintf(stderr, "liblinear train() cpu %.6f s\n", cpu() - t0);
  return model;
}
"""

CLASSIFICATION_SETS = ["heart_scale", "digits_3v5", "spambase", "mnist_3v5", "reuters_grain",
                       "spamassassin", "fashion_mnist_0v6"]
EPS_LADDER = ["1", "0.3", "0.1", "0.03", "0.01", "0.003", "0.001", "3e-4", "1e-4", "1e-5",
              "1e-6", "1e-7"]
TARGETS = [1e-2, 1e-4, 1e-6]


def read_svm(path, features):
    """The LIBSVM text at path as (labels, rows of (indices, values)), indices 0-based."""
    labels, rows = [], []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            labels.append(float(line[0]))
            pairs = [p.split(":") for p in line[1:]]
            idx = np.array([int(i) - 1 for i, _ in pairs], dtype=np.int64)
            val = np.array([float(v) for _, v in pairs])
            rows.append((idx, val))
    assert all(len(i) == 0 or i.max() < features for i, _ in rows)
    return np.array(labels), rows


def objective(w, b, lam, labels, rows):
    """J(w, b) of MATH.md §1 with hinge loss."""
    scores = np.array([w[i] @ v for i, v in rows]) + b
    hinge = np.maximum(0.0, 1.0 - labels * scores)
    return 0.5 * lam * (w @ w + b * b) + hinge.mean()


def liblinear_weights(model_path, features):
    """(w, b) of a liblinear -s 3 -B 1 model, signed so that w·x + b > 0 predicts +1."""
    with open(model_path) as f:
        lines = f.read().split("\n")
    header = dict(line.split(" ", 1) for line in lines[: lines.index("w")])
    values = np.array([float(x) for x in lines[lines.index("w") + 1:] if x.strip()])
    first_label = float(header["label"].split()[0])
    sign = 1.0 if first_label > 0 else -1.0
    n = int(header["nr_feature"])
    w = np.zeros(features)
    w[:n] = sign * values[:n]
    return w, sign * values[n]


def run(cmd, env=None):
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return done


def sparselin_trace(binary, data, features, lam, threads, max_iter, work):
    """[(seconds, J)] of one subLBFGS run, one entry per iteration."""
    trace = os.path.join(work, "trace.csv")
    run([binary, "train", data, "--features", str(features), "--algo", "sublbfgs", "--loss",
         "hinge", "--lambda", str(lam), "--tol", "0", "--max-iter", str(max_iter),
         "--threads", str(threads), "--quiet", "--trace", trace,
         "-o", os.path.join(work, "sparselin.model")])
    with open(trace) as f:
        header = f.readline().strip().split(",")
        s, j = header.index("seconds"), header.index("train_objective")
        return [(float(r[s]), float(r[j])) for r in (line.strip().split(",") for line in f)]


def first_time(points, j_star, target):
    """The time of the first (time, J) point within target of J*, or None."""
    for seconds, j in points:
        if (j - j_star) / j_star <= target:
            return seconds
    return None


def fmt(x):
    return "—" if x is None else f"{x * 1e3:.1f}"


def ratio(a, b):
    return "—" if a is None or b is None else f"{a / b:.2f}"


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sparselin", default="target/release/sparselin")
    parser.add_argument("--data-root", default="../shared/data")
    parser.add_argument("--sets", default=",".join(CLASSIFICATION_SETS))
    parser.add_argument("--lambdas", default="1e-2,1e-4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=400, help="iterations of the timed runs")
    parser.add_argument("--reference-iter", type=int, default=3000,
                        help="iterations of the one untimed subLBFGS run that J* also draws on")
    parser.add_argument("--json", help="also write the table's numbers here")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="sublbfgs_real_sets_")
    shim = os.path.join(work, "train_cpu.so")
    with open(os.path.join(work, "train_cpu.c"), "w") as f:
        f.write(SHIM)
    run(["gcc", "-O2", "-shared", "-fPIC", "-o", shim, f.name, "-ldl"])

    print("| set | rows | features | λ | J* | J* by | target | subLBFGS it. | 1 thread ms "
          "| 2 threads ms | liblinear -e | liblinear ms | 1 thread ÷ ll | 2 threads ÷ ll |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    records = []
    for name in args.sets.split(","):
        folder = os.path.join(args.data_root, name)
        if name == "heart_scale":
            gz, features = None, 13
            svm = os.path.join(folder, "heart_scale")
        else:
            gz = os.path.join(folder, "train.svm.gz")
            with open(os.path.join(folder, "meta.json")) as f:
                features = json.load(f)["features"]
            svm = os.path.join(work, f"{name}.svm")
            with open(svm, "w") as out:
                subprocess.run(["gunzip", "-c", gz], stdout=out, check=True)
        labels, rows = read_svm(svm, features)
        m = len(labels)
        for lam in (float(x) for x in args.lambdas.split(",")):
            c = repr(1.0 / (lam * m))
            ll_cpu = {e: [] for e in EPS_LADDER}
            ll_j, ll_capped = {}, {}
            sl = {1: [], 2: []}
            for _ in range(args.rounds):
                for threads in (1, 2):
                    sl[threads].append(sparselin_trace(args.sparselin, svm, features, lam,
                                                       threads, args.max_iter, work))
                for e in EPS_LADDER:
                    model = os.path.join(work, "liblinear.model")
                    done = run(["liblinear-train", "-s", "3", "-c", c, "-B", "1", "-e", e,
                                svm, model], dict(os.environ, LD_PRELOAD=shim))
                    ll_capped[e] = "max number of iterations" in done.stdout
                    cpu = float(re.search(r"train\(\) cpu ([0-9.]+)", done.stderr).group(1))
                    ll_cpu[e].append(cpu)
                    if e not in ll_j:
                        w, b = liblinear_weights(model, features)
                        ll_j[e] = objective(w, b, lam, labels, rows)
            reference = sparselin_trace(args.sparselin, svm, features, lam, 2,
                                        args.reference_iter, work)
            j_ll, j_sl = min(ll_j.values()), min(j for _, j in reference)
            j_star, j_by = (j_ll, "liblinear") if j_ll <= j_sl else (j_sl, "subLBFGS")
            # The J of every iteration is the same in every run and at any thread count
            # (the evaluation is bit-identical); only the seconds differ.
            iterations = [(i, j) for i, (_, j) in enumerate(sl[1][0])]
            for target in TARGETS:
                it = first_time(iterations, j_star, target)
                t1 = median_or_none([first_time(t, j_star, target) for t in sl[1]])
                t2 = median_or_none([first_time(t, j_star, target) for t in sl[2]])
                reached = [e for e in EPS_LADDER if (ll_j[e] - j_star) / j_star <= target]
                e = reached[0] if reached else None
                tl = statistics.median(ll_cpu[e]) if e else None
                cap = " (cap)" if e and ll_capped[e] else ""
                print(f"| {name} | {m} | {features} | {lam:g} | {j_star:.10g} | {j_by} | "
                      f"{target:g} | {'—' if it is None else it} | {fmt(t1)} | {fmt(t2)} | "
                      f"{e + cap if e else '—'} | "
                      f"{fmt(tl)} | {ratio(t1, tl)} | {ratio(t2, tl)} |", flush=True)
                records.append(dict(set=name, rows=m, features=features, lam=lam,
                                    j_star=j_star, j_star_by=j_by, target=target, iterations=it,
                                    sparselin_1=t1, sparselin_2=t2, liblinear_eps=e,
                                    liblinear_capped=bool(e and ll_capped[e]), liblinear=tl))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
