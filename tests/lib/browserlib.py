"""What every test driving headless Chromium through tests/browser does around its own checks
(test_flamegraph_browser, test_report_html_browser, test_diff_browser, test_serve_browser):
require node, puppeteer-core and chromium (a missing one is a FAILURE, never a skip:
scripts/setup.sh test installs them), run one of the harness scripts (flame.js, report.js,
serve.js) and read the JSON it wrote."""
import json
import os
import shutil
import subprocess

CHROMIUMS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def browser_dir(ctx):
    return os.path.join(ctx.source, "tests", "browser")


def require_node(ctx):
    """node, tests/browser/node_modules and chromium, or the test ends failed; the path of node."""
    node = shutil.which("node")
    if not ctx.check(node is not None, "node is not installed (scripts/setup.sh test installs nodejs)"):
        ctx.done()
    if not ctx.check(os.path.isdir(os.path.join(browser_dir(ctx), "node_modules", "puppeteer-core")),
                     "tests/browser/node_modules is missing (scripts/setup.sh test runs npm ci there)"):
        ctx.done()
    if not ctx.check(any(os.path.exists(p) for p in CHROMIUMS),
                     "chromium is not installed (scripts/setup.sh test installs it)"):
        ctx.done()
    return node


def run_harness(ctx, node, script, args, result, label):
    """node tests/browser/SCRIPT ARGS...; the JSON it wrote to result, or None (a failure recorded)."""
    r = subprocess.run([node, os.path.join(browser_dir(ctx), script), *args], capture_output=True, timeout=600)
    if not ctx.eq(r.returncode, 0, f"{label}: {r.stderr.decode(errors='replace')[-2000:]}"):
        return None
    with open(result, encoding="utf-8") as f:
        return json.load(f)


def run_spec(ctx, node, script, spec, spec_path, result, label):
    """The harness scripts that take a spec file: write spec (JSON) to spec_path, run SCRIPT SPEC RESULT."""
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    return run_harness(ctx, node, script, [spec_path, result], result, label)
