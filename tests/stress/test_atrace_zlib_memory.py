"""A zlib-compressed atrace capture (`TRACE:` + zlib, what `atrace -z` writes)
converts in bounded memory: the source layer inflates it into an unlinked
temporary file that is mapped and given back as it is read, never into the
heap.

The capture (200 MiB of text once inflated, ~12 MiB compressed) is made here,
streaming, with Python's zlib: realistic ftrace lines, B/E triples nested on
four threads of two processes. It is converted to folded (checked against the
stacks and self times the generator wrote) and to JSON (to /dev/null); each
conversion's peak RSS (wait4's ru_maxrss of that child) must stay at or below
64 MiB. Before the spool, the reader inflated into the heap: ~219 MiB.
The guard is gzip input's: more text than --max-input, and a zlib bomb (300 MiB
of NULs), are each one clear error, no output, and the bomb is refused within
the same 64 MiB (the heap version reached 256 MiB before it could tell).

Under a sanitized build (ASan's shadow memory and quarantine change RSS) the
capture is smaller and the RSS bound is reported, not asserted."""
import os
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

LIMIT_KB = 64 * 1024
THREADS = [(1234, 1234, "ample.android"), (1234, 1240, "RenderThread"), (1234, 1251, "binder:1234_2"),
           (987, 990, "surfaceflinger")]
NAMES = ["Choreographer#doFrame", "traversal", "measure", "layout", "draw", "Record View#draw()",
         "binder transaction", "queueBuffer"]
HEADER = ("# tracer: nop\n#\n"
          "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
          "#              | |        |      |   ||||       |         |\n")
B_STEP_US, E_STEP_US = 7, 11  # three begins 7 µs apart, then three ends 11 µs apart


def make_capture(path, target_bytes):
    """Write TRACE: + zlib(ftrace text); return {(tid, frames): self µs} for the folded check."""
    want = {}
    co = zlib.compressobj(6)
    us, i, total = 1_000_000_000, 0, len(HEADER)
    with open(path, "wb") as out:
        out.write(b"TRACE:\n")
        out.write(co.compress(HEADER.encode()))
        while total < target_bytes:
            lines = []
            for _ in range(2000):
                pid, tid, task = THREADS[(i >> 3) % len(THREADS)]
                d = i % len(NAMES)
                frames = [NAMES[(d + k) % len(NAMES)] for k in range(3)]
                for name in frames:
                    us += B_STEP_US
                    lines.append(f"{task:>16}-{tid:<5} ({pid:>5}) [00{tid % 4}] ...1 "
                                 f"{us // 1000000}.{us % 1000000:06d}: tracing_mark_write: B|{pid}|{name}\n")
                for _ in frames:
                    us += E_STEP_US
                    lines.append(f"{task:>16}-{tid:<5} ({pid:>5}) [00{tid % 4}] ...1 "
                                 f"{us // 1000000}.{us % 1000000:06d}: tracing_mark_write: E|{pid}\n")
                # self times: innermost 11 µs; middle 7 + 11 = 18; outer 7 + 11 = 18
                for depth, self_us in ((3, E_STEP_US), (2, B_STEP_US + E_STEP_US), (1, B_STEP_US + E_STEP_US)):
                    key = (tid, tuple(frames[:depth]))
                    want[key] = want.get(key, 0) + self_us
                i += 1
            block = "".join(lines).encode()
            total += len(block)
            out.write(co.compress(block))
        out.write(co.flush())
    return want, total


def make_bomb(path, zero_bytes):
    """TRACE: + zlib(zero_bytes NULs): ~1000:1, what the bomb guard refuses."""
    co = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    with open(path, "wb") as out:
        out.write(b"TRACE:\n")
        for _ in range(zero_bytes >> 20):
            out.write(co.compress(chunk))
        out.write(co.flush())


