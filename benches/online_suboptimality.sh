#!/usr/bin/env bash
# Relative suboptimality (J − J*)/J* of the online learners after 1, 2 and 5 epochs, one thread
# (PERF.md `### AdaGrad`).
#
#     benches/online_suboptimality.sh DATA LOSS LAMBDA [OPTIMUM_SOLVER]
#
# J* is the training objective of OPTIMUM_SOLVER (default dcd; tron for log loss) run to
# --tol 1e-9; each learner's J is the training objective its summary reports (sparselin's
# objective, bias regularized, default seed and sampling). The learners: asgd and sgd at their
# default t₀, adagrad at η = 0.1, 0.3, 1 (its default) and 3.
set -euo pipefail
SPARSELIN=${SPARSELIN:-$(dirname "$0")/../target/release/sparselin}
data=$1 loss=$2 lambda=$3 solver=${4:-dcd}
objective() {
    "$SPARSELIN" train "$data" --loss "$loss" --lambda "$lambda" --json --quiet -o /dev/null "$@" |
        python3 -c "import json, sys; print(json.load(sys.stdin)['train']['objective'])"
}
optimum=$(objective --algo "$solver" --tol 1e-9 --max-iter 3000)
echo "$data, $loss, λ = $lambda: J* = $optimum ($solver)"
learners=("asgd" "sgd" "adagrad --eta 0.1" "adagrad --eta 0.3" "adagrad" "adagrad --eta 3")
printf '\n| epochs |'
for learner in "${learners[@]}"; do printf ' %s |' "$learner"; done
printf '\n|---|'
for _ in "${learners[@]}"; do printf -- '---|'; done
echo
for epochs in 1 2 5; do
    printf '| %s |' "$epochs"
    for learner in "${learners[@]}"; do
        # shellcheck disable=SC2086
        j=$(objective --algo $learner --epochs "$epochs" --threads 1)
        python3 -c "print(' %.2e |' % (($j - $optimum) / $optimum), end='')"
    done
    echo
done
