#!/usr/bin/env python3
"""Independent scorer of tracecast's backfilling definitions.

Recomputes, from a trace (pj_dump lines, or a Paje trace read through
`tracecast states`) and the product's decision records (decisions.jsonl), the
harvest U, waste W, delay D, score S(alpha) and relative value V(alpha) of each
group of decisions, and the references never / greedy / timeout / oracle /
hindsight-timeout. Python 3 standard library only. See README.md next to this
file for the definitions it implements and for the usage.
"""

import argparse
import bisect
import gzip
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys

TOL = 1e-9  # seconds: tolerance of every time comparison

IDLE, COMPUTE, COMM = "idle", "compute", "comm"

# ---------------------------------------------------------------- rules

STARPU_STATE_TYPE = "Worker State"
SMPI_STATE_TYPE = "MPI_STATE"

STARPU_COMM = frozenset(["FetchingInput", "PushingOutput"])
STARPU_IDLE = frozenset([
    "Idle", "Sleeping", "Scheduling", "Overhead", "Progressing", "Initializing",
    "Deinitializing", "Callback", "Submitting task", "Building task",
    "Throttling task submission", "Parallel sync", "Unpartitioning", "Hypervisor",
    "Waiting all tasks",
])
SMPI_COMPUTE = frozenset(["computing", "sleeping"])
SMPI_IDLE_RE = re.compile(
    r"(?i)^p?mpi_(recv|wait|waitall|waitany|waitsome|barrier|probe|mprobe)$"
    r"|^(recv|wait|waitall|waitany|waitsome|barrier)$")


class Rules:
    """Which containers are workers, how a state value is classed, the time unit."""

    def __init__(self, name, state_type, scale, default):
        self.name = name
        self.state_type = state_type
        self.scale = scale      # multiply trace times by this to get seconds
        self.default = default  # class of a worker with no open state
        self._cache = {}

    def classify(self, value):
        c = self._cache.get(value)
        if c is None:
            c = self._classify(value)
            self._cache[value] = c
        return c

    def _classify(self, value):
        if self.name == "starpu":
            if value in STARPU_COMM:
                return COMM
            if value in STARPU_IDLE:
                return IDLE
            return COMPUTE  # Executing, codelet names (GEMM, POTRF, ...)
        if value in SMPI_COMPUTE:
            return COMPUTE
        if SMPI_IDLE_RE.search(value):
            return IDLE
        return COMM


STARPU = lambda: Rules("starpu", STARPU_STATE_TYPE, 1e-3, IDLE)   # milliseconds
SMPI = lambda: Rules("smpi", SMPI_STATE_TYPE, 1.0, COMPUTE)       # seconds

# ---------------------------------------------------------------- reading


def read_states(lines):
    """pj_dump lines -> {state type: {container: [(start, end, imbrication, value)]}}.

    Only the two worker state types are kept (the others are counted)."""
    keep = {STARPU_STATE_TYPE: {}, SMPI_STATE_TYPE: {}}
    other = 0
    bad = 0
    for line in lines:
        if not line.startswith("State,"):
            continue
        parts = line.rstrip("\r\n").split(", ", 7)
        if len(parts) != 8:
            bad += 1
            continue
        by_cont = keep.get(parts[2].strip())
        if by_cont is None:
            other += 1
            continue
        try:
            st = (float(parts[3]), float(parts[4]), float(parts[6]), parts[7].strip())
        except ValueError:
            bad += 1
            continue
        lst = by_cont.get(parts[1].strip())
        if lst is None:
            lst = by_cont[parts[1].strip()] = []
        lst.append(st)
    return keep, other, bad


def pick_rules(keep, force=None):
    if force == "starpu" or (force in (None, "auto") and keep[STARPU_STATE_TYPE]):
        return STARPU(), keep[STARPU_STATE_TYPE]
    if force == "smpi" or (force in (None, "auto") and keep[SMPI_STATE_TYPE]):
        return SMPI(), keep[SMPI_STATE_TYPE]
    raise SystemExit("score.py: no state of type %r or %r in the input"
                     % (STARPU_STATE_TYPE, SMPI_STATE_TYPE))


