"""The RheaTrace / btrace reader (-i rhea), on ../shared/corpus/rhea/ (synthetic
dumps made by gen_and_check.py there from RHEA.md's layouts).
1. Every dump converts to every writer; JSON passes check_chrome_json.py and
   folded passes check_folded.py.
2. 1.x marker repair: the slices in the JSON equal what RHEA.md §1.4/§4.2 say
   the markers mean (expectations written here from the dump lines, not from
   traceconv): the method whose end was lost to an exception ends with its
   caller's end; T: ends a method; the name with spaces pairs (the Python
   script's bug does not happen); monotonic_time is no slice.
   A hand-made dump: a throw caught inside the method (T:x ... E:x) is dropped.
3. 2.x binary: with its mapping (found beside the input, or --mapping) and
   without one (a warning, names method#<id>); folded from gen_and_check's records.
4. 3.x sampling: folded and pprof stacks and weights from gen_and_check's records.
5. A mapping asked for that does not exist: one clear error.
6. Linear time on hostile marker shapes: 1.x markers n deep followed by n ends
   of methods not on the stack, n vs 4n: CPU time(4n) <= 6 x time(n) (floor 0.3 s).
7. Bounded memory: a 2.x binary dump of millions of records converts with a
   peak RSS far below its per-record size (<= 64 MB), and the folded totals
   equal the ones the dump was built from."""
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import tclib  # noqa: E402

DUMPS = ["rhea-v1-allthreads.rhea-atrace.txt", "rhea-v1-allthreads.rhea-atrace.gz",
         "rhea-v1-mainthread.rhea-atrace.txt", "rhea-v2-atrace.gz", "rhea-v2-appTrace.bin",
         "btrace-v3-sampling.bin"]
WRITERS = ["json", "folded", "perfetto", "pprof", "ir"]

# 1.x all-threads dump: TRACE_START at 948220.911000 s; times below in µs from it.
# 18557: B:onCreate 912000, B:initSdk 912100, B:SdkA:init 912200 (no exit: its exception
# propagated), E:initSdk 912900 -> SdkA:init ends there too; B:parse 913000, T:parse
# 913400 (ends parse: nothing of parse follows), E:onCreate 914000; framework
# Choreographer#doFrame 917000-917500. 18601: B:Worker:run 915000, IO open 915100-915300,
# E:Worker:run 916000.
WANT_V1_ALL = {
    18557: sorted([("RheaApplication:onCreate", 1000, 3000), ("RheaApplication:initSdk", 1100, 1900),
                   ("SdkA:init", 1200, 1900), ("Parser:parse", 2000, 2400),
                   ("Choreographer#doFrame", 6000, 6500)]),
    18601: sorted([("Worker:run", 4000, 5000), ("open:/data/user/0/x/files/a.db", 4100, 4300)]),
}
# main-thread-only dump: TRACE_START 601868.050000; tid = pid 3920.
WANT_V1_MAIN = {
    3920: sorted([("MainActivity:onCreate", 600, 1200), ("MainActivity:setupViews[1, true]", 900, 1000),
                  ("inflate", 2000, 2100)]),
}
# Hand-made: x throws and catches inside itself (T:x, a call to y, E:x): x lasts to E:x;
# z throws out of itself (T:z then its caller's E:w): z ends at T:z. Times µs from 100.000000.
HAND = """1|TRACE_START|100000000000|7|2147483647|2|18316
100.000010 7: B|7|B:W:w
100.000020 7: B|7|B:X:x
100.000030 7: B|7|T:X:x
100.000040 7: B|7|B:Y:y
100.000050 7: B|7|E:Y:y
100.000060 7: B|7|E:X:x
100.000070 7: B|7|B:Z:z
100.000080 7: B|7|T:Z:z
100.000090 7: B|7|E:W:w
2|TRACE_END|100000000100000|7|2147483647|2|18316
"""
WANT_HAND = {7: sorted([("W:w", 10, 90), ("X:x", 20, 60), ("Y:y", 40, 50), ("Z:z", 70, 80)])}

