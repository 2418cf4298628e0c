#!/usr/bin/env python3
"""The flame graph works in a real browser: headless Chromium (Debian's chromium, driven by
puppeteer-core from tests/browser, see tests/browser/lib.js) opens

- the SVG of app-startup.trace written by `-o flamegraph` (file://);
- the SVG of hostile names (</script><script>window.pwned=1</script>, <img onerror>, ...);
- an HTML page with two graphs embedded by the engine (tests/unit/flame_render.c, mode
  embed: each carries its script; one of them is the hostile graph);
- an HTML page under a strict Content-Security-Policy (script-src 'nonce-...') with two
  graphs embedded without a script, bound by the engine's page-level script run once with
  the nonce;

and checks, from what the browser shows (tests/browser/flame.js reports it as JSON): no
console error, no failed request, no CSP violation; the writer's graphs open zoomed on main's
tower when it has less than a third of the time (app-startup's main: 24% by tracegen's facts),
the details line saying so, and Reset zoom then shows every frame where the model has it; the
engine's embedded graphs (no thread order) open unzoomed; a real click on a frame zooms (its
rectangle becomes x = xpad, width = svg width - 2 xpad, frames outside it are hidden, its
ancestors dimmed at full width) and Reset zoom (a button shown while zoomed) restores every
frame exactly, and so does Escape; a search typed into the search field (after a click on
it, or after "/", Ctrl-F or F3 with the pointer over the graph, which give the field the
keys; with and without the 'Aa' ignore-case toggle) reports "Matched: P%" with P computed
here from the frames' counts (a match inside a matched frame is not counted twice) and
colours exactly the matching frames; the field's clear button restores every fill;
hovering a frame shows "Function: <tooltip>"; the controls are seen: the search field, its
toggle and Reset zoom are boxes of a readable size inside the image, clear of the title,
drawn opaque, their text (the field's placeholder) at a contrast of at least 4.5:1 with
their box and their border at least 3:1 with the background (WCAG 2's formula); the root
frame is labelled with what it is, "all N threads (T us)", N and T from tracegen's facts
(the threads with time, their total), and keeps that label through a zoom; a hostile name
runs nothing (window.pwned stays undefined, no <img>, one script per graph). The default
palette's legend (upright and --inverted): five entries, the app's naming the app-startup
scenario's package, com.example.shop, as inferred; every entry rendered (a box of non-zero
size, a readable font size) inside the image, none overlapping another or any frame.
Screenshots are saved in the test's work dir.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import browserlib  # noqa: E402
import tclib  # noqa: E402
import test_flamegraph as tf  # noqa: E402  (the hostile input and the SVG parsing)

XPAD = 10
MATCH = "rgb(230,0,230)"
NONCE = "tcFlameTestNonce42"


def expected_matched(frames, term, ic):
    """'Matched: P%' from the frames' counts: a matching frame counts unless a matching
    frame contains it (an ancestor: nearer the root, its x range covering this one)."""
    rx = re.compile(term, re.I if ic else 0)
    parsed = []
    for f in frames:
        name, count, _ = tf.split_title(f["title"])
        parsed.append(dict(hit=bool(rx.search(f["title"])), count=count, x=float(f["x"]),
                           w=float(f["width"]), y=float(f["y"])))
    total = max(p["count"] for p in parsed)
    eps = 0.06
    matched = 0
    for p in parsed:
        if not p["hit"]:
            continue
        inside = any(q["hit"] and q is not p and q["y"] > p["y"] and q["x"] <= p["x"] + eps
                     and p["x"] + p["w"] <= q["x"] + q["w"] + eps and p["x"] < q["x"] + q["w"] - eps
                     for q in parsed)
        if not inside:
            matched += p["count"]
    pct = 100 * matched / total
    return ("Matched: 100%" if pct == 100 else "Matched: %.1f%%" % pct), sum(p["hit"] for p in parsed)


def luminance(color):
    """WCAG 2's relative luminance of "rgb(r, g, b)" (or "#rrggbb")."""
    if color.startswith("#"):
        parts = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    else:
        parts = [float(x) for x in re.findall(r"[\d.]+", color)[:3]]
    lin = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in parts]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b):
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def inside(b, outer, eps=0.5):
    return outer["x"] - eps <= b["x"] and b["x"] + b["w"] <= outer["x"] + outer["w"] + eps and \
        outer["y"] - eps <= b["y"] and b["y"] + b["h"] <= outer["y"] + outer["h"] + eps