def check_refusals(ctx, capture, inflated, sanitized):
    """The guard gzip input has, on zlib inside a systrace: max-input and bombs, one clear error each."""
    out = os.path.join(ctx.work, "refused.json")
    if os.path.exists(out):
        os.remove(out)
    rc, err, _ = tclib.run_measured([ctx.traceconv, "-f", "--max-input", str(inflated // 2), "-o", "json",
                                     capture, out])
    lines = [l for l in err.splitlines() if l.strip()]
    ctx.eq(rc, 1, "more inflated text than --max-input: exit 1")
    ctx.check(len(lines) == 1 and "systrace" in lines[0] and "max-input" in lines[0],
              f"one error line naming systrace and max-input: {lines}")
    ctx.check(not os.path.exists(out), "no output file after the refusal")
    bomb = os.path.join(ctx.work, "bomb.ctrace")
    make_bomb(bomb, 300 << 20)
    try:
        rc, err, rss_kb = tclib.run_measured([ctx.traceconv, "-f", "-o", "json", bomb, out])
    finally:
        os.remove(bomb)
    lines = [l for l in err.splitlines() if l.strip()]
    ctx.eq(rc, 1, "a zlib bomb (300 MiB of NULs): exit 1")
    ctx.check(len(lines) == 1 and "systrace" in lines[0] and "decompression bomb" in lines[0],
              f"one error line naming systrace and the bomb: {lines}")
    ctx.check(not os.path.exists(out), "no output file for the bomb")
    print(f"bomb refused, peak RSS {rss_kb // 1024} MiB")
    if not sanitized:
        ctx.check(rss_kb <= LIMIT_KB, f"the bomb is refused within 64 MiB of RSS, not {rss_kb // 1024} MiB")




def folded_by_tid(path):
    """{(tid, frames): count}: the thread component ends in -<tid> (folded's thread prefix)."""
    got = {}
    with open(path) as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            parts = stack.split(";")
            tid = int(parts[0].rsplit("-", 1)[1])
            key = (tid, tuple(parts[1:]))
            got[key] = got.get(key, 0) + int(count)
    return got


def main():
    ctx = tclib.Ctx()
    sanitized = tclib.is_sanitized(ctx.traceconv)
    size_mb = 48 if sanitized else 200
    capture = os.path.join(ctx.work, "capture.ctrace")
    t0 = time.time()
    want, inflated = make_capture(capture, size_mb << 20)
    print(f"capture: {inflated} bytes of text, {os.path.getsize(capture)} compressed "
          f"({time.time() - t0:.1f} s to make)")
    folded = os.path.join(ctx.work, "capture.folded")
    try:
        for fmt, out in (("folded", folded), ("json", os.devnull)):
            t0 = time.time()
            rc, err, rss_kb = tclib.run_measured([ctx.traceconv, "-f", "-o", fmt, capture, out])
            print(f"-o {fmt}: exit {rc}, peak RSS {rss_kb // 1024} MiB, {time.time() - t0:.1f} s")
            if not ctx.check(rc == 0, f"-o {fmt}: exit {rc}: {err.strip()[:400]}"):
                continue
            if sanitized:
                print(f"SKIPPED CHECK: sanitized build, peak RSS {rss_kb // 1024} MiB not held to 64 MiB")
            else:
                ctx.check(rss_kb <= LIMIT_KB, f"-o {fmt}: peak RSS {rss_kb // 1024} MiB > 64 MiB "
                          f"for {inflated >> 20} MiB of inflated atrace text")
            if fmt == "folded":
                got = folded_by_tid(folded)
                ctx.eq(len(got), len(want), "folded: one line per (thread, stack) the generator wrote")
                ctx.check(got == want, "folded: every stack's self time equals the generator's "
                          f"(first differences: {sorted(set(got.items()) ^ set(want.items()))[:4]})")
        check_refusals(ctx, capture, inflated, sanitized)
    finally:
        for p in (capture, folded):
            if os.path.exists(p):
                os.remove(p)
    ctx.done()


if __name__ == "__main__":
    main()
