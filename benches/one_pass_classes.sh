#!/usr/bin/env bash
# One-vs-rest online training with the classes in one pass (the default) against each class in
# passes of its own (--separate-class-passes), on 1 and 2 threads, alternated within each round
# (PERF.md "One-vs-rest", classes in one pass). Prints one line per run: the summary's training
# seconds (wall) and CPU seconds.
#
#   benches/one_pass_classes.sh SPARSELIN CORPUS ROUNDS [ALGO] [LAMBDA] [EPOCHS]
#
# CORPUS holds train/ (a dataset of more than two classes, e.g. `sparselin gen CORPUS --preset
# rcv1-like --train-rows 100000 --classes 10`); ALGO is asgd (default) or sgd; hinge loss,
# a free bias, λ = 1e-5 and 5 epochs unless given.
set -euo pipefail
bin=$1 corpus=$2 rounds=$3 algo=${4:-asgd} lambda=${5:-1e-5} epochs=${6:-5}
model=$(mktemp --suffix=.model)
trap 'rm -f "$model"' EXIT
for round in $(seq "$rounds"); do
    for mode in one-pass separate; do
        for threads in 1 2; do
            flags=(--threads "$threads")
            [ "$mode" = separate ] && flags+=(--separate-class-passes)
            seconds=$("$bin" train "$corpus/train" --algo "$algo" --loss hinge --lambda "$lambda" \
                --free-bias --epochs "$epochs" "${flags[@]}" -o "$model" --json --quiet |
                python3 -c 'import json, sys; s = json.load(sys.stdin)
print("%.3f %.3f" % (s["seconds"], s["cpu_seconds"]))')
            echo "$corpus $algo round $round $mode threads $threads: $seconds"
        done
    done
done