BACKGROUND = "rgb(248,248,248)"  # the lightest background behind the controls (the gradient's top)


def check_control(ctx, label, what, c, min_w, text_color=None):
    """A control one sees: shown, opaque, of a readable size inside the image, its text readable on its box and
    its box's border on the background."""
    if not ctx.check(c is not None and c["shown"], f"{label}: {what} is drawn: {c}"):
        return
    b = c["box"]
    ctx.check(b["w"] >= min_w and b["h"] >= 16, f"{label}: {what} is {b['w']:.0f}x{b['h']:.0f} px")
    ctx.check(c["opacity"] == 1, f"{label}: {what} is drawn opaque (opacity {c['opacity']})")
    boxed = c["fill"] not in (None, "none") and c["stroke"] not in (None, "none")
    if not ctx.check(boxed, f"{label}: {what} is a box with a border: fill {c['fill']}, border {c['stroke']}"):
        return
    color = text_color or c["color"]
    ratio = contrast(color, c["fill"]) if color else 0
    ctx.check(ratio >= 4.5, f"{label}: {what}'s text {color} on {c['fill']}: contrast {ratio:.2f}")
    ratio = contrast(c["stroke"], BACKGROUND)
    ctx.check(ratio >= 3, f"{label}: {what}'s border {c['stroke']} on the background: contrast {ratio:.2f}")


def check_controls(ctx, label, res):
    c = res["controls"]
    svg = c["svg"]
    f = c["field"]
    if ctx.check(f is not None, f"{label}: the search field (an input in the search box)"):
        check_control(ctx, label, "the search field", c["search"], 120, f["placeholderColor"])
        ctx.check("Search" in f["placeholder"] and "/" in f["placeholder"] and "Ctrl-F" in f["placeholder"],
                  f"{label}: the field says what it is and its keys: {f['placeholder']!r}")
        sb = c["search"]["box"] if c["search"] else None
        ctx.check(sb and all(abs(f["box"][k] - sb[k]) <= 2 for k in "xywh") and f["opacity"] == 1,
                  f"{label}: the input fills the search box: {f['box']} in {sb}")
        if c["search"] and c["search"]["fill"] not in (None, "none"):
            ctx.check(contrast(f["color"], c["search"]["fill"]) >= 4.5, f"{label}: the typed text's colour {f['color']}")
    check_control(ctx, label, "the ignore-case toggle", c["ignorecase"], 20)
    for what in ("search", "ignorecase"):
        b = c[what] and c[what]["box"]
        ctx.check(b and inside(b, svg), f"{label}: {what} inside the image: {b} in {svg}")
        ctx.check(b and not overlap(b, c["title"]), f"{label}: {what} clear of the title")
    ctx.check(c["unzoom"] is not None and not c["unzoom"]["shown"], f"{label}: Reset zoom is not shown before a zoom")
    z = res.get("zoomedControls")
    if z:
        check_control(ctx, label, "Reset zoom", z["unzoom"], 60)
        ctx.eq(z["unzoom"] and z["unzoom"]["text"], "Reset zoom", f"{label}: Reset zoom's text")
        ctx.check(z["unzoom"] and inside(z["unzoom"]["box"], svg) and not overlap(z["unzoom"]["box"], z["title"]),
                  f"{label}: Reset zoom inside the image, clear of the title")


def pick_click(frames, svg_width):
    """A frame worth zooming: not the root, at least 40 px wide, at least one level above a leaf."""
    best = None
    for i, f in enumerate(frames[1:], 1):
        w = float(f["width"])
        if 40 <= w <= svg_width / 2 and (best is None or float(frames[best]["y"]) > float(f["y"])):
            best = i
    return best if best is not None else 1


