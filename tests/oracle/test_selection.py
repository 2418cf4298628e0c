#!/usr/bin/env python3
"""The selection (--thread, --since/--until, --focus, --ignore, --ignore-idle) through
every writer, against a model computed here from the trace this test writes, never
from traceconv's output.

1. A seeded random ART v3 dual-clock trace (seed printed; TC_SELECTION_SEED=N replays
   one): a main thread whose tid is the pid (named "main" or, as on Linux, after the
   process), threads whose names have spaces, nested calls with random wall and
   thread-CPU durations in µs, recursion, methods in several packages including the
   idle waits of --ignore-idle, frames open when tracing began and at the end.
2. The model applies a selection to the trace's frames (doc/formats.md, "Conversion rules" for
   the repairs; the issue's rules for the selection) and gives, per thread and call
   path, the self time of the call tree (folded, pprof) and of the timeline (JSON,
   speedscope), wall and CPU: a window clips each frame to [since, until), its CPU time
   at a boundary that of the thread's last record before it; an ignored method's paths
   are removed (the tree's callers lose their time, the timeline keeps a gap); a
   focused method keeps only the paths through it, from its outermost frame. For
   several random selections: folded (wall and --weight cpu), pprof through
   `go tool pprof -raw`, the JSON's slices (every B/E pair, wall and tts, rebuilt here)
   and speedscope's evented profiles equal the model; perfetto (protoc) has the JSON's
   timeline; systrace, report (CSV: calls and times per method), flamegraph (the frames
   flamegraph.pl draws from our folded), dot and ir show the selected threads only.
3. Windows add up: random a < b < c, folded [a,b) + [b,c) == [a,c) per stack, wall and
   CPU, on generated traces and on the corpus (ART µs traces at µs boundaries; Rhea and
   systrace inputs, whose clocks are ns, at ns boundaries: exact in ns, so compared
   through pprof's ns values, the folded µs being rounded per line).
4. Errors: a thread naming nothing, --since past the end: exit 1 and one line naming the
   option; --until <= --since, bad durations, a --focus or --ignore that matches no method:
   exit 2 (the latter one line listing the method names the model finds closest).
   Method patterns as people type them (doc/cli.md, "Selection"): `onCreate`, `Object.wait`,
   a glob on pkg.Class.method, a signature or not; the model reads them from the doc/diff-and-reports.md's
   rules (method_matches), the random selections draw them too.
5. batch and diff take the selection: their outputs equal the single conversions'.
"""
import collections
import csv
import fnmatch
import json
import os
import random
import re
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import reportlib as rl  # noqa: E402
import tclib  # noqa: E402
import test_flamegraph  # noqa: E402  (our SVG's frames, flamegraph.pl's)
import test_perfetto  # noqa: E402  (protoc decoding of perfetto traces)

# ---- the trace ----------------------------------------------------------------

# (class, method, signature): several packages, idle waits, recursion, an overload
METHODS = [
    ("com.example.app.MainActivity", "onCreate", "(Landroid/os/Bundle;)V"),
    ("com.example.app.Worker", "run", "()V"),
    ("com.example.app.Worker", "step", "(I)I"),
    ("com.example.app.Parser", "parse", "(Ljava/lang/String;)V"),
    ("com.example.app.Parser", "parse", "(I)V"),
    ("com.example.app.Fib", "fib", "(I)I"),
    ("androidx.recyclerview.widget.RecyclerView", "onLayout", "(ZIIII)V"),
    ("android.os.Handler", "dispatchMessage", "(Landroid/os/Message;)V"),
    ("android.os.Looper", "loop", "()V"),
    ("android.os.MessageQueue", "nativePollOnce", "(JI)V"),
    ("java.util.concurrent.LinkedBlockingQueue", "take", "()Ljava/lang/Object;"),
    ("java.util.concurrent.ThreadPoolExecutor", "getTask", "()Ljava/lang/Runnable;"),
    ("java.lang.Object", "wait", "()V"),
    ("java.lang.String", "hashCode", "()I"),
    ("kotlin.collections.CollectionsKt", "sorted", "(Ljava/lang/Iterable;)Ljava/util/List;"),
    ("okhttp3.internal.Util", "closeQuietly", "(Ljava/io/Closeable;)V"),
]
SHORT = [f"{c}.{m}" for c, m, _ in METHODS]
FULL = [f"{c}.{m}: {s}" for c, m, s in METHODS]
FIB = SHORT.index("com.example.app.Fib.fib")
# the --ignore-idle list (select.c's idle_waits, doc/cli.md, "Selection"), as the issue names them
IDLE_GLOBS = ["android.os.MessageQueue.nativePollOnce", "java.lang.Object.wait", "java.lang.Thread.sleep",
              "android.os.SystemClock.sleep", "java.lang.VMThread.sleep", "sun.misc.Unsafe.park",
              "jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park*",
              "java.util.concurrent.*BlockingQueue.take", "java.util.concurrent.*BlockingDeque.take*",
              "java.util.concurrent.SynchronousQueue.take", "java.util.concurrent.DelayQueue.take",
              "java.lang.Thread.parkFor$"]
IDLE = {SHORT.index("android.os.MessageQueue.nativePollOnce"),
        SHORT.index("java.util.concurrent.LinkedBlockingQueue.take"), SHORT.index("java.lang.Object.wait")}
OTHER_NAMES = ["RenderThread", "pool-2-thread-1", "OkHttp Dispatcher", "Binder:4242_2", "Signal Catcher",
               "async task 7", "pool-2-thread-2"]


