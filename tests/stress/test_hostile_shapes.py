#!/usr/bin/env python3
"""Timing guard of the bad-input suite: inputs built to be slow convert in
time linear in their size.

Each hostile shape (issue 9) is generated here at size n and 4n, converted
(to folded, json and report; deep stacks, which recurse through 64 methods,
to json, ir, report and dot), and must satisfy
    cpu(4n) <= 6 x max(cpu(n), FLOOR)     -- quadratic code gives ~16x
    wall(each conversion) <= ABS_BOUND    -- a generous absolute bound
and finish with exit 0 or a clean one-line error, never a sanitizer report.
CPU time of the child (getrusage) is measured rather than wall time, so a busy
machine does not make a linear conversion look quadratic.

Sizes are scaled down for a sanitizer build (detected from the executable, or
forced with TC_HOSTILE_SCALE=<factor>), so the suite stays under a minute.
TC_HOSTILE_ONLY=<name>[,<name>] runs only some shapes (and prints timings).
"""
import json
import os
import resource
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

RATIO = 6.0       # allowed cpu(4n) / cpu(n)
FLOOR = 0.3       # seconds: below this, cpu(n) is noise
ABS_BOUND = 30.0  # seconds of wall time for one conversion, whatever the build


# ---- systrace / atrace text ---------------------------------------------------

SYSTRACE_HDR = (b"# tracer: nop\n#\n"
                b"#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
                b"#              | |        |      |   ||||       |         |\n")


