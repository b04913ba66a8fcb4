#!/bin/sh
# forecast-eval scores `tracecast predict` (default method) on the acceptance
# set of docs/forecasts.md: the four StarPU traces of
# ../shared/traces/starpu-1.4.9-generated and SimGrid SMPI runs generated
# here with smpirun (testdata/smpi/dynfarm.c, jacobi.c at full size); class
# idle, k = ⌈25%·R⌉ and k = 1, horizons 1 ms, 10 ms, 100 ms, 1 s, issued
# every 5 ms. It prints each group's MSE ratio to ks-paper, persistence and
# climatology, the averages, the worst group, and the coverage per trace.
#   make forecast-eval            (needs ../shared; smpirun for the SMPI part)
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$HERE/../shared}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/forecast-eval.XXXXXX")}
BIN=${BIN:-$OUT/tracecast}
METHOD=${METHOD:-auto}
go build -o "$BIN" "$HERE/cmd/tracecast"

traces=""
for t in cholesky_dmdas_12cpu cholesky_dmdas_2cpu cholesky_lws_12cpu_2numa_large lu_lws_12cpu_2numa; do
    f="$SHARED/traces/starpu-1.4.9-generated/$t/paje.trace.gz"
    [ -f "$f" ] && traces="$traces $f"
done
[ -n "$traces" ] || echo "forecast-eval: $SHARED/traces absent: StarPU traces skipped" >&2

if command -v smpirun >/dev/null && command -v smpicc >/dev/null; then
    S="$OUT/smpi"
    mkdir -p "$S"
    cp "$HERE/testdata/smpi/platform.xml" "$HERE/testdata/smpi/hostfile.txt" "$S/"
    (
        cd "$S"
        for prog in dynfarm jacobi; do smpicc -O1 -o "$prog" "$HERE/testdata/smpi/$prog.c" -lm; done
        run() { smpirun -np "$1" -platform platform.xml -hostfile hostfile.txt -trace -trace-file "$2" \
            --cfg=tracing/smpi/computing:yes --cfg=smpi/simulate-computation:no --log=root.thres:warning "$3" "$4" >/dev/null 2>&1; }
        run 16 dynfarm-16.trace ./dynfarm 3000
        run 16 jacobi-16.trace ./jacobi 800
        run 8 jacobi-8.trace ./jacobi 1500
    )
    traces="$traces $S/dynfarm-16.trace $S/jacobi-16.trace $S/jacobi-8.trace"
else
    echo "forecast-eval: smpirun absent (apt-get install libsimgrid-dev): SMPI traces skipped" >&2
fi

for m in "$METHOD" ks-paper; do
    i=0
    for t in $traces; do
        i=$((i + 1))
        LOG_LEVEL=warn "$BIN" predict "$t" --method "$m" --horizon 1ms --horizon 10ms --horizon 100ms --horizon 1s \
            --every 5ms --query 'idle>=25%' --query 'idle>=1' --verify --format jsonl -o "$OUT/$m/$i" 2>/dev/null
        echo "$t" >"$OUT/$m/$i/trace"
    done
done
python3 "$HERE/tools/forecast_eval.py" "$OUT/$METHOD"
