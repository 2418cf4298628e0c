#!/usr/bin/env python3
"""report --html: the self-contained HTML profile report.

For every input (the project corpus, tests/json, tests/ir, TC_EXTRA_CORPUS), read by
parsers we did not write:

- the page is well-formed XML (xmllint --noout) and balanced HTML (Python's html.parser,
  every element closed in order, void elements aside); one <script> and no external
  anything (no src=, no on* attribute, links only to #anchors);
- its Content-Security-Policy allows exactly the page's styles and script: the SHA-256 of
  each <style> and <script> text, computed here with hashlib, is in the policy, with
  default-src 'none';
- the all-threads table and each thread's table show the rows of `report --csv` (checked
  against an independent model in test_report.py) in the same order: the name, calls +
  recursive, inclusive and exclusive wall and CPU µs; percentages agree with the section's
  span; parents/children lists add up (parents' outer calls and time = the method's
  calls and inclusive time; children + self = inclusive), as the profile's rules say;
- hostile names (</script>, <img onerror>, &, quotes, control bytes, C1 controls,
  noncharacters, invalid UTF-8) stay text, escaped as the model below says;
- --html with --csv is a usage error; the default name is INPUT-stem.report.html (also
  beside systrace's .html in -o systrace,report); the bench trace (tracegen --bench 64)
  gives a page under 20 MB.
"""
import glob
import hashlib
import html
import html.parser
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import reportlib as rl  # noqa: E402

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
SVG_LEAVES = {"stop", "rect"}  # self-closed in the embedded SVG (<rect/>)
EDGE_METHODS, EDGE_ROWS = 250, 40


# ---- the model of a name on the page ---------------------------------------------------------

def html_name(s):
    """A name as the page shows it (its text after HTML decoding), from the CSV's text of it
    (where bytes that are not UTF-8 are already U+FFFD, backslash and control characters
    visible escapes, C1 controls \\u0085): noncharacters as U+FFFD."""
    return "".join("\ufffd" if 0xFDD0 <= ord(c) <= 0xFDEF or (ord(c) & 0xFFFE) == 0xFFFE else c for c in s)


def shown_name(raw):
    """A name as the page shows it, from its text (bytes that are not UTF-8 already U+FFFD)."""
    return html_name(rl.text_escape(raw))


# ---- parsing the page ------------------------------------------------------------------------

