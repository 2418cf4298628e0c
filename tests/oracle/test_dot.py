#!/usr/bin/env python3
"""The dot writer, read by Graphviz (Debian graphviz, `dot -Tsvg`: the oracle).

1. Project corpus: dot accepts every output with nothing on stderr; the SVG it
   draws (node and edge titles and texts, parsed as XML) holds exactly the
   edges whose own time reaches the threshold and the methods at their ends,
   computed here from tracegen's facts (each edge's "once" time, the sum of
   the threads' spans), never from the dot file; labels carry the facts'
   calls and times. Thresholds 0, 0.5, 1 (the default), 5, 25, 100, and the
   CPU clock with --weight cpu.
2. Hostile names (tests/ir/hostile-names.ir.txt): "<init>"-like brackets,
   quotes, backslashes, braces, '|', a newline, control bytes, '&' entities,
   invalid UTF-8: dot warns about nothing and draws each as text, as the HTML
   report shows it (test_hostile_markup.py: U+FFFF, C1 and the rest).
3. Every input of the project corpus (art, rhea, systrace), tests/json and tests/ir
   (and TC_EXTRA_CORPUS when set) that converts:
   dot accepts the output without a warning.
4. --threshold refuses values that are not a percentage.
5. Weight, as pprof draws its graph (its internal/graph/dotgraph.go, modelled here from that
   source, not from ours): each method node's font size (8 + ceil(16 sqrt(excl / the largest
   drawn excl))), border and fill colour (pprof's dotColor of incl / total), each edge's pen
   width (1 + min(5 time / total, 5)) and colour, read from the SVG dot draws and computed from
   tracegen's facts; a node's label is its short name ("Class.method", the package and the
   signature dropped; a short name two drawn nodes share is shown whole on both) and its
   tooltip (the SVG's xlink:title) the full name with the signature and its inclusive time.
"""
import collections
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import reportlib as rl  # noqa: E402
import tclib  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def dot_text(s):
    """How a name must appear in the drawing: as the HTML report shows it (backslash and control
    characters as the text \\\\, \\n, \\r, \\t, \\xHH, \\u0085; noncharacters as U+FFFD)."""
    return rl.visible_name(s)


def render(ctx, dot_path):
    """dot -Tsvg: (svg root or None); a warning or error on stderr is a failure."""
    r = ctx.oracle(["dot", "-Tsvg", dot_path])
    if r is None:
        return None
    err = r.stderr.decode(errors="replace").strip()
    ctx.check(r.returncode == 0 and not err, f"{dot_path}: dot -Tsvg: exit {r.returncode}: {err[:300]}")
    try:
        return ET.fromstring(r.stdout)
    except ET.ParseError as e:
        ctx.fail(f"{dot_path}: dot's SVG is not XML: {e}")
        return None


XLINK = "{http://www.w3.org/1999/xlink}"


def drawing(root, looks=None):
    """({node id: [text lines]}, {(from id, to id): [text lines]}, graph label lines) from dot's SVG;
    looks, when given, gets {("node", id) or ("edge", (a, b)): {fill, stroke, font, width, tooltip}}."""
    nodes, edges, graph = {}, {}, []
    for g in root.iter(SVG + "g"):
        cls = g.get("class")
        title = g.find(SVG + "title")
        if cls == "graph":
            graph = [t.text or "" for t in g.findall(SVG + "text")]
            continue
        if cls not in ("node", "edge"):
            continue
        # a tooltip wraps the shapes in <g><a xlink:title>: the texts are below the node's group
        texts = [t.text or "" for t in g.iter(SVG + "text")]
        shape = next(g.iter(SVG + ("polygon" if cls == "node" else "path")), None)
        link = next(g.iter(SVG + "a"), None)
        look = {"fill": shape.get("fill") if shape is not None else None,
                "stroke": shape.get("stroke") if shape is not None else None,
                "width": shape.get("stroke-width", "1") if shape is not None else None,
                "font": next(g.iter(SVG + "text")).get("font-size") if texts else None,
                "tooltip": link.get(XLINK + "title") if link is not None else None}
        if cls == "node":
            nodes[title.text] = texts
            key = ("node", title.text)
        else:
            a, b = title.text.split("->")
            edges[(a, b)] = texts
            key = ("edge", (a, b))
        if looks is not None:
            looks[key] = look
    return nodes, edges, graph


