#!/usr/bin/env python3
"""speedscope itself opens our speedscope files: its own importer (the npm package
speedscope 1.25.0, pinned in tests/browser/speedscope, installed by scripts/setup.sh test) runs
in headless Chromium (Debian's chromium, one browser for every file: tests/browser/speedscope.js),
handed each file the way speedscope's command line does (speedscope.loadFileFromBase64);
tests/browser/speedscope/collect.js then opens the Sandwich view and reports what the page
shows. For a set of inputs (µs and ns clocks, thread CPU,
deep recursion, sampled stacks, names in many scripts, hostile names):

- the import succeeds: no "Something went wrong", no "Failed to load" in the console;
- the page title is "<input file name> - speedscope" (our top-level name; "<input file name>
  (weight cpu) - speedscope" with the selection --weight cpu);
- the profile chooser lists our profiles, in order, and the active one is the main
  thread's ("<name> (k/N)" in the toolbar);
- each profile's "Total Weight" is its thread's span, computed here from the IR dump
  (trace end - the thread's first event; thread CPU: last - first; sampled: the samples
  with their gaps), within the display's rounding (two decimals of its unit);
- the Sandwich table of the active profile has one row per function of that thread
  (names from the IR dump), each with its file as the title, and its Self and Total equal
  the folded output's (Self: the lines ending in the function; Total: the lines containing
  it, once however deep the recursion: speedscope's own rule), within the display's
  rounding (and 1 µs per folded line on ns clocks, see test_speedscope.py).

A missing chromium, node, puppeteer-core or speedscope package is a failure (make test installs
them)."""
import base64
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import browserlib  # noqa: E402
import tclib  # noqa: E402
import test_speedscope as ts  # noqa: E402  (the IR models, folded's name rules, the hostile names)

DURATION = re.compile(r"^(-?)(\d+\.\d\d)(s|ms|µs|ns)$")
MINUTES = re.compile(r"^(\d+):(\d\d)$")
NS_PER = {"s": 10 ** 9, "ms": 10 ** 6, "µs": 10 ** 3, "ns": 1}


def shown_ns(text):
    """(ns, tolerance ns) of a duration as speedscope shows it: "1.47s", "87.10ms", "1:05"."""
    v = text.split(" (")[0]
    m = DURATION.match(v)
    if m:
        sign = -1 if m.group(1) else 1
        return sign * float(m.group(2)) * NS_PER[m.group(3)], 0.0051 * NS_PER[m.group(3)]
    m = MINUTES.match(v)
    if m:
        return (int(m.group(1)) * 60 + int(m.group(2))) * 1e9, 1e9
    raise ValueError(f"not a duration: {text!r}")


COUNT = re.compile(r"^\d{1,3}(,\d{3})*$")


def shown_count(text):
    """(ns, tolerance) of a count profile's value as speedscope shows it (unit none: the number's
    toLocaleString, "396,592,419"), a count being 1000 ns as folded's µs are: exact."""
    v = text.split(" (")[0]
    if not COUNT.match(v):
        raise ValueError(f"not a count: {text!r}")
    return int(v.replace(",", "")) * 1000, 0.0


def write_loader(ctx, path, name):
    """The script speedscope's page runs (#localProfilePath): hands it the file, as speedscope's
    command line does, then collect.js reports what the page shows."""
    with open(path, "rb") as f:
        data = f.read()
    with open(os.path.join(ctx.source, "tests", "browser", "speedscope", "collect.js")) as f:
        collect = f.read()
    loader = os.path.join(ctx.work, name + ".load.js")
    with open(loader, "w") as f:
        f.write(f"speedscope.loadFileFromBase64({json.dumps(os.path.basename(path))}, "
                f"{json.dumps(base64.b64encode(data).decode())});\n{collect}")
    return loader


def open_in_speedscope(ctx, node, index_html, loaders):
    """{name: collect.js's report (dict) or None} for every (name, loader), all in one Chromium.
    On a loaded machine speedscope's import has, rarely, not finished when collect.js gives up:
    the pages that reported nothing are opened once more; one that reported anything is judged."""
    out, todo = {}, list(loaders)
    for attempt in (1, 2):
        spec = {"index": index_html, "files": [{"name": n, "loader": l} for n, l in todo]}
        res = browserlib.run_spec(ctx, node, "speedscope.js", spec, os.path.join(ctx.work, f"spec{attempt}.json"),
                                  os.path.join(ctx.work, f"result{attempt}.json"), "speedscope.js")
        if res is None:
            return out
        for name, _ in todo:
            page = res["files"].get(name) or {"result": None, "console": []}
            out[name] = page
            if page["result"] is None:
                print(f"{name}: collect.js reported nothing on attempt {attempt}")
        todo = [(n, l) for n, l in todo if out[n]["result"] is None]
        if not todo:
            break
    reports = {}
    for name, _ in loaders:
        console = out.get(name, {}).get("console", [])
        with open(os.path.join(ctx.work, name + ".console.txt"), "w") as f:
            f.write("\n".join(console))
        bad = [l for l in console if "Failed to load" in l or "Error" in l and "WebGL" not in l and "GL Driver" not in l]
        ctx.eq(bad, [], f"{name}: errors in speedscope's console")
        result = out.get(name, {}).get("result")
        reports[name] = json.loads(result) if ctx.check(result is not None, f"{name}: collect.js reported nothing") \
            else None
    return reports