class Page(html.parser.HTMLParser):
    """The page's structure: balance errors, scripts, styles, attributes, and its tables
    (class prof) as rows of cell texts; a name cell's text is its .name span."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors = [], []
        self.scripts, self.styles, self.attrs = [], [], []
        self.data = []          # the JSON blocks (<script type="application/json">), by id: never run
        self.tables = []       # [{"section": id, "thread": summary text, "rows": [...]}]
        self.section, self.thread_summary = None, None
        self._text_into = None  # ("script"/"style", list)
        self._cell = None       # current td of a prof row: {"text": [], "name": []}
        self._row = None
        self._in_name = 0
        self._prof_depth = None  # stack depth of the open prof table
        self._summary = None
        self.edges = {}          # row id -> list of (kind, cells) of its edges table
        self._edge_owner = None
        self._edge_row = None
        self._edge_cell = None
        self._edge_kind = None
        self.csp = None

    # structure
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.attrs.append((tag, attrs))
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a.get("content")
        if tag not in VOID:
            self.stack.append(tag)
        if tag in ("script", "style"):
            self._text_into = ("data:" + (a.get("id") or "") if a.get("type") == "application/json" else tag, [])
        if tag == "section":
            self.section = a.get("id")
        if tag == "summary" and self.section == "threads" and self._prof_depth is None:
            self._summary = []
        if tag == "table" and a.get("class") == "prof":
            self._prof_depth = len(self.stack)
            self.tables.append({"section": self.section, "thread": self.thread_summary, "rows": [], "heads": []})
        elif tag == "table" and a.get("class") == "edges":
            self._edge_owner = self._row
        if self._prof_depth is not None and self._edge_owner is None:
            depth = len(self.stack) - self._prof_depth
            if tag == "tr" and depth == 2 and self.stack[-2] == "tbody":  # table > tbody > tr
                self._row = {"id": a.get("id"), "cells": [], "edges": []}
            elif tag == "td" and depth == 3 and self._row is not None:
                self._cell = {"text": [], "name": [], "has_details": False}
                self._row["cells"].append(self._cell)
            elif tag == "th" and depth == 3:
                self.tables[-1]["heads"].append(a.get("aria-sort"))
        if self._edge_owner is not None:
            if tag == "tr":
                self._edge_row = {"class": a.get("class") or "", "cells": []}
                self._edge_owner["edges"].append(self._edge_row)
            elif tag in ("td", "th") and self._edge_row is not None:
                self._edge_cell = []
                self._edge_row["cells"].append(self._edge_cell)
        if tag == "details" and self._cell is not None:
            self._cell["has_details"] = True
        if tag == "span" and a.get("class") == "name":
            self._in_name += 1

    def handle_startendtag(self, tag, attrs):
        self.attrs.append((tag, attrs))
        if tag not in VOID and tag not in SVG_LEAVES:
            self.errors.append(f"<{tag}/> self-closed")
        if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy":
            self.csp = dict(attrs).get("content")

    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append(f"</{tag}>")
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        if self._edge_owner is not None and tag in ("td", "th"):
            self._edge_cell = None
        if self._edge_owner is not None and tag == "table":
            self._edge_owner = None
            self._edge_row = None
        elif self._prof_depth is not None:
            depth = len(self.stack) - self._prof_depth
            if tag == "td" and depth == 3:
                self._cell = None
            elif tag == "tr" and depth == 2 and self._row is not None:
                self.tables[-1]["rows"].append(self._row)
                self._row = None
            elif tag == "table" and depth == 0:
                self._prof_depth = None
        if tag == "span" and self._in_name:
            self._in_name -= 1
        if tag in ("script", "style") and self._text_into:
            kind, text = self._text_into[0], "".join(self._text_into[1])
            if kind.startswith("data:"):
                self.data.append((kind[5:], text))
            else:
                (self.scripts if tag == "script" else self.styles).append(text)
            self._text_into = None
        if tag == "summary" and self._summary is not None:
            self.thread_summary = "".join(self._summary)
            self._summary = None
        self.stack.pop()

    def handle_data(self, data):
        if self._text_into:
            self._text_into[1].append(data)
        if self._summary is not None:
            self._summary.append(data)
        if self._edge_cell is not None:
            self._edge_cell.append(data)
        elif self._cell is not None:
            self._cell["text"].append(data)
            if self._in_name:
                self._cell["name"].append(data)

    def close(self):
        super().close()
        if self.stack:
            self.errors.append(f"unclosed: {self.stack}")


def parse_page(ctx, label, path):
    r = ctx.oracle(["xmllint", "--noout", "--nonet", path])
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: xmllint --noout ({r.stderr.decode(errors='replace')[-400:]})")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        ctx.fail(f"{label}: not UTF-8: {e}")
        text = raw.decode("utf-8", errors="replace")
    p = Page()
    p.feed(text)
    p.close()
    ctx.eq(p.errors[:5], [], f"{label}: HTML structure")
    return raw, text, p


GROUPED = re.compile(r"-?\d{1,3}(,\d{3})*")


def num(s):
    """A figure of the page: thousands separators in every integer (1,234,567), whatever the locale."""
    s = s.strip().rstrip("%")
    if s == "-":
        return None
    if "." in s:
        return float(s)
    if not GROUPED.fullmatch(s):
        raise ValueError(f"{s!r} is not grouped by thousands (1,234,567)")
    return int(s.replace(",", ""))


def table_rows(t):
    """(name, calls+recursive, incl wall, excl wall, incl cpu, excl cpu) per row, as the CSV."""
    out = []
    for r in t["rows"]:
        c = r["cells"]
        name = "".join(c[1]["name"])
        v = [num("".join(x["text"])) for x in c[2:]]
        out.append((name, v[0] + v[1], v[2], v[4], v[6], v[8]))
    return out


# ---- checks ----------------------------------------------------------------------------------

def tree_data(ctx, label, p):
    """The call trees' JSON block, parsed by Python's json (None when it is missing or broken)."""
    blocks = [t for i, t in p.data if i == "pv-data"]
    if not ctx.eq(len(blocks), 1, f"{label}: one JSON block #pv-data"):
        return None
    try:
        return json.loads(blocks[0])
    except ValueError as e:
        ctx.fail(f"{label}: #pv-data is not JSON: {e}")
        return None


def check_isolation(ctx, label, raw, p):
    """One script and one JSON block (which no browser runs), no external anything, a CSP that
    lists exactly the page's hashes."""
    ctx.eq(len(p.scripts), 1, f"{label}: <script> elements that run")
    ctx.eq([i for i, _ in p.data], ["pv-data"], f"{label}: JSON blocks")
    ctx.eq(raw.count(b"<script"), 2, f"{label}: '<script' occurs twice in the bytes (the script, the JSON block)")
    for _, t in p.data:  # nothing in it can end the block or open a comment: no '<' at all
        ctx.check("<" not in t and "&" not in t, f"{label}: the JSON block holds no '<' or '&'")
    for tag, attrs in p.attrs:
        for k, v in attrs:
            if k.startswith("on") or k in ("src", "srcset", "action", "formaction", "style"):
                ctx.fail(f"{label}: <{tag} {k}=...>")
            if k in ("href", "xlink:href") and not (v or "").startswith("#"):
                ctx.fail(f"{label}: <{tag} {k}={v!r}>: a link that leaves the page")
    csp = p.csp or ""
    ctx.check(csp.startswith("default-src 'none';"), f"{label}: CSP default-src 'none': {csp[:80]}")
    policy = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.split()}
    want_style = sorted({"'sha256-%s'" % __import__("base64").b64encode(hashlib.sha256(s.encode()).digest()).decode()
                         for s in p.styles})
    want_script = sorted({"'sha256-%s'" % __import__("base64").b64encode(hashlib.sha256(s.encode()).digest()).decode()
                          for s in p.scripts})
    # a graph with nothing to draw (no counts) is left out after its style's hash is listed
    listed = policy.get("style-src", [])
    ctx.check(set(want_style) <= set(listed) and len(listed) <= len(want_style) + 2,
              f"{label}: style-src lists the hash of every <style>: {listed} vs {want_style}")
    ctx.eq(sorted(policy.get("script-src", [])), want_script, f"{label}: script-src lists the script's hash")
    ctx.check("'unsafe-inline'" not in csp and "nonce" not in csp and "http" not in csp, f"{label}: CSP {csp}")


