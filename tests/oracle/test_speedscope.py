#!/usr/bin/env python3
"""The speedscope writer (-o speedscope), checked by check_speedscope.py (written from
the speedscope notes, docs/outputs/SPEEDSCOPE.md in the team's shared notes, not from our
writer) and against models computed
here from other outputs of the same input.

1. The checker itself: the spec's minimal file passes; each rule broken on purpose fails.
2. Every project corpus trace (art, rhea incl. the 3.x sampling dump, systrace), every
   trace of TC_EXTRA_CORPUS when it is set, tests/json and tests/ir converts, passes the
   checker, and:
   - top level: "$schema", "exporter" = traceconv@<version>, "name" = the input's file name
     (and "(weight cpu)", the selection, with --weight cpu);
   - profiles: one per thread with calls or samples (two with both: " samples" second), in
     the views' order (tclib.views_order from the IR's own enters and exits: the thread named
     main, else tid = pid, else the busiest first, then by time outside idle waits), named
     "<thread> (tid N)", "activeProfileIndex" 0 (main's), unit microseconds for ART's µs
     clocks and nanoseconds otherwise;
   - events: each evented profile's (O/C, frame name, at) sequence equals its thread's
     enters and exits in the IR dump (-o ir), at = the time in the unit, rounded down;
   - frames: one per distinct (name, file, line) of the methods used (enters and sampled
     stacks in the IR dump), the name short (pkg.Class.method) unless another method of
     the trace has the same short name and another signature;
   - totals: per thread, the time covered by frames (evented) plus the sampled weights
     equals the folded output's total for that thread; per call path, the self time equals
     the folded line within 1 µs (folded rounds each thread's lines cumulatively, so one
     line may carry up to 1 µs of its neighbours' rounding; with µs inputs the match is
     exact, and the thread totals always are).
3. --weight cpu: profiles on thread CPU time (events = the IR's CPU times; totals =
   folded --weight cpu's); a wall-only input is refused with a message and no output.
4. Hostile names (quotes, backslashes, control bytes, invalid UTF-8, </script>) come back
   through Python's json as the text they were (invalid bytes as U+FFFD).
5. An output written by traceconv is replaced with -f (it carries the exporter mark).
6. Memory: a 200 MB generated trace converts with a peak RSS within 64 MiB (reported, not
   asserted, under sanitizers, with a smaller trace)."""
import copy
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import check_speedscope  # noqa: E402
import reportlib as rl  # noqa: E402
import tclib  # noqa: E402
from test_oracles_json_folded import meant_to_fail  # noqa: E402

# TC_EXTRA_CORPUS: the files that are no traces, or that every reader refuses, by name
ART_BROKEN = ("perflib-header.trace", "studio-perflib-basic-special_char.trace")
EXTRA_NOT_TRACES = ("rhea-v2-methodMapping.txt", "btrace-v3-sampling-mapping.bin", "rhea-v2-binder.txt",
                    "catapult-systrace-atrace_procfs_dump",
                    "catapult-tracing-counter_tracks.html", "catapult-tracing-trivial_systrace.html")
LIMIT_KB = 64 * 1024

MINIMAL = {"$schema": "https://www.speedscope.app/file-format-schema.json",
           "exporter": "traceconv@0.1.0", "name": "app.trace", "activeProfileIndex": 0,
           "shared": {"frames": [{"name": "com.example.Main.main", "file": "Main.java"},
                                 {"name": "com.example.Main.work"}]},
           "profiles": [{"type": "evented", "name": "main (tid 1)", "unit": "microseconds",
                         "startValue": 0, "endValue": 30,
                         "events": [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 5},
                                    {"type": "C", "frame": 1, "at": 25}, {"type": "C", "frame": 0, "at": 30}]}]}


def broken(change):
    doc = copy.deepcopy(MINIMAL)
    change(doc)
    return doc


def sampled(doc, samples, weights):
    doc["profiles"].append({"type": "sampled", "name": "s", "unit": "microseconds", "startValue": 0,
                            "endValue": 10, "samples": samples, "weights": weights})


def ev(doc):
    return doc["profiles"][0]["events"]


