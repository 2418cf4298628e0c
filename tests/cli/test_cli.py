#!/usr/bin/env python3
"""Command-line behaviour of traceconv: help/version/list/probe, usage errors,
default output name, overwrite protection, stdin/stdout, gzip, empty/garbage/
truncated inputs, --strict, --quiet and an unwritable output path; several
inputs each converted beside itself, which operands are inputs and which the
output, never overwriting a trace, output permissions under the umask, disk
full, and options the chosen reader or writer does not use; several formats
at once (-o json,perfetto,folded): one output per format beside each input,
equal to the single conversions, checked all-or-nothing before converting."""
import gzip
import json
import os
import subprocess
import random
import shutil
import signal
import stat
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def s(b):
    return b.decode(errors="replace")


def no_stray(ctx, d, what):
    stray = [n for n in os.listdir(d) if tclib.is_temp_name(n)]
    ctx.eq(stray, [], f"{what}: stray temp files in {d}")


def main():
    ctx = tclib.Ctx()
    basic = corpus_trace(ctx, "v3-dual")
    w = ctx.work
    for n in os.listdir(w):
        p = os.path.join(w, n)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    # a key section and no data: where the binary part should start there is text
    header_only = os.path.join(w, "header-only.trace")
    with open(basic, "rb") as f, open(header_only, "wb") as out:
        out.write(f.read().split(b"*end\n", 1)[0] + b"*end\ndata section follows..\n")

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
    ctx.run(["-f", "-o", "json", header_only, xj], check_rc=1)
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

    # --strict on unknown method ids (the facts: unknown-method-ids has 3)
    ff = corpus_trace(ctx, "unknown-method-ids")
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
    # (records are >= 6 bytes), so one record fewer than the facts' count decodes.
    big = corpus_trace(ctx, "app-startup")
    with open(big, "rb") as f:
        data = f.read()
    with open(os.path.join(ctx.corpus, "app-startup.facts.json")) as f:
        records = json.load(f)["records"]
    tr = os.path.join(w, "trunc.trace")
    with open(tr, "wb") as f:
        f.write(data[:-3])
    out = os.path.join(w, "trunc.json")
    r = ctx.run(["-o", "json", tr, out], check_rc=0)
    ctx.check("truncated" in s(r.stderr), f"truncated input: no 'truncated' warning: {s(r.stderr)!r}")
    figs = tclib.parse_figures(s(r.stderr))
    ctx.eq(figs.get("records"), records - 1, f"truncated input: records (the facts' {records} minus the cut one)")

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

    check_several_inputs(ctx)
    check_operands(ctx)
    check_never_overwrite_a_trace(ctx)
    check_permissions(ctx)
    check_disk_full(ctx)
    check_unused_options(ctx)
    check_several_formats(ctx)
    check_several_formats_refused(ctx)
    check_several_formats_disk_full(ctx)
    check_several_formats_signal(ctx)
    ctx.done()


# ---- several inputs, operands, overwrite protection, permissions, disk full, unused options ----

def corpus_trace(ctx, stem):
    return os.path.join(ctx.corpus, stem + ".trace")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def is_json(path):
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
        return isinstance(doc, (dict, list))
    except (OSError, ValueError):
        return False


def summary_lines(stderr):
    return [l for l in s(stderr).splitlines() if l.startswith("traceconv: ") and " -> " in l]