def check_tables(ctx, label, p, groups):
    alls = [t for t in p.tables if t["section"] == "all"]
    threads = [t for t in p.tables if t["section"] == "threads"]
    want_all = groups.get("all", [])
    if not want_all:
        ctx.eq(len(alls), 0, f"{label}: no table without calls")
        return
    if not ctx.eq(len(alls), 1, f"{label}: one all-threads table"):
        return
    got = table_rows(alls[0])
    ctx.eq(got, [(html_name(w[0]),) + tuple(w[1:]) for w in want_all], f"{label}: all-threads rows = CSV rows")
    tids = [k for k in groups if k != "all"]
    ctx.eq(len(threads), len(tids), f"{label}: thread tables")
    for t, tid in zip(threads, tids):
        ctx.check(f"(tid {tid})" in (t["thread"] or ""), f"{label}: thread section {t['thread']!r} is tid {tid}")
        ctx.eq(table_rows(t), [(html_name(w[0]),) + tuple(w[1:]) for w in groups[tid]],
               f"{label}: thread {tid} rows = CSV rows")
    # index column and the edges lists: the first EDGE_METHODS rows have them, the rest not
    rows = alls[0]["rows"]
    ctx.eq([int("".join(r["cells"][0]["text"])) for r in rows], list(range(1, len(rows) + 1)),
           f"{label}: report indexes 1..n")
    ctx.eq([r["cells"][1]["has_details"] for r in rows], [i < EDGE_METHODS for i in range(len(rows))],
           f"{label}: parents/children for the first {EDGE_METHODS} methods")
    ctx.check(all(not r["cells"][1]["has_details"] for t in threads for r in t["rows"]),
              f"{label}: thread tables list no edges")
    ctx.eq(alls[0]["heads"].count("descending") + alls[0]["heads"].count("ascending"), 1,
           f"{label}: one column marked sorted (aria-sort)")


