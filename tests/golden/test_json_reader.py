"""The Chrome JSON reader (-i json).
1. Round trip: ART -> json -> (our reader) -> folded equals ART -> folded, stack
   by stack, for every project corpus trace and every valid shared ART trace.
2. A hand-written third-party trace: array form, X events out of order and
   nested at equal times, string pid/tid, M names, i, C (two series), b/e.
   Expectations are worked out by hand in the comments.
3. Bad JSON: one clear error with an offset; a size over --max-json is refused.
5. Streamed: the document is scanned, never held as a tree. Values around traceEvents
   (nested, strings with ] } and escapes) are skipped, stackFrames and samples are read
   wherever they are (before or after traceEvents), otherData counts wherever it is,
   the first traceEvents counts; broken JSON anywhere (also in a skipped value) fails
   with the offset of the fault; --max-json bounds one event, not the file; peak RSS
   for 4n events is that for n plus a little, and below the size of the file.
4. Linear time: one counter event with n args (n series), n vs 4n:
   CPU time(4n) <= 6 x time(n) (floor 0.3 s), and every series comes out.
7. Legacy async events and the other phases with an IR form (catapult's and Perfetto's JSON
   importers read them): S/F as async slices (b/e's: the cookie from id2.local/global or id,
   scoped to the process), a step T/p as an instant on its thread named after args.step (its
   event's name without one), n and R as instants, a P without sf as an instant named
   after it (V8Sample, other Profile* P events and a nameless one counted as "P"); S, T, p, F
   and n without an id are counted ("S without id"); async events and marks carry no thread
   CPU time. The expected IR records are worked out from the document read by Python's json;
   -o json writes the async slices back as b/e and the steps as instants.
6. The slices' sort (issue 26: a radix sort of (thread, start) with ties sorted apart):
   40 slices of one thread starting together, shuffled, nest longest first; 20 equal
   ones nest in file order; starts spread over +-4.5e15 us on three threads (the key
   does not pack: the general sort) still nest. Folded stacks worked out here."""
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

HAND = [
    {"ph": "M", "pid": "render", "tid": 5, "name": "process_name", "args": {"name": "renderer"}},
    {"ph": "M", "pid": "render", "tid": 5, "name": "thread_name", "args": {"name": "CrRendererMain"}},
    # out of order; "child" shares its parent's start and end: it must nest inside
    {"ph": "X", "pid": "render", "tid": 5, "ts": 10.0, "dur": 4.0, "name": "child"},
    {"ph": "X", "pid": "render", "tid": 5, "ts": 10.0, "dur": 4.0, "name": "grandchild"},
    {"ph": "X", "pid": "render", "tid": 5, "ts": 0.0, "dur": 20.0, "name": "Task"},
    {"ph": "X", "pid": "render", "tid": 5, "ts": 14.0, "dur": 2.5, "name": "sibling"},
    {"ph": "B", "pid": 7, "tid": 8, "ts": 1.0, "name": "Outer"},
    {"ph": "B", "pid": 7, "tid": 8, "ts": 2.0, "name": "Inner"},
    {"ph": "E", "pid": 7, "tid": 8, "ts": 3.0},
    {"ph": "E", "pid": 7, "tid": 8, "ts": 9.0},
    {"ph": "i", "pid": 7, "tid": 8, "ts": 4.0, "name": "mark", "s": "t"},
    {"ph": "C", "pid": 7, "tid": 8, "ts": 5.0, "name": "mem", "args": {"heap": 10, "gpu": 2.5}},
    {"ph": "b", "pid": 7, "tid": 8, "ts": 1.5, "name": "fetch", "cat": "net", "id": "0x2a"},
    {"ph": "e", "pid": 7, "tid": 8, "ts": 8.5, "name": "fetch", "cat": "net", "id": "0x2a"},
]
# folded (µs): renderer main: Task 20 total; child 4 (grandchild 4 inside: child self 0);
# sibling 2.5 -> Task self = 20 - 4 - 2.5 = 13.5. Cumulative rounding per thread, in
# depth-first order: Task 13.5 -> 14; grandchild +4 = 17.5 -> 18 (4); sibling +2.5 = 20 (2).
# The thread's counts add up to Task's 20 µs.
WANT_FOLDED = {"CrRendererMain-5;Task": 14, "CrRendererMain-5;Task;child;grandchild": 4,
               "CrRendererMain-5;Task;sibling": 2, "Thread-8-8;Outer": 7, "Thread-8-8;Outer;Inner": 1}