# Each breaks one rule of SPEEDSCOPE.md; the checker must reject each.
BROKEN_DOCS = {
    "schema": lambda d: d.update({"$schema": "https://www.speedscope.app/file-format-schema.json/"}),
    "C on an empty stack": lambda d: ev(d).append({"type": "C", "frame": 0, "at": 30}),
    "C of another frame": lambda d: ev(d).__setitem__(2, {"type": "C", "frame": 0, "at": 25}),
    "open at the end": lambda d: ev(d).pop(),
    "at going back": lambda d: ev(d)[2].update({"at": 4}),
    "at before startValue": lambda d: d["profiles"][0].update({"startValue": 1}),
    "frame out of range": lambda d: ev(d)[1].update({"frame": 2}),
    "event type": lambda d: ev(d)[1].update({"type": "B"}),
    "null file": lambda d: d["shared"]["frames"][1].update({"file": None}),
    "line 0": lambda d: d["shared"]["frames"][1].update({"line": 0}),
    "frame without a name": lambda d: d["shared"]["frames"][1].pop("name"),
    "duplicate frame": lambda d: d["shared"]["frames"].append({"name": "com.example.Main.work"}),
    "unit": lambda d: d["profiles"][0].update({"unit": "us"}),
    "endValue below startValue": lambda d: d["profiles"][0].update({"endValue": -1}),
    "activeProfileIndex": lambda d: d.update({"activeProfileIndex": 1}),
    "beyond 2^53": lambda d: d["profiles"][0].update({"endValue": 2 ** 53 + 2}),
    "boolean at": lambda d: ev(d)[0].update({"at": False}),
    "profile type": lambda d: d["profiles"][0].update({"type": "timeline"}),
    "samples/weights lengths": lambda d: sampled(d, [[0], [0, 1]], [3]),
    "zero weight": lambda d: sampled(d, [[0]], [0]),
    "sample frame out of range": lambda d: sampled(d, [[0, 5]], [1]),
}


def check_the_checker(ctx):
    ctx.eq(check_speedscope.problems(copy.deepcopy(MINIMAL)), [], "checker: the spec's minimal file passes")
    for what, change in BROKEN_DOCS.items():
        ctx.check(check_speedscope.problems(broken(change)) != [], f"checker: accepts a file with {what}")
    for text in ('{"a": NaN}', '{"a": 1, "a": 2}'):
        path = os.path.join(ctx.work, "bad.json")
        with open(path, "w") as f:
            f.write(text)
        try:
            check_speedscope.load(path)
            ctx.fail(f"checker: loads {text}")
        except ValueError:
            ctx.check(True, "")


# -- models from the IR dump ----------------------------------------------------

DECODER = json.JSONDecoder()
IR_EVENT = re.compile(r"^([BEICSFP]) t=(\d+) m=(\d+) d=(\d+) ts=(-?\d+) cpu=(-|-?\d+)(?: id=(\d+))?(?: value=(\S+))?")
MAX_DEPTH = 2000  # frames deeper are dropped: speedscope's importer overflows the browser's stack near 6000


def read_ir(text):
    """{'trace': {...}, 'threads': [(tid, name, process)], 'methods': [(full, file, line)],
    'stacks': [(parent, method)], 'events': [(kind, thread, method, ts_ns, cpu_ns, id, value, depth)]}"""
    ir = {"threads": [], "methods": [], "stacks": [], "events": [], "meta": {}}
    for line in text.splitlines():
        if line.startswith("meta "):
            k, at = DECODER.raw_decode(line, 5)
            ir["meta"][k] = DECODER.raw_decode(line, at + 1)[0]
        elif line.startswith("trace "):
            ir["trace"] = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv and '"' not in kv)
        elif line.startswith("thread "):
            m = re.match(r'thread (\d+) tid=(\d+) records=(\d+)(?: process=(\d+))? name=(".*")$', line)
            ir["threads"].append((int(m.group(2)), json.loads(m.group(5)), int(m.group(4) or 0)))
            ir.setdefault("records", []).append(int(m.group(3)))
        elif line.startswith("method "):
            m = re.match(r"method \d+ id=\S+ defined=\d line=(-?\d+) file=", line)
            file, at = DECODER.raw_decode(line, m.end())
            name, _ = DECODER.raw_decode(line, at + len(" name="))
            ir["methods"].append((name, file, int(m.group(1))))
        elif line.startswith("stack "):
            m = re.match(r"stack (\d+) parent=(-|\d+) m=(\d+)", line)
            ir["stacks"].append((None if m.group(2) == "-" else int(m.group(2)), int(m.group(3))))
        else:
            m = IR_EVENT.match(line)
            if m:
                ir["events"].append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(5)),
                                     None if m.group(6) == "-" else int(m.group(6)),
                                     int(m.group(7)) if m.group(7) else None,
                                     float(m.group(8)) if m.group(8) else None, int(m.group(4))))
    # samples that weigh counts (the reader's metadata): a sampled profile of unit "none" named
    # after the event, its weights the counts (1000 ns each in the IR), no idle gaps (doc/formats.md, speedscope)
    ir["count"] = (ir["meta"].get("sample-type") or "samples") if ir["meta"].get("sample-unit") == "count" else None
    return ir


