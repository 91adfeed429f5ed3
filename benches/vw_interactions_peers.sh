#!/usr/bin/env bash
# Vowpal Wabbit quadratic interactions, formed by sparselin and by VW itself (PERF.md
# `### Vowpal Wabbit interactions`): the first ROWS rows of FILE.svm written as VW text with
# each row's first 8 features in namespace a and the rest in namespace b (names of digits,
# labels ±1 by label ≤ 5), then, in ROUNDS interleaved rounds on one thread, one pass of
# logistic SGD with `-q ab` by each: `sparselin train --format vw --quadratic ab` straight
# from the text (parse, form the interactions, train), `sparselin convert --quadratic ab`
# and one epoch on the dataset, and `vw -q ab` with its default update and with `--sgd`
# (both parse, form the interactions while learning, and learn); then five passes: five
# epochs on the dataset against `vw -q ab --sgd -c --passes 5 --holdout_off` (which writes
# and rereads its cache, forming the interactions in every pass). Prints CPU seconds (user +
# sys).
#
#     benches/vw_interactions_peers.sh FILE.svm [ROWS] [ROUNDS]
set -euo pipefail

svm=${1:?usage: benches/vw_interactions_peers.sh FILE.svm [ROWS] [ROUNDS]}
rows=${2:-20000}
rounds=${3:-3}
bin=target/release/sparselin
out=$(mktemp -d "${TMPDIR:-/tmp}/vw_interactions_peers.XXXXXX")
trap 'rm -rf "$out"' EXIT

head -n "$rows" "$svm" | awk '{
    line = ($1 <= 5 ? "1" : "-1") " |a"
    for (k = 2; k <= NF; k++) line = line (k == 10 ? " |b " : " ") $k
    print line
}' >"$out/crossed.vw"
ls -l "$out/crossed.vw" | awk '{printf "%s: %.1f MB\n", $NF, $5 / 1e6}'

cpu() { # label, command...
    local label=$1
    shift
    /usr/bin/time -f "$label: user %U sys %S" "$@" >/dev/null
}

export RAYON_NUM_THREADS=1
common=(--algo sgd --loss log --threads 1 --sampling file-order -o "$out/m")
for round in $(seq "$rounds"); do
    echo "== round $round"
    cpu "sparselin train from text" "$bin" train "$out/crossed.vw" --format vw --quadratic ab "${common[@]}" --epochs 1
    rm -rf "$out/data"
    cpu "sparselin convert" "$bin" convert -q "$out/crossed.vw" "$out/data" --format vw --quadratic ab
    cpu "sparselin train on the dataset" "$bin" train "$out/data" "${common[@]}" --epochs 1
    cpu "vw -q ab" python3 -m vowpalwabbit -d "$out/crossed.vw" -q ab --loss_function logistic --quiet -b 18
    cpu "vw -q ab --sgd" python3 -m vowpalwabbit -d "$out/crossed.vw" -q ab --sgd --loss_function logistic --quiet -b 18
    cpu "sparselin 5 epochs on the dataset" "$bin" train "$out/data" "${common[@]}" --epochs 5
    rm -f "$out/crossed.vw.cache"
    cpu "vw -q ab --sgd, 5 passes" python3 -m vowpalwabbit -d "$out/crossed.vw" -q ab --sgd --loss_function logistic --quiet -b 18 -c --passes 5 --holdout_off
done
"$bin" info "$out/data" | sed -n '2,6p'