class Trace:
    """What the test wrote: per thread its normalized frames, as doc/formats.md's conversion rules make
    them (frames open before tracing begin at the start with CPU 0; frames open at the end end
    at the trace's end with the thread's last CPU time)."""

    def __init__(self, rng, path):
        self.pid = rng.randrange(1000, 30000)
        self.threads = []  # (tid, name)
        main_name = rng.choice(["main", "com.example.app"])
        tids = rng.sample(range(30001, 60000), rng.randint(3, 5))
        self.threads.append((self.pid, main_name))
        for tid, name in zip(tids, rng.sample(OTHER_NAMES, len(tids))):
            self.threads.append((tid, name))
        self.start_us = rng.randrange(10 ** 9, 10 ** 11)
        records = []         # (wall µs, order, tid, method, action, cpu µs)
        self.frames = {}     # tid -> [frame]: dict(m, depth, s, e, cs, ce, parent index)
        self.records = {}    # tid -> [(wall µs, cpu µs)] in order, synthetic ones included
        last_wall = 0
        for tid, _ in self.threads:
            recs, frames = self._thread(rng, tid)
            records += recs
            self.frames[tid] = frames
            last_wall = max(last_wall, max((r[0] for r in recs), default=0))
        elapsed = last_wall + rng.choice([0, 0, rng.randint(1, 300)])
        self.end_us = max(last_wall, elapsed)
        for tid, frames in self.frames.items():  # frames open at the end close there
            last_cpu = self.records[tid][-1][1]
            for f in frames:
                if f["e"] is None:
                    f["e"], f["ce"] = self.end_us, last_cpu
            if any(f.get("closed_at_end") for f in frames):
                self.records[tid].append((self.end_us, last_cpu))
        records.sort(key=lambda r: (r[0], r[1]))
        key = ("*version\n3\ndata-file-overflow=false\nclock=dual\n"
               f"elapsed-time-usec={elapsed}\nnum-method-calls={len(records)}\nclock-call-overhead-nsec=0\n"
               f"vm=art\npid={self.pid}\n*threads\n"
               + "".join(f"{tid}\t{name}\n" for tid, name in self.threads) + "*methods\n"
               + "".join(f"0x{4 * (i + 1):x}\t{c}\t{m}\t{s}\t{c.rsplit('.', 1)[1]}.java\n"
                         for i, (c, m, s) in enumerate(METHODS)) + "*end\n")
        hdr = b"SLOW" + struct.pack("<HHQH", 3, 32, self.start_us, 14)
        hdr += b"\0" * (32 - len(hdr))
        body = b"".join(struct.pack("<HIII", tid, 4 * (m + 1) | act, cpu, wall)
                        for wall, _, tid, m, act, cpu in records)
        with open(path, "wb") as f:
            f.write(key.encode() + hdr + body)
        self.length_us = self.end_us

    def some_time(self, rng, lo, hi):
        """The time of a record in [lo, hi) µs, or any time there when none is."""
        times = [w for r in self.records.values() for w, _ in r if lo <= w < hi]
        return rng.choice(times) if times else rng.randrange(lo, max(hi, lo + 1))

    def cpu_step_time(self, rng):
        """The time of a record whose CPU time is past its thread's record before it: a --since
        there must take the CPU time of that earlier record (not this one's) for the frames
        open across it, and keep the record itself (>=, not >)."""
        times = [r[i][0] for r in self.records.values() for i in range(1, len(r))
                 if r[i][1] > r[i - 1][1] and 0 < r[i][0] < self.length_us]
        return rng.choice(times) if times else self.length_us // 2

    def _thread(self, rng, tid):
        """One thread's records and frames: random nesting, µs times, CPU <= wall."""
        recs, frames, stack, seen = [], [], [], []
        wall = rng.randint(0, 400)
        cpu = rng.randint(0, 2000)
        order = [0]

        def record(m, act):
            recs.append((wall, (tid, order[0]), tid, m, act, cpu))
            seen.append((wall, cpu))
            order[0] += 1

        # frames already open when tracing began: their exits come first (outermost last)
        pre = rng.sample(range(len(METHODS)), rng.choice([0, 0, 1, 2]))
        for m in pre:
            frames.append(dict(m=m, depth=None, s=0, e=None, cs=0, ce=None, parent=None))
        for idx in range(len(pre)):  # pre[0] is the innermost, each inside the next
            frames[idx]["depth"] = len(pre) - 1 - idx
            frames[idx]["parent"] = idx + 1 if idx + 1 < len(pre) else None
        self.records[tid] = []
        if pre:
            self.records[tid].append((0, 0))  # the reconstructed enters: at the start, CPU 0
        pending_pre = list(range(len(pre)))  # exits to write, innermost first
        n = rng.randint(30, 90)
        for _ in range(n):
            step = rng.choice([0, rng.randint(1, 40), rng.randint(1, 400)])
            wall += step
            cpu += rng.randint(0, step)
            if pending_pre and not stack and rng.random() < 0.3:
                idx = pending_pre.pop(0)
                frames[idx]["e"], frames[idx]["ce"] = wall, cpu
                record(frames[idx]["m"], 1)
                continue
            top = frames[stack[-1]]["m"] if stack else None
            if stack and (len(stack) >= 8 or rng.random() < 0.42) and not (top == FIB and rng.random() < 0.3):
                f = frames[stack.pop()]
                f["e"], f["ce"] = wall, cpu
                record(f["m"], 1)
                continue
            m = FIB if top == FIB and rng.random() < 0.6 else rng.randrange(len(METHODS))
            depth = len(pending_pre) + len(stack)
            parent = stack[-1] if stack else (pending_pre[0] if pending_pre else None)
            frames.append(dict(m=m, depth=depth, s=wall, e=None, cs=cpu, ce=None, parent=parent))
            stack.append(len(frames) - 1)
            record(m, 0)
            if m in IDLE:  # a wait: long in wall time, little CPU
                wall += rng.randint(50, 2000)
        # a frame open since before tracing and never exited left no trace: gone (the outermost)
        gone = set(pending_pre)
        index = {}
        for i, f in enumerate(frames):
            if i not in gone:
                index[i] = len(index)
        kept = []
        for i, f in enumerate(frames):
            if i in gone:
                continue
            f["parent"] = index.get(f["parent"]) if f["parent"] is not None else None
            f["depth"] -= len(gone)
            if f["e"] is None:
                f["closed_at_end"] = True
            kept.append(f)
        if gone and len(gone) == len(pre):
            self.records[tid] = []  # no reconstructed enter at the start
        self.records[tid] += seen
        return recs, kept


# ---- the model of a selection ---------------------------------------------------------

INF = float("inf")


