#!/usr/bin/env python3
"""The HTML report works in a real browser: headless Chromium (Debian's chromium, driven by
puppeteer-core from tests/browser; tests/browser/report.js reports what the browser shows as
JSON) opens the page that `-o report --html` writes for app-startup.trace and for hostile
names, and this test checks:

- no console error, no failed request, no Content-Security-Policy violation
  (securitypolicyviolation events listened to before the page loads): the page's own hashes
  allow exactly its styles and script; a hostile name runs nothing (window.pwned stays
  undefined, no <img>, one <script>);
- a real click on a column header sorts the all-threads table: the cells read back are in
  numeric order (descending, then ascending on a second click; names ascending first),
  equal keys keep their previous order (stable), aria-sort says which way;
- clicking a method's summary opens its parents and children; a link in them opens the
  linked method's row; the thread sections start collapsed;
- the embedded wall flame graph zooms on a click (the frame becomes full width) and a search
  reports "Matched: P%" with P computed here from the frames' counts (as the flame graph's
  browser test does);
- with JavaScript disabled the tables are there and a summary still opens its lists.
Screenshots are saved in the test's work dir.
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import browserlib  # noqa: E402
import tclib  # noqa: E402
import test_flamegraph_browser as fb  # noqa: E402  (the Matched model)
import test_report_html as th  # noqa: E402  (the hostile input)

XPAD = 10
N_COLUMNS = 14


def value(s, numeric):
    if not numeric:
        return s
    s = s.strip().rstrip("%").replace(",", "")  # 1,234,567: thousands separators
    return -math.inf if s == "-" else float(s)


def check_sorts(ctx, label, res):
    prev = res["first"]
    ctx.eq(prev["idx"], [str(i) for i in range(1, len(prev["idx"]) + 1)], f"{label}: the report's order at first")
    for s in res["sorts"]:
        col, numeric = s["col"], s["col"] != 1
        for n, click in enumerate(s["clicks"]):
            # a click turns the column's order around; an unsorted column: numbers descending, names ascending
            now = prev["sort"][col]
            desc = now == "ascending" or (now in (None, "none") and numeric)
            way = "descending" if desc else "ascending"
            ctx.eq(click["sort"][col], way, f"{label}: column {col} click {n + 1}: aria-sort")
            ctx.eq(sum(x != "none" for x in click["sort"]), 1, f"{label}: column {col}: one sorted column")
            vals = [value(c, numeric) for c in click["cells"]]
            ctx.check(all((a >= b) if desc else (a <= b) for a, b in zip(vals, vals[1:])),
                      f"{label}: column {col} click {n + 1}: {way} order: {click['cells'][:12]}")
            # stable: equal keys in their previous order
            key_of = dict(zip(click["idx"], vals))
            before = prev["idx"]
            want = sorted(before, key=lambda i: (-key_of[i] if desc and numeric else key_of[i]) if numeric
                          else key_of[i], reverse=desc and not numeric)
            if desc and not numeric:  # names descending, stable
                want = [i for _, _, i in sorted(((key_of[i], -k, i) for k, i in enumerate(before)), reverse=True)]
            ctx.eq(click["idx"], want, f"{label}: column {col} click {n + 1}: stable")
            prev = click
    ctx.eq(res["reordered"]["idx"], res["first"]["idx"], f"{label}: sorting by # gives the report's order back")


# ---- the call-tree view against a model of the trace ------------------------------------------
#
# The model: the ART trace decoded by tests/checkers/artrace_inspect.py (not traceconv's reader),
# each thread's stack replayed: per full call path (thread, frames...), its calls and its self
# time (wall µs between consecutive events while the stack is that path; frames open at the end
# close at the trace's last time). Every figure of a view follows from these by definition:
# top-down, a path's total is the self time of the paths it begins; bottom-up, a method with a
# chain of callers (M, C1, ..., Ck) has as self and calls those of the paths that end with
# Ck ... C1 M, and as total the self time of every path that holds Ck ... C1 M as a prefix of
# itself (each counted once: recursion is the time the chain was on the stack).

def art_paths(trace):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checkers"))
    import artrace_inspect as ai

    class Records:
        def __init__(self):
            self.recs = []

        def add(self, tid, mid, action, t1, t2, known):
            self.recs.append((tid, mid, action, t1, t2))

    b = open(trace, "rb").read()
    i = b.find(b"*end\n")
    key = ai.parse_key_text(b[:i + 5].decode("utf-8", "replace"))
    hdr = ai.parse_bin_header(b, i + 5)
    clock = key["options"].get("clock", "thread-cpu")
    r = Records()
    ai.records_v1(b, i + 5 + hdr["offset_to_data"], hdr["version_raw"], hdr["record_size"], clock, r, None)
    wall = (lambda rec: rec[4]) if clock == "dual" else (lambda rec: rec[3])
    out, st = {}, {}
    for rec in r.recs:
        tid, mid, action, t = rec[0], rec[1], rec[2], wall(rec)
        s = st.setdefault(tid, {"stack": [], "last": t, "label": f"{key['threads'].get(tid, '')} (tid {tid})"})
        if s["stack"]:
            out.setdefault((s["label"],) + tuple(s["stack"]), [0, 0])[1] += t - s["last"]
        s["last"] = t
        m = key["methods"][mid]
        if action == 0:
            s["stack"].append(m[0] + "." + m[1] + (" " + m[2] if m[2] else ""))
            out.setdefault((s["label"],) + tuple(s["stack"]), [0, 0])[0] += 1
        elif s["stack"]:
            s["stack"].pop()
    end = max(wall(rec) for rec in r.recs)
    for s in st.values():
        if s["stack"]:
            out.setdefault((s["label"],) + tuple(s["stack"]), [0, 0])[1] += end - s["last"]
    return out


def grouped(n):
    return f"{n:,}"  # 1,234,567: Python's format, independent of the page's script


def pct(part, whole):
    return f"{100 * part / whole:.1f}%" if whole > 0 else "-"


def row_paths(rows):
    """Each row's path from the rows' levels and names, as the tree nests them."""
    stack, out = [], []
    for r in rows:
        del stack[r["level"] - 1:]
        stack.append(r["name"])
        out.append(tuple(stack))
    return out


def td_figures(paths, path):
    total = sum(s for p, (_, s) in paths.items() if p[:len(path)] == path)
    calls, self_ = paths.get(path, (0, 0))
    base = sum(s for p, (_, s) in paths.items() if p[0] == path[0])
    return [grouped(total), pct(total, base), grouped(self_), pct(self_, base), "-" if len(path) == 1 else grouped(calls)]


def bu_figures(paths, chain, base):
    rev = tuple(reversed(chain))
    ends = [(p, v) for p, v in paths.items() if p[-len(rev):] == rev]
    self_ = sum(v[1] for _, v in ends)
    calls = sum(v[0] for _, v in ends)
    total = sum(v[1] for p, v in paths.items()
                if any(p[j - len(rev):j] == rev for j in range(len(rev), len(p) + 1)))
    return [grouped(total), pct(total, base), grouped(self_), pct(self_, base), grouped(calls)]


def check_rows(ctx, label, rows, paths, bottom_up, threads=None, want_rows=True):
    shown = {p for p in paths if threads is None or p[0] in threads}
    model = {p: paths[p] for p in shown}
    base = sum(v[1] for v in model.values())
    if want_rows:
        ctx.check(len(rows) > 0, f"{label}: rows shown")
    bad = []
    for r, path in zip(rows, row_paths(rows)):
        want = bu_figures(model, path, base) if bottom_up else td_figures(model, path)
        if r["cells"] != want:
            bad.append((path[-3:], r["cells"], want))
    ctx.eq(bad[:3], [], f"{label}: {len(rows)} rows' total, %, self, %, calls = the model's")
    return shown


def check_filter(ctx, label, rows, paths, term, bottom_up):
    """Shown: the nodes on a path that holds a frame with the text (case-insensitive), and only
    them. A top-down node P is on such a path when a call path beginning with P has the frame; a
    bottom-up node (M, C1, ..., Ck) when a call path ending with Ck ... C1 M has it."""
    q = term.lower()
    calls = [p for p in paths if len(p) > 1]  # every stack entered: the prefixes are there too
    hit = lambda p: any(q in f.lower() for f in p)  # noqa: E731
    for path in row_paths(rows):
        if bottom_up:
            rev = tuple(reversed(path))
            ok = any(p[-len(rev):] == rev and hit(p) for p in calls)
        else:
            ok = any(p[:len(path)] == path and hit(p) for p in calls)
        if not ok:
            ctx.fail(f"{label}: row {path[-2:]} is on no path with a frame holding {term!r}")
    roots = {p[-1] if bottom_up else p[0] for p in calls if hit(p)}
    got = {r["name"] for r in rows if r["level"] == 1}
    ctx.check(roots, f"{label}: the model has paths with {term!r}")
    ctx.eq(sorted(got), sorted(roots), f"{label}: the roots with {term!r} on a path")


def check_tree(ctx, label, tree, paths, term):
    if not ctx.check(tree.get("present"), f"{label}: the call-tree view is shown"):
        return
    for i, lay in enumerate(tree["layout"]):
        ctx.check(lay["scrollWidth"] <= 1366, f"{label}: step {i}: no horizontal scrollbar at 1366 px "
                                              f"(scrollWidth {lay['scrollWidth']})")
        ctx.eq(lay["wrapped"], [], f"{label}: step {i}: names on one line ({lay['names']} names)")
    if paths is None:
        return
    init = tree["initial"]
    check_rows(ctx, f"{label}: top-down at first", init, paths, False)
    # the hottest path is open: from the busiest thread, the child with the largest total each time
    busiest = max({p[0] for p in paths}, key=lambda t: sum(v[1] for p, v in paths.items() if p[0] == t))
    want, path = [busiest], (busiest,)
    while True:
        kids = {p[:len(path) + 1] for p in paths if p[:len(path)] == path and len(p) > len(path)}
        if not kids:
            break
        path = sorted(kids, key=lambda k: (-int(td_figures(paths, k)[0].replace(",", "")), k[-1]))[0]
        want.append(path[-1])
    opened = [p for r, p in zip(init, row_paths(init)) if r["expanded"] == "true"]
    ctx.eq([p[-1] for p in opened], want[:-1], f"{label}: the hottest path open at first")
    ctx.eq(sorted(r["name"] for r in init if r["level"] == 1), sorted({p[0] for p in paths}),
           f"{label}: every thread a root")
    ctx.check(len(tree["expanded"]) > len(init), f"{label}: a click and ArrowRight open rows "
                                                  f"({len(init)} -> {len(tree['expanded'])})")
    check_rows(ctx, f"{label}: top-down opened", tree["expanded"], paths, False)
    ctx.check(tree["focused"] is not None, f"{label}: the row opened by the keyboard has the focus")
    for i, rows in enumerate(tree["bottomUp"]):
        check_rows(ctx, f"{label}: bottom-up step {i}", rows, paths, True)
    ctx.check(len(tree["bottomUp"]) == 3 and len(tree["bottomUp"][2]) > len(tree["bottomUp"][0]),
              f"{label}: bottom-up rows open")
    roots = [r for r in tree["bottomUp"][0] if r["level"] == 1]
    ctx.eq(sorted(r["name"] for r in roots), sorted({p[-1] for p in paths if len(p) > 1}),
           f"{label}: bottom-up: every method a root")
    selfs = [int(r["cells"][2].replace(",", "")) for r in roots]
    ctx.eq(selfs, sorted(selfs, reverse=True), f"{label}: bottom-up roots by self time")
    if "threadTopDown" in tree:
        name = tree["threadOptions"][1][1].rsplit(":", 1)[0]
        check_rows(ctx, f"{label}: one thread, top-down", tree["threadTopDown"], paths, False, {name})
        check_rows(ctx, f"{label}: one thread, bottom-up", tree["threadBottomUp"], paths, True, {name})
        ctx.eq({r["name"] for r in tree["threadTopDown"] if r["level"] == 1}, {name},
               f"{label}: one thread picked: its root only")
    check_rows(ctx, f"{label}: filtered top-down", tree["filterTopDown"], paths, False)
    check_filter(ctx, f"{label}: filtered top-down", tree["filterTopDown"], paths, term, False)
    check_rows(ctx, f"{label}: filtered bottom-up", tree["filterBottomUp"], paths, True)
    check_filter(ctx, f"{label}: filtered bottom-up", tree["filterBottomUp"], paths, term, True)


def check_page(ctx, label, res, hostile):
    js = res["js"]
    check_tree(ctx, label, js.get("tree", {}), res.get("paths"), res["filter"])
    if hostile and js.get("tree", {}).get("present"):
        names = {r["name"] for r in js["tree"]["bottomUp"][0]}
        for n in th.HOSTILE:
            ctx.check(th.shown_name(n) in names, f"{label}: bottom-up root {th.shown_name(n)!r} shown as text")
    ctx.eq(js["errors"], [], f"{label}: console errors, failed requests")
    ctx.eq(js["csp"], [], f"{label}: CSP violations")
    ctx.eq(js["pwned"][0], "undefined", f"{label}: window.pwned")
    ctx.eq(js["pwned"][1:], [0, 1, 1], f"{label}: <img>, <script> elements that run, JSON blocks")
    n_tables = 1 + len(js["threadsOpen"])
    ctx.eq(js["buttons"], N_COLUMNS * n_tables, f"{label}: a sort button per column header")
    check_sorts(ctx, label, js)
    ctx.eq(js["openedBefore"], False, f"{label}: a method's lists start closed")
    op = js["opened"]
    ctx.check(op["open"] and op["visible"], f"{label}: clicking the summary opens the lists: {op}")
    ctx.check(op["scrollWidth"] <= 1366, f"{label}: opened lists fit 1366 px ({op['scrollWidth']})")
    heads = [r[0] for r in op["rows"] if r]
    ctx.check("parents" in heads and "children" in heads, f"{label}: parents and children shown: {heads}")
    if "link" in js:
        ln = js["link"]
        ctx.check(ln["found"] and ln["open"] and ln["hash"] == "#" + ln["id"],
                  f"{label}: a parent/child link opens the method's row: {ln}")
    elif not hostile:
        ctx.fail(f"{label}: the first method lists no link")
    ctx.check(js["threadsOpen"] and not any(js["threadsOpen"]), f"{label}: thread sections start collapsed")
    # the flame graph
    fl = js["flame"]
    ctx.check(len(fl["frames"]) > 3, f"{label}: the browser sees {len(fl['frames'])} frames")
    if "zoomed" in js:
        z = js["zoomed"]["frames"][res["click"]]
        ctx.check(abs(float(z["x"]) - XPAD) < 1e-6 and abs(float(z["width"]) - (fl["width"] - 2 * XPAD)) < 1e-6,
                  f"{label}: the clicked frame is full width after the zoom: {z}")
    want, hits = fb.expected_matched(fl["frames"], res["search"], False)
    ctx.check(hits > 0, f"{label}: the search matches something")
    ctx.eq(js["searched"]["matched"], want, f"{label}: search {res['search']!r}")
    nojs = res["nojs"]
    ctx.check(nojs["rows"] > 0 and nojs["visible"], f"{label}: without JavaScript the table shows: {nojs}")
    ctx.eq(nojs["buttons"], 0, f"{label}: without JavaScript no script ran")
    ctx.eq(nojs["threads"], len(js["threadsOpen"]), f"{label}: without JavaScript, every thread's table")
    ctx.check(nojs["opened"], f"{label}: without JavaScript a summary opens its lists")
    ctx.eq(nojs["errors"], [], f"{label}: without JavaScript: errors")


def check_reverse_opening(ctx, node, label, src, bottom_up_roots):
    """report --html --reverse opens on its bottom-up tab, showing the roots the bottom-up tab of
    the page without it shows (those check_tree held to the model)."""
    w = ctx.work
    page = os.path.join(w, label + ".reverse.report.html")
    r = ctx.run(["-q", "-f", "-o", "report", "--html", "--reverse", src, page])
    if not ctx.eq(r.returncode, 0, f"{label}: report --html --reverse ({r.stderr!r})"):
        return
    spec = {"url": "file://" + page, "openingOnly": True}
    res = browserlib.run_spec(ctx, node, "report.js", spec, os.path.join(w, label + ".rev.spec.json"),
                              os.path.join(w, label + ".rev.result.json"), f"{label}: report.js --reverse")
    if res is None:
        return
    ctx.eq(res["opening"]["tab"], "pv-bu", f"{label} --reverse: the page opens on its bottom-up tab")
    ctx.eq(res["opening"]["rows"], bottom_up_roots, f"{label} --reverse: the bottom-up roots, as the tab shows them")


def check_callers(ctx, node, src):
    """report --html --callers (issue 36): the callers section in Chromium, at 1366 px: a row per
    line of the text report's section (the same names, µs and shares), indented by depth, long
    names cut to their column (never past the window)."""
    w = ctx.work
    page = os.path.join(w, "callers.report.html")
    txt = os.path.join(w, "callers.txt")
    for fmt, out in (("report-html", page), ("report", txt)):
        r = ctx.run(["-q", "-f", "-o", fmt, "--callers", "inflate", src, out])
        if not ctx.eq(r.returncode, 0, f"report {fmt} --callers inflate ({r.stderr!r})"):
            return
    with open(txt, encoding="utf-8") as f:
        section = f.read().split("\n%/method", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]
    want = [re.match(r"^\s*([\d.]+%)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)  (\s*)(\S.*)$", line).groups()
            for line in section.splitlines()]
    spec = {"url": "file://" + page, "callersOnly": True, "shot": os.path.join(w, "callers.png")}
    res = browserlib.run_spec(ctx, node, "report.js", spec, os.path.join(w, "callers.spec.json"),
                              os.path.join(w, "callers.result.json"), "report.js --callers")
    if res is None:
        return
    c = res["callers"]
    def n(text):
        return int(text.replace(",", ""))

    got = [(cells[2], cells[1], n(cells[3]), n(cells[4]), cells[0].lstrip("\u00a0"),
            len(cells[0]) - len(cells[0].lstrip("\u00a0"))) for cells in (r["cells"] for r in c["rows"])]
    ctx.eq([g[:5] for g in got], [(p, f"{n(us):,}", n(calls), n(depth), name) for p, us, calls, depth, _, name in want],
           "the HTML callers rows are the text section's lines (µs grouped by thousands)")
    ctx.eq([g[5] for g in got], [2 * min(n(d), 20) for _, _, _, d, _, _ in want], "rows indented by depth")
    ctx.check(c["scrollWidth"] <= 1366, f"the callers section fits 1366 px (scrollWidth {c['scrollWidth']})")
    ctx.check(all(r["right"] <= c["width"] for r in c["rows"]), "no callers row runs past the window")
    ctx.check(any(r["cut"] for r in c["rows"]), "a long name is cut to its column (the app start has some)")


def app_main_share(ctx):
    """app-startup's main thread's share of the threads' wall time (tracegen's facts)."""
    with open(os.path.join(ctx.corpus, "app-startup.facts.json"), encoding="utf-8") as f:
        threads = json.load(f)["threads"]
    return next(t["wall_total_us"] for t in threads if t["name"] == "main") / sum(t["wall_total_us"] for t in threads)


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    w = ctx.work
    hostile_src = os.path.join(w, "hostile.ir.txt")
    th.hostile_ir(hostile_src)
    cases = [("app-startup", os.path.join(ctx.corpus, "app-startup.trace"), "Activity|inflate", False, "choreographer"),
             ("hostile", hostile_src, "script", True, "SCRIPT")]
    for label, src, term, hostile, filt in cases:
        page = os.path.join(w, label + ".report.html")
        r = ctx.run(["-q", "-f", "-o", "report", "--html", src, page])
        if not ctx.eq(r.returncode, 0, f"{label}: report --html ({r.stderr!r})"):
            continue
        with open(page, encoding="utf-8") as f:
            text = f.read()
        # a frame worth zooming: from the page's own wall graph (fg-wall), at least 40 px wide
        svg = text[text.index('<svg id="fg-wall"'):]
        svg = svg[:svg.index("</svg>") + 6].replace('id="fg-wall-', 'id="')
        svg_path = os.path.join(w, label + "-wall.svg")
        with open(svg_path, "w", encoding="utf-8") as f:
            f.write('<?xml version="1.0"?>\n' + svg)
        _, frames = fb.tf.our_frames(ctx, label, svg_path)
        if not frames:
            continue
        model = [dict(x=f["x"], y=f["y"], width=f["width"]) for f in frames]
        click = fb.pick_click(model, 1200)
        # where the page's graph opens: on main's tower, as -o flamegraph's (test_flamegraph_browser)
        titled = [dict(m, title=f"{f['name'] if i else 'all'} ({f['count']:,} us, {f['pct'] if i else 100}%)")
                  for i, (m, f) in enumerate(zip(model, frames))]
        spec = {"url": "file://" + page, "sorts": [4, 2, 1, 8, 13], "search": term, "click": click, "filter": filt,
                "shot": os.path.join(w, label + ".png")}
        res = browserlib.run_spec(ctx, node, "report.js", spec, os.path.join(w, label + ".spec.json"),
                                  os.path.join(w, label + ".result.json"), f"{label}: report.js")
        if res is None:
            continue
        res.update(click=click, search=term, filter=filt, paths=None if hostile else art_paths(src))
        check_page(ctx, label, res, hostile)
        if "flameOpened" in res["js"]:
            fb.check_opened(ctx, label + " wall graph", {"opened": res["js"]["flameOpened"], "before": res["js"]["flame"]},
                            titled, True, None if hostile else app_main_share(ctx))
        ctx.check(os.path.getsize(spec["shot"]) > 1000, f"{label}: screenshot {spec['shot']}")
        if not hostile and res["js"].get("tree", {}).get("bottomUp"):
            check_reverse_opening(ctx, node, label, src, res["js"]["tree"]["bottomUp"][0])
    check_callers(ctx, node, os.path.join(ctx.corpus, "app-startup.trace"))
    print(f"screenshots in {w}")
    ctx.done()


if __name__ == "__main__":
    main()