# 2.x binary (gen_and_check.make_v2_bin): onCreate [2,5) ms inside attachBaseContext [1,7)
# on 18557, onClick [8,8.5) on 18601, id 77 (not in the mapping) [9,9.1) on 18557. folded µs.
APP = "rhea.sample.android.app."
WANT_BIN_MAPPED = {
    f"main-18557;{APP}RheaApplication.attachBaseContext": 3000,
    f"main-18557;{APP}RheaApplication.attachBaseContext;{APP}RheaApplication.onCreate": 3000,
    "main-18557;method#77": 100,
    f"Thread-18601-18601;{APP}FirstFragment$onViewCreated$1.onClick": 500,
}
WANT_BIN_UNMAPPED = {"main-18557;method#2": 3000, "main-18557;method#2;method#3": 3000,
                     "main-18557;method#77": 100, "Thread-18601-18601;method#1": 500}

# 3.x (gen_and_check.make_v3): samples at 1.000 s [A,B,C] and 1.001 s [A,B] (no end: weight =
# gap to the thread's next sample, 1 ms), 1.002-1.004 s [A,C] (weight = its 2 ms duration).
A = "android.app.ActivityThread.main"
B = f"{APP}MainActivity.onCreate"
C = f"{APP}Tasks.run"
WANT_SAMPLES = {f"sample.android-18557;{A};{B};{C}": 1000, f"sample.android-18557;{A};{B}": 1000,
                f"sample.android-18557;{A};{C}": 2000}
WANT_SAMPLES_UNMAPPED = {"sample.android-18557;method#0x70001000;method#0x70002000;method#0x70003000": 1000,
                         "sample.android-18557;method#0x70001000;method#0x70002000": 1000,
                         "sample.android-18557;method#0x70001000;method#0x70003000": 2000}


def json_slices(path):
    """tid -> sorted [(name, start µs, end µs)] from the B/E pairs of a Chrome JSON file."""
    with open(path, "rb") as f:
        doc = json.load(f)
    stacks, out = {}, {}
    for e in doc["traceEvents"]:
        if e.get("ph") not in ("B", "E"):
            continue
        st = stacks.setdefault(e["tid"], [])
        if e["ph"] == "B":
            st.append(e)
        else:
            b = st.pop()
            out.setdefault(e["tid"], []).append((b["name"], round(float(b["ts"])), round(float(e["ts"]))))
    return {k: sorted(v) for k, v in out.items()}


def lint(ctx, fmt, path):
    tool = {"json": "check_chrome_json.py", "folded": "check_folded.py"}.get(fmt)
    if not tool:
        return
    r = ctx.oracle(["python3", os.path.join(ctx.shared, "tools", tool), path])
    ctx.check(r is not None and r.returncode == 0,
              f"{tool} {os.path.basename(path)}: {r and (r.stdout + r.stderr).decode(errors='replace')[-800:]}")


def every_writer(ctx, corpus):
    for d in DUMPS:
        src = os.path.join(corpus, d)
        for fmt in WRITERS:
            out, figs = ctx.convert(src, fmt, os.path.join(ctx.work, f"{d}.{fmt}"))
            if out:
                lint(ctx, fmt, out)
    # probing: rhea wins on the dumps and says nothing about the side files
    for d in DUMPS:
        r = ctx.run(["--probe", os.path.join(corpus, d)])
        scores = dict(l.split()[:2] for l in r.stdout.decode().splitlines() if len(l.split()) >= 2)
        best = max(scores, key=lambda k: int(scores[k]))
        ctx.eq(best, "rhea", f"{d}: best probe score")
    for side in ("rhea-v2-methodMapping.txt", "btrace-v3-sampling-mapping.bin", "rhea-v2-binder.txt"):
        r = ctx.run(["--probe", os.path.join(corpus, side)])
        ctx.check(" 0" in next((l for l in r.stdout.decode().splitlines() if l.startswith("rhea")), ""),
                  f"{side}: rhea does not claim it: {r.stdout.decode()}")


def repair(ctx, corpus):
    for d, want in (("rhea-v1-allthreads.rhea-atrace.txt", WANT_V1_ALL),
                    ("rhea-v1-allthreads.rhea-atrace.gz", WANT_V1_ALL),
                    ("rhea-v1-mainthread.rhea-atrace.txt", WANT_V1_MAIN)):
        out = os.path.join(ctx.work, f"{d}.json")
        if os.path.exists(out):
            ctx.eq(json_slices(out), want, f"{d}: repaired slices")
    hand = os.path.join(ctx.work, "hand.rhea-atrace")
    with open(hand, "w") as f:
        f.write(HAND)
    out, figs = ctx.convert(hand, "json", os.path.join(ctx.work, "hand.json"))
    if out:
        ctx.eq(json_slices(out), WANT_HAND, "hand-made dump: caught throw dropped, uncaught throw ends")
        lint(ctx, "json", out)
    # a dump without TRACE_END was cut: a warning
    cut = os.path.join(ctx.work, "cut.rhea-atrace")
    with open(cut, "w") as f:
        f.write(HAND.rsplit("2|TRACE_END", 1)[0])
    r = ctx.run(["-f", "-o", "json", cut, os.path.join(ctx.work, "cut.json")], check_rc=0)
    ctx.check("no TRACE_END" in r.stderr.decode(), f"cut dump warns: {r.stderr.decode()}")