def check_edges(ctx, label, p, clock):
    """Each method's lists as the profile's rules say (values of the sort clock, µs rounded
    once per figure: sums agree within half a µs per term)."""
    alls = [t for t in p.tables if t["section"] == "all"]
    if not alls:
        return
    col = 2 if clock == "wall" else 3
    checked = 0
    for r in alls[0]["rows"][:EDGE_METHODS]:
        calls, incl = num("".join(r["cells"][2]["text"])), num("".join(r["cells"][4 if clock == "wall" else 8]["text"]))
        parts, part = {"parents": [], "self": [], "children": []}, None
        for e in r["edges"]:
            cells = ["".join(c) for c in e["cells"]]
            if e["class"] == "" and cells and cells[0] in ("parents", "children"):
                part = cells[0]
            elif e["class"] == "self":
                parts["self"].append((0, num(cells[col])))
            elif e["class"] in ("", "more") and part and len(cells) == 5:
                c = cells[1].split("/")[0]
                parts[part].append((num(c), num(cells[col])))
        if incl is None or not parts["parents"]:
            continue
        n = len(parts["parents"])
        ctx.eq(sum(c for c, _ in parts["parents"]), calls, f"{label}: row {r['id']}: parents' outer calls")
        ctx.check(abs(sum(t for _, t in parts["parents"]) - incl) <= (n + 1) / 2,
                  f"{label}: row {r['id']}: parents' time {sum(t for _, t in parts['parents'])} vs incl {incl}")
        kids = parts["children"] + parts["self"]
        ctx.check(abs(sum(t for _, t in kids) - incl) <= (len(kids) + 1) / 2,
                  f"{label}: row {r['id']}: children + self {sum(t for _, t in kids)} vs incl {incl}")
        ctx.check(len([1 for e in r["edges"] if e["class"] in ("", "nested")]) <= 4 * (EDGE_ROWS + 2),
                  f"{label}: row {r['id']}: lists cut at {EDGE_ROWS} rows")
        checked += 1
    return checked


def check_tree_data(ctx, label, p, rows):
    """The call trees' data against the CSV rows (checked against tracegen's model in test_report.py):
    per method name, the nodes' self times add up to its exclusive time and their calls to its
    calls + recursive calls; each thread's root is the sum of its top-level frames."""
    d = tree_data(ctx, label, p)
    if d is None:
        return
    clock = "cpu" if d["clock"] == "cpu" else "wall"
    nodes = [d["nodes"][i:i + 5] for i in range(0, len(d["nodes"]), 5)]
    ctx.eq(len(d["nodes"]) % 5, 0, f"{label}: five numbers a node")
    ctx.eq(sum(1 for n in nodes if n[0] == 0), len(d["threads"]), f"{label}: a root per thread listed")
    self_ns, calls = {}, {}
    for dep, m, c, _, s in nodes:
        if dep:
            name = d["methods"][m]
            self_ns[name] = self_ns.get(name, 0) + s
            calls[name] = calls.get(name, 0) + c
    want = {html_name(r["method"]): r for r in rows if r["thread"] == "all"}
    ctx.eq(sorted(calls), sorted(want), f"{label}: the tree's methods are the table's")
    for name, r in want.items():
        us = r["excl_cpu_us" if clock == "cpu" else "excl_wall_us"]
        if us is not None and abs(self_ns.get(name, 0) / 1000 - us) > 0.5 * max(1, len([1 for n in nodes if n[0] and d["methods"][n[1]] == name])):
            ctx.fail(f"{label}: {name!r}: self {self_ns.get(name, 0)} ns vs exclusive {us} µs")
        if calls.get(name) != r["calls"]:
            ctx.fail(f"{label}: {name!r}: calls {calls.get(name)} vs {r['calls']}")
    # the roots: each the sum of its depth-1 frames
    for i, n in enumerate(nodes):
        if n[0] == 0:
            top, j = 0, i + 1
            while j < len(nodes) and nodes[j][0] != 0:
                top += nodes[j][3] if nodes[j][0] == 1 else 0
                j += 1
            ctx.eq(n[3], top, f"{label}: thread root {i}: total = its top-level frames")


def clock_of(rows):
    return "wall" if any(r["incl_wall_us"] is not None for r in rows) else "cpu"


def convert(ctx, src, out, *opts):
    r = ctx.run(["-q", "-f", "-o", "report", *opts, src, out])
    return r


def inputs(ctx):
    return rl.corpus_inputs(ctx)


def check_every_input(ctx):
    edges_checked = 0
    for src in inputs(ctx):
        base = os.path.basename(src)
        page, rows_csv = os.path.join(ctx.work, base + ".report.html"), os.path.join(ctx.work, base + ".csv")
        rh, rc = convert(ctx, src, page, "--html"), convert(ctx, src, rows_csv, "--csv")
        ctx.eq(rh.returncode, rc.returncode, f"{base}: --html exit vs --csv exit ({rh.stderr.decode(errors='replace')[-200:]})")
        if rh.returncode or rc.returncode:
            continue
        raw, _, p = parse_page(ctx, base, page)
        check_isolation(ctx, base, raw, p)
        _, rows = rl.read_csv(rows_csv)
        check_tables(ctx, base, p, rl.csv_groups(rows))
        check_tree_data(ctx, base, p, rows)
        edges_checked += check_edges(ctx, base, p, clock_of(rows)) or 0
        ctx.check(f"{html.escape(base, quote=False)}: profile report (traceconv)</title>".encode() in raw
                  or b" (traceconv)</title>" in raw, f"{base}: the title carries traceconv's mark")
    ctx.check(edges_checked > 50, f"parents/children lists checked for {edges_checked} methods")


