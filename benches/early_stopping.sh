#!/usr/bin/env bash
# Early stopping against fixed epoch counts on the real sets (README `## Online learners`,
# PERF.md `### Early stopping`): for SGD and ASGD, log loss at λ = 1e-6 with the features
# scaled by max-abs, one thread, seed 1, the test error and test objective of 5 epochs, of 100
# epochs, and of `--early-stop 3` (at most 100 epochs), with the epoch it kept and the
# epochs it ran.
#
#     benches/early_stopping.sh [SPARSELIN] [DATA_DIR]
#
# SPARSELIN defaults to target/release/sparselin, DATA_DIR to ../shared/data; its binary
# sets with a test file are run.
set -euo pipefail

bin=${1:-target/release/sparselin}
data=${2:-../shared/data}
model=$(mktemp)
trap 'rm -f "$model"' EXIT

summary='import json, sys
j = json.load(sys.stdin)
stop = j["details"].get("early_stopping")
kept = "" if stop is None else "%g of %d" % (stop["best_epoch"], stop["epochs_run"])
print("%.4f | %.4f | %s" % (j["test"]["error_rate"], j["test"]["objective"], kept))'

echo "| set | learner | run | test error | test objective | epoch kept |"
echo "|---|---|---|---|---|---|"
for set_name in reuters_grain spamassassin mnist_3v5 digits_3v5 fashion_mnist_0v6 spambase; do
    dir=$data/$set_name
    for algo in sgd asgd; do
        for run in "--epochs 5" "--epochs 100" "--early-stop 3"; do
            # shellcheck disable=SC2086 # $run is two words on purpose
            row=$("$bin" train "$dir/train.svm.gz" --algo "$algo" --loss log --lambda 1e-6 \
                --threads 1 --scale max-abs $run --test "$dir/test.svm.gz" --json --quiet \
                -o "$model" | python3 -c "$summary")
            echo "| $set_name | $algo | \`$run\` | $row |"
        done
    done
done