class Sel:
    """A selection: the options as given to traceconv, and what they mean to the model."""

    def __init__(self, threads=(), since=None, until=None, focus=(), ignore=(), idle=False):
        self.threads, self.since, self.until = list(threads), since, until
        self.focus, self.ignore, self.idle = list(focus), list(ignore), idle

    def args(self):
        out = []
        for t in self.threads:
            out += ["--thread", t]
        if self.since is not None:
            out += ["--since", f"{self.since}us"]
        if self.until is not None:
            out += ["--until", f"{self.until}us"]
        for g in self.focus:
            out += ["--focus", g]
        for g in self.ignore:
            out += ["--ignore", g]
        return out + (["--ignore-idle"] if self.idle else [])

    def __str__(self):
        return " ".join(a if " " not in a else repr(a) for a in self.args()) or "(none)"


def method_matches(m, glob):
    """doc/cli.md, "Selection": a glob (POSIX fnmatch, no flags) on pkg.Class.method or on the full
    name with its signature; without a '.' in its name part, on the method's own name (with or
    without the signature); with one, on the name from a package boundary (after a '.'). A
    pattern with a signature ("(" in it; "m(I)V" is "m: (I)V") matches full names only."""
    if "(" in glob and ": (" not in glob:
        glob = glob.replace("(", ": (", 1)
    name_part = re.split(r"[:(]", glob, maxsplit=1)[0]
    sig = "(" in glob
    cls, meth, signature = METHODS[m]
    names = [FULL[m]] if sig else [SHORT[m], FULL[m]]
    if any(fnmatch.fnmatchcase(n, glob) for n in names):
        return True
    if "." not in name_part:
        own = [f"{meth}: {signature}"] if sig else [meth, f"{meth}: {signature}"]
        return any(fnmatch.fnmatchcase(n, glob) for n in own)
    parts = cls.split(".")
    for k in range(1, len(parts) + 1):  # "Class.method", "pkg.Class.method", ... (the whole is above)
        tail = ".".join(parts[k:] + [meth]) if k < len(parts) else meth
        cands = [f"{tail}: {signature}"] if sig else [tail, f"{tail}: {signature}"]
        if any(fnmatch.fnmatchcase(n, glob) for n in cands):
            return True
    return False


def thread_kept(trace, tid, name, sel):
    if not sel.threads:
        return True
    for spec in sel.threads:
        if spec == "main" and (tid == trace.pid or name == "main"):
            return True
        if spec.isdigit() and int(spec) == tid:
            return True
        if fnmatch.fnmatchcase(name, spec):
            return True
    return False


def cpu_before(records, b):
    """The thread's CPU time at boundary b: that of its last record strictly before b."""
    cpu = None
    for wall, c in records:
        if wall >= b:
            break
        cpu = c
    return cpu


def model(trace, sel):
    """{tid: [kept frame]}: each a dict with path (short names from the thread's root, or from
    the outermost focused frame), full name, clipped s, e, cs, ce (µs), and the self times of
    the call tree (tree_w, tree_c) and of the timeline (tl_w, tl_c)."""
    ignored = {m for m in range(len(METHODS)) if any(method_matches(m, g) for g in sel.ignore)}
    if sel.idle:
        ignored |= {m for m in range(len(METHODS)) if any(method_matches(m, g) for g in IDLE_GLOBS)}
    focused = {m for m in range(len(METHODS)) if any(method_matches(m, g) for g in sel.focus)}
    a = sel.since if sel.since else -INF  # --since 0: nothing before the start to clip
    b = sel.until if sel.until is not None else INF
    out = {}
    for tid, name in trace.threads:
        if not thread_kept(trace, tid, name, sel):
            continue
        frames = trace.frames[tid]
        cpu_a = cpu_before(trace.records[tid], a)
        cpu_b = cpu_before(trace.records[tid], b)
        clipped = []
        for f in frames:
            if not (f["s"] < b and f["e"] >= a):
                clipped.append(None)
                continue
            s, cs = (a, cpu_a) if f["s"] < a else (f["s"], f["cs"])
            e, ce = (b, cpu_b) if f["e"] >= b else (f["e"], f["ce"])
            clipped.append(dict(m=f["m"], parent=f["parent"], s=s, e=e, cs=cs, ce=ce))
        for c in clipped:
            if c is not None and c["parent"] is not None:
                c["parent_frame"] = clipped[c["parent"]]
        kept = []
        for i, c in enumerate(clipped):
            if c is None:
                continue
            chain, p = [], i  # self and its ancestors, innermost first
            while p is not None:
                chain.append(p)
                p = frames[p]["parent"]
            chain.reverse()
            ms = [frames[k]["m"] for k in chain]
            if any(m in ignored for m in ms):
                c["gone"] = True
                continue
            if focused:
                first = next((k for k, m in enumerate(ms) if m in focused), None)
                if first is None:
                    c["gone"] = True
                    continue
                ms = ms[first:]
            c["path"] = tuple(SHORT[m] for m in ms)
            c["full"] = FULL[c["m"]]
            c["depth"] = len(ms) - 1
            kept.append(c)
        # self times: the tree's lose every child's time (ignored children's too: pprof's
        # -ignore takes their lines out, the caller's own lines stay); the timeline's keep a
        # gap where a removed child was
        for c in kept:
            c["tree_w"], c["tree_c"] = c["e"] - c["s"], c["ce"] - c["cs"]
            c["tl_w"], c["tl_c"] = c["tree_w"], c["tree_c"]
        for i, c in enumerate(clipped):
            if c is None or c["parent"] is None:
                continue
            p = clipped[c["parent"]]
            if p is None or p.get("gone"):
                continue
            p["tree_w"] -= c["e"] - c["s"]
            p["tree_c"] -= c["ce"] - c["cs"]
            if not c.get("gone"):
                p["tl_w"] -= c["e"] - c["s"]
                p["tl_c"] -= c["ce"] - c["cs"]
        out[tid] = kept
    return out


def model_folded(trace, kept, clock="w", tree=True):
    """{'name-tid;a;b': self µs} as folded writes them (lines of weight 0 left out)."""
    names = dict(trace.threads)
    out = collections.Counter()
    for tid, frames in kept.items():
        for c in frames:
            out[";".join((f"{names[tid]}-{tid}",) + c["path"])] += c[("tree_" if tree else "tl_") + clock]
    return {k: v for k, v in out.items() if v}


def model_slices(kept):
    """{tid: Counter((full name, s, e, cs, ce))}: every slice a timeline shows."""
    return {tid: collections.Counter((c["full"], c["s"], c["e"], c["cs"], c["ce"]) for c in frames)
            for tid, frames in kept.items() if frames}


