"""Readers of the report writer's outputs (text and CSV) and the model the
tests compare them with, computed from tracegen's facts (corpus/*.facts.json,
"profile"), never from traceconv.  Shared by test_report.py and test_dot.py.

The text parser also reads dmtracedump's own inclusive section (the golden
output of DMTRACEDUMP-REPORT.md §7): the report keeps that layout."""
import csv
import glob
import io
import os
import re

CSV_HEADER = "thread,tid,method,calls,incl_wall_us,excl_wall_us,incl_cpu_us,excl_cpu_us"
RULE = "=" * 70


# -- names -------------------------------------------------------------------

def method_label(m):
    """A facts method as the report names it: 'pkg.Class.method (sig)ret', 'unknown.0x1c' (as every writer)."""
    if m["unknown"]:
        return f"unknown.{m['id']}"
    s = m["class"] + "." + m["name"]
    return s + " " + m["sig"] if m["sig"] else s


def text_escape(s):
    """The report's text form of a name (escape.h's text rule: backslash and control characters
    escaped, C1 controls as \\u0085); also the CSV's and the folded stacks' form of a name whose
    bytes that are not UTF-8 are already U+FFFD."""
    out = []
    for ch in s:
        o = ord(ch)
        if 0x80 <= o <= 0x9F:
            out.append("\\u%04X" % o)
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02X" % o)
        else:
            out.append(ch)
    return "".join(out)


def visible_name(s):
    """A name as the HTML report and the dot call graph show it (escape.h's TCI_ESC_VISIBLE), from
    its text where bytes that are not UTF-8 are already U+FFFD: backslash and control characters
    as the text report's escapes, C1 controls as \\u0085, noncharacters as U+FFFD."""
    out = []
    for ch in s:
        o = ord(ch)
        if 0x80 <= o <= 0x9F:
            out.append("\\u%04X" % o)
        elif 0xFDD0 <= o <= 0xFDEF or (o & 0xFFFE) == 0xFFFE:
            out.append("\ufffd")
        else:
            out.append(text_escape(ch))
    return "".join(out)


def sort_tuple(m):
    """The report's tie order for a facts method: class, name, signature (bytes)."""
    if m["unknown"]:
        return (b"", ("unknown." + m["id"]).encode(), b"")
    return (m["class"].encode(), m["name"].encode(), m["sig"].encode())


# -- CSV ---------------------------------------------------------------------

def csv_count(header):
    """The event a count profile's CSV counts ("cycles:HG" of its incl_cycles:HG column), or None."""
    cols = next(csv.reader([header]))
    return cols[4][5:] if len(cols) > 4 and cols[4].startswith("incl_") and cols[4] != "incl_wall_us" else None


