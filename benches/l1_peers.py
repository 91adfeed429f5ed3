#!/usr/bin/env python3
"""L1-regularized logistic regression: OWL-QN (`train --algo lbfgs --l1`) and coordinate descent
(`--algo cd --l1`) against liblinear -s 6.

For each set of `../shared/data` named with --sets and each λ₁ of --l1s, both programs
minimize J(w, b) = (1/m) Σ log(1 + e^(−y(w·x + b))) + λ₁(‖w‖₁ + |b|) (liblinear: `-s 6 -B 1
-c 1/(λ₁m)`, its bias a regularized feature, as ours is), reading the values in f64
(sparselin from a `convert --values f64` dataset).

* J* is the lowest J seen (liblinear at any -e of its ladder, or a sparselin iterate);
  each sparselin solver's duality gap bounds J* from below at every iteration, and
  "certified to" is (J* − the highest such bound)/J*. A target it does not beat tenfold is
  not timed.
* sparselin: `train SET --algo A --loss log --lambda 0 --l1 λ₁ --tol 0 --trace` for each A
  of --algos at `--threads 1` and `--threads 2`; the time to a target is the trace's
  `seconds` (solver only, loading excluded; cd's copy of the data by columns included) at
  the first iteration within the target of J*.
* liblinear: `liblinear-train -s 6 -B 1 -c 1/(λ₁m) -e E` over a ladder of E; its `train()`
  call alone is timed in CPU seconds by an LD_PRELOAD shim (single-threaded, so CPU is its
  wall time) and J is computed here from its model file; its time to a target is that of
  the first (largest) E whose model is within it.

Each run is repeated --rounds times, alternating the programs; medians are reported.
"÷ ll" is sparselin's time over liblinear's at 1 / 2 threads (below 1: sparselin first).

    python3 benches/l1_peers.py --sets heart_scale,reuters_grain,spamassassin --rounds 3
"""
import argparse
import json
import os
import tempfile

import numpy as np

from liblinear_race import EPS_LADDER, header, race
from sublbfgs_real_sets import (compiled_shim, f64_dataset, liblinear_timed, liblinear_weights,
                                read_svm, run, trace_points, training_text)



def objective(w, b, l1, labels, rows):
    """J(w, b): mean log loss plus λ₁(‖w‖₁ + |b|)."""
    scores = np.array([w[i] @ v for i, v in rows]) + b
    margins = np.where(labels > 0, 1.0, -1.0) * scores
    return np.logaddexp(0.0, -margins).mean() + l1 * (np.abs(w).sum() + abs(b))


def solver_trace(binary, algo, data, l1, threads, max_iter, work):
    """[(seconds, J, gap)], one entry per iteration of `--algo algo`."""
    trace = os.path.join(work, "trace.csv")
    run([binary, "train", data, "--algo", algo, "--loss", "log", "--lambda", "0",
         "--l1", str(l1), "--tol", "0", "--max-iter", str(max_iter), "--threads", str(threads),
         "--quiet", "--trace", trace, "-o", os.path.join(work, "sparselin.model")])
    return trace_points(trace)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sparselin", default="target/release/sparselin")
    parser.add_argument("--data-root", default="../shared/data")
    parser.add_argument("--sets", default="heart_scale,reuters_grain,spamassassin")
    parser.add_argument("--files", default="",
                        help="more sets: LIBSVM files with labels ±1, comma-separated")
    parser.add_argument("--l1s", default="1e-3,1e-4")
    parser.add_argument("--algos", default="lbfgs,cd", help="sparselin solvers, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=1000)
    parser.add_argument("--json", help="also write the table's numbers here")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="l1_peers_")
    shim = compiled_shim(work)

    algos = args.algos.split(",")
    print(header(["set", "rows", "features", "λ₁", "J*", "non-zero", "certified to"], algos))
    records = []
    sets = [s for s in args.sets.split(",") if s] + [f for f in args.files.split(",") if f]
    for name in sets:
        svm, features = training_text(args.data_root, name, work)
        name = os.path.basename(name)
        labels, rows = read_svm(svm, features)
        m = len(labels)
        data = f64_dataset(args.sparselin, svm, features, work, name)
        model = os.path.join(work, "liblinear.model")
        for l1 in (float(x) for x in args.l1s.split(",")):
            nonzero = {}

            def sparselin_run(algo, threads):
                return solver_trace(args.sparselin, algo, data, l1, threads, args.max_iter,
                                    work)

            def liblinear_run(eps, scored):
                cpu, _ = liblinear_timed("6", repr(1.0 / (l1 * m)), eps, svm, model, shim)
                if not scored:
                    return cpu, None
                w, b = liblinear_weights(model, features)
                nonzero[eps] = int(np.count_nonzero(w)) + int(b != 0)
                return cpu, objective(w, b, l1, labels, rows)

            j_star, certified, results = race(args.rounds, algos, sparselin_run, liblinear_run)
            # The support of liblinear's tightest solve.
            support = nonzero[EPS_LADDER[-1]]
            for target, cells, record in results:
                print(f"| {name} | {m} | {features} | {l1:g} | {j_star:.10g} | {support} | "
                      f"{certified:.0e} | {target:g} |{cells}", flush=True)
                if record:
                    records.append(dict(set=name, rows=m, features=features, l1=l1,
                                        j_star=j_star, nonzero=support, certified=certified,
                                        **record))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
