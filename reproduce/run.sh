#!/usr/bin/env bash
# Pallipuram et al.'s (2014) study at a reduced scale (see docs/reproduce.md).
#   reproduce/run.sh        the study: 8 training + 3 validation subsets x 16 DAG sizes x 6 cluster sizes
#   reproduce/run.sh ci     a small configuration for CI (under a minute)
# Writes reproduce/REPORT.md (or reproduce/ci/REPORT.md), the model, plots and
# time.txt (/usr/bin/time -v: wall time and peak RSS).
# TRACECAST=path/to/binary uses that binary instead of building one.
set -euo pipefail
mode=${1:-full}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${TRACECAST:-}
if [[ -z $bin ]]; then
	bin=$(mktemp -d)/tracecast
	go build -o "$bin" ./cmd/tracecast
fi
case $mode in
full)
	out=reproduce
	args=(--train-subsets 8 --validation-subsets 3 --sizes 1000:4000:200 --cluster-sizes 8,16,32,64,128,256)
	;;
ci)
	out=reproduce/ci
	args=(--train-subsets 2 --validation-subsets 1 --sizes 1000:4000:1000 --cluster-sizes 8,32,128 --max-samples 1000000)
	;;
*)
	echo "usage: $0 [full|ci]" >&2
	exit 2
	;;
esac
mkdir -p "$out"
timer=()
if [[ -x /usr/bin/time ]]; then
	timer=(/usr/bin/time -v -o "$out/time.txt")
fi
"${timer[@]}" "$bin" reproduce -o "$out" "${args[@]}" --log-level "${LOG_LEVEL:-info}"
if [[ -f $out/time.txt ]]; then
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/time.txt")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time.txt")
	printf '\nMeasured by /usr/bin/time -v: wall time %s, peak RSS %s MiB.\n' "$wall" "$((rss / 1024))" >>"$out/REPORT.md"
	echo "wall $wall, peak RSS $((rss / 1024)) MiB"
fi
echo "report: $out/REPORT.md"
