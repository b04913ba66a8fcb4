#!/usr/bin/env bash
# bench.sh — `make bench`: tracecast against pj_dump at growing trace sizes,
# in one run, then the Go benchmarks of the reader and the writers.
#
# The inputs are made on the fly in a temporary directory, removed at the
# end: the 41 MB StarPU 1.4.9 trace of ../shared (decompressed and sorted
# with shared/tools/paje_sort.py, so that pj_dump accepts it), and its
# events repeated 10 and 50 times in time (shared/tools/paje_scale.py):
# 41 MB, 420 MB, 2.1 GB. For each, `tracecast states --format pjdump` runs
# on all cores and on one (GOMAXPROCS=1, one thread) and, on the first
# size, on the gzip-compressed trace; pj_dump runs on the same inputs in
# the same run (about 150 s on 2.1 GB). The table gives the best wall time
# of RUNS runs (pj_dump: of PJ_RUNS, default RUNS on 41 MB and 1 above),
# MB/s, the peak RSS of that run, and the ratio to pj_dump's time per byte
# on the same input. The outputs of both tools are compared (sorted) on the
# 41 MB trace.
#
# Usage: tools/bench.sh [TRACE.gz]. Environment: SHARED (../shared), RUNS
# (3), SCALES ("1 10 50": copies of the trace per size), TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
src=${1:-$shared/traces/starpu-1.4.9-generated/cholesky_lws_12cpu_2numa_large/paje.trace.gz}
runs=${RUNS:-3}
scales=${SCALES:-1 10 50}
for tool in pj_dump python3 go gzip; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install pajeng python3 gzip)" >&2; exit 1; }
done
[ -f "$src" ] || { echo "bench: $src not found (the study's traces live in ../shared)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracecast-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/tracecast" ./cmd/tracecast
cores=$(nproc)

# measure RUNS CMD...: the best wall time (s, to the millisecond:
# /usr/bin/time rounds to 10 ms, a tenth of the 41 MB run) of RUNS runs and
# the peak RSS (KiB) of that run; output to /dev/null.
measure() {
	python3 - "$@" <<'PY'
import os, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
best = None
for _ in range(n):
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed (status {status})")
    if best is None or wall < best[0]:
        best = (wall, ru.ru_maxrss)
print(f"{best[0]:.3f} {best[1]}")
PY
}

echo "preparing the inputs in $tmp (paje_sort.py, paje_scale.py)..." >&2
python3 "$shared/tools/paje_sort.py" "$src" "$tmp/x1.trace"
rows=$tmp/rows.txt
: >"$rows"
for n in $scales; do
	f=$tmp/x$n.trace
	[ -f "$f" ] || python3 "$shared/tools/paje_scale.py" "$tmp/x1.trace" "$n" "$f"
	sync # the input just written: no write-back during the runs
	size=$(stat -c %s "$f")
	pjr=${PJ_RUNS:-$([ "$n" = 1 ] && echo "$runs" || echo 1)}
	echo "x$n ($((size / 1000000)) MB): pj_dump ($pjr run(s))..." >&2
	read -r pt pm < <(measure "$pjr" pj_dump "$f")
	echo "x$n: tracecast..." >&2
	read -r tt tm < <(measure "$runs" "$tmp/tracecast" states --format pjdump "$f")
	echo "$n $size pj_dump 1 $pt $pm $pt" >>"$rows"
	echo "$n $size tracecast $cores $tt $tm $pt" >>"$rows"
	if [ "$n" != 50 ]; then
		read -r t1 m1 < <(GOMAXPROCS=1 measure "$runs" "$tmp/tracecast" states --format pjdump "$f")
		echo "$n $size tracecast 1 $t1 $m1 $pt" >>"$rows"
	fi
	if [ "$n" = 1 ]; then
		gzip -6 -c "$f" >"$f.gz"
		read -r tg mg < <(measure "$runs" "$tmp/tracecast" states --format pjdump "$f.gz")
		echo "$n $size tracecast(gzip) $cores $tg $mg $pt" >>"$rows"
		same=no
		if cmp -s <(pj_dump "$f" | LC_ALL=C sort) <("$tmp/tracecast" states --format pjdump "$f" | LC_ALL=C sort); then same=yes; fi
	fi
	[ "$n" = 1 ] || rm -f "$f"
done

echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores (nproc), $(go version | cut -d' ' -f3), pj_dump from pajeng $(dpkg-query -W -f '${Version}' pajeng 2>/dev/null || echo '?')"
echo "input: $(basename "$(dirname "$src")") sorted, repeated in time; best of $runs runs (pj_dump: ${PJ_RUNS:-$runs on x1, 1 above}), same run"
echo
awk -v cores="$cores" 'BEGIN{
	printf "| input | tool | threads | wall s | MB/s | peak RSS MiB | × pj_dump per byte |\n"
	printf "|---|---|---|---|---|---|---|\n"
}
{
	mb = $2 / 1e6
	ratio = ($3 == "pj_dump") ? "1" : sprintf("%.1f", $7 / $5)
	printf "| %.0f MB (×%s) | %s | %s | %.3f | %.0f | %.1f | %s |\n", mb, $1, $3, $4, $5, mb / $5, $6 / 1024, ratio
}' "$rows"
echo
echo "identical records on x1 (sorted pj_dump and tracecast outputs): ${same:-not compared}"
echo
echo "Go benchmarks (reader on the 41 MB trace, writers):"
TRACECAST_BENCH_TRACE=$tmp/x1.trace go test -run '^$' -bench 'Tokenize|Resolve|StatesPjdump|LiveHeap' -benchmem -benchtime 3x ./parsers/paje
go test -run '^$' -bench 'Writer|Fixed6' -benchmem ./sinks/pjdump
go test -run '^$' -bench 'Writer|EncodingCSV' -benchmem ./sinks/csv
go test -run '^$' -bench 'WriteEntities' -benchmem ./sinks/arrow
