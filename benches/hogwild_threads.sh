#!/usr/bin/env bash
# Hogwild ASGD (hinge) at 1 and 2 threads, with the hot features shared directly
# (--hot-features 0) and kept private per worker (--hot-features 256), in file order and with uniform
# sampling: median training seconds, non-zeros per second and the 2-vs-1 ratios
# (PERF.md `## Hogwild`). Each round also runs two independent 1-thread trainings at once
# (separate processes, nothing shared): their combined rate is what this machine's two cores
# deliver to perfectly parallel work, the ceiling a 2-thread run can be judged against (on a
# shared or virtual machine two "cores" can deliver far less than twice one).
#
#     benches/hogwild_threads.sh DATASET [EPOCHS] [REPEATS]
#
# DATASET is a dataset directory (`sparselin gen`, `sparselin convert`) or a LIBSVM file; the
# hot features are the first ones, so it should be numbered by descending frequency (gen's
# corpora are; `convert --renumber`). EPOCHS defaults to 3, REPEATS to 3: the repeats are
# interleaved (every configuration once, then again), so that a change in the machine's load
# spreads over all of them. Training seconds are the `seconds` of `train --json`: the epochs
# only, without loading the data or evaluating the model. The binary is
# target/release/sparselin unless SPARSELIN names another; one thread ignores
# --hot-features, so it runs once per sampling and repeat. Models go to a temporary directory.
set -euo pipefail

data=${1:?usage: benches/hogwild_threads.sh DATASET [EPOCHS] [REPEATS]}
epochs=${2:-3}
repeats=${3:-3}
bin=${SPARSELIN:-target/release/sparselin}
out=$(mktemp -d "${TMPDIR:-/tmp}/hogwild_threads.XXXXXX")
trap 'rm -rf "$out"' EXIT

configs=("1 0" "2 0" "2 256")
for repeat in $(seq "$repeats"); do
    for sampling in file-order uniform; do
        for config in "${configs[@]}"; do
            read -r threads hot <<<"$config"
            name="$sampling $threads $hot $repeat"
            echo "$ $bin train $data --algo asgd --loss hinge --epochs $epochs" \
                "--sampling $sampling --threads $threads --hot-features $hot" >&2
            "$bin" train "$data" --algo asgd --loss hinge --epochs "$epochs" \
                --sampling "$sampling" --threads "$threads" --hot-features "$hot" \
                --json --quiet -o "$out/model" >"$out/${name// /_}.json"
        done
        echo "$ 2 x ($bin train $data ... --sampling $sampling --threads 1), at once" >&2
        for copy in a b; do
            "$bin" train "$data" --algo asgd --loss hinge --epochs "$epochs" \
                --sampling "$sampling" --threads 1 \
                --json --quiet -o "$out/model_$copy" >"$out/${sampling}_pair${copy}_$repeat.json" &
        done
        wait
    done
done

python3 - "$out" "$repeats" <<'EOF'
import json, statistics, sys
from pathlib import Path

out, repeats = Path(sys.argv[1]), int(sys.argv[2])
print("| sampling | threads | hot features | median s | M nnz/s | vs 1 thread | objective |")
print("|---|---|---|---|---|---|---|")
for sampling in ("file-order", "uniform"):
    base = None
    for threads, hot in ((1, 0), (2, 0), (2, 256)):
        runs = [json.loads((out / f"{sampling}_{threads}_{hot}_{r}.json").read_text())
                for r in range(1, repeats + 1)]
        seconds = statistics.median(run["seconds"] for run in runs)
        # Entries processed: nnz per epoch times epochs (the expected count under uniform
        # sampling, which draws rows with replacement).
        nnz = runs[0]["nnz"] * runs[0]["details"]["epochs"]
        objective = statistics.median(run["train"]["objective"] for run in runs)
        base = base or seconds
        hot_text = "-" if threads == 1 else str(hot)
        print(f"| {sampling} | {threads} | {hot_text} | {seconds:.3f} | {nnz / seconds / 1e6:.1f} "
              f"| {base / seconds:.2f}x | {objective:.6f} |")
    # The pair: both processes' entries over the later one's seconds, per round, then the median.
    rates, ratios = [], []
    for r in range(1, repeats + 1):
        pair = [json.loads((out / f"{sampling}_pair{c}_{r}.json").read_text()) for c in "ab"]
        later = max(run["seconds"] for run in pair)
        rates.append(2 * pair[0]["nnz"] * pair[0]["details"]["epochs"] / later)
        ratios.append(2 * base / later)
    print(f"| {sampling} | 2 × 1 (independent, ceiling) | - | - | "
          f"{statistics.median(rates) / 1e6:.1f} | {statistics.median(ratios):.2f}x | - |")
EOF