def check_graph(ctx, label, g, res, frames_model):
    ctx.eq(res["errors"], [], f"{label}: console errors, failed requests")
    ctx.eq(res["pwned"][0], "undefined", f"{label}: window.pwned")
    ctx.eq(res["pwned"][1], 0, f"{label}: <img> elements in the document")
    before = res["before"]["frames"]
    ctx.check(len(before) > 3, f"{label}: the browser sees {len(before)} frames")
    width = res["before"]["width"]
    if "zoomed" in res:
        z = res["zoomed"]["frames"][g["click"]]
        ctx.check(abs(float(z["x"]) - XPAD) < 1e-6 and abs(float(z["width"]) - (width - 2 * XPAD)) < 1e-6,
                  f"{label}: the clicked frame is full width after the zoom: x={z['x']} width={z['width']}")
        ctx.check(not res["zoomed"]["unzoomHidden"], f"{label}: Reset Zoom is shown while zoomed")
        clicked = before[g["click"]]
        cx, cw, cy = float(clicked["x"]), float(clicked["width"]), float(clicked["y"])
        hidden = sum(f["hidden"] for f in res["zoomed"]["frames"])
        outside = sum(1 for f in before if float(f["y"]) <= cy and (float(f["x"]) + 0.01 < cx or
                                                                 float(f["x"]) >= cx + cw - 0.01))
        ctx.check(hidden >= outside > 0, f"{label}: {hidden} frames hidden, {outside} frames outside the zoom")
        parents = [f for f in res["zoomed"]["frames"] if f["parent"]]
        ctx.check(parents and all(abs(float(f["width"]) - (width - 2 * XPAD)) < 1e-6 for f in parents),
                  f"{label}: ancestors dimmed at full width ({len(parents)})")
        un = res["unzoomed"]
        ctx.eq([(f["x"], f["width"], f["hidden"], f["parent"]) for f in un["frames"]],
               [(f["x"], f["width"], False, False) for f in before], f"{label}: Reset Zoom restores every frame")
        ctx.check(un["unzoomHidden"], f"{label}: Reset Zoom is hidden again")
        ctx.eq([(f["x"], f["width"], f["hidden"], f["parent"]) for f in res["escaped"]["frames"]],
               [(f["x"], f["width"], False, False) for f in before], f"{label}: Escape undoes a zoom")
        ctx.eq(res["escaped"]["frames"][0]["label"], before[0]["label"], f"{label}: the root's label after Escape")
        ctx.eq(res["zoomed"]["frames"][0]["label"], before[0]["label"], f"{label}: the root's label through a zoom")
    for s in res["searches"]:
        want, hits = expected_matched(frames_model, s["term"], s["ic"])
        ctx.eq(s["found"]["matched"], want, f"{label}: search {s['term']!r} ic={s['ic']}")
        ctx.check(hits > 0, f"{label}: search {s['term']!r} matches something")
        ctx.eq(sum(f["fill"] == MATCH for f in s["found"]["frames"]), hits, f"{label}: frames coloured by the search")
        ctx.check(s["focused"], f"{label}: {s['key'] or 'a click'} gives the search field the keys")
        ctx.eq((s["found"]["searchValue"], s["found"]["clearHidden"]), (s["term"], False),
               f"{label}: the field shows the term and its clear button")
        ctx.eq([f["fill"] for f in s["reset"]["frames"]], [f["fill"] for f in before],
               f"{label}: the clear button restores every fill")
        ctx.check(s["reset"]["matchedHidden"] and s["reset"]["clearHidden"] and s["reset"]["searchValue"] == "",
                  f"{label}: Matched, the clear button and the term are gone after a clear")
    ctx.eq(res["icByKey"], [True, False], f"{label}: the ignore-case toggle by the keyboard (Enter, then Space)")
    for h in res["hovers"]:
        ctx.eq(h["details"], "Function: " + before[h["index"]]["title"], f"{label}: details line on hover")