def read_csv(path):
    """(header line, rows as dicts with ints or None). A count profile's columns incl_<event> and
    excl_<event> are read as incl_wall_us and excl_wall_us, where the report holds its counts
    (csv_count(header) names the event)."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    header = text.split("\n", 1)[0]
    count = csv_count(header)
    rows = []
    for r in csv.DictReader(io.StringIO(text, newline="")):
        if count is not None:
            r["incl_wall_us"], r["excl_wall_us"] = r.pop("incl_" + count), r.pop("excl_" + count)
        for k in ("calls", "incl_wall_us", "excl_wall_us", "incl_cpu_us", "excl_cpu_us"):
            r[k] = int(r[k]) if r[k] != "" else None
        rows.append(r)
    return header, rows


def csv_groups(rows):
    """{'all' or tid (int): [(method, calls, incl_wall, excl_wall, incl_cpu, excl_cpu), ...] in file order}."""
    out = {}
    for r in rows:
        key = "all" if r["thread"] == "all" and r["tid"] == "" else int(r["tid"])
        out.setdefault(key, []).append((r["method"], r["calls"], r["incl_wall_us"], r["excl_wall_us"],
                                        r["incl_cpu_us"], r["excl_cpu_us"]))
    return out


def facts_rows(facts, pm):
    """The same tuples from a facts list of per-method figures."""
    ms = facts["profile"]["methods"]
    return [(method_label(ms[r["method"]]), r["calls"] + r["recursive_calls"], r["incl_wall_us"], r["excl_wall_us"],
             r["incl_cpu_us"], r["excl_cpu_us"]) for r in pm]


# -- text ----------------------------------------------------------------------

# The text's counts and times are grouped by thousands ("1,234,567"); dmtracedump's own output,
# read by the same parsers, is not: both are read here, and grouped() says whether a cell is
# written as Python's format(n, ",") writes it (the model of the grouping).
N = r"-?\d[\d,]*"
ROW_RE = re.compile(r"^\[(\d+)\]\s+(\d[\d,]*)\+(\d[\d,]*)" + r"\s+(\S+)" * 10 + r"  (.*)$")
SPAN_RE = re.compile(r"^  (span|in methods)\s+wall (-|" + N + r")(?: us)?, cpu (-|" + N + r")(?: us)?$")
COUNT_SPAN_RE = re.compile(r"^  (span|in methods)\s+(" + N + r") (.+)$")  # a count profile's: "12,345 cycles:HG"
METHOD_RE = re.compile(r"^\[(\d+)\]\s+(\S+%|-)\s+(\d[\d,]*)\+(\d[\d,]*)\s+(" + N + r") (.*)$")
EXCL_RE = re.compile(r"^\s+(\S+%|-)\s+excl\s+(" + N + r")(?: (.*))?$")
EDGE_RE = re.compile(r"^ {15}(.{6}) +\[(\d+)\] +(\d[\d,]*)/(\d[\d,]*) +(" + N + r") (.*)$")
FILE_RE = re.compile(r"  \[[^\]]*\]$")


def num(s):
    return None if s == "-" else int(s.replace(",", ""))


def grouped(s):
    """Whether a number's text is grouped by thousands as Python writes it ("-" is no number)."""
    return s == "-" or s == format(int(s.replace(",", "")), ",")


def pct(s):
    return None if s.strip() in ("-", "") else float(s.strip().rstrip("%"))


def parse_text(text):
    """{'header': {key: value}, 'sections': [{'title', 'span', 'busy', 'rows': [...]}],
    'calls': {method name: block} from the parents-and-children section}."""
    lines = text.split("\n")
    out = {"header": {}, "sections": [], "calls": None, "calls_total": None}
    i = 0
    while i < len(lines) and lines[i] != RULE:
        m = re.match(r"^(\w[\w ]*?)\s{2,}(.*)$", lines[i])
        if m:
            out["header"][m.group(1)] = m.group(2)
        i += 1
    chunks, cur = [], None
    for line in lines[i:]:
        if line == RULE:
            cur = []
            chunks.append(cur)
        elif cur is not None:
            cur.append(line)
    for chunk in chunks:
        body = [l for l in chunk]
        title = next((l for l in body if l), "")
        if title.startswith("Parents and children"):
            out["calls"] = parse_calls(body)
            continue
        sec = {"title": title, "rows": [], "span": None, "busy": None}
        for line in body:
            m = SPAN_RE.match(line)
            if m:
                sec["span" if m.group(1) == "span" else "busy"] = (num(m.group(2)), num(m.group(3)))
                sec.setdefault("texts", []).extend([m.group(2), m.group(3)])
                continue
            m = COUNT_SPAN_RE.match(line)
            if m:  # counts, in the wall place; no CPU figure
                sec["span" if m.group(1) == "span" else "busy"] = (num(m.group(2)), None)
                sec.setdefault("texts", []).append(m.group(2))
                sec["count"] = m.group(3)
                continue
            m = ROW_RE.match(line)
            if m:
                g = m.groups()
                sec["rows"].append({"index": int(g[0]), "calls": num(g[1]), "rec": num(g[2]),
                                    "texts": [g[1], g[2], g[3], g[5], g[7], g[9], g[11], g[12]],
                                    "incl_wall": num(g[3]), "incl_wall_pct": pct(g[4]),
                                    "excl_wall": num(g[5]), "excl_wall_pct": pct(g[6]),
                                    "incl_cpu": num(g[7]), "incl_cpu_pct": pct(g[8]),
                                    "excl_cpu": num(g[9]), "excl_cpu_pct": pct(g[10]),
                                    "wall_per_call": num(g[11]), "cpu_per_call": num(g[12]), "name": g[13]})
        out["sections"].append(sec)
    return out