def check_several_inputs(ctx):
    """The glob case of issue 9: `traceconv -f -o json *.trace` converted a.trace into b.trace."""
    d = ctx.fresh("glob")
    a, b = os.path.join(d, "a.trace"), os.path.join(d, "b.trace")
    shutil.copyfile(corpus_trace(ctx, "app-startup"), a)
    shutil.copyfile(corpus_trace(ctx, "open-at-end"), b)
    before = {p: read(p) for p in (a, b)}
    r = subprocess.run([os.path.abspath(ctx.traceconv), "-f", "-o", "json", "a.trace", "b.trace"], cwd=d, capture_output=True)
    ctx.eq(r.returncode, 0, f"-f -o json a.trace b.trace: exit status ({s(r.stderr).strip()})")
    for p in (a, b):
        ctx.check(read(p) == before[p], f"-f -o json a.trace b.trace: {os.path.basename(p)} was changed")
        out = p[: -len(".trace")] + ".json"
        ctx.check(is_json(out), f"-f -o json a.trace b.trace: {os.path.basename(out)} is not a JSON trace "
                                f"(dir has {sorted(os.listdir(d))})")
    ctx.eq(len(summary_lines(r.stderr)), 2, f"one summary line per input: {s(r.stderr)!r}")
    no_stray(ctx, d, "several inputs")

    # one bad input among good ones: the others still convert, the exit status is 1
    d = ctx.fresh("glob-bad")
    for n, stem in (("a", "app-startup"), ("c", "open-at-end")):
        shutil.copyfile(corpus_trace(ctx, stem), os.path.join(d, n + ".trace"))
    with open(os.path.join(d, "b.trace"), "wb") as f:
        f.write(b"this is not a trace\n" * 20)
    r = subprocess.run([os.path.abspath(ctx.traceconv), "-o", "folded", "a.trace", "b.trace", "c.trace"], cwd=d, capture_output=True)
    ctx.eq(r.returncode, 1, f"three inputs, the second bad: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["a.folded", "a.trace", "b.trace", "c.folded", "c.trace"],
           "three inputs, the second bad: the good ones are converted, nothing for the bad one")
    errs = [l for l in s(r.stderr).splitlines() if l not in summary_lines(r.stderr)]
    ctx.check(len(errs) == 1 and "b.trace" in errs[0], f"the bad input gets one line naming it: {errs!r}")

    # two inputs with the same default output (x.trace, x.trace.gz -> x.folded): the second is refused
    d = ctx.fresh("same-output")
    shutil.copyfile(corpus_trace(ctx, "app-startup"), os.path.join(d, "x.trace"))
    with open(os.path.join(d, "x.trace.gz"), "wb") as f:
        f.write(gzip.compress(read(corpus_trace(ctx, "open-at-end"))))
    r = subprocess.run([os.path.abspath(ctx.traceconv), "-f", "-o", "folded", "x.trace", "x.trace.gz"], cwd=d,
                       capture_output=True)
    ctx.eq(r.returncode, 1, f"two inputs, one output name: exit status ({s(r.stderr).strip()})")
    ref = subprocess.run([ctx.traceconv, "-q", "-o", "folded", corpus_trace(ctx, "app-startup"), "-"],
                         capture_output=True).stdout
    xf = os.path.join(d, "x.folded")
    ctx.check(os.path.exists(xf) and read(xf) == ref, "two inputs, one output name: the first one's output is kept")
    ctx.check("x.folded" in s(r.stderr) and "already written" in s(r.stderr),
              f"two inputs, one output name: the second is refused, saying why: {s(r.stderr)!r}")


