#!/usr/bin/env python3
"""Self-test of score.py on hand-made traces with hand-computed answers.

Run: python3 tools/backfill/tests.py
"""

import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402

MS = 1e-3

# Two StarPU workers, times in milliseconds (pj_dump columns:
# State, CONTAINER, TYPE, START, END, DURATION, IMBRICATION, VALUE).
#
# CPU0: [0,10) Executing, [10,30) Idle, [30,50) Overhead with a nested GEMM
#       [35,45) at level 1, [50,60) FetchingInput (comm), no state [60,70)
#       (StarPU: idle), [70,100) POTRF, then no state until T_end = 120.
#   idle: [10,35) (Idle + Overhead merged), [45,50), [60,70), [100,120) (closed by T_end)
# CPU1: no state before 5 (idle from t0 = 0), [5,28) GEMM, [28,42) Sleeping,
#       [42,120) TRSM with a zero-length Idle at 80 (ignored) and a nested
#       Callback [95,110) at level 1 holding a "Submitting task" [96,97) at level 2.
#   idle: [0,5), [28,42), [95,110)
# Gang K = 2 (both idle): [28,35), [100,110).
# The user thread's states (another type) must not move t0 or T_end.
TWO = """\
Container, 0, Program, 0, 200, 200, program
Container, program, Worker, 0, 200, 200, CPU0
Container, program, Worker, 0, 200, 200, CPU1
State, UserThread1, User Thread State, -50.000000, 200.000000, 250.000000, 0.000000, Scheduling
State, CPU0, Worker State, 0.000000, 10.000000, 10.000000, 0.000000, Executing
State, CPU0, Worker State, 10.000000, 30.000000, 20.000000, 0.000000, Idle
State, CPU1, Worker State, 5.000000, 28.000000, 23.000000, 0.000000, GEMM
State, CPU0, Worker State, 35.000000, 45.000000, 10.000000, 1.000000, GEMM
State, CPU0, Worker State, 30.000000, 50.000000, 20.000000, 0.000000, Overhead
Variable, CPU0, Ready, 30.000000, 40.000000, 10.000000, 3.000000
Event, program, data registration, 31.000000, 561d77abd910
State, CPU0, Worker State, 50.000000, 60.000000, 10.000000, 0.000000, FetchingInput
State, CPU1, Worker State, 28.000000, 42.000000, 14.000000, 0.000000, Sleeping
State, CPU0, Worker State, 70.000000, 100.000000, 30.000000, 0.000000, POTRF
State, CPU1, Worker State, 80.000000, 80.000000, 0.000000, 1.000000, Idle
State, CPU1, Worker State, 96.000000, 97.000000, 1.000000, 2.000000, Submitting task
State, CPU1, Worker State, 95.000000, 110.000000, 15.000000, 1.000000, Callback
State, CPU1, Worker State, 42.000000, 120.000000, 78.000000, 0.000000, TRSM
"""

# One worker, one spell [10,35) ms.
ONE = """\
State, CPU0, Worker State, 0.000000, 10.000000, 10.000000, 0.000000, GEMM
State, CPU0, Worker State, 10.000000, 35.000000, 25.000000, 0.000000, Idle
State, CPU0, Worker State, 35.000000, 40.000000, 5.000000, 0.000000, GEMM
"""

# SimGrid SMPI, seconds; no open state = compute.
# rank0: [0,1) computing, [1,2) MPI_Recv (idle), [2,3) MPI_Send (comm), gap [3,4)
#        (compute), [4,6) PMPI_Wait with a nested computing [4.5,5), [6,7) barrier,
#        nothing after 7 (compute).   idle: [1,2), [4,4.5), [5,7)
# rank1: nothing before 0.5, [0.5,8) MPI_Waitall with a nested sleeping [2,3)
#        (compute).   idle: [0.5,2), [3,8)
SMPI = """\
State, rank0, MPI_STATE, 0.000000, 1.000000, 1.000000, 0.000000, computing
State, rank0, MPI_STATE, 1.000000, 2.000000, 1.000000, 0.000000, MPI_Recv
State, rank0, MPI_STATE, 2.000000, 3.000000, 1.000000, 0.000000, MPI_Send
State, rank0, MPI_STATE, 4.000000, 6.000000, 2.000000, 0.000000, PMPI_Wait
State, rank0, MPI_STATE, 4.500000, 5.000000, 0.500000, 1.000000, computing
State, rank0, MPI_STATE, 6.000000, 7.000000, 1.000000, 0.000000, barrier
State, rank1, MPI_STATE, 0.500000, 8.000000, 7.500000, 0.000000, MPI_Waitall
State, rank1, MPI_STATE, 2.000000, 3.000000, 1.000000, 1.000000, sleeping
"""