def class_segments(states, rules, t0, tend):
    """One container's states (seconds) -> [(start, end, class)] covering [t0, tend).

    The innermost open state (highest imbrication; ties: the later start, then
    the later line) decides; states are [start, end); no open state -> rules.default."""
    ev = []
    for i, (s, e, lv, v) in enumerate(states):
        if e > s:
            ev.append((s, 1, i))
            ev.append((e, 0, i))   # at equal times, ends are processed before starts
    ev.sort()
    levels = {}  # imbrication -> {index: (start, index)}
    segs = []
    cur_t, cur_c = t0, rules.default
    k, n = 0, len(ev)
    while k < n:
        t = ev[k][0]
        if t > cur_t:
            segs.append((cur_t, t, cur_c))
            cur_t = t
        while k < n and ev[k][0] == t:
            _, kind, i = ev[k]
            lv = states[i][2]
            if kind:
                levels.setdefault(lv, {})[i] = (states[i][0], i)
            else:
                d = levels[lv]
                del d[i]
                if not d:
                    del levels[lv]
            k += 1
        if levels:
            top = levels[max(levels)]
            _, i = max(top.values())
            cur_c = rules.classify(states[i][3])
        else:
            cur_c = rules.default
    if tend > cur_t:
        segs.append((cur_t, tend, cur_c))
    return segs


def idle_spells(segs):
    """Maximal idle intervals of a segment list (zero-length ones dropped)."""
    spells = []
    for s, e, c in segs:
        if c != IDLE or e <= s:
            continue
        if spells and spells[-1][1] == s:
            spells[-1][1] = e
        else:
            spells.append([s, e])
    return [(s, e) for s, e in spells if e > s]


def aggregate_spells(per_worker, k):
    """Spells of [X >= k], X = number of idle workers."""
    ev = {}
    for spells in per_worker:
        for s, e in spells:
            ev[s] = ev.get(s, 0) + 1
            ev[e] = ev.get(e, 0) - 1
    out = []
    x = 0
    start = None
    for t in sorted(ev):
        x += ev[t]
        if x >= k and start is None:
            start = t
        elif x < k and start is not None:
            if t > start:
                out.append((start, t))
            start = None
    return out


class Trace:
    def __init__(self, states_by_container, rules):
        self.rules = rules
        sc = rules.scale
        conv = {}
        t0 = math.inf
        tend = -math.inf
        for name, sts in states_by_container.items():
            lst = [(s * sc, e * sc, lv, v) for (s, e, lv, v) in sts]
            conv[name] = lst
            for s, e, _, _ in lst:
                if s < t0:
                    t0 = s
                if e > tend:
                    tend = e
        if not conv:
            raise SystemExit("score.py: no worker container")
        self.t0, self.tend = t0, tend
        self.workers = sorted(conv)
        self.spells = {}
        for name in self.workers:
            self.spells[name] = idle_spells(class_segments(conv[name], rules, t0, tend))
        self._gang = {}

    def resources(self, k):
        """[(name, spells)] the tasks of gang size k run on."""
        if k <= 1:
            return [(w, self.spells[w]) for w in self.workers]
        if k not in self._gang:
            self._gang[k] = aggregate_spells([self.spells[w] for w in self.workers], k)
        return [("gang%d" % k, self._gang[k])]

    def idle_workers_at(self, a):
        out = []
        for w in self.workers:
            sp = self.spells[w]
            i = bisect.bisect_right(sp, (a, math.inf)) - 1
            if i >= 0 and sp[i][0] <= a < sp[i][1]:
                out.append(w)
        return out


def open_input(path, tracecast, fmt="auto"):
    """An iterator of pj_dump lines and a finisher (checks tracecast's exit)."""
    if path == "-":
        return sys.stdin, lambda: None
    if fmt == "auto":
        with open(path, "rb") as f:
            head = f.read(65536)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                head = f.read(65536)
        fmt = "paje"
        for raw in head.decode("utf-8", "replace").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if re.match(r"^(State|Container|Variable|Event|Link),", line):
                fmt = "pjdump"
            break
    if fmt == "pjdump":
        if path.endswith(".gz"):
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace"), lambda: None
        return open(path, encoding="utf-8", errors="replace"), lambda: None
    bin_ = tracecast or shutil.which("tracecast") or ("/tmp/tc" if os.path.exists("/tmp/tc") else None)
    if not bin_:
        raise SystemExit("score.py: %s is a Paje trace: give --tracecast BIN (tracecast not on PATH, no /tmp/tc)" % path)
    proc = subprocess.Popen([bin_, "states", "--all-entities", path], stdout=subprocess.PIPE,
                            encoding="utf-8", errors="replace", bufsize=1 << 20)

    def finish():
        rc = proc.wait()
        if rc != 0:
            raise SystemExit("score.py: %s states %s exited with %d" % (bin_, path, rc))
    return proc.stdout, finish


