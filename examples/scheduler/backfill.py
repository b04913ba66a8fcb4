#!/usr/bin/env python3
"""A backfilling scheduler driven by tracecast's plans, in Python.

The same scheduler as main.go (docs/backfill.md, "A scheduler acting on the
plans"): it reads the forecast policy's plans (tracecast.plan/1: for each
idle worker, the windows of elapsed idle time in which a back-end task is
worth launching), puts back-end tasks on the workers by them, and publishes
what it launched as decisions (tracecast.decision/1), each once its outcome
is known. Replace `emit` by your runtime's launch and kill.

    python3 examples/scheduler/backfill.py --brokers 127.0.0.1:9092   # Kafka (Debian: python3-confluent-kafka)
    python3 examples/scheduler/backfill.py --from out/bf/plans.jsonl  # a file; decisions on standard output

Each run's plans come in the order they were issued (keyed by run: one
partition); delivery is at least once, so a plan seen again (same id) is
skipped.
"""
import argparse
import json
import math
import sys

EPS = 1e-9  # two times this close are equal, as tracecast counts them


class Lane:
    """One worker and one task length: the worker's spell and our task on it."""

    def __init__(self, run, worker, d, alpha, mode, overhead):
        self.run, self.worker, self.d, self.alpha = run, worker, d, alpha
        self.mode, self.overhead = mode, overhead
        self.idle, self.start = False, 0.0
        self.windows = []  # (from, to, p)
        self.running = self.overran = False
        self.task_start = self.done = self.task_p = 0.0
        self.next, self.next_p = math.inf, 0.0

    def replan(self, now):
        """The next launch from now on: at once inside a window, else at the next one's start."""
        self.next = math.inf
        x = now - self.start
        for lo, hi, p in self.windows:
            if lo <= x < hi:
                self.next, self.next_p = now, p
                return
            if lo > x:
                self.next, self.next_p = self.start + lo, p
                return


class Follower:
    def __init__(self, emit):
        self.lanes = {}
        self.emit = emit

    def decide(self, l, outcome):
        self.emit({"record": "decision",
                   "id": "%s/scheduler/%s/%g/a%g/%.9f" % (l.run, l.worker, l.d, l.alpha, l.task_start),
                   "policy": "forecast", "run": l.run, "worker": l.worker, "workers": None,
                   "start": l.task_start, "d": l.d, "overhead": l.overhead, "mode": l.mode,
                   "alpha": l.alpha, "timeout": None, "outcome": outcome, "p": l.task_p})

    def advance(self, l, t):
        """Our launches and completions on the lane before t."""
        while True:
            if l.running:
                if l.done > t + EPS:
                    return
                l.running = False
                self.decide(l, "overran" if l.overran else "completed")
                if not l.idle:
                    return
                l.replan(l.done)  # back to back
                continue
            if not l.next < t - EPS:
                return
            l.running, l.overran = True, False
            l.task_start, l.done, l.task_p = l.next, l.next + l.overhead + l.d, l.next_p
            l.next = math.inf

    def apply(self, p):
        """Takes the next plan record of its run."""
        if p["event"] == "end":
            for k in [k for k in self.lanes if k[0] == p["run"] and k[2] == p["d"] and k[3] == p["alpha"]]:
                l = self.lanes.pop(k)
                l.idle = False
                self.advance(l, math.inf)
            return
        key = (p["run"], p["worker"], p["d"], p["alpha"])
        l = self.lanes.get(key)
        if l is None:
            l = self.lanes[key] = Lane(p["run"], p["worker"], p["d"], p["alpha"], p["mode"], p["overhead"])
        t = p["issued_at"]
        self.advance(l, t)  # what happened before this record
        if p["event"] in ("idle", "update"):
            l.idle, l.start = True, p["spell_start"]
            l.windows = [(lo, math.inf if hi is None else hi, q) for (lo, hi), q in zip(p["launch"], p["p"])]
            if not l.running:
                l.replan(t)
        elif p["event"] == "busy":
            l.idle, l.next = False, math.inf
            if l.running and l.done > t + EPS and not l.overran:
                if l.mode == "kill":  # the primary takes the worker back
                    l.running = False
                    self.decide(l, "killed")
                else:  # the primary waits for the task
                    l.overran = True
        else:
            raise ValueError("plan %s: unknown event %r" % (p["id"], p["event"]))


def from_file(path):
    out = sys.stdout
    f = Follower(lambda d: out.write(json.dumps(d) + "\n"))
    src = sys.stdin if path == "-" else open(path)
    for n, line in enumerate(src, 1):
        try:
            f.apply(json.loads(line))
        except KeyError as e:
            sys.exit("%s:%d: not a plan record: no field %s" % (path, n, e))
        except (ValueError, TypeError) as e:
            sys.exit("%s:%d: not a plan record: %s" % (path, n, e))


def from_kafka(brokers, group, plans, decisions, runs):
    from confluent_kafka import Consumer, Producer  # Debian: python3-confluent-kafka

    c = Consumer({"bootstrap.servers": brokers, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    prod = Producer({"bootstrap.servers": brokers, "acks": "all", "linger.ms": 5})

    def emit(d):
        prod.produce(decisions, key=d["run"], value=json.dumps(dict(schema="tracecast.decision/1", **d)))

    f = Follower(emit)
    seen, ended = set(), 0
    c.subscribe([plans])
    try:
        while runs == 0 or ended < runs:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                print("fetch: %s (retrying)" % m.error(), file=sys.stderr)
                continue
            try:
                p = json.loads(m.value())
            except ValueError:
                p = None
            if not p or p.get("schema") != "tracecast.plan/1":
                print("offset %d: not a plan, skipped" % m.offset(), file=sys.stderr)
            elif p["id"] not in seen:
                seen.add(p["id"])
                f.apply(p)
                if p["event"] == "end":
                    ended += 1
                    seen = {i for i in seen if not i.startswith(p["run"] + "/") or i == p["id"]}
            prod.flush()  # publish, then commit: a crash between re-delivers the plan, its id makes that harmless
            c.commit(message=m, asynchronous=False)
    finally:
        prod.flush()
        c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--brokers", default="127.0.0.1:9092", help="comma-separated Kafka brokers")
    ap.add_argument("--group", default="backfill-scheduler-py", help="consumer group")
    ap.add_argument("--plans", default="tracecast.plans", help="topic of the plans")
    ap.add_argument("--decisions", default="tracecast.decisions", help="topic the decisions go to")
    ap.add_argument("--from", dest="path", help="read the plans from this JSON lines file (- for standard input) instead of Kafka")
    ap.add_argument("--runs", type=int, default=0, help="stop once this many runs have ended (0: never)")
    a = ap.parse_args()
    if a.path:
        from_file(a.path)
    else:
        from_kafka(a.brokers, a.group, a.plans, a.decisions, a.runs)


if __name__ == "__main__":
    main()
