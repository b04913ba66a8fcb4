#!/usr/bin/env bash
# bench.sh — tracecast vs pj_dump, side by side, in one run.
#
# Measures wall time and peak RSS of Debian pajeng's pj_dump and of
# `tracecast states --format pjdump` on the 41 MB StarPU 1.4.9 trace
# (decompressed and sorted with shared/tools/paje_sort.py, so that pj_dump
# accepts it) — on all cores, and on one (GOMAXPROCS=1: one thread) — prints
# them and their ratios, then the Go benchmarks of the tokenizer, the reader
# and the pj_dump path per thread count (MB/s, allocations per line, live
# heap). Usage: tools/bench.sh [TRACE.gz]
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
src=${1:-$shared/traces/starpu-1.4.9-generated/cholesky_lws_12cpu_2numa_large/paje.trace.gz}
runs=${RUNS:-3}
for tool in pj_dump python3 /usr/bin/time go; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install pajeng python3 time)" >&2; exit 1; }
done
[ -f "$src" ] || { echo "bench: $src not found (the study's traces live in ../shared)" >&2; exit 1; }

cache=.cache/bench
mkdir -p "$cache"
sorted=$cache/$(basename "$(dirname "$src")").sorted.trace
if [ ! -s "$sorted" ]; then
	echo "preparing $sorted (paje_sort.py)..." >&2
	python3 "$shared/tools/paje_sort.py" "$src" "$sorted.tmp" && mv "$sorted.tmp" "$sorted"
fi
go build -o "$cache/tracecast" ./cmd/tracecast
size=$(stat -c %s "$sorted")

# best-of-N wall time (s) and the peak RSS (KiB) of that run
measure() {
	local best="" rss=""
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %M" -o "$cache/time.txt" "$@" > /dev/null
		read -r t m < "$cache/time.txt"
		if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t rss=$m; fi
	done
	echo "$best $rss"
}
read -r pt pm < <(measure pj_dump "$sorted")
read -r tt tm < <(measure "$cache/tracecast" states --format pjdump "$sorted")
read -r t1 m1 < <(GOMAXPROCS=1 measure "$cache/tracecast" states --format pjdump "$sorted")
cores=${GOMAXPROCS:-$(nproc)}
# identical records?
same=no
if cmp -s <(pj_dump "$sorted" | LC_ALL=C sort) <("$cache/tracecast" states --format pjdump "$sorted" | LC_ALL=C sort); then same=yes; fi

awk -v size="$size" -v pt="$pt" -v pm="$pm" -v tt="$tt" -v tm="$tm" -v t1="$t1" -v m1="$m1" -v cores="$cores" -v same="$same" -v f="$sorted" 'BEGIN{
	mb = size / 1e6
	printf "input: %s (%.1f MB), best of '"$runs"' runs\n", f, mb
	printf "%-34s %8s %10s %12s\n", "tool", "wall s", "MB/s", "peak RSS MiB"
	printf "%-34s %8.2f %10.1f %12.1f\n", "pj_dump (pajeng 1.3.6)", pt, mb/pt, pm/1024
	printf "%-34s %8.2f %10.1f %12.1f\n", "tracecast states (" cores " threads)", tt, mb/tt, tm/1024
	printf "%-34s %8.2f %10.1f %12.1f\n", "tracecast states (1 thread)", t1, mb/t1, m1/1024
	printf "ratio: tracecast is %.1fx faster (%.1fx on one thread) and uses %.1fx less memory; identical records: %s\n", pt/tt, pt/t1, pm/tm, same
}'
echo
TRACECAST_BENCH_TRACE=$(realpath "$sorted") go test -run '^$' -bench 'Tokenize|Resolve|StatesPjdump|LiveHeap' -benchmem -benchtime 3x ./parsers/paje
go test -run '^$' -bench 'Writer' -benchmem ./sinks/pjdump