# ---- hostile names ---------------------------------------------------------------------------

HOSTILE = ["</script><script>window.pwned=1</script>", "<img src=x onerror=window.pwned=2>", "a&amp;b&",
           "q\"uote'apos", "new\nline", "tab\there", "back\\slash", "nul\x01ctl\x7f", "c1\x85next",
           "nonchar\ufffe\ufdd0", "]]>--><!--", "\u00e9t\u00e9 \U0001F600"]


def ir_escape(s):
    out = []
    for ch in s:
        o = ord(ch)
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or 0x7F <= o <= 0x9F or 0xFDD0 <= o <= 0xFDEF or (o & 0xFFFE) == 0xFFFE:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    return "".join(out)


def hostile_ir(path):
    """Each hostile name called once by main (thread "main<b>&\\nthread"), and a method with bytes FF FE."""
    lines = ["traceconv-ir 1", "trace clock=dual has_wall=1 has_cpu=1 pid=7 start_ns=0",
             f"thread 0 tid=7 records={2 * (len(HOSTILE) + 2)} name=\"{ir_escape('main<b>&' + chr(10) + 'thread')}\"",
             "method 0 id=0 name=\"main\""]
    for i, n in enumerate(HOSTILE, 1):
        lines.append(f"method {i} id=0 name=\"{ir_escape(n)}\"")
    bad = len(HOSTILE) + 1
    body = ["B t=0 m=0 d=0 ts=0 cpu=0"]
    t = 0
    for i in range(1, bad + 1):
        body.append(f"B t=0 m={i} d=1 ts={t} cpu={t // 2}")
        t += 1000 * i
        body.append(f"E t=0 m={i} d=1 ts={t} cpu={t // 2}")
    body.append(f"E t=0 m=0 d=0 ts={t} cpu={t // 2}")
    data = ("\n".join(lines) + "\n").encode() + f"method {bad} id=0 name=\"bad".encode() + b"\xff\xfe\"\n" + \
        ("\n".join(body) + "\n").encode()
    with open(path, "wb") as f:
        f.write(data)


def check_hostile(ctx):
    src = os.path.join(ctx.work, "hostile.ir.txt")
    hostile_ir(src)
    page, rows_csv = os.path.join(ctx.work, "hostile.report.html"), os.path.join(ctx.work, "hostile.csv")
    rh, rc = convert(ctx, src, page, "--html"), convert(ctx, src, rows_csv, "--csv")
    if not ctx.eq((rh.returncode, rc.returncode), (0, 0), f"hostile: exits ({rh.stderr!r})"):
        return
    raw, text, p = parse_page(ctx, "hostile", page)
    check_isolation(ctx, "hostile", raw, p)
    _, rows = rl.read_csv(rows_csv)
    groups = rl.csv_groups(rows)
    check_tables(ctx, "hostile", p, groups)
    names = [r[0] for r in table_rows([t for t in p.tables if t["section"] == "all"][0])]
    for n in HOSTILE:
        ctx.check(shown_name(n) in names, f"hostile: {n!r} shown as {shown_name(n)!r}: {names}")
    ctx.check("bad\ufffd\ufffd" in names, f"hostile: invalid UTF-8 as U+FFFD: {names}")
    ctx.check(all(b >= 0x20 or b in (0x09, 0x0A) for b in raw), "hostile: no control byte but LF and TAB (markup's)")
    for c in ("\x85", "\ufffe", "\ufdd0"):
        ctx.check(c not in text, f"hostile: {c!r} never raw")
    for markup in (b"<script><script>", b"window.pwned=1</script>", b"<img", b"&b&", b"]]>--><!--"):
        ctx.check(markup not in raw, f"hostile: {markup!r} occurs unescaped")
    d = tree_data(ctx, "hostile", p) or {"methods": [], "threads": []}
    for n in HOSTILE:  # the script sets them as text: the same characters as the markup shows
        ctx.check(shown_name(n) in d["methods"], f"hostile: JSON block: {n!r} as {shown_name(n)!r}")
    ctx.check("bad\ufffd\ufffd" in d["methods"], "hostile: JSON block: invalid UTF-8 as U+FFFD")
    ctx.eq([t["name"] for t in d["threads"]], ["main<b>&\\nthread"], "hostile: JSON block: the thread name")
    ctx.check("Thread main&lt;b&gt;&amp;\\nthread" in text.replace('<span class="thread-name">', "").replace(
        "</span>", ""), "hostile: the thread name escaped")


