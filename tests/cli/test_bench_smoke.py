#!/usr/bin/env python3
"""make bench prints every figure it promises: bench/run.sh on a 2 MB generated trace, one
round, its own cache of inputs, every writer, this build as the base build too. The figures themselves are the bench's to
judge (timings are not tested); what this catches is a section that silently prints
nothing or half a line, as the both-cores section did under plain `make bench` (the list
of writers came one a line and matched none of the four it times: its heading and no
figure, for as long as nobody ran it without TC_BENCH_WRITERS).

Lines looked for: a row per writer (all of --list-formats' but ir), the parse floor and
folded's share of it, each analysis writer against folded, the selection, the one pass and
its ratio, what two cores give, the four -j 2 lines, the scheduler data and the wide trace.
The batch, deobfuscation, JSON and ART V2 sections need inputs of hundreds of MB and are
left to make bench.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tclib  # noqa: E402


def writers(ctx):
    out = subprocess.run([ctx.traceconv, "--list-formats"], capture_output=True, text=True, check=True).stdout
    names, on = [], False
    for line in out.splitlines():
        if line.startswith("writers"):
            on = True
            continue
        if on and line.strip():
            if not line.startswith(" "):
                break
            names.append(line.split()[0])
    return [w for w in names if w != "ir"]


def main():
    ctx = tclib.Ctx()
    build = os.path.dirname(os.path.abspath(ctx.traceconv))
    if not os.path.exists(os.path.join(build, "tracegen")) or not os.path.exists(os.path.join(build, "parse_floor")):
        print("SKIP: tracegen or parse_floor not built beside traceconv")
        sys.exit(tclib.SKIP)
    env = dict(os.environ, TC_BENCH_CACHE=os.path.join(ctx.work, "cache"), TC_BENCH_MB="2", TC_BENCH_RUNS="1",
               TC_BENCH_SCHED_MB="1", TC_BENCH_WIDE_MB="2", TC_BENCH_BATCH="0", TC_BENCH_DEOBF="0",
               TC_BENCH_JSON="0", TC_BENCH_V2="0", TC_BENCH_BASE=os.path.abspath(ctx.traceconv))
    for k in ("TC_BENCH_WRITERS", "TC_BENCH_MULTI", "TC_BENCH_CORES", "TC_BENCH_SELECT",
              "TC_BENCH_SCHED", "TC_BENCH_WIDE"):
        env.pop(k, None)  # the defaults, as make bench runs it
    r = subprocess.run(["bash", os.path.join(ctx.source, "bench", "run.sh"), build], env=env, capture_output=True,
                       text=True, timeout=600)
    print(r.stdout)
    ctx.eq(r.returncode, 0, f"bench/run.sh exit status (stderr: {r.stderr[-2000:]!r})")
    text = r.stdout
    for w in writers(ctx):
        ctx.check(re.search(rf"^{re.escape(w)}\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+%$", text, re.M),
                  f"no row for writer {w}")
    number = r"\d+(\.\d+)?"
    wanted = [
        rf"^parse floor .*: {number} MB/s median, {number} best$",
        rf"^folded at {number}% of the parse floor",
        rf"^report +{number}% of folded throughput \(wall\), +{number}% \(CPU\)",
        rf"^selection \(folded, .*\): {number} MB/s, {number}x plain folded",
        r"^one pass +\d+ +\d+ ",
        rf"^one pass costs {number}x the slowest single format \(\w+, timed beside it in each round\) in wall time, {number}x in CPU time",
        rf"^the separate conversions take {number}x the one pass",
        rf"^two cores here: two -j 1 conversions at once do {number}x the work",
        rf"^perfetto +-j 2: \d+ MB/s, {number}x -j 1 \(CPU {number}x of -j 1\), {number}x the base .*, about {number}x Perfetto's import",
        rf"^json +-j 2: \d+ MB/s, {number}x -j 1 \(CPU {number}x of -j 1\), {number}x the base",
        rf"^folded +-j 2: \d+ MB/s, {number}x -j 1 \(CPU {number}x of -j 1\), {number}x the base",
        rf"^pprof +-j 2: \d+ MB/s, {number}x -j 1 \(CPU {number}x of -j 1\), {number}x the base",
        rf"^sched \(systrace {number} MB of scheduler lines -> perfetto\): \d+ MB/s median",
        rf"^wide: report {number}% of folded throughput .* in one pass {number}x the slowest alone",
    ]
    for pattern in wanted:
        ctx.check(re.search(pattern, text, re.M), f"no line matching {pattern!r}")
    ctx.done()


if __name__ == "__main__":
    main()
