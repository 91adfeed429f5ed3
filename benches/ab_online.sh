#!/usr/bin/env bash
# Two sparselin builds on the same online training, alternated round by round, with the
# median ns per non-zero of each and the median of the per-round ratios B/A (PERF.md
# `## Online learners`, session 16: on a host whose speed drifts from minute to minute, only
# alternated rounds and their paired ratios compare two builds fairly).
#
#     benches/ab_online.sh BIN_A BIN_B DATASET [ROUNDS] [SAMPLING] [ALGO]
#
# BIN_A and BIN_B are sparselin binaries (e.g. a copy of target/release/sparselin built from
# each commit); DATASET a dataset directory. ROUNDS defaults to 9, SAMPLING to file-order,
# ALGO to asgd. Each run is `train DATASET --algo ALGO --loss hinge --lambda 1e-4 --epochs 3
# --sampling SAMPLING --threads 1 --json`; its time is the summary's `seconds` (the epochs
# and the final recovery, not loading or evaluation) divided by 3 × the dataset's non-zeros.
# Every run starts from a fresh copy of its binary: on this VM a byte-identical copy of one
# binary file ran the same training 12–17% slower than other copies, run after run (the file's
# place in memory, not its code; PERF.md `## Online learners`, session 17), so a fixed file
# would carry that bias into every round.
set -euo pipefail

if (($# < 3)); then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a=$1 b=$2 data=$3 rounds=${4:-9} sampling=${5:-file-order} algo=${6:-asgd}
model_dir=$(mktemp -d)
trap 'rm -rf "$model_dir"' EXIT

ns_per_nnz() {
    cp "$1" "$model_dir/sparselin"
    "$model_dir/sparselin" train "$data" --algo "$algo" --loss hinge --lambda 1e-4 --epochs 3 \
        --sampling "$sampling" --threads 1 --json --quiet -o "$model_dir/m.model" |
        python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["seconds"] / (3 * d["nnz"]) * 1e9)'
}

results=()
for ((round = 1; round <= rounds; round++)); do
    results+=("$(ns_per_nnz "$a") $(ns_per_nnz "$b")")
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
pairs = [tuple(map(float, line.split())) for line in sys.stdin]
a = [p[0] for p in pairs]
b = [p[1] for p in pairs]
ratios = [y / x for x, y in pairs]
print(f"A {sys.argv[1]}: median {statistics.median(a):.3f} ns/nnz ({min(a):.3f}-{max(a):.3f})")
print(f"B {sys.argv[2]}: median {statistics.median(b):.3f} ns/nnz ({min(b):.3f}-{max(b):.3f})")
print(f"B/A per round: median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), {len(pairs)} rounds, {sys.argv[3]}")
' "$a" "$b" "$sampling"