def check_operands(ctx):
    """Two operands are INPUT OUTPUT only when the second is '-', does not exist, or has the writer's extension."""
    src = corpus_trace(ctx, "open-at-end")
    d = ctx.fresh("operands")
    a = os.path.join(d, "a.trace")
    shutil.copyfile(src, a)

    out = os.path.join(d, "named-output.data")  # missing, any extension: the output
    r = ctx.run(["-o", "json", a, out], check_rc=0)
    ctx.check(is_json(out) and not os.path.exists(a[:-6] + ".json"),
              f"a missing second operand is the output (dir has {sorted(os.listdir(d))})")
    os.remove(out)

    r = ctx.run(["-o", "json", a, "-"], check_rc=0)  # '-': stdout
    ctx.check(r.stdout[:1] in (b"{", b"["), f"second operand '-': JSON on stdout, got {r.stdout[:40]!r}")
    ctx.eq(sorted(os.listdir(d)), ["a.trace"], "second operand '-': no file written")

    # an existing file without the writer's extension is a second input: it fails alone, clearly
    notes = os.path.join(d, "notes.txt")
    with open(notes, "wb") as f:
        f.write(b"shopping list\n")
    r = ctx.run(["-f", "-o", "json", a, notes])
    ctx.eq(r.returncode, 1, f"existing non-trace second operand without .json: exit status ({s(r.stderr).strip()})")
    ctx.eq(read(notes), b"shopping list\n", "existing second operand without the writer's extension is untouched")
    ctx.check(is_json(os.path.join(d, "a.json")), "existing second operand is an input: a.json beside a.trace")
    ctx.check(not os.path.exists(os.path.join(d, "notes.json")), "the non-trace input left an output")
    errs = [l for l in s(r.stderr).splitlines() if l not in summary_lines(r.stderr)]
    ctx.check(len(errs) == 1 and errs[0].startswith(f"traceconv: {notes}: "),
              f"the non-trace input fails with one line naming it: {s(r.stderr)!r}")
    if os.path.exists(os.path.join(d, "a.json")):
        os.remove(os.path.join(d, "a.json"))

    # an existing non-trace file with the writer's extension is the output (-f overwrites it)
    for fmt, name in (("json", "old.json"), ("pprof", "old.pb.gz"), ("folded", "old.folded")):
        old = os.path.join(d, name)
        with open(old, "wb") as f:
            f.write(gzip.compress(b"not a trace\n") if name.endswith(".gz") else b"not a trace\n")
        r = ctx.run(["-o", fmt, a, old], check_rc=2)
        ctx.check(b"-f" in r.stderr, f"existing {name} without -f: the message mentions -f: {s(r.stderr)!r}")
        ctx.run(["-f", "-o", fmt, a, old], check_rc=0)
        ctx.check(read(old) != b"not a trace\n" and not os.path.exists(old + ".json"),
                  f"existing non-trace {name} with -f: overwritten by the {fmt} output")
    ctx.eq(sorted(os.listdir(d)), ["a.trace", "notes.txt", "old.folded", "old.json", "old.pb.gz"],
           "operand cases: no file beside the input")
    no_stray(ctx, d, "operand cases")


