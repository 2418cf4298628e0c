#!/usr/bin/env python3
"""Command-line behaviour of traceconv: help/version/list/probe, usage errors,
default output name, overwrite protection, stdin/stdout, gzip, empty/garbage/
truncated inputs, --strict, --quiet and an unwritable output path."""
import gzip
import os
import subprocess
import random
import shutil
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tclib  # noqa: E402


def s(b):
    return b.decode(errors="replace")


def no_stray(ctx, d, what):
    stray = [n for n in os.listdir(d) if ".tmp-" in n]
    ctx.eq(stray, [], f"{what}: stray temp files in {d}")


def main():
    ctx = tclib.Ctx()
    art = ctx.need_shared_corpus("art")
    basic = os.path.join(art, "perflib-basic.trace")
    w = ctx.work
    for n in os.listdir(w):
        p = os.path.join(w, n)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)

    # --help / --version / --list-formats / --probe
    r = ctx.run(["--help"], check_rc=0)
    ctx.check("-o" in s(r.stdout + r.stderr), "--help does not mention -o")
    r = ctx.run(["--version"], check_rc=0)
    ctx.check("traceconv" in s(r.stdout) and any(c.isdigit() for c in s(r.stdout)),
              f"--version: expected 'traceconv' and a version number, got {s(r.stdout)!r}")
    r = ctx.run(["--list-formats"], check_rc=0)
    words = set(s(r.stdout).split())
    for fmt in ("art", "json", "folded"):
        ctx.check(fmt in words, f"--list-formats does not list {fmt}: {s(r.stdout)!r}")
    r = ctx.run(["--probe", basic], check_rc=0)
    ctx.check(any(l.split()[:2] == ["art", "100"] for l in s(r.stdout).splitlines() if l.split()),
              f"--probe {basic}: expected a line 'art 100', got {s(r.stdout)!r}")

    # usage errors
    out = os.path.join(w, "usage.json")
    r = ctx.run(["-o", "nosuchformat", basic, out], check_rc=2)
    ctx.check(not os.path.exists(out), "unknown -o format left an output file")
    ctx.check(s(r.stderr).strip() != "", "unknown -o format: no message")
    r = ctx.run([basic, out], check_rc=2)
    ctx.check(not os.path.exists(out), "missing -o left an output file")

    # default output name, overwrite protection, -f
    d = os.path.join(w, "defname")
    os.makedirs(d)
    x = os.path.join(d, "x.trace")
    shutil.copyfile(basic, x)
    ctx.run(["-o", "json", x], check_rc=0)
    xj = os.path.join(d, "x.json")
    ctx.check(os.path.exists(xj), f"default output name: {xj} not created (dir has {sorted(os.listdir(d))})")
    with open(xj, "wb") as f:
        f.write(b"sentinel\n")
    r = ctx.run(["-o", "json", x], check_rc=2)
    with open(xj, "rb") as f:
        ctx.eq(f.read(), b"sentinel\n", "existing output without -f must be left unchanged")
    ctx.check(s(r.stderr).strip() != "", "existing output without -f: no message")
    ctx.run(["-f", "-o", "json", x], check_rc=0)
    with open(xj, "rb") as f:
        ctx.check(f.read(1) in (b"{", b"["), "with -f the existing output was not overwritten with JSON")
    no_stray(ctx, d, "default-name conversions")
    # a failed conversion with -f leaves the existing output as it was
    with open(xj, "wb") as f:
        f.write(b"sentinel\n")
    ctx.run(["-f", "-o", "json", os.path.join(art, "perflib-header.trace"), xj], check_rc=1)
    with open(xj, "rb") as f:
        ctx.eq(f.read(), b"sentinel\n", "failed conversion with -f must leave the existing output unchanged")
    no_stray(ctx, d, "failed conversion with -f")

    # stdin -> stdout, identical to file -> file
    ref = os.path.join(w, "ref.folded")
    ctx.run(["-f", "-o", "folded", basic, ref], check_rc=0)
    with open(ref, "rb") as f:
        ref_bytes = f.read()
    with open(basic, "rb") as f:
        raw = f.read()
    r = ctx.run(["-o", "folded", "-", "-"], stdin=raw, check_rc=0)
    ctx.eq(r.stdout, ref_bytes, "stdin -> stdout folded output vs file -> file")

    # gzip input, path and stdin
    gz = os.path.join(w, "basic.trace.gz")
    with gzip.open(gz, "wb") as f:
        f.write(raw)
    r = ctx.run(["-o", "folded", gz, "-"], check_rc=0)
    ctx.eq(r.stdout, ref_bytes, "gzip input by path: folded output")
    with open(gz, "rb") as f:
        r = ctx.run(["-o", "folded", "-", "-"], stdin=f.read(), check_rc=0)
    ctx.eq(r.stdout, ref_bytes, "gzip input on stdin: folded output")

    # zero-length input
    empty = os.path.join(w, "empty.trace")
    open(empty, "wb").close()
    out = os.path.join(w, "empty.json")
    r = ctx.run(["-o", "json", empty, out], check_rc=1)
    err = s(r.stderr).strip()
    ctx.check("empty.trace" in err and len(err.splitlines()) == 1,
              f"zero-length input: want one line naming the file, got {err!r}")
    ctx.check("empty" in err.lower() or "no data" in err.lower() or "unknown input format" in err.lower(),
              f"zero-length input: message is not clear: {err!r}")
    ctx.check(not os.path.exists(out), "zero-length input left an output file")

    # random bytes
    rnd = os.path.join(w, "random.bin")
    with open(rnd, "wb") as f:
        f.write(random.Random(1234).randbytes(4096))
    out = os.path.join(w, "random.json")
    r = ctx.run(["-o", "json", rnd, out], check_rc=1)
    ctx.check("unknown input format" in s(r.stderr), f"random bytes: want 'unknown input format', got {s(r.stderr)!r}")
    ctx.check(not os.path.exists(out), "random bytes left an output file")

    # --strict on unknown method ids (CORPUS.md: firefox-art-trace-regular has 18)
    ff = os.path.join(art, "firefox-art-trace-regular.trace")
    out = os.path.join(w, "ff.json")
    ctx.run(["-o", "json", ff, out], check_rc=0)
    ctx.check(os.path.exists(out), "without --strict: no output")
    out2 = os.path.join(w, "ff-strict.json")
    r = ctx.run(["--strict", "-o", "json", ff, out2], check_rc=1)
    ctx.check(not os.path.exists(out2), "--strict failure left an output file")
    ctx.check("unknown" in s(r.stderr) or "not defined" in s(r.stderr),
              f"--strict: message does not mention the unknown method ids: {s(r.stderr)!r}")
    no_stray(ctx, w, "--strict failure")

    # truncated copy, cut mid-record: dropping the last 3 bytes cuts the last record
    # (records are >= 6 bytes), so one record fewer than CORPUS.md's count decodes.
    big = os.path.join(art, "studio-perflib-char_2_bytes.trace")
    with open(big, "rb") as f:
        data = f.read()
    tr = os.path.join(w, "trunc.trace")
    with open(tr, "wb") as f:
        f.write(data[:-3])
    out = os.path.join(w, "trunc.json")
    r = ctx.run(["-o", "json", tr, out], check_rc=0)
    ctx.check("truncated" in s(r.stderr), f"truncated input: no 'truncated' warning: {s(r.stderr)!r}")
    figs = tclib.parse_figures(s(r.stderr))
    ctx.eq(figs.get("records"), 70341 - 1, "truncated input: records (CORPUS.md 70341 minus the cut one)")

    # --quiet
    out = os.path.join(w, "quiet.json")
    r = ctx.run(["-q", "-o", "json", ff, out], check_rc=0)
    ctx.eq(r.stderr, b"", "--quiet: stderr on success")
    ctx.eq(r.stdout, b"", "--quiet: stdout on success")

    # output path that is a FIFO (like /dev/null, /dev/full or a >(...) process
    # substitution): the special file must survive; written through (exit 0) or refused.
    fifo = os.path.join(w, "out.fifo")
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so a writer's open() succeeds
    try:
        r = ctx.run(["-o", "json", basic, fifo])
        still_fifo = stat.S_ISFIFO(os.lstat(fifo).st_mode)
        ctx.check(still_fifo, "BUG(traceconv): output path that is a FIFO was replaced by a regular file "
                  f"(exit {r.returncode}); the same happens to device nodes such as /dev/full")
        if r.returncode == 0 and still_fifo:
            try:
                got = os.read(rfd, 1 << 20)
            except BlockingIOError:
                got = b""
            ctx.check(got[:1] in (b"{", b"["), f"FIFO output: exit 0 but the reader got {got[:40]!r}")
        elif r.returncode != 0:
            ctx.check(s(r.stderr).strip() != "", "FIFO output refused without a message")
    finally:
        os.close(rfd)

    # output into a non-existent directory
    nd = os.path.join(w, "no", "such", "dir")
    r = ctx.run(["-o", "json", basic, os.path.join(nd, "o.json")], check_rc=1)
    ctx.check(not os.path.exists(os.path.join(w, "no")), "non-existent output dir: something was created")
    ctx.check(s(r.stderr).strip() != "", "non-existent output dir: no message")

    # binary output is not sent to a terminal unless -f says so; text output is
    import pty
    master, slave = pty.openpty()
    try:
        for fmt, extra, want in (("pprof", [], 2), ("perfetto", [], 2), ("json", [], 0), ("pprof", ["-f"], 0)):
            p = subprocess.run([ctx.traceconv, "-q", *extra, "-o", fmt, basic, "-"], stdout=slave,
                               stderr=subprocess.PIPE, timeout=60)
            ctx.eq(p.returncode, want, f"-o {fmt} {' '.join(extra)} to a terminal: exit status")
            if want == 2:
                ctx.check(b"terminal" in p.stderr, f"-o {fmt} to a terminal: says why: {p.stderr!r}")
            while True:  # drain what reached the terminal so the next run cannot block
                import select
                if not select.select([master], [], [], 0)[0]:
                    break
                if not os.read(master, 1 << 16):
                    break
    finally:
        os.close(master)
        os.close(slave)
    ctx.done()


if __name__ == "__main__":
    main()
