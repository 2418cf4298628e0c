#!/usr/bin/env python3
"""Writes corpus/merge/: one app start recorded twice, as `traceconv merge` takes it.

    python3 corpus/merge/gen.py TRACEGEN [OUTDIR]     (default OUTDIR: this script's directory)

The model below is one cold start of com.example.news (pid 6120): what its Java threads ran
(the ART method trace, app.trace, written by tracegen from app.scn) and what the same moments
look like in the atrace capture taken alongside (app.atrace.txt: ftrace text with the
app's Trace.beginSection slices, system_server's, and the clock-sync markers atrace writes,
on CLOCK_BOOTTIME). facts.json says where every slice of both must land on the merged
timeline: computed here from the model, never from traceconv.

Clocks: the method trace's header start is S_US on CLOCK_MONOTONIC; the capture's clock is
BOOTTIME = MONOTONIC + BOOT_DELTA_NS (the device slept), and its parent_ts marker gives the
MONOTONIC time of one of its instants. A model time r (µs after the method trace's start)
lands at S_US * 1000 + r * 1000 + BOOT_DELTA_NS ns on the merged timeline.

Deterministic (no clock, no randomness): running it twice gives identical files.
"""
import json
import os
import subprocess
import sys

PID = 6120
PROCESS = "com.example.news"
S_US = 8_000_000                  # the ART header start: 8 s of CLOCK_MONOTONIC
BOOT_DELTA_NS = 3_500_000_000     # BOOTTIME - MONOTONIC: 3.5 s asleep
SYSTEM_PID, BINDER_TID = 1000, 1023

# ART methods: alias -> (class, name, signature, source)
METHODS = {
    "launch": ("android.app.ActivityThread", "handleLaunchActivity",
               "(Landroid/app/ActivityThread$ActivityClientRecord;Landroid/app/servertransaction/PendingTransactionActions;"
               "Landroid/content/Intent;)Landroid/app/Activity;", "ActivityThread.java"),
    "perform": ("android.app.Activity", "performCreate", "(Landroid/os/Bundle;)V", "Activity.java"),
    "create": ("com.example.news.NewsActivity", "onCreate", "(Landroid/os/Bundle;)V", "NewsActivity.java"),
    "inflate": ("android.view.LayoutInflater", "inflate", "(ILandroid/view/ViewGroup;)Landroid/view/View;",
                "LayoutInflater.java"),
    "load": ("com.example.news.NewsRepository", "loadCached", "()Ljava/util/List;", "NewsRepository.java"),
    "query": ("android.database.sqlite.SQLiteDatabase", "rawQuery",
              "(Ljava/lang/String;[Ljava/lang/String;)Landroid/database/Cursor;", "SQLiteDatabase.java"),
    "frame": ("android.view.Choreographer", "doFrame", "(JI)V", "Choreographer.java"),
    "traverse": ("android.view.ViewRootImpl", "performTraversals", "()V", "ViewRootImpl.java"),
    "measure": ("android.view.View", "measure", "(II)V", "View.java"),
    "fetch": ("com.example.news.FeedFetcher", "run", "()V", "FeedFetcher.java"),
    "call": ("okhttp3.internal.connection.RealCall", "execute", "()Lokhttp3/Response;", "RealCall.java"),
    "parse": ("com.example.news.FeedParser", "parse", "(Ljava/io/InputStream;)Ljava/util/List;", "FeedParser.java"),
}

# the app's Java threads: tid, name (the method trace's), kernel comm (the capture's; 15 bytes at most)
MAIN, WORKER = PID, 6177
THREADS = [(MAIN, "main", "example.news"), (WORKER, "FeedFetcher", "FeedFetcher")]
RENDER = 6151  # RenderThread: native, so in the capture only

# ART frames: tid -> [(alias, begin µs, end µs, depth)], well nested
ART = {
    MAIN: [("launch", 2000, 182000, 0), ("perform", 5000, 121000, 1), ("create", 6000, 119000, 2),
           ("inflate", 10000, 58000, 3), ("load", 64000, 112000, 3), ("query", 66000, 104000, 4),
           ("frame", 130000, 176000, 1), ("traverse", 132000, 170000, 2), ("measure", 134000, 150000, 3)],
    WORKER: [("fetch", 70000, 165000, 0), ("call", 72000, 148000, 1), ("parse", 150000, 162000, 1)],
}

# atrace slices (Trace.beginSection and the framework's): tid -> [(name, begin µs, end µs)]
ATRACE = {
    MAIN: [("activityStart", 3000, 181000), ("inflate", 11000, 57000), ("Choreographer#doFrame", 129000, 177000),
           ("traversal", 133000, 169000)],
    WORKER: [("FeedFetcher.fetch", 71000, 164000)],
    RENDER: [("DrawFrame", 170500, 190000)],
    BINDER_TID: [("bindApplication", 500, 1800)],
}
COMMS = {MAIN: "example.news", WORKER: "FeedFetcher", RENDER: "RenderThread", BINDER_TID: "binder:1000_2"}
PIDS = {MAIN: PID, WORKER: PID, RENDER: PID, BINDER_TID: SYSTEM_PID}


