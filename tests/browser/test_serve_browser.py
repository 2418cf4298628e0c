#!/usr/bin/env python3
"""`traceconv serve`'s page in a real browser: headless Chromium (Debian's chromium,
driven by puppeteer-core, tests/browser/serve.js) uploads corpus/app-startup.trace
through the page's form and, on the result page:

- the flame graph (its own SVG document in a sandboxed iframe) has one root frame per
  thread of the tracegen facts (`name-tid`), under `all`, and hovering a thread root
  shows "Function: <its tooltip>" in the graph's details line; the iframe's script
  cannot reach the page (sandboxed: an opaque origin);
- the CPU tab loads the CPU flame graph; the thread table lists every thread of the facts;
- the pprof download (fetched by the page from its link) is accepted by
  `go tool pprof -raw`, the Perfetto download decoded by protoc with the upstream schema;
- no console error, failed request or CSP violation (page or graph);
- screenshots: serve-result.png and serve-error.png in the test's work dir;
- the selection (issue 24): the thread picker lists the facts' threads by name and tid,
  none ticked; a range dragged on the timeline fills since/until; with one thread ticked and
  Apply, the flame graph shown is that thread's alone (its one root under `all`), the
  report and every download link carry the selection, and the folded download is what
  `traceconv -o folded --thread TID --since S --until U` writes; a Chrome JSON trace whose
  thread name is markup shows the name as text in the picker and runs no script;
- the time bar and the excerpts (issue 36): a trace written here whose main thread is busy in
  a known window (test_activity's scenario, tracegen): the bars drawn in the time bar are, bin
  by bin, the calls begun per bin computed from the scenario, every thread's with none ticked
  and main's alone with main ticked, and the words under the bar name the thread; a search
  typed into the flame graph's field inside its sandboxed frame (where prompt() is refused)
  reports "Matched" as the scenario's Busy.work time over the threads' total; with main
  ticked and a range inside its busy window applied, the top methods are that thread's in
  that window (the scenario's methods there: Busy.outer, Thread.run, Busy.work; no
  Object.wait, no worker) and equal the lines `traceconv -o report --thread --since --until`
  writes, under a title naming the selection; "Whole trace" brings back the whole trace's;
- random bytes uploaded through the form show the CLI's own line for that file;
- on a server whose --keep-size (32K) is below the trace's size, the page says the trace
  is too large (its name, the sizes, the option) without sending it.
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import browserlib  # noqa: E402
import serve_lib  # noqa: E402
import tclib  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import test_activity as ta  # noqa: E402  (the busy-window scenario and its model)
import test_thread_order  # noqa: E402

WINDOW_SINCE, WINDOW_UNTIL = "650.5ms", "850.5ms"  # inside main's busy window (600..900 ms)


def check_selection(ctx, res, facts, trace, pick, hostile_name):
    ctx.eq(res["pickerTicked"], 0, "the thread picker: nothing ticked (every thread)")
    ctx.eq(sorted((int(p["tid"]), p["name"]) for p in res["picker"]),
           sorted((t["tid"], t["name"]) for t in facts["threads"]), "the thread picker: the facts' threads")
    # issue 36: main first, then by time outside idle waits (the model: tests/cli/test_thread_order.py)
    ctx.eq([(int(p["tid"]), p["name"]) for p in res["picker"]], test_thread_order.expected(facts),
           "the thread picker: the views' order, main first")
    ctx.eq([p["main"] for p in res["picker"]], [True] + [False] * (len(res["picker"]) - 1),
           "the thread picker: the main thread marked")
    ctx.check(res["picker"] and res["picker"][0]["facts"].startswith(" main thread"),
              f"the thread picker says which is the main thread: {res['picker'][:1]}")
    seconds = (facts["trace_end_us"] - facts["trace_start_us"]) / 1e6
    ctx.check(f"{seconds:g} s" in res["duration"], f"the trace's duration shown: {res['duration']!r}")
    ms = re.compile(r"\d+(\.\d+)?ms")
    ctx.check(ms.fullmatch(res["since"]) and ms.fullmatch(res["until"]),
              f"the brush gives since and until: {res['since']!r} {res['until']!r}")
    frac = [float(res[k][:-2] or "nan") / (seconds * 1000) for k in ("since", "until")]
    ctx.check(abs(frac[0] - 0.2) < 0.05 and abs(frac[1] - 0.7) < 0.05, f"the brush's range is where it was dragged: {frac}")
    sel = f"thread={pick['tid']}&since={res['since']}&until={res['until']}"
    ctx.check(res["selFlameUrl"].endswith("/flame-wall.svg?" + sel), f"the flame graph's address: {res['selFlameUrl']}")
    ys = sorted({f["y"] for f in res["selFrames"]}, reverse=True)
    roots = sorted(f["title"].split(" (")[0] for f in res["selFrames"] if f["y"] == ys[1])
    ctx.eq(roots, [f"{pick['name']}-{pick['tid']}"], "the flame graph with the selection: that thread's frame alone")
    ctx.check(res["selReport"].endswith("/report.html?" + sel), f"the report carries the selection: {res['selReport']}")
    for link in res["selLinks"]:
        ctx.check(link["href"].endswith("?download=1&" + sel), f"the download carries the selection: {link['href']}")
    ctx.check(res["selPageUrl"].endswith("?" + sel), f"the page's address keeps the selection: {res['selPageUrl']}")
    out = os.path.join(ctx.work, "selected.folded")
    r = subprocess.run([ctx.traceconv, "-f", "-o", "folded", "--thread", str(pick["tid"]), "--since", res["since"],
                        "--until", res["until"], trace, out], capture_output=True)
    ctx.eq(r.returncode, 0, "traceconv -o folded with the selection")
    with open(out, encoding="utf-8") as f:
        want = f.read()
    got = res["selFolded"] or {}
    ctx.check(got.get("status") == 200 and got.get("text") == want and want,
              "the folded download with the selection: the command's output")
    ctx.eq(res["hostileNames"], [hostile_name], "a hostile thread name: text in the picker")
    ctx.eq(res["hostileElements"], [], "a hostile thread name makes no element")
    ctx.eq(res["pwned"], False, "a hostile thread name runs no script")
    ctx.eq(res["errorsHostile"], [], "console errors with a hostile thread name")


def check_callers(ctx, res, trace):
    """The methods' fields (issue 36): callers of a method as people type it, with a focus; the
    flame graph and downloads carry them (no reverse: callers is bottom-up already), the flame
    graph is the command's callers graph, and a reload keeps the fields."""
    ctx.eq(sorted(f["id"] for f in res["methodFields"] if not f["disabled"]), ["callers", "focus", "ignore"],
           "the methods' fields, enabled")
    sel = "focus=onCreate&callers=LayoutInflater.inflate"
    ctx.check(res["callersFlameUrl"].endswith("/flame-wall.svg?" + sel),
              f"the flame graph's address carries focus and callers, not reverse: {res['callersFlameUrl']}")
    ctx.eq(res["callersTitle"], "Callers of LayoutInflater.inflate", "the callers flame graph's title")
    ys = sorted({f["y"] for f in res["callersFrames"]}, reverse=True)
    base = [f["title"].split(" (")[0] for f in res["callersFrames"] if f["y"] == ys[1]]
    ctx.eq(base, ["android.view.LayoutInflater.inflate"], "the callers flame graph stands on the method")
    out = os.path.join(ctx.work, "callers.folded")
    r = subprocess.run([ctx.traceconv, "-f", "-o", "folded", "--focus", "onCreate", "--callers",
                        "LayoutInflater.inflate", trace, out], capture_output=True)
    ctx.eq(r.returncode, 0, "traceconv -o folded --focus onCreate --callers LayoutInflater.inflate")
    with open(out, encoding="utf-8") as f:
        want = f.read()
    got = res["callersFolded"] or {}
    ctx.check(got.get("status") == 200 and got.get("text") == want and want.startswith("android.view.LayoutInflater"),
              "the folded download with the methods' fields: the command's output")
    ctx.eq((res["callersKept"], res["focusKept"]), ("LayoutInflater.inflate", "onCreate"), "a reload keeps the fields")
    ctx.eq(res["callersCleared"], "", "Whole trace clears the fields")
