#!/usr/bin/env bash
# `train --scale max-abs` against unscaled training on the real sets (PERF.md `## Scaling
# features`): for each set and learner, at λ = 1e-4 on one thread, the iterations and stop of
# a batch solver, the training seconds (the summary's, which leave out reading and scaling)
# and the test error (R² for the regressions), unscaled and scaled.
#
#     benches/scaling_real_sets.sh [DATA_DIR]
#
# DATA_DIR is ../shared/data (the default). Binary: target/release/sparselin.
set -euo pipefail

data=${1:-../shared/data}
bin=target/release/sparselin
out=$(mktemp -d "${TMPDIR:-/tmp}/scaling_real_sets.XXXXXX")
trap 'rm -rf "$out"' EXIT

classifiers=("lbfgs --loss log" "cd --loss log" "dcd --loss hinge" "sublbfgs --loss hinge"
  "asgd --loss hinge" "asgd --loss log")
regressions=("lbfgs --loss squared" "cd --loss squared" "asgd --loss squared")
for set in spambase digits_3v5 reuters_grain tecator diabetes; do
  features=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['features'])" \
    "$data/$set/meta.json")
  case $set in
    tecator | diabetes) learners=("${regressions[@]}") ;;
    *) learners=("${classifiers[@]}") ;;
  esac
  for learner in "${learners[@]}"; do
    for scale in "" "--scale max-abs"; do
      # shellcheck disable=SC2086 # the learner and scale are lists of arguments
      "$bin" train "$data/$set/train.svm.gz" --test "$data/$set/test.svm.gz" \
        --features "$features" --algo $learner $scale --lambda 1e-4 --threads 1 --json \
        --quiet -o "$out/model" 2>/dev/null >"$out/summary.json"
      python3 - "$set" "$learner" "${scale:-unscaled}" "$out/summary.json" <<'PY'
import json, sys
name, learner, scale, path = sys.argv[1:]
summary = json.load(open(path))
details, test = summary["details"], summary["test"]
metric = ("error", test["error_rate"]) if test.get("error_rate") is not None else ("r2", test["r2"])
print(f"{name:14s} {learner:22s} {scale:15s} iterations {str(details.get('iterations', '-')):>5s} "
      f"stop {str(details.get('stop', '-')):15s} {summary['seconds'] * 1e3:8.1f} ms  "
      f"test {metric[0]} {metric[1]:.4f}")
PY
    done
  done
done
