#!/usr/bin/env python3
"""Whose code (issue 24 items 5 and 8): the flame graph's default palette, android, paints each
frame by the group of its code, names the app's package in a legend, and the summary line says
when names look minified.

Independent of the code under test: every name of the generated inputs is labelled by hand
below with its group (the issue's rules: android.*, androidx.*, com.android.* the framework;
java.*, javax.*, kotlin.*, dalvik.*, libcore.*, sun.* the runtime; the app's package; every
other package a library; thread frames, slice names and unknown.0x... not Java methods), and
each frame's fill is checked to lie in its group's hue family as doc/cli.md, Flame graphs, states them (app
orange, framework green, runtime blue, libraries purple, the rest grey), read with colorsys.
The app's package is checked for each way it is found (given, process name, inferred from
time: the share computed from the inputs' own durations) on inputs whose app is known by
construction; test_app_found.py checks the lifecycle evidence and the real traces' shapes."""
import colorsys
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"

# name -> group, by hand
APP, FRAMEWORK, RUNTIME, LIBRARY, OTHER = "app", "framework", "runtime", "library", "other"
NAMES = {
    "com.example.app.MainActivity.onCreate": APP,
    "com.example.app.ui.FeedAdapter$1.bind": APP,
    "com.example.app.data.Repo.<init>": APP,
    "android.view.View.draw": FRAMEWORK,
    "androidx.recyclerview.widget.RecyclerView.onLayout": FRAMEWORK,
    "com.android.internal.os.ZygoteInit.main": FRAMEWORK,
    "java.lang.Thread.run": RUNTIME,
    "javax.crypto.Cipher.doFinal": RUNTIME,
    "kotlin.collections.CollectionsKt.map": RUNTIME,
    "dalvik.system.VMStack.getThreadStackTrace": RUNTIME,
    "libcore.io.Linux.read": RUNTIME,
    "sun.misc.Unsafe.park": RUNTIME,
    "okhttp3.OkHttpClient.newCall": LIBRARY,
    "com.google.gson.Gson.fromJson": LIBRARY,
    "kotlinx.coroutines.DispatchedTask.run": LIBRARY,
    "com.example.applib.Util.format": LIBRARY,  # the app's text as a prefix, not its package
    "androidxx.Foo.bar": LIBRARY,
    "javafx.scene.Node.layout": LIBRARY,
    "com.androidx.Foo.bar": LIBRARY,
    "com.example.-$$Lambda$Foo$abc.run": LIBRARY,
    "Choreographer#doFrame": OTHER,
    "RV OnBindView": OTHER,
    "inflate": OTHER,
    "unknown.0x1f": OTHER,
    "Lock contention on a monitor lock (owner tid: 12)": OTHER,
    "binder transaction": OTHER,
}
# hue bands in degrees (doc/cli.md, Flame graphs)
BANDS = {APP: (15, 50), FRAMEWORK: (90, 160), RUNTIME: (190, 235), LIBRARY: (260, 320)}


def family(fill):
    """The hue family a fill lies in: a group name, or None."""
    m = re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill or "")
    if not m:
        return None
    r, g, b = (int(x) / 255 for x in m.groups())
    if r == g == b:
        return OTHER
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    h *= 360
    hits = [k for k, (lo, hi) in BANDS.items() if lo <= h <= hi and s > 0.3]
    return hits[0] if len(hits) == 1 else None