def systrace_line(ts_us, payload, tid=42, pid=42):
    return b"  app-%d  (%5d) [000] ...1 %6d.%06d: tracing_mark_write: %s\n" % (
        tid, pid, 100 + ts_us // 1000000, ts_us % 1000000, payload)


def gen_systrace_nul_names(n):
    """n slices that all carry one name with a NUL byte in it."""
    out = [SYSTRACE_HDR]
    for i in range(n):
        out.append(systrace_line(2 * i, b"B|42|a\0b"))
        out.append(systrace_line(2 * i + 1, b"E|42"))
    return b"".join(out)


def gen_systrace_pipes(n):
    """A few lines whose atrace payloads carry n '|' fields (H: the cookie is the last field)."""
    fields = b"|" * n
    out = [SYSTRACE_HDR]
    for i, kind in enumerate(b"BECSFGHN"):
        out.append(systrace_line(i, bytes([kind]) + b"|42|" + fields + b"7"))
    return b"".join(out)


def gen_systrace_tiny(n):
    """n tiny slices: the baseline of linear work."""
    out = [SYSTRACE_HDR]
    for i in range(n):
        out.append(systrace_line(2 * i, b"B|42|s%d" % (i % 50)))
        out.append(systrace_line(2 * i + 1, b"E|42"))
    return b"".join(out)


# ---- Rhea text ------------------------------------------------------------------

RHEA_START = b"512|TRACE_START|948220911000000|18557|2147483647|2|18316\n"


def rhea_line(ts_us, payload, tid=18557):
    return b"%d.%06d %d: %s\n" % (948220 + ts_us // 1000000, 911051 + ts_us % 1000000, tid, payload)


def rhea_end(ts_us):
    return b"513|TRACE_END|%d|18557|2147483647|2|18316\n" % (948220911051000 + ts_us * 1000 + 1000)


def gen_rhea_nul_names(n):
    out = [RHEA_START]
    for i in range(n):
        out.append(rhea_line(2 * i, b"B|18557|B:Cls\0x:run"))
        out.append(rhea_line(2 * i + 1, b"B|18557|E:Cls\0x:run"))
    out.append(rhea_end(2 * n))
    return b"".join(out)


def gen_rhea_deep_stray(n):
    """Method markers n deep, then n ends of methods that are not open."""
    out = [RHEA_START]
    for i in range(n):
        out.append(rhea_line(i, b"B|18557|B:Deep:m%d" % (i % 64)))
    for i in range(n):
        out.append(rhea_line(n + i, b"B|18557|E:Stray:s%d" % (i % 64)))
    out.append(rhea_end(2 * n))
    return b"".join(out)


# ---- Chrome JSON -----------------------------------------------------------------

def gen_json_counter_args(n):
    args = ",".join('"a%d":%d' % (i, i) for i in range(n))
    return ('{"traceEvents":[{"ph":"C","name":"c","pid":1,"tid":1,"ts":0,"args":{%s}},'
            '{"ph":"X","name":"x","pid":1,"tid":1,"ts":1,"dur":1}]}' % args).encode()


def gen_json_tiny(n):
    ev = ",".join('{"ph":"X","name":"n%d","pid":1,"tid":%d,"ts":%d,"dur":1}' % (i % 50, 1 + i % 4, 2 * i)
                  for i in range(n))
    return ('{"traceEvents":[%s]}' % ev).encode()


# ---- ART method trace (v3, dual clock, 14-byte records) ---------------------------

def art_trace(threads, methods, records):
    """threads: [(tid, name)], methods: [(id, cls, name)], records: [(tid, id, action)]."""
    key = ["*version", "3", "data-file-overflow=false", "clock=dual",
           "elapsed-time-usec=%d" % (len(records) + 1), "vm=art", "pid=1", "*threads"]
    key += ["%d\t%s" % t for t in threads]
    key.append("*methods")
    key += ["0x%x\t%s\t%s\t()V\tA.java\t1" % m for m in methods]
    key.append("*end")
    body = bytearray("\n".join(key).encode() + b"\n")
    body += struct.pack("<IHHQH", 0x574F4C53, 3, 32, 1_000_000_000_000, 14) + b"\0" * 14
    rec = struct.Struct("<HIII")
    for i, (tid, mid, action) in enumerate(records):
        body += rec.pack(tid, mid | action, i, i)
    return bytes(body)


def gen_art_threads(n):
    """A thread list of n threads (few records)."""
    threads = [(1 + i, "t%d" % i) for i in range(n)]
    return art_trace(threads, [(4, "A", "run")], [(1, 4, 0), (1, 4, 1)])


def gen_art_deep_stray(n):
    """A stack n deep, then n exits of methods that are not on it."""
    methods = [(4 * (1 + i), "Deep", "m%d" % i) for i in range(64)] + [(4 * 100, "Stray", "x")]
    recs = [(1, 4 * (1 + i % 64), 0) for i in range(n)] + [(1, 400, 1)] * n
    return art_trace([(1, "main")], methods, recs)


def gen_art_tiny(n):
    methods = [(4 * (1 + i), "C", "m%d" % i) for i in range(50)]
    recs = []
    for i in range(n):
        recs.append((1 + i % 4, 4 * (1 + i % 50), 0))
        recs.append((1 + i % 4, 4 * (1 + i % 50), 1))
    return art_trace([(1 + i, "t%d" % i) for i in range(4)], methods, recs)


# ---- the shapes ------------------------------------------------------------------

# Outputs: folded, json and report; a stack n deep is written to json, ir,
# report and dot instead, since a folded (or pprof) file of it is n^2 in size
# by its format: one line per open frame, each with the whole path.
FLAT = ("folded", "json", "report")
DEEP = ("json", "ir", "report", "dot")

# name: (generator, file suffix, n for a release build, extra options, outputs)
SHAPES = {
    "systrace-nul-names": (gen_systrace_nul_names, ".systrace", 5000, [], FLAT),
    "rhea-nul-names": (gen_rhea_nul_names, ".rhea-atrace.txt", 5000, [], FLAT),
    "systrace-pipes": (gen_systrace_pipes, ".systrace", 10000, [], FLAT),
    "json-counter-args": (gen_json_counter_args, ".json", 20000, [], FLAT),
    "art-threads": (gen_art_threads, ".trace", 25000, [], FLAT),
    "art-deep-stray-exits": (gen_art_deep_stray, ".trace", 20000, ["--max-depth", "100000"], DEEP),
    "rhea-deep-stray-ends": (gen_rhea_deep_stray, ".rhea-atrace.txt", 20000, ["--max-depth", "100000"], DEEP),
    "systrace-tiny-events": (gen_systrace_tiny, ".systrace", 25000, [], FLAT),
    "json-tiny-events": (gen_json_tiny, ".json", 25000, [], FLAT),
    "art-tiny-events": (gen_art_tiny, ".trace", 50000, [], FLAT),
}



def child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_once(ctx, args):
    c0, w0 = child_cpu(), time.monotonic()
    r = subprocess.run([ctx.traceconv] + args, capture_output=True)
    return r, child_cpu() - c0, time.monotonic() - w0


def timed(ctx, label, path, fmt, extra):
    """CPU seconds of one conversion, checked for a clean outcome (None if it failed)."""
    out = path + "." + fmt
    r, cpu, wall = run_once(ctx, ["-q", "-f", "-o", fmt, *extra, path, out])
    err = r.stderr.decode(errors="replace")
    ok = ctx.check(r.returncode == 0 or (r.returncode == 1 and len(err.strip().splitlines()) == 1),
                   f"{label} -> {fmt}: exit {r.returncode}, stderr: {err[-800:]}")
    ctx.check("Sanitizer" not in err and "runtime error" not in err,
              f"{label} -> {fmt}: sanitizer report: {err[-800:]}")
    ctx.check(wall <= ABS_BOUND, f"{label} -> {fmt}: {wall:.1f} s wall (bound {ABS_BOUND} s)")
    if os.path.exists(out):
        os.remove(out)
    return cpu if ok else None


def too_slow(t1, t4):
    return t4 > RATIO * max(t1, FLOOR)


def main():
    ctx = tclib.Ctx()
    scale = float(os.environ.get("TC_HOSTILE_SCALE", "0") or 0)
    if scale <= 0:
        scale = 0.5 if tclib.is_sanitized(ctx.traceconv) else 1.0
    only = [s for s in os.environ.get("TC_HOSTILE_ONLY", "").split(",") if s]
    work = os.path.join(ctx.work, "hostile")
    os.makedirs(work, exist_ok=True)
    print(f"scale {scale} ({'sanitizer build' if scale < 1 else 'release build'})")
    for name, (gen, suffix, n_release, extra, outputs) in SHAPES.items():
        if only and name not in only:
            continue
        n = max(100, int(n_release * scale))
        paths = {}
        for k in (n, 4 * n):
            paths[k] = os.path.join(work, f"{name}-{k}{suffix}")
            with open(paths[k], "wb") as f:
                f.write(gen(k))
        for fmt in outputs:
            t1 = timed(ctx, f"{name} n={n}", paths[n], fmt, extra)
            t4 = timed(ctx, f"{name} n={4 * n}", paths[4 * n], fmt, extra)
            if t1 is None or t4 is None:
                continue
            if too_slow(t1, t4) and not too_slow(2 * t1, t4):  # borderline: measure again, noise only adds time
                t1 = min(t1, timed(ctx, f"{name} n={n}", paths[n], fmt, extra) or t1)
                t4 = min(t4, timed(ctx, f"{name} n={4 * n}", paths[4 * n], fmt, extra) or t4)
            print(f"  {name:24s} {fmt:7s} n={n:<7d} {t1:7.3f} s   4n: {t4:7.3f} s   ratio {t4 / max(t1, 1e-3):5.1f}")
            ctx.check(not too_slow(t1, t4),
                      f"{name} -> {fmt}: {t4:.2f} s at 4n={4 * n} vs {t1:.2f} s at n={n}: "
                      f"more than {RATIO}x (quadratic?)")
        for p in paths.values():
            os.remove(p)
    ctx.done()


if __name__ == "__main__":
    main()