# ---- options, names, size --------------------------------------------------------------------

def check_options(ctx):
    src = os.path.join(ctx.corpus, "app-startup.trace")
    if not os.path.exists(src):
        src = sorted(glob.glob(os.path.join(ctx.source, "tests", "ir", "*.ir.txt")))[0]
    r = ctx.run(["-o", "report", "--html", "--csv", src, os.path.join(ctx.work, "both.txt")])
    ctx.eq(r.returncode, 2, "--html --csv: a usage error")
    ctx.check(b"'csv' and 'html' cannot be used together" in r.stderr, f"--html --csv: message {r.stderr!r}")
    ctx.check(not os.path.exists(os.path.join(ctx.work, "both.txt")), "--html --csv: nothing written")
    d = os.path.join(ctx.work, "names")
    os.makedirs(d, exist_ok=True)
    stem = os.path.basename(src).split(".")[0]
    local = os.path.join(d, os.path.basename(src))
    with open(src, "rb") as f, open(local, "wb") as g:
        g.write(f.read())
    r = ctx.run(["-q", "-o", "report", "--html", local])
    ctx.eq(r.returncode, 0, f"-o report --html INPUT ({r.stderr!r})")
    ctx.check(os.path.exists(os.path.join(d, stem + ".report.html")), f"default name {stem}.report.html")
    r = ctx.run(["-q", "-f", "-o", "systrace,report", "--html", local])
    ctx.eq(r.returncode, 0, f"-o systrace,report --html ({r.stderr!r})")
    for ext in ("html", "report.html"):
        ctx.check(os.path.exists(os.path.join(d, f"{stem}.{ext}")), f"-o systrace,report --html writes {stem}.{ext}")
    with open(os.path.join(d, stem + ".report.html"), "rb") as f:
        ctx.check(b'<table class="prof">' in f.read(), "the report's page is not overwritten by systrace's")
    # batch names the page the same way
    r = ctx.run(["batch", "-q", "-o", "report", "--html", "-O", os.path.join(ctx.work, "batch"), local])
    ctx.eq(r.returncode, 0, f"batch --html ({r.stderr!r})")
    ctx.check(os.path.exists(os.path.join(ctx.work, "batch", stem + ".report.html")), "batch: NAME.report.html")
    # the option is the report's: another writer warns that it is unused
    r = ctx.run(["-f", "-o", "folded", "--html", local, os.path.join(d, "x.folded")])
    ctx.check(b"unused-option" in r.stderr, f"--html with -o folded: unused-option ({r.stderr[-300:]!r})")


def check_bench_size(ctx):
    if not ctx.tracegen:
        ctx.fail("--tracegen is not given")
        return
    trace = os.path.join(ctx.work, "bench64.trace")
    r = subprocess.run([ctx.tracegen, "--bench", "64", trace], capture_output=True)
    if not ctx.eq(r.returncode, 0, f"tracegen --bench 64 ({r.stderr!r})"):
        return
    page = os.path.join(ctx.work, "bench64.report.html")
    p = subprocess.Popen([ctx.traceconv, "-q", "-f", "-o", "report", "--html", trace, page])
    _, status, usage = os.wait4(p.pid, 0)
    ctx.eq(os.waitstatus_to_exitcode(status), 0, "bench: report --html")
    size = os.path.getsize(page)
    rss_mb = usage.ru_maxrss / 1024
    print(f"bench 64 MB: page {size / 1e6:.1f} MB, peak RSS {rss_mb:.0f} MB")
    # 18 MB of tables and flame graphs, 3.3 MB of call-tree data (distinct paths)
    ctx.check(size < 24e6, f"bench: the page is {size / 1e6:.1f} MB (< 24 MB)")
    sanitized = tclib.is_sanitized(ctx.traceconv)  # shadow memory: the bound holds for a normal build only
    ctx.check(sanitized or rss_mb < 64, f"bench: peak RSS {rss_mb:.0f} MB (< 64 MB)")
    os.unlink(trace)


def main():
    ctx = tclib.Ctx()
    check_bench_size(ctx)  # first: a child forked from a big Python process counts its pages in ru_maxrss
    check_every_input(ctx)
    check_hostile(ctx)
    check_options(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