def ir_input(path, process, names, threads=(("main", 42), ("com.example.app.Worker", 43))):
    """An IR text trace: on each thread, every name as one frame after the other, each
    nested in the first (so frames sit at depth 1 and 2)."""
    lines = ["traceconv-ir 1", "trace clock=dual has_wall=1 has_cpu=1 pid=42 start_ns=0"]
    if process is not None:
        lines.append("process " + json.dumps(process))
    for i, (tname, tid) in enumerate(threads):
        lines.append(f"thread {i} tid={tid} records={4 * len(names)} name={json.dumps(tname)}")
    for i, n in enumerate(names):
        lines.append(f"method {i} id=0 name={json.dumps(n)}")
    for t in range(len(threads)):
        ts = 0
        for i in range(len(names)):
            j = (i + 1) % len(names)
            lines.append(f"B t={t} m={i} d=0 ts={ts} cpu={ts}")
            lines.append(f"B t={t} m={j} d=1 ts={ts + 1000} cpu={ts + 1000}")
            lines.append(f"E t={t} m={j} d=1 ts={ts + 5000} cpu={ts + 5000}")
            lines.append(f"E t={t} m={i} d=0 ts={ts + 10000} cpu={ts + 10000}")
            ts += 10000
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def parse(ctx, label, path, prefix=""):
    """(root, frames, legend): frames as (title name, fill, y, height); legend as (texts, rects).
    prefix: an <svg> embedded in a page (report --html), ids prefixed ("fg-wall-frames")."""
    try:
        if prefix:
            with open(path, encoding="utf-8") as f:
                m = re.search(r'<svg id="%s".*?</svg>' % re.escape(prefix.rstrip("-")), f.read(), re.S)
            root = ET.fromstring(m.group(0)) if m else None
            if root is None:
                ctx.fail(f"{label}: no <svg id={prefix.rstrip('-')}> in the page")
                return None, [], None
        else:
            root = ET.parse(path).getroot()
    except ET.ParseError as e:
        ctx.fail(f"{label}: not XML: {e}")
        return None, [], None
    frames, legend = [], None
    for g in root.iter(SVG + "g"):
        if g.get("id") == prefix + "frames":
            for fr in g:
                title, rect = fr.find(SVG + "title").text, fr.find(SVG + "rect")
                name = re.sub(r" \([0-9,]+ [^()]*\)$", "", title)
                frames.append((name, rect.get("fill"), float(rect.get("y")), float(rect.get("height"))))
        elif g.get("id") == prefix + "legend":
            legend = ([t.text for t in g.iter(SVG + "text")], [r for r in g.iter(SVG + "rect")])
    return root, frames, legend


def thread_names(threads):
    return {f"{n}-{tid}" for n, tid in threads}


def check_frames(ctx, label, frames, app_pkg_groups, threads):
    """Every frame's fill in the family of its group."""
    wrong, seen = [], set()
    for name, fill, _, _ in frames:
        if name == "all" or name in threads:
            want = OTHER
        else:
            want = app_pkg_groups.get(name)
            if want is None:
                ctx.fail(f"{label}: a frame the input does not have: {name!r}")
                continue
        seen.add(want)
        if family(fill) != want:
            wrong.append((name, fill, want))
    ctx.check(not wrong, f"{label}: frames painted outside their group's family: {wrong[:5]}")
    ctx.eq(seen, {APP, FRAMEWORK, RUNTIME, LIBRARY, OTHER}, f"{label}: every group is drawn")


def check_legend(ctx, label, root, frames, legend, app_text):
    if not ctx.check(legend is not None, f"{label}: a legend (<g id=legend>)"):
        return
    texts, rects = legend
    ctx.eq(len(texts), 5, f"{label}: the legend has the four groups and the rest: {texts}")
    ctx.check(any(app_text in (t or "") for t in texts), f"{label}: the legend says {app_text!r}: {texts}")
    ctx.eq(sorted(family(r.get("fill")) for r in rects), sorted([APP, FRAMEWORK, RUNTIME, LIBRARY, OTHER]),
           f"{label}: one swatch per family")
    height = float(root.get("height"))
    top, bottom = min(float(r.get("y")) for r in rects), max(float(r.get("y")) + float(r.get("height")) for r in rects)
    ctx.check(0 < top and bottom < height - 20, f"{label}: the legend lies inside the image, above the details line")
    over = [f[0] for f in frames if f[2] < bottom and f[2] + f[3] > top]
    ctx.check(not over, f"{label}: the legend covers no frame ({top}-{bottom}): {over[:3]}")


