#!/usr/bin/env python3
"""The selection written down (issue 36, item 5): every output records the selection it was made
with, named as the options are ("thread main, since 1.2s, until 1.4s"), and the report's facts
are those of the selection: the window's duration, the threads kept (of how many).

The input is corpus/app-startup.trace (six threads over 1.4744 s, tracegen's facts: the trace's
span and its threads come from app-startup.facts.json, the window's length from the options
themselves, never from traceconv). Each output is read by a reader we did not write: Python's
json and html.parser, ElementTree for SVG, protoc with the upstream Perfetto schema, go tool
pprof's -comments, Graphviz's dot. Also:

- a thread name given as markup (`--thread '[<b>m]ain'`) is text in the HTML report and the SVG
  (escaped as the last step), not an element;
- every option that --list-formats --json marks "selection" appears in the command's summary
  line when given (so an option marked later is recorded with no change here); a default
  given (--weight wall) records nothing, as it changes nothing;
- the diff flame graph names its clock from the clocks compared: thread CPU for a CPU-only
  input (corpus/v2-threadcpu.trace) even without --weight cpu, and its threads;
- batch's summary carries each member's selection."""
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_perfetto  # noqa: E402  (its protoc text parser)

ctx = tclib.Ctx()
APP = os.path.join(ctx.corpus, "app-startup.trace")
FACTS = json.load(open(os.path.join(ctx.corpus, "app-startup.facts.json")))
SEL = ["--thread", "main", "--since", "1.2s", "--until", "1.4s"]
SEL_TEXT = "thread main, since 1.2s, until 1.4s"
WINDOW_US = 1400000 - 1200000  # from the options
TRACE_US = FACTS["trace_end_us"] - FACTS["trace_start_us"]
N_THREADS = len(FACTS["threads"])
SVG = "{http://www.w3.org/2000/svg}"


def s(b):
    return b.decode(errors="replace")


def out_path(name):
    return os.path.join(ctx.work, name)


def convert(fmt, name, extra=SEL, src=APP):
    path = out_path(name)
    r = ctx.run(["-q", "-f", "-o", fmt, *extra, src, path])
    ctx.eq(r.returncode, 0, f"-o {fmt} {' '.join(extra)}: exit status ({s(r.stderr).strip()})")
    return path


