#!/bin/sh
# backfill-eval runs `tracecast backfill` on the acceptance set of the
# backfill issue (docs/backfill.md): the StarPU traces of ../shared/traces,
# SimGrid SMPI runs (the testdata ones and, with smpirun, the dynamic farm
# and Jacobi runs tools/forecast-eval.sh generates), back-end tasks of 1 ms,
# 10 ms and 100 ms, wait mode at α = 10 and kill mode with o = 0.5 ms at
# α = 1, and prints every group's V per policy and the summary.
#   make backfill-eval            (needs ../shared; smpirun for the generated runs)
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$HERE/../shared}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/backfill-eval.XXXXXX")}
BIN=${BIN:-$OUT/tracecast}
go build -o "$BIN" "$HERE/cmd/tracecast"

traces=""
for t in cholesky_dmdas_12cpu cholesky_dmdas_2cpu cholesky_lws_12cpu_2numa_large lu_lws_12cpu_2numa; do
    f="$SHARED/traces/starpu-1.4.9-generated/$t/paje.trace.gz"
    [ -f "$f" ] && traces="$traces $f"
done
for f in "$SHARED/traces/MPI_HPC/p2p-i-la-1.trace.gz" "$SHARED/traces/calculParallelePSMSC/bench2p_traces/p2p-i-la-11.trace.gz"; do
    [ -f "$f" ] && traces="$traces $f"
done
[ -n "$traces" ] || echo "backfill-eval: $SHARED/traces absent: only the testdata traces" >&2
for f in dynfarm-16.trace.gz jacobi-8.trace.gz farm-16.trace stencil-16.trace; do
    traces="$traces $HERE/testdata/smpi/$f"
done
if command -v smpirun >/dev/null && command -v smpicc >/dev/null; then
    S="$OUT/smpi"
    mkdir -p "$S"
    cp "$HERE/testdata/smpi/platform.xml" "$HERE/testdata/smpi/hostfile.txt" "$S/"
    (
        cd "$S"
        for prog in dynfarm jacobi; do smpicc -O1 -o "$prog" "$HERE/testdata/smpi/$prog.c" -lm; done
        run() { smpirun -np "$1" -platform platform.xml -hostfile hostfile.txt -trace -trace-file "$2" \
            --cfg=tracing/smpi/computing:yes --cfg=smpi/simulate-computation:no --log=root.thres:warning "$3" "$4" >/dev/null 2>&1; }
        run 16 dynfarm-16-3000.trace ./dynfarm 3000
        run 16 jacobi-16.trace ./jacobi 800
    )
    traces="$traces $S/dynfarm-16-3000.trace $S/jacobi-16.trace"
fi

i=0
for t in $traces; do
    for m in "wait --alpha 10" "kill --overhead 500us --alpha 1"; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        LOG_LEVEL=warn "$BIN" backfill "$t" --task 1ms --task 10ms --task 100ms --mode $m -o "$OUT/runs/$i" >/dev/null
        echo "$t" >"$OUT/runs/$i/trace"
    done
done
python3 "$HERE/tools/backfill_eval.py" "$OUT/runs"