D, O = 4 * MS, 2 * MS  # o + d = 6 ms


def rec(start, worker, mode, outcome, alpha=1, policy="forecast", workers=None, gang=None, **kw):
    r = {"record": "decision", "id": "x%g" % start, "policy": policy, "run": "r1", "worker": worker,
         "workers": workers, "start": start, "d": D, "overhead": O, "mode": mode, "alpha": alpha,
         "outcome": outcome, "p": 0.9, "extra_field": [1, 2]}
    if gang is not None:
        r["gang"] = gang
    r.update(kw)
    return r


class Base(unittest.TestCase):
    def assertSpells(self, got, want_ms, scale=MS):
        self.assertEqual(len(got), len(want_ms), got)
        for (s, e), (ws, we) in zip(got, want_ms):
            self.assertAlmostEqual(s, ws * scale, delta=1e-12)
            self.assertAlmostEqual(e, we * scale, delta=1e-12)

    def assertRun(self, got, n, U, W, D_):
        self.assertEqual(got[0], n)
        self.assertAlmostEqual(got[1], U, delta=1e-12)
        self.assertAlmostEqual(got[2], W, delta=1e-12)
        self.assertAlmostEqual(got[3], D_, delta=1e-12)

    def assertClose(self, a, b):
        if b is None:
            self.assertIsNone(a)
        else:
            self.assertIsNotNone(a)
            self.assertAlmostEqual(a, b, delta=1e-9 * max(1.0, abs(b)))


class TestSpells(Base):
    def setUp(self):
        self.t = score.trace_from_text(TWO)

    def test_rules_and_window(self):
        self.assertEqual(self.t.rules.name, "starpu")
        self.assertEqual(self.t.workers, ["CPU0", "CPU1"])
        self.assertAlmostEqual(self.t.t0, 0.0)
        self.assertAlmostEqual(self.t.tend, 0.120)

    def test_spells(self):
        self.assertSpells(self.t.spells["CPU0"], [(10, 35), (45, 50), (60, 70), (100, 120)])
        self.assertSpells(self.t.spells["CPU1"], [(0, 5), (28, 42), (95, 110)])

    def test_gang(self):
        self.assertSpells(self.t.resources(2)[0][1], [(28, 35), (100, 110)])
        self.assertEqual(self.t.resources(3)[0][1], [])

    def test_smpi(self):
        t = score.trace_from_text(SMPI)
        self.assertEqual(t.rules.name, "smpi")
        self.assertAlmostEqual(t.t0, 0.0)
        self.assertAlmostEqual(t.tend, 8.0)
        self.assertSpells(t.spells["rank0"], [(1, 2), (4, 4.5), (5, 7)], scale=1.0)
        self.assertSpells(t.spells["rank1"], [(0.5, 2), (3, 8)], scale=1.0)

    def test_classes(self):
        r = score.SMPI()
        for v, c in [("MPI_Recv", "idle"), ("PMPI_WAITANY", "idle"), ("mpi_mprobe", "idle"), ("Wait", "idle"),
                     ("pmpi_probe", "idle"), ("probe", "comm"), ("MPI_Send", "comm"), ("MPI_Recv_init", "comm"),
                     ("computing", "compute"), ("sleeping", "compute")]:
            self.assertEqual(r.classify(v), c, v)
        r = score.STARPU()
        for v, c in [("Executing", "compute"), ("GEMM", "compute"), ("PushingOutput", "comm"),
                     ("Waiting all tasks", "idle"), ("Throttling task submission", "idle"), ("Callback", "idle")]:
            self.assertEqual(r.classify(v), c, v)