class Facts(html.parser.HTMLParser):
    """The rows of the report page's facts table, as text, and the selection line's text."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell, self.tags = {}, [], None, []
        self.in_selection = False
        self.selection = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("th", "td"):
            self.cell = ""
        if tag == "p" and ("class", "selection") in attrs:
            self.in_selection = True

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        if tag == "tr":
            if len(self.row) == 2:
                self.rows.setdefault(self.row[0], self.row[1])
            self.row = []
        if tag == "p":
            self.in_selection = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.in_selection:
            self.selection += data


def check_report_text():
    text = open(convert("report", "sel.txt"), encoding="utf-8").read()
    head = text.split("\n\n")[1]
    fields = dict(re.findall(r"^(\w[\w ]*?) {2,}(.*)$", head, re.M))
    ctx.eq(fields.get("selection"), SEL_TEXT, "report: the selection line")
    # the text report groups its figures by thousands (issue 36, item 8), as the page does
    ctx.eq(fields.get("duration"), f"{WINDOW_US:,} us (the window, from {1200000:,} us; the trace lasts {TRACE_US:,} us)",
           "report: the duration is the window's")
    ctx.eq(fields.get("threads"), f"1 (kept, of {N_THREADS})", "report: the threads kept, of how many")
    text = open(convert("report", "all.txt", extra=[]), encoding="utf-8").read()
    ctx.check("selection" not in text.split("\n\n")[1], "report without a selection: no selection line")
    ctx.check(f"\nduration    {TRACE_US:,} us\n" in text and f"\nthreads     {N_THREADS:,}\n" in text,
              "report without a selection: the trace's duration and threads")


def check_report_html():
    p = Facts()
    p.feed(open(convert("report-html", "sel.report.html"), encoding="utf-8").read())
    ctx.eq(p.rows.get("selection"), SEL_TEXT, "report-html: the selection fact")
    ctx.eq(p.selection, "Selection: " + SEL_TEXT, "report-html: the selection under the title")

    def grouped(n):
        return f"{n:,}"
    ctx.eq(p.rows.get("duration"), f"{grouped(WINDOW_US)} µs (the window, from {grouped(1200000)} µs; "
                                   f"the trace lasts {grouped(TRACE_US)} µs)", "report-html: the window's duration")
    ctx.eq(p.rows.get("threads"), f"1 (kept, of {N_THREADS})", "report-html: the threads kept")
    # a thread spec of markup is text, not an element
    p = Facts()
    page = open(convert("report-html", "markup.report.html", extra=["--thread", "[<b>m]ain"]), encoding="utf-8").read()
    p.feed(page)
    ctx.eq(p.rows.get("selection"), "thread [<b>m]ain", "report-html: a markup spec is shown as text")
    ctx.check("<b>m]" not in page, "report-html: the markup spec is escaped")


def check_json():
    doc = json.load(open(convert("json", "sel.json"), encoding="utf-8"))
    ctx.eq(doc.get("otherData", {}).get("selection"), SEL_TEXT, "json: otherData.selection")
    doc = json.load(open(convert("json", "rev.json", extra=["--thread", "main", "--reverse"]), encoding="utf-8"))
    ctx.eq(doc.get("otherData", {}).get("selection"), "thread main", "json: --reverse, which it does not read, is not in it")
    doc = json.load(open(convert("json", "all.json", extra=[]), encoding="utf-8"))
    ctx.check("selection" not in doc.get("otherData", {}), "json without a selection: none recorded")


def check_speedscope():
    doc = json.load(open(convert("speedscope", "sel.speedscope.json"), encoding="utf-8"))
    ctx.eq(doc.get("name"), f"app-startup.trace ({SEL_TEXT})", "speedscope: the document's name")


def check_flamegraph():
    root = ET.parse(convert("flamegraph", "sel.svg", extra=SEL + ["--reverse"])).getroot()
    sub = [t for t in root.iter(SVG + "text") if t.get("id") == "subtitle"]
    text = "".join(sub[0].itertext()) if sub else ""
    ctx.check(text.endswith("; " + SEL_TEXT + ", reverse"), f"flamegraph: the subtitle names the selection: {text!r}")
    root = ET.parse(convert("flamegraph", "markup.svg", extra=["--thread", "[<b>m]ain"])).getroot()
    sub = [t for t in root.iter(SVG + "text") if t.get("id") == "subtitle"]
    ctx.check(sub and "".join(sub[0].itertext()).endswith("; thread [<b>m]ain") and not list(sub[0]),
              "flamegraph: a markup spec is text in the subtitle")


def check_systrace_dot():
    text = open(convert("systrace-text", "sel.systrace.txt"), encoding="utf-8").read()
    ctx.check(f"\n# selection: {SEL_TEXT}\n" in text.split("TASK-PID")[0], "systrace-text: the header's selection line")
    dot = convert("dot", "sel.dot")
    r = ctx.oracle(["dot", "-Tsvg", dot])
    if r is not None and ctx.eq(r.returncode, 0, "dot -Tsvg"):
        texts = ["".join(t.itertext()) for t in ET.fromstring(r.stdout).iter(SVG + "text")]
        ctx.check("selection: " + SEL_TEXT in texts, f"dot: the graph's label names the selection: {texts[:4]}")


def check_perfetto():
    packets = test_perfetto.decode(ctx, convert("perfetto", "sel.pftrace"))
    facts = {}
    for p in packets or []:
        te = test_perfetto.one(p, "track_event") or {}
        if "traceconv" in te.get("categories", []):
            for a in te.get("debug_annotations", []):
                facts[test_perfetto.one(a, "name")] = test_perfetto.one(a, "string_value")
    ctx.eq(facts.get("selection"), SEL_TEXT, "perfetto: the facts instant's selection")
    ctx.check(facts.get("generator", "").startswith("traceconv"), f"perfetto: the facts instant found: {facts}")


def check_pprof():
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    r = ctx.oracle(["go", "tool", "pprof", "-comments", convert("pprof", "sel.pb.gz")], env=env)
    if r is not None and ctx.eq(r.returncode, 0, f"go tool pprof -comments: {s(r.stderr)[:300]}"):
        ctx.check("selection: " + SEL_TEXT in s(r.stdout).splitlines(), f"pprof: a comment: {s(r.stdout)!r}")


def check_every_selection_option():
    """Each option marked "selection" is recorded when given, by its name, in the order given."""
    tables = json.loads(ctx.run(["--list-formats", "--json"], check_rc=0).stdout)
    rows = {}
    for o in tables["options"] + [o for w in tables["writers"] for o in w["options"]]:
        if o.get("selection"):
            rows.setdefault(o["name"], o)
    ctx.check({"thread", "since", "until", "focus", "ignore", "ignore-idle", "weight", "reverse"} <= set(rows),
              f"the selection options: {sorted(rows)}")
    for name, o in sorted(rows.items()):
        if o["type"] == "bool":
            args, want = [f"--{name}"], name
        elif o["type"] == "enum":
            value = [c for c in o["choices"] if c != o.get("default")][0]
            args, want = [f"--{name}", value], f"{name} {value}"
        elif o["type"] == "duration":
            args, want = [f"--{name}", "0.25s"], f"{name} 250ms"
        elif name == "thread":
            args, want = [f"--{name}", "main"], f"{name} main"
        else:  # a method: focus, ignore and any such option to come
            args, want = [f"--{name}", "com.example.shop.ShopApp.onCreate"], f"{name} com.example.shop.ShopApp.onCreate"
        if name == "since":  # given after --until, said in the tables' order
            args, want = ["--until", "1s", *args], f"{want}, until 1s"
        r = ctx.run(["-o", "report", *args, APP, os.devnull])
        line = s(r.stderr)
        ctx.check(r.returncode == 0 and f"; selection: {want}" in line, f"--{name}: in the summary line: {line!r}")
    # one selection, one text, whatever the order of the flags
    a = json.load(open(convert("json", "order-a.json", extra=SEL)))["otherData"].get("selection")
    b = json.load(open(convert("json", "order-b.json", extra=SEL[4:] + SEL[2:4] + SEL[:2])))["otherData"].get("selection")
    ctx.eq((a, b), (SEL_TEXT, SEL_TEXT), "the same selection in another order of flags: the same text")
    r = ctx.run(["-o", "report", "--weight", "wall", APP, os.devnull])
    ctx.check(r.returncode == 0 and "selection" not in s(r.stderr), f"--weight wall (the default): nothing: {s(r.stderr)!r}")


def check_diff_clock():
    cpu_only = os.path.join(ctx.corpus, "v2-threadcpu.trace")
    path = out_path("cpu.diff.svg")
    r = ctx.run(["diff", "-q", "-f", "-o", "flamegraph", cpu_only, cpu_only, path])
    ctx.eq(r.returncode, 0, f"diff -o flamegraph on a CPU-only input ({s(r.stderr).strip()})")
    root = ET.parse(path).getroot()
    sub = [t for t in root.iter(SVG + "text") if t.get("id") == "subtitle"]
    text = "".join(sub[0].itertext()) if sub else ""
    ctx.check("thread CPU time in µs" in text and "wall time" not in text, f"diff flamegraph: its clock: {text!r}")
    ctx.check("all threads" in text, f"diff flamegraph: its threads: {text!r}")
    r = ctx.run(["diff", "-q", "-f", "-o", "flamegraph", "--thread", "main", APP, APP, path])
    root = ET.parse(path).getroot()
    sub = [t for t in root.iter(SVG + "text") if t.get("id") == "subtitle"]
    text = "".join(sub[0].itertext()) if sub else ""
    ctx.check("wall time in µs, thread main," in text, f"diff flamegraph: wall, and the thread: {text!r}")


def check_batch():
    out = out_path("batch")
    r = ctx.run(["batch", "-q", "-f", "-o", "json", "-O", out, *SEL, APP])
    ctx.eq(r.returncode, 0, f"batch: exit status ({s(r.stderr).strip()})")
    doc = json.load(open(os.path.join(out, "traceconv-batch.json")))
    member = doc["members"][0] if doc.get("members") else {}
    ctx.eq(member.get("selection"), SEL_TEXT, "batch: the member's selection")


check_report_text()
check_report_html()
check_json()
check_speedscope()
check_flamegraph()
check_systrace_dot()
check_perfetto()
check_pprof()
check_every_selection_option()
check_diff_clock()
check_batch()
sys.exit(ctx.done())
