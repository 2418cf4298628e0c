#!/usr/bin/env python3
"""The app found on real traces' shapes (issue 36 item 1), from the generator's scenarios in
corpus/shapes/: an app whose bundled libraries have more methods and more time than it
(com.facebook.imagepipeline, org.apache.http, com.google.android.exoplayer2), OEM code in the
app's process with more methods and time than the app and no lifecycle call in the trace
(com.samsung.android), an app whose package starts with "android.".

The truth is the scenario's: its `app` line (the facts' "app", by construction), which of its
frames the framework calls (the evidence, read off the scenario by hand below), and the time
of the app's code, from the facts' folded paths (the generator's own model: a path's self time
counts for the app when a frame of the path lies under the app's package). Checked in the
flame graph's legend and frames (each frame's fill in its group's hue family, as
test_code_groups.py reads them), the summary line, the HTML report's facts and graph; a
mistyped --app-package warns with the trace's packages; report-html reads --app-package
(not "unused", --strict passes).

Before this change (traceconv of 23ea913) the legends say com.facebook.imagepipeline,
com.samsung.android and okhttp3: every shape fails."""
import html
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_code_groups as cg  # noqa: E402

# scenario -> the evidence the legend must name (read off the scenario: the frame directly
# under a framework method that calls app components; the Application's first)
SHAPES = {
    "library-heavy": "GalleryApp.onCreate called by Instrumentation.callApplicationOnCreate",
    "oem-midrun": None,  # no lifecycle call, no process name: the app's share of the time
    "android-package": "CameraActivity.onResume called by Instrumentation.callActivityOnResume",
    # the only lifecycle frame in a subpackage (.ui): the app is the packages beside it (.util)
    "subpackage-activity": "ImageDetailActivity.onCreate called by Activity.performCreate",
    "company-spread": None,  # the company's prefix, its time spread over several subpackages
}
PLATFORM = ("android.app.", "android.os.", "android.view.", "android.graphics.", "android.hardware.", "androidx.")


def generate(ctx, stem):
    scn = os.path.join(ctx.source, "corpus", "shapes", stem + ".scn")
    trace, facts = os.path.join(ctx.work, stem + ".trace"), os.path.join(ctx.work, stem + ".facts.json")
    r = ctx.run([scn, trace, "--facts", facts], exe=ctx.tracegen)
    if not ctx.eq(r.returncode, 0, f"tracegen {stem}: {r.stderr[-300:]!r}"):
        return None, None
    with open(facts, encoding="utf-8") as f:
        return trace, json.load(f)


def share(facts, pkg):
    """The app's share of the wall time in whole percent: the self time of the folded paths
    with a frame under pkg, over every path's."""
    app = sum(us for path, us in facts["folded"].items()
              if any(fr.startswith(pkg + ".") for fr in path.split(";")[1:]))
    return round(100 * app / facts["folded_total_us"])


def check_shape(ctx, stem, evidence):
    trace, facts = generate(ctx, stem)
    if not trace:
        return
    app = facts["app"]
    words = evidence or f"inferred: {share(facts, app)}% of the wall time"
    want = f"app: {app} ({words})"
    out = os.path.join(ctx.work, stem + ".svg")
    r = ctx.run(["-f", "-o", "flamegraph", trace, out])
    if not ctx.eq(r.returncode, 0, f"{stem}: exit ({r.stderr[-300:]!r})"):
        return
    root, frames, legend = cg.parse(ctx, stem, out)
    got = next((t for t in legend[0] if t.startswith("app:")), None) if legend else None
    ctx.eq(got, want, f"{stem}: the legend names the app and its evidence")
    summary = r.stderr.decode(errors="replace")
    ctx.check(f"; app: {app} ({words})" in summary, f"{stem}: the summary names the app and its evidence: {summary!r}")
    # every frame of the app's package painted as the app's, the platform's as the framework's
    wrong = []
    for name, fill, _, _ in frames:
        want_group = (cg.APP if name.startswith(app + ".") else cg.FRAMEWORK if name.startswith(PLATFORM)
                      else cg.LIBRARY if re.match(r"^(com\.(facebook|samsung|squareup|google|bumptech)|org\.apache|okhttp3|io\.github)\.", name)
                      else None)
        if want_group and cg.family(fill) != want_group:
            wrong.append((name, fill, want_group))
    ctx.check(not wrong, f"{stem}: frames painted outside their group: {wrong[:4]}")
    ctx.check(any(n.startswith(app + ".") for n, *_ in frames), f"{stem}: the app's frames are drawn")
    # the HTML report: the same app in its facts and its graph's legend, and it reads --app-package
    page = os.path.join(ctx.work, stem + ".report.html")
    r = ctx.run(["-f", "-o", "report-html", trace, page])
    if ctx.eq(r.returncode, 0, f"{stem} report-html: exit ({r.stderr[-300:]!r})"):
        text = open(page, encoding="utf-8").read()
        m = re.search(r"<tr><th scope=\"row\">app</th><td>(.*?)</td></tr>", text)
        ctx.eq(html.unescape(m.group(1)) if m else None, f"{app} ({words})", f"{stem}: the report's facts name the app")
        _, _, legend = cg.parse(ctx, stem + " report", page, prefix="fg-wall-")
        got = next((t for t in legend[0] if t.startswith("app:")), None) if legend else None
        ctx.eq(got, want, f"{stem}: the report's graph names the same app")
    return trace, facts