def load_trace(path, tracecast=None, rules="auto", fmt="auto"):
    lines, finish = open_input(path, tracecast, fmt)
    try:
        keep, _, _ = read_states(lines)
    finally:
        if lines is not sys.stdin:
            lines.close()
    finish()
    r, by_cont = pick_rules(keep, rules)
    return Trace(by_cont, r)


def trace_from_text(text, rules="auto"):
    keep, _, _ = read_states(text.splitlines())
    r, by_cont = pick_rules(keep, rules)
    return Trace(by_cont, r)

# ---------------------------------------------------------------- references


def place_task(a, e, od, kill):
    """A task of od (overhead + duration) started at a in an idle spell ending at e
    -> (outcome, when its worker is free again, its waste W, its delay D).

    It completes when it ends by e (within TOL); otherwise it is killed at e in kill
    mode (its time in the spell wasted), else it overruns e (the overrun delays)."""
    end = a + od
    if end <= e + TOL:
        return "completed", end, 0.0, 0.0
    if kill:
        return "killed", e, max(0.0, e - a), 0.0
    return "overran", end, 0.0, end - e


def run_timeout(spells, d, o, mode, tau, record=None):
    """Greedy (tau = 0) or timeout tau on one resource's spells -> [n, U, W, D].

    A launch at a' = max(s + tau, previous task's end) when a' < e (all within TOL),
    then back to back."""
    n = 0
    done = 0  # completed tasks: U = done * d (not a running sum: no drift)
    W = D = 0.0
    od = o + d
    prev_end = -math.inf
    kill = mode == "kill"
    for s, e in spells:
        a = s + tau
        if prev_end > a:
            a = prev_end
        while a < e - TOL:
            out, prev_end, w, dl = place_task(a, e, od, kill)
            n += 1
            done += out != "killed"
            W += w
            D += dl
            if record is not None:
                record.append((a, out))
            a = prev_end
    return [n, done * d, W, D]


def oracle_count(spells, d, o):
    od = o + d
    return sum(int(math.floor((e - s + TOL) / od)) for s, e in spells)


def oracle_launches(spells, d, o):
    """The oracle's tasks, back to back from each spell start (all complete)."""
    od = o + d
    out = []
    for s, e in spells:
        for j in range(int(math.floor((e - s + TOL) / od))):
            out.append((s + j * od, "completed"))
    return out


def timeout_grid(longest):
    grid = [0.0]
    k = -120
    while True:
        tau = 10 ** (k / 20)
        if tau > longest:
            break
        if tau >= 1e-6:
            grid.append(tau)
        k += 1
    return grid


def sum_runs(trace, gang, fn):
    tot = [0, 0.0, 0.0, 0.0]
    for _, sp in trace.resources(gang):
        r = fn(sp)
        for i in range(4):
            tot[i] += r[i]
    return tot


def score_of(mode, alpha, U, W, D):
    return U - alpha * (W if mode == "kill" else D)


