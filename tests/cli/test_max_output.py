#!/usr/bin/env python3
"""--max-output and writers that stop at their output's first failure (issue 22, item 2).

The inputs are Chrome JSON traces made here: one thread entering N distinct methods, one
inside the other, then leaving them all. Its folded output has one line per depth, each
naming every frame above it, so its size grows with N squared (computed here from N,
not read from traceconv): 64x the input's size is passed at a depth of a few thousand.

- `--max-output 2M -o folded` at depth 6000 (about 100 MB of folded text): exit 1, one
  line naming the file, the writer and the bound (`output larger than --max-output
  (2M)`), no output and no temporary file left.
- `--max-output 1x`: the ratio form says what it came to (at least 4M: `(1x the input:
  4M)`).
- Several outputs, one read: `-o folded,json --max-output 2M` writes the JSON (read back
  by Python's json: every B and E event of the input) and fails the folded output alone.
- An output within the bound is byte for byte the output without the option.
- Bad values (0, -1, 1.5M, 10Kx, x, abc) are usage errors (exit 2) naming the option.
- The first write error stops the writer: folded into /dev/full (ENOSPC at the first
  flush) at depth n and 4n. The CPU time may grow at most 6x (the input is 4x larger);
  a writer that went on building every line's text after the failure grows 16x.
- `traceconv batch --max-output` forwards it: the member fails with the same line.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def deep_trace(path, depth, same_name=False):
    """depth nested B events of one thread (method m<i>, or m at every level), then the Es."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        f.write(",\n".join('{"ph":"B","pid":1,"tid":1,"ts":%d,"name":"%s"}' % (i, "m" if same_name else f"m{i}")
                           for i in range(depth)))
        f.write(",\n")
        f.write(",\n".join('{"ph":"E","pid":1,"tid":1,"ts":%d}' % (depth + i + 1) for i in range(depth)))
        f.write("]}\n")
    return path


def folded_size(depth):
    """The folded text of deep_trace(depth): line k names the thread and m0..mk, then a count."""
    thread = len("1-1")  # the thread has no name: "<tid>-<tid>"... at least 3 bytes
    total, prefix = 0, thread
    for k in range(depth):
        prefix += 1 + len(f"m{k}")
        total += prefix + 3  # " 1\n" at least
    return total


def leftovers(d, keep):
    return sorted(set(os.listdir(d)) - set(keep))


def check_bound(ctx):
    d = os.path.join(ctx.work, "bound")
    os.makedirs(d, exist_ok=True)
    src = deep_trace(os.path.join(d, "deep.json"), 6000)
    ctx.check(folded_size(6000) > 64 * os.path.getsize(src), "the folded output would be over 64x the input")
    out = os.path.join(d, "deep.folded")
    r = ctx.run(["-f", "-o", "folded", "--max-depth", "1000000", "--max-output", "2M", src, out])
    err = r.stderr.decode(errors="replace").strip().splitlines()
    ctx.eq(r.returncode, 1, "--max-output 2M: exit status")
    ctx.eq(err[-1:], [f"traceconv: {src}: folded: output larger than --max-output (2M)"], "--max-output 2M: the line")
    ctx.eq(leftovers(d, ["deep.json"]), [], "--max-output: no output, no temporary file")
    r = ctx.run(["-f", "-o", "folded", "--max-depth", "1000000", "--max-output", "1x", src, out])
    ctx.eq((r.returncode, r.stderr.decode(errors="replace").strip().splitlines()[-1:]),
           (1, [f"traceconv: {src}: folded: output larger than --max-output (1x the input: 4M)"]),
           "--max-output 1x: never below 4M, and says so")
    # two outputs from one read (named after the input: deep.folded, deep.json): the JSON fits,
    # the folded text does not
    src = os.path.join(d, "deep.chrome")
    os.rename(os.path.join(d, "deep.json"), src)
    r = ctx.run(["-f", "-o", "folded,json", "--max-depth", "1000000", "--max-output", "2M", src])
    ctx.eq(r.returncode, 1, "folded,json --max-output 2M: exit status (one output failed)")
    ctx.check(b"folded: output larger than --max-output (2M)" in r.stderr, "folded,json: the folded output's line")
    js = [f for f in os.listdir(d) if f.endswith(".json")]
    if ctx.eq(len(js), 1, f"folded,json: the JSON output is written ({js})"):
        with open(os.path.join(d, js[0])) as f:
            doc = json.load(f)
        phases = [e.get("ph") for e in doc["traceEvents"]]
        ctx.eq((phases.count("B"), phases.count("E")), (6000, 6000), "the JSON output holds every slice")
    ctx.check(not [f for f in os.listdir(d) if f.endswith(".folded")], "folded,json: no folded output")