# ---- what traceconv wrote, read back ---------------------------------------------------

def read_folded_text(path):
    out = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            out[stack] += int(count)
    return dict(out)


def json_slices(path):
    """{tid: Counter((name, s, e, cs, ce))} in µs from the JSON's B/E pairs and X events."""
    with open(path, "rb") as f:
        doc = json.load(f)
    us = lambda v: round(float(v) * 1000) / 1000  # noqa: E731  (ts: µs with ns as 3 decimals)
    out, stacks = {}, {}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "B":
            stacks.setdefault(e["tid"], []).append(e)
        elif ph == "E":
            b = stacks[e["tid"]].pop()
            out.setdefault(e["tid"], collections.Counter())[
                (b["name"], us(b["ts"]), us(e["ts"]), us(b.get("tts", -1)), us(e.get("tts", -1)))] += 1
        elif ph == "X":
            out.setdefault(e["tid"], collections.Counter())[
                (e["name"], us(e["ts"]), us(e["ts"]) + us(e["dur"]), us(e.get("tts", -1)),
                 us(e.get("tts", -1)) + us(e.get("tdur", 0)))] += 1
    return out, doc


def pprof_paths(ctx, env, path):
    """{(tid, 'a;b'): (wall ns, cpu ns)} read by go tool pprof -raw (the oracle)."""
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", path], env=env)
    if r is None or not ctx.check(r.returncode == 0, f"go tool pprof -raw {path}: {r.stderr.decode(errors='replace')}"):
        return None
    _, samples, locs = tclib.pprof_raw(r.stdout.decode(errors="replace"))
    out = collections.defaultdict(lambda: [0, 0])
    for wall, cpu, ids, labels in samples:
        v = out[(int(labels.get("tid", -1)), ";".join(locs[i].split(": ")[0] for i in reversed(ids)))]
        v[0] += wall
        v[1] += cpu or 0
    return {k: tuple(v) for k, v in out.items() if v != [0, 0]}


def speedscope_paths(path):
    """{(tid, 'a;b'): self time in the profile's unit} from the evented profiles, rebuilt here."""
    with open(path, "rb") as f:
        doc = json.load(f)
    names = [fr["name"].split(": ")[0] for fr in doc["shared"]["frames"]]
    out = collections.Counter()
    for p in doc["profiles"]:
        m = re.search(r"\(tid (\d+)\)", p["name"])
        tid = int(m.group(1)) if m else p["name"]
        stack, last = [], None
        for e in p["events"]:
            if stack and e["at"] > last:
                out[(tid, ";".join(names[f] for f in stack))] += e["at"] - last
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
            else:
                stack.pop()
        if p["type"] != "evented":
            out[(tid, "?sampled")] += 1
    return {k: v for k, v in out.items() if v}, doc


def by_tid(folded):
    """'name-tid;a;b' -> (tid, 'a;b')."""
    out = {}
    for k, v in folded.items():
        root, _, rest = k.partition(";")
        out[(int(root.rpartition("-")[2]), rest)] = v
    return out


def diff_text(got, want, limit=4):
    keys = sorted(set(got) | set(want), key=str)
    bad = [(k, got.get(k), want.get(k)) for k in keys if got.get(k) != want.get(k)]
    return f"{len(bad)} differ, e.g. " + "; ".join(f"{k}: got {g}, want {w}" for k, g, w in bad[:limit])


class Runner:
    def __init__(self, ctx, env):
        self.ctx, self.env = ctx, env

    def out(self, tag, ext):
        return os.path.join(self.ctx.work, f"{tag}.{ext}")

    def conv(self, src, fmt, sel, tag, extra=()):
        """traceconv -o fmt with the selection; the output path or None (and a failure)."""
        out = self.out(tag, tclib.WRITER_EXT.get(fmt, fmt))
        r = self.ctx.run(["-q", "-f", "-o", fmt, *sel.args(), *extra, src, out])
        if not self.ctx.check(r.returncode == 0, f"{tag}: -o {fmt} {sel}: exit {r.returncode}: "
                                                 f"{r.stderr.decode(errors='replace').strip()[-300:]}"):
            return None
        return out

    def eq(self, got, want, what):
        if got == want:
            self.ctx.check(True, "")
            return True
        self.ctx.fail(f"{what}: {diff_text(got, want) if isinstance(got, dict) and isinstance(want, dict) else (got, want)}")
        return False


def check_selection(run, trace, src, sel, tag, every_writer):
    """Folded (wall, cpu), pprof, JSON and speedscope against the model; the other writers'
    thread sets when every_writer."""
    ctx = run.ctx
    kept = model(trace, sel)
    label = f"{tag} [{sel}]"
    for clock, extra in (("w", ()), ("c", ("--weight", "cpu"))):
        out = run.conv(src, "folded", sel, f"{tag}-{clock}", extra)
        if out:
            run.eq(read_folded_text(out), model_folded(trace, kept, clock), f"{label}: folded {extra or 'wall'}")
    out = run.conv(src, "pprof", sel, tag)
    if out:
        wall, cpu = by_tid(model_folded(trace, kept, "w")), by_tid(model_folded(trace, kept, "c"))
        want = {k: (wall.get(k, 0) * 1000, cpu.get(k, 0) * 1000) for k in set(wall) | set(cpu)}
        got = pprof_paths(ctx, run.env, out)
        if got is not None:
            run.eq(got, want, f"{label}: pprof (go tool pprof -raw) samples per thread and path, wall and cpu ns")
    out = run.conv(src, "json", sel, tag)
    json_path = out
    if out:
        got, doc = json_slices(out)
        run.eq(got, model_slices(kept), f"{label}: json slices (name, ts, end, tts, end tts) per thread")
        start = int(doc["otherData"]["start_time_ns"])
        ctx.eq(start, trace.start_us * 1000, f"{label}: json start_time_ns: the trace start is unchanged")
    for clock, extra in (("w", ()), ("c", ("--weight", "cpu"))):
        out = run.conv(src, "speedscope", sel, f"{tag}-{clock}", extra)
        if out:
            got, _ = speedscope_paths(out)
            want = by_tid(model_folded(trace, kept, clock, tree=False))
            run.eq(got, want, f"{label}: speedscope {extra or 'wall'}: self time per thread and path")
    if every_writer:
        check_other_writers(run, trace, src, sel, tag, kept, json_path)
    return kept


