#!/usr/bin/env python3
"""Folded output merges identical stacks (issue 10, finding 9).

Overloads that differ only in their signature (`a.B.m: (I)V`, `a.B.m: (J)V`)
have the same short name, so their folded stacks are the same text; they are
one line whose count is the sum, never two lines (check_folded.py warns on
duplicates and every flame graph tool would sum them anyway).

Inputs built here: a Chrome JSON trace and the same calls as atrace text, both
named with our timeline form "pkg.Class.method: (sig)ret". Expected lines come
from the construction below (µs of self time), not from our output."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
from test_oracles_json_folded import check_folded_oracles  # noqa: E402

# (name, begin µs, end µs) on thread 7 of process 7, properly nested
CALLS = [
    ("a.B.m: (I)V", 0, 10), ("c.D.n: ()V", 2, 7),      # m(I): self 5, n: 5
    ("a.B.m: (J)V", 10, 30), ("c.D.n: ()V", 12, 17),   # m(J): self 15, n: 5
    ("a.B.m: (I)V", 30, 31),                           # m(I) again: self 1
]
WANT = {"main-7;a.B.m": 21, "main-7;a.B.m;c.D.n": 10}


def events():
    """[(ts µs, 'B'|'E', name)] in time order, ends before begins at equal times."""
    ev = []
    for name, b, e in CALLS:
        ev.append((b, 1, "B", name))
        ev.append((e, 0, "E", name))
    return [(ts, ph, name) for ts, _, ph, name in sorted(ev)]


def json_input(path):
    ev = [{"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "main"}}]
    ev += [{"ph": ph, "name": name, "pid": 7, "tid": 7, "ts": ts} for ts, ph, name in events()]
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


def atrace_input(path):
    with open(path, "w") as f:
        f.write("# tracer: nop\n#\n#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n")
        for ts, ph, name in events():
            payload = f"B|7|{name}" if ph == "B" else "E|7"
            f.write(f"            main-7     (    7) [000] ...1  100.{ts:06d}: tracing_mark_write: {payload}\n")


def check(ctx, src, label):
    out, _ = ctx.convert(src, "folded", os.path.join(ctx.work, label + ".folded"))
    if not out:
        return
    with open(out) as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    stacks = [l.rpartition(" ")[0] for l in lines]
    ctx.eq(len(stacks), len(set(stacks)), f"{label}: every stack on one line ({lines})")
    got = {}
    for l in lines:
        stack, _, n = l.rpartition(" ")
        got[stack] = got.get(stack, 0) + int(n)
    ctx.eq(got, WANT, f"{label}: counts of the merged stacks")
    r = ctx.oracle(["python3", ctx.checker("check_folded.py"), out])
    if r is not None:
        m = re.search(r"(\d+) warnings", r.stdout.decode(errors="replace"))
        ctx.check(m is not None and m.group(1) == "0", f"{label}: check_folded.py warns: {r.stdout.decode()[-400:]}")
    check_folded_oracles(ctx, label, out)
    # no-thread: the same merge without the thread frame
    r = ctx.run(["-q", "-o", "folded", "--no-thread", src, "-"], check_rc=0)
    lines = [l for l in r.stdout.decode().splitlines() if l.strip()]
    ctx.eq(sorted(lines), sorted(f"{k.partition(';')[2]} {v}" for k, v in WANT.items()),
           f"{label}: --no-thread lines")


def main():
    ctx = tclib.Ctx()
    js = os.path.join(ctx.work, "overloads.json")
    json_input(js)
    check(ctx, js, "overloads.json")
    st = os.path.join(ctx.work, "overloads.systrace")
    atrace_input(st)
    check(ctx, st, "overloads.systrace")
    ctx.done()


if __name__ == "__main__":
    main()
