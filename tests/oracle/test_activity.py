#!/usr/bin/env python3
"""The activity writer (-o activity): where each thread is busy over time, read by Python's
json and compared with models computed here, never from traceconv's other outputs.

1. A thread busy in a known window: a scenario written here (tracegen) whose main thread
   waits 600 ms in one call, makes 300 calls of 1 ms, waits 400 ms; a worker makes 100
   calls of 2 ms first, then waits. Each call's start is known from the scenario; the axis
   (start, end) is tracegen's facts. Each thread's counts per bin equal the model's
   (bin = floor((t - start) * 200 / (end - start)), the end in the last), so main's calls
   fill exactly the bins of its busy window and the waits are flat.
2. Samples count one each, whatever their weight, and an instant nothing: an IR input
   written here with samples and a slice at known times.
3. Frames open before tracing (tracegen's `pre`, made up at the start by the conversion
   rules) are not counted: every project corpus trace's counts add up to the facts' enter
   records, its axis is the facts' start and end (wall clocks), and every thread is one of
   the facts' with its tid and name.
4. A thread name that is markup or control bytes comes back through json as its text.
5. --thread keeps the axis (the whole trace) and only the chosen thread.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

BINS = 200

WINDOW_SCN = """version 3
clock dual
pid 700
start 1000000
method run java.lang.Thread run "()V" Thread.java
method wait java.lang.Object wait "()V" Object.java
method work com.example.Busy work "()V" Busy.java
method pre com.example.Busy outer "()V" Busy.java
thread 700 main {
  call pre pre {
    call run {
      call wait 600ms
      repeat 300 { call work 1ms }
      call wait 400ms
    }
  }
}
thread 701 worker {
  call run {
    repeat 100 { call work 2ms }
    call wait 1100ms
  }
}
"""


def window_starts():
    """Each call's start (µs from the trace start), per tid, from the scenario above: a frame's
    children run back to back from its start; `pre` has no enter record."""
    main = [0, 0] + [600_000 + i * 1_000 for i in range(300)] + [900_000]  # run, wait, work..., wait
    worker = [0] + [i * 2_000 for i in range(100)] + [200_000]               # run, work..., wait
    return {700: main, 701: worker}


def model(starts_ns, start, end):
    counts = [0] * BINS
    for t in starts_ns:
        k = 0 if t <= start else (t - start) * BINS // (end - start)
        counts[min(k, BINS - 1)] += 1
    return counts


def convert(ctx, src, out, *opts):
    r = ctx.run(["-q", "-f", "-o", "activity", *opts, src, out])
    if not ctx.check(r.returncode == 0, f"{src} -o activity {' '.join(opts)}: exit {r.returncode}: "
                                        f"{r.stderr.decode(errors='replace').strip()}"):
        return None
    with open(out, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        ctx.fail(f"{src}: activity is not JSON: {e}")
        return None


def check_shape(ctx, what, doc):
    ctx.eq((doc.get("traceconv_activity"), doc.get("bins"), doc.get("unit")), (1, BINS, "calls and samples"),
           f"{what}: the document's head")
    for t in doc.get("threads", []):
        ctx.check(len(t["counts"]) == BINS and sum(t["counts"]) == t["total"] > 0,
                  f"{what}: thread {t['tid']}: {BINS} counts adding up to its total {t['total']}")
    span = doc["end_ns"] - doc["start_ns"]
    ctx.check(abs(doc["bin_ns"] - span / BINS) < 0.001, f"{what}: bin_ns {doc['bin_ns']} of a span {span}")


def check_window(ctx):
    if not ctx.check(bool(ctx.tracegen), "tracegen given (--tracegen)"):
        return
    scn = os.path.join(ctx.work, "window.scn")
    trace = os.path.join(ctx.work, "window.trace")
    facts_path = os.path.join(ctx.work, "window.facts.json")
    with open(scn, "w", encoding="utf-8") as f:
        f.write(WINDOW_SCN)
    r = subprocess.run([ctx.tracegen, scn, trace, "--facts", facts_path], capture_output=True)
    if not ctx.eq(r.returncode, 0, f"tracegen window.scn: {r.stderr.decode(errors='replace')}"):
        return
    with open(facts_path, encoding="utf-8") as f:
        facts = json.load(f)
    doc = convert(ctx, trace, os.path.join(ctx.work, "window.activity.json"))
    if doc is None:
        return
    check_shape(ctx, "window", doc)
    start, end = facts["trace_start_us"] * 1000, facts["trace_end_us"] * 1000
    ctx.eq((doc["start_ns"], doc["end_ns"]), (start, end), "window: the axis is the trace's (tracegen's facts)")
    got = {t["tid"]: t["counts"] for t in doc["threads"]}
    want = {tid: model([start + us * 1000 for us in s], start, end) for tid, s in window_starts().items()}
    ctx.eq(sorted(got), sorted(want), "window: the threads with activity")
    for tid in want:
        ctx.eq(got.get(tid), want[tid], f"window: thread {tid}: calls begun per bin")
    # the busy window, said plainly: main is flat between its first waits' start and 600 ms,
    # busy in every bin of 600..900 ms, flat after
    busy = [k for k, c in enumerate(got.get(700, [])) if c and k]
    lo, hi = 600_000_000 * BINS // (end - start), 900_000_000 * BINS // (end - start)
    ctx.check(busy and busy[0] == lo and busy[-1] == hi and all(got[700][k] for k in range(lo, hi)),
              f"window: main is busy exactly in bins {lo}..{hi}: {busy[:3]}..{busy[-3:]}")
    only = convert(ctx, trace, os.path.join(ctx.work, "window-main.activity.json"), "--thread", "main")
    if only is not None:
        ctx.eq(([t["tid"] for t in only["threads"]], only["start_ns"], only["end_ns"]), ([700], start, end),
               "--thread main: that thread alone, on the whole trace's axis")
        ctx.eq(only["threads"][0]["counts"] if only["threads"] else None, want[700], "--thread main: its counts")


SAMPLES_IR = """traceconv-ir 1
trace clock=wall has_wall=1 has_cpu=0 pid=9 start_ns=0
process "sampler"
thread 0 tid=9 records=0 name="main"
thread 1 tid=10 records=0 name="<b>x</b>\\u0007\\"q\\\\"
method 0 id=0 name="main"
method 1 id=0 name="work"
method 2 id=0 name="tick"
stack 0 parent=- m=0
stack 1 parent=0 m=1
B t=0 m=0 ts=0
P t=0 m=- ts=1000 id=1 value=5000000
P t=0 m=- ts=999000 id=1 value=1
P t=0 m=- ts=1000000 id=0 value=7
I t=0 m=2 ts=500000
B t=1 m=1 ts=250000
E t=1 m=1 ts=260000
E t=0 m=0 ts=2000000
"""


def check_samples(ctx):
    src = os.path.join(ctx.work, "samples.ir.txt")
    with open(src, "w", encoding="utf-8") as f:
        f.write(SAMPLES_IR)
    doc = convert(ctx, src, os.path.join(ctx.work, "samples.activity.json"))
    if doc is None:
        return
    check_shape(ctx, "samples", doc)
    ctx.eq((doc["start_ns"], doc["end_ns"]), (0, 2_000_000), "samples: the axis")
    got = {t["tid"]: (t["name"], t["counts"]) for t in doc["threads"]}
    want_main = model([0, 1000, 999_000, 1_000_000], 0, 2_000_000)  # the slice and three samples, not the instant
    ctx.eq(got.get(9), ("main", want_main), "samples: one a sample, whatever its weight; instants nothing")
    ctx.eq(got.get(10), ("<b>x</b>\u0007\"q\\", model([250_000], 0, 2_000_000)),
           "samples: a name of markup and control bytes comes back as its text")


def check_corpus(ctx):
    n = 0
    for name, trace, facts_path in ctx.project_cases():
        if not facts_path:
            continue
        with open(facts_path, encoding="utf-8") as f:
            facts = json.load(f)
        doc = convert(ctx, trace, os.path.join(ctx.work, name + ".activity.json"))
        if doc is None:
            continue
        check_shape(ctx, name, doc)
        total = sum(t["total"] for t in doc["threads"])
        ctx.eq(total, facts["enter"], f"{name}: calls counted = the enter records written (made-up frames left out)")
        if facts["clock"] in ("dual", "wall", "global"):
            ctx.eq((doc["start_ns"], doc["end_ns"]), (facts["trace_start_us"] * 1000, facts["trace_end_us"] * 1000),
                   f"{name}: the axis is the trace's start and end")
        known = {(t["tid"], t["name"]) for t in facts["threads"]}
        ctx.check(all((t["tid"], t["name"]) in known for t in doc["threads"]),
                  f"{name}: threads are the facts' (tid, name): {[(t['tid'], t['name']) for t in doc['threads']]}")
        n += 1
    ctx.check(n >= 20, f"corpus cases: {n}")


def main():
    ctx = tclib.Ctx()
    check_window(ctx)
    check_samples(ctx)
    check_corpus(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
