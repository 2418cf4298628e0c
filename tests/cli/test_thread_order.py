#!/usr/bin/env python3
"""Main thread first (issue 36 item 2): the views open on the main thread, not on the idle
daemon with the longest span. corpus/shapes/idle-daemons.scn lists the daemons first, each
waiting most of the trace (Thread.sleep, Object.wait, a queue's take), then a RenderThread and
a pool thread that work a little, and main, which works between its Looper's waits.

The expected order is computed from the generator's facts (its own model), never from
traceconv: main first (the thread named main; with main renamed, the thread whose tid is the
pid; with neither, the busiest), then the others by their time outside the idle waits of
--ignore-idle (a thread's wall total less the inclusive time of its idle-wait methods, from
the facts' per-thread profile), idle daemons last (tclib.views_order). Checked in the flame
graph (its towers left to right), the report (text sections, CSV groups, HTML sections and the
picker's data), speedscope (profile order, activeProfileIndex) and serve's info.json (the
picker's order, main marked). The summary's hint names --ignore-idle when idle waits are
most of the threads' time (the facts' sums), and not with --ignore-idle or on app-startup.

Before this change (traceconv of 23ea913) every view lists the threads in the tables' order
(FinalizerWatchdogDaemon first; flamegraph.pl's name order in the flame graph) and no hint
is given: every order check and the hint fail there."""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402
import test_serve  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
HINT = "--ignore-idle"


def generate(ctx, stem, text):
    scn, trace = os.path.join(ctx.work, stem + ".scn"), os.path.join(ctx.work, stem + ".trace")
    facts = os.path.join(ctx.work, stem + ".facts.json")
    with open(scn, "w") as f:
        f.write(text)
    r = ctx.run([scn, trace, "--facts", facts], exe=ctx.tracegen)
    if not ctx.eq(r.returncode, 0, f"tracegen {stem}: {r.stderr[-300:]!r}"):
        return None, None
    with open(facts, encoding="utf-8") as f:
        return trace, json.load(f)


def busy_idle(facts):
    """Per tid: (wall total outside idle waits, inside them), in µs, from the facts' profile."""
    methods = facts["profile"]["methods"]
    idle = {i for i, m in enumerate(methods) if tclib.is_idle_wait(f"{m['class']}.{m['name']}")}
    out = {}
    for t in facts["threads"]:
        prof = next(p for p in facts["profile"]["threads"] if p["tid"] == t["tid"])
        waits = sum(m["incl_wall_us"] for m in prof["methods"] if m["method"] in idle)
        out[t["tid"]] = (t["wall_total_us"] - waits, waits)
    return out


def expected(facts):
    """[(tid, name)] in the views' order."""
    threads = [(t["tid"], t["name"], t["records"]) for t in facts["threads"]]
    bi = busy_idle(facts)
    order = tclib.views_order(threads, facts["pid"] if facts["pid"] is not None else -1,
                              {i: bi[t[0]][0] for i, t in enumerate(threads)})
    return [(threads[i][0], threads[i][1]) for i in order]


def towers(ctx, label, svg):
    root = ET.parse(svg).getroot()
    g = next(g for g in root.iter(SVG + "g") if g.get("id") == "frames")
    frames = []
    for fr in g:
        name = re.sub(r" \([0-9,]+ [^()]*\)$", "", fr.find(SVG + "title").text)
        rect = fr.find(SVG + "rect")
        frames.append((name, float(rect.get("x")), float(rect.get("y"))))
    row = frames[0][2] - 16  # the row above "all"
    return [n for n, _, _ in sorted((f for f in frames if f[2] == row), key=lambda f: f[1])]