class TestReferences(Base):
    def setUp(self):
        self.t = score.trace_from_text(TWO)
        self.refs = score.References(self.t)

    def test_oracle(self):
        # floor(L / 6 ms): 25->4, 5->0, 10->1, 20->3, 5->0, 14->2, 15->2 = 12 tasks
        b = self.refs.base("kill", D, O, 1)
        self.assertEqual(b["oracle_n"], 12)
        self.assertAlmostEqual(b["oracle_U"], 48 * MS)
        self.assertAlmostEqual(b["idle"], 94 * MS)
        self.assertAlmostEqual(b["longest"], 25 * MS)
        # exact fits count (L = 25 with o + d = 5 ms: 5 tasks)
        self.assertEqual(score.oracle_count(self.t.spells["CPU0"], 4 * MS, 1 * MS), 5 + 1 + 2 + 4)

    def test_greedy(self):
        # kill: every spell ends with one killed task; W = remainders 1+5+4+2+5+2+3
        self.assertRun(self.refs.base("kill", D, O, 1)["greedy"], 19, 48 * MS, 22 * MS, 0)
        # wait: CPU0 12 tasks (D 5+1+2+4), CPU1 7 tasks (D 1+4+3)
        self.assertRun(self.refs.base("wait", D, O, 1)["greedy"], 19, 76 * MS, 0, 20 * MS)

    def test_timeout(self):
        self.assertRun(self.refs.timeout("kill", D, O, 1, 3 * MS), 15, 36 * MS, 19 * MS, 0)
        self.assertRun(self.refs.timeout("wait", D, O, 1, 3 * MS), 15, 60 * MS, 0, 17 * MS)

    def test_gang(self):
        b = self.refs.base("kill", D, O, 2)
        self.assertAlmostEqual(b["oracle_U"], 8 * MS)
        self.assertRun(b["greedy"], 4, 8 * MS, 5 * MS, 0)
        self.assertRun(self.refs.base("wait", D, O, 2)["greedy"], 4, 16 * MS, 0, 7 * MS)

    def test_values(self):
        v = self.refs.value
        self.assertClose(v("kill", D, O, 1, 1, 26 * MS), 0.0)               # greedy itself
        self.assertClose(v("kill", D, O, 1, 1, 17 * MS), -9 / 22)           # timeout 3 ms
        self.assertClose(v("kill", D, O, 1, 1, 48 * MS), 1.0)               # oracle
        self.assertClose(v("kill", D, O, 1, 10, (48 - 220) * MS), -172 / 48)  # S_ref = max(0, -172)
        self.assertClose(v("wait", D, O, 1, 1, 43 * MS), 13 / 8)            # U* - S_ref = 48 - 56 < 0
        self.assertClose(v("wait", D, O, 1, 10, -110 * MS), -110 / 48)

    def test_value_undefined(self):
        # d + o = 30 ms fits in no spell: U* = 0, greedy only kills (S < 0) -> S_ref = 0 = U*
        self.assertIsNone(self.refs.value("kill", 28 * MS, O, 1, 1, 0.0))

    def test_rows(self):
        rows = score.reference_rows(self.refs, "kill", D, O, 1, [1.0], [3 * MS])
        by = {r["policy"]: r for r in rows}
        self.assertEqual(set(by), {"never", "greedy", "timeout", "oracle", "hindsight-timeout"})
        self.assertClose(by["never"]["value"], -26 / 22)
        self.assertClose(by["timeout"]["score"], 17 * MS)
        self.assertClose(by["timeout"]["waste_fraction"], 19 / 55)
        self.assertClose(by["greedy"]["harvest_over_idle"], 48 / 94)
        self.assertClose(by["oracle"]["value"], 1.0)
        self.assertGreaterEqual(by["hindsight-timeout"]["score"], by["greedy"]["score"])
        self.assertGreaterEqual(by["hindsight-timeout"]["score"], by["timeout"]["score"] - 1e-12)


class TestHindsight(Base):
    def test_grid(self):
        g = score.timeout_grid(0.025)
        self.assertEqual(g[0], 0.0)
        self.assertAlmostEqual(g[1], 1e-6)
        self.assertEqual(len(g), 1 + 88)  # k = -120 .. -33
        self.assertIn(0.001, g)
        self.assertLessEqual(g[-1], 0.025)

    def test_best(self):
        # one spell of 25 ms, o + d = 6 ms: tau = 1 ms fits 4 tasks exactly.
        t = score.trace_from_text(ONE)
        refs = score.References(t)
        for mode in ("kill", "wait"):
            tau, r, s = refs.hindsight(mode, D, O, 1, 10)
            self.assertAlmostEqual(tau, 1 * MS, delta=1e-15)
            self.assertRun(r, 4, 16 * MS, 0, 0)
            self.assertAlmostEqual(s, 16 * MS)
        # kill greedy: 4 tasks + 1 killed (W = 1 ms): S(10) = 6 ms -> V = (16-6)/(16-6)
        self.assertClose(refs.value("kill", D, O, 1, 10, 16 * MS), 1.0)
        # wait greedy: 5 tasks, D = 5 ms: S(10) = -30 ms -> S_ref = 0
        self.assertRun(refs.base("wait", D, O, 1)["greedy"], 5, 20 * MS, 0, 5 * MS)
        self.assertClose(refs.value("wait", D, O, 1, 10, 8 * MS), 0.5)


