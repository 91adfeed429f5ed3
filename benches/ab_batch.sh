#!/usr/bin/env bash
# Two sparselin builds on the same batch solves, alternated run by run: for each loss and C,
# each build's iterations, passes over the data, J, certificate, stop and training seconds
# (PERF.md `### TRON's diagonal preconditioner`: only alternated runs compare two builds
# fairly on a host whose speed drifts).
#
#     benches/ab_batch.sh BIN_A BIN_B DATA FEATURES [ROUNDS] [ALGO] [CASES]
#
# BIN_A and BIN_B are sparselin binaries (copies of target/release/sparselin built from each
# commit); DATA a LIBSVM file or dataset directory with FEATURES features. ROUNDS defaults
# to 3, ALGO to tron, CASES to "log:1 log:1024 squared-hinge:1 squared-hinge:64" (loss:C).
# Each run is `train DATA --features FEATURES --algo ALGO --loss L --no-bias -c C --json`;
# a line per run: build, loss, C, iterations, passes, J, gap, stop, seconds.
set -euo pipefail

if (($# < 4)); then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a=$1 b=$2 data=$3 features=$4 rounds=${5:-3} algo=${6:-tron}
cases=${7:-"log:1 log:1024 squared-hinge:1 squared-hinge:64"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for _ in $(seq "$rounds"); do
    for case in $cases; do
        loss=${case%%:*} c=${case##*:}
        for build in A B; do
            binary=$a
            [[ $build == B ]] && binary=$b
            "$binary" train "$data" --features "$features" --algo "$algo" --loss "$loss" \
                --no-bias -c "$c" --json -o "$work/model" 2>/dev/null |
                python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["details"]
print(sys.argv[1], sys.argv[2], sys.argv[3], t["iterations"], int(t["passes"]),
      "%.10g" % t["objective"], "%.3g" % t["gap"], t["stop"], "%.3f" % d["seconds"])
' "$build" "$loss" "$c"
        done
    done
done
