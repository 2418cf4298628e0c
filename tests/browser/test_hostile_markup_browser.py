#!/usr/bin/env python3
"""The hostile names of test_hostile_markup.py in a real browser: headless Chromium (Debian's
chromium, driven by puppeteer-core, tests/browser/hostile.js) opens every markup output of the
hostile IR, JSON, systrace, Rhea and ART inputs (systrace HTML, flame graph SVG with a hostile
--title and --app-package (its legend), report --html, dot's SVG, the differential flame graph) and serve's result and error
pages for a hostile upload, with the Content-Security-Policy bypassed: escaping, not the CSP, must
keep every name inert. In every page and frame:

- no payload ran (each sets window.pwned) and no element a payload would make (img, object,
  embed) or on* attribute exists;
- the script elements are the page's own (systrace: the two trace-data blocks; a flame graph or
  report: its one inline script; dot: none; serve: /static/serve.js);
- systrace: the text of each trace-data block, as the HTML parser cut it, is exactly what
  Perfetto's line-based cut of the same bytes gives (test_hostile_markup.perfetto_blocks), so both
  end every block where the writer ended it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import browserlib  # noqa: E402
import tclib  # noqa: E402
import test_hostile_markup as hm  # noqa: E402


def outputs(ctx):
    """[(what, path, expected scripts, expected trace-data texts or None)] of every markup output."""
    out = []
    ins = hm.inputs(ctx)
    for label, src, opts in ins:
        html = hm.convert(ctx, src, opts, "systrace", os.path.join(ctx.work, f"{label}.html"))
        if html:
            text = open(html, "rb").read().decode("utf-8", "replace")
            blocks = ["\n" + "".join(l + "\n" for l in b) + "  " for b in hm.perfetto_blocks(text)]
            out.append((f"{label} systrace", html, [".trace-data", ".trace-data"], blocks))
        svg = hm.convert(ctx, src, opts, "flamegraph", os.path.join(ctx.work, f"{label}.svg"),
                         ["--title", hm.TITLE, "--minwidth", "0", "--app-package", hm.APP_PACKAGE])
        if svg:
            out.append((f"{label} flamegraph", svg, ["inline"], None))
        rep = hm.convert(ctx, src, opts, "report", os.path.join(ctx.work, f"{label}.report.html"), ["--html"])
        if rep:
            out.append((f"{label} report --html", rep, ["type=application/json", "inline"], None))
        dot = hm.convert(ctx, src, opts, "dot", os.path.join(ctx.work, f"{label}.dot"), ["--threshold", "0"])
        r = ctx.oracle(["dot", "-Tsvg", dot]) if dot else None
        if r is not None and ctx.eq(r.returncode, 0, f"{label} dot -Tsvg"):
            path = os.path.join(ctx.work, f"{label}.dot.svg")
            with open(path, "wb") as f:
                f.write(r.stdout)
            out.append((f"{label} dot -Tsvg", path, [], None))
    by = {label: src for label, src, _ in ins}
    diff = os.path.join(ctx.work, "diff.svg")
    r = ctx.run(["diff", "-q", "-f", "-o", "flamegraph", "--title", hm.TITLE, by["ir"], by["json"], diff])
    if ctx.eq(r.returncode, 0, f"diff -o flamegraph: {r.stderr.decode(errors='replace')}"):
        out.append(("diff flamegraph", diff, ["inline"], None))
    return out, by["ir"]


def judge(ctx, what, page, scripts, blocks):
    frames = page["frames"]
    ctx.check(frames and "error" not in frames[0], f"{what}: the page was read: {frames[:1]}")
    for f in frames:
        where = f"{what} ({f.get('url', '?')[:80]})"
        if "error" in f:
            ctx.fail(f"{where}: {f['error']}")
            continue
        ctx.eq(f["pwned"], None, f"{where}: a payload ran (window.pwned)")
        ctx.eq(f["made"], [], f"{where}: elements a payload made")
        ctx.eq(f["on"], [], f"{where}: on* attributes")
    main = frames[0] if frames and "error" not in frames[0] else None
    if main is None:
        return
    ctx.eq(main["scripts"], scripts, f"{what}: script elements")
    if blocks is not None:
        ctx.eq(main["blocks"], blocks, f"{what}: trace-data texts (browser's cut = Perfetto's cut)")


def main():
    ctx = tclib.Ctx()
    node = browserlib.require_node(ctx)
    pages, ir = outputs(ctx)
    specs = [{"url": "file://" + os.path.abspath(p)} for _, p, _, _ in pages]
    result = os.path.join(ctx.work, "hostile.json")
    # serve: the result page is read while the server runs (its assets, the graph and report frames);
    # the error page answers a POST: it is read from a file (its asset links do not load there)
    srv = hm.serve_lib.Server(ctx.traceconv, ctx.work)
    serve = []
    try:
        st, h, _ = hm.serve_upload(srv, hm.SERVE_NAME, open(ir, "rb").read())
        loc = h.get("location", "")
        if ctx.eq(st, 303, "serve: the page upload") and loc.startswith("/r/"):
            specs.append({"url": srv.url + loc.lstrip("/"), "wait": 1000})
            serve.append("serve result page")
        st, _, err_page = hm.serve_upload(srv, hm.SERVE_NAME.replace(".ir.txt", ".bin"), bytes(range(256)) * 8)
        if ctx.eq(st, 422, "serve: noise is not converted"):
            path = os.path.join(ctx.work, "serve-error.html")
            with open(path, "wb") as f:
                f.write(err_page)
            specs.append({"url": "file://" + path})
            serve.append("serve error page")
        res = browserlib.run_spec(ctx, node, "hostile.js", {"pages": specs}, os.path.join(ctx.work, "spec.json"),
                                  result, "hostile.js failed")
    finally:
        srv.stop()
    if res is None:
        ctx.done()
    got = res["pages"]
    if not ctx.eq(len(got), len(specs), "pages read"):
        ctx.done()
    for (what, _, scripts, blocks), page in zip(pages, got):
        judge(ctx, what, page, scripts, blocks)
    for what, page in zip(serve, got[len(pages):]):
        judge(ctx, what, page, ["/static/serve.js"], None)
        if what == "serve result page":
            urls = [f.get("url", "") for f in page["frames"]]
            ctx.check(any(u.endswith(".svg") for u in urls) and any(u.endswith(".html") for u in urls),
                      f"serve result page: its flame graph and report frames were read: {urls}")
    ctx.done()


if __name__ == "__main__":
    main()