def merged_ns(rel_us):
    """Where model time rel_us lands on the merged timeline (the capture's clock), in ns."""
    return S_US * 1000 + rel_us * 1000 + BOOT_DELTA_NS


def short(alias):
    cls, name, _sig, _src = METHODS[alias]
    return f"{cls}.{name}"


def scenario():
    out = ["# One cold start of com.example.news: the Java side (corpus/merge/gen.py writes this file;",
           "# app.atrace.txt is the atrace capture of the same moments).",
           "version 3", "clock dual", "vm art", f"start {S_US}", "tids full", f"pid {PID}", ""]
    for alias, (cls, name, sig, src) in METHODS.items():
        out.append(f'method {alias} {cls} {name} "{sig}" {src}')
    out.append("")
    for tid, name, _comm in THREADS:
        frames = sorted(ART[tid], key=lambda f: (f[1], f[3]))
        out.append(f'thread {tid} "{name}" at={frames[0][1]}us {{')
        out.extend("  " + line for line in calls(frames, 0, frames[0][1]))
        out.append("}")
    return "\n".join(out) + "\n"


def calls(frames, depth, t):
    """The statements of one depth's frames from time t: gaps, then each call with its children."""
    lines = []
    for alias, b, e, _d in [f for f in frames if f[3] == depth]:
        if b > t:
            lines.append(f"gap {b - t}us")
        kids = [f for f in frames if f[3] > depth and f[1] >= b and f[2] <= e]
        if kids:
            lines.append(f"call {alias} {e - b}us {{")
            lines.extend("  " + line for line in calls(kids, depth + 1, b))
            lines.append("}")
        else:
            lines.append(f"call {alias} {e - b}us")
        t = e
    return lines


def stamp(ns):
    return f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"


def line(ns, tid, text):
    return f"{COMMS[tid]:>16}-{tid:<5} ({PIDS[tid]:>5}) [00{tid % 4}] ...1 {stamp(ns)}: tracing_mark_write: {text}\n"


def capture():
    """atrace's text: the header, the clock-sync markers at the capture's first instant (as
    atrace writes them), then every B/E in time order."""
    n = 1 + 2 * sum(len(s) for s in ATRACE.values())  # the marker, each B and E
    out = ["# tracer: nop\n#\n",
           f"# entries-in-buffer/entries-written: {n}/{n}   #P:4\n#\n",
           "#                                      _-----=> irqs-off\n",
           "#                                     / _----=> need-resched\n",
           "#                                    | / _---=> hardirq/softirq\n",
           "#                                    || / _--=> preempt-depth\n",
           "#                                    ||| /     delay\n",
           "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n",
           "#              | |        |      |   ||||       |         |\n"]
    at = merged_ns(0)
    out.append(line(at, MAIN, f"trace_event_clock_sync: parent_ts={stamp(at - BOOT_DELTA_NS)}"))
    events = []
    for tid, slices in ATRACE.items():
        for name, b, e in slices:
            events.append((merged_ns(b), 1, tid, f"B|{PIDS[tid]}|{name}"))
            events.append((merged_ns(e), 0, tid, "E"))
    for ns, _order, tid, text in sorted(events):
        out.append(line(ns, tid, text))
    return "".join(out)


def facts():
    """Every slice of the merged timeline: thread, name (a method's short name), begin and end
    (ns), and the slice that holds it there, computed from the model's times: on one thread the
    innermost slice of either input whose span holds it."""
    slices = []
    for tid, frames in ART.items():
        slices += [(tid, short(alias), b, e) for alias, b, e, _d in frames]
    for tid, items in ATRACE.items():
        slices += [(tid, name, b, e) for name, b, e in items]
    out = []
    for tid, name, b, e in sorted(slices, key=lambda s: (s[0], s[2], -s[3])):
        holders = [s for s in slices if s[0] == tid and s[2] <= b and e <= s[3] and s[1:] != (name, b, e)]
        parent = min(holders, key=lambda s: s[3] - s[2])[1] if holders else None
        out.append({"tid": tid, "name": name, "begin_ns": merged_ns(b), "end_ns": merged_ns(e), "parent": parent})
    return {
        "generator": "corpus/merge/gen.py",
        "method_trace": "app.trace", "system_trace": "app.atrace.txt",
        "pid": PID, "process": PROCESS,
        "offset_ns": BOOT_DELTA_NS,
        "start_ns": merged_ns(0),  # the merged trace's start: the method trace's, the earliest instant
        "threads": {str(tid): name for tid, name, _c in THREADS},
        "slices": out,
    }


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: gen.py TRACEGEN [OUTDIR]")
    tracegen = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(outdir, exist_ok=True)
    scn = os.path.join(outdir, "app.scn")
    with open(scn, "w", encoding="utf-8") as f:
        f.write(scenario())
    subprocess.run([tracegen, scn, os.path.join(outdir, "app.trace"), "--facts",
                    os.path.join(outdir, "app.facts.json")], check=True)
    with open(os.path.join(outdir, "app.atrace.txt"), "w", encoding="utf-8") as f:
        f.write(capture())
    with open(os.path.join(outdir, "facts.json"), "w", encoding="utf-8") as f:
        json.dump(facts(), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