class References:
    """Cached references per (mode, d, o, gang)."""

    def __init__(self, trace):
        self.trace = trace
        self._c = {}

    def base(self, mode, d, o, gang):
        key = ("base", mode, d, o, gang)
        if key not in self._c:
            res = self.trace.resources(gang)
            n_or = sum(oracle_count(sp, d, o) for _, sp in res)
            idle = sum(e - s for _, sp in res for s, e in sp)
            longest = max([e - s for _, sp in res for s, e in sp] or [0.0])
            greedy = sum_runs(self.trace, gang, lambda sp: run_timeout(sp, d, o, mode, 0.0))
            self._c[key] = {"oracle_n": n_or, "oracle_U": d * n_or, "idle": idle,
                            "longest": longest, "greedy": greedy}
        return self._c[key]

    def timeout(self, mode, d, o, gang, tau):
        key = ("to", mode, d, o, gang, tau)
        if key not in self._c:
            self._c[key] = sum_runs(self.trace, gang, lambda sp: run_timeout(sp, d, o, mode, tau))
        return self._c[key]

    def hindsight(self, mode, d, o, gang, alpha):
        """Best timeout of the grid for this alpha: (tau, [n, U, W, D], S).

        Ties (within 1e-12 s of score) keep the smaller tau."""
        b = self.base(mode, d, o, gang)
        best = None
        # A spell no longer than tau gets no launch (a' >= s + tau >= e), whatever
        # the mode: the grid being ascending, each tau runs on the previous tau's
        # spells longer than it (same numbers, fewer spells).
        res = [sp for _, sp in self.trace.resources(gang)]
        for tau in timeout_grid(b["longest"]):
            res = [[x for x in sp if x[1] - x[0] > tau] for sp in res]
            key = ("to", mode, d, o, gang, tau)
            if key not in self._c:
                tot = [0, 0.0, 0.0, 0.0]
                for sp in res:
                    r = run_timeout(sp, d, o, mode, tau)
                    for i in range(4):
                        tot[i] += r[i]
                self._c[key] = tot
            r = self._c[key]
            s = score_of(mode, alpha, r[1], r[2], r[3])
            if best is None or s > best[2] + 1e-12:
                best = (tau, r, s)
        return best

    def s_ref(self, mode, d, o, gang, alpha):
        g = self.base(mode, d, o, gang)["greedy"]
        return max(0.0, score_of(mode, alpha, g[1], g[2], g[3]))

    def value(self, mode, d, o, gang, alpha, S):
        b = self.base(mode, d, o, gang)
        ref = self.s_ref(mode, d, o, gang, alpha)
        den = b["oracle_U"] - ref
        if den == 0 or abs(den) <= 1e-12 * max(abs(b["oracle_U"]), abs(ref)):
            return None
        return (S - ref) / den + 0.0  # + 0.0: no -0.0

# ---------------------------------------------------------------- decisions


def load_decisions(path):
    out, bad = [], []
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError as err:
                bad.append((ln, str(err)))
                continue
            if not isinstance(r, dict) or r.get("record", "decision") != "decision":
                continue
            r["_line"] = ln
            out.append(r)
    return out, bad


def gang_of(r):
    g = r.get("gang")
    if g is None:
        ws = r.get("workers")
        g = len(ws) if isinstance(ws, list) and ws else 1
    return int(g)


def group_key(r):
    return (r.get("policy"), r.get("mode"), float(r["d"]), float(r.get("overhead") or 0.0),
            gang_of(r), None if r.get("alpha") is None else float(r["alpha"]),
            None if r.get("timeout") is None else float(r["timeout"]))


def score_decisions(trace, decs, mode, d, o, gang):
    """Scores one group's decisions -> dict (n, U, W, D, invalid list, mismatches)."""
    res = dict(trace.resources(gang))
    by_res = {}
    invalid = []
    for r in decs:
        if gang >= 2:
            name = "gang%d" % gang
        else:
            name = r.get("worker")
            if name is None and isinstance(r.get("workers"), list) and len(r["workers"]) == 1:
                name = r["workers"][0]
        if name not in res:
            invalid.append((r, "unknown worker %r" % (name,)))
            continue
        by_res.setdefault(name, []).append(r)
    n = 0
    done = 0  # completed tasks: U = done * d (not a running sum: no drift)
    W = D = 0.0
    mismatches = []
    gang_notes = []  # gang tasks whose `workers` are not K distinct workers idle at the start (informational)
    od = o + d
    kill = mode == "kill"
    for name, rs in by_res.items():
        spells = res[name]
        starts = [s for s, _ in spells]
        rs.sort(key=lambda r: (float(r["start"]), r["_line"]))
        prev_end = -math.inf
        for r in rs:
            a = float(r["start"])
            i = bisect.bisect_right(starts, a + TOL) - 1
            if i < 0 or not a < spells[i][1] - TOL:
                invalid.append((r, "start not inside an idle spell"))
                continue
            e = spells[i][1]
            if a < prev_end - TOL:
                invalid.append((r, "starts before the previous task ended (%.9g)" % prev_end))
                continue
            if gang >= 2:
                ws = r.get("workers")
                idle = set(trace.idle_workers_at(max(a, spells[i][0])))
                if not (isinstance(ws, list) and len(set(ws)) == gang and set(ws) <= idle):
                    gang_notes.append(r)
            out, prev_end, w, dl = place_task(a, e, od, kill)
            n += 1
            done += out != "killed"
            W += w
            D += dl
            if r.get("outcome") is not None and r.get("outcome") != out:
                mismatches.append((r, out))
    return {"n": n, "U": done * d, "W": W, "D": D, "invalid": invalid, "mismatches": mismatches,
            "gang_notes": gang_notes}