def check_views(ctx, label, trace, want):
    names = [f"{n}-{tid}" for tid, n in want]
    w = os.path.join(ctx.work, label)
    r = ctx.run(["-q", "-f", "-o", "flamegraph", "--minwidth", "0", trace, w + ".svg"])
    if ctx.eq(r.returncode, 0, f"{label}: flamegraph"):
        ctx.eq(towers(ctx, label, w + ".svg"), names, f"{label}: the flame graph's towers, left to right")
    r = ctx.run(["-q", "-f", "-o", "report", trace, w + ".txt"])
    if ctx.eq(r.returncode, 0, f"{label}: report"):
        got = re.findall(r"^Thread (.*) \(tid (\d+)\)$", open(w + ".txt", encoding="utf-8").read(), re.M)
        ctx.eq([(int(t), n) for n, t in got], want, f"{label}: the text report's thread sections")
    r = ctx.run(["-q", "-f", "-o", "report-csv", trace, w + ".csv"])
    if ctx.eq(r.returncode, 0, f"{label}: report-csv"):
        seen = []
        for line in open(w + ".csv", encoding="utf-8").read().splitlines()[1:]:
            tid = line.split(",")[1]
            if tid and (not seen or seen[-1] != int(tid)):
                seen.append(int(tid))
        ctx.eq(seen, [t for t, _ in want], f"{label}: the CSV's thread groups")
    r = ctx.run(["-q", "-f", "-o", "report-html", trace, w + ".report.html"])
    if ctx.eq(r.returncode, 0, f"{label}: report-html"):
        page = open(w + ".report.html", encoding="utf-8").read()
        got = re.findall(r'<details class="thread"><summary>Thread <span class="thread-name">(.*?)</span>', page)
        ctx.eq(got, [n for _, n in want], f"{label}: the HTML report's thread sections")
        m = re.search(r'<script type="application/json" id="pv-data">(.*?)</script>', page, re.S)
        data = json.loads(m.group(1)) if m else {}
        ctx.eq([(t["tid"], t["name"]) for t in data.get("threads", [])], want,
               f"{label}: the HTML report's picker and tree list main first")
    r = ctx.run(["-q", "-f", "-o", "speedscope", trace, w + ".speedscope.json"])
    if ctx.eq(r.returncode, 0, f"{label}: speedscope"):
        doc = json.load(open(w + ".speedscope.json", encoding="utf-8"))
        ctx.eq([p["name"] for p in doc["profiles"]], [f"{n} (tid {t})" for t, n in want],
               f"{label}: speedscope's profiles")
        ctx.eq(doc["activeProfileIndex"], 0, f"{label}: speedscope opens on the first profile (main's)")


def check_hint(ctx, label, trace, facts):
    bi = busy_idle(facts)
    mostly_idle = sum(i for _, i in bi.values()) > sum(b for b, _ in bi.values())
    r = ctx.run(["-f", "-o", "folded", trace, os.path.join(ctx.work, label + ".folded")])
    err = r.stderr.decode(errors="replace")
    ctx.eq(HINT in err, mostly_idle, f"{label}: the summary's idle hint iff idle waits are most of the time ({err!r})")
    if mostly_idle:
        ctx.check(re.search(r"; hint: idle waits .* most of the threads' time: --ignore-idle", err) is not None,
                  f"{label}: the hint says so and names --ignore-idle: {err!r}")
        r = ctx.run(["-f", "-o", "folded", "--ignore-idle", trace, os.path.join(ctx.work, label + "-i.folded")])
        ctx.check("hint" not in r.stderr.decode(errors="replace"), f"{label}: --ignore-idle given: no hint")
    return mostly_idle


def check_serve(ctx, trace, want):
    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    try:
        mp, ctype = test_serve.multipart([("trace", os.path.basename(trace), open(trace, "rb").read())])
        st, _, out = test_serve.request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        if not ctx.eq(st, 200, "serve: upload"):
            return
        st, _, info = test_serve.request(srv, "GET", json.loads(out)["result"] + "/info.json")
        info = json.loads(info)
        live = [t for t in info["threads"] if t["records"]]
        ctx.eq([(t["tid"], t["name"]) for t in live], want, "serve: info.json lists the threads main first")
        ctx.eq([t["tid"] for t in info["threads"] if t.get("main")], [want[0][0]], "serve: the main thread is marked")
    finally:
        srv.stop()


def main():
    ctx = tclib.Ctx()
    base = open(os.path.join(ctx.source, "corpus", "shapes", "idle-daemons.scn"), encoding="utf-8").read()
    variants = [("named-main", base),
                # the main thread named after the app (as systrace shows it): the thread whose tid is the pid
                ("tid-is-pid", base.replace("thread 5001 main", 'thread 5001 "com.example.idle"')),
                # neither: the busiest thread
                ("busiest", base.replace("thread 5001 main", 'thread 5001 "ui"').replace("pid 5001", "pid 4999"))]
    first = None
    for label, text in variants:
        trace, facts = generate(ctx, label, text)
        if not trace:
            continue
        want = expected(facts)
        ctx.check(want[0][1] != facts["threads"][0]["name"], f"{label}: the model's main is not the first listed thread")
        check_views(ctx, label, trace, want)
        if first is None:
            first = (trace, want)
            ctx.check(check_hint(ctx, label, trace, facts), f"{label}: the shape is mostly idle (the model says)")
    startup = os.path.join(ctx.corpus, "app-startup.trace")
    with open(os.path.join(ctx.corpus, "app-startup.facts.json"), encoding="utf-8") as f:
        facts = json.load(f)
    ctx.check(not check_hint(ctx, "app-startup", startup, facts), "app-startup: mostly work (the model says)")
    check_views(ctx, "app-startup", startup, expected(facts))
    if first:
        check_serve(ctx, *first)
    ctx.done()


if __name__ == "__main__":
    main()
