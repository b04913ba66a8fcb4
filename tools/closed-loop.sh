#!/bin/sh
# closed-loop runs `tracecast closed-loop` on the closed-loop acceptance of
# the backfill issue (docs/backfill.md#closed-loop): synthetic DAGs of 1000,
# 2000 and 4000 tasks on R = 4 and 16 workers, a level as wide as R on
# average (--levels T/R), 10 ms tasks with a CV of 0.3 (synth's default) and
# of 1, back-end tasks of 1 and 10 ms, wait mode, α = 10 (ALPHA), SEEDS
# DAGs each (default 5); then prints the summary table of docs/backfill.md.
#   make closed-loop              (about 3 minutes on 2 idle cores)
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/closed-loop.XXXXXX")}
BIN=${BIN:-$OUT/tracecast}
SEEDS=${SEEDS:-5}
go build -o "$BIN" "$HERE/cmd/tracecast"
for cv in 0.3 1; do
    for T in 1000 2000 4000; do
        for R in 4 16; do
            d="$OUT/cv$cv/T${T}_R$R"
            mkdir -p "$d"
            "$BIN" closed-loop --tasks "$T" --workers "$R" --levels $((T / R)) --codelets "dag_task:10:$cv:1" \
                --seeds "$SEEDS" --task 1ms,10ms --alpha "${ALPHA:-10}" -o "$d" > "$d.txt"
            grep -h 'forecast harvests' "$d.txt" | sed "s|^|cv $cv, T $T, R $R:|"
        done
    done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print()
print("| durations | T | R | idle | d | forecast U/T, ΔT/T | best timeout at ≤ its ΔT/T: τ, U/T, ΔT/T | greedy U/T, ΔT/T | online-timeout | residual | holds |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
held = total = 0
for cv in ("0.3", "1"):
    for T in (1000, 2000, 4000):
        for R in (4, 16):
            path = os.path.join(out, "cv" + cv, "T%d_R%d" % (T, R), "closedloop.jsonl")
            means = [r for r in map(json.loads, open(path)) if r["record"] == "mean"]
            for d in sorted({r["d"] for r in means}):
                rs = [r for r in means if r["d"] == d]
                pol = {r["policy"]: r for r in rs if r["policy"] != "timeout"}
                f = pol["forecast"]
                tos = [r for r in rs if r["policy"] == "timeout"]
                below = [r for r in tos if r["slowdown"] <= f["slowdown"] + 1e-12]
                best = max(below, key=lambda r: r["throughput"]) if below else None
                ok = all(r["harvest"] < f["harvest"] for r in below) and bool(tos)
                held += ok
                total += 1
                idle = f["base_idle_worker_seconds"] / (R * f["base_makespan"])
                cell = lambda r: "%.3f, %+.2f%%" % (r["throughput"], 100 * r["slowdown"])
                b = "—" if best is None else "%.3g ms: %s" % (best["timeout"] * 1e3, cell(best))
                print("| 10 ms, CV %s | %d | %d | %.0f%% | %g ms | %s | %s | %s | %s | %s | %s |" % (
                    cv, T, R, 100 * idle, d * 1e3, cell(f), b, cell(pol["greedy"]), cell(pol["online-timeout"]),
                    cell(pol["residual"]), "yes" if ok else "**no**"))
print()
print("forecast harvests more than every timeout of equal or lower slowdown in %d of %d groups" % (held, total))
PY
echo "closed-loop: outputs in $OUT" >&2