def round_trip(ctx):
    sources = [p for _, p, _ in ctx.project_cases()]
    extra = ctx.extra_corpus("art")
    if extra:
        for f in sorted(os.listdir(extra)):
            if f not in ("perflib-header.trace", "studio-perflib-basic-special_char.trace"):
                sources.append(os.path.join(extra, f))
    for src in sources:
        name = os.path.basename(src)
        j = os.path.join(ctx.work, name + ".json")
        a = os.path.join(ctx.work, name + ".art.folded")
        b = os.path.join(ctx.work, name + ".json.folded")
        if not (ctx.run(["-q", "-f", "-o", "json", src, j]).returncode == 0 and
                ctx.run(["-q", "-f", "-o", "folded", src, a]).returncode == 0):
            ctx.fail(f"{name}: cannot convert the ART trace")
            continue
        r = ctx.run(["-f", "-o", "folded", j, b])
        if not ctx.check(r.returncode == 0, f"{name}: json reader: {r.stderr.decode(errors='replace').strip()}"):
            continue
        ctx.check("(json Chrome trace JSON" in r.stderr.decode(errors="replace"), f"{name}: detected as json")
        fa, fb = tclib.read_folded(a), tclib.read_folded(b)
        diff = {k: (fa.get(k), fb.get(k)) for k in set(fa) | set(fb) if fa.get(k) != fb.get(k)}
        ctx.check(not diff, f"{name}: ART -> folded vs ART -> json -> folded differ on {len(diff)} stacks, "
                            f"e.g. {list(diff.items())[:2]}")


def hand_written(ctx):
    path = os.path.join(ctx.work, "hand.json")
    with open(path, "w") as f:
        json.dump(HAND, f)
    out = os.path.join(ctx.work, "hand.folded")
    r = ctx.run(["-f", "-o", "folded", path, out], check_rc=0)
    if r.returncode == 0:
        ctx.eq(tclib.read_folded(out), WANT_FOLDED, "hand-written trace: folded stacks")
    js = os.path.join(ctx.work, "hand.out.json")
    ctx.run(["-f", "-o", "json", path, js], check_rc=0)
    if os.path.exists(js):
        chk = ctx.oracle(["python3", ctx.checker("check_chrome_json.py"), js])
        ctx.check(chk is not None and chk.returncode == 0, f"re-written JSON passes the lint: {chk and chk.stdout[-500:]}")
        ev = json.load(open(js))["traceEvents"]
        names = {e["args"]["name"] for e in ev if e.get("name") == "process_name"}
        ctx.check({"renderer"} <= names, f"process name from M events: {names}")
        counters = sorted((e["name"], e["args"]["value"]) for e in ev if e["ph"] == "C")
        ctx.eq(counters, [("mem.gpu", 2.5), ("mem.heap", 10)], "one counter per series")
        ctx.eq(sorted(e["ph"] for e in ev if e["ph"] in "ibe"), ["b", "e", "i"], "instant and async events kept")
        ids = {e["id2"]["local"] for e in ev if e["ph"] in "be"}
        ctx.eq(ids, {"0x2a"}, "async cookie kept (id2.local: scoped to the process)")


