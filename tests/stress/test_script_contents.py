#!/usr/bin/env python3
"""Issue 38, item 12: no `<script`, `</script` or `<!--` from the input, in any case, inside any
script element of any HTML output. A name `</ScRiPt><!--<script>` (method, thread and process
name, and --title) goes through every output that has script elements: `-o systrace` (its
trace-data blocks, the one place input text is written into a script: escape.h's script-data
rule), `-o report --html` (its script and its JSON data block), `-o flamegraph` and `diff -o
flamegraph` (the SVG's script). Each output is parsed with Python's html.parser, which ends a
script element where a browser does; the contents of every script element must hold none of
the three sequences (case-insensitive), and there must be as many script elements as the
writer writes (a name that ended one early would make more). The systrace HTML must read back
through traceconv's own systrace reader with the documented substitution (doc/formats.md,
systrace output: a `\\` after each such `<`): `<\\/ScRiPt><\\!--<\\script>`.
"""
import html.parser
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

HOSTILE = "</ScRiPt><!--<script>"
SHOWN = "<\\/ScRiPt><\\!--<\\script>"  # doc/formats.md, systrace output
BAD = ("<script", "</script", "<!--")


class Scripts(html.parser.HTMLParser):
    """The contents of every script element, as an HTML parser cuts them."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.scripts, self.open = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.open = []

    def handle_endtag(self, tag):
        if tag == "script" and self.open is not None:
            self.scripts.append("".join(self.open))
            self.open = None

    def handle_data(self, data):
        if self.open is not None:
            self.open.append(data)


def ir_input(path, name):
    lit = json.dumps(name)
    lines = ["traceconv-ir 1", "trace clock=dual has_wall=1 has_cpu=1 pid=42 start_ns=0", f"process {lit}",
             f"thread 0 tid=42 records=4 name={lit}", f"method 0 id=0 name={lit}", 'method 1 id=0 name="run"',
             "B t=0 m=1 ts=0 cpu=0", "B t=0 m=0 ts=1000 cpu=500", "E t=0 m=0 ts=5000 cpu=2500", "E t=0 m=1 ts=9000 cpu=4000"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def check_page(ctx, what, path, scripts):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    p = Scripts()
    p.feed(text)
    p.close()
    ctx.eq(len(p.scripts), scripts, f"{what}: script elements as html.parser cuts them")
    for i, body in enumerate(p.scripts):
        found = [b for b in BAD if b in body.lower()]
        ctx.check(not found, f"{what}: script element {i} holds {found}")
    return p.scripts


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.work, "hostile.ir.txt")
    ir_input(src, HOSTILE)
    runs = [("systrace", ["-o", "systrace"], "out.html", 2),
            ("report --html", ["-o", "report", "--html", "--title", HOSTILE], "out.report.html", 2),
            ("flamegraph", ["-o", "flamegraph", "--title", HOSTILE], "out.svg", 1)]
    for what, opts, name, scripts in runs:
        out = os.path.join(ctx.work, name)
        r = ctx.run(["-q", "-f", *opts, src, out])
        if ctx.check(r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr[-300:]!r}"):
            bodies = check_page(ctx, what, out, scripts)
            if what == "systrace":
                ctx.check(any(SHOWN in b for b in bodies), f"{what}: the name as {SHOWN!r} in a trace-data block")
    out = os.path.join(ctx.work, "diff.svg")
    r = ctx.run(["diff", "-q", "-f", "-o", "flamegraph", "--title", HOSTILE, src, src, out])
    if ctx.check(r.returncode == 0, f"diff -o flamegraph: exit {r.returncode}: {r.stderr[-300:]!r}"):
        check_page(ctx, "diff flamegraph", out, 1)

    # the systrace HTML reads back through our systrace reader: the name with the documented '\'s
    back = os.path.join(ctx.work, "back.ir.txt")
    r = ctx.run(["-q", "-f", "-i", "systrace", "-o", "ir", os.path.join(ctx.work, "out.html"), back])
    if ctx.check(r.returncode == 0, f"systrace read back: {r.stderr[-300:]!r}"):
        with open(back, encoding="utf-8") as f:
            ir = f.read()
        methods = [json.loads(m) for m in re.findall(r'^method .* name=(".*")$', ir, re.M)]
        threads = [json.loads(m) for m in re.findall(r'^thread .* name=(".*")$', ir, re.M)]
        ctx.check(SHOWN in methods, f"systrace read back: method {SHOWN!r} in {methods}")
        ctx.check(SHOWN in threads, f"systrace read back: thread {SHOWN!r} in {threads}")
    ctx.done()


if __name__ == "__main__":
    main()