def check_never_overwrite_a_trace(ctx):
    """No command line overwrites an original trace (a file a reader recognizes that
    traceconv did not write), even with -f; an output of traceconv's own, which can be
    made again, is replaced with -f only."""
    d = ctx.fresh("keep-traces")
    a = os.path.join(d, "a.trace")
    shutil.copyfile(corpus_trace(ctx, "open-at-end"), a)
    chrome = os.path.join(d, "chrome.json")  # a Chrome JSON trace written by hand, not by us
    with open(chrome, "w") as f:
        f.write('{"traceEvents":[{"name":"draw","ph":"B","ts":1,"pid":7,"tid":7},'
                '{"name":"draw","ph":"E","ts":5,"pid":7,"tid":7}]}\n')
    art_named_json = os.path.join(d, "art.json")  # an ART trace behind the writer's extension
    shutil.copyfile(corpus_trace(ctx, "app-startup"), art_named_json)
    html = os.path.join(d, "sys.html")  # a device capture's systrace text behind .html
    with open(html, "w") as f:
        f.write("# tracer: nop\n#\n"
                "  RenderThread-1234  ( 1200) [001] ...1  100.000100: tracing_mark_write: B|1200|draw\n"
                "  RenderThread-1234  ( 1200) [001] ...1  100.000200: tracing_mark_write: E|1200\n")
    cases = [(["-f", "-o", "json", a, chrome], chrome, "json"),
             (["-f", "-o", "json", a, art_named_json], art_named_json, "art"),
             (["-o", "json", a, chrome], chrome, "json"),  # without -f too: the message must not suggest -f
             (["-f", "-o", "systrace", a, html], html, "systrace"),
             (["-f", "-o", "json", a], None, "json")]
    for args, target, reader in cases:
        if target is None:  # the default output a.json is an original trace
            target = os.path.join(d, "a.json")
            shutil.copyfile(chrome, target)
        before = read(target)
        r = ctx.run(args)
        what = "traceconv " + " ".join(os.path.relpath(x, d) if x.startswith(d) else x for x in args)
        ctx.check(r.returncode != 0, f"{what}: exit 0 but {os.path.basename(target)} is a trace")
        ctx.check(read(target) == before, f"{what}: the trace {os.path.basename(target)} was overwritten")
        err = s(r.stderr).strip()
        ctx.check(len(err.splitlines()) == 1 and os.path.basename(target) in err and
                  reader in err.replace(d, "") and "use -f" not in err,
                  f"{what}: one line naming the trace it will not overwrite and its reader ({reader}): {err!r}")
    os.unlink(os.path.join(d, "a.json"))
    # traceconv's own outputs (json: the mark is in the trailing otherData; systrace, ir: at the start)
    for fmt, ext in (("json", "json"), ("systrace", "html"), ("ir", "ir.txt")):
        out = os.path.join(d, "again." + ext)
        first = ctx.run(["-q", "-o", fmt, a, out])
        ctx.check(first.returncode == 0, f"-o {fmt}: first conversion: {s(first.stderr)}")
        before = read(out)
        r = ctx.run(["-q", "-o", fmt, a, out])
        ctx.check(r.returncode == 0 and read(out) == before,
                  f"-o {fmt} again without -f: its own output made again: {r.returncode} {s(r.stderr)!r}")
        r = ctx.run(["-q", "-f", "-o", fmt, a, out])
        ctx.check(r.returncode == 0, f"-f -o {fmt} again: traceconv's own output is replaced: {s(r.stderr)!r}")
        ctx.check(read(out) == before, f"-f -o {fmt} again: the same output")
        os.unlink(out)
    no_stray(ctx, d, "refused overwrites")


def check_permissions(ctx):
    """Output files get 0666 & ~umask (they were world-writable)."""
    d = ctx.fresh("umask")
    src = corpus_trace(ctx, "open-at-end")
    for mask in (0o022, 0o077, 0o002):
        for fmt in ("json", "pprof"):
            out = os.path.join(d, f"u{mask:03o}.{fmt}")
            r = subprocess.run([ctx.traceconv, "-q", "-o", fmt, src, out], capture_output=True,
                               preexec_fn=lambda m=mask: os.umask(m))
            if not ctx.check(r.returncode == 0, f"umask {mask:03o} -o {fmt}: exit {r.returncode}: {s(r.stderr)}"):
                continue
            ctx.eq(oct(stat.S_IMODE(os.stat(out).st_mode)), oct(0o666 & ~mask), f"umask {mask:03o} -o {fmt}: mode")


