#!/usr/bin/env bash
# Text parsing throughput against the peers (PERF.md `## Data`): sparselin's chunk parser
# alone, `sparselin convert` at 1 and 2 threads, scikit-learn's load_svmlight_file and
# Vowpal Wabbit's parser alone (`--noop`, with its start-up measured on an empty file), in
# ROUNDS interleaved rounds. Prints each command's CPU seconds; divide the file's MB by them.
#
#     benches/parse_peers.sh FILE.svm [ROUNDS]
#
# FILE.svm is LIBSVM text (e.g. the first 100 MB of `gen --preset rcv1-like --text`'s
# output, cut at a line boundary); VW's copy of it is written beside the temporary outputs.
# Binaries: target/release (build `cargo build --release --example parse_throughput` first).
set -euo pipefail

svm=${1:?usage: benches/parse_peers.sh FILE.svm [ROUNDS]}
rounds=${2:-3}
bin=target/release
out=$(mktemp -d "${TMPDIR:-/tmp}/parse_peers.XXXXXX")
trap 'rm -rf "$out"' EXIT

# VW's format: 'y rest' -> '{1|-1} | rest'.
awk '{y = ($1 > 0) ? 1 : -1; $1 = ""; print y " |" $0}' "$svm" >"$out/data.vw"
: >"$out/empty.vw"

for round in $(seq "$rounds"); do
    echo "== round $round"
    RAYON_NUM_THREADS=1 "$bin/examples/parse_throughput" "$svm" 3 | tail -1
    for threads in 1 2; do
        rm -rf "$out/shards"
        RAYON_NUM_THREADS=$threads /usr/bin/time -f "convert, $threads thread(s): wall %e user %U sys %S" \
            "$bin/sparselin" convert -q "$svm" "$out/shards"
    done
    python3 - "$svm" <<'EOF'
import sys, time
from sklearn.datasets import load_svmlight_file
start = time.process_time()
load_svmlight_file(sys.argv[1])
print(f"scikit-learn load_svmlight_file: CPU {time.process_time() - start:.2f}")
EOF
    /usr/bin/time -f "vw --noop: wall %e user %U sys %S" python3 -m vowpalwabbit -d "$out/data.vw" --noop --quiet
    /usr/bin/time -f "vw --noop, empty file: wall %e user %U sys %S" \
        python3 -m vowpalwabbit -d "$out/empty.vw" --noop --quiet
done