def main():
    ctx = tclib.Ctx()
    work = ctx.work
    os.makedirs(work, exist_ok=True)
    names = list(NAMES)
    threads = (("main", 42), ("com.example.app.Worker", 43))
    src = ir_input(os.path.join(work, "groups.ir.txt"), "com.example.app", names, threads)

    # the default palette: android, the app from the IR's process name
    for extra in ([], ["--inverted"], ["--hash"], ["--colors", "android", "--width", "300"], ["--merge-threads"]):
        label = "default" + "".join(extra)
        out = os.path.join(work, f"g{len(extra)}{'i' if '--inverted' in extra else ''}.svg")
        r = ctx.run(["-q", "-f", "-o", "flamegraph", *extra, "-i", "ir", src, out])
        if not ctx.eq(r.returncode, 0, f"{label}: exit ({r.stderr[-300:]!r})"):
            continue
        root, frames, legend = parse(ctx, label, out)
        check_frames(ctx, label, frames, NAMES, set() if "--merge-threads" in extra else thread_names(threads))
        check_legend(ctx, label, root, frames, legend,
                     "(process name)" if "300" in extra else "app: com.example.app (process name)")

    # --app-package: okhttp3 becomes the app, the process's package a library
    given = dict(NAMES)
    for n, g in NAMES.items():
        if g == APP:
            given[n] = LIBRARY
    given["okhttp3.OkHttpClient.newCall"] = APP
    out = os.path.join(work, "given.svg")
    r = ctx.run(["-q", "-f", "-o", "flamegraph", "--app-package", "okhttp3", "-i", "ir", src, out])
    if ctx.eq(r.returncode, 0, f"--app-package: exit ({r.stderr[-300:]!r})"):
        root, frames, legend = parse(ctx, "given", out)
        check_frames(ctx, "--app-package okhttp3", frames, given, thread_names(threads))
        check_legend(ctx, "--app-package okhttp3", root, frames, legend, "app: okhttp3 (given)")

    # the HTML report's graphs: the same palette, groups and legend as the flame graph writer's
    out = os.path.join(work, "groups.report.html")
    r = ctx.run(["-q", "-f", "-o", "report-html", "-i", "ir", src, out])
    if ctx.eq(r.returncode, 0, f"report-html: exit ({r.stderr[-300:]!r})"):
        root, frames, legend = parse(ctx, "report-html", out, prefix="fg-wall-")
        if root is not None:
            check_frames(ctx, "report-html wall graph", frames, NAMES, thread_names(threads))
            check_legend(ctx, "report-html wall graph", root, frames, legend, "app: com.example.app (process name)")

    # other palettes: no legend
    r = ctx.run(["-q", "-f", "-o", "flamegraph", "--colors", "java", "-i", "ir", src, os.path.join(work, "java.svg")])
    if ctx.eq(r.returncode, 0, "--colors java: exit"):
        _, _, legend = parse(ctx, "java", os.path.join(work, "java.svg"))
        ctx.eq(legend, None, "--colors java: no legend")

    check_app_package(ctx, work)
    check_hint(ctx, work)
    ctx.done()


def legend_app(ctx, label, args):
    out = os.path.join(ctx.work, re.sub(r"\W", "_", label) + ".svg")
    r = ctx.run(["-q", "-f", "-o", "flamegraph", *args, out])
    if not ctx.eq(r.returncode, 0, f"{label}: exit ({r.stderr[-300:]!r})"):
        return None
    _, _, legend = parse(ctx, label, out)
    return next((t for t in legend[0] if t.startswith("app:")), None) if legend else None


