#!/usr/bin/env python3
"""traceconv merge: a method trace and the atrace capture of the same run on one timeline.

Both inputs are written from one model (merge_run.py: tracegen's scenario language for the ART
side, atrace text with the clock-sync markers for the capture, BOOTTIME 7.25 s ahead of
CLOCK_MONOTONIC), which also says where every slice must land. The merged Perfetto trace is
decoded by protoc with the upstream schema, checked by test_perfetto's rules of import, and
read by a model of Perfetto's slice import (per track a stack: each begin is a child of the
innermost open slice, an end closes it; depth and parent as trace processor's slice table has
them): each ART method slice must sit inside the right atrace slice of the same thread (and
atrace slices inside ART methods) at the expected BOOTTIME ns. The JSON and systrace outputs
are checked by tests/checkers and read the same way. Then: the Dalvik rule (realtime_ts),
--offset (also negative), no marker, an ART >= 14 trace (synthetic thread ids: matched by
name, placed by parent_ts with a warning), hostile markers and offsets, tids that match
nothing, and a random test of the nesting rule at crossing boundaries (seed printed; replay
with TC_MERGE_SEED=N) against an independent model of the documented rule."""
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import tclib  # noqa: E402
import test_perfetto as tp  # noqa: E402
import merge_run as mr  # noqa: E402


def short(name):
    """"pkg.Class.method: (sig)ret" -> "pkg.Class.method"; an atrace name as it is."""
    return name.split(": (", 1)[0]


# -- readers of the outputs --------------------------------------------------

def perfetto_slices(ctx, path):
    """[(tid, name, begin ns, end ns, depth, parent name)] as trace processor imports them."""
    packets = tp.decode(ctx, path)
    if packets is None:
        return None
    tp.check_packets(ctx, path, packets, dual=False)  # sequences, iids, tracks, clocks
    names, tracks, stacks, clocks, seqs, out = {}, {}, {}, {}, {}, []
    for i, p in enumerate(packets):
        seq = tp.one(p, "trusted_packet_sequence_id")
        st = seqs.setdefault(seq, {})
        if tp.one(p, "sequence_flags", 0) & tp.CLEARED:
            st.clear()
            st.update(track=None, clock=None)
            names[seq] = {}
        defs = tp.one(p, "trace_packet_defaults")
        if defs:
            st["track"] = tp.one(tp.one(defs, "track_event_defaults", {}), "track_uuid")
            st["clock"] = tp.one(defs, "timestamp_clock_id")
        for e in tp.one(p, "interned_data", {}).get("event_names", []):
            names[seq][tp.one(e, "iid")] = tp.one(e, "name")
        if "clock_snapshot" in p:
            tp.check_snapshot(ctx, path, i, p, seq, clocks)
            continue
        ts, _ = tp.packet_time(ctx, path, i, p, seq, st, clocks)
        td = tp.one(p, "track_descriptor")
        if td and "thread" in td:
            tracks[tp.one(td, "uuid")] = tp.one(tp.one(td, "thread"), "tid")
        te = tp.one(p, "track_event")
        if not te:
            continue
        track = tp.one(te, "track_uuid", st.get("track"))
        if track not in tracks:
            continue
        stk = stacks.setdefault(track, [])
        kind = tp.one(te, "type")
        if kind == "TYPE_SLICE_BEGIN":
            name = tp.one(te, "name") or names[seq].get(tp.one(te, "name_iid"))
            stk.append([tracks[track], short(name), ts, None, len(stk), stk[-1][1] if stk else None])
        elif kind == "TYPE_SLICE_END" and stk:
            s = stk.pop()
            s[3] = ts
            out.append(tuple(s))
    return out


