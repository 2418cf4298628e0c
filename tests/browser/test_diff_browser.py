#!/usr/bin/env python3
"""The differential flame graph of `traceconv diff -o flamegraph` works in a real browser:
headless Chromium (Debian's chromium, driven by puppeteer-core from tests/browser, the
flame graph browser test's tests/browser/flame.js and its checks in
test_flamegraph_browser.py) opens

- the differential SVG of a generated pair (test_diff.py's scenario: one method made
  slower), with red frames;
- the self-diff SVG of the hostile names (</script><script>window.pwned=1</script>, ...);

and checks: no console error or failed request; a real click on a frame zooms (it becomes
full width, frames outside are hidden, ancestors dimmed) and Reset Zoom restores every
frame; a search reports the "Matched" percentage computed here from the frames' counts;
hovering shows "Function: <tooltip>" with the "; +D%" change; a hostile name runs nothing;
the browser sees the red/blue fills the file has (the slowed method red).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import browserlib  # noqa: E402
import tclib  # noqa: E402
import test_diff as td  # noqa: E402  (the generated pair)
import test_flamegraph as tf  # noqa: E402  (SVG parsing, the hostile input)
import test_flamegraph_browser as tfb  # noqa: E402  (the checks of one graph)


def model_of(frames):
    """Frames as flame.js shows them: the title text as written."""
    return [dict(title=f"{f['name']} ({f['count']:,} us, {f['pct']}%)" if i else f"all ({f['count']:,} us, 100%)",
                 x=f["x"], y=f["y"], width=f["width"]) for i, f in enumerate(frames)]


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    w = ctx.work
    base = td.generate(ctx, "pair-base", td.SLOW, "onlyb")
    new = td.generate(ctx, "pair-new", td.SLOW + td.DELTA, "onlyn")
    pair = os.path.join(w, "pair.svg")
    hostile_src = os.path.join(w, "hostile.systrace")
    tf.hostile_trace(hostile_src)
    hostile = os.path.join(w, "hostile.svg")
    ok = td.diff(ctx, base, new, "flamegraph", ("--minwidth", "0"), out=pair).returncode == 0
    ok &= td.diff(ctx, hostile_src, hostile_src, "flamegraph", ("--minwidth", "0"), out=hostile).returncode == 0
    if not ok:
        ctx.done()
    _, pframes = tf.our_frames(ctx, "pair", pair)
    _, hframes = tf.our_frames(ctx, "hostile", hostile)
    if not pframes or not hframes:
        ctx.done()
    pmodel, hmodel = model_of(pframes), model_of(hframes)
    width = 1200
    click = next((i for i, f in enumerate(pframes) if f["name"] == "com.ex.App.work"), 1)
    hostile_idx = [i for i, f in enumerate(hframes) if "pwned" in f["name"] or "onerror" in f["name"]]
    graphs = [
        dict(url="file://" + pair, svg=None, prefix="", click=click,
             searches=[{"term": "com\\.ex\\.Db", "how": "button"}, {"term": "APP", "ic": True, "how": "key"}],
             hover=[click, 0], shot=os.path.join(w, "pair.png")),
        dict(url="file://" + hostile, svg=None, prefix="", click=hostile_idx[0],
             searches=[{"term": "script", "how": "button"}], hover=hostile_idx, shot=os.path.join(w, "hostile.png")),
    ]
    res = browserlib.run_spec(ctx, node, "flame.js", {"graphs": graphs}, os.path.join(w, "spec.json"),
                              os.path.join(w, "result.json"), "flame.js")
    if res is None:
        ctx.done()
    results = res["results"]
    for g, res, m, label in zip(graphs, results, (pmodel, hmodel), ("differential pair", "differential hostile")):
        tfb.check_graph(ctx, label, g, res, m)
        ctx.eq(res["pwned"][2], 1, f"{label}: <script> elements in the document")
    seen = results[0]["before"]
    ctx.eq(seen["width"], width, "pair: svg width")
    slow = [f for f in seen["frames"] if f["title"].startswith("com.ex.Db.query (")]
    ctx.check(slow and all(f["fill"] == "rgb(255,0,0)" for f in slow),
              f"pair: the browser shows the slowed method pure red: {[f['fill'] for f in slow]}")
    ctx.check(all("; " in f["title"] for f in seen["frames"][1:]), "pair: every tooltip carries the change")
    ctx.done()


if __name__ == "__main__":
    main()