def scenario(path, methods, calls):
    """A tracegen scenario: methods (id, class, name), one thread calling each in turn."""
    lines = ["version 3", "clock dual", "pid 500", "start 1000000"]
    lines += [f'method {i} {c} {m} "()V" X.java' for i, c, m in methods]
    lines.append("thread 500 main {")
    lines += [f"  call {i} {n}" for i, n in calls]
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def art_trace(ctx, stem, classes):
    """An ART trace (no process name) whose methods are one per class given."""
    scn = os.path.join(ctx.work, stem + ".scn")
    methods = [(f"m{i}", c, "run") for i, c in enumerate(classes)]
    scenario(scn, methods, [(m[0], 10 + i) for i, m in enumerate(methods)])
    out = os.path.join(ctx.work, stem + ".trace")
    r = ctx.run([scn, out], exe=ctx.tracegen)
    ctx.eq(r.returncode, 0, f"tracegen {stem}: {r.stderr[-300:]!r}")
    return out


def art_share(n_app, n_all):
    """The app's share of art_trace's time, in whole percent: method i lasts 10 + i µs, the app's first."""
    app = sum(10 + i for i in range(n_app))
    return round(100 * app / sum(10 + i for i in range(n_all)))


def ir_share(names, prefix):
    """A prefix's share of ir_input's time, each stretch under it once: frame i lasts 10 µs with
    frame i+1 (4 µs) inside it; an inner frame counts when its outer one is not under the prefix."""
    def under(n):
        return n.startswith(prefix + ".")
    t = 0
    for i, n in enumerate(names):
        t += 10 if under(n) else 4 if under(names[(i + 1) % len(names)]) else 0
    return round(100 * t / (10 * len(names)))


def check_app_package(ctx, work):
    lib = ["okhttp3.OkHttpClient", "okhttp3.Call", "com.google.gson.Gson", "android.app.Activity",
           "java.lang.Thread", "java.util.HashMap", "kotlin.Lazy"]
    # inferred, three segments: the app has more methods than any library, under one com.acme.notes
    app = [f"com.acme.notes.{p}.C{i}" for i, p in enumerate(["ui", "ui", "data", "data", "net"])]
    t = art_trace(ctx, "three", app + lib)
    ctx.eq(legend_app(ctx, "inferred com.acme.notes", [t]),
           f"app: com.acme.notes (inferred: {art_share(len(app), len(app + lib))}% of the wall time)",
           "inferred, 3 segments")
    ctx.eq(legend_app(ctx, "given over inferred", ["--app-package", "okhttp3", t]), "app: okhttp3 (given)",
           "--app-package wins over inference")
    # inferred, two segments: org.sample's code split evenly under ui, data, net
    app = [f"org.sample.{p}.C{i}" for i, p in enumerate(["ui", "ui", "data", "data", "net", "net"])]
    t = art_trace(ctx, "two", app + lib)
    two = f"app: org.sample (inferred: {art_share(len(app), len(app + lib))}% of the wall time)"
    ctx.eq(legend_app(ctx, "inferred org.sample", [t]), two, "inferred, 2 segments")
    # the file's stem is not a process name: an ART trace named like a package is still inferred
    stem = os.path.join(work, "com.fake.stem.trace")
    os.replace(t, stem)
    ctx.eq(legend_app(ctx, "stem", [stem]), two, "the file stem is not a process name")
    # process names: JSON's process_name metadata, an IR's, with a :service suffix; not a package: inferred
    doc = {"traceEvents": [{"ph": "M", "name": "process_name", "pid": 9, "tid": 9, "args": {"name": "com.json.app"}},
                           {"ph": "X", "name": "com.json.app.A.run", "pid": 9, "tid": 9, "ts": 0, "dur": 50},
                           {"ph": "X", "name": "okhttp3.B.run", "pid": 9, "tid": 9, "ts": 60, "dur": 50},
                           {"ph": "X", "name": "okhttp3.C.run", "pid": 9, "tid": 9, "ts": 120, "dur": 50}]}
    jp = os.path.join(work, "proc.json")
    with open(jp, "w") as f:
        json.dump(doc, f)
    ctx.eq(legend_app(ctx, "json process", [jp]), "app: com.json.app (process name)", "JSON's process name")
    ip = ir_input(os.path.join(work, "svc.ir.txt"), "com.example.app:sync", list(NAMES))
    ctx.eq(legend_app(ctx, "ir :service", ["-i", "ir", ip]), "app: com.example.app (process name)",
           "a service process's name without its :suffix")
    names = ["okhttp3.A.run", "com.x.y.Z.run", "com.x.y.W.run", "android.os.Looper.loop"]
    ip = ir_input(os.path.join(work, "sysserver.ir.txt"), "system_server", names)
    ctx.eq(legend_app(ctx, "ir system_server", ["-i", "ir", ip]),
           f"app: com.x.y (inferred: {ir_share(names, 'com.x.y')}% of the wall time)",
           "a process name that is not a package: inferred")
    names = ["com.example.app.shop.A.run", "okhttp3.A.run"]
    ip = ir_input(os.path.join(work, "cut.ir.txt"), "ample.app.shop", names)
    ctx.eq(legend_app(ctx, "ir cut comm", ["-i", "ir", ip]),
           f"app: com.example.app (inferred: {ir_share(names, 'com.example.app')}% of the wall time)",
           "a process name no method lies under (a comm cut to 15 bytes): inferred")
    ip = ir_input(os.path.join(work, "none.ir.txt"), None, ["android.os.Looper.loop", "java.lang.Thread.run", "inflate"])
    ctx.eq(legend_app(ctx, "ir none", ["-i", "ir", ip]), "app: none found", "no library method: no app")
    # hostile: a process name with markup reaches the legend escaped (parsed back as text)
    ip = ir_input(os.path.join(work, "hostile.ir.txt"), "com.evil.<script>x</script>", ["com.a.B.run"])
    t = legend_app(ctx, "hostile process", ["-i", "ir", ip])
    ctx.check(t is not None and "<script>" not in (t or "") and t.endswith("(inferred: 100% of the wall time)"),
              f"a process name that is not a package (markup) is not used: {t!r}")
    long = "com." + "x" * 300 + ".app"
    ip = ir_input(os.path.join(work, "long.ir.txt"), long, [long + ".B.run"])
    t = legend_app(ctx, "long process", ["-i", "ir", ip])
    ctx.check(t is not None and len(t) < 80 and t.endswith(".. (process name)"), f"a long package is cut: {t!r}")