def binary(ctx, corpus):
    src = os.path.join(corpus, "rhea-v2-appTrace.bin")
    out, figs = ctx.convert(src, "folded", os.path.join(ctx.work, "bin.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), WANT_BIN_MAPPED, "2.x binary, mapping found beside it")
    out, figs = ctx.convert(src, "folded", os.path.join(ctx.work, "bin2.folded"),
                            extra=["--mapping", os.path.join(corpus, "rhea-v2-methodMapping.txt")])
    if out:
        ctx.eq(tclib.read_folded(out), WANT_BIN_MAPPED, "2.x binary, --mapping")
    alone = os.path.join(ctx.work, "alone", "appTrace.bin")
    os.makedirs(os.path.dirname(alone), exist_ok=True)
    shutil.copy(src, alone)
    r = ctx.run(["-f", "-o", "folded", alone, os.path.join(ctx.work, "bin3.folded")], check_rc=0)
    if r.returncode == 0:
        ctx.eq(tclib.read_folded(os.path.join(ctx.work, "bin3.folded")), WANT_BIN_UNMAPPED,
               "2.x binary without a mapping: method#<id>")
        err = r.stderr.decode()
        ctx.check("no methodMapping.txt" in err and "method#<id>" in err, f"a warning says why: {err}")
        ctx.eq(tclib.parse_figures(err).get("unknown-method-id"), 4, "four ids without a name")
    r = ctx.run(["-f", "-o", "json", "--mapping", os.path.join(ctx.work, "nope.txt"), src,
                 os.path.join(ctx.work, "nope.json")], check_rc=1)
    err = r.stderr.decode()
    ctx.check("cannot open the mapping file" in err and "nope.txt" in err and len(err.splitlines()) == 1,
              f"missing --mapping: one clear error: {err}")
    ctx.check(not os.path.exists(os.path.join(ctx.work, "nope.json")), "no output after the error")


def sampling(ctx, corpus):
    src = os.path.join(corpus, "btrace-v3-sampling.bin")
    out, figs = ctx.convert(src, "folded", os.path.join(ctx.work, "samp.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), WANT_SAMPLES, "3.x sampling: folded stacks and weights")
        ctx.eq(figs.get("samples"), 3, "three samples")
    alone = os.path.join(ctx.work, "alone", "sampling")
    shutil.copy(src, alone)
    out, figs = ctx.convert(alone, "folded", os.path.join(ctx.work, "samp2.folded"))
    if out:
        got = {k.replace("Thread-18557-18557", "sample.android-18557").replace("main-18557", "sample.android-18557"): v
               for k, v in tclib.read_folded(out).items()}
        ctx.eq(got, WANT_SAMPLES_UNMAPPED, "3.x sampling without a mapping: method#0x<ptr>")
    pp = os.path.join(ctx.work, "samp.pb.gz")
    out, _ = ctx.convert(src, "pprof", pp)
    if out:
        home = os.path.join(ctx.work, "home")
        os.makedirs(home, exist_ok=True)
        r = ctx.oracle(["go", "tool", "pprof", "-raw", pp], env=dict(os.environ, HOME=home))
        ctx.check(r is not None and r.returncode == 0, f"go tool pprof -raw: {r and r.stderr.decode()[-500:]}")
        _, samples, locs = tclib.pprof_raw(r.stdout.decode() if r else "")
        got = {";".join(locs.get(i, "?") for i in reversed(s[2])): s[0] for s in samples}
        want = {k.split(";", 1)[1]: v * 1000 for k, v in WANT_SAMPLES.items()}
        ctx.eq(got, want, "3.x sampling: pprof stacks (root first) and wall ns")


def deep_markers(n):
    """n nested B: markers, n ends of methods never entered, then the n real ends (1 µs apart)."""
    lines = ["1|TRACE_START|100000000000|7|2147483647|2|18316"]
    t = 0
    for kind, fmt, rng in (("B", "m{:06d}", range(n)), ("E", "s{:06d}", range(n)),
                           ("E", "m{:06d}", reversed(range(n)))):
        for i in rng:
            t += 1
            lines.append(f"{100 + t / 1e6:.6f} 7: B|7|{kind}:{fmt.format(i)}")
    lines.append(f"2|TRACE_END|{100000000000 + (t + 1) * 1000}|7|2147483647|2|18316")
    return "\n".join(lines) + "\n"


def linear_markers(ctx):
    times = {}
    for n in (20000, 80000):
        path = os.path.join(ctx.work, f"deep{n}.rhea-atrace")
        with open(path, "w") as f:
            f.write(deep_markers(n))
        # json: output linear in the events (folded would write depth^2 bytes)
        times[n] = ctx.cpu_time(["-q", "-f", "-o", "json", path, path + ".json"])
        if times[n] is None:
            return
        with open(path + ".json") as f:
            begins = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "B")
        ctx.eq(begins, min(n, 10000), f"{n} deep markers: every frame down to --max-depth (10000)")
    print(f"deep markers with stray ends: n=20000 {times[20000]:.2f} s, 4n {times[80000]:.2f} s")
    ctx.check(times[80000] <= max(6 * times[20000], 0.3),
              f"deep markers: 4n takes {times[80000]:.2f} s, n {times[20000]:.2f} s (quadratic?)")


def v2_record(start_rel, dur, tid, mid):
    return struct.pack("<QQ", (start_rel << 19) | (dur >> 26), ((dur & 0x3FFFFFF) << 38) | (tid << 23) | mid)


def sanitized(ctx):
    """An ASan build: its shadow memory makes an RSS bound meaningless, and it is slow."""
    cache = os.path.join(os.path.dirname(os.path.abspath(ctx.traceconv)), "CMakeCache.txt")
    return os.path.exists(cache) and "TC_SANITIZE:BOOL=ON" in open(cache).read()


def big_binary(ctx):
    """Groups of a parent (10 µs) with three 2 µs children, on 4 threads, written
    as upstream does (when each method returns: children first)."""
    pid, groups, threads = 4000, 50000 if sanitized(ctx) else 250000, 4
    mono = 232073280000000
    path = os.path.join(ctx.work, "big-appTrace.bin")
    with open(path, "wb") as f:
        f.write(struct.pack("<IIQQQ", 5, pid, 948220911000000, mono, mono))
        buf = []
        for g in range(groups):
            base = g * 20000
            for k in range(threads):
                tid = pid if k == 0 else pid + k
                for c in (1000, 4000, 7000):
                    buf.append(v2_record(base + c, 2000, tid, 2))
                buf.append(v2_record(base, 10000, tid, 1))
            if len(buf) > 65536:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))
    n_rec = groups * threads * 4
    out = os.path.join(ctx.work, "big.folded")
    p = subprocess.Popen([ctx.traceconv, "-q", "-f", "-o", "folded", path, out], stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    if not ctx.check(os.waitstatus_to_exitcode(status) == 0, f"big binary dump: {err.decode(errors='replace')}"):
        return
    peak_mb = usage.ru_maxrss / 1024
    print(f"2.x binary, {n_rec} records ({os.path.getsize(path) >> 20} MB): peak RSS {peak_mb:.1f} MB")
    if not sanitized(ctx):
        ctx.check(peak_mb <= 64, f"{n_rec} records: peak RSS {peak_mb:.1f} MB > 64 MB (per-record arrays?)")
    main_name = "main-4000"
    want = {}
    for k in range(threads):
        th = main_name if k == 0 else f"Thread-{pid + k}-{pid + k}"
        want[f"{th};method#1"] = groups * 4  # 10 - 3 x 2 µs of self time per group
        want[f"{th};method#1;method#2"] = groups * 6
    ctx.eq(tclib.read_folded(out), want, "big binary dump: folded totals from how it was built")


def main():
    ctx = tclib.Ctx()
    corpus = ctx.need_shared_corpus("rhea")
    every_writer(ctx, corpus)
    repair(ctx, corpus)
    binary(ctx, corpus)
    sampling(ctx, corpus)
    big_binary(ctx)  # first: the RSS of a forked child starts from this process's
    linear_markers(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
