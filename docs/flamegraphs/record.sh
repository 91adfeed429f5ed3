#!/usr/bin/env bash
# One flamegraph per learner family, plus data conversion (README "Profiling").
#
#   docs/flamegraphs/record.sh DATASET_DIR LIBSVM_TEXT
#   docs/flamegraphs/record.sh /work/corpora/rcv1-like/train /work/corpora/rcv1-like.100M.svm
#
# (both regenerated as PERF.md's "Inputs" says: `sparselin gen` for the dataset, the first
# 100 MB of its text cut at a line boundary for the slice)
#
# Needs perf and inferno (`cargo install inferno`). Builds the `profiling` profile with frame
# pointers, records each run with `perf record -e cpu-clock -F 499 -g` (cpu-clock: this
# machine's hardware counters are not available) and writes docs/flamegraphs/<run>.svg, the
# folded stacks to target/flamegraphs/<run>.folded and, for each run, the functions with the
# most samples of their own ("self" time) to target/flamegraphs/<run>.top.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: record.sh DATASET_DIR LIBSVM_TEXT}
text=${2:?usage: record.sh DATASET_DIR LIBSVM_TEXT}
# RUSTFLAGS replaces .cargo/config.toml's flags, so the loop alignment is repeated here.
RUSTFLAGS="-C force-frame-pointers=yes -C llvm-args=-align-loops=64" \
    cargo build --profile profiling --example profile_learner --bin sparselin
bin=target/profiling
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p target/flamegraphs

# record NAME TITLE COMMAND...: profile COMMAND, fold the stacks, draw docs/flamegraphs/NAME.svg.
record() {
    local name=$1 title=$2
    shift 2
    perf record -e cpu-clock -F 499 -g -o "$work/$name.perf.data" -- "$@"
    # --minwidth drops frames narrower than 0.2 % of the samples: keeps each SVG small.
    perf script -i "$work/$name.perf.data" | inferno-collapse-perf >"target/flamegraphs/$name.folded"
    inferno-flamegraph --minwidth 0.2 --title "$title" <"target/flamegraphs/$name.folded" \
        >"docs/flamegraphs/$name.svg"
    # Self samples per function (the last frame of each stack), as a share of all samples.
    awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ $/, "", f[k]); self[f[k]] += n; all += n }
         END { for (s in self) printf "%6.2f%%  %s\n", 100 * self[s] / all, s }' \
        "target/flamegraphs/$name.folded" | sort -rn | head -25 >"target/flamegraphs/$name.top"
}

record asgd "ASGD hinge, 2,000,000 steps, $(basename "$data")" \
    "$bin/examples/profile_learner" asgd "$data" 2000000
record sublbfgs "subLBFGS hinge, 5 iterations, $(basename "$data")" \
    "$bin/examples/profile_learner" sublbfgs "$data" 5
record lbfgs "L-BFGS log loss, 5 iterations, $(basename "$data")" \
    "$bin/examples/profile_learner" lbfgs "$data" 5
record aerr "AERR, k = 8, one pass, $(basename "$data")" \
    "$bin/examples/profile_learner" aerr "$data"
record convert "convert $(basename "$text") to f32 shards" \
    "$bin/sparselin" convert "$text" "$work/converted"
ls -l docs/flamegraphs/*.svg