def summary(ctx, args):
    r = ctx.run(["-f", "-o", "folded", *args, os.devnull])
    ctx.eq(r.returncode, 0, f"{args}: exit ({r.stderr[-300:]!r})")
    return r.stderr.decode(errors="replace")


def check_hint(ctx, work):
    hint = "--deobfuscate mapping.txt"
    minified = ["a.b.c", "a0.d.e", "b.a$c.d", "c.e.f", "com.foo.a.g", "d.f$1.h", "android.view.View.draw",
                "java.lang.Thread.run", "java.util.HashMap.get", "okhttp3.OkHttpClient.newCall"]
    ip = ir_input(os.path.join(work, "min.ir.txt"), None, minified)
    ctx.check(hint in summary(ctx, ["-i", "ir", ip]), "minified names: the summary suggests --deobfuscate")
    plain = list(NAMES)
    ip = ir_input(os.path.join(work, "plain.ir.txt"), None, plain)
    ctx.check(hint not in summary(ctx, ["-i", "ir", ip]), "source names: no hint")
    # an R8 build's trace from tracegen: the hint, and none with its mapping
    scn = os.path.join(ctx.source, "corpus", "app-startup.scn")
    trace, mapping = os.path.join(work, "r8.trace"), os.path.join(work, "r8-mapping.txt")
    r = ctx.run([scn, trace, "--obfuscate", mapping], exe=ctx.tracegen)
    if ctx.eq(r.returncode, 0, f"tracegen --obfuscate: {r.stderr[-300:]!r}"):
        ctx.check(hint in summary(ctx, [trace]), "an R8 build's trace: the hint")
        ctx.check("hint" not in summary(ctx, ["--deobfuscate", mapping, trace]), "with --deobfuscate: no hint")
        ctx.check("hint" not in summary(ctx, ["-q", trace]), "--quiet: no summary, no hint")
        check_batch_hint(ctx, work, trace, mapping)
    ctx.check("hint" not in summary(ctx, [os.path.join(ctx.source, "corpus", "app-startup.trace")]),
              "the app start-up's source names: no hint")
    check_systrace_hint(ctx, work)