# ---- pprof's weight rules (internal/graph/dotgraph.go), modelled from its source ----

def pprof_dot_color(score, background):
    """pprof's dotColor: grey (0) to red (1), a light fill or a dark border ("#rrggbb")."""
    shift = 0.7
    saturation, value = (0.1, 0.93) if background else (1.0, 0.7)
    score = max(-1.0, min(1.0, score))
    if abs(score) < 0.2:
        saturation *= abs(score) / 0.2
    if score > 0.0:
        score = score ** (1.0 - shift)
    if score < 0.0:
        score = -((-score) ** (1.0 - shift))
    if score < 0.0:
        g, r = value, value * (1 + saturation * score)
    else:
        r, g = value, value * (1 - saturation * score)
    b = value * (1 - saturation)
    return "#%02x%02x%02x" % (int(r * 255.0), int(g * 255.0), int(b * 255.0))  # Go's uint8(): truncation


def pprof_font_size(flat, max_flat):
    size = 8
    if max_flat and flat and abs(flat) <= max_flat:
        size += math.ceil(16 * math.sqrt(abs(flat) / max_flat))
    return size


def pprof_pen_width(weight, total):
    return 1 + min(abs(weight) * 5 // total, 5) if total else 1


def short_label(m):
    """A facts method as people say it: "Class.method" (no package, no signature)."""
    if m["unknown"]:
        return f"unknown.{m['id']}"
    return (m["class"].rpartition(".")[2] or m["class"]) + "." + m["name"]


def convert(ctx, src, out, *opts):
    r = ctx.run(["-q", "-f", "-o", "dot", *opts, src, out])
    if not ctx.check(r.returncode == 0, f"{src} -o dot {' '.join(opts)}: exit {r.returncode}: "
                                        f"{r.stderr.decode(errors='replace').strip()}"):
        return None
    return out


def ms(us):
    return "%d.%03d ms" % (us // 1000, us % 1000)


def expected(facts, pct, clock):
    """Edges at or above pct % of the total (exactly, with fractions) and the methods at their ends,
    each method labelled with its short name, or its whole name where two drawn share one."""
    p = facts["profile"]
    key = "span_wall_us" if clock == 1 else "span_cpu_us"
    total = sum(t[key] for t in facts["threads"])
    kept_idx = {}
    for e in p["edges"]:
        t = e["once"][clock]
        if Fraction(t) * 100 >= Fraction(pct) * total:
            kept_idx[(e["caller"], e["callee"])] = (e["all"][0], t)
    drawn = {i for k in kept_idx for i in k if i is not None}
    shorts = collections.Counter(short_label(p["methods"][i]) for i in drawn)
    label = {i: dot_text(short_label(m) if shorts[short_label(m)] == 1 else rl.method_label(m))
             for i, m in enumerate(p["methods"]) if i in drawn}
    full = {i: dot_text(rl.method_label(m)) for i, m in enumerate(p["methods"]) if i in drawn}
    kept = {("(toplevel)" if a is None else label[a], label[b]): v for (a, b), v in kept_idx.items()}
    kept_full = {("(toplevel)" if a is None else full[a], full[b]): v[1] for (a, b), v in kept_idx.items()}
    nodes = {a for a, _ in kept} | {b for _, b in kept}
    rows = {label[r["method"]]: dict(r, full=full[r["method"]]) for r in p["all"] if r["method"] in drawn}
    return kept, nodes, rows, total, kept_full


def check_case(ctx, name, trace, facts, pct, clock):
    opts = [] if pct is None else ["--threshold", pct]
    if clock == 2 and facts["clock"] == "dual":
        opts += ["--weight", "cpu"]
    what = f"{name} {' '.join(opts) or '(default threshold)'}"
    out = convert(ctx, trace, os.path.join(ctx.work, f"{name}-{pct}-{clock}.dot"), *opts)
    root = render(ctx, out) if out else None
    if root is None:
        return
    looks = {}
    nodes, edges, graph = drawing(root, looks)
    want_edges, want_nodes, rows, total, want_full = expected(facts, pct or "1", clock)
    name_of = {nid: texts[0] for nid, texts in nodes.items()}
    got_edges = {(name_of.get(a), name_of.get(b)): texts for (a, b), texts in edges.items()}
    ctx.eq(sorted(name_of.values()), sorted(want_nodes), f"{what}: methods drawn (ends of the edges kept)")
    ctx.eq(sorted(got_edges), sorted(want_edges), f"{what}: edges drawn (own time >= threshold)")
    for k, (calls, t) in want_edges.items():
        texts = got_edges.get(k)
        if texts is not None:
            ctx.eq(texts, [f"{calls} call{'' if calls == 1 else 's'}", ms(t)], f"{what}: edge {k} label")
    wall, cpu = ("incl_wall_us", "excl_wall_us") if clock == 1 else ("incl_cpu_us", "excl_cpu_us")
    max_excl = max((r[cpu] for r in rows.values()), default=0)
    for nid, texts in nodes.items():
        r = rows.get(texts[0])
        if texts[0] == "(toplevel)":
            ctx.eq(texts[1:], ["all threads " + ms(total)], f"{what}: (toplevel) label")
            continue
        if not ctx.check(r is not None, f"{what}: node {texts[0]!r} is not a facts method"):
            continue
        pi = f" ({100.0 * r[wall] / total:.1f}%)" if total else ""
        pe = f" ({100.0 * r[cpu] / total:.1f}%)" if total else ""
        ctx.eq(texts[1:], [f"incl {ms(r[wall])}{pi}, excl {ms(r[cpu])}{pe}",
                           f"{r['calls']}+{r['recursive_calls']} calls"], f"{what}: node {texts[0]} label")
        check_node_weight(ctx, what, texts[0], looks[("node", nid)], r, r[wall], r[cpu], total, max_excl)
    for (a, b), look in ((k[1], v) for k, v in looks.items() if k[0] == "edge"):
        ends = (name_of.get(a), name_of.get(b))
        t = want_edges.get(ends, (None, None))[1]
        if t is None:
            continue
        width = pprof_pen_width(t, total)
        ctx.eq((look["stroke"], float(look["width"])), (pprof_dot_color(t / total if total else 0, False), width),
               f"{what}: edge {ends}: colour and pen width (pprof's)")
    tips = sorted(look["tooltip"] or "" for k, look in looks.items() if k[0] == "edge")
    ctx.eq(tips, sorted(f"{a} -> {b} ({ms(t)})" for (a, b), t in want_full.items()), f"{what}: edge tooltips")
    n_methods = len(facts["profile"]["all"])
    n_edges = len(facts["profile"]["edges"])
    ctx.check(any(f"({len(want_nodes - {'(toplevel)'})} of {n_methods} methods, {len(want_edges)} of {n_edges} edges)"
                  in line for line in graph), f"{what}: graph label counts: {graph}")


def check_node_weight(ctx, what, name, look, row, incl, excl, total, max_excl):
    """pprof's node: font size by the exclusive time, colours by the inclusive share; the tooltip
    names the method whole, with its signature."""
    score = incl / total if total else 0
    ctx.eq((look["font"], look["stroke"], look["fill"]),
           ("%.2f" % pprof_font_size(excl, max_excl), pprof_dot_color(score, False), pprof_dot_color(score, True)),
           f"{what}: node {name}: font size, border, fill (pprof's)")
    ctx.eq(look["tooltip"], f"{row['full']} (incl {ms(incl)})", f"{what}: node {name}: tooltip")


def check_corpus(ctx):
    n = 0
    for name, trace, facts_path in ctx.project_cases():
        if not facts_path:
            continue
        with open(facts_path, encoding="utf-8") as f:
            facts = json.load(f)
        if "profile" not in facts:
            continue
        clock = 2 if facts["clock"] == "thread-cpu" else 1
        for pct in (None, "0", "0.5", "5", "25", "100"):
            check_case(ctx, name, trace, facts, pct, clock)
        if facts["clock"] == "dual":
            check_case(ctx, name, trace, facts, "2", 2)
        n += 1
    ctx.check(n >= 20, f"corpus cases with profile facts: {n}")


HOSTILE_SHOWN = ["a,b", 'q"uote', "new\\nline", "cr\\rret", "tab\\there", "back\\\\slash", "</script>&amp;]]>",
                 "nul\\x01ctl", "{}|<>", "\u00e9t\u00e9", "bad\ufffd\ufffd"]


def check_hostile(ctx):
    src = os.path.join(ctx.source, "tests", "ir", "hostile-names.ir.txt")
    out = convert(ctx, src, os.path.join(ctx.work, "hostile.dot"), "--threshold", "0")
    root = render(ctx, out) if out else None
    if root is None:
        return
    nodes, edges, _ = drawing(root)
    shown = sorted(texts[0] for texts in nodes.values())
    ctx.eq(shown, sorted(HOSTILE_SHOWN + ["(toplevel)"]), "hostile names drawn as text")
    ctx.eq(len(edges), len(HOSTILE_SHOWN), "hostile: one edge per method")
    ctx.check(root.find(f".//{SVG}script") is None, "hostile: no script element in the drawing")
    # a constructor: dmtracedump's record shape drew "<init>" as nothing (DMTRACEDUMP-REPORT.md §5)
    init = os.path.join(ctx.work, "init.ir.txt")
    with open(init, "w", encoding="utf-8") as f:
        f.write('traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=3 start_ns=0\n'
                'thread 0 tid=3 records=2 name="main"\nmethod 0 id=0 name="a.B.<init>"\n'
                'B t=0 m=0 d=0 ts=0\nE t=0 m=0 d=0 ts=81000\n')
    out = convert(ctx, init, os.path.join(ctx.work, "init.dot"))
    root = render(ctx, out) if out else None
    if root is not None:
        nodes, _, _ = drawing(root)
        ctx.check(any(t and t[0] == "a.B.<init>" for t in nodes.values()), f"<init> drawn: {list(nodes.values())}")


def check_every_input(ctx):
    inputs = rl.corpus_inputs(ctx)
    drawn = 0
    for src in inputs:
        out = os.path.join(ctx.work, os.path.basename(src) + ".dot")
        r = ctx.run(["-q", "-f", "-o", "dot", src, out])
        if r.returncode != 0:
            continue  # not a trace, or one every writer refuses (test_report checks that against -o ir)
        if render(ctx, out) is None:
            continue
        drawn += 1
        with open(out, encoding="utf-8", errors="replace") as f:
            m = re.search(r" of (\d+) edges\)", f.read())
        # every edge too, where Graphviz can lay them out in reasonable time (thousands it cannot)
        if m and int(m.group(1)) <= 400:
            out0 = os.path.join(ctx.work, os.path.basename(src) + ".all.dot")
            if ctx.run(["-q", "-f", "-o", "dot", "--threshold", "0", src, out0]).returncode == 0:
                render(ctx, out0)
    ctx.check(drawn >= 3, f"inputs drawn: {drawn}")


def check_bad_threshold(ctx):
    src = os.path.join(ctx.source, "tests", "ir", "hostile-names.ir.txt")
    for bad in ("101", "-1", "abc", "0.12345", "1%", ""):
        r = ctx.run(["-q", "-f", "-o", "dot", "--threshold", bad, src, os.path.join(ctx.work, "bad.dot")])
        ctx.eq(r.returncode, 2, f"--threshold {bad!r}: a usage error")
    r = ctx.run(["-f", "-o", "json", "--threshold", "5", src, os.path.join(ctx.work, "x.json")])
    ctx.check(b"unused-option" in r.stderr, "--threshold with -o json: an unused-option warning")


def main():
    ctx = tclib.Ctx()
    check_corpus(ctx)
    check_hostile(ctx)
    check_every_input(ctx)
    check_bad_threshold(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