# ---------------------------------------------------------------- rows


def make_row(refs, policy, mode, d, o, gang, alpha, n, U, W, D, **extra):
    b = refs.base(mode, d, o, gang)
    S = score_of(mode, alpha, U, W, D)
    g = b["greedy"]
    row = {
        "policy": policy, "mode": mode, "d": d, "overhead": o, "gang": gang, "alpha": alpha,
        "timeout": extra.pop("timeout", None),
        "launches": n, "harvest": U, "waste": W, "delay": D, "score": S,
        "value": refs.value(mode, d, o, gang, alpha, S),  # None when U* == S_ref
        "oracle_harvest": b["oracle_U"],
        "greedy_score": score_of(mode, alpha, g[1], g[2], g[3]),
        "reference_score": refs.s_ref(mode, d, o, gang, alpha),
        "idle_worker_seconds": b["idle"],
        "harvest_over_oracle": U / b["oracle_U"] if b["oracle_U"] > 0 else None,
        "harvest_over_idle": U / b["idle"] if b["idle"] > 0 else None,
        "waste_fraction": (W / (U + W) if U + W > 0 else None) if mode == "kill" else None,
        "delay_over_harvest": (D / U if U > 0 else None) if mode == "wait" else None,
    }
    row.update(extra)
    return row


def reference_rows(refs, mode, d, o, gang, alphas, timeouts):
    rows = []
    b = refs.base(mode, d, o, gang)
    for alpha in alphas:
        rows.append(make_row(refs, "never", mode, d, o, gang, alpha, 0, 0.0, 0.0, 0.0, source="reference"))
        g = b["greedy"]
        rows.append(make_row(refs, "greedy", mode, d, o, gang, alpha, *g, source="reference"))
        for tau in timeouts:
            r = refs.timeout(mode, d, o, gang, tau)
            rows.append(make_row(refs, "timeout", mode, d, o, gang, alpha, *r, timeout=tau, source="reference"))
        rows.append(make_row(refs, "oracle", mode, d, o, gang, alpha, b["oracle_n"], b["oracle_U"], 0.0, 0.0,
                             source="reference"))
        tau, r, _ = refs.hindsight(mode, d, o, gang, alpha)
        rows.append(make_row(refs, "hindsight-timeout", mode, d, o, gang, alpha, *r, timeout=tau,
                             source="reference"))
    return rows


def decision_rows(trace, refs, decs, alphas, run=None):
    groups = {}
    malformed = []
    for r in decs:
        if run is not None and r.get("run") != run:
            continue
        try:
            float(r["start"])
            key = group_key(r)
        except (KeyError, TypeError, ValueError):
            malformed.append(r["_line"])
            continue
        groups.setdefault(key, []).append(r)
    if malformed:
        print("score.py: %d decision records without a usable start/d/overhead/alpha/gang, skipped (lines %s)"
              % (len(malformed), ", ".join(map(str, malformed[:5]))), file=sys.stderr)
    rows = []
    for key in sorted(groups, key=lambda k: tuple("" if x is None else str(x) for x in k)):
        policy, mode, d, o, gang, dalpha, tau = key
        rs = groups[key]
        if mode not in ("kill", "wait"):
            print("score.py: group %r: unknown mode, skipped" % (key,), file=sys.stderr)
            continue
        sc = score_decisions(trace, rs, mode, d, o, gang)
        runs = sorted({str(r.get("run")) for r in rs})
        inv = [{"id": r.get("id"), "line": r["_line"], "worker": r.get("worker"), "start": r.get("start"),
                "reason": why} for r, why in sc["invalid"]]
        mis = [{"id": r.get("id"), "line": r["_line"], "worker": r.get("worker"), "start": r.get("start"),
                "recorded": r.get("outcome"), "computed": out} for r, out in sc["mismatches"]]
        for alpha in ([dalpha] if dalpha is not None else alphas):
            rows.append(make_row(refs, policy, mode, d, o, gang, alpha, sc["n"], sc["U"], sc["W"], sc["D"],
                                 timeout=tau, source="decisions", decided_alpha=dalpha, records=len(rs),
                                 invalid=len(inv), invalid_examples=inv[:5],
                                 outcome_mismatches=len(mis), mismatch_examples=mis[:5], runs=runs,
                                 gang_workers_not_idle=len(sc["gang_notes"])))
    return rows


