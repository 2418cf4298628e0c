#!/usr/bin/env python3
"""Issue 38, item 13: a record that is skipped leaves no trace in any clock. A record with
action 3 (invalid: never written by ART or Dalvik) is skipped with the warning
`invalid-action`, but its times once went on into the thread's clock: one corrupt word at
wall 2^32 - 5 µs between an enter at 20 and an exit at 30 made the exit look like a wrap of
the 32-bit µs clock (a 10 µs frame lasting 71.6 minutes), and one at 1000 before them
clamped both to 1000 (the frame lost its time). Every ART reader hands such a record to
normalize.c, where the clocks are unwrapped and clamped, so the rule is checked there through
the ART reader's forms: dual clock, wall only, thread CPU only (v3, 14- and 10-byte records),
and the streaming form (tracegen's, one record patched); also a thread of one skipped record,
and pass 1 split on two threads.

Expected from the input built here (not from traceconv): in `-o ir`, main's frame of
com.example.A.run begins at 20 µs and ends at 30 µs after the trace start (its thread CPU
from 5 to 8 µs), one `invalid-action` warning, no `clock-wrap`, no time going backwards.
"""
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

START_US = 5_000_000
KEY = ("*version\n3\nclock={clock}\nvm=art\npid=42\n*threads\n42\tmain\n43\tother\n44\tbusy\n*methods\n"
       "0x4\tcom.example.A\trun\t()V\tA.java\n0x8\tcom.example.B\tspin\t()V\tB.java\n*end\n")
ENTER, EXIT, INVALID = 0, 1, 3
# (action, thread cpu µs, wall µs): the enter at 20 (cpu 5), the exit at 30 (cpu 8)
CALL = [(ENTER, 5, 20), (EXIT, 8, 30)]
CORRUPT = {"late": (1, (INVALID, 2**32 - 5, 2**32 - 5)),   # between the two: a false wrap
           "early": (0, (INVALID, 1000, 1000))}            # before them: both clamped to it


def trace(path, clock, records):
    times = 2 if clock == "dual" else 1
    rec_size = 6 + 4 * times
    hdr = b"SLOW" + struct.pack("<HHQH", 3, 32, START_US, rec_size)
    hdr += b"\0" * (32 - len(hdr))
    body = b""
    for rec in records:
        tid, method, (action, cpu, wall) = rec if isinstance(rec[2], tuple) else (42, 0x4, rec)
        body += struct.pack("<HI", tid, method | action)
        body += struct.pack("<II", cpu, wall) if clock == "dual" else struct.pack("<I", cpu if clock == "thread-cpu" else wall)
    with open(path, "wb") as f:
        f.write(KEY.format(clock=clock).encode() + hdr + body)


def check(ctx, clock, case):
    at, bad = CORRUPT[case]
    records = list(CALL)
    records.insert(at, bad)
    src = os.path.join(ctx.work, f"{case}-{clock}.trace")
    trace(src, clock, records)
    label = f"{clock} clock, corrupt record {case}"
    out, figs = ctx.convert(src, "ir")
    if not out:
        return
    with open(out, encoding="utf-8") as f:
        events = [m.groups() for m in re.finditer(r"^([BE]) t=0 m=0 d=0 ts=(-?\d+) cpu=(\S+)", f.read(), re.M)]
    want_ts = {"dual": (20_000, 30_000), "wall": (20_000, 30_000), "thread-cpu": (5_000, 8_000)}[clock]
    want_cpu = ("-", "-") if clock == "wall" else ("5000", "8000")
    want = [("B", str(want_ts[0]), want_cpu[0]), ("E", str(want_ts[1]), want_cpu[1])]
    ctx.eq(events, want, f"{label}: the frame (kind, ts ns, cpu ns)")
    ctx.eq(figs.get("invalid-action"), 1, f"{label}: invalid-action warnings")
    for fig in ("clock-wrap", "time-backwards"):
        ctx.eq(figs.get(fig, 0), 0, f"{label}: {fig}")


def ir_of(ctx, src, extra=()):
    out, _ = ctx.convert(src, "ir", out=os.path.join(ctx.work, os.path.basename(src) + "".join(extra) + ".ir.txt"),
                         extra=list(extra))
    if not out:
        return ""
    with open(out, encoding="utf-8") as f:
        return f.read()