def parse_calls(lines):
    """dmtracedump's inclusive layout (ours and its own): per method name, its line and lists.
    Each list entry: (name, calls, of_total, usecs); 'nested' lists come after a '+++' line."""
    blocks = {}
    block = None
    for line in lines:
        if line.startswith("-----"):
            block = {"parents": [], "parents_nested": [], "children": [], "children_nested": [],
                     "state": "parents"}
            continue
        if block is None:
            continue
        if line.startswith(" " * 15 + "+++"):
            block["state"] += "_nested"
            continue
        m = METHOD_RE.match(line)
        if m:
            name = FILE_RE.sub("", m.group(6))
            block.update(name=name, index=int(m.group(1)), pct_total=pct(m.group(2)), calls=num(m.group(3)),
                         rec=num(m.group(4)), incl=num(m.group(5)), texts=[m.group(3), m.group(4), m.group(5)])
            blocks[name] = block
            block["state"] = "self"
            continue
        m = EXCL_RE.match(line)
        if m and block["state"] == "self":
            block["excl"] = num(m.group(2))
            block["texts"].append(m.group(2))
            block["excl_pct"] = pct(m.group(1))
            block["state"] = "children"
            continue
        m = EDGE_RE.match(line)
        if m:
            block[block["state"]].append((m.group(6), num(m.group(3)), num(m.group(4)), num(m.group(5))))
            block.setdefault("edge_texts", []).extend([m.group(3), m.group(4), m.group(5)])
    return blocks


# -- the model, from the facts --------------------------------------------------

def facts_calls_blocks(facts, clock):
    """What the parents-and-children section must show, from the facts' edges
    (clock 1 = wall, 2 = cpu: the index into the [calls, wall, cpu] triples)."""
    p = facts["profile"]
    ms = p["methods"]
    label = {i: text_escape(method_label(m)) for i, m in enumerate(ms)}  # as the text shows them
    total_calls = {r["method"]: r["calls"] + r["recursive_calls"] for r in p["all"]}
    blocks = {}
    for r in p["all"]:
        blocks[label[r["method"]]] = {"calls": r["calls"], "rec": r["recursive_calls"],
                                      "incl": r["incl_wall_us"] if clock == 1 else r["incl_cpu_us"],
                                      "excl": r["outer_excl_wall_us"] if clock == 1 else r["outer_excl_cpu_us"],
                                      "parents": [], "parents_nested": [], "children": [], "children_nested": []}
    blocks["(toplevel)"] = {"parents": [], "parents_nested": [], "children": [], "children_nested": []}
    for e in p["edges"]:
        caller = "(toplevel)" if e["caller"] is None else label[e["caller"]]
        callee = label[e["callee"]]
        a, co, ce = e["all"], e["caller_outer"], e["callee_outer"]
        nested_co = [a[0] - co[0], a[clock] - co[clock]]
        nested_ce = [a[0] - ce[0], a[clock] - ce[clock]]
        if co[0] or co[clock]:
            blocks[caller]["children"].append((callee, co[0], total_calls[e["callee"]], co[clock]))
        if nested_co[0] or nested_co[1]:
            blocks[caller]["children_nested"].append((callee, nested_co[0], total_calls[e["callee"]], nested_co[1]))
        if ce[0] or ce[clock]:
            blocks[callee]["parents"].append((caller, ce[0], total_calls[e["callee"]], ce[clock]))
        if nested_ce[0] or nested_ce[1]:
            blocks[callee]["parents_nested"].append((caller, nested_ce[0], total_calls[e["callee"]], nested_ce[1]))
    return blocks


def corpus_inputs(ctx):
    """Every reader's inputs for the report tests: tests/json, tests/ir, the project corpus's
    traces (art, dalvik, rhea, systrace) and those of TC_EXTRA_CORPUS when it is set."""
    out = sorted(glob.glob(os.path.join(ctx.source, "tests", "json", "*.json")))
    out += sorted(glob.glob(os.path.join(ctx.source, "tests", "ir", "*.ir.txt")))
    out += [p for _, p, _ in ctx.project_cases()]
    for sub in ("rhea", "systrace"):
        out += [p for _, p, _ in ctx.corpus_inputs(sub)]
    for sub in ("art", "rhea", "systrace"):
        out += [p for _, p in ctx.extra_files(sub)]
    return out
