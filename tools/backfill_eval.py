#!/usr/bin/env python3
"""Summarise `tracecast backfill` runs (DIR/*/values.jsonl) as the backfill
issue's acceptance reads them: per group (trace, mode, d) the value V of
every policy; over the groups where any policy reaches V > 0.05, the mean
of forecast's V against hindsight-timeout's, online-timeout's and
residual's; and forecast's worst V. Used by tools/backfill-eval.sh."""
import json, math, os, sys

root = sys.argv[1]
groups = []
for run in sorted(os.listdir(root)):
    path = os.path.join(root, run, "values.jsonl")
    if not os.path.exists(path):
        continue
    trace = open(os.path.join(root, run, "trace")).read().strip()
    by = {}
    for line in open(path):
        r = json.loads(line)
        by.setdefault((r["mode"], r["d"], r["alpha"]), {})[r["policy"]] = r["value"]
    for (mode, d, alpha), vs in sorted(by.items()):
        groups.append((os.path.basename(os.path.dirname(trace)) + "/" + os.path.basename(trace), mode, d, alpha, vs))

pols = ["greedy", "online-timeout", "residual", "forecast", "hindsight-timeout"]
print("%-48s %-4s %6s %5s " % ("trace", "mode", "d", "α") + " ".join("%17s" % p for p in pols))
scored = []
for g in groups:
    trace, mode, d, alpha, vs = g
    cells = []
    for p in pols:
        v = vs.get(p)
        cells.append("%17s" % ("-" if v is None else "%.3f" % v))
    print("%-48s %-4s %6g %5g " % (trace[-48:], mode, d, alpha) + " ".join(cells))
    vals = [v for v in vs.values() if v is not None]
    if vals and max(vals) > 0.05:
        scored.append(vs)
if not scored:
    sys.exit("no group where a policy reaches V > 0.05")
mean = lambda p: sum(v.get(p) or 0 for v in scored) / len(scored)
print("\n%d groups where a policy reaches V > 0.05 (of %d)" % (len(scored), len(groups)))
def median(p):
    v = sorted(g.get(p) or 0 for g in scored)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
for p in pols:
    print("  mean V %-18s %.3f   median %.3f" % (p, mean(p), median(p)))
h = mean("hindsight-timeout")
print("  forecast / hindsight-timeout: %.3f (the bar: 0.9)" % (mean("forecast") / h if h else float("nan")))
print("  forecast's worst V: %.3f (the bar: -0.05)" % min((v.get("forecast") or 0) for v in scored))
below = sum(1 for v in scored if (v.get("forecast") or 0) < -0.05)
print("  groups where forecast is below -0.05: %d" % below)
# The oracle reaches V = 1 wherever it beats the reference, so the reading
# above scores every group with anything to gain. Where a policy that is
# not the oracle must reach 0.05 (hindsight-timeout included):
lenient = [v for v in scored if max((x for p, x in v.items() if p != "oracle" and x is not None), default=0) > 0.05]
if lenient:
    print("\n%d groups where a policy other than the oracle reaches V > 0.05" % len(lenient))
    hl = sum(v.get("hindsight-timeout") or 0 for v in lenient) / len(lenient)
    fl = sum(v.get("forecast") or 0 for v in lenient) / len(lenient)
    print("  mean V forecast %.3f, hindsight-timeout %.3f: %.3f" % (fl, hl, fl / hl if hl else float("nan")))
    print("  forecast's worst V: %.3f, groups below -0.05: %d" % (min((v.get("forecast") or 0) for v in lenient),
          sum(1 for v in lenient if (v.get("forecast") or 0) < -0.05)))