def report_excerpt(text):
    """The top-methods excerpt as the page cuts it (serve_page.c's rule): from "All threads" to
    the table's first blank line, at most 30 rows after its head."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("All threads"))
    head = next(i for i in range(start, len(lines)) if lines[i].startswith("index "))
    end = head
    while end < len(lines) and lines[end] and end < head + 31:
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def check_time_bar(ctx, res, trace, facts):
    w = res.get("window")
    if not ctx.check(w, "the time-bar phase ran"):
        return
    start, end = facts["trace_start_us"] * 1000, facts["trace_end_us"] * 1000
    want = {tid: ta.model([start + us * 1000 for us in s], start, end) for tid, s in ta.window_starts().items()}
    every = [a + b for a, b in zip(want[700], want[701])]
    for key, counts, what in (("barsAll", every, "every thread (none ticked)"), ("barsOne", want[700], "main ticked")):
        got = {b["bin"]: b["count"] for b in w[key]}
        ctx.eq(got, {k: c for k, c in enumerate(counts) if c}, f"the time bar's bars, {what}: calls begun per bin")
        top = max(counts)
        ctx.check(all(abs(b["height"] - max(4, b["count"] / top * 100)) < 1e-6 for b in w[key]),
                  f"the time bar's bars, {what}: heights relative to the highest")
    ctx.check(w["barsBox"]["w"] > 200 and w["barsBox"]["h"] >= 30, f"the bars fill the time bar: {w['barsBox']}")
    ctx.check("every thread" in w["whatAll"] and "main (700)" in w["whatOne"],
              f"the words under the bar name what they count: {w['whatAll']!r} / {w['whatOne']!r}")
    ctx.eq(w["flameMatched"], "Matched: %.1f%%" % (100 * (300_000 + 200_000) / (1_300_000 + 1_300_000)),
           "a search typed into the flame graph's field in its sandboxed frame")
    names = set(re.findall(r"com\.example\.Busy\.\w+|java\.lang\.\w+\.\w+", w["topAfter"]))
    ctx.eq(names, {"com.example.Busy.outer", "java.lang.Thread.run", "com.example.Busy.work"},
           "the top methods of the selection: main's methods in its busy window")
    ctx.check("java.lang.Object.wait" in w["topBefore"], "the whole trace's top methods have Object.wait")
    ctx.check("All threads (1)" in w["topAfter"], f"the selection's excerpt is of one thread: {w['topAfter'][:40]!r}")
    out = os.path.join(ctx.work, "window-selected.txt")
    r = subprocess.run([ctx.traceconv, "-q", "-f", "-o", "report", "--thread", "700", "--since", WINDOW_SINCE,
                        "--until", WINDOW_UNTIL, trace, out], capture_output=True)
    if ctx.eq(r.returncode, 0, "traceconv -o report with the selection"):
        with open(out, encoding="utf-8") as f:
            ctx.eq(w["topAfter"], report_excerpt(f.read()), "the top methods: the command's report of the selection")
    ctx.check("selection" in w["topTitleAfter"] and "thread main (700)" in w["topTitleAfter"] and
              WINDOW_SINCE in w["topTitleAfter"], f"the excerpt's title names the selection: {w['topTitleAfter']!r}")
    ctx.check(w["pcAfter"].startswith("index ") and "com.example.Busy.work" in w["pcAfter"] and
              "Object.wait" not in w["pcAfter"], "parents and children follow the selection too")
    ctx.eq(w["topWhole"], w["topBefore"], "Whole trace: the whole trace's top methods again")


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    trace = os.path.join(ctx.corpus, "app-startup.trace")
    with open(os.path.join(ctx.corpus, "app-startup.facts.json")) as f:
        facts = json.load(f)
    bad = os.path.join(ctx.work, "noise.bin")
    with open(bad, "wb") as f:
        f.write(os.urandom(2048))
    r = subprocess.run([ctx.traceconv, "-o", "folded", "noise.bin", "x.folded"], cwd=ctx.work, capture_output=True)
    want_error = r.stderr.decode(errors="replace").strip().splitlines()[-1]

    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    small = serve_lib.Server(ctx.traceconv, ctx.work, "--keep-size", "32K", tmpdir=os.path.join(ctx.work, "small"))
    pick = [t for t in facts["threads"] if t["name"] == "OkHttp Dispatcher"][0]
    hostile_name = "<img src=x onerror=window.pwned=1>\u202e"
    hostile = os.path.join(ctx.work, "hostile.json")
    with open(hostile, "w") as f:
        json.dump({"traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": hostile_name}},
            {"ph": "X", "name": "work", "pid": 7, "tid": 8, "ts": 0, "dur": 100}]}, f)
    window = os.path.join(ctx.work, "busy-window.trace")
    with open(os.path.join(ctx.work, "busy-window.scn"), "w", encoding="utf-8") as f:
        f.write(ta.WINDOW_SCN)
    r = subprocess.run([ctx.tracegen, os.path.join(ctx.work, "busy-window.scn"), window, "--facts",
                        window + ".facts.json"], capture_output=True)
    ctx.eq(r.returncode, 0, f"tracegen busy-window.scn: {r.stderr.decode(errors='replace')}")
    with open(window + ".facts.json", encoding="utf-8") as f:
        window_facts = json.load(f)
    result = os.path.join(ctx.work, "browser.json")
    try:
        res = browserlib.run_harness(ctx, node, "serve.js", [srv.url, trace, bad, ctx.work, small.url,
                                                             str(pick["tid"]), hostile, window, "700", WINDOW_SINCE,
                                                             WINDOW_UNTIL, result],
                                     result, "serve.js failed")
    finally:
        rc = srv.stop()
        small.stop()
    ctx.eq(rc, 0, "server exit status")
    if res is None:
        ctx.done()

    ctx.eq(res["errors"], [], "console errors and failed requests on the result page")
    ctx.eq(res["pageCsp"], [], "CSP violations on the page")
    ctx.eq(res["frameCsp"], [], "CSP violations in the flame graph")
    ctx.eq(res["frameCanReachPage"], False, "the flame graph's script cannot reach the page")
    titles = [f["title"] for f in res["frames"]]
    ys = sorted({f["y"] for f in res["frames"]}, reverse=True)
    roots = sorted(f["title"].split(" (")[0] for f in res["frames"] if f["y"] == ys[1])
    # flamegraph.pl's rule: frames narrower than --minwidth (0.1 px of the 1180 px between the pads) are left out
    total = sum(t["wall_total_us"] for t in facts["threads"])
    want_roots = sorted(f"{t['name']}-{t['tid']}" for t in facts["threads"]
                        if t["wall_total_us"] / total * 1180 >= 0.1)
    ctx.check(len(want_roots) >= 4, f"threads wide enough to be drawn: {want_roots}")
    ctx.eq(roots, want_roots, "the flame graph's thread roots are the facts' threads")
    ctx.check(titles and titles[0].startswith("all ("), f"the bottom frame is 'all': {titles[:1]}")
    ctx.eq(res["details"], "Function: " + res["hovered"], "hovering a thread root shows its tooltip")
    main_thread = [t for t in facts["threads"] if t["tid"] == facts["pid"]][0]
    main_title = [t for t in titles if t.startswith(f"main-{main_thread['tid']} (")]
    ctx.check(main_title and f"({main_thread['wall_total_us']:,} us".replace(",", ",") in main_title[0]
              or main_title and f"({main_thread['wall_total_us']} us" in main_title[0],
              f"main thread's tooltip carries its time in methods: {main_title}")
    ctx.check(res.get("cpuFrames", 0) > 3, "the CPU tab shows a CPU flame graph")
    ctx.eq(sorted(res["threadsTable"]), sorted(f"{t['name']} (tid {t['tid']})" for t in facts["threads"]),
           "the thread table")
    writers = {l["writer"] for l in res["links"]}
    for w in ("perfetto", "json", "pprof", "folded", "systrace", "speedscope", "report", "dot", "flamegraph"):
        ctx.check(w in writers, f"a download link for {w}")

    check_selection(ctx, res, facts, trace, pick, hostile_name)
    check_callers(ctx, res, trace)
    check_time_bar(ctx, res, window, window_facts)

    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    dl = res["downloads"]
    pprof = os.path.join(ctx.work, "from-page.pb.gz")
    with open(pprof, "wb") as f:
        f.write(base64.b64decode(dl["pprof"]["base64"]))
    ctx.eq(dl["pprof"]["disposition"], 'attachment; filename="app-startup.pb.gz"', "pprof download's name")
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", pprof], env=env)
    ctx.check(r is not None and r.returncode == 0, "go tool pprof accepts the page's pprof download")
    pf = base64.b64decode(dl["perfetto"]["base64"])
    r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"), "--decode=perfetto.protos.Trace",
                    "perfetto_trace.proto"], input=pf)
    ctx.check(r is not None and r.returncode == 0 and b'thread_name: "main"' in r.stdout,
              "protoc decodes the page's Perfetto download")

    ctx.eq(res["badError"], want_error, "random bytes: the CLI's line on the page")
    ctx.check(res["badUrl"] == srv.url, "the error is shown on the upload page")
    # the one console line allowed: Chromium's own note of the 422 answer itself
    ctx.eq([e for e in res["errorsAfterBad"] if "status of 422" not in e], [], "console errors after the bad upload")
    ctx.eq(res["pageCspAfterBad"], [], "CSP violations after the bad upload")
    kb = os.path.getsize(trace) / 1024
    ctx.eq(res.get("tooLarge"), f"app-startup.trace: too large for this server\u2019s page: the file is {kb:.1f}K and its "
           "store keeps 32K in all (--keep-size); the API (POST /api/convert) converts it without keeping it",
           "a trace larger than --keep-size: the page's line")
    ctx.eq(res.get("tooLargePosted"), 0, "a trace larger than --keep-size is not sent")
    for shot in ("serve-result.png", "serve-error.png", "serve-too-large.png", "serve-time-bar.png"):
        ctx.check(os.path.getsize(os.path.join(ctx.work, shot)) > 10000, f"screenshot {shot}")
    ctx.done()


if __name__ == "__main__":
    main()