ATRACE_HDR = b"# tracer: nop\n#\n#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"


def atrace(path, sections):
    """An atrace text capture of an app (pid 4242) with a WebView: its main thread and
    Chrome's renderer thread write these sections, each once, one after the other."""
    lines, ts = [ATRACE_HDR], 0
    for thread, tid, names in sections:
        for name in names:
            for payload in (b"B|4242|" + name.encode(), b"E|4242"):
                ts += 250
                lines.append(b"  %s-%d  ( 4242) [001] ...1 %6d.%06d: tracing_mark_write: %s\n" % (
                    thread.encode(), tid, 5000 + ts // 1000000, ts % 1000000, payload))
    with open(path, "wb") as f:
        f.write(b"".join(lines))
    return path


def check_systrace_hint(ctx, work):
    """Issue 36 item 8: plain slice names of system traces never look minified. Chrome's and
    WebView's sections ("v8.compile", "v8.run") were the only dotted names of a capture, two
    segments with a two-character first one, so all of its "classes" looked renamed."""
    hint = "--deobfuscate mapping.txt"
    sysdir = os.path.join(ctx.source, "corpus", "systrace")
    for name in sorted(os.listdir(sysdir)):
        if name.endswith((".py", ".json")) or os.path.isdir(os.path.join(sysdir, name)):
            continue
        r = ctx.run(["-f", "-o", "folded", os.path.join(sysdir, name), os.devnull])
        if r.returncode == 0:
            ctx.check(hint not in r.stderr.decode(errors="replace"), f"corpus/systrace/{name}: no minified-names hint")
    webview = atrace(os.path.join(work, "webview.atrace.txt"), [
        ("main", 4242, ["Choreographer#doFrame 1204", "traversal", "RV OnBindView", "inflate"]),
        ("CrRendererMain", 4250, ["v8.compile", "v8.run", "v8.callFunction", "ThreadControllerImpl::RunTask"]),
    ])
    ctx.check(hint not in summary(ctx, [webview]), "an atrace capture with WebView's v8.* sections: no hint")
    # an app that traces its own (R8-renamed) methods as sections still gets the hint
    renamed = atrace(os.path.join(work, "renamed.atrace.txt"), [
        ("main", 4242, ["a.b.c", "b.a$c.d", "com.shop.a.e", "c.d.onCreate", "v8.run"]),
    ])
    ctx.check(hint in summary(ctx, [renamed]), "an atrace capture of R8-renamed method sections: the hint")


def check_batch_hint(ctx, work, trace, mapping):
    """batch's summary JSON: the member's hints, none with its mapping."""
    for label, extra, want in (("R8 trace", [], True), ("with --deobfuscate", ["--deobfuscate", mapping], False)):
        out, summ = os.path.join(work, "batch-" + label.replace(" ", "_")), os.path.join(work, "summary.json")
        r = ctx.run(["batch", "-q", "-o", "folded", "-O", out, "--summary", summ, *extra, trace])
        if not ctx.eq(r.returncode, 0, f"batch, {label}: exit ({r.stderr[-300:]!r})"):
            continue
        with open(summ, encoding="utf-8") as f:
            doc = json.load(f)
        members = doc["members"]
        hints = [h for m in members for h in m.get("hints", [])]
        ctx.eq(any("--deobfuscate mapping.txt" in h for h in hints), want, f"batch, {label}: the member's hint ({hints})")


if __name__ == "__main__":
    main()