def model_report(trace, kept):
    """{'all' or tid: {label: (calls, incl wall, excl wall, incl cpu, excl cpu)}} as doc/diff-and-reports.md's
    profile accounting defines them, on the call tree the selection leaves (a focused
    path's stack starts at its focused frame; an ignored call's time is out of its callers')."""
    out = {}
    for tid, frames in kept.items():
        by_id = {id(c): c for c in frames}
        for c in frames:
            c["tree_dw"], c["tree_dc"] = c["tree_w"], c["tree_c"]
        for c in sorted(frames, key=lambda c: -c["depth"]):  # children before their parents
            p = c.get("parent_frame")
            if p is not None and id(p) in by_id:
                p["tree_dw"] += c["tree_dw"]
                p["tree_dc"] += c["tree_dc"]
        rows = {}
        for c in frames:
            label = f"{SHORT[c['m']]} {METHODS[c['m']][2]}"
            r = rows.setdefault(label, [0, 0, 0, 0, 0])
            outermost = not any(a["m"] == c["m"] for a in ancestors(c))
            r[0] += 1
            if outermost:
                r[1] += c["tree_dw"]
                r[3] += c["tree_dc"]
            r[2] += c["tree_w"]
            r[4] += c["tree_c"]
        if rows:
            out[tid] = {k: tuple(v) for k, v in rows.items()}
            for k, v in rows.items():
                a = out.setdefault("all", {}).get(k, (0, 0, 0, 0, 0))
                out["all"][k] = tuple(x + y for x, y in zip(a, v))
    return out


def ancestors(c):
    p = c.get("parent_frame")
    while p is not None and not p.get("gone") and "path" in p:
        yield p
        p = p.get("parent_frame")


def check_other_writers(run, trace, src, sel, tag, kept, json_path):
    """perfetto, systrace, report, flamegraph, dot, ir and diff with the selection."""
    ctx = run.ctx
    label = f"{tag} [{sel}]"
    selected = {t for t, n in trace.threads if thread_kept(trace, t, n, sel)}
    with_frames = {t for t, f in kept.items() if f}
    out = run.conv(src, "perfetto", sel, tag)
    if out and json_path:
        packets = test_perfetto.decode(ctx, out)
        if packets is not None:
            d = test_perfetto.check_packets(ctx, label, packets, True)
            test_perfetto.check_timeline(ctx, label, d, json_path)
            ctx.eq(set(d.timeline), with_frames, f"{label}: perfetto: the threads with slices")
    out = run.conv(src, "systrace", sel, tag)
    if out:
        with open(out, encoding="utf-8") as f:
            tids = {int(t) for t in re.findall(r"-(\d+) +\( *\d+\) \[\d+\].*tracing_mark_write", f.read())}
        ctx.eq(tids, with_frames, f"{label}: systrace: the threads with slices")
    out = run.conv(src, "report-csv", sel, tag)
    if out:
        _, rows = rl.read_csv(out)
        got = {}
        for r in rows:
            key = "all" if r["thread"] == "all" and r["tid"] == "" else int(r["tid"])
            got.setdefault(key, {})[r["method"]] = (r["calls"], r["incl_wall_us"], r["excl_wall_us"],
                                                    r["incl_cpu_us"], r["excl_cpu_us"])
        run.eq(got, model_report(trace, kept), f"{label}: report CSV (calls, incl/excl wall/cpu per method and thread)")
        ctx.check(set(got) - {"all"} <= selected, f"{label}: report: threads {sorted(set(got) - {'all'})} "
                                                 f"not all selected ({sorted(selected)})")
    folded = run.out(f"{tag}-w", "folded")
    out = run.conv(src, "flamegraph", sel, tag)
    if out and os.path.exists(folded):
        _, ours = test_flamegraph.our_frames(ctx, label, out)
        # our towers' order (main first), which flamegraph.pl is given: it sorts them by name
        order = test_flamegraph.tower_order(ctx, src, sel.args())
        theirs = test_flamegraph.run_flamegraph_pl(ctx, folded, [], order=order)
        if ours is not None and theirs is not None:
            if theirs == [] or not ours:
                ctx.eq(len(ours), len(theirs), f"{label}: flamegraph: frames of an empty selection")
            else:
                test_flamegraph.compare(ctx, f"{label}: flamegraph vs flamegraph.pl on our folded", ours, theirs)
    out = run.conv(src, "dot", sel, tag)
    if out:
        with open(out, encoding="utf-8") as f:
            names = set(re.findall(r'label="([^\\"]+) \(', f.read()))
        allowed = {f"{SHORT[c['m']]}" for fr in kept.values() for c in fr}
        ctx.check(names <= allowed, f"{label}: dot: methods outside the selection: {sorted(names - allowed)[:3]}")
    out = run.conv(src, "ir", sel, tag)
    if out:
        with open(out, encoding="utf-8") as f:
            text = f.read()
        index = {int(i): int(t) for i, t in re.findall(r"^thread (\d+) tid=(\d+) records=[1-9]", text, re.M)}
        ctx.check(set(index.values()) <= selected, f"{label}: ir: threads with records {sorted(index.values())} "
                                                   f"not all selected ({sorted(selected)})")
        got = collections.Counter()  # enters and exits: method, depth (from the focused frame), µs
        for kind, t, m, d, ts, cpu in re.findall(r"^([BE]) t=(\d+) m=(\d+) d=(\d+) ts=(-?\d+) cpu=(-?\d+)", text, re.M):
            got[(index.get(int(t), -1), kind, int(m), int(d), int(ts) / 1000, int(cpu) / 1000)] += 1
        want = collections.Counter()
        for tid, frames in kept.items():
            for c in frames:
                want[(tid, "B", c["m"], c["depth"], c["s"], c["cs"])] += 1
                want[(tid, "E", c["m"], c["depth"], c["e"], c["ce"])] += 1
        run.eq(dict(got), dict(want), f"{label}: ir: every enter and exit (thread, method, depth, ts, cpu)")





# ---- windows add up -------------------------------------------------------------------