class TestHindsightFilter(Base):
    def test_same_as_unfiltered(self):
        # hindsight() skips the spells no longer than tau: same numbers as run_timeout on all spells.
        t = score.trace_from_text(TWO)
        for gang in (1, 2):
            for mode in ("kill", "wait"):
                for alpha in (1.0, 10.0):
                    refs = score.References(t)
                    tau, r, s = refs.hindsight(mode, D, O, gang, alpha)
                    best = None
                    for g in score.timeout_grid(refs.base(mode, D, O, gang)["longest"]):
                        rr = score.sum_runs(t, gang, lambda sp: score.run_timeout(sp, D, O, mode, g))
                        ss = score.score_of(mode, alpha, rr[1], rr[2], rr[3])
                        if best is None or ss > best[2] + 1e-12:
                            best = (g, rr, ss)
                    self.assertEqual(tau, best[0])
                    self.assertRun(r, *best[1])


class TestDecisions(Base):
    def setUp(self):
        self.t = score.trace_from_text(TWO)
        self.refs = score.References(self.t)

    def rows(self, recs, alphas=(1.0, 10.0)):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
            f.write(json.dumps({"record": "summary", "policy": "forecast"}) + "\n")
        decs, bad = score.load_decisions(f.name)
        os.unlink(f.name)
        self.assertEqual(bad, [])
        return score.decision_rows(self.t, self.refs, decs, list(alphas))

    def test_kill(self):
        rows = self.rows([
            rec(0.010, "CPU0", "kill", "completed"),
            rec(0.031, "CPU0", "kill", "completed"),      # killed at 35 (W 4 ms): recorded wrong
            rec(0.016, "CPU0", "kill", "completed"),      # out of order in the file
            rec(0.040, "CPU0", "kill", "killed"),         # invalid: CPU0 computes in [35,45)
            rec(0.0605, "CPU0", "kill", "completed"),
            rec(0.062, "CPU0", "kill", "completed"),      # invalid: previous ends at 66.5
            rec(0.095, "CPU1", "kill", "completed"),
            rec(0.105, "CPU1", "kill", "killed"),         # killed at 110 (W 5 ms)
            rec(0.100, "CPU9", "kill", "completed"),      # invalid: no such worker
            rec(0.100, None, "kill", "completed", workers=["CPU0", "CPU1"], gang=2),
            rec(0.104, None, "kill", "completed", workers=["CPU0", "CPU1"], gang=2),  # invalid: one gang task
            rec(0.030, None, "kill", "completed", workers=["CPU0", "CPU1"], policy="g2"),  # K from workers
            rec(0.100, None, "kill", "completed", workers=["CPU0", "CPU0"], policy="g2"),  # valid; workers noted
        ])
        self.assertEqual(len(rows), 3)  # alpha decided: one row per group
        g3 = [r for r in rows if r["policy"] == "g2"][0]
        self.assertEqual((g3["gang"], g3["launches"], g3["invalid"], g3["gang_workers_not_idle"]), (2, 2, 0, 1))
        self.assertClose(g3["harvest"], 4 * MS)   # 30 -> 36 killed at 35 (W 5), 100 -> 106 completes
        self.assertClose(g3["waste"], 5 * MS)
        rows = [r for r in rows if r["policy"] == "forecast"]
        g1 = [r for r in rows if r["gang"] == 1][0]
        self.assertEqual((g1["launches"], g1["invalid"], g1["outcome_mismatches"]), (6, 3, 1))
        self.assertClose(g1["harvest"], 16 * MS)
        self.assertClose(g1["waste"], 9 * MS)
        self.assertClose(g1["score"], 7 * MS)
        self.assertClose(g1["value"], -19 / 22)
        self.assertEqual(sorted(x["start"] for x in g1["invalid_examples"]), [0.04, 0.062, 0.1])
        g2 = [r for r in rows if r["gang"] == 2][0]
        self.assertEqual((g2["launches"], g2["invalid"]), (1, 1))
        self.assertClose(g2["harvest"], 4 * MS)
        self.assertClose(g2["value"], (4 - 3) / (8 - 3))
        self.assertEqual(g2["gang_workers_not_idle"], 0)
        self.assertEqual(g1["gang_workers_not_idle"], 0)

    def test_wait(self):
        rows = self.rows([
            rec(0.000, "CPU1", "wait", "overran", alpha=None),   # D 1 ms
            rec(0.005, "CPU1", "wait", "completed", alpha=None),  # invalid: 5 is the spell's end
            rec(0.030, "CPU1", "wait", "completed", alpha=None),
            rec(0.036, "CPU1", "wait", "completed", alpha=None),  # ends at 42 = e: no delay
            rec(0.034, "CPU0", "wait", "overran", alpha=None),   # D 5 ms
            rec(0.045, "CPU0", "wait", "overran", alpha=None),   # D 1 ms
            rec(0.049, "CPU0", "wait", "overran", alpha=None),   # invalid: previous ends at 51
        ])
        self.assertEqual([r["alpha"] for r in rows], [1.0, 10.0])  # alpha null: every alpha asked
        for r in rows:
            self.assertEqual((r["launches"], r["invalid"], r["outcome_mismatches"]), (5, 2, 0))
            self.assertClose(r["harvest"], 20 * MS)
            self.assertClose(r["delay"], 7 * MS)
            self.assertClose(r["delay_over_harvest"], 7 / 20)
        self.assertClose(rows[0]["score"], 13 * MS)
        self.assertClose(rows[0]["value"], 43 / 8)
        self.assertClose(rows[1]["score"], -50 * MS)
        self.assertClose(rows[1]["value"], -50 / 48)

    def test_emitted_references_rescore(self):
        # The references' own launches, written as records and scored back, give the same numbers.
        for policy, mode, gang, tau in [("greedy", "kill", 1, 0), ("greedy", "wait", 1, 0), ("timeout", "kill", 1, 3 * MS),
                                        ("timeout", "wait", 1, 3 * MS), ("oracle", "kill", 1, 0),
                                        ("greedy", "kill", 2, 0), ("greedy", "wait", 2, 0)]:
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                pass
            score.emit_decisions(self.t, policy, mode, D, O, gang, tau, f.name)
            decs, _ = score.load_decisions(f.name)
            os.unlink(f.name)
            (row,) = score.decision_rows(self.t, self.refs, decs, [1.0])
            if policy == "oracle":
                want = [self.refs.base(mode, D, O, gang)["oracle_n"], self.refs.base(mode, D, O, gang)["oracle_U"], 0, 0]
            elif policy == "greedy":
                want = self.refs.base(mode, D, O, gang)["greedy"]
            else:
                want = self.refs.timeout(mode, D, O, gang, tau)
            self.assertEqual(row["invalid"], 0, (policy, mode, gang))
            self.assertEqual(row["outcome_mismatches"], 0, (policy, mode, gang))
            self.assertRun([row["launches"], row["harvest"], row["waste"], row["delay"]], *want)