def short_of(full, reader=None):
    """The short form flame graphs show (doc/cli.md, Flame graphs): a Java method's "pkg.Class.method: (sig)ret"
    without ": (sig)ret"; a Rhea marker "Class:method[args]" without "[args]" (RHEA.md); the
    names of an IR text are plain (shown whole)."""
    if reader == "ir":  # our IR text names plain names: no short form
        return full
    if ": (" in full:
        return full.split(": (", 1)[0]
    if reader == "rhea" and len(full) > 2 and full.endswith("]") and full.find("[") > 0:
        return full[:full.find("[")]
    return full


def frame_entries(ir):
    """Per method: its frame entry (name, file or None, line or None), by the rule of §2 above."""
    reader = ir["trace"].get("reader")
    fulls = {}
    for full, _, _ in ir["methods"]:
        fulls.setdefault(short_of(full, reader), set()).add(full)
    out = []
    for full, file, line in ir["methods"]:
        short = short_of(full, reader)
        name = full if len(fulls[short]) > 1 else short
        out.append((name, file or None, line if line > 0 else None))
    return out


def sample_chain(ir, stack):
    chain = []
    while stack is not None:
        parent, method = ir["stacks"][stack]
        chain.append(method)
        stack = parent
    return chain[::-1]


def used_methods(ir, cpu):
    used = {m for k, _, m, *rest in ir["events"] if k == "B" and rest[-1] < MAX_DEPTH}
    if not cpu:
        for k, _, _, _, _, sid, value, _ in ir["events"]:
            if k == "P" and value and value > 0:
                used.update(sample_chain(ir, sid))
    return used


def expected_profiles(ir, cpu):
    """[(thread index, 'evented'|'sampled', name)] in order; and the active index."""
    calls, samples = set(), set()
    for k, t, _, _, _, _, value, _ in ir["events"]:
        if k == "B":
            calls.add(t)
        elif k == "P" and not cpu and value and value > 0:
            samples.add(t)
    out = []
    reader = ir["trace"].get("reader")
    busy = tclib.busy_times([(k, t, short_of(ir["methods"][m][0], reader), ts)
                             for k, t, m, ts, _, _, _, d in ir["events"] if k in "BE" and d < MAX_DEPTH])
    threads = [(tid, name, ir["records"][i]) for i, (tid, name, _) in enumerate(ir["threads"])]
    order = tclib.views_order(threads, int(ir["trace"].get("pid", "-1")), {t: b for t, (b, _) in busy.items()})
    for i in order:
        tid, name, _ = ir["threads"][i]
        if i in calls:
            out.append((i, "evented", f"{name} (tid {tid})"))
        if i in samples and ir["count"]:
            out.append((i, "sampled", f"{name} (tid {tid}) {ir['count']}"))
        elif i in samples:
            out.append((i, "sampled", f"{name} (tid {tid})" + (" samples" if i in calls else "")))
    return out, 0  # the first profile: main's, or the busiest shown


# -- the checks of one input ------------------------------------------------------

def unit_ns(unit):
    return {"nanoseconds": 1, "microseconds": 1000, "milliseconds": 10 ** 6, "seconds": 10 ** 9}[unit]


def profile_paths(doc, p):
    """{path (tuple of frame names): self time in the profile's unit} and the covered total."""
    names = [f["name"] for f in doc["shared"]["frames"]]
    paths, total = {}, 0
    if p["type"] == "evented":
        # call paths as a trie (node = (parent node, frame)): deep stacks cost O(1) an event
        node_of, parent, frame = {}, [None], [None]
        self_time = {}
        stack, last = [0], None
        for e in p["events"]:
            if len(stack) > 1 and e["at"] > last:
                self_time[stack[-1]] = self_time.get(stack[-1], 0) + e["at"] - last
                total += e["at"] - last
            last = e["at"]
            if e["type"] == "O":
                key = (stack[-1], e["frame"])
                if key not in node_of:
                    node_of[key] = len(parent)
                    parent.append(stack[-1])
                    frame.append(e["frame"])
                stack.append(node_of[key])
            else:
                stack.pop()
        for node, t in self_time.items():
            path = []
            while node:
                path.append(names[frame[node]])
                node = parent[node]
            paths[tuple(path[::-1])] = paths.get(tuple(path[::-1]), 0) + t
    else:
        for s, wt in zip(p["samples"], p["weights"]):
            if s:
                key = tuple(names[f] for f in s)
                paths[key] = paths.get(key, 0) + wt
                total += wt
    return paths, total