def bad_json(ctx):
    path = os.path.join(ctx.work, "bad.json")
    with open(path, "w") as f:
        f.write('{"traceEvents":[{"ph":"B","ts":1,"pid":1,"tid":1,"name":"a"},\n{"ph":"E" "ts":2}]}')
    out = os.path.join(ctx.work, "bad.folded")
    r = ctx.run(["-o", "folded", "-i", "json", path, out], check_rc=1)
    err = r.stderr.decode(errors="replace")
    ctx.check(": json: offset 0x" in err and len(err.strip().splitlines()) == 1, f"bad JSON: one line with an offset: {err}")
    ctx.check(not os.path.exists(out), "bad JSON: no output")




def streamed(ctx):
    ev = [{"ph": "B", "pid": 1, "tid": 2, "ts": 1.0, "name": "a"}, {"ph": "E", "pid": 1, "tid": 2, "ts": 4.0}]
    body = json.dumps(ev)
    noise = '{"a": "x]}\\"\\u0041", "b": [1, -2.5e3, true, null, {"c": [[], {}]}], "d": "[{"}'
    other = '{"start_time_ns": 123456789, "generator": "not traceconv"}'
    out = os.path.join(ctx.work, "s.json")
    cases = {  # name: (document, the start_time_ns of its otherData, or None: none given)
        "noise around, otherData last": ('{"metadata": %s, "traceEvents": %s, "x": [1], "otherData": %s}'
                                         % (noise, body, other), 123456789),
        "otherData first": ('{"otherData": %s, "traceEvents": %s}' % (other, body), 123456789),
        "second traceEvents ignored": ('{"traceEvents": %s, "traceEvents": [{"ph": "B"}]}' % body, None),
        "whitespace everywhere": (' \n{ "traceEvents" :\t[ %s , %s ] } \n' % (json.dumps(ev[0]), json.dumps(ev[1])),
                                  None),
        # sampled stacks around the events, in any order: the one slice is still all the timeline has
        "samples and frames first": ('{"samples": [{"sf": 2, "ts": 2, "pid": 1, "tid": 2}], "stackFrames": '
                                     '{"2": {"name": "leaf", "parent": 1}, "1": {"name": "root"}}, "traceEvents": %s}'
                                     % body, None),
        "frames after the events, samples last": ('{"traceEvents": %s, "stackFrames": {"1": {"name": "root"}}, '
                                                  '"otherData": %s, "samples": [{"sf": "1", "ts": 3, "tid": 2}]}'
                                                  % (body, other), 123456789),
    }
    for name, (doc, start) in cases.items():
        path = os.path.join(ctx.work, "streamed.json")
        with open(path, "w") as f:
            f.write(doc)
        r = ctx.run(["-q", "-f", "-i", "json", "-o", "json", path, out])
        if not ctx.check(r.returncode == 0, f"{name}: {r.stderr.decode(errors='replace').strip()}"):
            continue
        with open(out) as f:
            got = json.load(f)
        if start is not None:
            ctx.eq(got["otherData"]["start_time_ns"], start, f"{name}: start_time_ns")
        ctx.eq(sorted((e["ph"], e.get("name")) for e in got["traceEvents"] if e["ph"] in "BEX"),
               [("B", "a"), ("E", "a")], f"{name}: the one slice")
    broken = {  # name: document with @ where the fault is (removed before writing)
        "unterminated string in a skipped value": '{"metadata": {"a": "x]}@', 
        "bad escape in a skipped value": '{"metadata": "ab@\\q", "traceEvents": []}',
        "trailing comma in the events": '{"traceEvents": [%s,@]}' % json.dumps(ev[0]),
        "missing comma between events": '{"traceEvents": [%s @%s]}' % (json.dumps(ev[0]), json.dumps(ev[1])),
        "garbage after the events": '{"traceEvents": %s @x}' % body,
        "a letter for a number in a skipped value": '{"x": [1, @e5], "traceEvents": []}',
        "a missing colon in stackFrames": '{"traceEvents": [], "stackFrames": {"1" @{"name": "a"}}, "samples": []}',
        "a trailing comma in samples": '{"samples": [{"sf": 1, "ts": 1, "tid": 1},@], "traceEvents": []}',
        "garbage in a .cpuprofile's nodes": '{"nodes": [{"id": 1, "callFrame": {}}, @x], "samples": [1]}',
    }
    for name, doc in broken.items():
        at = doc.index("@")
        path = os.path.join(ctx.work, "broken.json")
        with open(path, "w") as f:
            f.write(doc.replace("@", ""))
        r = ctx.run(["-f", "-i", "json", "-o", "folded", path, out + ".folded"], check_rc=1)
        err = r.stderr.decode(errors="replace").strip()
        offs = [int(w[2:].rstrip(":"), 16) for w in err.split() if w.startswith("0x")]
        ctx.check(len(err.splitlines()) == 1 and offs and at - 1 <= offs[0] <= at + 1,
                  f"{name}: one line with the offset {at:#x}: {err}")
        ctx.check(not os.path.exists(out + ".folded"), f"{name}: no output")
    # --max-json: one event of ~4 KB is over 1000 bytes; 2000 small events (more than 1000
    # bytes in all) are not
    big = [{"ph": "X", "pid": 1, "tid": 1, "ts": 1.0, "dur": 1.0, "name": "n" * 4000}]
    small = [{"ph": "X", "pid": 1, "tid": 1, "ts": float(i), "dur": 0.5, "name": "s"} for i in range(2000)]
    for name, evs, rc in (("one 4 KB event", big, 1), ("2000 small events", small, 0)):
        path = os.path.join(ctx.work, "maxjson.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": evs}, f)
        r = ctx.run(["-f", "-o", "folded", "--max-json", "1000", path, out + ".folded"], check_rc=rc)
        if rc:
            e = r.stderr.decode(errors="replace")
            ctx.check("max-json" in e and "offset 0x11:" in e, f"--max-json names itself and the event: {e!r}")
    # memory: n vs 4n events (records spill to disk through the external sort)
    if tclib.is_sanitized(ctx.traceconv):
        print("SKIPPED CHECK: sanitized build, peak RSS not compared")
        return
    rss, size = {}, {}
    for n in (100000, 400000):
        path = os.path.join(ctx.work, f"many{n}.json")
        with open(path, "w") as f:
            f.write('{"traceEvents": [\n')
            for i in range(n // 2):
                f.write('{"ph":"B","pid":1,"tid":%d,"ts":%d.0,"name":"m%d","args":{"i":%d}},\n'
                        '{"ph":"E","pid":1,"tid":%d,"ts":%d.5},\n' % (i % 4, i, i % 50, i, i % 4, i))
            f.write('{"ph":"i","pid":1,"tid":1,"ts":0,"name":"end"}]}\n')
        rc, err, rss[n] = tclib.run_measured([ctx.traceconv, "-q", "-f", "-o", "folded", path, os.devnull])
        size[n] = os.path.getsize(path) // 1024
        print(f"{n} events: {size[n]} KiB of JSON, peak RSS {rss[n]} KiB")
        ctx.check(rc == 0, f"{n} events: {err.strip()}")
    # a tree of the document grew by 8 times the file's growth (17 MiB more file here)
    ctx.check(rss[400000] - rss[100000] <= (size[400000] - size[100000]) // 4,
              f"peak RSS grows with the events: {rss[100000]} KiB for 100000, {rss[400000]} KiB for 400000")


def counter_args(ctx):
    times = {}
    for n in (10000, 40000):
        path = os.path.join(ctx.work, f"counter{n}.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": [{"ph": "C", "name": "c", "pid": 1, "tid": 1, "ts": 0,
                                        "args": {f"s{i}": i for i in range(n)}}]}, f)
        out = path + ".out.json"
        times[n] = ctx.cpu_time(["-q", "-f", "-o", "json", path, out])
        if times[n] is None:
            return
        with open(out) as f:
            series = {e["name"]: e["args"]["value"] for e in json.load(f)["traceEvents"] if e["ph"] == "C"}
        ctx.eq(series, {f"c.s{i}": i for i in range(n)}, f"{n} series: each one counter \"c.<series>\"")
    print(f"counter with n args: n=10000 {times[10000]:.2f} s, 4n {times[40000]:.2f} s")
    ctx.check(times[40000] <= max(6 * times[10000], 0.3),
              f"counter args: 4n takes {times[40000]:.2f} s, n {times[10000]:.2f} s (quadratic?)")


