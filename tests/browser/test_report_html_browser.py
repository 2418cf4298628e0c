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
import math
import os
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
    s = s.strip().rstrip("%")
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


def check_page(ctx, label, res, hostile):
    js = res["js"]
    ctx.eq(js["errors"], [], f"{label}: console errors, failed requests")
    ctx.eq(js["csp"], [], f"{label}: CSP violations")
    ctx.eq(js["pwned"][0], "undefined", f"{label}: window.pwned")
    ctx.eq(js["pwned"][1:], [0, 1], f"{label}: <img> and <script> elements")
    n_tables = 1 + len(js["threadsOpen"])
    ctx.eq(js["buttons"], N_COLUMNS * n_tables, f"{label}: a sort button per column header")
    check_sorts(ctx, label, js)
    ctx.eq(js["openedBefore"], False, f"{label}: a method's lists start closed")
    op = js["opened"]
    ctx.check(op["open"] and op["visible"], f"{label}: clicking the summary opens the lists: {op}")
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


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    w = ctx.work
    hostile_src = os.path.join(w, "hostile.ir.txt")
    th.hostile_ir(hostile_src)
    cases = [("app-startup", os.path.join(ctx.corpus, "app-startup.trace"), "Activity|inflate", False),
             ("hostile", hostile_src, "script", True)]
    for label, src, term, hostile in cases:
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
        spec = {"url": "file://" + page, "sorts": [4, 2, 1, 8, 13], "search": term, "click": click,
                "shot": os.path.join(w, label + ".png")}
        res = browserlib.run_spec(ctx, node, "report.js", spec, os.path.join(w, label + ".spec.json"),
                                  os.path.join(w, label + ".result.json"), f"{label}: report.js")
        if res is None:
            continue
        res.update(click=click, search=term)
        check_page(ctx, label, res, hostile)
        ctx.check(os.path.getsize(spec["shot"]) > 1000, f"{label}: screenshot {spec['shot']}")
    print(f"screenshots in {w}")
    ctx.done()


if __name__ == "__main__":
    main()
