#!/usr/bin/env python3
"""The bottom-up tree (--reverse) stays bounded on a hostile shape.

A chain of n distinct methods, each with self time, has n forward call paths but n(n+1)/2
bottom-up ones (every suffix read from its leaf is a path of its own): 3000 nested methods
would make 4.5 million nodes (400 MB) and 10000 (the default max-depth) 50 million (4 GB).
tci_calltree_reverse stops past 32 times the forward tree plus 1M nodes with one clear line
(exit 1, no output file); a chain whose bottom-up tree fits converts. Every writer that reads
--reverse is tried: folded, flamegraph, report (text, CSV, HTML) and the diff flame graph.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

RSS_BOUND_KB = 256 * 1024  # the refused chain's tree would pass 400 MB


def chain_ir(path, n):
    """One thread entering n distinct methods, one per µs, then leaving them: each has self time."""
    lines = ["traceconv-ir 1", "trace clock=wall has_wall=1 has_cpu=0 pid=1 start_ns=0 elapsed_ns=-1",
             'process "deep"', 'thread 0 tid=1 records=0 name="main"']
    lines += [f'method {i} id={i} name="p.C{i}.m"' for i in range(n)]
    t = 0
    for i in range(n):
        lines.append(f"B t=0 m={i} ts={t} cpu=-1")
        t += 1000
    for i in reversed(range(n)):
        lines.append(f"E t=0 m={i} ts={t} cpu=-1")
        t += 1000
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    global RSS_BOUND_KB
    ctx = tclib.Ctx()
    if tclib.is_sanitized(ctx.traceconv):  # ASan's shadow memory and quarantine: about three times
        RSS_BOUND_KB *= 3
    hostile, fits = os.path.join(ctx.work, "chain3000.ir.txt"), os.path.join(ctx.work, "chain300.ir.txt")
    chain_ir(hostile, 3000)
    chain_ir(fits, 300)
    runs = [("folded", ["-o", "folded"]), ("flamegraph", ["-o", "flamegraph"]), ("report", ["-o", "report"]),
            ("report-csv", ["-o", "report-csv"]), ("report-html", ["-o", "report-html"])]
    for label, args in runs:
        out = os.path.join(ctx.work, f"hostile.{tclib.WRITER_EXT[label]}")
        rc, err, rss = tclib.run_measured([ctx.traceconv, "-q", "-i", "ir", *args, "--reverse", hostile, out])
        ctx.eq(rc, 1, f"{label} --reverse on 3000 nested methods: refused ({err.strip()[-300:]})")
        ctx.check("bottom-up tree would hold more than" in err and err.count("\n") == 1,
                  f"{label}: one line saying why: {err.strip()[-300:]!r}")
        ctx.check(not os.path.exists(out), f"{label}: no output file left")
        ctx.check(rss < RSS_BOUND_KB, f"{label}: peak RSS {rss // 1024} MB, bound {RSS_BOUND_KB // 1024} MB")
        out = os.path.join(ctx.work, f"fits.{tclib.WRITER_EXT[label]}")
        r = ctx.run(["-q", "-i", "ir", *args, "--reverse", fits, out])
        ctx.eq(r.returncode, 0, f"{label} --reverse on 300 nested methods converts ({r.stderr[-300:]!r})")
    out = os.path.join(ctx.work, "hostile.diff.svg")
    rc, err, rss = tclib.run_measured([ctx.traceconv, "diff", "-q", "-o", "flamegraph", "--reverse", "-i", "ir",
                                       hostile, hostile, out])
    ctx.eq(rc, 1, f"diff -o flamegraph --reverse: refused ({err.strip()[-300:]})")
    ctx.check(rss < RSS_BOUND_KB, f"diff: peak RSS {rss // 1024} MB")
    ctx.done()


if __name__ == "__main__":
    main()
