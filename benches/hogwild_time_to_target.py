#!/usr/bin/env python3
"""Hogwild ASGD: training time to reach a target objective at 1 and 2 threads.

    python3 benches/hogwild_time_to_target.py DATASET [--epochs E] [--repeats R]
        [--sampling uniform|file-order|permutation] [--lambda L]

Runs `sparselin train DATASET --algo asgd --loss hinge --trace` at 1 and 2 threads (default
`--hot-features`, 256), R interleaved rounds, and reads the per-epoch trace: the
training objective J after each epoch and the training seconds so far (the steps only; the
trace's objective evaluation is not counted). The targets are relative to the lowest objective
any run reached: for each of 1%, 0.1% and 0.01% above it, the table gives per thread count the
median training seconds of the first epoch at or below the target (epoch granularity, "-" if a
run never got there), and the ratio 1 thread / 2 threads of those medians — the speed-up in
time to the target, which is what a user waits for, unlike throughput it counts any loss of
progress per step that the shared updates cause (PERF.md `## Hogwild`).
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TARGETS = (1e-2, 1e-3, 1e-4)


def run(binary, args, threads, out):
    trace = out / f"trace_{threads}.csv"
    cmd = [binary, "train", args.dataset, "--algo", "asgd", "--loss", "hinge",
           "--lambda", str(args.lam), "--epochs", str(args.epochs),
           "--sampling", args.sampling, "--threads", str(threads), "--quiet",
           "-o", str(out / "model"), "--trace", str(trace)]
    print("$ " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with trace.open() as f:
        return [(float(r["seconds"]), float(r["train_objective"])) for r in csv.DictReader(f)]


def first_time(trace, target):
    return next((s for s, j in trace if j <= target), None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sampling", default="uniform")
    parser.add_argument("--lambda", dest="lam", type=float, default=1e-4)
    args = parser.parse_args()
    binary = os.environ.get("SPARSELIN", "target/release/sparselin")

    traces = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for threads in traces:
                traces[threads].append(run(binary, args, threads, Path(tmp)))

    best = min(j for runs in traces.values() for trace in runs for _, j in trace)
    print(f"{args.dataset}: ASGD hinge, lambda = {args.lam}, {args.sampling}, "
          f"{args.epochs} epochs, {args.repeats} rounds; lowest objective J* = {best:.6f}\n")
    print("| target | 1 thread: s (runs) | 2 threads: s (runs) | speed-up |")
    print("|---|---|---|---|")
    for rel in TARGETS:
        target = best * (1 + rel)
        cells, medians = [], []
        for threads, runs in traces.items():
            times = [first_time(trace, target) for trace in runs]
            reached = [t for t in times if t is not None]
            median = statistics.median(reached) if len(reached) == len(times) else None
            medians.append(median)
            shown = ", ".join("-" if t is None else f"{t:.2f}" for t in times)
            cells.append(f"{'-' if median is None else f'{median:.2f}'} ({shown})")
        ratio = f"{medians[0] / medians[1]:.2f}x" if None not in medians else "-"
        print(f"| J* + {rel:g} J* | {cells[0]} | {cells[1]} | {ratio} |")


if __name__ == "__main__":
    main()
