#!/usr/bin/env python3
"""The smooth losses: sparselin's solvers against liblinear's (-s 0, -s 2), to 1e-2, 1e-4, 1e-6.

For each set of `../shared/data` named with --sets, each loss of --losses (log: liblinear -s 0;
squared-hinge: -s 2) and each λ of --lambdas, every program minimizes J(w, b) = (λ/2)(‖w‖² + b²)
+ mean loss (MATH.md §1, the bias a regularized feature, as liblinear's -B 1 has it), reading
the values in f64 (sparselin from a `convert --values f64` dataset).

* J* is the lowest J seen (liblinear at any -e of its ladder, or a sparselin iterate). Each
  sparselin report carries ‖∇J‖²/(2λ) ≥ J − J*, so J − that bounds J* from below; "certified
  to" is (J* − the highest such bound)/J*, and a target it does not beat tenfold is not timed.
* sparselin: `train SET --algo A --loss L --lambda λ --tol 0 --trace` for each A of --algos at
  `--threads 1` and `--threads 2`; the time to a target is the trace's `seconds` (solver only,
  loading excluded) at the first iteration within the target of J*.
* liblinear: `liblinear-train -s S -B 1 -c 1/(λm) -e E` over a ladder of E; its `train()` call
  alone is timed in CPU seconds by an LD_PRELOAD shim (single-threaded, so CPU is its wall
  time) and J is computed here from its model file; its time to a target is that of the first
  (largest) E whose model is within it.

  With --liblinear-python, liblinear is instead the `liblinear-official` Python package (pip;
  2.47, whose -s 0 and -s 2 solve by truncated Newton with a line search, the method of
  `--algo newton`, where Debian's 2.3.0 runs TRON), called in this process on a problem
  parsed once per set: its `train()` timed in CPU seconds by `time.process_time()` (its C
  solver is single-threaded).

Each run is repeated --rounds times, alternating the programs; medians are reported.
"÷ ll" is sparselin's time over liblinear's at 1 / 2 threads (below 1: sparselin first).

    python3 benches/newton_peers.py --sets reuters_grain,spamassassin,fashion_mnist_0v6 --rounds 3
"""
import argparse
import json
import os
import tempfile
import time

import numpy as np

from liblinear_race import header, race
from sublbfgs_real_sets import (compiled_shim, f64_dataset, liblinear_timed, liblinear_weights,
                                read_svm, run, trace_points, training_text)

LIBLINEAR_SOLVER = {"log": "0", "squared-hinge": "2"}


def objective(w, b, lam, loss, labels, rows):
    """J(w, b) of MATH.md §1 with log or squared hinge loss."""
    scores = np.array([w[i] @ v for i, v in rows]) + b
    margins = np.where(labels > 0, 1.0, -1.0) * scores
    if loss == "log":
        mean = np.logaddexp(0.0, -margins).mean()
    else:
        mean = (np.maximum(0.0, 1.0 - margins) ** 2).mean()
    return 0.5 * lam * (w @ w + b * b) + mean


def solver_trace(binary, algo, data, loss, lam, threads, max_iter, work):
    """[(seconds, J, gap)], one entry per iteration of `--algo algo`."""
    trace = os.path.join(work, "trace.csv")
    run([binary, "train", data, "--algo", algo, "--loss", loss, "--lambda", str(lam),
         "--tol", "0", "--max-iter", str(max_iter), "--threads", str(threads), "--quiet",
         "--trace", trace, "-o", os.path.join(work, "sparselin.model")])
    return trace_points(trace)


def python_liblinear_problem(svm):
    """The liblinear-official package's problem for the LIBSVM file `svm`, parsed once."""
    from liblinear.liblinearutil import problem, svm_read_problem
    labels, rows = svm_read_problem(svm)
    return problem(labels, rows)


def liblinear_python_timed(prob, solver, c, eps, model):
    """CPU seconds of the package's `train()` with `-s solver -B 1 -c c -e eps`; the model is
    saved to `model` (liblinear's own format)."""
    from liblinear.liblinearutil import parameter, save_model, train
    param = parameter(f"-s {solver} -B 1 -c {c} -e {eps} -q")
    started = time.process_time()
    trained = train(prob, param)
    cpu = time.process_time() - started
    save_model(model, trained)
    return cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sparselin", default="target/release/sparselin")
    parser.add_argument("--data-root", default="../shared/data")
    parser.add_argument("--sets", default="reuters_grain,spamassassin,fashion_mnist_0v6")
    parser.add_argument("--losses", default="log,squared-hinge")
    parser.add_argument("--lambdas", default="1e-4,1e-6")
    parser.add_argument("--algos", default="tron,lbfgs", help="sparselin solvers, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-iter", type=int, default=1000)
    parser.add_argument("--json", help="also write the table's numbers here")
    parser.add_argument("--liblinear-python", action="store_true",
                        help="race the liblinear-official Python package (2.47) instead of "
                             "Debian's liblinear-train")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="newton_peers_")
    # The LD_PRELOAD timer of Debian's liblinear-train; the Python package is timed in-process.
    shim = None if args.liblinear_python else compiled_shim(work)

    algos = args.algos.split(",")
    print(header(["set", "loss", "λ", "J*", "certified to"], algos))
    records = []
    for name in (s for s in args.sets.split(",") if s):
        svm, features = training_text(args.data_root, name, work)
        labels, rows = read_svm(svm, features)
        m = len(labels)
        data = f64_dataset(args.sparselin, svm, features, work, name)
        python_problem = python_liblinear_problem(svm) if args.liblinear_python else None
        model = os.path.join(work, "liblinear.model")
        for loss in args.losses.split(","):
            for lam in (float(x) for x in args.lambdas.split(",")):
                def sparselin_run(algo, threads):
                    return solver_trace(args.sparselin, algo, data, loss, lam, threads,
                                        args.max_iter, work)

                def liblinear_run(eps, scored):
                    c = repr(1.0 / (lam * m))
                    if args.liblinear_python:
                        cpu = liblinear_python_timed(python_problem, LIBLINEAR_SOLVER[loss], c,
                                                     eps, model)
                    else:
                        cpu, _ = liblinear_timed(LIBLINEAR_SOLVER[loss], c, eps, svm, model,
                                                 shim)
                    if not scored:
                        return cpu, None
                    w, b = liblinear_weights(model, features)
                    return cpu, objective(w, b, lam, loss, labels, rows)

                j_star, certified, results = race(args.rounds, algos, sparselin_run,
                                                  liblinear_run)
                for target, cells, record in results:
                    print(f"| {name} | {loss} | {lam:g} | {j_star:.10g} | {certified:.0e} | "
                          f"{target:g} |{cells}", flush=True)
                    if record:
                        records.append(dict(set=name, loss=loss, lam=lam, j_star=j_star,
                                            certified=certified, **record))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