def add(a, b):
    out = collections.Counter(a)
    out.update(b)
    return {k: v for k, v in out.items() if v}


def check_additive(run, src, label, a, b, c, unit="us", pprof=False):
    """folded [a,b) + [b,c) == [a,c) per stack, wall and cpu (pprof's ns values when pprof)."""
    ctx = run.ctx
    for clock, extra in (("wall", ()), ("cpu", ("--weight", "cpu"))):
        if pprof and clock == "cpu":
            continue
        parts = []
        for lo, hi in ((a, b), (b, c), (a, c)):
            sel = Sel(since=lo, until=hi)
            args = ["--since", f"{lo}{unit}", "--until", f"{hi}{unit}"]
            fmt, ext = ("pprof", "pb.gz") if pprof else ("folded", "folded")
            out = os.path.join(ctx.work, f"{label.replace('/', '_')}-{lo}-{hi}-{clock}.{ext}")
            r = ctx.run(["-q", "-f", "-o", fmt, *args, *extra, src, out])
            if clock == "cpu" and b"no thread-CPU clock" in r.stderr:
                return  # a wall-only input (v2-wall.trace)
            if not ctx.check(r.returncode == 0, f"{label}: {sel} {fmt}: {r.stderr.decode(errors='replace')[-300:]}"):
                return
            if pprof:
                got = pprof_paths(ctx, run.env, out)
                parts.append({k: v for k, v in (got or {}).items()})
            else:
                parts.append(read_folded_text(out))
        if pprof:
            lo_hi = add({k: v[0] for k, v in parts[0].items()}, {k: v[0] for k, v in parts[1].items()})
            whole = {k: v[0] for k, v in parts[2].items() if v[0]}
            lo_hi_c = add({k: v[1] for k, v in parts[0].items()}, {k: v[1] for k, v in parts[1].items()})
            whole_c = {k: v[1] for k, v in parts[2].items() if v[1]}
            run.eq(lo_hi, whole, f"{label}: pprof wall ns of [{a},{b}){unit} + [{b},{c}){unit} vs [{a},{c}){unit}")
            run.eq(lo_hi_c, whole_c, f"{label}: pprof cpu ns of [{a},{b}){unit} + [{b},{c}){unit} vs [{a},{c}){unit}")
        else:
            run.eq(add(parts[0], parts[1]), parts[2],
                   f"{label}: folded {clock} [{a},{b}){unit} + [{b},{c}){unit} vs [{a},{c}){unit}")


def corpus_length(ctx, src):
    """The trace's length in ns, from the JSON's start and its last event (nothing selected)."""
    out = os.path.join(ctx.work, os.path.basename(src) + ".len.json")
    r = ctx.run(["-q", "-f", "-o", "ir", src, out])
    if r.returncode:
        return None
    with open(out, encoding="utf-8") as f:
        m = re.search(r"start_ns=(-?\d+) end_ns=(-?\d+)", f.read())
    return int(m.group(2)) - int(m.group(1)) if m else None


def check_corpus_additivity(run, rng):
    """The repository's corpus: ART traces (µs clocks) at µs boundaries through folded; Rhea and
    systrace (ns clocks) at ns boundaries through pprof's exact ns (folded rounds each line
    to µs, so its sums may differ by the rounding of the lines, never in ns)."""
    ctx = run.ctx
    arts = sorted(f for f in os.listdir(ctx.corpus) if f.endswith(".trace"))
    picks = [(os.path.join(ctx.corpus, f), "us", False) for f in rng.sample(arts, min(3, len(arts)))]
    for sub in ("rhea", "systrace"):
        ins = [p for _, p, _ in ctx.corpus_inputs(sub)]
        picks += [(p, "ns", True) for p in rng.sample(ins, min(2, len(ins)))]
    checked = 0
    for src, unit, pprof in picks:
        ns = corpus_length(ctx, src)
        n = (ns or 0) // 1000 if unit == "us" else (ns or 0)
        if n < 3:  # no calls over time (sched-only.txt): no window to cut
            continue
        checked += 1
        a, b, c = sorted(rng.sample(range(n), 3))
        label = os.path.relpath(src, ctx.corpus)
        check_additive(run, src, label, a, b, c + 1 if rng.random() < 0.5 else n + 7, unit, pprof)
    ctx.check(checked >= 4, f"corpus windows: only {checked} inputs with a length")


# ---- errors ---------------------------------------------------------------------------

def check_errors(run, trace, src):
    ctx = run.ctx
    out = os.path.join(ctx.work, "err.folded")
    cases = [
        (["--thread", "no such thread*"], 1, "--thread"),
        (["--thread", "main", "--thread", "99999"], 1, "--thread"),
        (["--focus", "com.nowhere.*"], 2, "--focus"),
        (["--ignore", "com.nowhere.*"], 2, "--ignore"),
        (["--focus", "bject.wait"], 2, "--focus"),   # not at a package boundary
        (["--ignore", "Objct.wait"], 2, "--ignore"),  # a typo
        (["--focus", "onCreat"], 2, "--focus"),
        (["--focus", "fib", "--focus", "nowhere"], 2, "--focus"),  # each pattern must match
        (["--focus", "onCreate: ()V"], 2, "--focus"),  # a signature the method does not have
        (["--since", f"{trace.length_us}us"], 1, "--since"),
        (["--since", f"{trace.length_us + 1}us", "--until", f"{trace.length_us + 5}us"], 1, "--since"),
        (["--since", "3ms", "--until", "3ms"], 2, "--until"),
        (["--since", "3ms", "--until", "2999us"], 2, "--until"),
        (["--until", "0us"], 2, "--until"),
        (["--since", "5"], 2, "--since"),
        (["--since", "1.5ns"], 2, "--since"),
        (["--until", "-1ms"], 2, "--until"),
        (["--since", "1.0000000001s"], 2, "--since"),
        (["--until", "ms"], 2, "--until"),
    ]
    for args, rc, names in cases:
        r = ctx.run(["-f", "-o", "folded", *args, src, out])
        err = r.stderr.decode(errors="replace")
        ctx.eq(r.returncode, rc, f"{' '.join(args)}: exit status ({err.strip()[-200:]})")
        lines = err.strip().splitlines()
        if rc == 1:
            ctx.check(len(lines) == 1 and names in lines[0], f"{' '.join(args)}: one line naming {names}: {lines}")
        else:
            ctx.check(lines and (names in err or f"'{names[2:]}'" in err),
                      f"{' '.join(args)}: the usage error names {names}: {lines[:3]}")
        ctx.check(not os.path.exists(out), f"{' '.join(args)}: an output left behind")
        if args[0] in ("--focus", "--ignore"):
            check_closest(ctx, args[-1], err)
    # --thread: the closest thread names come first in its list
    tid, name = max(trace.threads, key=lambda t: (len(t[1]), t[1]))
    typo = name[:2] + name[3] + name[2] + name[4:]  # two letters swapped: one edit
    r = ctx.run(["-f", "-o", "folded", "--thread", typo, src, out])
    listed = r.stderr.decode(errors="replace").split("threads: ", 1)[-1]
    ctx.check(r.returncode == 1 and listed.startswith(f"{name} ({tid})"),
              f"--thread {typo}: {name} listed first: {listed[:80]}")
    # still exact: the window may end past the end, --since 0 is the start
    r = ctx.run(["-q", "-f", "-o", "folded", "--since", "0", "--until", f"{trace.length_us + 100}us", src, out])
    ctx.eq(r.returncode, 0, f"--since 0 --until past the end: {r.stderr.decode(errors='replace').strip()}")
    if r.returncode == 0:
        run.eq(read_folded_text(out), model_folded(trace, model(trace, Sel())), "the whole trace as a window")
        os.unlink(out)


