#!/usr/bin/env bash
# A cross-validated search over C with warm starts along the grid (the default) and without
# (`--cold-grid`), at the default tolerance and at 1e-4, against liblinear's `-C` (PERF.md "Warm starts along a grid"): squared
# hinge (liblinear `-s 2`) and log loss (`-s 0`), no bias as liblinear's default, 5 folds,
# over the grid of C liblinear's own search printed. Wall seconds of whole commands (reading
# the text included, for both), ROUNDS alternated rounds (default 3), and the C each names.
#
#     benches/grid_warm_starts.sh [DATA_DIR] [ROUNDS] [SET...]
#
# DATA_DIR is ../shared/data (the default); SETs default to reuters_grain and spamassassin.
# Needs liblinear-train (Debian's liblinear-tools). Binary: target/release/sparselin.
set -euo pipefail

data=${1:-../shared/data}
rounds=${2:-3}
shift $(($# > 2 ? 2 : $#))
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(reuters_grain spamassassin)
bin=target/release/sparselin
out=$(mktemp -d "${TMPDIR:-/tmp}/grid_warm_starts.XXXXXX")
trap 'rm -rf "$out"' EXIT

# Wall seconds of a command, its output in $out/log.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >"$out/log" 2>&1
  end=$(date +%s.%N)
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$end"
}

for set in "${sets[@]}"; do
  zcat "$data/$set/train.svm.gz" >"$out/train.svm"
  features=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['features'])" \
    "$data/$set/meta.json")
  for pair in "2 squared-hinge dcd" "2 squared-hinge lbfgs" "0 log lbfgs"; do
    read -r solver loss algo <<<"$pair"
    liblinear-train -C -s "$solver" -v 5 "$out/train.svm" >"$out/liblinear.log"
    grid=$(python3 -c "
import re, sys
print(','.join(repr(2.0 ** float(m)) for m in re.findall(r'log2c=\s*(-?[0-9.]+)', open(sys.argv[1]).read())))
" "$out/liblinear.log")
    for round in $(seq "$rounds"); do
      t=$(seconds liblinear-train -C -s "$solver" -v 5 "$out/train.svm")
      best=$(grep -o 'Best C = [^ ]*' "$out/log" | cut -d' ' -f4)
      printf '%s -s %s round %s: %-22s %6s s  best C %s\n' "$set" "$solver" "$round" \
        "liblinear -C" "$t" "$best"
      for starts in warm cold; do
        for tol in 1e-9 1e-4; do
          flags=(--tol "$tol")
          [ "$starts" = warm ] || flags+=(--cold-grid)
          t=$(seconds "$bin" train "$out/train.svm" --features "$features" --algo "$algo" \
            --loss "$loss" --no-bias --cv 5 --cost-grid "$grid" --threads 2 "${flags[@]}")
          best=$(grep -o 'best: C = .*' "$out/log" | cut -d' ' -f4)
          printf '%s -s %s round %s: %-22s %6s s  best C %s\n' "$set" "$solver" "$round" \
            "$algo $starts --tol $tol" "$t" "$best"
        done
      done
    done
  done
done
