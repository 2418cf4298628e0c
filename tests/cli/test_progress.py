#!/usr/bin/env python3
"""The progress line on a terminal (issue 36 item 8): one figure for the whole conversion that
only grows, to 100%, in one format, each figure drawn once, the line cleared before the
summary. Run in a pseudo-terminal (Python's pty) on a 40 MB generated trace (tracegen
--bench: two threads read it and write the outputs, as on any input of 32 MB or more).

Before this change (traceconv of 23ea913) -o perfetto's line went 54, 100, 58, 100, 63, ...:
the writing thread's sink asked the callback with 100% while pass 2 was still reading."""
import os
import pty
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

LINE = re.compile(rb"traceconv: +(\d+)% of (\d+) MB")


def in_pty(argv):
    """What argv wrote to its terminal (stderr and stdout both are the pty), and its exit status."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return out, os.waitstatus_to_exitcode(status)


def main():
    ctx = tclib.Ctx()
    trace = os.path.join(ctx.work, "big.trace")
    r = ctx.run(["--bench", "40", trace], exe=ctx.tracegen)
    if not ctx.eq(r.returncode, 0, f"tracegen --bench: {r.stderr[-300:]!r}"):
        ctx.done()
    size_mb = round(os.path.getsize(trace) / 1e6)
    for formats in ("perfetto", "perfetto,pprof"):
        out, rc = in_pty([ctx.traceconv, "-f", "-o", formats, trace])
        if not ctx.eq(rc, 0, f"-o {formats}: exit ({out[-300:]!r})"):
            continue
        # every redraw of the line: "\r" then the text, then erase to the end of the line
        draws = [d for d in re.split(rb"\r", out) if d.strip(b"\x1b[K")]
        progress = [d for d in draws if b"% of" in d]
        figures = [int(m.group(1)) for d in progress for m in [LINE.search(d)] if m]
        ctx.eq(len(figures), len(progress), f"-o {formats}: every progress line has one format: {progress[:3]!r}")
        ctx.check(len(figures) >= 5, f"-o {formats}: the line was drawn while converting: {figures}")
        ctx.check(all(a < b for a, b in zip(figures, figures[1:])),
                  f"-o {formats}: one figure that only grows, each drawn once: {figures}")
        ctx.eq(figures[-1:], [100], f"-o {formats}: it ends at 100%")
        ctx.check(all(int(LINE.search(d).group(2)) == size_mb for d in progress if LINE.search(d)),
                  f"-o {formats}: of the input's size ({size_mb} MB)")
        tail = next((d for d in draws if b" -> " in d), b"")  # the summary (the pty ends lines with \r\n)
        ctx.check(tail.startswith(b"\x1b[K") and tail[3:].startswith(b"traceconv: " + trace.encode()),
                  f"-o {formats}: the line is cleared before the summary: {tail[:120]!r}")
    ctx.done()


if __name__ == "__main__":
    main()