def json_slices(path):
    """The same from Chrome JSON: ts in µs after the trace's start."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    stacks, out = {}, []
    for e in doc["traceEvents"]:
        if e.get("ph") not in ("B", "E"):
            continue
        stk = stacks.setdefault(e["tid"], [])
        if e["ph"] == "B":
            stk.append([e["tid"], short(e["name"]), round(e["ts"]), None, len(stk), stk[-1][1] if stk else None])
        else:
            s = stk.pop()
            s[3] = round(e["ts"])
            out.append(tuple(s))
    return out


LINE = re.compile(r"-(\d+)\s+\(\s*\d+\)\s+\[\d+\]\s+\S+\s+(\d+)\.(\d{6}): tracing_mark_write: ([BE])(?:\|\d+(?:\|(.*))?)?$")


def systrace_slices(path):
    """The same from the systrace HTML's ftrace text (µs after the trace's start)."""
    stacks, out = {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = LINE.search(line.rstrip("\n"))
            if not m:
                continue
            tid, us = int(m.group(1)), int(m.group(2)) * 1000000 + int(m.group(3))
            stk = stacks.setdefault(tid, [])
            if m.group(4) == "B":
                stk.append([tid, short(m.group(5)), us, None, len(stk), stk[-1][1] if stk else None])
            else:
                s = stk.pop()
                s[3] = us
                out.append(tuple(s))
    return out


# -- the checks ----------------------------------------------------------------

def expect(ctx, what, slices, scale, base, tid_of=None):
    """Every slice of the model where it must be: times as model µs * scale + base."""
    if not ctx.check(slices is not None, f"{what}: no slices read"):
        return
    got = {(s[0], s[1]): s for s in slices}
    by_name = {s[1]: s for s in slices}
    ctx.eq(len(slices), len(mr.EXPECTED), f"{what}: slices")
    for (tid, name), (b, e, parent) in mr.EXPECTED.items():
        tid = (tid_of or {}).get(tid, tid)  # "*": a thread of its own, whatever its id
        s = by_name.get(name) if tid == "*" else got.get((tid, name))
        if not ctx.check(s is not None, f"{what}: no slice {name} on thread {tid} (have {sorted(got)})"):
            continue
        ctx.eq((s[2], s[3], s[5]), (b * scale + base, e * scale + base, parent), f"{what}: {name} on {tid} (begin, end, parent)")


def run_merge(ctx, args, rc=0):
    r = ctx.run(["merge", *args])
    err = r.stderr.decode(errors="replace")
    ctx.check(r.returncode == rc, f"merge {' '.join(args)}: exit {r.returncode}, want {rc}: {err}")
    return r, err


def write(ctx, name, text):
    path = os.path.join(ctx.work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def art_trace(ctx, name, gen=(), **kw):
    scn = write(ctx, name + ".scn", mr.scenario(**kw))
    out = os.path.join(ctx.work, name + ".trace")
    r = tclib.subprocess.run([ctx.tracegen, scn, out, *gen], capture_output=True)
    ctx.check(r.returncode == 0, f"tracegen {scn}: {r.stderr.decode(errors='replace')}")
    return out


def outputs(ctx, stem, art, cap, extra=(), what="", tid_of=None, base_ns=None, start_us=0):
    """Perfetto, JSON and systrace of one merge, each against the model (JSON and systrace
    count from the merged trace's start, start_us of the model's time)."""
    base_ns = mr.boot_ns(0) if base_ns is None else base_ns
    pf = os.path.join(ctx.work, stem + ".pftrace")
    r, err = run_merge(ctx, ["-o", "perfetto", *extra, "--output-file", pf, art, cap])
    if r.returncode:
        return err
    expect(ctx, f"{what} perfetto", perfetto_slices(ctx, pf), 1000, base_ns, tid_of)
    js = os.path.join(ctx.work, stem + ".json")
    run_merge(ctx, ["-o", "json", *extra, art, cap, js])
    c = ctx.oracle(["python3", ctx.checker("check_chrome_json.py"), js, "--quiet"])
    ctx.check(c is not None and c.returncode == 0, f"{what} json: check_chrome_json: {c and c.stdout.decode()[:400]}")
    expect(ctx, f"{what} json", json_slices(js), 1, -start_us, tid_of)
    sy = os.path.join(ctx.work, stem + ".html")
    run_merge(ctx, ["-o", "systrace", *extra, art, cap, sy])
    c = ctx.oracle(["python3", ctx.checker("check_systrace_html.py"), sy])
    ctx.check(c is not None and c.returncode == 0, f"{what} systrace: check_systrace_html: {c and c.stdout.decode()[:400]}")
    expect(ctx, f"{what} systrace", systrace_slices(sy), 1, -start_us, tid_of)
    return err


def check_art(ctx):
    art = art_trace(ctx, "app")
    cap = write(ctx, "cap.txt", mr.capture())
    err = outputs(ctx, "app", art, cap, what="art")
    ctx.check("parent_ts marker (1 us)" in err, f"art: the summary names the rule and its precision: {err}")
    figs = tclib.parse_figures(err)
    ctx.eq(figs.get("merge-clamped"), mr.CLAMPED, "art: slices ended with the slice that held them")
    ctx.eq(figs.get("merge-unmatched-thread"), 1, "art: the method-trace thread without a system thread")
    ctx.check("3000 ns" in err, f"art: the largest cut is said: {err}")
    # either order of the inputs: the same bytes
    pf2 = os.path.join(ctx.work, "swapped.pftrace")
    run_merge(ctx, ["-o", "perfetto", "--output-file", pf2, cap, art])
    pf1 = os.path.join(ctx.work, "app.pftrace")
    if ctx.check(os.path.exists(pf1) and os.path.exists(pf2), "merge wrote both orders' outputs"):
        with open(pf2, "rb") as a, open(pf1, "rb") as b:
            ctx.check(a.read() == b.read(), "the inputs in the other order give another output")
    # the default name, and every other writer takes the merged trace too
    for fmt in ("pprof", "folded", "flamegraph", "report", "speedscope", "dot", "ir"):
        r, e = run_merge(ctx, ["-f", "-o", fmt, art, cap])
    folded_path = os.path.join(ctx.work, "app.merged.folded")
    if not ctx.check(os.path.exists(folded_path), "the default output name TRACE.merged.EXT"):
        return
    with open(folded_path, encoding="utf-8") as f:
        folded = f.read()
    ctx.check("Choreographer#doFrame;android.view.View.draw" in folded,
              f"folded stacks hold atrace slices and methods in one stack: {folded[:300]}")


def check_dalvik(ctx):
    ids = {mr.MAIN: 1, mr.WORKER: 2, mr.LONELY: 3}  # Dalvik's thread ids are no Linux tids
    art = art_trace(ctx, "dalvik", vm="dalvik", start_us=mr.WALL0_MS * 1000, ids=ids, pid=False)
    cap = write(ctx, "dalvik-cap.txt", mr.capture())
    err = outputs(ctx, "dalvik", art, cap, what="dalvik", tid_of={mr.LONELY: "*"})
    ctx.check("realtime_ts marker (1 ms)" in err, f"dalvik: the summary names the realtime rule: {err}")
    # without the realtime marker: the clear error
    cap2 = write(ctx, "dalvik-noreal.txt", mr.capture(realtime=False))
    r, err = run_merge(ctx, ["-o", "json", art, cap2, os.path.join(ctx.work, "x.json")], rc=2)
    ctx.check("realtime_ts" in err and "--offset" in err, f"dalvik without realtime_ts: {err}")


def check_offset(ctx):
    art = art_trace(ctx, "off")
    cap = write(ctx, "nomarker.txt", mr.capture(parent=False, realtime=False))
    out = os.path.join(ctx.work, "none.json")
    r, err = run_merge(ctx, ["-o", "json", art, cap, out], rc=2)
    ctx.check("parent_ts" in err and "--offset" in err, f"no marker, no --offset: one clear line: {err}")
    ctx.check(not os.path.exists(out), "no marker: no output")
    err = outputs(ctx, "off", art, cap, extra=["--offset", "7.25s"], what="--offset")
    ctx.check("--offset 7250000000ns (exact)" in err, f"--offset: the summary says so: {err}")
    # a trace started 10 s later on its clock: a negative offset
    late = art_trace(ctx, "late", start_us=mr.S_US + 10_000_000)
    outputs(ctx, "late", late, cap, extra=["--offset", "-2750ms"], what="negative --offset")
    # --offset wins over the markers
    cap_m = write(ctx, "marked.txt", mr.capture())
    outputs(ctx, "late2", late, cap_m, extra=["--offset=-2.75s"], what="--offset over markers")


def check_art14(ctx):
    art = art_trace(ctx, "art14", tids="synthetic")
    cap = write(ctx, "cap14.txt", mr.capture())
    err = outputs(ctx, "art14", art, cap, what="art14", tid_of={mr.LONELY: "*"})
    ctx.check("merge-clock-guess" in err and "Android 14" in err, f"art14: the documented warning: {err}")
    r, err = run_merge(ctx, ["--strict", "-o", "json", art, cap, os.path.join(ctx.work, "s.json")], rc=1)


def check_hostile(ctx):
    art = art_trace(ctx, "h")
    for text in ("parent_ts=abc", "parent_ts=1.2.3", "parent_ts=99999999999999999999.0", "parent_ts="):
        cap = write(ctx, "bad.txt", mr.capture(parent_text=text, realtime=False))
        r, err = run_merge(ctx, ["-f", "-o", "json", art, cap, os.path.join(ctx.work, "bad.json")], rc=2)
        ctx.check("clock-sync marker with an unreadable value" in err, f"{text}: the bad marker is said: {err}")
    cap = write(ctx, "badreal.txt", mr.capture(parent=False, realtime_text="realtime_ts=99999999999999999999"))
    dal = art_trace(ctx, "hd", vm="dalvik", start_us=mr.WALL0_MS * 1000, ids={mr.MAIN: 1, mr.WORKER: 2, mr.LONELY: 3})
    r, err = run_merge(ctx, ["-f", "-o", "json", dal, cap, os.path.join(ctx.work, "bad.json")], rc=2)
    ctx.check("unreadable value" in err, f"realtime_ts beyond range: {err}")
    cap = write(ctx, "ok.txt", mr.capture())
    o = os.path.join(ctx.work, "o.json")
    for off in ("9223372036s", "-9223372036s", "9000000000s"):  # beyond what a duration holds
        r, err = run_merge(ctx, ["-f", "-o", "json", "--offset", off, art, cap, o], rc=2)
        ctx.check("--offset" in err, f"--offset {off}: {err}")
    # an offset that moves a timestamp beyond the 64-bit ns timeline (checked, no wrap)
    far = art_trace(ctx, "farstart", vm="dalvik", start_us=9_000_000_000_000_000, ids={mr.MAIN: 1, mr.WORKER: 2, mr.LONELY: 3})
    r, err = run_merge(ctx, ["-f", "-o", "json", "--offset", "4611686018s", far, cap, o], rc=1)
    ctx.check("beyond the 64-bit ns timeline" in err, f"huge offset: {err}")
    ctx.check(not os.path.exists(o), "huge offset: no output")
    for off in ("abc", "1.5", "--", "1e3s"):
        r, err = run_merge(ctx, ["-f", "-o", "json", f"--offset={off}", art, cap, os.path.join(ctx.work, "o.json")], rc=2)
    # a marker whose parent_ts is far from the trace: placed where it says, no overflow
    cap = write(ctx, "far.txt", mr.capture(parent_text="parent_ts=8999999999.999999"))
    run_merge(ctx, ["-f", "-o", "perfetto", art, cap, os.path.join(ctx.work, "far.pftrace")])
    # tids that match nothing: every method thread keeps its own track, with a warning each
    other = {mr.MAIN: [("Choreographer#doFrame", 1100, 2100)]}
    saved = dict(mr.COMMS)
    mr.COMMS[9999] = "stranger"
    cap = write(ctx, "strangers.txt", mr.capture(atrace={9999: other[mr.MAIN]}))
    mr.COMMS.clear()
    mr.COMMS.update(saved)
    js = os.path.join(ctx.work, "strangers.json")
    r, err = run_merge(ctx, ["-o", "json", art, cap, js])
    figs = tclib.parse_figures(err)
    ctx.check(figs.get("merge-unmatched-thread", 0) >= 1, f"unmatched tids: said: {err}")
    if os.path.exists(js):
        tids = {s[0] for s in json_slices(js)}
        ctx.check({mr.MAIN, mr.WORKER, mr.LONELY, 9999} <= tids, f"unmatched tids keep their tracks: {tids}")
    # usage
    run_merge(ctx, ["-o", "json", art], rc=2)
    run_merge(ctx, ["-o", "json", "-", "-"], rc=2)
    run_merge(ctx, ["-i", "art", "-o", "json", art, cap, os.path.join(ctx.work, "i.json")], rc=2)
    run_merge(ctx, ["-o", "json,perfetto", "--output-file", os.path.join(ctx.work, "two.json"), art, cap], rc=2)
    r = ctx.run(["-o", "json", "--offset", "1s", art, os.path.join(ctx.work, "u.json")])
    ctx.check(r.returncode == 2, "--offset outside merge: a usage error")


def check_mutations(ctx):
    """Seeded byte mutations of both inputs (markers, records, headers): an output or one
    clean error line, never a crash, and no output file after an error."""
    seed = int(os.environ.get("TC_MERGE_SEED", 7))
    rng = random.Random(seed * 31 + 1)
    with open(art_trace(ctx, "mut"), "rb") as f:
        art = f.read()
    cap = mr.capture().encode()
    for n in range(40):
        a, c = bytearray(art), bytearray(cap)
        target = a if n % 2 else c
        for _ in range(1 + rng.randrange(4)):
            i = rng.randrange(len(target))
            target[i] = rng.choice([rng.randrange(256), ord("9"), ord("."), ord("|"), 0xFF])
        pa, pc = os.path.join(ctx.work, "mut-in.trace"), os.path.join(ctx.work, "mut-in.txt")
        with open(pa, "wb") as f:
            f.write(a)
        with open(pc, "wb") as f:
            f.write(c)
        out = os.path.join(ctx.work, "mut.pftrace")
        if os.path.exists(out):
            os.unlink(out)
        r = ctx.run(["merge", "-o", "perfetto", *(["--offset", "7.25s"] if n % 3 == 0 else []), pa, pc, out])
        err = r.stderr.decode(errors="replace")
        ctx.check(r.returncode in (0, 1, 2), f"mutation {n} (seed {seed}): exit {r.returncode}: {err[-300:]}")
        if r.returncode:
            ctx.check(not os.path.exists(out), f"mutation {n} (seed {seed}): an output after an error")
            ctx.check(err.count("\n") >= 1 and "traceconv: " in err, f"mutation {n}: no error line: {err!r}")


# -- the random test of the nesting rule -------------------------------------------

def random_tree(rng, b, e, depth, names, out, maxdepth=4):
    """Well-nested frames strictly inside [b, e]: (name, begin, end, depth)."""
    t = b + 1
    while depth < maxdepth and t + 4 < e and rng.random() < 0.7:
        cb = t + rng.randrange(0, 4)
        ce = min(e - 1, cb + 2 + rng.randrange(0, max(3, (e - cb) // 2)))
        if ce <= cb:
            break
        out.append((rng.choice(names), cb, ce, depth))
        random_tree(rng, cb, ce, depth + 1, names, out, maxdepth)
        t = ce + rng.randrange(0, 3)


def model_merge(sys_slices, art_frames):
    """The documented rule, written from doc/merge.md: both streams in time order (an exit first
    at equal times, then the system trace's), each frame a child of the innermost open one; a
    frame that ends while frames of the other input that began inside it are open ends them
    with it, and the rest of those (their children, their own ends) is left out.
    Returns [(name, begin, end, parent)], the count of ends moved and of the slices left out."""
    def events(frames, src):
        ev = []
        for i, (name, b, e, d) in enumerate(frames):
            ev.append((b, 1, d, i, "B", name))
            ev.append((e, 0, d, i, "E", name))
        # the input's own order: time, ends before begins, deeper ends first, outer begins first
        ev.sort(key=lambda x: (x[0], x[1], -x[2] if x[1] == 0 else x[2]))
        return [(t, k, d, i, ph, n, src) for t, k, d, i, ph, n in ev]
    a, b = events(sys_slices, 0), events(art_frames, 1)
    merged, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        if j == len(b) or (i < len(a) and (a[i][0], a[i][1]) <= (b[j][0], b[j][1])):
            merged.append(a[i])
            i += 1
        else:
            merged.append(b[j])
            j += 1
    stack, out, cut, left_out, clamp = [], [], 0, 0, {0: None, 1: None}
    for t, _k, d, _i, ph, name, src in merged:
        c = clamp[src]
        if c is not None and d >= c[0]:
            if ph == "E" and d == c[0]:
                clamp[src] = None
                cut += t > c[1]
            left_out += ph == "B"
            continue
        if ph == "B":
            stack.append([name, t, src, d, stack[-1][0] if stack else None])
            continue
        while stack[-1][2] != src:
            f = stack.pop()
            clamp[f[2]] = (f[3], t) if clamp[f[2]] is None or f[3] < clamp[f[2]][0] else clamp[f[2]]
            out.append((f[0], f[1], t, f[4]))
        f = stack.pop()
        out.append((f[0], f[1], t, f[4]))
    return sorted(out), cut, left_out


def check_random(ctx):
    seed = int(os.environ.get("TC_MERGE_SEED", random.randrange(1 << 30)))
    print(f"random nesting test: seed {seed} (replay: TC_MERGE_SEED={seed})")
    rng = random.Random(seed)
    crossings = lost = 0
    for case in range(12):
        span = 400
        art_frames, sys_slices = [], []
        random_tree(rng, 0, span, 0, list("ABCD"), art_frames)
        random_tree(rng, 0, span, 0, ["s1", "s2", "s3"], sys_slices)
        if not art_frames or not sys_slices:
            continue
        methods = {c: (f"r.C{c}", "m", "()V") for c in "ABCD"}
        art = {mr.MAIN: [(n, b + 10, e + 10, d) for n, b, e, d in art_frames]}
        scn = mr.scenario(art=art, methods=methods, threads=[(mr.MAIN, "main", None)])
        path = write(ctx, f"rnd{case}.scn", scn)
        tr = os.path.join(ctx.work, f"rnd{case}.trace")
        if tclib.subprocess.run([ctx.tracegen, path, tr], capture_output=True).returncode:
            ctx.fail(f"seed {seed} case {case}: tracegen refused the scenario")
            continue
        cap = write(ctx, f"rnd{case}.txt", mr.capture(atrace={mr.MAIN: [(n, b + 10, e + 10) for n, b, e, _d in sys_slices]}))
        js = os.path.join(ctx.work, f"rnd{case}.json")
        r, err = run_merge(ctx, ["-o", "json", tr, cap, js])
        if r.returncode:
            continue
        want, cut, left_out = model_merge([(n, b + 10, e + 10, d) for n, b, e, d in sys_slices],
                                [(f"r.C{n}.m", b + 10, e + 10, d) for n, b, e, d in art_frames])
        got = sorted((s[1], s[2], s[3], s[5]) for s in json_slices(js))
        ctx.eq(got, want, f"seed {seed} case {case}: merged slices (name, begin, end, parent)")
        ctx.eq(tclib.parse_figures(err).get("merge-clamped", 0), cut, f"seed {seed} case {case}: merge-clamped")
        ctx.eq(tclib.parse_figures(err).get("merge-left-out", 0), left_out,
               f"seed {seed} case {case}: merge-left-out (slices begun inside a clamped one)")
        if cut:  # the message says both counts
            ctx.check(f"{cut} slices crossed" in err and f"{left_out} slices that began inside them" in err,
                      f"seed {seed} case {case}: the clamp's message counts what it left out: {err}")
        crossings += cut
        lost += left_out
    # slices of 2-400 µs placed at random on both sides cross often; a run without one tests nothing
    ctx.check(crossings > 0, f"seed {seed}: no case had a crossing boundary")
    print(f"random nesting test: {crossings} clamps, {lost} slices left out")


def check_v2(ctx):
    """The run's method trace written as ART V2 (Android 16 ns, Android 15 µs): real tids,
    a CLOCK_MONOTONIC header start, so the parent_ts rule puts every slice where the model does."""
    cap = write(ctx, "cap-v2.txt", mr.capture())
    for layout in ("a16-ns", "a15"):
        art = art_trace(ctx, "app-" + layout, gen=("--v2", layout))
        err = outputs(ctx, "app-" + layout, art, cap, what="art-v2 " + layout)
        ctx.check("parent_ts marker" in err, f"art-v2 {layout}: the parent_ts rule: {err}")
    # ART's long-running-method dump (absolute monotonic ns, no thread CPU), as a file and inside
    # a Perfetto trace: the same slices on the same timeline
    for form, ext in (("raw", ".trace"), ("pftrace", ".pftrace")):
        scn = write(ctx, "lr-" + form + ".scn", mr.scenario())
        art = os.path.join(ctx.work, "lr-" + form + ext)
        r = tclib.subprocess.run([ctx.tracegen, scn, art, "--longrun", form, "--pf-process", "com.example.app"],
                                 capture_output=True)
        if not ctx.check(r.returncode == 0, f"tracegen --longrun {form}: {r.stderr.decode(errors='replace')}"):
            continue
        # a headerless dump has no session start: the merged trace starts at its first record
        # (the Lonely thread's, 100 µs), before the capture's first slice
        first_us = min(b for frames in mr.ART.values() for _a, b, _e, _d in frames)
        err = outputs(ctx, "lr-" + form + "-merged", art, cap, what="art-longrun " + form,
                      start_us=first_us if form == "raw" else 0)
        ctx.check("parent_ts marker" in err, f"art-longrun {form}: the parent_ts rule: {err}")


def check_sched(ctx):
    """A capture with scheduler data: the merged Perfetto trace carries it as the capture alone
    does (the sched, thread_state and counter tables of test_sched_perfetto's model of Perfetto's
    import, from the capture's text and from the merged output). The spill of the join once kept
    3 bits of an event's kind, and the system events (kinds 8-15) came out as garbage."""
    import test_sched_perfetto as sp
    head, body = mr.capture().split("#\n", 1)
    lines = body.splitlines(keepends=True)
    tids = [0, mr.MAIN, mr.WORKER]
    cur = 0
    for k in range(40):
        ns = mr.boot_ns(k * 1000 + 7)
        if k % 4 == 3:
            text = f"cpu_frequency: state={300000 * (1 + k % 3)} cpu_id=0"
        elif k % 4 == 2:
            w = tids[1 + k % 2]
            text = f"sched_waking: comm={mr.COMMS[w]} pid={w} prio=120 target_cpu=000"
        else:
            nxt = tids[(k // 2) % 3]
            pc = "swapper/0" if cur == 0 else mr.COMMS[cur]
            nc = "swapper/0" if nxt == 0 else mr.COMMS[nxt]
            text = (f"sched_switch: prev_comm={pc} prev_pid={cur} prev_prio=120 prev_state={'S' if k % 3 else 'R+'}"
                    f" ==> next_comm={nc} next_pid={nxt} next_prio=120")
            cur = nxt
        lines.append(mr._line(ns, mr.MAIN, "").split(" tracing_mark_write")[0] + " " + text + "\n")
    stamp = re.compile(r" (\d+\.\d{6}): ")
    lines.sort(key=lambda ln: float(stamp.search(ln).group(1)))
    cap = write(ctx, "sched-cap.txt", head + "#\n" + "".join(lines))
    art = art_trace(ctx, "schedapp")
    out = os.path.join(ctx.work, "sched-merged.pftrace")
    run_merge(ctx, ["-o", "perfetto", "--output-file", out, art, cap])
    with open(cap, "rb") as f:
        want_events, _ = sp.text_events(sp.ftrace_text(f.read()))
    packets = sp.decode(ctx, out) if os.path.exists(out) else None
    if not ctx.check(packets is not None and want_events, "sched: the merged output is decoded"):
        return
    want, got = sp.run_events(want_events), sp.run_events(sp.proto_events(packets))
    for what, w, g in zip(("sched", "thread_state", "counter"), want, got):
        ctx.check(w and w == g, f"sched: the merged trace's {what} table is the capture's ({len(g)} rows, want {len(w)})")


def main():
    ctx = tclib.Ctx()
    check_sched(ctx)
    check_v2(ctx)
    check_art(ctx)
    check_dalvik(ctx)
    check_offset(ctx)
    check_art14(ctx)
    check_hostile(ctx)
    check_mutations(ctx)
    check_random(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