def check_mistyped(ctx, trace, facts):
    """A --app-package that matches no method: a warning naming the trace's packages, the app's first."""
    app = facts["app"]
    typo = app.replace("example", "exmaple")
    r = ctx.run(["-f", "-o", "flamegraph", "--app-package", typo, trace, os.path.join(ctx.work, "typo.svg")])
    err = r.stderr.decode(errors="replace")
    ctx.eq(r.returncode, 0, f"a mistyped --app-package is a warning, not an error ({err[-300:]!r})")
    m = re.search(r"warning: .*--app-package '([^']*)' matches no method of the trace; its packages: (.*)", err)
    if ctx.check(m is not None, f"a mistyped --app-package warns: {err!r}"):
        ctx.eq(m.group(1), typo, "the warning names the option's value")
        ctx.check(m.group(2).startswith(app + " ("), f"the app (with its evidence) first among the candidates: {m.group(2)!r}")
        ctx.check("com.facebook" in m.group(2), f"the candidates with their share of the time: {m.group(2)!r}")
    r = ctx.run(["-f", "--strict", "-o", "flamegraph", "--app-package", typo, trace,
                 os.path.join(ctx.work, "typo2.svg")])
    ctx.check(r.returncode != 0, "under --strict a mistyped --app-package fails")
    # a package that matches: no warning
    r = ctx.run(["-f", "-o", "flamegraph", "--app-package", app, trace, os.path.join(ctx.work, "ok.svg")])
    ctx.check("matches no method" not in r.stderr.decode(errors="replace"), "a matching --app-package: no warning")


def check_report_html_reads_app_package(ctx, trace, facts):
    """-o report-html --app-package: used by its graphs, so neither "unused" nor a --strict failure."""
    page = os.path.join(ctx.work, "given.report.html")
    r = ctx.run(["-f", "--strict", "-o", "report-html", "--app-package", "org.apache.http", trace, page])
    err = r.stderr.decode(errors="replace")
    ctx.eq(r.returncode, 0, f"report-html --app-package under --strict: exit ({err[-300:]!r})")
    ctx.check("unused" not in err and "not used" not in err, f"report-html reads --app-package: {err!r}")
    if r.returncode == 0:
        _, _, legend = cg.parse(ctx, "given report", page, prefix="fg-wall-")
        got = next((t for t in legend[0] if t.startswith("app:")), None) if legend else None
        ctx.eq(got, "app: org.apache.http (given)", "report-html's graphs take the given package")
    # the text report draws no graph: there the option stays unused
    r = ctx.run(["-f", "-o", "report", "--app-package", "org.apache.http", trace, os.path.join(ctx.work, "r.txt")])
    ctx.check("--app-package is not used" in r.stderr.decode(errors="replace"),
              "the text report does not read --app-package (unused-option warning)")


def main():
    ctx = tclib.Ctx()
    if not ctx.tracegen:
        ctx.fail("no tracegen")
        ctx.done()
    got = {}
    for stem, evidence in SHAPES.items():
        got[stem] = check_shape(ctx, stem, evidence)
    if got.get("library-heavy"):
        check_mistyped(ctx, *got["library-heavy"])
        check_report_html_reads_app_package(ctx, *got["library-heavy"])
    ctx.done()


if __name__ == "__main__":
    main()