def sort_edges(ctx):
    rng = random.Random(26)
    durs = list(range(10, 50))  # distinct: the longer holds the shorter
    rng.shuffle(durs)
    ties = [{"ph": "X", "pid": 1, "tid": 1, "ts": 100, "dur": d, "name": f"d{d}"} for d in durs]
    ties += [{"ph": "X", "pid": 1, "tid": 2, "ts": 7, "dur": 5, "name": f"e{k:02d}"} for k in range(20)]
    want_ties = {}
    chain = sorted(durs, reverse=True)
    for i, d in enumerate(chain):  # each one's self time: its duration less its child's
        want_ties[";".join(f"d{x}" for x in chain[:i + 1])] = d - (chain[i + 1] if i + 1 < len(chain) else 0)
    want_ties[";".join(f"e{k:02d}" for k in range(20))] = 5
    spread, want_spread = [], {}
    for tid, ts in ((3, -4.5e15), (4, 0), (5, 4.5e15)):
        spread += [{"ph": "X", "pid": 1, "tid": tid, "ts": ts + 1, "dur": 2, "name": f"in{tid}"},
                   {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": 6, "name": f"out{tid}"}]
        want_spread.update({f"out{tid}": 4, f"out{tid};in{tid}": 2})
    for label, events, want in (("ties", ties, want_ties), ("spread", spread, want_spread)):
        path = os.path.join(ctx.work, f"sort-{label}.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        out = os.path.join(ctx.work, f"sort-{label}.folded")
        r = ctx.run(["-f", "-o", "folded", "--no-thread", path, out], check_rc=0)
        if r.returncode == 0:
            ctx.eq(tclib.read_folded(out), want, f"slice sort, {label}: folded stacks")


# S/F, T/p, n, R and P without sf, with the rules' edge cases (no id, a P of V8's or nameless)
LEGACY = [
    {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "CrBrowserMain"}},
    {"ph": "B", "pid": 1, "tid": 1, "ts": 5.0, "tts": 2.0, "name": "work"},
    {"ph": "S", "pid": 1, "tid": 1, "ts": 10.0, "tts": 3.0, "name": "Load", "cat": "net", "id": "0x1"},
    {"ph": "T", "pid": 1, "tid": 1, "ts": 12.0, "tts": 3.5, "name": "Load", "cat": "net", "id": "0x1",
     "args": {"step": "Parse"}},
    {"ph": "p", "pid": 1, "tid": 1, "ts": 14.0, "name": "Load", "cat": "net", "id": "0x1", "args": {"step": "Paint"}},
    {"ph": "n", "pid": 1, "tid": 1, "ts": 15.0, "name": "Mark", "cat": "x", "id": 9},
    {"ph": "P", "pid": 1, "tid": 1, "ts": 17.0, "name": "SampleA", "cat": "SAMPLE", "args": {}},
    {"ph": "P", "pid": 1, "tid": 1, "ts": 18.0, "name": "SampleA", "cat": "SAMPLE", "sf": None},
    {"ph": "F", "pid": 1, "tid": 1, "ts": 20.0, "tts": 4.0, "name": "Load", "cat": "net", "id": "0x1",
     "args": {"done": 1}},
    {"ph": "S", "pid": 1, "tid": 2, "ts": 11.0, "name": "Fetch", "cat": "net", "id2": {"local": "0x7"}},
    {"ph": "R", "pid": 1, "tid": 2, "ts": 16.0, "tts": 1.0, "name": "navigationStart", "cat": "blink.user_timing"},
    {"ph": "F", "pid": 1, "tid": 2, "ts": 30.0, "name": "Fetch", "cat": "net", "id2": {"local": "0x7"}},
    {"ph": "S", "pid": 1, "tid": 1, "ts": 40.0, "name": "Dup", "id": 5},
    {"ph": "T", "pid": 1, "tid": 1, "ts": 45.0, "name": "Dup", "id": 5},  # no step: the event's name
    {"ph": "F", "pid": 2, "tid": 3, "ts": 50.0, "name": "Dup", "id": 5},  # ends in another process
    {"ph": "E", "pid": 1, "tid": 1, "ts": 60.0, "tts": 20.0},
    {"ph": "S", "pid": 1, "tid": 1, "ts": 41.0, "name": "NoId"},
    {"ph": "T", "pid": 1, "tid": 1, "ts": 42.0, "name": "NoId", "args": {"step": "x"}},
    {"ph": "n", "pid": 1, "tid": 1, "ts": 43.0, "name": "NoId", "id2": {}},
    {"ph": "S", "pid": 1, "tid": 1, "name": "NoTs", "id": 3},
    {"ph": "P", "pid": 1, "tid": 1, "ts": 19.0, "name": "V8Sample", "args": {"data": {"stack": ["0x1"]}}},
    {"ph": "P", "pid": 1, "tid": 1, "ts": 19.5, "name": "ProfileFoo"},
    {"ph": "P", "pid": 1, "tid": 1, "ts": 19.7},
]


def legacy_model(events):
    """What the reader makes of LEGACY, read here with Python's json: IR records
    [(kind, thread label, name, ts ns, cookie or stack)], not converted {kind: n}, bad lines."""
    names, recs, nc, bad = {}, [], {}, 0
    for e in events:
        if e["ph"] == "M":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    label = lambda e: f"{names.get((e['pid'], e['tid']), 'Thread-%d' % e['tid'])}-{e['tid']}"  # noqa: E731
    origin = min(round(e["ts"] * 1000) for e in events if "ts" in e)  # the trace starts at its first event (B)
    for e in events:
        ph = e["ph"]
        id2 = e.get("id2")
        cookie = (id2.get("local", id2.get("global")) if isinstance(id2, dict) else e.get("id"))
        has_id = ("local" in id2 or "global" in id2) if isinstance(id2, dict) else "id" in e
        if ph in "STpFn" and not has_id:
            nc[ph + " without id"] = nc.get(ph + " without id", 0) + 1
            continue
        if ph == "P" and "sf" in e and isinstance(e["sf"], (int, str)):
            continue  # (none here)
        if ph == "P" and (not e.get("name") or e["name"] == "V8Sample" or e["name"].startswith("Profile")):
            nc["P"] = nc.get("P", 0) + 1
            continue
        if ph in "MBE":
            continue
        if "ts" not in e:
            bad += 1
            continue
        ts = round(e["ts"] * 1000) - origin
        if ph in "SF":
            recs.append((ph, label(e), e["name"], ts, int(cookie, 0) if isinstance(cookie, str) else cookie))
        elif ph in "Tp":
            recs.append(("I", label(e), (e.get("args") or {}).get("step") or e["name"], ts, None))
        elif ph in "nR":
            recs.append(("I", label(e), e["name"], ts, None))
        elif ph == "P":  # without sf: a mark named after the event
            recs.append(("I", label(e), e["name"], ts, None))
    return recs, nc, bad


def read_ir_records(path):
    """[(kind, thread label, name, ts, id or stack)] of the S, F, I and P lines of an -o ir dump,
    and whether any of them carries a thread CPU time."""
    threads, methods, stacks, out, cpu = {}, {}, {}, [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("thread "):
                m = re.match(r'thread (\d+) tid=(\d+) .*name=(".*")$', line.rstrip("\n"))
                threads[int(m.group(1))] = f"{json.loads(m.group(3))}-{m.group(2)}"
            elif line.startswith("method "):
                m = re.match(r'method (\d+) .* name=(".*")$', line.rstrip("\n"))
                methods[int(m.group(1))] = json.loads(m.group(2))
            elif line.startswith("stack "):
                m = re.match(r"stack (\d+) parent=(-|\d+) m=(\d+)", line)
                stacks[int(m.group(1))] = (None if m.group(2) == "-" else int(m.group(2)), int(m.group(3)))
            else:
                m = re.match(r"([SFIP]) t=(\d+) m=(\d+) d=\d+ ts=(-?\d+) cpu=(\S+)(?: id=(\d+))?(?: value=(\S+))?", line)
                if not m:
                    continue
                k, th, name, ts = m.group(1), threads[int(m.group(2))], methods[int(m.group(3))], int(m.group(4))
                cpu |= m.group(5) != "-"
                if k == "P":
                    frames, sid = [], int(m.group(6))
                    while sid is not None:
                        frames.append(methods[stacks[sid][1]])
                        sid = stacks[sid][0]
                    out.append((k, th, tuple(reversed(frames)), ts, int(float(m.group(7)))))
                else:
                    out.append((k, th, name, ts, int(m.group(6)) if k in "SF" else None))
    return out, cpu


def legacy_async(ctx):
    path = os.path.join(ctx.work, "legacy.json")
    with open(path, "w") as f:
        json.dump(LEGACY, f)
    want, nc, bad = legacy_model(LEGACY)
    ir = os.path.join(ctx.work, "legacy.ir.txt")
    r = ctx.run(["-f", "-o", "ir", path, ir], check_rc=0)
    if r.returncode:
        return
    got, cpu = read_ir_records(ir)
    ctx.eq(sorted(got, key=repr), sorted(want, key=repr), "legacy async, steps, n, R, P: the IR's records")
    ctx.check(not cpu, "async events, marks and samples carry no thread CPU time")
    figs = tclib.parse_figures(r.stderr.decode(errors="replace"))
    ctx.eq(figs.get("bad-line", 0), bad, "an S without ts: a bad line")
    err = r.stderr.decode(errors="replace")
    for k, n in nc.items():
        ctx.check(f"{k} {n}" in err, f"not converted: {k} {n} in {err.strip()[-300:]}")
    ctx.eq(figs.get("not-converted", 0), sum(nc.values()), "not converted: the S, T, n without id and three P")
    # the timelines: S/F back as b/e with the cookie scoped to the process, steps as instants
    js = os.path.join(ctx.work, "legacy.out.json")
    ctx.run(["-q", "-f", "-o", "json", path, js], check_rc=0)
    if os.path.exists(js):
        ev = json.load(open(js))["traceEvents"]
        be = sorted((e["ph"], e["name"], int(e["id2"]["local"], 16)) for e in ev if e["ph"] in "be")
        ctx.eq(be, sorted(("b" if k == "S" else "e", n, c) for k, _, n, _, c in want if k in "SF"),
               "-o json: the S/F slices as b/e, each cookie in id2.local")
        ctx.eq(sorted(e["name"] for e in ev if e["ph"] == "i"), sorted(n for k, _, n, _, _ in want if k == "I"),
               "-o json: steps, n and R as instants")


def main():
    ctx = tclib.Ctx()
    round_trip(ctx)
    hand_written(ctx)
    bad_json(ctx)
    streamed(ctx)
    counter_args(ctx)
    sort_edges(ctx)
    legacy_async(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