def check_opened(ctx, label, res, model, towers, main_share=None):
    """Where the graph opens (issue 36: the views open on main): a writer's graph of one tower per
    thread (towers) opens zoomed on its first tower, main's, when that has less than a third of
    the root's count, read off the model's frames (main_share: the facts' share, when known);
    any other graph opens unzoomed. Zoomed: that frame full width, Reset zoom shown, the
    details line saying so; then Reset zoom restored every frame (res["before"] is the model's)."""
    o = res["opened"]
    width = o["width"]
    first = next((i for i, f in enumerate(model[1:], 1) if abs(float(f["x"]) - XPAD) < 1e-6 and
                  f["y"] == sorted({g["y"] for g in model[1:]}, reverse=not label.endswith("inverted"))[0]), None)
    share = tf.split_title(model[first]["title"])[1] / tf.split_title(model[0]["title"])[1] if first else 1
    if main_share is not None:
        ctx.check(abs(share - main_share) < 0.01, f"{label}: main's share {share:.4f} (the facts': {main_share:.4f})")
    want = towers and share * 3 < 1
    ctx.eq(not o["unzoomHidden"], want, f"{label}: opens zoomed on main's tower ({share:.1%} of the graph)")
    if want:
        f = o["frames"][first]
        ctx.check(abs(float(f["x"]) - XPAD) < 1e-6 and abs(float(f["width"]) - (width - 2 * XPAD)) < 1e-6,
                  f"{label}: the first tower full width as it opens: x={f['x']} width={f['width']}")
        ctx.eq(o["details"], f"Zoomed on {model[first]['title']}: Reset zoom (or Escape) shows every thread",
               f"{label}: the details line says what it opened on")
        ctx.check(sum(g["hidden"] for g in o["frames"]) > 0, f"{label}: the other towers hidden as it opens")
    ctx.eq([(f["x"], f["width"]) for f in res["before"]["frames"]], [(f["x"], f["width"]) for f in model],
           f"{label}: after Reset zoom, every frame where the model has it")


def overlap(a, b, eps=0.01):
    return a["x"] < b["x"] + b["w"] - eps and b["x"] < a["x"] + a["w"] - eps and \
        a["y"] < b["y"] + b["h"] - eps and b["y"] < a["y"] + a["h"] - eps


def check_legend(ctx, label, legend, app_text):
    if not ctx.check(legend is not None, f"{label}: the legend is in the document"):
        return
    texts, rects = legend["texts"], legend["rects"]
    ctx.eq(len(texts), 5, f"{label}: legend entries {[t['text'] for t in texts]}")
    ctx.eq(len(rects), 5, f"{label}: legend swatches")
    ctx.check(any(app_text in t["text"] for t in texts), f"{label}: the legend names {app_text!r}")
    svg = legend["svg"]
    items = [("text " + t["text"], t["box"]) for t in texts] + [("swatch " + r["fill"], r["box"]) for r in rects]
    for what, b in items:
        ctx.check(b["w"] > 0 and b["h"] > 0, f"{label}: legend {what} is rendered: {b}")
        ctx.check(svg["x"] <= b["x"] and b["x"] + b["w"] <= svg["x"] + svg["w"] and
                  svg["y"] <= b["y"] and b["y"] + b["h"] <= svg["y"] + svg["h"], f"{label}: legend {what} inside the image")
        hit = [f for f in legend["frames"] if overlap(b, f)]
        ctx.eq(hit, [], f"{label}: legend {what} covers no frame")
    for t in texts:
        ctx.check(float(t["size"].rstrip("px")) >= 10, f"{label}: legend text size {t['size']}")
    pairs = [(a[0], b[0]) for i, a in enumerate(items) for b in items[i + 1:] if overlap(a[1], b[1])]
    ctx.eq(pairs, [], f"{label}: legend entries overlap")


