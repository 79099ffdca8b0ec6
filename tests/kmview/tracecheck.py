#!/usr/bin/env python3
"""tracecheck.py — checks a Trace Event JSON file (kmview trace --json)
against the format's rules as chrome://tracing and Perfetto read them,
and prints what it holds as "key value" lines for the test to compare
with kmtracegen's expectations.

Rules checked (a failure prints "FAIL rule: detail" and exits 1):
  * one object with "traceEvents" (a list) and "displayTimeUnit" "ns";
  * every event has "ph", an integer "pid" and "tid";
  * every X event has a string name and cat, numeric ts >= 0 and dur >= 0,
    ts and dur with at most three decimals (ns);
  * on every (pid, tid) the X events nest: a child's [ts, ts + dur] lies
    inside its parent's, siblings do not overlap;
  * every pid has process_name metadata "rank N" with N = pid, every
    (pid, tid) with events a thread_name;
  * flow events: every "s" id has exactly one "f" with the same id, cat
    and name, and the "f" has "bp": "e"; each lies inside an X event of
    category MPI on its thread; the receiver's args.from is the sender's
    pid and the sender's args.to the receiver's pid, and both name the
    same communicator (args.comm, none for MPI_COMM_WORLD).

Printed: regions (X events), closed_at_end, matched (flow pairs),
P.T.regions per pid and tid, max_depth, "comm NAME: N" the flow pairs
per communicator.
"""
import json
import sys
from collections import Counter, defaultdict
from decimal import Decimal


def fail(rule, detail):
    print("FAIL %s: %s" % (rule, detail))
    sys.exit(1)


def ns(v, what):
    """A time in microseconds (read as a Decimal: exact) as integer ns."""
    if not isinstance(v, (int, Decimal)) or v < 0:
        fail("time", "%s is %r" % (what, v))
    n = v * 1000
    if n != int(n):
        fail("time", "%s %s has more than ns precision" % (what, v))
    return int(n)


def main(path):
    with open(path) as f:
        d = json.load(f, parse_float=Decimal)
    if not isinstance(d, dict) or not isinstance(d.get("traceEvents"), list):
        fail("top", "no traceEvents list")
    if d.get("displayTimeUnit") != "ns":
        fail("top", "displayTimeUnit is not ns")
    procs, threads = {}, set()
    xs = defaultdict(list)
    flows = {"s": {}, "f": {}}
    closed = 0
    for e in d["traceEvents"]:
        ph = e.get("ph")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            fail("ids", "event without integer pid/tid: %r" % e)
        key = (e["pid"], e["tid"])
        if ph == "M":
            if e.get("name") == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            elif e.get("name") == "thread_name":
                threads.add(key)
        elif ph == "X":
            if not isinstance(e.get("name"), str) or not isinstance(e.get("cat"), str):
                fail("X", "name or cat missing: %r" % e)
            s = ns(e.get("ts"), "ts")
            xs[key].append((s, s + ns(e.get("dur"), "dur"), e))
            if e.get("args", {}).get("closed_at_end"):
                closed += 1
        elif ph in ("s", "f"):
            ident = e.get("id")
            if ident in flows[ph]:
                fail("flow", "%s id %r twice" % (ph, ident))
            if ph == "f" and e.get("bp") != "e":
                fail("flow", "f without bp e: %r" % e)
            flows[ph][ident] = e
        else:
            fail("ph", "unexpected phase %r" % ph)
    for p, name in procs.items():
        if name != "rank %d" % p:
            fail("metadata", "pid %d is named %r" % (p, name))
    depth_max = 0
    for key, evs in xs.items():
        if key[0] not in procs:
            fail("metadata", "pid %d has no process_name" % key[0])
        if key not in threads:
            fail("metadata", "pid %d tid %d has no thread_name" % key)
        evs.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        stack = []
        for s, t, e in evs:
            while stack and stack[-1][1] <= s and not (stack[-1][1] == s and stack[-1][0] == s and t == s):
                stack.pop()
            if stack and t > stack[-1][1]:
                fail("nesting", "%r ends after its parent %r" % (e, stack[-1][2]))
            stack.append((s, t, e))
            depth_max = max(depth_max, len(stack))
    if set(flows["s"]) != set(flows["f"]):
        fail("flow", "ids without a partner: %r" %
             sorted(set(flows["s"]) ^ set(flows["f"]))[:5])
    for ph in ("s", "f"):
        for e in flows[ph].values():
            t = ns(e["ts"], "flow ts")
            inside = [x for x in xs[(e["pid"], e["tid"])] if x[0] <= t <= x[1] and x[2]["cat"] == "MPI"]
            if not inside:
                fail("flow", "%s not inside an MPI region: %r" % (ph, e))
    comms = Counter()
    for ident, s in flows["s"].items():
        f = flows["f"][ident]
        if s.get("cat") != f.get("cat") or s.get("name") != f.get("name"):
            fail("flow", "id %r: cat or name differ" % ident)
        if f["args"]["from"] != s["pid"] or s["args"]["to"] != f["pid"]:
            fail("flow", "id %r: ranks do not agree: %r %r" % (ident, s, f))
        if s["args"].get("comm") != f["args"].get("comm"):
            fail("flow", "id %r: communicators differ: %r %r" % (ident, s, f))
        comms[s["args"].get("comm", "MPI_COMM_WORLD")] += 1
    print("regions %d" % sum(len(v) for v in xs.values()))
    print("closed_at_end %d" % closed)
    print("matched %d" % len(flows["s"]))
    for name, n in sorted(comms.items()):
        print("comm %s: %d" % (name, n))
    for (p, t), evs in sorted(xs.items()):
        print("%d.%d.regions %d" % (p, t, len(evs)))
    print("max_depth %d" % depth_max)


if __name__ == "__main__":
    main(sys.argv[1])
