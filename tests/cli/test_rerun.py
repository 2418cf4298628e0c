#!/usr/bin/env python3
"""Iterating is not tedious (issue 36, item 7): a conversion run again replaces its own earlier
output without -f, for every output variant the command lists (`--list-formats --json`), and
writes the same bytes; -f stays needed for any other existing file, and an original trace is
never overwritten.

- every variant, run twice without -f: exit 0 both times, the same bytes (as the first run's);
- a file the user wrote at the output's name (notes, no mark): exit 2, "use -f", untouched;
  with -f replaced;
- an earlier output changed since, in place (same size, or longer): no longer traceconv's own
  output as written, so -f is needed again;
- a copy of an earlier output under another name (cp: no extended attribute) of a variant with
  a mark in its bytes (json) is still known; one without (folded) needs -f;
- an original trace at the output's name (a Chrome JSON trace written by hand): refused even
  with -f, unchanged.
The batch side (a run again into the same OUTDIR: up to date) is test_batch_edges'."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

ctx = tclib.Ctx()
SRC = os.path.join(ctx.source, "corpus", "open-at-end.trace")
CHROME = b'{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":2}]}\n'


def s(b):
    return b.decode(errors="replace")


def fresh(name):
    d = ctx.fresh(name)
    shutil.copyfile(SRC, os.path.join(d, "a.trace"))
    return d


def read(p):
    with open(p, "rb") as f:
        return f.read()


def variants():
    tables = json.loads(ctx.run(["--list-formats", "--json"], check_rc=0).stdout)
    return [(v["name"], v["extension"]) for w in tables["writers"] for v in w["variants"]]


def check_every_variant_again():
    d = fresh("again")
    src = os.path.join(d, "a.trace")
    listed = variants()
    ctx.check(len(listed) >= 12, f"the variants: {listed}")
    for name, ext in listed:
        out = os.path.join(d, "a." + ext)
        r1 = ctx.run(["-q", "-o", name, src])
        ctx.eq(r1.returncode, 0, f"-o {name}: first run ({s(r1.stderr).strip()})")
        first = read(out) if os.path.exists(out) else None
        r2 = ctx.run(["-q", "-o", name, src])
        ctx.eq(r2.returncode, 0, f"-o {name} again without -f: its own output is made again ({s(r2.stderr).strip()})")
        if name not in ("pprof",):  # gzip's header holds no time, but compare the content for every one
            ctx.check(os.path.exists(out) and read(out) == first, f"-o {name} again: the same bytes")
    left = sorted(f for f in os.listdir(d) if f.startswith(".tc-"))
    ctx.eq(left, [], "no temporary file left")


def check_others_need_f():
    d = fresh("others")
    src = os.path.join(d, "a.trace")
    for name, ext in (("folded", "folded"), ("json", "json"), ("dot", "dot"), ("flamegraph", "svg")):
        out = os.path.join(d, "a." + ext)
        with open(out, "wb") as f:
            f.write(b"my notes\n")
        r = ctx.run(["-o", name, src])
        ctx.check(r.returncode == 2 and "use -f" in s(r.stderr), f"-o {name} over a user's file: refused: {s(r.stderr)!r}")
        ctx.eq(read(out), b"my notes\n", f"-o {name}: the user's file is untouched")
        ctx.run(["-q", "-f", "-o", name, src], check_rc=0)
        ctx.check(read(out) != b"my notes\n", f"-o {name} -f: replaced")
        # changed since it was written, in place: the same size, then longer
        data = read(out)
        with open(out, "r+b") as f:
            f.write(b"X")
        r = ctx.run(["-o", name, src])
        ctx.check(r.returncode == 2 and "use -f" in s(r.stderr),
                  f"-o {name} over its output changed in place (same size): -f needed: {s(r.stderr)!r}")
        with open(out, "ab") as f:
            f.write(b"\n# my note\n")
        r = ctx.run(["-o", name, src])
        ctx.check(r.returncode == 2 and "use -f" in s(r.stderr),
                  f"-o {name} over its output with a line added: -f needed: {s(r.stderr)!r}")
        ctx.run(["-q", "-f", "-o", name, src], check_rc=0)
        ctx.eq(read(out), data, f"-o {name} -f: made again")
    # a copy (no extended attribute): a mark in its bytes still says it is traceconv's json
    shutil.copyfile(os.path.join(d, "a.json"), os.path.join(d, "b.json"))
    r = ctx.run(["-q", "-o", "json", src, os.path.join(d, "b.json")])
    ctx.eq(r.returncode, 0, f"a copied json output: its mark says it is traceconv's ({s(r.stderr).strip()})")
    shutil.copyfile(os.path.join(d, "a.folded"), os.path.join(d, "b.folded"))
    r = ctx.run(["-o", "folded", src, os.path.join(d, "b.folded")])
    ctx.check(r.returncode == 2 and "use -f" in s(r.stderr),
              f"a copied folded output (no mark in its bytes): -f needed: {s(r.stderr)!r}")


def check_original_trace_never():
    d = fresh("original")
    src = os.path.join(d, "a.trace")
    out = os.path.join(d, "a.json")
    with open(out, "wb") as f:
        f.write(CHROME)
    for force in ([], ["-f"]):
        r = ctx.run([*force, "-o", "json", src])
        ctx.check(r.returncode == 2 and "is a trace" in s(r.stderr),
                  f"{' '.join(force)} -o json over an original trace: refused: {s(r.stderr)!r}")
        ctx.eq(read(out), CHROME, f"{' '.join(force)} -o json: the original trace is unchanged")


check_every_variant_again()
check_others_need_f()
check_original_trace_never()
sys.exit(ctx.done())