def page(path, body, head=""):
    with open(path, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flame graphs</title>" + head +
                "</head>\n<body>\n<h1>Two graphs</h1>\n" + body + "\n</body></html>\n")
    return "file://" + path


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    render = os.path.join(os.path.dirname(os.path.abspath(ctx.traceconv)), "flame_render")
    w = ctx.work
    src = os.path.join(ctx.corpus, "app-startup.trace")
    svg = tf.convert(ctx, src, "flamegraph", os.path.join(w, "app-startup.svg"))
    inverted = tf.convert(ctx, src, "flamegraph", os.path.join(w, "app-startup-inverted.svg"), ["--inverted"])
    hostile_src = os.path.join(w, "hostile.systrace")
    tf.hostile_trace(hostile_src)
    hostile = tf.convert(ctx, hostile_src, "flamegraph", os.path.join(w, "hostile.svg"), ["--minwidth", "0"])
    folded = tf.convert(ctx, src, "folded", os.path.join(w, "app-startup.folded"))
    hfolded = tf.convert(ctx, hostile_src, "folded", os.path.join(w, "hostile.folded"))
    if not (svg and inverted and hostile and folded and hfolded) or not ctx.check(os.path.exists(render), f"{render} missing"):
        ctx.done()

    def embed(folded_path, mode, prefix):
        r = subprocess.run([render, "--mode", mode, "--prefix", prefix, "--countname", "us", "--title",
                            f"graph {prefix}", "--colors", "java", folded_path], capture_output=True)
        ctx.eq(r.returncode, 0, f"flame_render {mode} {prefix}: {r.stderr.decode(errors='replace')}")
        return r.stdout.decode("utf-8")

    script = subprocess.run([render, "--script"], capture_output=True).stdout.decode()
    inline_page = page(os.path.join(w, "embedded.html"),
                       embed(folded, "embed", "ga") + "\n<p>between</p>\n" + embed(hfolded, "embed", "gb"))
    csp = f"<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'nonce-{NONCE}'\">"
    csp_page = page(os.path.join(w, "csp.html"),
                    embed(folded, "noscript", "gc") + "\n" + embed(hfolded, "noscript", "gd") +
                    f"\n<script nonce=\"{NONCE}\">\n{script}</script>", head=csp)

    _, model = tf.our_frames(ctx, "app-startup", svg)
    _, hmodel = tf.our_frames(ctx, "hostile", hostile)
    # the embedded graphs are drawn from the folded lines (towers by name, as flamegraph.pl), the
    # writer's with main's tower first: each is clicked where its own frames are
    plain = os.path.join(w, "app-startup-plain.svg")
    with open(plain, "wb") as f:
        f.write(subprocess.run([render, "--countname", "us", "--colors", "java", folded], capture_output=True).stdout)
    _, pmodel = tf.our_frames(ctx, "app-startup plain", plain)
    if not model or not hmodel or not pmodel:
        ctx.done()
    frames = [dict(title=f"{f['name']} ({f['count']:,} us, {f['pct']}%)" if i else f"all ({f['count']:,} us, 100%)",
                   x=f["x"], y=f["y"], width=f["width"]) for i, f in enumerate(model)]
    hframes = [dict(title=f"{f['name']} ({f['count']:,} us, {f['pct']}%)" if i else f"all ({f['count']:,} us, 100%)",
                    x=f["x"], y=f["y"], width=f["width"]) for i, f in enumerate(hmodel)]
    pframes = [dict(title=f"{f['name']} ({f['count']:,} us, {f['pct']}%)" if i else f"all ({f['count']:,} us, 100%)",
                    x=f["x"], y=f["y"], width=f["width"]) for i, f in enumerate(pmodel)]
    click, eclick = pick_click(frames, 1200), pick_click(pframes, 1200)
    hostile_idx = [i for i, f in enumerate(hmodel) if "pwned" in f["name"] or "onerror" in f["name"]]
    searches = [{"term": "android\\.view", "how": "button"}, {"term": "Activity", "how": "key"},
                {"term": "INFLATE", "ic": True, "how": "button"}, {"term": "us, ", "how": "key", "key": "Control+f"},
                {"term": "Looper", "how": "key", "key": "F3"}]
    hsearch = [{"term": "script", "how": "button"}, {"term": "run", "how": "key"}]
    graphs = [
        dict(url="file://" + svg, svg=None, prefix="", click=click, searches=searches, hover=[click, 0],
             shot=os.path.join(w, "app-startup.png")),
        dict(url="file://" + hostile, svg=None, prefix="", click=hostile_idx[0], searches=hsearch,
             hover=hostile_idx, shot=os.path.join(w, "hostile.png")),
        dict(url=inline_page, svg="#ga", prefix="ga-", click=eclick, searches=searches[:2], hover=[eclick]),
        dict(url=inline_page, svg="#gb", prefix="gb-", click=hostile_idx[0], searches=hsearch, hover=hostile_idx,
             shot=os.path.join(w, "embedded.png")),
        dict(url=csp_page, svg="#gc", prefix="gc-", click=eclick, searches=searches[1:3], hover=[eclick]),
        dict(url=csp_page, svg="#gd", prefix="gd-", click=hostile_idx[-1], searches=hsearch[:1], hover=hostile_idx,
             shot=os.path.join(w, "csp.png")),
        dict(url="file://" + inverted, svg=None, prefix="", hover=[1], shot=os.path.join(w, "app-startup-inverted.png")),
    ]
    res = browserlib.run_spec(ctx, node, "flame.js", {"graphs": graphs}, os.path.join(w, "spec.json"),
                              os.path.join(w, "result.json"), "flame.js")
    if res is None:
        ctx.done()
    results = res["results"]
    models = [frames, hframes, pframes, hframes, pframes, hframes, []]
    labels = ["standalone", "standalone hostile", "embedded ga", "embedded hostile gb", "csp gc", "csp hostile gd",
              "standalone inverted"]
    with open(os.path.join(ctx.corpus, "app-startup.facts.json"), encoding="utf-8") as f:
        facts = json.load(f)
    main_share = next(t["wall_total_us"] for t in facts["threads"] if t["name"] == "main") / \
        sum(t["wall_total_us"] for t in facts["threads"])
    ctx.check(main_share * 3 < 1, f"app-startup's main has less than a third of the time ({main_share:.1%}): "
              "its graph opens zoomed")
    imodel = [dict(title=f"{f['name']} ({f['count']:,} us, {f['pct']}%)" if i else f"all ({f['count']:,} us, 100%)",
                   x=f["x"], y=f["y"], width=f["width"]) for i, f in enumerate(tf.our_frames(ctx, "inverted", inverted)[1])]
    for g, res, m, label in zip(graphs, results, models, labels):
        towers = label.startswith("standalone")  # the writer's graphs; flame_render's have no thread order
        check_opened(ctx, label, res, m or imodel, towers, main_share if label in ("standalone", "standalone inverted")
                     else None)
        check_graph(ctx, label, g, res, m)
        check_controls(ctx, label, res)
        n_scripts = res["pwned"][2]
        ctx.eq(n_scripts, {"standalone": 1, "standalone hostile": 1}.get(label, 2 if "embedded" in label else 1),
               f"{label}: <script> elements in the document")
    for res, label in ((results[0], "standalone"), (results[6], "standalone inverted")):
        check_legend(ctx, label, res["legend"],
                     "app: com.example.shop (ShopApp.onCreate called by Instrumentation.callApplicationOnCreate)")
    # the root says what it is: the threads with time (tracegen's facts) and their total
    with open(os.path.join(ctx.corpus, "app-startup.facts.json"), encoding="utf-8") as f:
        facts = json.load(f)
    busy = [t for t in facts["threads"] if t["wall_total_us"] > 0]
    want_root = f"all {len(busy)} threads ({sum(t['wall_total_us'] for t in busy):,} us)"
    for res, label in ((results[0], "standalone"), (results[6], "standalone inverted")):
        ctx.eq(res["before"]["frames"][0]["label"], want_root, f"{label}: the root frame's label")
    for res, label in ((results[2], "embedded ga"), (results[3], "embedded hostile gb")):  # the engine's default name
        root = res["before"]["frames"][0]
        ctx.eq(root["label"], f"all ({tf.split_title(root['title'])[1]:,} us)", f"{label}: the root frame's label")
    ctx.check(results[1]["legend"] is not None, "standalone hostile: the legend is in the document")
    # the two graphs of a page are independent: zooming one left the other as it was
    ctx.eq([f["x"] for f in results[2]["after"]["frames"]], [f["x"] for f in results[2]["before"]["frames"]],
           "embedded ga unchanged at the end")
    for shot in ("app-startup.png", "app-startup-zoomed.png", "hostile.png", "embedded.png", "csp.png",
                 "app-startup-inverted.png"):
        p = os.path.join(w, shot)
        ctx.check(os.path.exists(p) and os.path.getsize(p) > 1000, f"screenshot {p}")
    print(f"screenshots in {w}")
    ctx.done()


if __name__ == "__main__":
    main()