class TestCompare(Base):
    def test_compare(self):
        t = score.trace_from_text(TWO)
        refs = score.References(t)
        rows = score.reference_rows(refs, "kill", D, O, 1, [1.0, 10.0], [3 * MS])
        theirs = json.loads(json.dumps(rows))
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(theirs, f)
        out = io.StringIO()
        self.assertEqual(score.compare(rows, f.name, out), 0, out.getvalue())
        theirs[1]["harvest"] *= 1 + 1e-4
        theirs[3] = {"policy": "oracle", "mode": "kill", "d": D, "overhead": O, "gang": 1, "alpha": 1.0,
                     "launches": 12, "U": 48 * MS, "W": 0, "D": 0, "S": 48 * MS, "V": 1.0}  # short keys
        theirs.append({"policy": "nonesuch", "mode": "kill", "d": D, "overhead": O, "gang": 1, "alpha": 1.0})
        with open(f.name, "w") as g:
            json.dump(theirs, g)
        out = io.StringIO()
        self.assertEqual(score.compare(rows, f.name, out), 2, out.getvalue())
        os.unlink(f.name)


class TestCLI(Base):
    def test_main(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "two.txt")
            with open(p, "w") as f:
                f.write(TWO)
            js = os.path.join(d, "rows.json")
            out = io.StringIO()
            old, sys.stdout = sys.stdout, out
            try:
                rc = score.main([p, "--d", "4ms", "--overhead", "2ms", "--mode", "kill", "--alpha", "1",
                                 "--timeout", "3ms", "--json", js])
                rc2 = score.main([p, "--d", "4ms", "--overhead", "2ms", "--mode", "kill", "--alpha", "1",
                                  "--timeout", "3ms", "--compare", js])
            finally:
                sys.stdout = old
            self.assertEqual((rc, rc2), (0, 0), out.getvalue())
            with open(js) as f:
                rows = json.load(f)
            g = [r for r in rows if r["policy"] == "greedy"][0]
            self.assertEqual(g["launches"], 19)
            self.assertClose(g["score"], 26 * MS)


if __name__ == "__main__":
    unittest.main(verbosity=1)