def check_disk_full(ctx):
    """A full disk is named as such, and leaves nothing behind."""
    if os.geteuid() != 0:
        print("SKIP(disk full): mounting a small tmpfs needs root")
        return
    d = ctx.fresh("full")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", d], capture_output=True)
    if r.returncode != 0:
        print(f"SKIP(disk full): cannot mount a tmpfs here: {s(r.stderr).strip()}")
        return
    try:
        src = corpus_trace(ctx, "app-startup")  # json 650 KB, systrace 480 KB, perfetto 115 KB
        filler = os.path.join(d, "filler")
        for fmt in ("json", "perfetto", "systrace"):
            with open(filler, "wb") as f:  # leave 48 KiB free, less than any of the three outputs
                f.write(b"\0" * (256 - 48) * 1024)
            out = os.path.join(d, "out." + fmt)
            r = ctx.run(["-o", fmt, src, out])
            err = s(r.stderr).strip()
            ctx.eq(r.returncode, 1, f"disk full, -o {fmt}: exit status ({err})")
            ctx.check("No space left on device" in err and len(err.splitlines()) == 1,
                      f"disk full, -o {fmt}: one line naming the cause: {err!r}")
            ctx.eq(sorted(os.listdir(d)), ["filler"], f"disk full, -o {fmt}: nothing left behind")
            os.remove(filler)
        # a small output, on a disk with no room at all: the error comes from the last flush
        with open(filler, "wb") as f:
            f.write(b"\0" * 256 * 1024)
        r = ctx.run(["-o", "folded", corpus_trace(ctx, "open-at-end"), os.path.join(d, "small.folded")])
        ctx.eq(r.returncode, 1, f"disk full, small -o folded: exit status ({s(r.stderr).strip()})")
        ctx.check("No space left on device" in s(r.stderr), f"disk full, small -o folded: names the cause: {s(r.stderr)!r}")
        ctx.eq(sorted(os.listdir(d)), ["filler"], "disk full, small -o folded: nothing left behind")
    finally:
        subprocess.run(["umount", d])


def check_unused_options(ctx):
    """An option the chosen reader or writer does not use is a warning; an error under --strict."""
    d = ctx.fresh("options")
    art = corpus_trace(ctx, "open-at-end")
    missing = os.path.join(d, "no-such-mapping.txt")
    cases = [(["--text"], "json", "option --text is not used by the json writer"),
             (["--mapping", missing], "json", "option --mapping is not used by the art reader"),
             (["--weight", "cpu"], "pprof", "option --weight is not used by the pprof writer"),
             (["--no-thread"], "pprof", "option --no-thread is not used by the pprof writer"),
             (["--merge-threads"], "folded", "option --merge-threads is not used by the folded writer")]
    for opts, fmt, message in cases:
        what = f"{' '.join(opts)} -o {fmt} (art input)"
        out = os.path.join(d, "out." + fmt)
        if os.path.exists(out):
            os.remove(out)
        r = ctx.run([*opts, "-o", fmt, art, out])
        ctx.eq(r.returncode, 0, f"{what}: exit status ({s(r.stderr).strip()})")
        ctx.check(message in s(r.stderr), f"{what}: warns {message!r}: {s(r.stderr)!r}")
        ctx.eq(tclib.parse_figures(s(r.stderr)).get("unused-option"), 1, f"{what}: counted as unused-option")
        if os.path.exists(out):
            os.remove(out)
        r = ctx.run(["--strict", *opts, "-o", fmt, art, out])
        ctx.eq(r.returncode, 1, f"--strict {what}: exit status ({s(r.stderr).strip()})")
        ctx.check(message in s(r.stderr) and len(s(r.stderr).strip().splitlines()) == 1,
                  f"--strict {what}: one error line saying {message!r}: {s(r.stderr)!r}")
        ctx.check(not os.path.exists(out), f"--strict {what}: no output")
        if os.path.exists(out):
            os.remove(out)
    ctx.check(not os.path.exists(missing), "the unused mapping file was never created")
    # options that are used give no such warning, also under --strict
    for opts, fmt in ((["--text"], "systrace"), (["--weight", "cpu", "--no-thread"], "folded"),
                      (["--merge-threads"], "pprof"), (["--process-name", "x", "--max-depth", "50"], "json"),
                      (["--max-json", "1M", "--max-events", "1000000"], "perfetto")):
        out = os.path.join(d, "used." + fmt)
        r = ctx.run(["--strict", "-f", *opts, "-o", fmt, art, out])
        ctx.eq(r.returncode, 0, f"--strict {' '.join(opts)} -o {fmt}: exit status ({s(r.stderr).strip()})")
        ctx.check("unused" not in s(r.stderr) and "not used" not in s(r.stderr),
                  f"{' '.join(opts)} -o {fmt}: no unused-option warning: {s(r.stderr)!r}")
        if os.path.exists(out):
            os.remove(out)
    no_stray(ctx, d, "unused options")


