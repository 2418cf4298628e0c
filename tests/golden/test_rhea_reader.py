"""The RheaTrace / btrace reader (-i rhea), on the project's corpus/rhea/ (dumps written
by its gen.py from a model of the calls each thread made, with the layouts of the format
notes; facts.json comes from the same model) and on TC_EXTRA_CORPUS/rhea when it is set.
1. Every dump converts to every writer; JSON passes check_chrome_json.py and
   folded passes check_folded.py; the side files (mappings, binder table) are claimed
   by no reader.
2. 1.x marker repair: the slices in the JSON equal the facts (the model's calls, ended
   as RHEA.md §1.4/§4.2 say the markers mean): the method whose exception propagated
   ends with its caller's end; T: ends a method; a throw caught inside a method (T:x,
   a call, E:x) is dropped; a recursive method pairs with its own ends; the name with
   spaces pairs (the Python script's bug does not happen); monotonic_time is no
   slice; a method still running at TRACE_END ends there. 2.x text: 9-digit times,
   bare E, the <rhea-draft> prefix removed.
   A hand-made dump: a throw caught inside the method (T:x ... E:x) is dropped.
3. 2.x binary: with its mapping (found beside the input, or --mapping) and
   without one (a warning, names method#<id>); folded equals the model's.
4. 3.x sampling: folded and pprof stacks and weights equal the model's.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

WRITERS = ["json", "folded", "perfetto", "pprof", "ir"]
# TC_EXTRA_CORPUS/rhea: the dumps of the team's notes (gen_and_check.py there), by name
EXTRA_SIDE_FILES = ("rhea-v2-methodMapping.txt", "btrace-v3-sampling-mapping.bin", "rhea-v2-binder.txt")

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
    r = ctx.oracle(["python3", ctx.checker(tool), path])
    ctx.check(r is not None and r.returncode == 0,
              f"{tool} {os.path.basename(path)}: {r and (r.stdout + r.stderr).decode(errors='replace')[-800:]}")


def every_writer(ctx, dumps, side_files):
    """dumps, side_files: paths."""
    for src in dumps:
        d = os.path.basename(src)
        for fmt in WRITERS:
            out, figs = ctx.convert(src, fmt, os.path.join(ctx.work, f"{d}.{fmt}"))
            if out:
                lint(ctx, fmt, out)
    # probing: rhea wins on the dumps and says nothing about the side files
    for src in dumps:
        r = ctx.run(["--probe", src])
        scores = dict(l.split()[:2] for l in r.stdout.decode().splitlines() if len(l.split()) >= 2)
        best = max(scores, key=lambda k: int(scores[k]))
        ctx.eq(best, "rhea", f"{os.path.basename(src)}: best probe score")
    for side in side_files:
        r = ctx.run(["--probe", side])
        ctx.check(" 0" in next((l for l in r.stdout.decode().splitlines() if l.startswith("rhea")), ""),
                  f"{os.path.basename(side)}: rhea does not claim it: {r.stdout.decode()}")


def repair(ctx, facts):
    """The text dumps' slices (converted by every_writer) against the model's."""
    for d, f in sorted(facts.items()):
        if f.get("variant") not in ("v1-text", "v2-text"):
            continue
        out = os.path.join(ctx.work, f"{d}.json")
        want = {int(tid): sorted((n, round(s), round(e)) for n, s, e in sl) for tid, sl in f["slices"].items()}
        if ctx.check(os.path.exists(out), f"{d}: converted to JSON"):
            ctx.eq(json_slices(out), want, f"{d}: repaired slices")


def binary(ctx, corpus, facts):
    src = os.path.join(corpus, "v2-appTrace.bin")
    out, figs = ctx.convert(src, "folded", os.path.join(ctx.work, "bin.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), facts["folded"], "2.x binary, mapping found beside it")
        ctx.eq(figs.get("unknown-method-id"), facts["unknown_ids"], "2.x binary: the ids the mapping lacks")
    moved = os.path.join(ctx.work, "elsewhere", "mapping.txt")  # not beside it: found only by --mapping
    os.makedirs(os.path.dirname(moved), exist_ok=True)
    shutil.copy(os.path.join(corpus, "v2-methodMapping.txt"), moved)
    alone = os.path.join(ctx.work, "alone", "appTrace.bin")
    os.makedirs(os.path.dirname(alone), exist_ok=True)
    shutil.copy(src, alone)
    out, figs = ctx.convert(alone, "folded", os.path.join(ctx.work, "bin2.folded"), extra=["--mapping", moved])
    if out:
        ctx.eq(tclib.read_folded(out), facts["folded"], "2.x binary, --mapping")
    r = ctx.run(["-f", "-o", "folded", alone, os.path.join(ctx.work, "bin3.folded")], check_rc=0)
    if r.returncode == 0:
        ctx.eq(tclib.read_folded(os.path.join(ctx.work, "bin3.folded")), facts["folded_unmapped"],
               "2.x binary without a mapping: method#<id>")
        err = r.stderr.decode()
        ctx.check("no methodMapping.txt" in err and "method#<id>" in err, f"a warning says why: {err}")
        ctx.eq(tclib.parse_figures(err).get("unknown-method-id"), facts["unknown_ids_unmapped"], "every id without a name")
    r = ctx.run(["-f", "-o", "json", "--mapping", os.path.join(ctx.work, "nope.txt"), src,
                 os.path.join(ctx.work, "nope.json")], check_rc=1)
    err = r.stderr.decode()
    ctx.check("cannot open the mapping file" in err and "nope.txt" in err and len(err.splitlines()) == 1,
              f"missing --mapping: one clear error: {err}")
    ctx.check(not os.path.exists(os.path.join(ctx.work, "nope.json")), "no output after the error")


def sampling(ctx, corpus, facts):
    src = os.path.join(corpus, "v3-sampling.bin")
    out, figs = ctx.convert(src, "folded", os.path.join(ctx.work, "samp.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), facts["folded"], "3.x sampling: folded stacks and weights")
        ctx.eq(figs.get("samples"), facts["samples"], "samples")
    alone = os.path.join(ctx.work, "alone", "sampling")
    shutil.copy(src, alone)
    out, figs = ctx.convert(alone, "folded", os.path.join(ctx.work, "samp2.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), facts["folded_unmapped"], "3.x sampling without a mapping: method#0x<ptr>")
    pp = os.path.join(ctx.work, "samp.pb.gz")
    out, _ = ctx.convert(src, "pprof", pp)
    if out:
        home = os.path.join(ctx.work, "home")
        os.makedirs(home, exist_ok=True)
        r = ctx.oracle(["go", "tool", "pprof", "-raw", pp], env=dict(os.environ, HOME=home))
        ctx.check(r is not None and r.returncode == 0, f"go tool pprof -raw: {r and r.stderr.decode()[-500:]}")
        _, samples, locs = tclib.pprof_raw(r.stdout.decode() if r else "")
        got = {}
        for s in samples:  # threads are labels in pprof, not frames: stacks of every thread add up
            key = ";".join(locs.get(i, "?") for i in reversed(s[2]))
            got[key] = got.get(key, 0) + s[0]
        want = {}
        for k, v in facts["folded"].items():
            want[k.split(";", 1)[1]] = want.get(k.split(";", 1)[1], 0) + v * 1000
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


def hand(ctx):
    """A hand-made dump: caught and uncaught throws; the same cut before TRACE_END."""
    path = os.path.join(ctx.work, "hand.rhea-atrace")
    with open(path, "w") as f:
        f.write(HAND)
    out, figs = ctx.convert(path, "json", os.path.join(ctx.work, "hand.json"))
    if out:
        ctx.eq(json_slices(out), WANT_HAND, "hand-made dump: caught throw dropped, uncaught throw ends")
        lint(ctx, "json", out)
    # a dump without TRACE_END was cut: a warning
    cut = os.path.join(ctx.work, "cut.rhea-atrace")
    with open(cut, "w") as f:
        f.write(HAND.rsplit("2|TRACE_END", 1)[0])
    r = ctx.run(["-f", "-o", "json", cut, os.path.join(ctx.work, "cut.json")], check_rc=0)
    ctx.check("no TRACE_END" in r.stderr.decode(), f"cut dump warns: {r.stderr.decode()}")


def main():
    ctx = tclib.Ctx()
    facts = ctx.corpus_facts("rhea")
    corpus = os.path.join(ctx.corpus, "rhea")
    every_writer(ctx, [p for _, p, _ in ctx.corpus_inputs("rhea")],
                 [os.path.join(corpus, n) for n, f in sorted(facts.items()) if not f["input"]])
    extra = ctx.extra_files("rhea")
    if extra:
        every_writer(ctx, [p for _, p in extra if os.path.basename(p) not in EXTRA_SIDE_FILES
                           and not p.endswith(".html")],  # minimal-systrace.html: the systrace reader's
                     [p for _, p in extra if os.path.basename(p) in EXTRA_SIDE_FILES])
    repair(ctx, facts)
    hand(ctx)
    binary(ctx, corpus, facts["v2-appTrace.bin"])
    sampling(ctx, corpus, facts["v3-sampling.bin"])
    big_binary(ctx)  # first: the RSS of a forked child starts from this process's
    linear_markers(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