def emit_decisions(trace, policy, mode, d, o, gang, tau, path, alpha=None):
    """Writes a reference policy's launches as decision records."""
    with open(path, "w") as f:
        k = 0
        for name, sp in trace.resources(gang):
            if policy == "oracle":
                launches = oracle_launches(sp, d, o)
            else:
                launches = []
                run_timeout(sp, d, o, mode, 0.0 if policy == "greedy" else tau, launches)
            for a, out in launches:
                k += 1
                rec = {"record": "decision", "id": "%s-%d" % (policy, k), "policy": policy, "run": "score.py",
                       "worker": name if gang <= 1 else None,
                       "workers": trace.idle_workers_at(a)[:gang] if gang >= 2 else None,
                       "start": a, "d": d, "overhead": o, "mode": mode, "alpha": alpha, "outcome": out,
                       "p": None, "gang": gang}
                if policy == "timeout":
                    rec["timeout"] = tau
                f.write(json.dumps(rec) + "\n")
    return k

# ---------------------------------------------------------------- compare

ALIASES = {"U": "harvest", "W": "waste", "D": "delay", "S": "score", "V": "value", "n": "launches",
           "o": "overhead", "U*": "oracle_harvest"}
POLICY_ALIASES = {"hindsight": "hindsight-timeout", "hindsight_timeout": "hindsight-timeout",
                  "best-timeout": "hindsight-timeout"}
VALUES = ("launches", "harvest", "waste", "delay", "score", "value")


def rel_diff(x, y, floor=1e-9):
    """|x - y| / max(|x|, |y|); 0 when |x - y| <= floor (noise around 0)."""
    if x is None or y is None:
        return 0.0 if x is None and y is None else math.inf
    x, y = float(x), float(y)
    if abs(x - y) <= floor:
        return 0.0
    return abs(x - y) / max(abs(x), abs(y))


def same_key(a, b):
    return a is None and b is None or (a is not None and b is not None and rel_diff(a, b, 1e-15) <= 1e-9)


def norm_row(r):
    out = {}
    for k, v in r.items():
        out[ALIASES.get(k, k)] = v
    out["policy"] = POLICY_ALIASES.get(str(out.get("policy")).lower(), out.get("policy"))
    out.setdefault("gang", 1)
    if out.get("gang") is None:
        out["gang"] = 1
    out.setdefault("overhead", 0.0)
    return out


def compare(mine, path, out=None):
    out = out or sys.stdout
    with open(path) as f:
        text = f.read()
    try:
        theirs = json.loads(text)
    except ValueError:
        theirs = [json.loads(l) for l in text.splitlines() if l.strip()]
    if isinstance(theirs, dict):
        theirs = theirs.get("rows", [])
    theirs = [norm_row(r) for r in theirs]
    problems = []
    used = set()
    for t in theirs:
        cands = [i for i, m in enumerate(mine)
                 if m["policy"] == t.get("policy") and m["mode"] == t.get("mode")
                 and same_key(m["d"], t.get("d")) and same_key(m["overhead"], t.get("overhead"))
                 and int(m["gang"]) == int(t["gang"]) and same_key(m["alpha"], t.get("alpha"))]
        if len(cands) > 1 and t.get("timeout") is not None and t["policy"] != "hindsight-timeout":
            cands = [i for i in cands if same_key(mine[i]["timeout"], t.get("timeout"))]
        desc = "%s %s d=%s o=%s K=%s alpha=%s%s" % (t.get("policy"), t.get("mode"), t.get("d"), t.get("overhead"),
                                                    t.get("gang"), t.get("alpha"),
                                                    "" if t.get("timeout") is None else " tau=%s" % t["timeout"])
        if not cands:
            problems.append("%s: no such row here" % desc)
            continue
        if len(cands) > 1:
            problems.append("%s: ambiguous (%d rows here)" % (desc, len(cands)))
            continue
        i = cands[0]
        used.add(i)
        m = mine[i]
        for k in VALUES:
            if k not in t:
                continue
            rd = rel_diff(m[k], t[k])
            if rd > 1e-6:
                problems.append("%s: %s here %r, there %r (relative difference %.3g)" % (desc, k, m[k], t[k], rd))
        if t["policy"] == "hindsight-timeout" and t.get("timeout") is not None and \
                not same_key(m["timeout"], t["timeout"]):
            print("note: %s: best tau here %r, there %r (scores agree: a tie?)" % (desc, m["timeout"], t["timeout"]),
                  file=out)
    for i, m in enumerate(mine):
        if i not in used and m.get("source") == "decisions":
            problems.append("%s %s d=%s o=%s K=%s alpha=%s: group of decisions missing there"
                            % (m["policy"], m["mode"], m["d"], m["overhead"], m["gang"], m["alpha"]))
    for p in problems:
        print("DIFF " + p, file=out)
    print("compare: %d rows there, %d matched, %d differences" % (len(theirs), len(used), len(problems)), file=out)
    return len(problems)

