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
"""
import json
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


def drawing(root):
    """({node id: [text lines]}, {(from id, to id): [text lines]}, graph label lines) from dot's SVG."""
    nodes, edges, graph = {}, {}, []
    for g in root.iter(SVG + "g"):
        cls = g.get("class")
        title = g.find(SVG + "title")
        texts = [t.text or "" for t in g.findall(SVG + "text")]
        if cls == "node":
            nodes[title.text] = texts
        elif cls == "edge":
            a, b = title.text.split("->")
            edges[(a, b)] = texts
        elif cls == "graph":
            graph = texts
    return nodes, edges, graph


def convert(ctx, src, out, *opts):
    r = ctx.run(["-q", "-f", "-o", "dot", *opts, src, out])
    if not ctx.check(r.returncode == 0, f"{src} -o dot {' '.join(opts)}: exit {r.returncode}: "
                                        f"{r.stderr.decode(errors='replace').strip()}"):
        return None
    return out


def ms(us):
    return "%d.%03d ms" % (us // 1000, us % 1000)


def expected(facts, pct, clock):
    """Edges at or above pct % of the total (exactly, with fractions) and the methods at their ends."""
    p = facts["profile"]
    label = {i: dot_text(rl.method_label(m)) for i, m in enumerate(p["methods"])}
    key = "span_wall_us" if clock == 1 else "span_cpu_us"
    total = sum(t[key] for t in facts["threads"])
    kept = {}
    for e in p["edges"]:
        t = e["once"][clock]
        if Fraction(t) * 100 >= Fraction(pct) * total:
            caller = "(toplevel)" if e["caller"] is None else label[e["caller"]]
            kept[(caller, label[e["callee"]])] = (e["all"][0], t)
    nodes = {a for a, _ in kept} | {b for _, b in kept}
    rows = {label[r["method"]]: r for r in p["all"]}
    return kept, nodes, rows, total


def check_case(ctx, name, trace, facts, pct, clock):
    opts = [] if pct is None else ["--threshold", pct]
    if clock == 2 and facts["clock"] == "dual":
        opts += ["--weight", "cpu"]
    what = f"{name} {' '.join(opts) or '(default threshold)'}"
    out = convert(ctx, trace, os.path.join(ctx.work, f"{name}-{pct}-{clock}.dot"), *opts)
    root = render(ctx, out) if out else None
    if root is None:
        return
    nodes, edges, graph = drawing(root)
    want_edges, want_nodes, rows, total = expected(facts, pct or "1", clock)
    name_of = {nid: texts[0] for nid, texts in nodes.items()}
    got_edges = {(name_of.get(a), name_of.get(b)): texts for (a, b), texts in edges.items()}
    ctx.eq(sorted(name_of.values()), sorted(want_nodes), f"{what}: methods drawn (ends of the edges kept)")
    ctx.eq(sorted(got_edges), sorted(want_edges), f"{what}: edges drawn (own time >= threshold)")
    for k, (calls, t) in want_edges.items():
        texts = got_edges.get(k)
        if texts is not None:
            ctx.eq(texts, [f"{calls} call{'' if calls == 1 else 's'}", ms(t)], f"{what}: edge {k} label")
    wall, cpu = ("incl_wall_us", "excl_wall_us") if clock == 1 else ("incl_cpu_us", "excl_cpu_us")
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
    n_methods = len(facts["profile"]["all"])
    n_edges = len(facts["profile"]["edges"])
    ctx.check(any(f"({len(want_nodes - {'(toplevel)'})} of {n_methods} methods, {len(want_edges)} of {n_edges} edges)"
                  in line for line in graph), f"{what}: graph label counts: {graph}")


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