def check_diff(ctx):
    """diff writes through its own sink: the same bound, the same line, nothing left. The
    flame graph of two deep traces (every frame a distinct method) is over 500K."""
    d = os.path.join(ctx.work, "diff")
    os.makedirs(d, exist_ok=True)
    a = deep_trace(os.path.join(d, "a.json"), 3000)
    b = deep_trace(os.path.join(d, "b.json"), 3000, same_name=True)
    out = os.path.join(d, "ab.svg")
    r = ctx.run(["diff", "-f", "-o", "flamegraph", "--max-depth", "1000000", "--merge-threads", "--max-output",
                 "256K", a, b, out])
    err = r.stderr.decode(errors="replace").strip().splitlines()
    ctx.eq((r.returncode, err[-1:]), (1, [f"traceconv: {b}: diff: output larger than --max-output (256K)"]),
           "diff --max-output 256K: exit status and the line")
    ctx.eq(leftovers(d, ["a.json", "b.json"]), [], "diff --max-output: no output, no temporary file")
    r = ctx.run(["diff", "-f", "-o", "csv", "--max-output", "1M", a, b, os.path.join(d, "ab.csv")])
    ctx.eq(r.returncode, 0, f"diff -o csv within the bound ({r.stderr.decode(errors='replace').strip()[-200:]})")


def check_fits(ctx):
    src = os.path.join(ctx.corpus, "app-startup.trace")
    a, b = os.path.join(ctx.work, "plain.folded"), os.path.join(ctx.work, "bounded.folded")
    ctx.run(["-f", "-o", "folded", src, a], check_rc=0)
    ctx.run(["-f", "-o", "folded", "--max-output", "1G", src, b], check_rc=0)
    ctx.check(os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read(),
              "an output within --max-output is unchanged")
    ctx.run(["-f", "-o", "pprof", "--max-output", "64x", src, os.path.join(ctx.work, "b.pb.gz")], check_rc=0)
    for bad in ("0", "-1", "1.5M", "10Kx", "x", "abc", "0x"):
        r = ctx.run(["-f", "-o", "folded", "--max-output", bad, src, b])
        ctx.check(r.returncode == 2 and b"max-output" in r.stderr,
                  f"--max-output {bad}: a usage error naming the option: {r.returncode} {r.stderr[-200:]!r}")


def check_first_error_stops(ctx):
    """Folded output into /dev/full: at depth n and 4n the CPU time grows like the input
    (reading), not like the folded text (16x)."""
    d = os.path.join(ctx.work, "full")
    os.makedirs(d, exist_ok=True)
    times = []
    for depth in (5000, 20000):
        src = deep_trace(os.path.join(d, f"deep{depth}.json"), depth)
        p = subprocess.Popen([ctx.traceconv, "-f", "-o", "folded", "--max-depth", "1000000", src, "/dev/full"],
                             stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        ctx.check(os.waitstatus_to_exitcode(status) == 1 and b"No space left on device" in err,
                  f"depth {depth} into /dev/full: the write error is the line: {err[-200:]!r}")
        times.append(usage.ru_utime + usage.ru_stime)
    ratio = times[1] / max(times[0], 0.01)
    print(f"/dev/full: depth 5000 {times[0]:.3f} s, 20000 {times[1]:.3f} s CPU (x{ratio:.1f})")
    ctx.check(ratio < 6, f"the writer stops at the first write error: CPU x{ratio:.1f} for 4x the depth "
                         f"({times[0]:.3f} s, {times[1]:.3f} s; quadratic work gives x16)")


def check_batch(ctx):
    d = os.path.join(ctx.work, "batch")
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    deep_trace(os.path.join(d, "in", "deep.json"), 6000)
    r = ctx.run(["batch", "-o", "folded", "--max-depth", "1000000", "--max-output", "2M", "-O",
                 os.path.join(d, "out"), os.path.join(d, "in")])
    ctx.eq(r.returncode, 1, "batch --max-output: the member fails")
    summary = os.path.join(d, "out", "traceconv-batch.json")
    text = open(summary).read() if os.path.exists(summary) else ""
    ctx.check("output larger than --max-output (2M)" in text, "batch: the member's reason names the bound")


def main():
    ctx = tclib.Ctx()
    check_first_error_stops(ctx)
    check_bound(ctx)
    check_diff(ctx)
    check_fits(ctx)
    check_batch(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