# ---------------------------------------------------------------- output


def fmt(x, w=10):
    if x is None:
        return "-".rjust(w)
    if isinstance(x, int):
        return str(x).rjust(w)
    return ("%.6g" % x).rjust(w)


def print_table(trace, rows, out=None):
    out = out or sys.stdout
    nsp = sum(len(v) for v in trace.spells.values())
    idle = sum(e - s for v in trace.spells.values() for s, e in v)
    print("# rules %s, %d workers, t0 %.9g s, T_end %.9g s, %d idle spells, %.6g idle worker-seconds"
          % (trace.rules.name, len(trace.workers), trace.t0, trace.tend, nsp, idle), file=out)
    hdr = ("policy", "mode", "d", "o", "K", "alpha", "tau", "launches", "U", "W", "D", "S", "V",
           "U/U*", "U/idle", "W/(U+W)|D/U", "U*", "S_greedy", "invalid")
    widths = (18, 4, 8, 8, 2, 6, 9, 8, 10, 10, 10, 10, 9, 8, 8, 11, 10, 10, 7)
    print(" ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(hdr, widths))), file=out)
    for r in rows:
        ratio = r["waste_fraction"] if r["mode"] == "kill" else r["delay_over_harvest"]
        vals = (r["policy"], r["mode"], r["d"], r["overhead"], r["gang"], r["alpha"], r["timeout"], r["launches"],
                r["harvest"], r["waste"], r["delay"], r["score"], r["value"], r["harvest_over_oracle"],
                r["harvest_over_idle"], ratio, r["oracle_harvest"], r["greedy_score"], r.get("invalid"))
        cells = []
        for i, (v, w) in enumerate(zip(vals, widths)):
            cells.append(str(v).ljust(w) if i == 0 else (str(v).rjust(w) if isinstance(v, str) else fmt(v, w)))
        print(" ".join(cells), file=out)
    for r in rows:
        if r.get("invalid"):
            print("# %s %s d=%g o=%g K=%d: %d invalid decisions, first: %s" % (
                r["policy"], r["mode"], r["d"], r["overhead"], r["gang"], r["invalid"],
                "; ".join("%s@%s (%s)" % (x["id"], x["start"], x["reason"]) for x in r["invalid_examples"][:3])),
                file=out)
        if r.get("outcome_mismatches"):
            print("# %s %s d=%g o=%g K=%d: %d recorded outcomes differ, first: %s" % (
                r["policy"], r["mode"], r["d"], r["overhead"], r["gang"], r["outcome_mismatches"],
                "; ".join("%s@%s %s/%s" % (x["id"], x["start"], x["recorded"], x["computed"])
                          for x in r["mismatch_examples"][:3])), file=out)
        if r.get("gang_workers_not_idle"):
            print("# %s %s d=%g o=%g K=%d: %d gang decisions whose workers are not %d distinct idle workers "
                  "(informational)" % (r["policy"], r["mode"], r["d"], r["overhead"], r["gang"],
                                       r["gang_workers_not_idle"], r["gang"]), file=out)
        if r.get("runs") and len(r["runs"]) > 1:
            print("# %s %s: decisions of %d runs in one group (use --run)" % (r["policy"], r["mode"], len(r["runs"])),
                  file=out)


def seconds(text):
    """'10ms', '0.5 ms', '250us', '1e-3s', '0.01' (seconds) -> seconds."""
    m = re.match(r"^\s*([-+0-9.eE]+)\s*(s|ms|us|µs|ns)?\s*$", text)
    if not m:
        raise argparse.ArgumentTypeError("not a duration: %r" % text)
    return float(m.group(1)) * {None: 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}[m.group(2)]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Independent scorer of tracecast backfill decisions (see README.md).")
    ap.add_argument("input", help="pj_dump lines (tracecast states output; .gz ok; - for stdin) or a Paje trace")
    ap.add_argument("--decisions", help="decisions.jsonl of the product")
    ap.add_argument("--tracecast", help="tracecast binary to read a Paje trace (default: tracecast on PATH, /tmp/tc)")
    ap.add_argument("--input-format", choices=("auto", "pjdump", "paje"), default="auto")
    ap.add_argument("--rules", choices=("auto", "starpu", "smpi"), default="auto")
    ap.add_argument("--alpha", action="append", type=float, help="alpha (repeatable; default 1 and 10)")
    ap.add_argument("--d", "--task", action="append", type=seconds, dest="ds",
                    help="reference task length d (repeatable; '10ms', seconds if no unit)")
    ap.add_argument("--overhead", "--o", action="append", type=seconds, help="reference set-up cost o (repeatable; default 0)")
    ap.add_argument("--mode", action="append", choices=("kill", "wait"), help="reference mode (default both)")
    ap.add_argument("--gang", action="append", type=int, help="reference gang size K (repeatable; default 1)")
    ap.add_argument("--timeout", action="append", type=seconds, default=[], help="also a timeout tau reference")
    ap.add_argument("--no-references", action="store_true", help="only the decision groups' rows")
    ap.add_argument("--run", help="only the decisions of this run")
    ap.add_argument("--json", help="write the rows as a JSON list to this file")
    ap.add_argument("--spells", help="write the idle spells (seconds) per worker as JSON to this file")
    ap.add_argument("--compare", help="JSON list of rows to check against (exit 1 on a relative difference > 1e-6)")
    ap.add_argument("--emit-decisions", metavar="OUT",
                    help="write the launches of --emit-policy as decision records (first --d/--overhead/--mode/--gang)")
    ap.add_argument("--emit-policy", choices=("greedy", "timeout", "oracle"), default="greedy")
    args = ap.parse_args(argv)

    alphas = args.alpha or [1.0, 10.0]
    trace = load_trace(args.input, args.tracecast, args.rules, args.input_format)
    refs = References(trace)

    if args.spells:
        with open(args.spells, "w") as f:
            json.dump({"rules": trace.rules.name, "t0": trace.t0, "t_end": trace.tend,
                       "spells": {w: trace.spells[w] for w in trace.workers}}, f)

    rows = []
    combos = []
    if args.decisions:
        decs, bad = load_decisions(args.decisions)
        if bad:
            print("score.py: %d unreadable decision lines, first at line %d: %s" % (len(bad), bad[0][0], bad[0][1]),
                  file=sys.stderr)
        rows += decision_rows(trace, refs, decs, alphas, args.run)
        for r in rows:
            c = (r["mode"], r["d"], r["overhead"], r["gang"])
            if c not in combos:
                combos.append(c)
    if args.ds or not args.decisions:
        if not args.ds:
            ap.error("give --decisions, or --d D for the references")
        for mode in args.mode or ["kill", "wait"]:
            for d in args.ds:
                for o in args.overhead or [0.0]:
                    for k in args.gang or [1]:
                        if (mode, d, o, k) not in combos:
                            combos.append((mode, d, o, k))
    for c in combos:
        if c[1] + c[2] <= 0:
            ap.error("d + o must be positive")
    if not args.no_references:
        for mode, d, o, k in combos:
            rows += reference_rows(refs, mode, d, o, k, alphas, args.timeout)

    if args.emit_decisions:
        mode, d, o, k = (args.mode or ["kill"])[0], (args.ds or [None])[0], (args.overhead or [0.0])[0], \
            (args.gang or [1])[0]
        if d is None:
            ap.error("--emit-decisions needs --d")
        tau = args.timeout[0] if args.timeout else 0.0
        n = emit_decisions(trace, args.emit_policy, mode, d, o, k, tau, args.emit_decisions)
        print("# wrote %d %s decisions to %s" % (n, args.emit_policy, args.emit_decisions), file=sys.stderr)

    print_table(trace, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.compare:
        if compare(rows, args.compare):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
