#!/usr/bin/env python3
"""Format names as people type them (issue 36, item 6; and --help, item 8).

- `-o svg`, `-o html`, `-o csv`, `-o chrome` and `-i atrace` name the outputs and the reader a
  user means (the flame graph, the HTML report, the CSV report, Chrome JSON, the systrace
  reader): each writes the same bytes as the registry's own name. Every other name that
  `--list-formats --json` lists for a variant or reader does the same, and no name means two
  formats (the check is against the canonical name's output, not against a copy of ours).
- A near miss is answered with the name meant: `-o perfeto` (did you mean 'perfetto'?),
  `-i atrce`, `--colour` (did you mean --colors?), `batch -o jsno`, `diff -o svgg`; the error
  lists the writers' variants too (report-html), exit 2.
- A repeated -o adds its formats: `-o json -o perfetto` is `-o json,perfetto` (conversions and
  batch), where a second -o used to replace the first in silence.
- `traceconv --help` starts with examples, not the operand rules, and lists --threads once.
Outputs are read with Python's json and xml parsers (readers we did not write)."""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

ctx = tclib.Ctx()
APP = os.path.join(ctx.source, "corpus", "app-startup.trace")
ATRACE = os.path.join(ctx.source, "corpus", "systrace", "capture.txt")


def s(b):
    return b.decode(errors="replace")


def stdout_of(args, what):
    r = ctx.run(args)
    ctx.eq(r.returncode, 0, f"{what}: exit status ({s(r.stderr).strip()})")
    return r.stdout