def check_alone(ctx):
    """A thread whose only record is skipped has no time: it neither ends the trace at its
    2^32 - 5 µs nor counts as a thread with events."""
    src = os.path.join(ctx.work, "alone.trace")
    trace(src, "dual", CALL + [(43, 0x4, (INVALID, 2**32 - 5, 2**32 - 5))])
    ir = ir_of(ctx, src)
    m = re.search(r"^trace .* start_ns=(\d+) end_ns=(\d+)", ir, re.M)
    ctx.check(m and int(m.group(2)) - int(m.group(1)) == 30_000,
              f"a skipped record alone on its thread: trace start/end {m and m.groups()}, want 30 µs apart")
    ctx.check("figure threads=1\n" in ir, "a skipped record alone on its thread: figure threads=1")


def check_split(ctx):
    """Pass 1 on two threads (--threads 2): the skipped record of main in the first half, main's
    call in the second (thread 44's 600 calls make the cut): the same IR as on one thread, and
    main's frame at 20-30 µs."""
    busy = []
    for i in range(300):
        busy += [(44, 0x8, (ENTER, 2 * i, 40 + 2 * i)), (44, 0x8, (EXIT, 2 * i + 1, 41 + 2 * i))]
    src = os.path.join(ctx.work, "split.trace")
    trace(src, "dual", [(42, 0x4, (INVALID, 2**32 - 5, 2**32 - 5))] + busy + CALL)
    one, two = ir_of(ctx, src, ["--threads", "1"]), ir_of(ctx, src, ["--threads", "2"])
    ctx.check(one == two, "--threads 2 gives another IR than --threads 1")
    ctx.check("B t=0 m=0 d=0 ts=20000 cpu=5000\nE t=0 m=0 d=0 ts=30000 cpu=8000\n" in two or
              re.search(r"^B t=0 m=0 d=0 ts=20000 cpu=5000$", two, re.M) and
              re.search(r"^E t=0 m=0 d=0 ts=30000 cpu=8000$", two, re.M),
              "split: main's frame at 20-30 µs")
    m = re.search(r"^trace .* start_ns=(\d+) end_ns=(\d+)", two, re.M)
    ctx.check(m and int(m.group(2)) - int(m.group(1)) == 639_000, f"split: trace start/end {m and m.groups()}")


STREAMING_SCN = """version 3
streaming yes
clock dual
pid 42
start 5000000
method a com.example.A run "()V" A.java
thread 42 main cpu=50% {
  gap 20
  call a 10 { raw invalid a }
}
"""


def check_streaming(ctx):
    """The streaming form (0xF3, methods and threads inline), made by tracegen: main enters
    com.example.A.run at 20 µs and leaves it at 30 µs, with an action-3 record of it at 20 µs
    whose two times are then patched to 2^32 - 5 (its record: tid 42, method 0 | action 3)."""
    if not ctx.check(bool(ctx.tracegen), "tracegen is not built"):
        return
    scn, src = os.path.join(ctx.work, "streaming.scn"), os.path.join(ctx.work, "streaming.trace")
    with open(scn, "w") as f:
        f.write(STREAMING_SCN)
    r = subprocess.run([ctx.tracegen, scn, src], capture_output=True)
    if not ctx.check(r.returncode == 0, f"tracegen: {r.stderr.decode(errors='replace')}"):
        return
    data = bytearray(open(src, "rb").read())
    rec = struct.pack("<HI", 42, 0 | INVALID)
    at = data.find(rec)
    if not ctx.eq(data.count(rec), 1, "streaming: the action-3 record found once"):
        return
    data[at + 6:at + 14] = struct.pack("<II", 2**32 - 5, 2**32 - 5)
    with open(src, "wb") as f:
        f.write(data)
    ir = ir_of(ctx, src)
    ctx.check(re.search(r"^B t=0 m=0 d=0 ts=20000 cpu=\S+$", ir, re.M) and
              re.search(r"^E t=0 m=0 d=0 ts=30000 cpu=\S+$", ir, re.M),
              f"streaming: main's frame at 20-30 µs: {re.findall(r'^[BE] .*', ir, re.M)}")
    ctx.check("clock-wrap" not in ir, "streaming: no clock-wrap")


def main():
    ctx = tclib.Ctx()
    for clock in ("dual", "wall", "thread-cpu"):
        for case in CORRUPT:
            check(ctx, clock, case)
    check_alone(ctx)
    check_split(ctx)
    check_streaming(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