# ---- several formats at once ----

EXT = tclib.WRITER_EXT


def single_conversion(ctx, src, fmt, d):
    """The model: the output of converting src alone with fmt (into its own directory)."""
    out = os.path.join(d, os.path.basename(src) + "." + EXT[fmt])
    r = ctx.run(["-q", "-f", "-o", fmt, src, out])
    ctx.eq(r.returncode, 0, f"single -o {fmt} {src}: exit status ({s(r.stderr).strip()})")
    return read(out) if os.path.exists(out) else None


def stem(path):
    """The default output's stem: the name without its last extension (a.ir.txt -> a.ir)."""
    return os.path.splitext(os.path.basename(path))[0]


def check_several_formats(ctx):
    """-o json,perfetto,folded: each input read once, one output per format beside it, equal to the
    output of the single conversion; one summary line per input listing every output."""
    d = ctx.fresh("formats")
    ref = ctx.fresh("formats-ref")
    inputs = []
    for src in (corpus_trace(ctx, "app-startup"), corpus_trace(ctx, "recursion-10000"),
                os.path.join(ctx.source, "tests", "json", "system.json"),
                os.path.join(ctx.source, "tests", "ir", "samples.ir.txt")):
        dst = os.path.join(d, os.path.basename(src))
        shutil.copyfile(src, dst)
        inputs.append(dst)
    # two operands, the second with a writer's extension, would be INPUT OUTPUT: one input per run
    cases = [(["json", "perfetto", "folded"], inputs[:2]),
             (["perfetto", "folded", "pprof", "systrace", "ir"], inputs[2:3]),  # json would be system.json itself
             (["json", "perfetto", "folded", "pprof", "systrace", "ir"], inputs[3:])]
    for fmts, srcs in cases:
        what = f"-o {','.join(fmts)} {' '.join(os.path.basename(p) for p in srcs)}"
        r = ctx.run(["-o", ",".join(fmts), *srcs])
        ctx.eq(r.returncode, 0, f"{what}: exit status ({s(r.stderr).strip()})")
        lines = summary_lines(r.stderr)
        ctx.eq(len(lines), len(srcs), f"{what}: one summary line per input: {lines}")
        for src in srcs:
            outs = [os.path.join(d, stem(src) + "." + EXT[f]) for f in fmts]
            line = next((l for l in lines if l.startswith(f"traceconv: {src} -> ")), "")
            ctx.check(line.startswith(f"traceconv: {src} -> {', '.join(outs)} (")
                      and f"-> {','.join(fmts)}):" in line, f"{what}: the summary lists every output: {line!r}")
            for fmt, out in zip(fmts, outs):
                want = single_conversion(ctx, src, fmt, ref)
                if ctx.check(os.path.exists(out), f"{what}: {out} written"):
                    ctx.check(read(out) == want, f"{what}: {out} equals the single -o {fmt} conversion")
                    os.remove(out)
    ctx.eq(sorted(os.listdir(d)), sorted(os.path.basename(p) for p in inputs), "several formats: nothing else")
    # options are the command's: each writer reads its own, and none is unused
    src = inputs[0]
    r = ctx.run(["--strict", "--weight", "cpu", "--merge-threads", "--text", "-o", "folded,pprof,systrace", src])
    ctx.eq(r.returncode, 0, f"--strict --weight cpu --merge-threads --text -o folded,pprof,systrace: exit status "
                            f"({s(r.stderr).strip()})")
    for fmt, opts, variant in (("folded", ["--weight", "cpu"], "folded"), ("pprof", ["--merge-threads"], "pprof"),
                               ("systrace", ["--text"], "systrace-text")):  # its default name is the variant's
        out = os.path.join(d, stem(src) + "." + EXT[variant])
        single = os.path.join(ref, "opt." + EXT[fmt])
        ctx.run(["-q", *opts, "-o", fmt, src, single], check_rc=0)
        ctx.check(os.path.exists(out) and os.path.exists(single) and read(out) == read(single),
                  f"-o folded,pprof,systrace with options: {out} equals the single -o {fmt} {' '.join(opts)}")
    no_stray(ctx, d, "several formats")


