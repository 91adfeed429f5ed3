#!/usr/bin/env bash
# Vowpal Wabbit text read by sparselin and by VW itself (PERF.md `### Vowpal Wabbit text`):
# the rows of FILE.svm written as VW text twice — names of digits in the default namespace
# (`y | 3:0.5 17:1`), and string names in a named namespace with importance weights
# (`y 2 |t f3:0.5 f17:1`, hashed by MurmurHash3) — then, in ROUNDS interleaved rounds on
# one thread: `sparselin convert` of the LIBSVM text (the baseline), `sparselin convert
# --format vw` of each VW file, and VW's parser alone on each (`--noop`, its start-up measured
# on an empty file). Prints CPU seconds (user + sys); divide each file's MB by them.
#
#     benches/vw_parse_peers.sh FILE.svm [ROUNDS]
set -euo pipefail

svm=${1:?usage: benches/vw_parse_peers.sh FILE.svm [ROUNDS]}
rounds=${2:-3}
bin=target/release/sparselin
out=$(mktemp -d "${TMPDIR:-/tmp}/vw_parse_peers.XXXXXX")
trap 'rm -rf "$out"' EXIT

awk '{y = $1; $1 = ""; print y " |" $0}' "$svm" >"$out/digits.vw"
awk '{y = $1; $1 = ""; line = y " " (NR % 3 + 1) " |t"; for (k = 2; k <= NF; k++) line = line " f" $k; print line}' \
    "$svm" >"$out/names.vw"
: >"$out/empty.vw"
ls -l "$svm" "$out"/digits.vw "$out"/names.vw | awk '{printf "%s: %.1f MB\n", $NF, $5 / 1e6}'

cpu() { # label, command...
    local label=$1
    shift
    /usr/bin/time -f "$label: user %U sys %S" "$@" >/dev/null
}

for round in $(seq "$rounds"); do
    echo "== round $round"
    export RAYON_NUM_THREADS=1
    rm -rf "$out/libsvm"
    cpu "convert libsvm" "$bin" convert -q "$svm" "$out/libsvm"
    for kind in digits names; do
        rm -rf "$out/$kind"
        cpu "convert --format vw, $kind" "$bin" convert -q --format vw --bits 18 "$out/$kind.vw" "$out/$kind"
        cpu "vw --noop, $kind" python3 -m vowpalwabbit -d "$out/$kind.vw" --noop --quiet -b 18
    done
    cpu "vw --noop, empty file" python3 -m vowpalwabbit -d "$out/empty.vw" --noop --quiet -b 18
done
"$bin" info "$out/names" | sed -n '2,4p;/weights/p'
