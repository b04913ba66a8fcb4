"""Aggregates the scores.jsonl of forecast-eval.sh's runs (see there)."""
import json
import os
import sys

root = sys.argv[1]
rows, cover = [], []
for d in sorted(os.listdir(root), key=int):
    trace = open(os.path.join(root, d, "trace")).read().strip()
    name = "/".join(trace.split("/")[-2:])
    ins = n = 0
    seen = set()
    for line in open(os.path.join(root, d, "scores.jsonl")):
        s = json.loads(line)
        # On 2 workers k = ⌈25%·2⌉ = 1: the two queries are one group.
        key = (s["horizon"], s["mse_p"], s["mse_ks_paper"])
        if key in seen:
            continue
        seen.add(key)
        ins += s["coverage"] * s["n"]
        n += s["n"]
        if s["mse_ks_paper"] == 0 and s["mse_persistence"] == 0 and s["mse_climatology"] == 0:
            continue  # every baseline exact: left out
        rows.append((name, s["query"], s["horizon"], s["mse_p"], s["mse_ks_paper"], s["mse_persistence"], s["mse_climatology"]))
    cover.append((name, ins / n if n else float("nan"), n))


def ratio(a, b):
    return a / b if b > 0 else (1.0 if a == 0 else float("inf"))


print(f"{'trace':44} {'query':10} {'H':>6} {'mse_p':>9} {'/ks':>6} {'/pers':>6} {'/clim':>6}")
for r in rows:
    print(f"{r[0]:44} {r[1]:10} {r[2]:6g} {r[3]:9.5f} {ratio(r[3], r[4]):6.3f} {ratio(r[3], r[5]):6.3f} {ratio(r[3], r[6]):6.3f}")
for i, base in ((4, "ks-paper"), (5, "persistence"), (6, "climatology")):
    rs = [ratio(r[3], r[i]) for r in rows]
    tot = sum(r[3] for r in rows) / sum(r[i] for r in rows)
    print(f"MSE / {base:12}: mean of ratios {sum(rs) / len(rs):.3f}, worst {max(rs):.3f}, ratio of sums {tot:.3f} ({len(rs)} groups)")
for name, c, n in cover:
    print(f"coverage {name:44} {c:.3f} ({n} outcomes)")