def folded_sanitize(name):
    """folded.c's documented name rules (its header comment): what folded prints for a name."""
    s = name.replace(";", ":").replace("\r", " ").replace("\n", " ").replace("\t", " ").strip(" ")
    if not s:
        return "[unknown]"
    m = re.match(r"^(.*?\S)( +)(\d+)$", s)
    return rl.text_escape(f"{m.group(1)}{'_' * len(m.group(2))}{m.group(3)}" if m else s)  # then the text rule


def compare_with_folded(ctx, label, doc, folded_text, reader, unit, counts=None):
    """Per thread (tid): totals equal; per path: within 1 µs (exact when the unit is µs). A count
    profile's folded lines are its samples' counts (slices weigh nothing there): its sampled
    profiles' weights, as they are (unit none)."""
    want_paths, want_total = {}, {}
    for line in folded_text.splitlines():
        stack, _, count = line.rpartition(" ")
        root, _, rest = stack.partition(";")
        rest = ";".join(rest.split(";")[:MAX_DEPTH])  # deeper frames' time is their ancestor's
        tid = int(root.rpartition("-")[2])
        want_paths[(tid, rest)] = want_paths.get((tid, rest), 0) + int(count)
        want_total[tid] = want_total.get(tid, 0) + int(count)
    got_paths, got_ns = {}, {}
    per_ns = unit_ns(unit)
    for p in doc["profiles"]:
        m = re.search(r"\(tid (\d+)\)( samples)?$" if not counts else r"\(tid (\d+)\) " + re.escape(counts) + "$",
                      p["name"])
        if not m or (counts and p["type"] != "sampled"):
            continue
        tid = int(m.group(1))
        paths, total = profile_paths(doc, p)
        per_ns = 1000 if counts else unit_ns(unit)  # folded writes a count where it writes a µs
        got_ns[tid] = got_ns.get(tid, 0) + total * per_ns
        for path, v in paths.items():
            key = (tid, ";".join(folded_sanitize(short_of(n, reader)) for n in path))
            got_paths[key] = got_paths.get(key, 0) + v * per_ns
    got_total = {tid: (ns + 500) // 1000 for tid, ns in got_ns.items()}  # folded: round half up
    tids = {tid for tid, v in got_total.items() if v} | set(want_total)
    for tid in sorted(tids):
        ctx.eq(got_total.get(tid, 0), want_total.get(tid, 0), f"{label}: thread {tid}: total µs vs folded")
    slack = 0 if per_ns % 1000 == 0 else 1
    worst = max(([abs((got_paths.get(k, 0) + 500) // 1000 - want_paths.get(k, 0)), k]
                 for k in set(got_paths) | set(want_paths)), default=[0, None])
    ctx.check(worst[0] <= slack, f"{label}: per-path self time vs folded off by {worst[0]} µs at {worst[1]}"
              f" (allowed {slack})")


def check_samples(ctx, label, ir, doc, unit):
    """Each sampled profile = its thread's samples in time order, under the calls open at
    each (IR), idle gaps between them as empty samples (SPEEDSCOPE.md §4, §7.6: a sampled
    profile has no timestamps; the weights lay the samples out from startValue)."""
    names = [f["name"] for f in doc["shared"]["frames"]]
    entries = frame_entries(ir)
    per_ns = unit_ns(unit)
    for (i, kind, pname), p in zip(expected_profiles(ir, False)[0], doc["profiles"]):
        if kind != "sampled" or p["type"] != "sampled":
            continue
        if ir["count"]:
            check_count_samples(ctx, label, ir, p, i, pname, names, entries)
            continue
        want, open_, pos, first = [], [], None, None
        for k, t, m, ts, _, sid, value, d in ir["events"]:
            if t != i:
                continue
            if k == "B" and d < MAX_DEPTH:
                open_.append(entries[m][0])
            elif k == "E" and d < MAX_DEPTH:
                open_.pop()
            elif k == "P" and value and value > 0:
                if pos is None:
                    pos = first = ts
                if ts > pos:
                    want.append(([], ts - pos))
                    pos = ts
                want.append((open_ + [entries[m2][0] for m2 in sample_chain(ir, sid)], int(value)))
                pos += int(value)
        got = [([names[f] for f in st], wt * per_ns) for st, wt in zip(p["samples"], p["weights"])]
        ctx.eq(got, want, f"{label}: {pname}: samples (stack, weight) with the idle gaps")
        ctx.eq(p["startValue"] * per_ns, first, f"{label}: {pname}: startValue = the first sample")


def check_count_samples(ctx, label, ir, p, i, pname, names, entries):
    """A count profile's sampled profile: unit none, its thread's samples in time order under
    the calls open at each, weighing their counts (IR value / 1000), no idle gap, from 0 to
    the thread's total count."""
    want, open_ = [], []
    for k, t, m, ts, _, sid, value, d in ir["events"]:
        if t != i:
            continue
        if k == "B" and d < MAX_DEPTH:
            open_.append(entries[m][0])
        elif k == "E" and d < MAX_DEPTH:
            open_.pop()
        elif k == "P" and value and value > 0:
            want.append((open_ + [entries[m2][0] for m2 in sample_chain(ir, sid)], int(value) / 1000))
    got = [([names[f] for f in st], wt) for st, wt in zip(p["samples"], p["weights"])]
    ctx.eq(p["unit"], "none", f"{label}: {pname}: a count profile's unit")
    ctx.eq(got, want, f"{label}: {pname}: samples (stack, count), no idle gap")
    ctx.eq((p["startValue"], p["endValue"]), (0, sum(w for _, w in want)), f"{label}: {pname}: from 0 to the total count")


def check_events(ctx, label, ir, doc, cpu, unit):
    """Each evented profile's events = its thread's enters and exits in the IR."""
    names = [f["name"] for f in doc["shared"]["frames"]]
    entries = frame_entries(ir)
    per_ns = unit_ns(unit)
    want = {}
    last = {}
    first = {}  # per thread: its first event shown, a sample's too (not with --weight cpu: not shown)
    for k, t, m, ts, c, _, value, d in ir["events"]:
        if k == "P" and not cpu and value and value > 0:
            first.setdefault(t, ts // per_ns)
        if k not in "BE" or d >= MAX_DEPTH:
            continue
        if cpu:  # a missing thread-CPU time stands still (writer's rule)
            c = last.get(t, 0) if c is None else c
            last[t] = c
        v = (c if cpu else ts) // per_ns
        want.setdefault(t, []).append(("O" if k == "B" else "C", entries[m][0], v))
        first.setdefault(t, v)
    for (i, kind, _), p in zip(expected_profiles(ir, cpu)[0], doc["profiles"]):
        if kind != "evented" or p["type"] != "evented":
            continue
        got = [(e["type"], names[e["frame"]], e["at"]) for e in p["events"]]  # IR times: from the trace start
        w = want.get(i, [])
        if not ctx.check(got == w, f"{label}: thread {ir['threads'][i][0]}: events differ from the IR's"
                                   f" ({len(got)} vs {len(w)})"):
            diff = next((j for j, (a, b) in enumerate(zip(got, w)) if a != b), min(len(got), len(w)))
            print(f"   first difference at event {diff}: got {got[diff:diff + 2]} want {w[diff:diff + 2]}")
        if w:
            ctx.eq(p["startValue"], first[i], f"{label}: thread {ir['threads'][i][0]}: startValue = first event")
            end = int(ir["trace"]["end_ns"]) - int(ir["trace"]["start_ns"])
            ctx.eq(p["endValue"], w[-1][2] if cpu else max(end // per_ns, w[-1][2]),
                   f"{label}: thread {ir['threads'][i][0]}: endValue = {'last event' if cpu else 'trace end'}")


def check_input(ctx, label, src, version, cpu=False):
    extra = ["--weight", "cpu"] if cpu else []
    base = os.path.basename(src) + (".cpu" if cpu else "")
    out, figs = ctx.convert(src, "speedscope", os.path.join(ctx.work, base + ".speedscope.json"), extra=extra)
    if out is None:
        return
    try:
        doc = check_speedscope.load(out)
    except ValueError as e:
        ctx.fail(f"{label}: not JSON: {e}")
        return
    found = check_speedscope.problems(doc)
    ctx.check(not found, f"{label}: check_speedscope: {found[:5]}")
    if found:
        return
    ctx.eq(doc.get("exporter"), f"traceconv@{version}", f"{label}: exporter")
    # the input's name and the selection it was made with (issue 36, item 5)
    ctx.eq(doc.get("name"), os.path.basename(src) + (" (weight cpu)" if cpu else ""), f"{label}: name")
    r = ctx.run(["-q", "-o", "ir", src, "-"], check_rc=0)
    ir = read_ir(r.stdout.decode("utf-8", errors="replace"))
    want, active = expected_profiles(ir, cpu)
    if want:
        ctx.eq([(p["type"], p["name"]) for p in doc["profiles"]], [(k, n) for _, k, n in want],
               f"{label}: profiles (type, name) in the views' order (main first)")
        ctx.eq(doc["activeProfileIndex"], active, f"{label}: activeProfileIndex (the main thread's)")
    else:
        ctx.eq(len(doc["profiles"]), 1, f"{label}: no call stack: one empty profile")
    unit = expected_unit(ir, cpu)
    ctx.check(all(p["unit"] == (unit if p["type"] == "evented" or not ir["count"] else "none")
                  for p in doc["profiles"]), f"{label}: unit {unit}{' (counts: none)' if ir['count'] else ''}")
    entries = frame_entries(ir)
    used = {entries[m] for m in used_methods(ir, cpu)}
    got = {(f["name"], f.get("file"), f.get("line")) for f in doc["shared"]["frames"]}
    ctx.eq(len(doc["shared"]["frames"]), len(used), f"{label}: frames = distinct methods used")
    ctx.check(got == used, f"{label}: frame entries (name, file, line): extra {sorted(got - used)[:3]},"
                           f" missing {sorted(used - got)[:3]}")
    check_events(ctx, label, ir, doc, cpu, unit)
    if not cpu:
        check_samples(ctx, label, ir, doc, unit)
    if cpu and ir["count"]:  # a count profile's aggregates have no thread CPU time: folded refuses it
        r = ctx.run(["-o", "folded", *extra, src, "-"])
        ctx.check(r.returncode == 1 and b"counts, not thread-CPU time" in r.stderr,
                  f"{label}: folded --weight cpu on counts: refused ({r.stderr.decode(errors='replace').strip()})")
        return
    r = ctx.run(["-o", "folded", *extra, src, "-"], check_rc=0)
    if "saturated-sum" in r.stderr.decode(errors="replace"):  # folded's sums stop at 2^62 ns; ours do not
        print(f"note: {label}: folded's sums saturated; totals not compared")
        return
    compare_with_folded(ctx, label, doc, r.stdout.decode("utf-8", errors="replace"), ir["trace"].get("reader"), unit,
                        None if cpu else ir["count"])


UNITS = [("nanoseconds", 1), ("microseconds", 10 ** 3), ("milliseconds", 10 ** 6), ("seconds", 10 ** 9)]


def expected_unit(ir, cpu):
    """µs for ART's µs clocks, ns otherwise; coarser while a value (a time from the trace
    start, or the end) would pass 2^53 - 2 (SPEEDSCOPE.md §2.2: a double's exact integers)."""
    times = [(e[4] or 0) if cpu else e[3] for e in ir["events"] if e[0] in "BEP"]
    if not cpu:
        times.append(int(ir["trace"]["end_ns"]) - int(ir["trace"]["start_ns"]))
    most = max((abs(t) for t in times), default=0)
    u = 1 if ir["trace"].get("reader") == "art" else 0
    while u + 1 < len(UNITS) and most // UNITS[u][1] > 2 ** 53 - 2:
        u += 1
    return UNITS[u][0]


def clock_of(ir_text):
    m = re.search(r"^trace .*clock=(\S+)", ir_text, re.M)
    return m.group(1) if m else None


def check_cpu(ctx, label, src, version):
    r = ctx.run(["-q", "-o", "ir", src, "-"], check_rc=0)
    clock = clock_of(r.stdout.decode("utf-8", errors="replace"))
    if clock in ("dual", "thread-cpu"):
        check_input(ctx, label + " --weight cpu", src, version, cpu=True)
        return
    out = os.path.join(ctx.work, os.path.basename(src) + ".refused.speedscope.json")
    r = ctx.run(["-f", "-o", "speedscope", "--weight", "cpu", src, out])
    err = r.stderr.decode(errors="replace")
    ctx.eq(r.returncode, 1, f"{label}: --weight cpu on clock={clock}: exit ({err.strip()})")
    ctx.check("cpu" in err.lower() and "wall" in err.lower(), f"{label}: the refusal explains: {err.strip()!r}")
    ctx.check(not os.path.exists(out), f"{label}: the refusal left {out}")


# -- hostile names, -f, memory -------------------------------------------------------------

HOSTILE = [b'quote"d \\back\\slash', b"ctl\x01\x1b\x7f\ttab", b"bad \xff\xfe\xc0\x80 utf8", b"</script><!--",
           b"amp & lt < ]]>"]


def write_hostile(path):
    """atrace text whose slices (nested, each inside the previous one) have the HOSTILE names."""
    lines = [b"# tracer: nop\n#\n#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"]
    us = 0
    for name in HOSTILE:
        us += 10
        lines.append(b"            main-7     (    7) [000] ...1  100.%06d: tracing_mark_write: B|7|%s\n" % (us, name))
    for _ in HOSTILE:
        us += 10
        lines.append(b"            main-7     (    7) [000] ...1  100.%06d: tracing_mark_write: E|7\n" % us)
    with open(path, "wb") as f:
        f.write(b"".join(lines))


def check_hostile(ctx, version):
    path = os.path.join(ctx.work, "hostile.systrace")
    write_hostile(path)
    out, _ = ctx.convert(path, "speedscope", os.path.join(ctx.work, "hostile.speedscope.json"))
    if not out:
        return
    with open(out, "rb") as f:
        raw = f.read()
    doc = json.loads(raw.decode("utf-8"))
    ctx.eq(check_speedscope.problems(doc), [], "hostile names: check_speedscope")
    names = [f["name"] for f in doc["shared"]["frames"]]
    ctx.eq(names, [n.decode("utf-8", errors="replace") for n in HOSTILE], "hostile names: frame names as text")
    ctx.eq([(e["type"], names[e["frame"]]) for e in doc["profiles"][0]["events"]],
           [("O", n.decode("utf-8", errors="replace")) for n in HOSTILE] +
           [("C", n.decode("utf-8", errors="replace")) for n in reversed(HOSTILE)], "hostile names: events")
    ir = os.path.join(ctx.work, "hostile-thread.ir.txt")
    thread = 'a "quoted" \\ thread</script>\x01\x1f'
    with open(ir, "w") as f:
        f.write("traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=7 start_ns=0\nprocess \"p\"\n"
                f"thread 0 tid=7 records=0 name={json.dumps(thread)}\nmethod 0 id=0 name=\"m\"\n"
                "B t=0 m=0 ts=0\nE t=0 m=0 ts=1000\n")
    out, _ = ctx.convert(ir, "speedscope", os.path.join(ctx.work, "hostile-thread.speedscope.json"))
    if out:
        with open(out, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
        ctx.eq(doc["profiles"][0]["name"], thread + " (tid 7)", "hostile thread name")


def check_force(ctx):
    src = os.path.join(ctx.corpus, "app-startup.trace")
    out = os.path.join(ctx.work, "again.speedscope.json")
    ctx.run(["-q", "-f", "-o", "speedscope", src, out], check_rc=0)
    r = ctx.run(["-q", "-o", "speedscope", src, out])
    ctx.eq(r.returncode, 0, f"an earlier output is made again without -f ({r.stderr.decode(errors='replace').strip()})")
    with open(out, "a") as f:  # changed since: not the earlier output any more
        f.write(" ")
    r = ctx.run(["-o", "speedscope", src, out])
    ctx.check(r.returncode == 2 and b"use -f" in r.stderr,
              f"a changed output without -f: 'exists; use -f' ({r.stderr.decode(errors='replace').strip()})")
    r = ctx.run(["-q", "-f", "-o", "speedscope", src, out])
    ctx.eq(r.returncode, 0, f"an earlier output is replaced with -f ({r.stderr.decode(errors='replace').strip()})")



def check_memory(ctx):
    if not ctx.tracegen:
        ctx.fail("tracegen is not built (the memory check needs it)")
        return
    sanitized = tclib.is_sanitized(ctx.traceconv)
    size_mb = 24 if sanitized else 200
    trace = os.path.join(ctx.work, "big.trace")
    subprocess.run([ctx.tracegen, "--bench", str(size_mb), trace], check=True, capture_output=True)
    try:
        t0 = time.time()
        p = subprocess.Popen([ctx.traceconv, "-q", "-o", "speedscope", trace, "-"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        n, tail = 0, b""
        while True:
            chunk = p.stdout.read(1 << 20)
            if not chunk:
                break
            n += len(chunk)
            tail = (tail + chunk)[-64:]
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        rss_kb = usage.ru_maxrss
        print(f"{size_mb} MB trace -> {n >> 20} MB of speedscope JSON in {time.time() - t0:.1f} s, "
              f"peak RSS {rss_kb // 1024} MiB")
        ctx.eq(rc, 0, f"big trace: exit ({err.decode(errors='replace')[-300:]})")
        ctx.check(n > 2 * os.path.getsize(trace) and tail.endswith(b"}]}\n"),
                  f"big trace: a whole output ({n} bytes, ends {tail[-12:]!r})")
        if sanitized:
            print(f"SKIPPED CHECK: sanitized build, peak RSS {rss_kb // 1024} MiB not held to 64 MiB")
        else:
            ctx.check(rss_kb <= LIMIT_KB, f"big trace: peak RSS {rss_kb // 1024} MiB > 64 MiB")
    finally:
        os.remove(trace)


# A thread with calls only, then the main thread (tid = pid, so the active profile is not
# the first) with calls and samples (under an open call, between calls, after them; two
# overlapping): two profiles for it, " samples" second.
MIXED = """traceconv-ir 1
trace clock=wall has_wall=1 has_cpu=0 pid=5 start_ns=0
process "mixed"
thread 0 tid=6 records=0 name="worker"
thread 1 tid=5 records=0 name="main"
method 0 id=0 name="a.B.run"
method 1 id=0 name="a.B.work"
method 2 id=0 name="a.B.io"
stack 0 parent=- m=1
stack 1 parent=0 m=2
B t=1 m=0 ts=1000
P t=1 m=- ts=2000 id=1 value=3000
B t=0 m=1 ts=2500
P t=1 m=- ts=4000 id=0 value=1500
P t=1 m=- ts=9000 id=0 value=1000
E t=0 m=1 ts=4000
E t=1 m=0 ts=12000
P t=1 m=- ts=14000 id=0 value=500
"""


# Two method ids that read the same (class, name, signature, file): one frame; and an
# overload of one of them: both shown with their signatures.
SAME_TEXT = """version 3
clock dual
pid 7
start 10000000
method a  com.example.Dup work "()V" Dup.java
method b  com.example.Dup work "()V" Dup.java
method o  com.example.Dup work "(I)V" Dup.java
method c  com.example.Dup run "()V" Dup.java
thread 7 main cpu=100% {
  call c {
    gap 5
    call a { gap 3 }
    call b { gap 4 }
    call o { gap 2 }
  }
}
"""


def inputs(ctx):
    mixed = os.path.join(ctx.work, "mixed.ir.txt")
    with open(mixed, "w") as f:
        f.write(MIXED)
    jump = os.path.join(ctx.work, "jump.ir.txt")
    with open(jump, "w") as f:  # a step of 9e18 ns: beyond a record's tag, and µs units
        f.write('traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=7 start_ns=0\nprocess "p"\n'
                'thread 0 tid=7 records=0 name="main"\nmethod 0 id=0 name="a"\nmethod 1 id=0 name="b"\n'
                "B t=0 m=0 ts=0\nB t=0 m=1 ts=5\nE t=0 m=1 ts=9000000000000000000\n"
                "E t=0 m=0 ts=9000000000000000001\n")
    many = os.path.join(ctx.work, "many-frames.ir.txt")
    with open(many, "w") as f:  # frames beyond 65535: beyond a record's word
        f.write('traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=7 start_ns=0\nprocess "p"\n'
                'thread 0 tid=7 records=0 name="main"\n')
        f.write("".join(f'method {i} id=0 name="m{i}"\n' for i in range(70000)))
        f.write("".join(f"B t=0 m={i} ts={2000 * i}\nE t=0 m={i} ts={2000 * i + 1500}\n" for i in range(70000)))
    out = [("mixed calls and samples", mixed), ("a huge time step", jump), ("70000 frames", many)]
    if ctx.tracegen:
        scn, same = os.path.join(ctx.work, "same-text.scn"), os.path.join(ctx.work, "same-text.trace")
        with open(scn, "w") as f:
            f.write(SAME_TEXT)
        subprocess.run([ctx.tracegen, scn, same], check=True, capture_output=True)
        out.append(("methods that read the same", same))
    else:
        ctx.fail("tracegen is not built (the same-text input needs it)")
    for name, trace, facts in ctx.project_cases():
        if not meant_to_fail(name, facts):
            out.append(("corpus/" + name, trace))
    for sub in ("rhea", "systrace"):
        out += [(label, p) for label, p, _ in ctx.corpus_inputs(sub)]
    for sub in ("art", "rhea", "systrace"):
        out += [(label, p) for label, p in ctx.extra_files(sub)
                if os.path.basename(p) not in ART_BROKEN + EXTRA_NOT_TRACES]
    for sub in ("json", "ir"):
        d = os.path.join(ctx.source, "tests", sub)
        out += [(f"tests/{sub}/" + f, os.path.join(d, f)) for f in sorted(os.listdir(d))]
    return out


def main():
    ctx = tclib.Ctx()
    version = ctx.run(["--version"], check_rc=0).stdout.decode().splitlines()[0].split()[-1]
    # first, while this process is small: a child's peak RSS (wait4) includes the
    # parent's resident memory at the exec of a vfork()ed child (posix_spawn)
    check_memory(ctx)
    check_the_checker(ctx)
    for label, src in inputs(ctx):
        check_input(ctx, label, src, version)
        check_cpu(ctx, label, src, version)
    check_hostile(ctx, version)
    check_force(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