def folded_model(folded_text, tid):
    """{function: (self µs, total µs, lines)} of one thread, from its folded lines."""
    out = {}
    for line in folded_text.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")[:1 + ts.MAX_DEPTH]  # deeper frames are not shown
        if int(frames[0].rpartition("-")[2]) != tid:
            continue
        for fn in set(frames[1:]):
            s, t, n = out.get(fn, (0, 0, 0))
            out[fn] = (s + (int(count) if frames[-1] == fn else 0), t + int(count), n + 1)
    return out


def prepare(ctx, label, src, extra=()):
    """The case's speedscope file and what it is judged by (its IR dump and folded stacks), or None."""
    name = re.sub(r"[^\w.-]", "_", label)
    out, _ = ctx.convert(src, "speedscope", os.path.join(ctx.work, name + ".speedscope.json"), extra=list(extra))
    if not out:
        return None
    with open(out, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    ir = ts.read_ir(ctx.run(["-q", "-o", "ir", src, "-"], check_rc=0).stdout.decode("utf-8", errors="replace"))
    folded = ctx.run(["-q", "-o", "folded", *extra, src, "-"], check_rc=0).stdout.decode("utf-8", errors="replace")
    return {"label": label, "name": name, "src": src, "extra": extra, "doc": doc, "ir": ir, "folded": folded,
            "loader": write_loader(ctx, out, name)}


def check_file(ctx, case, res):
    label, src, doc, ir, folded = case["label"], case["src"], case["doc"], case["ir"], case["folded"]
    cpu = "--weight" in case["extra"]
    if res is None:
        return
    if not ctx.check(not res["failed"], f"{label}: speedscope did not import it: {res['why']} ({res['toolbar']!r})"):
        return
    # our name: the input's, and the selection it was made with (issue 36, item 5)
    ctx.eq(res["title"], f"{os.path.basename(src)}{' (weight cpu)' if cpu else ''} - speedscope", f"{label}: page title")
    want, active = ts.expected_profiles(ir, cpu)
    if not want:
        return
    # the chooser (only with several profiles): ours, in order, each weighing what its
    # thread spends in frames; with one profile the toolbar shows just its name
    rows = res["profiles"] or []
    if len(want) > 1:
        ctx.eq([r[1] for r in rows], [p["name"] for p in doc["profiles"]], f"{label}: the profile chooser lists ours")
        ctx.eq([r[1] for r in rows], [n for _, _, n in want], f"{label}: profiles are the threads, in order")
    active_text = f"{want[active][2]} ({active + 1}/{len(want)})" if len(want) > 1 else want[active][2]
    ctx.check(active_text in res["toolbar"], f"{label}: active profile {active_text!r} in {res['toolbar'][:120]!r}")
    shown_value = shown_count if ir["count"] else shown_ns  # a count profile: raw counts, unit none
    lines_of = {}
    for tid, fns in ((ir["threads"][t][0], folded_model(folded, ir["threads"][t][0])) for t, _, _ in want):
        lines_of[tid] = (sum(s for s, _, _ in fns.values()), sum(1 for s, _, _ in fns.values() if s))
    for (thread, kind, pname), row in zip(want, rows):
        got, tol = shown_value(row[2])
        tid = ir["threads"][thread][0]
        total_us, n_lines = lines_of[tid]
        if sum(1 for t, _, _ in want if t == thread) > 1:
            continue  # calls and samples of one thread: folded sums both profiles
        exact = ir["trace"].get("reader") == "art" or ir["count"]  # µs clocks and counts: no rounding
        ctx.check(abs(got - total_us * 1000) <= tol + (0 if exact else 1000 * n_lines),
                  f"{label}: {pname}: total weight {row[2]} vs folded {total_us} µs")
    # the Sandwich view of the active profile against folded's lines of its thread
    thread = want[active][0]
    tid = ir["threads"][thread][0]
    entries = ts.frame_entries(ir)
    used = {m for k, t, m, *rest in ir["events"] if k == "B" and t == thread and rest[-1] < ts.MAX_DEPTH}
    if want[active][1] == "sampled":
        used = set()
        for k, t, _, _, _, sid, value, _ in ir["events"]:
            if k == "P" and t == thread and value and value > 0:
                used.update(ts.sample_chain(ir, sid))
    files = {}
    for m in used:
        files.setdefault(entries[m][0], set()).add(entries[m][1])
    sw = res["sandwich"] or {"rows": [], "height": 0, "rowHeight": 1}
    n_rows = round(sw["height"] / sw["rowHeight"]) if sw["rowHeight"] else 0
    # a function is a frame entry: one name in two files (perf's "[unknown]" of libc.so and of
    # the kernel) is two rows
    ctx.eq(n_rows, sum(len(f) for f in files.values()), f"{label}: Sandwich rows = functions of {want[active][2]}")
    shown = {r[2]: r for r in sw["rows"]}
    ctx.check(set(shown) <= set(files), f"{label}: Sandwich names not in the trace: {sorted(set(shown) - set(files))[:3]}")
    model = folded_model(folded, tid)
    reader = ir["trace"].get("reader")
    by_folded = {}  # every function of the thread (rendered or not) under its folded name
    for fn in files:
        by_folded.setdefault(ts.folded_sanitize(ts.short_of(fn, reader)), []).append(fn)
    per_line = 0 if reader == "art" or ir["count"] else 1000  # folded's per-line rounding on ns clocks
    for fn, r in shown.items():
        if r[3] not in files.get(fn, ()) and not (r[3] is None and None in files.get(fn, ())):
            ctx.fail(f"{label}: {fn}: file {r[3]!r}, want one of {files.get(fn)}")
        key = ts.folded_sanitize(ts.short_of(fn, reader))
        if len(by_folded[key]) > 1 or len(files[fn]) > 1:
            continue  # overloads, or one name in several files: one folded name for several functions
        self_us, total_us, lines = model.get(key, (0, 0, 0))
        for col, want_us in ((1, self_us), (0, total_us)):
            got, tol = shown_value(r[col])
            ctx.check(abs(got - want_us * 1000) <= tol + per_line * lines,
                      f"{label}: {fn}: {'self' if col else 'total'} {r[col]} vs folded {want_us} µs")


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    index_html = os.path.join(ctx.source, "tests", "browser", "speedscope", "node_modules", "speedscope", "dist",
                              "release", "index.html")
    if not os.path.exists(index_html):
        ctx.fail(f"{index_html} is missing (npm ci in tests/browser/speedscope; make test runs it)")
        ctx.done()
    rhea = os.path.join(ctx.corpus, "rhea")
    systrace = os.path.join(ctx.corpus, "systrace")
    hostile = os.path.join(ctx.work, "hostile.systrace")
    ts.write_hostile(hostile)
    cases = [
        ("app-startup", os.path.join(ctx.corpus, "app-startup.trace"), ()),
        ("app-startup-cpu", os.path.join(ctx.corpus, "app-startup.trace"), ("--weight", "cpu")),
        ("recursion-10000", os.path.join(ctx.corpus, "recursion-10000.trace"), ()),
        ("names-utf8", os.path.join(ctx.corpus, "names-utf8-nullsource-dupthreads-unknownkeys.trace"), ()),
        ("android14-chunked", os.path.join(ctx.corpus, "android14-chunked.trace"), ()),
        ("btrace-v3-sampling", os.path.join(rhea, "v3-sampling.bin"), ()),
        ("rhea-v1-allthreads", os.path.join(rhea, "v1-allthreads.rhea-atrace.txt"), ()),
        ("rhea-v2-binary", os.path.join(rhea, "v2-appTrace.bin"), ()),
        ("atrace", os.path.join(systrace, "capture.txt"), ()),
        ("json-system", os.path.join(ctx.source, "tests", "json", "system.json"), ()),
        # perf's cycles:HG samples: sampled profiles of unit none, weighing the counts
        ("json-perf-counts", os.path.join(ctx.source, "tests", "json", "samples-perf.json"), ()),
        ("hostile", hostile, ()),
    ]
    art = ctx.extra_corpus("art")  # a large real trace, when TC_EXTRA_CORPUS holds it
    if art and os.path.exists(os.path.join(art, "studio-perflib-char_2_bytes.trace")):
        cases.append(("studio-char_2_bytes", os.path.join(art, "studio-perflib-char_2_bytes.trace"), ()))
    prepared = [c for c in (prepare(ctx, label, src, extra) for label, src, extra in cases) if c]
    reports = open_in_speedscope(ctx, node, index_html, [(c["name"], c["loader"]) for c in prepared])
    for case in prepared:
        check_file(ctx, case, reports.get(case["name"]))
    ctx.done()


if __name__ == "__main__":
    main()