def check_several_formats_refused(ctx):
    """Usage errors of -o with several formats, and the overwrite rules checked for every output
    before anything is converted: one refused output means none is written."""
    d = ctx.fresh("formats-refused")
    src = os.path.join(d, "app.trace")
    shutil.copyfile(corpus_trace(ctx, "app-startup"), src)
    only_input = ["app.trace"]
    for fmts, needle in (("json,bogus,folded", "unknown output format 'bogus'"),
                         ("json,json", "output format 'json' is given twice"),
                         ("json,,folded", "an empty format"), ("json,", "an empty format")):
        r = ctx.run(["-o", fmts, src])
        ctx.eq(r.returncode, 2, f"-o {fmts}: usage error")
        ctx.check(needle in s(r.stderr), f"-o {fmts}: says {needle!r}: {s(r.stderr)!r}")
        ctx.eq(sorted(os.listdir(d)), only_input, f"-o {fmts}: nothing written")
    # no OUTPUT operand, no stdin/stdout: outputs go beside the input under their default names
    for args, needle in (([src, os.path.join(d, "out.json")], "an OUTPUT operand cannot be given"),
                         ([src, "-"], "cannot read stdin or write stdout"),
                         (["-"], "cannot read stdin or write stdout")):
        r = ctx.run(["-o", "json,perfetto", *args], stdin=read(src))
        ctx.eq(r.returncode, 2, f"-o json,perfetto {' '.join(args)}: usage error")
        ctx.check(needle in s(r.stderr), f"-o json,perfetto {' '.join(args)}: says {needle!r}: {s(r.stderr)!r}")
        ctx.eq(r.stdout, b"", f"-o json,perfetto {' '.join(args)}: nothing on stdout")
        ctx.eq(sorted(os.listdir(d)), only_input, f"-o json,perfetto {' '.join(args)}: nothing written")
    # an original trace where one output would go: refused, even with -f, and no other output written
    original = os.path.join(d, "app.json")
    with open(original, "w") as f:  # a Chrome JSON trace that traceconv did not write
        f.write('{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},'
                '{"ph":"E","pid":1,"tid":1,"ts":2}]}\n')
    before = read(original)
    for force in ([], ["-f"]):
        r = ctx.run([*force, "-o", "perfetto,json,folded", src])
        what = f"{' '.join(force)} -o perfetto,json,folded over an original app.json"
        ctx.eq(r.returncode, 2, f"{what}: refused ({s(r.stderr).strip()})")
        ctx.check("app.json: is a trace" in s(r.stderr), f"{what}: names the trace: {s(r.stderr)!r}")
        ctx.eq(sorted(os.listdir(d)), ["app.json", "app.trace"], f"{what}: no output written")
        ctx.check(read(original) == before, f"{what}: the original is unchanged")
    os.remove(original)
    # traceconv's own earlier output is made again without -f (issue 36, item 7); a file it did
    # not write is refused without -f (each one said), and then none of the outputs is written
    r = ctx.run(["-q", "-o", "json", src], check_rc=0)
    with open(os.path.join(d, "app.folded"), "w") as f:
        f.write("my notes\n")
    r = ctx.run(["-o", "folded,json,perfetto", src])
    ctx.eq(r.returncode, 2, "a file of the user's at app.folded without -f: refused")
    ctx.check("app.folded" in s(r.stderr) and "-f" in s(r.stderr) and "app.json" not in s(r.stderr),
              f"app.folded, not the earlier app.json: says -f: {s(r.stderr)!r}")
    ctx.eq(sorted(os.listdir(d)), ["app.folded", "app.json", "app.trace"], "a file of the user's: nothing written")
    os.remove(os.path.join(d, "app.folded"))
    r = ctx.run(["-o", "folded,json,perfetto", src])
    ctx.eq(r.returncode, 0, f"over an earlier app.json, without -f: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["app.folded", "app.json", "app.pftrace", "app.trace"], "every output")
    r = ctx.run(["-o", "folded,json,perfetto", src])
    ctx.eq(r.returncode, 0, f"every output again, without -f: exit status ({s(r.stderr).strip()})")
    r = ctx.run(["-f", "-o", "folded,json,perfetto", src])
    ctx.eq(r.returncode, 0, f"-f over earlier outputs: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["app.folded", "app.json", "app.pftrace", "app.trace"], "-f: every output")
    no_stray(ctx, d, "several formats refused")
    # the help says how several formats are named
    ctx.check("json,perfetto" in s(ctx.run(["--help"]).stdout), "--help shows several formats")


def check_several_formats_disk_full(ctx):
    """A full disk during -o json,perfetto,folded: each failed output named and removed, nothing left behind."""
    if os.geteuid() != 0:
        print("SKIP(several formats, disk full): mounting a small tmpfs needs root")
        return
    d = ctx.fresh("formats-full")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", d], capture_output=True)
    if r.returncode != 0:
        print(f"SKIP(several formats, disk full): cannot mount a tmpfs here: {s(r.stderr).strip()}")
        return
    try:
        src = os.path.join(d, "app.trace")
        shutil.copyfile(corpus_trace(ctx, "app-startup"), src)  # 64 KB; json 650 KB does not fit
        r = ctx.run(["-o", "json,perfetto,folded", src])
        err = s(r.stderr)
        ctx.eq(r.returncode, 1, f"disk full, -o json,perfetto,folded: exit status ({err.strip()})")
        ctx.check(": json: cannot write the output: No space left on device" in err,
                  f"disk full, several formats: the json output's error names the writer and the cause: {err!r}")
        left = sorted(os.listdir(d))
        ctx.check(left[0] == "app.trace" and all(not n.startswith("app.json") and not tclib.is_temp_name(n) for n in left),
                  f"disk full, several formats: no json output nor temporary file left: {left}")
        for n in left[1:]:  # an output that fitted is complete: equal to its single conversion
            fmt = "perfetto" if n.endswith(".pftrace") else "folded"
            ctx.check(read(os.path.join(d, n)) == single_conversion(ctx, src, fmt, ctx.fresh("full-ref")),
                      f"disk full, several formats: the kept {n} is complete")
    finally:
        subprocess.run(["umount", d])


def check_several_formats_signal(ctx):
    """SIGINT while -o json,perfetto,folded converts: every temporary output removed, no output left."""
    if not ctx.tracegen:
        print("SKIP(several formats, SIGINT): no tracegen")
        return
    d = ctx.fresh("formats-signal")
    big = os.path.join(d, "big.trace")
    subprocess.run([ctx.tracegen, "--bench", "40", big], check=True, capture_output=True)
    p = subprocess.Popen([ctx.traceconv, "-q", "-o", "json,perfetto,folded", big], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    temps = lambda: [n for n in os.listdir(d) if tclib.is_temp_name(n)]
    while len(temps()) < 3 and p.poll() is None and time.time() < deadline:
        time.sleep(0.002)
    seen = sorted(temps())
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    if ctx.check(len(seen) == 3, f"several formats, SIGINT: three temporary outputs while converting: {seen} "
                                 f"(exit {p.returncode}: {s(p.stderr.read()).strip()})"):
        ctx.eq(p.returncode, -signal.SIGINT, "several formats, SIGINT: traceconv ends by the signal")
        ctx.eq(sorted(os.listdir(d)), ["big.trace"], "several formats, SIGINT: no output nor temporary file left")
    os.remove(big)


if __name__ == "__main__":
    main()
