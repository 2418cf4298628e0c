#!/usr/bin/env python3
"""Times that do not fit (issue 9): never a signed overflow (this runs under the
UBSan build too, which aborts on one), a warning that says what was capped or
ignored, and outputs that still pass the oracles.

  * an elapsed time that, added to the start time, leaves the int64 ns
    timeline (ART elapsed-time-usec, IR elapsed_ns): a warning naming the
    offset of the value, the conversion succeeds;
  * calls as long as the whole timeline on two threads, merged by
    --merge-threads (pprof) and --no-thread (folded): the call tree's sums
    saturate, counted as saturated-sum, and check_folded.py / go tool pprof
    accept the output.
"""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

ELAPSED_KEY = "elapsed-time-usec="


def art_with_elapsed(path):
    key = ("*version\n3\nclock=dual\n" + ELAPSED_KEY + "9000000000000000\nvm=art\npid=42\n*threads\n42\tmain\n"
           "*methods\n0x4\tA\tr\t()V\tA.java\t1\n*end\n").encode()
    start_us = (1 << 53) - 5  # the largest start the reader accepts
    hdr = b"SLOW" + struct.pack("<HHQH", 3, 32, start_us, 14)
    hdr += b"\0" * (32 - len(hdr))
    recs = b"".join(struct.pack("<HIII", 42, 4 | a, w, w) for a, w in ((0, 10), (1, 20)))
    with open(path, "wb") as f:
        f.write(key + hdr + recs)
    return key.index(ELAPSED_KEY.encode()) + len(ELAPSED_KEY)


def ir_with_elapsed(path):
    head = "traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=1 start_ns=9000000000000000000 "
    text = (head + "elapsed_ns=9000000000000000000\nthread 0 tid=1 name=\"a\"\nmethod 0 id=0x4 name=\"m\"\n"
            "B t=0 m=0 ts=0\nE t=0 m=0 ts=10\n")
    with open(path, "w") as f:
        f.write(text)
    return len(head) + len("elapsed_ns=")


def ir_with_huge_calls(path):
    lines = ["traceconv-ir 1", "trace clock=wall has_wall=1 has_cpu=0 pid=1 start_ns=0 elapsed_ns=-1",
             'thread 0 tid=1 name="a"', 'thread 1 tid=2 name="b"', 'method 0 id=0x4 name="m"',
             'method 1 id=0x8 name="n"']
    for t in (0, 1):
        lines += [f"B t={t} m=0 ts=0", f"B t={t} m=1 ts=10", f"E t={t} m=1 ts=9000000000000000000",
                  f"E t={t} m=0 ts=9100000000000000000"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def convert(ctx, label, src, fmt, extra=()):
    out = os.path.join(ctx.work, os.path.basename(src) + "." + fmt.replace("pprof", "pb.gz"))
    r = ctx.run(["-f", "-o", fmt, *extra, src, out])
    err = r.stderr.decode(errors="replace")
    ctx.check("runtime error" not in err and "Sanitizer" not in err, f"{label}: sanitizer report: {err[-1200:]}")
    ctx.check(r.returncode == 0, f"{label}: exit {r.returncode}: {err[-600:]}")
    return out if r.returncode == 0 else None, err


def main():
    ctx = tclib.Ctx()
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")

    for name, build in (("elapsed.trace", art_with_elapsed), ("elapsed.ir.txt", ir_with_elapsed)):
        src = os.path.join(ctx.work, name)
        off = build(src)
        for fmt in ("json", "ir"):
            out, err = convert(ctx, f"{name} -> {fmt}", src, fmt)
            ctx.check(f"offset 0x{off:x}: " in err and "elapsed time" in err,
                      f"{name} -> {fmt}: a warning names the elapsed time at offset 0x{off:x}: {err[-600:]}")
        r = ctx.run(["-q", "--strict", "-f", "-o", "json", src, os.path.join(ctx.work, name + ".strict.json")])
        ctx.eq(r.returncode, 1, f"{name}: the warning is an error under --strict")

    src = os.path.join(ctx.work, "huge.ir.txt")
    ir_with_huge_calls(src)
    for fmt, extra in (("folded", ["--no-thread"]), ("folded", []), ("pprof", ["--merge-threads"]), ("pprof", []),
                       ("json", []), ("perfetto", [])):
        label = f"huge calls -> {fmt} {' '.join(extra)}"
        out, err = convert(ctx, label, src, fmt, extra)
        if not out:
            continue
        figs = tclib.parse_figures(err)
        if fmt in ("folded", "pprof"):
            ctx.check(figs.get("saturated-sum", 0) >= 1, f"{label}: saturated-sum counted: {err[-600:]}")
        if fmt == "folded":
            r = ctx.oracle(["python3", ctx.checker("check_folded.py"), out])
            if r is not None:
                ctx.eq(r.returncode, 0, f"{label}: check_folded.py ({r.stdout.decode(errors='replace')[-400:]})")
            # the sums under one root stay within the call tree's cap (2^62 ns): a writer may add them up
            roots = {}
            with open(out) as f:
                for line in f:
                    if line.strip():
                        stack, n = line.rsplit(" ", 1)
                        roots[stack.split(";")[0]] = roots.get(stack.split(";")[0], 0) + int(n)
            ctx.check(roots and all(0 < v <= 2 ** 62 // 1000 + 1 for v in roots.values()),
                      f"{label}: folded totals per root within 2^62 ns: {roots}")
        if fmt == "pprof":
            r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", out], env=env)
            if r is not None:
                ctx.eq(r.returncode, 0, f"{label}: go tool pprof -raw ({r.stderr.decode(errors='replace')[-300:]})")
    ctx.done()


if __name__ == "__main__":
    main()