def check_the_names_of_the_issue():
    """The names the issue says users type, each the output the user most likely means."""
    for alias, canonical, looks in (("svg", "flamegraph", "svg"), ("SVG", "flamegraph", "svg"),
                                    ("html", "report-html", "html"), ("csv", "report-csv", "csv"),
                                    ("chrome", "json", "json"), ("trace-event", "json", "json")):
        got = stdout_of(["-o", alias, APP, "-"], f"-o {alias}")
        want = stdout_of(["-o", canonical, APP, "-"], f"-o {canonical}")
        ctx.check(got == want and len(got) > 1000, f"-o {alias} writes what -o {canonical} writes "
                                                   f"({len(got)} and {len(want)} bytes)")
        if not got:
            continue
        if looks == "svg":
            ctx.eq(ET.fromstring(got).tag, "{http://www.w3.org/2000/svg}svg", f"-o {alias}: an SVG")
        elif looks == "json":
            ctx.check("traceEvents" in json.loads(got), f"-o {alias}: Chrome JSON")
        elif looks == "csv":
            ctx.check(s(got).startswith("thread,tid,method,"), f"-o {alias}: the CSV report")
        else:
            ctx.check(s(got).lstrip().lower().startswith("<!doctype html>"), f"-o {alias}: a page")
    # -i atrace: the systrace reader, the same IR as -i systrace
    got = stdout_of(["-i", "atrace", "-o", "ir", ATRACE, "-"], "-i atrace")
    want = stdout_of(["-i", "systrace", "-o", "ir", ATRACE, "-"], "-i systrace")
    ctx.check(got == want and b"\nthread " in got, "-i atrace reads as -i systrace")
    # the default output name is the variant's own: app.svg, app.report.html
    d = ctx.fresh("names")
    shutil.copyfile(APP, os.path.join(d, "app.trace"))
    r = ctx.run(["-o", "svg,html", os.path.join(d, "app.trace")])
    ctx.eq(r.returncode, 0, f"-o svg,html: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["app.report.html", "app.svg", "app.trace"], "-o svg,html: the outputs")
    # the diff: -o svg is its flame graph
    got = stdout_of(["diff", "-o", "svg", APP, APP, "-"], "diff -o svg")
    want = stdout_of(["diff", "-o", "flamegraph", APP, APP, "-"], "diff -o flamegraph")
    ctx.check(got == want and got.startswith(b"<?xml"), "diff -o svg is diff -o flamegraph")


def check_every_listed_name():
    """Every alias --list-formats --json lists writes (or reads) as its format's own name."""
    tables = json.loads(ctx.run(["--list-formats", "--json"], check_rc=0).stdout)
    seen = {}
    for w in tables["writers"]:
        for v in w["variants"]:
            for name in [v["name"]] + v.get("aliases", []):
                ctx.check(name.lower() not in seen, f"-o {name}: names {v['name']} and {seen.get(name.lower())}")
                seen[name.lower()] = v["name"]
    ctx.check({"svg", "html", "csv", "chrome"} <= set(seen), f"the writers' names: {sorted(seen)}")
    small = os.path.join(ctx.source, "corpus", "open-at-end.trace")
    for name, variant in sorted(seen.items()):
        if name == variant or variant.startswith("pprof") or variant == "perfetto":
            continue  # binary outputs: compared below by their canonical name's bytes
        ctx.eq(stdout_of(["-o", name, small, "-"], f"-o {name}"),
               stdout_of(["-o", variant, small, "-"], f"-o {variant}"), f"-o {name} writes {variant}")
    for name in ("pb", "pftrace"):
        if name not in seen:
            ctx.fail(f"-o {name}: not a name of any output")
            continue
        d = ctx.fresh("binary-" + name)
        for n in (name, seen[name]):
            ctx.run(["-o", n, small, os.path.join(d, n + ".out")], check_rc=0)
        ctx.eq(open(os.path.join(d, name + ".out"), "rb").read(),
               open(os.path.join(d, seen[name] + ".out"), "rb").read(), f"-o {name} writes {seen[name]}")
    readers = {}
    for r in tables["readers"]:
        for name in [r["name"]] + r.get("aliases", []):
            ctx.check(name.lower() not in readers, f"-i {name}: names {r['name']} and {readers.get(name.lower())}")
            readers[name.lower()] = r["name"]
    ctx.check({"atrace", "ftrace", "perfetto", "chrome"} <= set(readers), f"the readers' names: {sorted(readers)}")


def check_near_misses():
    for args, needle in ((["-o", "perfeto", APP], "did you mean 'perfetto'?"),
                         (["-o", "flamegrpah", APP], "did you mean 'flamegraph'?"),
                         (["-i", "atrce", "-o", "json", APP], "did you mean 'atrace'?"),
                         (["--colour", "hot", "-o", "svg", APP], "did you mean --colors?"),
                         (["-o", "json", "--therad", "main", APP], "did you mean --thread?"),
                         (["diff", "-o", "svgg", APP, APP], "did you mean 'svg'?"),
                         (["batch", "-o", "jsno", "-O", os.path.join(ctx.work, "b"), APP], "did you mean 'json'?"),
                         (["batch", "--colour", "hot", "-o", "svg", "-O", os.path.join(ctx.work, "b"), APP],
                          "did you mean --colors?")):
        r = ctx.run(args)
        ctx.eq(r.returncode, 2, f"{' '.join(args[:3])}: a usage error")
        ctx.check(needle in s(r.stderr), f"{' '.join(args[:3])}: says {needle!r}: {s(r.stderr)!r}")
    r = ctx.run(["-o", "xyzzy", APP])
    ctx.check("did you mean" not in s(r.stderr) and "report-html" in s(r.stderr),
              f"-o xyzzy: no guess, and the list names the variants too: {s(r.stderr)!r}")


def check_repeated_o():
    d = ctx.fresh("repeated")
    src = os.path.join(d, "app.trace")
    shutil.copyfile(APP, src)
    r = ctx.run(["-o", "json", "-o", "perfetto", src])
    ctx.eq(r.returncode, 0, f"-o json -o perfetto: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["app.json", "app.pftrace", "app.trace"], "-o json -o perfetto: both outputs")
    r = ctx.run(["-o", "json", "-o", "json", src])
    ctx.check(r.returncode == 2 and "given twice" in s(r.stderr), f"-o json -o json: given twice: {s(r.stderr)!r}")
    out = os.path.join(d, "batch")
    r = ctx.run(["batch", "-q", "-o", "json", "-o", "folded", "-O", out, src])
    ctx.eq(r.returncode, 0, f"batch -o json -o folded: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(out)), ["app.folded", "app.json", "traceconv-batch.json"], "batch: both outputs")


def check_help():
    text = s(ctx.run(["--help"], check_rc=0).stdout)
    head = text.split("\n  -i, --input-format")[0]
    ctx.check("Examples:" in head and "traceconv -o " in head, f"--help starts with examples: {head!r}")
    ctx.check("Two operands are INPUT OUTPUT" not in head, "--help: the operand rules come after the options")
    ctx.check("Two operands are INPUT OUTPUT" in text, "--help: the operand rules are still there")
    ctx.eq(text.count("--threads"), 1, "--help lists --threads once")


check_the_names_of_the_issue()
check_every_listed_name()
check_near_misses()
check_repeated_o()
check_help()
sys.exit(ctx.done())