def edit_distance(a, b):
    """Optimal string alignment distance (a swap of neighbours is one edit), case ignored."""
    a, b = a.lower(), b.lower()
    d = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def check_closest(ctx, pattern, err):
    """The error of an unmatched pattern lists close method names: every name it lists is one
    of the trace's that holds what was typed (glob characters and signature left out) or is a
    few edits from it (compared with as many of its last '.'-parts), and the closest such name
    is listed; when none is close, it says so."""
    typed = re.split(r"[:(]", pattern, maxsplit=1)[0].replace("*", "").replace("?", "").strip().lower()
    dots = typed.count(".")

    def close(name):
        part = ".".join(name.split(".")[-(dots + 1):])
        limit = 1 if len(typed) < 6 else len(typed) // 3
        return typed in name.lower() or edit_distance(part, typed) <= limit

    want = [n for n in SHORT if close(n)]
    line = err.strip().splitlines()[-1] if err.strip() else ""
    if not want:
        ctx.check("none of the" in line and "is close" in line, f"{pattern}: no close name, said so: {line[-160:]}")
        return
    listed = line.split("closest: ", 1)[1].split(", ") if "closest: " in line else []
    ctx.check(listed and all(n in want for n in listed), f"{pattern}: names listed are close ones {want}: {listed}")
    exact = [n for n in want if typed in ".".join(n.split(".")[-(dots + 1):]).lower()]
    if exact:
        ctx.check(any(n in listed for n in exact), f"{pattern}: the closest ({exact}) is listed: {listed}")


# ---- batch and diff -------------------------------------------------------------------

def check_diff_patterns(run):
    """diff (issue 36): a pattern may name a method of one input only (the app start has
    MainActivity.onCreate, v3-dual does not): BASE's side is the single conversion's; one that
    names no method of either input is the usage error, one line, with the closest names."""
    ctx = run.ctx
    app, other = (os.path.join(ctx.corpus, f) for f in ("app-startup.trace", "v3-dual.trace"))
    out = os.path.join(ctx.work, "pat.diff.csv")
    r = ctx.run(["diff", "-q", "-f", "-o", "csv", "--focus", "MainActivity.onCreate", app, other, out])
    if ctx.check(r.returncode == 0, f"diff --focus MainActivity.onCreate: exit {r.returncode}: {r.stderr[-300:]!r}"):
        with open(out, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        rep = os.path.join(ctx.work, "pat.report.csv")
        ctx.run(["-q", "-f", "-o", "report-csv", "--focus", "MainActivity.onCreate", app, rep], check_rc=0)
        _, want = rl.read_csv(rep)
        want = {w["method"].split(" (")[0]: str(w["incl_wall_us"]) for w in want if w["thread"] == "all"}
        got = {row["method"]: row["incl_wall_us_base"] for row in rows}
        ctx.eq(got, want, "diff --focus MainActivity.onCreate: BASE's rows are the single conversion's")
        ctx.check(all(row["status"] == "gone" for row in rows), "diff --focus: NEW has none of them")
    r = ctx.run(["diff", "-f", "-o", "csv", "--focus", "MainActivty.onCreate", app, other, out])
    err = r.stderr.decode(errors="replace").strip().splitlines()
    ctx.check(r.returncode == 2 and len(err) == 1 and "of either input" in err[0]
              and "com.example.shop.ui.MainActivity.onCreate" in err[0],
              f"diff --focus MainActivty.onCreate: exit 2, one line with the closest name: {r.returncode} {err}")


def check_batch_and_diff(run, trace, src, other):
    """batch -o folded,json --thread main: each output the bytes of the single conversion's;
    diff --thread main: each side's figures those of the report of that side's selection."""
    ctx = run.ctx
    sel = Sel(threads=["main"], since=trace.length_us // 4)
    indir, outdir = os.path.join(ctx.work, "batch-in"), os.path.join(ctx.work, "batch-out")
    os.makedirs(indir, exist_ok=True)
    for p in (src, other):
        with open(p, "rb") as f, open(os.path.join(indir, os.path.basename(p)), "wb") as g:
            g.write(f.read())
    r = ctx.run(["batch", "-q", "-o", "folded,json", "-O", outdir, *sel.args(), indir])
    if ctx.check(r.returncode == 0, f"batch {sel}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}"):
        for p in (src, other):
            stem = os.path.basename(p)[:-len(".trace")]
            for fmt in ("folded", "json"):
                single = os.path.join(ctx.work, f"single-{stem}.{fmt}")
                r1 = ctx.reference_run(["-q", "-f", "-o", fmt, *sel.args(), p, single])
                got = os.path.join(outdir, "batch-in", f"{stem}.{fmt}")  # under the input folder's name
                if ctx.check(r1.returncode == 0 and os.path.exists(got), f"batch {sel}: {stem}.{fmt} missing"):
                    with open(got, "rb") as f, open(single, "rb") as g:
                        a, b = f.read(), g.read()
                    ctx.check(a == b, f"batch {sel}: {stem}.{fmt} differs from the single conversion's")
    out = os.path.join(ctx.work, "sel.diff.csv")
    r = ctx.run(["diff", "-q", "-f", "-o", "csv", *sel.args(), src, other, out])
    if not ctx.check(r.returncode == 0, f"diff {sel}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}"):
        return
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for side, p in (("base", src), ("new", other)):
        rep = os.path.join(ctx.work, f"sel-{side}.csv")
        if ctx.run(["-q", "-f", "-o", "report-csv", *sel.args(), p, rep], check_rc=0).returncode:
            continue
        want, short_count = {}, collections.Counter()
        for row in rl.read_csv(rep)[1]:
            if row["thread"] == "all" and row["tid"] == "":
                short = row["method"].split(" ")[0]
                short_count[short] += 1
                want[short] = (str(row["calls"]), str(row["incl_wall_us"]), str(row["excl_wall_us"]),
                               str(row["incl_cpu_us"]), str(row["excl_cpu_us"]))
        got = {}
        for row in rows:
            short = row["method"].split(": ")[0]  # an overload's row is named with its signature
            if row[f"calls_{side}"] != "" and short_count[short] == 1:
                got[short] = tuple(row[f"{k}_{side}"] for k in ("calls", "incl_wall_us", "excl_wall_us",
                                                                        "incl_cpu_us", "excl_cpu_us"))
        run.eq(got, {k: v for k, v in want.items() if short_count[k] == 1},
               f"diff {sel}: the {side} figures vs the report of that input with the same selection")


# ---- random selections ----------------------------------------------------------------

FOCUS_GLOBS = ["com.example.app.Fib.fib", "*.parse", "com.example.app.Parser.parse: (I)V", "android.os.*",
               "*Worker*", "com.example.app.*", "java.*", "*.dispatchMessage: (Landroid/os/Message;)V",
               # as people type them: a method's name, Class.method, a signature with or without ": "
               "onCreate", "fib", "Parser.parse", "parse(I)V", "Worker.*", "app.Worker.run", "on*",
               "dispatchMessage: (*)V"]
IGNORE_GLOBS = ["*.take", "*Looper.loop*", "com.example.app.Worker.step", "java.lang.String.hashCode",
                "*.parse: (Ljava/lang/String;)V", "kotlin.*", "com.example.app.Fib.fib",
                "Object.wait", "take", "hashCode", "Looper.loop", "LinkedBlockingQueue.take", "step: (I)I"]


def thread_specs(rng, trace):
    tid, name = rng.choice(trace.threads)
    specs = rng.choice([["main"], [str(tid)], [name], [name[:3] + "*"], ["pool-*", str(tid)], ["*Thread*", "main"],
                        [name, "main"]])
    # each spec must name a thread (one that names none is an error, checked apart)
    return [s for s in specs if any(thread_kept(trace, t, n, Sel(threads=[s])) for t, n in trace.threads)]


def random_selection(rng, trace):
    length = trace.length_us
    while True:
        kinds = {k for k in ("thread", "window", "focus", "ignore", "idle") if rng.random() < 0.45}
        if kinds:
            break
    sel = Sel()
    if "thread" in kinds:
        sel.threads = thread_specs(rng, trace)
        if not any(thread_kept(trace, t, n, sel) for t, n in trace.threads):
            sel.threads = ["main"]
    if "window" in kinds:  # boundaries anywhere, or at a record's time (where >= and > differ)
        since = rng.choice([None, 0, rng.randrange(length), trace.some_time(rng, 0, length)])
        lo = since or 0
        until = rng.choice([rng.randint(lo + 1, length + 50), trace.some_time(rng, lo + 1, length + 50)])
        if since is not None and rng.random() < 0.3:
            until = None
        sel.since, sel.until = since, until
    if "focus" in kinds:
        sel.focus = rng.sample(FOCUS_GLOBS, rng.choice([1, 1, 2]))
    if "ignore" in kinds:
        sel.ignore = rng.sample(IGNORE_GLOBS, rng.choice([1, 1, 2]))
    sel.idle = "idle" in kinds
    return sel


def check_random(run, rng, n_traces, n_sels):
    traces = []
    for i in range(n_traces):
        src = os.path.join(run.ctx.work, f"gen{i}.trace")
        trace = Trace(rng, src)
        traces.append((trace, src))
        for j in range(n_sels):
            sel = random_selection(rng, trace)
            check_selection(run, trace, src, sel, f"gen{i}-{j}", every_writer=j < 2)
        since = trace.cpu_step_time(rng)  # and one window that starts at a record's time
        check_selection(run, trace, src, Sel(since=since, until=trace.some_time(rng, since + 1, trace.length_us + 9)),
                        f"gen{i}-at", every_writer=False)
        a, b, c = sorted(rng.sample(range(trace.length_us + 20), 3))
        if rng.random() < 0.5:  # a boundary at a record's time
            b = trace.some_time(rng, a + 1, c)
        check_additive(run, src, f"gen{i}", a, b, c)
        lo_hi = add(model_folded(trace, model(trace, Sel(since=a, until=b))),
                    model_folded(trace, model(trace, Sel(since=b, until=c))))
        run.eq(lo_hi, model_folded(trace, model(trace, Sel(since=a, until=c))), f"gen{i}: the model's windows add up")
    return traces


def main():
    ctx = tclib.Ctx()
    seed = os.environ.get("TC_SELECTION_SEED")
    seed = int(seed) if seed else random.SystemRandom().randrange(1 << 32)
    print(f"seed {seed} (replay: TC_SELECTION_SEED={seed})")
    rng = random.Random(seed)
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    run = Runner(ctx, env)
    traces = check_random(run, rng, 2, 6)
    check_errors(run, *traces[0])
    check_batch_and_diff(run, traces[0][0], traces[0][1], traces[1][1])
    check_diff_patterns(run)
    check_corpus_additivity(run, rng)
    if ctx.failures:
        print(f"seed {seed} (replay: TC_SELECTION_SEED={seed})")
    ctx.done()


if __name__ == "__main__":
    main()
